"""What the pages for people say about an item: its record page, its copies, its files.

The record page of an IBI (``record/<canonical repository key>/``, docs/site.md) is the
one page that shows everything the site knows of it, in every state: title, creators and
dates, its Dublin Core with human labels, its editions, translations and metadata, its
files, and its state in each Archive; for a deleted item it is its *tombstone* (title,
date of removal, the optional ``reason:`` of item.yaml).  It shows only what the item
itself and the items it names hold, so an update that re-renders the affected items
gives the same page as a full build (site.plan).

The functions here compute plain values for the templates; reading the files of ``doc/``
for the file lists (size, SHA-256) is the only I/O.
"""

from __future__ import annotations

import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..archive.filesums import FileSums
from ..core import exports
from ..core.exports import EXPORTS
from ..core.facts import DC_ELEMENTS, URL_PATH_SAFE
from ..core.identifiers import Ibi
from ..core.model import Item
from ..core.properties import item_urls
from . import i18n
from .signposting import cite_as, record_path, schema_type

__all__ = [
    "Holder",
    "FileRow",
    "representative",
    "record_url",
    "holders",
    "find_item",
    "dublin_core_rows",
    "file_rows",
    "related",
    "record_context",
    "json_ld",
    "item_json_ld",
    "export_texts",
    "citation_meta",
]


@dataclass(frozen=True)
class Holder:
    """One Archive's copy of an item, as its record and the conflict pages list it."""

    archive: str
    state: str
    timestamp: str
    url: str | None  # where its Archive serves it (None for a Deleted one)


@dataclass(frozen=True)
class FileRow:
    path: str
    url: str
    type: str
    size: int | None  # None: the file could not be read
    sha256: str | None
    default: bool


def representative(items: list[Item]) -> Item:
    """The item that describes an IBI: the first Original, else the first live copy,
    else the first holder (as the catalog)."""
    for wanted in (lambda i: i.state == "Original", lambda i: i.state != "Deleted"):
        found = next((i for i in items if wanted(i)), None)
        if found is not None:
            return found
    return items[0]


def record_url(site_url: str, key: str) -> str:
    return site_url + quote(record_path(key), safe=URL_PATH_SAFE)


def holders(loaded, key: str, urls_of: ItemUrls | None = None) -> list[Holder]:
    """Every Archive's copy of the IBI `key` (either form), in resolution order."""
    urls_of = urls_of or ItemUrls(loaded)
    found = []
    for info, item in loaded.holdings.holders(key):
        target = urls_of(item).get("target")
        found.append(Holder(info.name, item.state, item.timestamp, target))
    return found


def find_item(loaded, ibi: Ibi) -> Item | None:
    """The item an IBI (either form) names, as its first holder describes it."""
    found = loaded.holdings.holders(ibi.key)
    return representative([item for _, item in found]) if found else None


def dublin_core_rows(item: Item, ui: str) -> list[tuple[str, list[str]]]:
    """(label, values) of the item's Dublin Core in the oai_dc order, languages named."""
    order = {name: index for index, name in enumerate(DC_ELEMENTS)}
    rows = []
    for key, values in sorted(item.dublin_core, key=lambda kv: (order.get(kv[0], 99), kv[0])):
        shown = list(values)
        if key == "language":
            shown = [_language_shown(value, ui) for value in values]
        rows.append((i18n.element_label(key, ui), shown))
    return rows


def _language_shown(tag: str, ui: str) -> str:
    name = i18n.language_name(tag, ui)
    return name if name == tag else f"{name} ({tag})"


def file_rows(
    root: Path | None, item: Item, files: dict[str, str], sums: FileSums
) -> list[FileRow]:
    """The rows of a file list: `files` (path -> URL) with the size, type and SHA-256 of
    each file under the Archive's `root` (None: not on this machine), from `sums`."""
    default = (item.target or "").partition("?")[0]
    # a string, not a Path: joining Paths for every file was a tenth of a file list's time
    folder = None if root is None else f"{root}/{item.repository.text}/doc/"
    rows = []
    for path, url in sorted(files.items()):
        size, sha = (None, None)
        if folder is not None:
            size, sha = sums.size_and_sum(folder + path)
        kind = mimetypes.guess_type(path, strict=False)[0] or "application/octet-stream"
        rows.append(FileRow(path, url, kind, size, sha, path == default))
    return rows


def related(site_url: str, loaded, ibi: Ibi) -> dict:
    """A link to an item another names: its title and record page (when held), and the
    persistent URL of the reference as written."""
    item = find_item(loaded, ibi)
    return {
        "title": (item.title() if item else None) or ibi.text,
        "record": record_url(site_url, item.key) if item else None,
        "persistent": site_url + quote(ibi.text, safe=URL_PATH_SAFE),
        "lang": item.language if item else None,
    }


def _dates(item: Item) -> list[str]:
    return [v for k, values in item.dublin_core if k == "date" for v in values]


def _creators(item: Item) -> list[str]:
    return [v for k, values in item.dublin_core if k == "creator" for v in values]


def _values(item: Item, element: str) -> list[str]:
    return [v for k, values in item.dublin_core if k == element for v in values]


