"""An item's Dublin Core as the files reference managers read (BibTeX, RIS, CSL-JSON),
and which of them (or JSON-LD, or oai_dc) a request's ``Accept`` header prefers.

The build writes each file beside the item's ``oai_dc.xml``, in
``metadata/<repository>/`` (site/pages.py); the record page links them, which is what a
static host offers.  Where a server answers (``ibistatic serve``, the nginx and Apache
virtual hosts, the Cloudflare worker), a request for an item's persistent URL whose
``Accept`` prefers one of their types gets ``303 See Other`` to the file
(:func:`negotiate`).  :data:`EXPORTS` is the one list of names and types: the worker
reads it from facts.js, the virtual hosts from :func:`accept_pattern`.

Every value is made safe for its format here, whatever the descriptor held: no value
can end its field or start another (a BibTeX brace, a RIS line break, a JSON quote).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "Export",
    "EXPORTS",
    "EXPORT_NAMES",
    "beside",
    "negotiate",
    "accept_pattern",
    "bibtex",
    "ris",
    "csl_json",
]


class Export(NamedTuple):
    name: str  # the file's name in metadata/<repository>/
    label: str  # its name on the record page
    content_type: str  # what a server sends it with
    accepts: tuple[str, ...]  # the media types an Accept header names it by
    #: whether browsers name it too, as a fallback below text/html (XML)
    browsers: bool = False


EXPORTS = (
    Export("cite.bib", "BibTeX", "application/x-bibtex; charset=utf-8", ("application/x-bibtex",)),
    Export(
        "cite.ris",
        "RIS",
        "application/x-research-info-systems; charset=utf-8",
        ("application/x-research-info-systems",),
    ),
    Export(
        "csl.json",
        "CSL-JSON",
        "application/vnd.citationstyles.csl+json; charset=utf-8",
        ("application/vnd.citationstyles.csl+json",),
    ),
    Export(
        "record.jsonld", "JSON-LD", "application/ld+json; charset=utf-8", ("application/ld+json",)
    ),
    Export(
        "oai_dc.xml",
        "Dublin Core (oai_dc)",
        "application/xml",
        ("application/xml", "text/xml"),
        browsers=True,
    ),
)
EXPORT_NAMES = tuple(export.name for export in EXPORTS)


def beside(oai_dc_url: str, name: str = "") -> str:
    """The URL of the export `name` of an item, whose oai_dc.xml is at `oai_dc_url`
    (they share its folder); with no name, the folder's."""
    return oai_dc_url.rpartition("/")[0] + "/" + name


