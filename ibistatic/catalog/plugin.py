"""The mkdocs plugin ``ibistatic``: a catalog of the Archives' items in a docs site.

```yaml
plugins:
  - search
  - ibistatic:
      config: ibistatic.yaml      # or: archives: [...] and site_url: ...
      path: catalog               # folder of the generated pages inside docs
```

Every build (and every rebuild of ``mkdocs serve``) crawls the archives afresh and adds
the pages of :func:`ibistatic.catalog.pages.catalog_pages` as generated files, and the
catalog's search page (:mod:`ibistatic.catalog.search`).  Only the overview and the
search page take part in the navigation; the item, archive and year pages are reached
from them.  Those pages are left out of mkdocs' own search index: it grows with every
item, and is downloaded whole by every reader who searches.
Problems found in the archives are logged as warnings, so ``mkdocs build --strict``
fails on them.
"""

from __future__ import annotations

import logging
import os
import posixpath
from functools import partial
from pathlib import Path
from urllib.parse import unquote

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.toc import get_toc

from ..archive.load import LoadedArchives, load_archives
from ..config import load_config
from ..errors import IbistaticError
from ..search.index import SearchIndex
from . import search
from .html import to_html
from .pages import DEFAULT_PATH, catalog_pages, page_prefix

__all__ = ["CatalogPlugin", "CatalogPluginConfig"]

log = logging.getLogger("mkdocs.plugins.ibistatic")


class CatalogPluginConfig(base.Config):
    """The plugin's options; paths are relative to mkdocs.yml."""

    config = c.Optional(c.File(exists=True))
    archives = c.ListOfItems(c.Dir(exists=True), default=[])
    site_url = c.Optional(c.Type(str))
    path = c.Type(str, default=DEFAULT_PATH)
    nav_title = c.Type(str, default="Catalog")


class CatalogPlugin(BasePlugin[CatalogPluginConfig]):
    """Adds the catalog pages at build and serve time, and watches the archives."""

    def __init__(self) -> None:
        self.roots: list[Path] = []
        self.site_url = ""
        self.config_file: Path | None = None
        self.loaded: LoadedArchives | None = None
        #: the Archives as ``ibistatic build`` crawled them, for its one build
        self.preloaded: LoadedArchives | None = None
        self.page_count = 0  # pages added by the last build
        self.unsearched: set[str] = set()  # the pages kept out of mkdocs' search index
        self.search: SearchIndex | None = None  # kept between the builds of mkdocs serve
        self._content: str | None = None
        self._markdown: dict[str, str] = {}  # src_uri -> the Markdown .html converts

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.roots, self.site_url, self.config_file = _sources(self.config)
        nav = config.nav
        index = page_prefix(self.config.path) + "index.md"
        if nav is not None and not _mentions(nav, index):
            nav.append({self.config.nav_title: index})
        return config

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files:
        try:
            self.loaded = self.preloaded or load_archives(self.roots, self.site_url)
            self.preloaded = None  # a rebuild (mkdocs serve) crawls afresh
        except IbistaticError as error:
            raise PluginError(f"ibistatic: {error}") from None
        for problem in sorted(self.loaded.problems):
            log.warning("ibistatic: %s", problem)
        prefix = page_prefix(self.config.path)
        pages = catalog_pages(self.loaded, self.config.path)
        self.page_count = len(pages)
        self.unsearched = set(pages) - {prefix + "index.md"}
        layout = search.Layout(prefix, config.use_directory_urls)
        nav_free = config.nav is None
        pages[layout.page] = search.search_page(layout)
        self.search = self.search if self.search and self.search.link == layout.link else None
        self.search = self.search or SearchIndex(layout.link)
        self.layout = layout
        for src_uri, content in pages.items():
            if files.get_file_from_path(src_uri) is not None:
                raise PluginError(
                    f"ibistatic: {src_uri} exists in the docs; set another 'path' for the catalog"
                )
            # the search page joins a nav mkdocs makes; a nav of the user's is theirs
            in_nav = src_uri == prefix + "index.md" or (src_uri == layout.page and nav_free)
            inclusion = InclusionLevel.UNDEFINED if in_nav else InclusionLevel.NOT_IN_NAV
            files.append(File.generated(config, src_uri, content=content, inclusion=inclusion))
        return files

    # mkdocs' search plugin indexes a page in on_page_context (priority 0): a page kept
    # out of it is shown to it empty, and the title-only entry it then adds is removed.
    @event_priority(100)
    def _hide_from_search(self, context, /, *, page, config, nav):
        if page.file.src_uri in self.unsearched:
            self._content, page.content = page.content, ""
        return context

    @event_priority(-100)
    def _show_after_search(self, context, /, *, page, config, nav):
        if page.file.src_uri in self.unsearched and self._content is not None:
            page.content, self._content = self._content, None
            search.drop_entries(config.plugins.get("search"), page.url)
        return context

    on_page_context = CombinedEvent(_hide_from_search, _show_after_search)

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.loaded is not None and self.search is not None:
            search.write_search(self.loaded, self.search, self.layout, Path(config.site_dir))

    # The pages of .pages are converted by .html: mkdocs converts only their title line
    # (for the page's title), and the HTML of the whole page replaces its output.
    def on_page_markdown(self, markdown: str, /, *, page, config, files) -> str:
        if page.file.src_uri in self.unsearched:
            self._markdown[page.file.src_uri] = markdown
            return markdown.split("\n", 1)[0]
        return markdown

    def on_page_content(self, html: str, /, *, page, config, files) -> str:
        markdown = self._markdown.pop(page.file.src_uri, None)
        if markdown is None:
            return html
        content, headings = to_html(markdown, partial(_href, page.file, files))
        page.toc = get_toc(_toc_tokens(headings))
        return content

    def on_serve(self, server, /, *, config: MkDocsConfig, builder):
        # A deposit changes an archive tree: rebuilding re-crawls it in on_files.
        for root in self.roots:
            server.watch(str(root))
        if self.config_file is not None:
            server.watch(str(self.config_file), recursive=False)
        return server


