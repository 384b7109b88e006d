"""The catalog's search: the static search of ibistatic.search, inside the mkdocs site.

A page ``<path>/search.md`` holds the form; the plugin writes the search files and the
script into ``<path>/search/`` after the build.  Results link to the catalog's item
pages.  mkdocs' own search index leaves the catalog's pages out (see the plugin).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import ibistatic

from ..archive.load import LoadedArchives
from ..search.index import SearchIndex

__all__ = ["Layout", "search_page", "write_search", "drop_entries", "SCRIPT"]

#: the query's name in the catalog's search URL: not mkdocs' "q", on which its theme
#: opens its own (empty) search dialog over the results
QUERY_PARAMETER = "query"

#: the script of the site's search page (site_src/assets), shared
SCRIPT = Path(ibistatic.__file__).resolve().parent / "site_src" / "assets" / "search.js"

# The markup search.js fills in (its ids are the script's contract; site_src's
# _search_form.html writes the same for the site's own search page).
_PAGE = """---
title: Search the catalog
---

# Search the catalog

<form id="ibistatic-search" role="search" method="get" action="{action}">
<label for="ibistatic-q">Titles, creators, subjects, years or IBIs</label>
<input type="search" name="{param}" id="ibistatic-q">
<button type="submit">Search</button>
</form>

<p id="ibistatic-search-status" role="status"></p>
<ol id="ibistatic-search-results" class="results"></ol>
<p><button type="button" id="ibistatic-search-more" hidden>More results</button></p>

<noscript><p>Searching needs JavaScript, which is off: the catalog's overview lists
every item by Archive and by year.</p></noscript>

<script type="application/json" id="ibistatic-search-config">{config}</script>
<script src="{script}"></script>
"""


@dataclass(frozen=True)
class Layout:
    """Where the search page, its files and the item pages are, for the site's URLs."""

    prefix: str  # the catalog's folder in the docs, "" or ending in "/"
    directory_urls: bool  # mkdocs' use_directory_urls

    @property
    def page(self) -> str:
        return f"{self.prefix}search.md"

    @property
    def folder(self) -> str:
        """The search files' folder in the site."""
        return f"{self.prefix}search/"

    @property
    def link(self) -> str:
        """An item page, relative to the catalog's folder ("{}": the repository key)."""
        return "items/{}/" if self.directory_urls else "items/{}.html"

    def from_page(self) -> tuple[str, str]:
        """(the search files, the catalog's folder) relative to the search page."""
        return ("./", "../") if self.directory_urls else ("search/", "./")


def search_page(layout: Layout) -> str:
    """The Markdown of the search page."""
    files, catalog = layout.from_page()
    config = {"index": files, "links": catalog, "param": QUERY_PARAMETER}
    config = json.dumps(config, separators=(",", ":"))
    action = "./" if layout.directory_urls else "search.html"
    return _PAGE.format(
        action=action, config=config, script=files + "search.js", param=QUERY_PARAMETER
    )


def write_search(loaded: LoadedArchives, index: SearchIndex, layout: Layout, site: Path) -> None:
    """The search files of *loaded* and the script, into the built site *site*."""
    holdings = loaded.holdings
    items = {key: [item for _, item in holdings.holders(key)] for key in _keys(loaded)}
    folder = site / layout.folder
    for sub in ("t", "d"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for relative, text in index.files(items).items():
        (folder / relative).write_text(text, encoding="utf-8")
    shutil.copyfile(SCRIPT, folder / "search.js")


def _keys(loaded: LoadedArchives) -> list[str]:
    return sorted({item.key for item in loaded.holdings.all_items()})


def drop_entries(search_plugin, url: str) -> None:
    """Remove the entries of the page at *url* from mkdocs' search index: they were
    added last.  The list is private to mkdocs; if it is not there, nothing is done."""
    entries = getattr(getattr(search_plugin, "search_index", None), "_entries", None)
    if not isinstance(entries, list):
        return
    while entries and str(entries[-1].get("location", "")).startswith(url):
        entries.pop()