# One element of an Accept header: type "/" subtype, then ";"-separated parameters.
_RANGE = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)/([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*")
_QVALUE = re.compile(r"\s*[qQ]\s*=\s*(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\s*")
#: Accept elements read at most: a longer header is read up to here (a browser sends ~10)
MAX_RANGES = 64


def _ranges(accept: str) -> list[tuple[str, str, float]]:
    """(type, subtype, q) of each element of `accept`, lower case; an element that is no
    media range is skipped, as RFC 9110 §12.5.1 lets a server do.  Linear in the header:
    one split, then one anchored match per piece of the first MAX_RANGES elements."""
    found = []
    for element in accept.split(",", MAX_RANGES)[:MAX_RANGES]:
        kind, *parameters = element.split(";")
        matched = _RANGE.fullmatch(kind)
        if matched is None:
            continue
        q = 1.0
        for parameter in parameters:
            value = _QVALUE.fullmatch(parameter)
            if value is not None:
                q = float(value.group(1))
                break  # the parameters after q are accept-ext (RFC 7231), not the type's
        found.append((matched.group(1).lower(), matched.group(2).lower(), q))
    return found


def _quality(media_type: str, ranges: Sequence[tuple[str, str, float]]) -> float:
    """The q of `media_type`: that of the most specific range matching it (0 if none)."""
    kind, _, subtype = media_type.partition("/")
    best, specificity = 0.0, -1
    for range_type, range_subtype, q in ranges:
        if range_type == kind and range_subtype == subtype:
            rank = 2
        elif range_type == kind and range_subtype == "*":
            rank = 1
        elif range_type == "*" and range_subtype == "*":
            rank = 0
        else:
            continue
        if rank > specificity:
            best, specificity = q, rank
    return best


def negotiate(accept: str | None) -> Export | None:
    """The export `accept` prefers to the item itself, or None (keep the redirect).

    The item itself stands for ``text/html`` (what a browser gets): an export wins only
    when the header names its type, with a q above text/html's, so ``*/*``,
    ``application/*``, a browser's header and no header at all keep the redirect; among
    exports, the highest q, then the order of :data:`EXPORTS`."""
    if not accept:
        return None
    ranges = _ranges(accept)
    chosen, best = None, _quality("text/html", ranges)
    named = {f"{kind}/{subtype}": q for kind, subtype, q in reversed(ranges)}  # first wins
    for export in EXPORTS:
        q = max(named.get(media_type, 0.0) for media_type in export.accepts)
        if q > best:
            chosen, best = export, q
    return chosen


def accept_pattern() -> str:
    """A PCRE (case ignored) that matches every Accept header :func:`negotiate` may
    answer with an export: the virtual hosts send those to ``ibistatic serve``, which
    decides.  It names an export's type; a type browsers also name (XML) only when
    text/html is absent or has a parameter (a q below 1): with text/html at q=1 nothing
    can prefer the export.  No nested quantifier: linear in the header."""
    specific = [re.escape(t) for e in EXPORTS if not e.browsers for t in e.accepts]
    shared = [re.escape(t) for e in EXPORTS if e.browsers for t in e.accepts]
    return "|".join(specific) + "|^(?!.*text/html(?!\\s*;)).*(" + "|".join(shared) + ")"


# --- the formats -------------------------------------------------------------------

# What no format here should carry: C0/C1 controls (a newline becomes a space) and lone
# surrogates (no UTF-8 for them).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_SPACES = re.compile(r"\s+")


def _line(value: str) -> str:
    """`value` on one line: controls dropped, every run of white space one space."""
    return _SPACES.sub(" ", _CONTROLS.sub("", value)).strip()


def _values(dublin_core: Iterable[tuple[str, Sequence[str]]], element: str) -> list[str]:
    return [
        line
        for key, values in dublin_core
        if key.lower() == element
        for value in values
        if (line := _line(value))
    ]


_YEAR = re.compile(r"\s*([0-9]{4})(?:-(0[1-9]|1[0-2])(?:-(0[1-9]|[12][0-9]|3[01]))?)?")


def _date(dc) -> tuple[str | None, re.Match | None]:
    """The item's first date as written, and its year[-month[-day]] prefix (or None)."""
    dates = _values(dc, "date")
    return (dates[0], _YEAR.match(dates[0])) if dates else (None, None)


# LaTeX's specials, written as commands whose own braces balance: BibTeX counts every
# brace, escaped or not, so "\{" alone would still end (or open) the field.
_BIBTEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "%": r"\%",
    "&": r"\&",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_BIBTEX_SPECIAL = re.compile(r"[\\{}%&$#_~^]")
_BIBTEX_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]")


def bibtex_text(value: str) -> str:
    """`value` fit inside a braced BibTeX field: on one line, LaTeX's specials escaped."""
    return _BIBTEX_SPECIAL.sub(lambda m: _BIBTEX_SPECIALS[m.group()], _line(value))


def bibtex(dublin_core, ibi: str, url: str, title: str) -> str:
    """A BibTeX ``@misc`` entry of an item (keyed by its IBI `ibi`; `url`, its
    persistent URL; `title` when its Dublin Core has none)."""
    dc = tuple(dublin_core)
    _, year = _date(dc)
    fields = [
        ("title", (_values(dc, "title") or [_line(title)])[0]),
        ("author", " and ".join(_values(dc, "creator"))),
        ("year", year.group(1) if year else ""),
        ("publisher", "; ".join(_values(dc, "publisher"))),
        ("abstract", " ".join(_values(dc, "description"))),
        ("keywords", ", ".join(_values(dc, "subject"))),
        ("language", (_values(dc, "language") or [""])[0]),
    ]
    lines = [f"@misc{{{_BIBTEX_KEY_UNSAFE.sub('_', ibi)},"]
    for name, value in fields:
        if value:
            lines.append(f"  {name} = {{{bibtex_text(value)}}},")
    lines.append(f"  url = {{{_line(url).translate(_URL_BRACES)}}},")
    return "\n".join(lines) + "\n}\n"


# A persistent URL is percent-encoded already; a brace or backslash in the site URL
# itself is written as its escape, so it cannot end the field either.
_URL_BRACES = str.maketrans({"{": "%7B", "}": "%7D", "\\": "%5C"})


def ris(dublin_core, url: str, title: str) -> str:
    """An RIS record of an item: one ``XX  - value`` line per value (CR LF ends each,
    as the format says), ``TY  - GEN`` first and ``ER  - `` last."""
    dc = tuple(dublin_core)
    _, year = _date(dc)
    lines = [("TY", "GEN"), ("TI", (_values(dc, "title") or [_line(title)])[0])]
    lines += [("AU", name) for name in _values(dc, "creator")]
    if year:
        lines.append(("PY", year.group(1)))
        lines.append(("DA", "/".join(part or "" for part in year.groups()) + "/"))
    lines += [("PB", value) for value in _values(dc, "publisher")]
    lines += [("AB", value) for value in _values(dc, "description")]
    lines += [("KW", value) for value in _values(dc, "subject")]
    lines += [("LA", value) for value in _values(dc, "language")[:1]]
    lines.append(("UR", _line(url)))
    return "".join(f"{tag}  - {value}\r\n" for tag, value in lines if value) + "ER  - \r\n"


def _csl_name(name: str) -> dict:
    family, comma, given = name.partition(",")
    if comma and family.strip() and given.strip():
        return {"family": family.strip(), "given": given.strip()}
    return {"literal": name}


def csl_json(dublin_core, ibi: str, url: str, title: str) -> str:
    """CSL-JSON (a list of one item, as citeproc and Zotero read it)."""
    dc = tuple(dublin_core)
    date, found = _date(dc)
    item: dict = {"id": ibi, "type": "document", "title": (_values(dc, "title") or [title])[0]}
    if creators := _values(dc, "creator"):
        item["author"] = [_csl_name(name) for name in creators]
    if date is not None:
        parts = [int(part) for part in found.groups() if part] if found else []
        item["issued"] = {"date-parts": [parts]} if parts else {"raw": date}
    optional = {
        "publisher": "; ".join(_values(dc, "publisher")),
        "abstract": " ".join(_values(dc, "description")),
        "keyword": ", ".join(_values(dc, "subject")),
        "language": (_values(dc, "language") or [""])[0],
        "URL": url,
    }
    item.update({name: value for name, value in optional.items() if value})
    return json.dumps([item], ensure_ascii=False, indent=1, sort_keys=True) + "\n"
