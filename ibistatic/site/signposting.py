"""FAIR Signposting (https://signposting.org/FAIR/) of an item: one pure function.

:func:`record_links` says which typed links the record page of an item carries: its
persistent URL to cite (``cite-as``), its metadata (``describedby``), its files
(``item``) and what kind of thing it is (``type``).  Pages print them as ``<link>``
elements; a server or an nginx/Apache configuration can print the same list as an HTTP
``Link`` header with :func:`link_header`, so both always say the same thing.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass
from urllib.parse import quote

from ..core.facts import URL_PATH_SAFE
from ..core.model import Item

__all__ = [
    "Link",
    "record_links",
    "metadata_links",
    "link_header",
    "uri_reference",
    "MAX_LINK_HEADER",
    "schema_type",
    "cite_as",
    "record_path",
    "OAI_DC_PROFILE",
]

OAI_DC_PROFILE = "http://www.openarchives.org/OAI/2.0/oai_dc/"
_SCHEMA = "https://schema.org/"

#: Dublin Core type (DCMI Type Vocabulary) -> schema.org type of the item
_SCHEMA_TYPES = {
    "dataset": "Dataset",
    "image": "ImageObject",
    "stillimage": "ImageObject",
    "movingimage": "VideoObject",
    "sound": "AudioObject",
    "software": "SoftwareSourceCode",
    "text": "CreativeWork",
    "collection": "Collection",
}


@dataclass(frozen=True)
class Link:
    href: str
    rel: str
    type: str | None = None
    profile: str | None = None


def record_path(key: str) -> str:
    """The record page of the item whose canonical repository key is `key` (a folder)."""
    return f"record/{key}/"


def cite_as(site_url: str, item: Item) -> str:
    """The persistent URL to cite an item by: its IBIp when it has one (the short form)."""
    return site_url + quote((item.ibip or item.repository).text, safe=URL_PATH_SAFE)


def schema_type(item: Item) -> str:
    """The schema.org type of `item` from its Dublin Core ``type`` (else CreativeWork)."""
    for key, values in item.dublin_core:
        if key.lower() == "type":
            for value in values:
                found = _SCHEMA_TYPES.get(value.replace(" ", "").lower())
                if found:
                    return found
    return "CreativeWork"


def _file_type(path: str) -> str:
    return mimetypes.guess_type(path, strict=False)[0] or "application/octet-stream"


def record_links(site_url: str, item: Item, urls: dict) -> tuple[Link, ...]:
    """The Signposting links of the record page of `item`; `urls` are the URLs its
    Archive gives for it (core.properties.item_urls: empty for a Deleted item)."""
    persistent = cite_as(site_url, item)
    links = [Link(persistent, "cite-as")]
    if "oai_dc" in urls:
        links.append(Link(urls["oai_dc"], "describedby", "application/xml", OAI_DC_PROFILE))
    if "metadata" in urls:
        links.append(Link(urls["metadata"], "describedby", "text/html"))
    elif item.metadata is not None:  # a Metadata item: its persistent URL, resolved
        links.append(Link(persistent + ":", "describedby", "text/html"))
    for path, url in sorted(urls.get("files", {}).items()):
        links.append(Link(url, "item", _file_type(path)))
    links.append(Link(_SCHEMA + "AboutPage", "type"))
    links.append(Link(_SCHEMA + schema_type(item), "type"))
    return tuple(links)


def metadata_links(site_url: str, item: Item) -> tuple[Link, ...]:
    """The links of a page about an item that is not its record (metadata, file list):
    what to cite, and the record page it describes."""
    record = site_url + quote(record_path(item.key), safe=URL_PATH_SAFE)
    return (Link(cite_as(site_url, item), "cite-as"), Link(record, "describes", "text/html"))


#: the longest ``Link`` value a server sends (bytes): a page with more links (an item of
#: hundreds of files) has them on the page only, since clients refuse longer heads
#: (Node's HTTP parser: 16 KiB for all the headers of a response)
MAX_LINK_HEADER = 8192
#: what RFC 3986's URI-Reference holds unescaped besides letters, digits and "_.-~"
#: (its reserved characters), and "%" when it starts an escape (see _LONE_PERCENT)
_URI_SAFE = ":/?#[]@!$&'()*+,;=%"
_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
#: what a quoted parameter value may hold: visible ASCII but for '"', backslash, '<', '>'
#: (so ",<" is found in a header only between two links: serverlinks splits there)
_PARAMETER = re.compile(r"[\x21\x23-\x3b\x3d\x3f-\x5b\x5d-\x7e]*")


def uri_reference(href: str) -> str:
    """`href` as an RFC 3986 URI-Reference: every character it cannot hold (a space,
    '"', '<', '>', a control character, non-ASCII...) percent-encoded as UTF-8; its own
    ``%XX`` escapes kept, a lone '%' encoded."""
    return quote(_LONE_PERCENT.sub("%25", href), safe=_URI_SAFE)


def link_header(links: tuple[Link, ...]) -> str:
    """`links` as the value of an HTTP ``Link`` header (RFC 8288): each target an
    URI-Reference (:func:`uri_reference`), so that no '>', ',', CR or LF of a URL can end
    it early.  Written without spaces (RFC 8288 allows none around ';' and ','), so the
    value is one word where a server's map needs one (an Apache RewriteMap).  A link
    whose parameters could not be quoted is left out (none of ours: they are constants
    and media types)."""
    parts = []
    for link in links:
        params = [("rel", link.rel), ("type", link.type), ("profile", link.profile)]
        quoted = [(name, value) for name, value in params if value]
        if not all(_PARAMETER.fullmatch(value) for _, value in quoted):
            continue
        href = uri_reference(link.href)
        parts.append(f"<{href}>" + "".join(f';{name}="{value}"' for name, value in quoted))
    return ",".join(parts)