def _sources(options: CatalogPluginConfig) -> tuple[list[Path], str, Path | None]:
    """The archive roots and site URL, from ``config`` or from ``archives`` + ``site_url``."""
    if options.config and options.archives:
        raise PluginError(
            "ibistatic: give either 'config' or 'archives' (with 'site_url'), not both"
        )
    if options.config:
        try:
            site = load_config(options.config)
        except IbistaticError as error:
            raise PluginError(f"ibistatic: {error}") from None
        return list(site.archives), site.site_url, Path(options.config)
    if not options.archives:
        raise PluginError(
            "ibistatic: expected 'config' (an ibistatic.yaml) or 'archives' with 'site_url'"
        )
    if not options.site_url:
        raise PluginError(
            "ibistatic: 'archives' needs 'site_url', the URL the persistent links are published at"
        )
    site_url = options.site_url if options.site_url.endswith("/") else options.site_url + "/"
    return [Path(root) for root in options.archives], site_url, None


def _href(page: File, files: Files, destination: str) -> str:
    """A link of *page* as mkdocs writes it: a page of the docs by its URL relative to
    *page*, anything else as it is (a link to a missing page is a warning, as in mkdocs)."""
    if ":" in destination.split("/", 1)[0] or destination.startswith(("/", "#")):
        return destination
    path = posixpath.normpath(posixpath.join(posixpath.dirname(page.src_uri), unquote(destination)))
    target = files.get_file_from_path(path)
    if target is None:
        log.warning("ibistatic: %s links to %s, which is not in the docs", page.src_uri, path)
        return destination
    return target.url_relative_to(page)


def _toc_tokens(headings) -> list[dict]:
    """The headings as the ``toc`` extension's tokens: each ``##`` under the ``#``."""
    tokens: list[dict] = []
    for level, ident, name in headings:
        token = {"level": level, "id": ident, "name": name, "children": []}
        if level > 1 and tokens:
            tokens[-1]["children"].append(token)
        else:
            tokens.append(token)
    return tokens


def _mentions(nav, src_uri: str) -> bool:
    """Whether the user's nav names the page *src_uri* anywhere."""
    if isinstance(nav, str):
        return os.path.normpath(nav) == os.path.normpath(src_uri)
    if isinstance(nav, dict):
        return any(_mentions(value, src_uri) for value in nav.values())
    if isinstance(nav, list):
        return any(_mentions(value, src_uri) for value in nav)
    return False
