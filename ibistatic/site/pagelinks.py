"""Which pages of a built site carry Signposting links, and their ``Link`` header
values, computed from the index records (docs/site.md#signposting).

Why from the records, and not from a page -> value table the build would write: the
records already hold everything the links are made of (an item's descriptor and every
URL its Archive gives, ``urls``), and this module calls the very functions the pages
call (:func:`~.signposting.record_links`, :func:`~.signposting.metadata_links`,
:func:`~.signposting.link_header`), so a header cannot say other than its page.  A
second table would have to be kept current by every update of an incremental build (a
page's path does not name its index shard), and could disagree with the records.

A server asks for one page at a time, and a page's path names its item: a record page
is ``record/<key>/``, a metadata page and a file-list page are what the URL templates
give (``{site}metadata/{repository}/``, each Archive's ``file-list-url``).  So a lookup
reads the shard of one or two keys, whatever the size of the index, and nothing is
listed at start-up (:class:`PageLinks`); ``server-config`` reads every shard once
(:func:`all_page_links`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from ..core.model import DEFAULT_METADATA_URL
from ..index.records import item_from_record
from ..index.sharding import canonical_key
from ..lru import LruCache
from .pages import site_file
from .record import representative
from .signposting import (
    MAX_LINK_HEADER,
    link_header,
    metadata_links,
    record_links,
    record_path,
)

__all__ = ["page_links", "page_patterns", "PageLinks", "all_page_links", "RECORD_URL"]

#: where a record page is (signposting.record_path), as a URL template
RECORD_URL = "{site}record/{repository}/"
_PLACEHOLDER = re.compile(r"\{(repository|ibip|address|path)\}")
#: an IBI form as a template writes it: no '?', '#' or control character
_IBI_TEXT = r"[^?#\x00-\x1f]+?"


def page_links(site_url: str, key: str, records: list[dict]) -> dict[str, str]:
    """Page (its path in the site, decoded: ``record/<key>/index.html``) -> ``Link``
    value, for the pages the build makes of the IBI `key` held as `records` (the index's,
    in the Archives' order): each live holder's file list and metadata page (the first
    holder's where two write one path), then the record page; a page whose value is
    longer than MAX_LINK_HEADER has none.  Empty unless `key` is the items' repository
    key (an IBIp's pages are its repository's)."""
    return {
        path: value
        for path, value in _page_values(site_url, key, records).items()
        if len(value) <= MAX_LINK_HEADER  # longer: on the page only
    }


def _page_values(site_url: str, key: str, records: list[dict]) -> dict[str, str]:
    items = [item_from_record(record) for record in records]
    if not items or items[0].key != key:
        return {}
    pages: dict[str, str] = {}
    for item, record in zip(items, records):
        if item.state == "Deleted":
            continue
        urls = record.get("urls", {})
        for name in ("list", "metadata"):  # as pages.item_pages writes them
            path = site_file(site_url, urls.get(name))
            if path is not None and path not in pages:
                pages[path] = link_header(metadata_links(site_url, item))
    described = representative(items)
    urls = records[next(i for i, item in enumerate(items) if item is described)].get("urls", {})
    pages.setdefault(
        record_path(key) + "index.html", link_header(record_links(site_url, described, urls))
    )
    return pages


def page_patterns(templates: list[tuple[str, str]]) -> list[re.Pattern]:
    """Regular expressions of the page paths that the URL templates (with their Archive's
    address) give inside the site; a match's groups are the IBI forms the path names."""
    patterns = []
    for template, address in dict.fromkeys(templates):
        if not template.startswith("{site}"):
            continue  # outside the site: no page of it here
        path = re.split(r"[?#]", template[len("{site}") :], maxsplit=1)[0]
        if path == "" or path.endswith("/"):
            path += "index.html"  # as site_file names a folder's page
        pattern = _template_pattern(path, address)
        if pattern is not None and pattern not in patterns:
            patterns.append(pattern)
    return patterns


def _template_pattern(path: str, address: str) -> re.Pattern | None:
    parts, named = [], set()
    at = 0
    for match in _PLACEHOLDER.finditer(path):
        parts.append(re.escape(unquote(path[at : match.start()])))
        name = match.group(1)
        if name == "address":
            parts.append(re.escape(address))
        elif name in ("repository", "ibip"):
            parts.append(f"(?P={name})" if name in named else f"(?P<{name}>{_IBI_TEXT})")
            named.add(name)
        at = match.end()  # {path} is empty for a page
    parts.append(re.escape(unquote(path[at:])))
    return re.compile("".join(parts)) if named and "{" not in path[at:] else None


class PageLinks:
    """The ``Link`` values of the pages of a site, from its open index, one page at a
    time (what ``ibistatic serve`` asks; answers are kept, bounded)."""

    KEPT = 65536

    def __init__(self, index) -> None:
        self.index = index
        self._patterns: list[re.Pattern] | None = None
        self._kept: LruCache[str, str] = LruCache(self.KEPT)

    def header(self, path: str) -> str | None:
        """The ``Link`` value of the page at `path` (in the site, decoded), else None."""
        kept = self._kept.get(path)
        if kept is None:
            kept = self._find(path) or ""
            self._kept.put(path, kept)
        return kept or None

    def _find(self, path: str) -> str | None:
        if self._patterns is None:
            templates = [(RECORD_URL, ""), (DEFAULT_METADATA_URL, "")]
            for view in self.index.views():
                templates.append((view.info.file_list_url, view.info.address))
            self._patterns = page_patterns(templates)
        for pattern in self._patterns:
            match = pattern.fullmatch(path)
            for form in match.groupdict().values() if match else ():
                records = self.index.records(canonical_key(form))
                if not records:
                    continue
                key = canonical_key(records[0]["repository"])
                if key != canonical_key(form):
                    records = self.index.records(key)
                found = page_links(self.index.site_url, key, records).get(path)
                if found is not None:
                    return found
        return None


def all_page_links(index) -> Iterator[tuple[str, str]]:
    """(page, ``Link`` value) of every page of the site that carries links, shard by
    shard, keys sorted (a path two keys would write: the first one's)."""
    seen: set[str] = set()
    for key, records in index.entries():
        for path, value in page_links(index.site_url, key, records).items():
            if path not in seen:
                seen.add(path)
                yield path, value