class ItemUrls:
    """item_urls of each item asked for, made once: a build asks for an item's URLs for
    its index record, its file list and its record page (each time the same). Meant for one
    chunk of a build (site.item_phase): each item is kept with its URLs, so no other
    takes its id while they are kept."""

    def __init__(self, loaded) -> None:
        self.loaded = loaded
        self._made: dict[int, tuple[Item, dict]] = {}

    def __call__(self, item: Item) -> dict:
        made = self._made.get(id(item))
        if made is None or made[0] is not item:
            made = self._made[id(item)] = (item, item_urls(self.loaded.view(item.archive), item))
        return made[1]


def record_context(
    site_url: str, loaded, key: str, items: list[Item], ui: str, urls_of: ItemUrls | None = None
) -> dict:
    """What record.html shows of the IBI `key` held as `items` (over the Archives);
    `urls_of`: the URLs of the items made so far (a build's share)."""
    urls_of = urls_of or ItemUrls(loaded)
    item = representative(items)
    urls = urls_of(item)
    forms = [ibi for ibi in (item.repository, item.ibip) if ibi is not None]
    return {
        "item": item,
        "title": item.title() or item.repository.text,
        "deleted": item.state == "Deleted",
        "creators": _creators(item),
        "dates": _dates(item),
        "language_name": i18n.language_name(item.language, ui) if item.language else None,
        "dublin_core": dublin_core_rows(item, ui),
        "forms": [site_url + quote(ibi.text, safe=URL_PATH_SAFE) for ibi in forms],
        "cite": cite_as(site_url, item),
        "urls": urls,
        "next_edition": related(site_url, loaded, item.next_edition) if item.next_edition else None,
        "metadata_item": related(site_url, loaded, item.metadata) if item.metadata else None,
        "translations": [
            {"language": i18n.language_name(tag, ui), **related(site_url, loaded, ibi)}
            for tag, ibi in item.translations
        ],
        "holders": holders(loaded, key, urls_of),
        "cite_files": cite_files(urls),
    }


def cite_files(urls: dict) -> list[tuple[str, str, str]]:
    """(label, URL, media type) of the files for reference managers beside an item's
    oai_dc.xml (site.pages writes them), for the record page; none without metadata."""
    xml = urls.get("oai_dc")
    if not xml:
        return []
    return [  # oai_dc.xml is linked above them
        (export.label, exports.beside(xml, export.name), export.accepts[0])
        for export in EXPORTS
        if export.name != "oai_dc.xml"
    ]


def json_ld(site_url: str, context: dict) -> dict:
    """schema.org JSON-LD of a record page (what search engines and Zotero read)."""
    item: Item = context["item"]
    data = {
        "@context": "https://schema.org",
        "@type": schema_type(item),
        "@id": context["cite"],
        "url": record_url(site_url, item.key),
        "name": context["title"],
        "identifier": context["forms"],
    }
    optional = {
        "author": [{"@type": "Person", "name": name} for name in context["creators"]],
        "datePublished": context["dates"][0] if context["dates"] else None,
        "dateModified": item.timestamp,
        "inLanguage": item.language,
        "description": " ".join(_values(item, "description")) or None,
        "keywords": _values(item, "subject"),
        "publisher": [{"@type": "Organization", "name": n} for n in _values(item, "publisher")],
    }
    data.update({name: value for name, value in optional.items() if value})
    return data


def item_json_ld(site_url: str, item: Item) -> dict:
    """:func:`json_ld` of `item` alone (the record page's, without the other holders):
    its metadata folder's ``record.jsonld``."""
    forms = [ibi for ibi in (item.repository, item.ibip) if ibi is not None]
    context = {
        "item": item,
        "cite": cite_as(site_url, item),
        "title": item.title() or item.repository.text,
        "forms": [site_url + quote(ibi.text, safe=URL_PATH_SAFE) for ibi in forms],
        "creators": _creators(item),
        "dates": _dates(item),
    }
    return json_ld(site_url, context)


def export_texts(site_url: str, item: Item) -> dict[str, str]:
    """File name -> text of the item's metadata for reference managers (core.exports;
    oai_dc.xml is site.pages'), written beside its oai_dc.xml."""
    cite = cite_as(site_url, item)
    title = (item.title() or "").strip() or item.repository.text
    ibi = (item.ibip or item.repository).text
    json_ld_text = json.dumps(item_json_ld(site_url, item), ensure_ascii=False, indent=1)
    return {
        "cite.bib": exports.bibtex(item.dublin_core, ibi, cite, title),
        "cite.ris": exports.ris(item.dublin_core, cite, title),
        "csl.json": exports.csl_json(item.dublin_core, ibi, cite, title),
        "record.jsonld": json_ld_text + "\n",
    }


def citation_meta(context: dict) -> list[tuple[str, str]]:
    """The ``citation_*`` meta tags (Highwire Press, read by Google Scholar and Zotero)."""
    item: Item = context["item"]
    tags = [("citation_title", context["title"])]
    tags += [("citation_author", name) for name in context["creators"]]
    date = context["dates"][0] if context["dates"] else item.timestamp[:10]
    tags.append(("citation_publication_date", date.replace("-", "/")))
    tags += [("citation_publisher", name) for name in _values(item, "publisher")]
    if item.language:
        tags.append(("citation_language", item.language))
    tags += [("citation_keywords", value) for value in _values(item, "subject")]
    target = context["urls"].get("target", "")
    if target.lower().partition("?")[0].endswith(".pdf"):
        tags.append(("citation_pdf_url", target))
    tags.append(("citation_public_url", context["cite"]))
    return tags
