"""archive.yaml and item.yaml: raw mappings to validated models (archive-format.md).

Pure functions: the crawler hands in what it read (the YAML mapping, the files of
``doc/``, the fallback timestamp) and gets back a model or ``None`` plus every problem
found, each naming archive, path, key, what was found and what was expected.  A bad
value makes that one item invalid; unknown keys are warnings.
"""

from __future__ import annotations

import datetime as _dt
import re
import string
import sys
from collections.abc import Mapping
from typing import Any

from ..core.identifiers import Ibi, parse_ibi, parse_repository_name
from ..core.languages import parse_language_tag
from ..core.model import (
    CONTENT_TYPES,
    DEFAULT_FILE_LIST_URL,
    DEFAULT_FILE_URL,
    STATES,
    ArchiveInfo,
    Item,
    split_query,
)
from ..core.pairlists import PAIR_LIST_CHARSETS
from ..core.relations import parse_relation
from ..errors import IbiSyntaxError, Problem
from ..schema import Field, Schema, host_fits, shown_value

__all__ = [
    "ARCHIVE_SCHEMA",
    "ITEM_SCHEMA",
    "ARCHIVE_KEYS",
    "ITEM_KEYS",
    "read_archive_info",
    "read_item",
    "Collector",
]

TEMPLATE_FIELDS = ("address", "repository", "ibip", "path", "site")
_FORMAT = string.Formatter()


_shown = shown_value


# hostport (Section 4.1): a host name or IPv4, optional port.
HOSTPORT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?")
#: control characters: in a target's ?query they would reach a Location header verbatim
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NO_CONTROL = "a file inside doc/ and an optional ?query, without control characters"
ISO_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z")


class Collector:
    """Collects the problems of one descriptor, all of them, in the order found."""

    def __init__(self, archive: str, path: str) -> None:
        self.archive = archive
        self.path = path
        self.problems: list[Problem] = []

    def error(self, key: str, found: str, expected: str) -> None:
        self.problems.append(Problem(self.archive, self.path, key, found, expected, "error"))

    def warning(self, key: str, found: str, expected: str) -> None:
        self.problems.append(Problem(self.archive, self.path, key, found, expected, "warning"))

    def missing(self, key: str, expected: str) -> None:
        self.error(key, "nothing", f"{expected} (a required key)")

    def unknown(self, key: str, expected: str) -> None:
        # a warning: the format grows by new optional keys (archive-format.md)
        self.warning(key, "an unknown key", expected)

    @property
    def failed(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


def _syntax_found(error: IbiSyntaxError) -> str:
    """One-line account of a grammar error for a Problem (the caret needs two lines)."""
    return f"{error.text!r} ({error.found} at character {error.position + 1})"


# --- validators of values (each: collector, key, value, context -> the value or None) -----


def _ibi(c: Collector, key: str, text: Any, *, repository_only: bool = False) -> Ibi | None:
    what = (
        "an IBI in repository-name form" if repository_only else "an IBI (repository name or IBIp)"
    )
    if not isinstance(text, str):
        c.error(key, _shown(text), what)
        return None
    try:
        ibi = parse_repository_name(text.strip()) if repository_only else parse_ibi(text.strip())
    except IbiSyntaxError as error:
        c.error(key, _syntax_found(error), f"{what}: {error.expected} there")
        return None
    long = _long_segment(ibi.text)
    if long is not None:
        c.error(
            key,
            long,
            f"{what} with {IBI_PARTS}",
        )
        return None
    return ibi


#: the longest parts of an IBI between '/': each names a folder of the site, and file
#: systems allow 255 bytes a name; the last one also names pages with a modifier after
#: it (``!``, ``+(pt-BR):(oai_dc)``), so it leaves room for one
MAX_IBI_SEGMENT = 255
MAX_IBI_LAST_SEGMENT = 160


def _long_segment(text: str) -> str | None:
    """What is too long in the IBI `text` for the names of its pages, or None."""
    *parts, last = text.split("/")
    for part, most in [*((part, MAX_IBI_SEGMENT) for part in parts), (last, MAX_IBI_LAST_SEGMENT)]:
        if len(part.encode("utf-8", "surrogateescape")) > most:
            return f"{part[:20]!r}... ({len(part):,} characters between '/')"
    return None


#: what an IBI whose parts are too long is expected to be
IBI_PARTS = (
    f"at most {MAX_IBI_SEGMENT} bytes between '/' and {MAX_IBI_LAST_SEGMENT} after the last "
    "(each part names a file of the site)"
)


def _any_ibi(c: Collector, key: str, value: Any, context: dict) -> Ibi | None:
    return _ibi(c, key, value)


def _repository_name(c: Collector, key: str, value: Any, context: dict) -> Ibi | None:
    return _ibi(c, key, value, repository_only=True)


def _ibip(expected: str):
    """A validator of an IBI that must be in IBIp form; `expected` names that form."""

    def read(c: Collector, key: str, value: Any, context: dict) -> Ibi | None:
        ibi = _ibi(c, key, value)
        if ibi is not None and ibi.form != "ibip":
            c.error(key, repr(ibi.text), expected)
        return ibi

    return read


def _language(c: Collector, key: str, text: Any, context: dict | None = None) -> str | None:
    if not isinstance(text, str):
        c.error(key, _shown(text), "a language tag such as pt or pt-BR")
        return None
    try:
        return str(parse_language_tag(text.strip()))
    except IbiSyntaxError as error:
        c.error(
            key,
            _syntax_found(error),
            f"an ISO 639-1 language, optionally '-' and an ISO 3166-1 country: {error.expected} there",
        )
        return None


def _one_of(allowed: tuple[str, ...], default: str | None):
    """A validator of a value among `allowed` (exactly so spelt)."""

    def read(c: Collector, key: str, value: Any, context: dict) -> str | None:
        if value not in allowed:
            c.error(key, _shown(value), "one of " + ", ".join(allowed))
            return default
        return value

    return read


def _boolean(c: Collector, key: str, value: Any, context: dict) -> bool | None:
    if not isinstance(value, bool):
        c.error(key, _shown(value), "true or false")
        return None
    return value


def _reason(c: Collector, key: str, value: Any, context: dict) -> str | None:
    if not isinstance(value, str) or not value.strip():
        c.error(key, _shown(value), "a sentence saying why the item was removed")
        return None
    return " ".join(value.split())  # one line: a tombstone shows it as running text


def _address(c: Collector, key: str, value: Any, context: dict) -> str | None:
    if not isinstance(value, str) or not value.strip():
        c.error(key, _shown(value), "the Archive's host[:port], e.g. mtc-m16c.sid.inpe.br")
        return None
    address = value.strip()
    host, _, port = address.partition(":")
    if not HOSTPORT.fullmatch(address) or not 1 <= int(port or 80) <= 65535 or not host_fits(host):
        c.error(
            key,
            repr(address),
            "a host name or IP, optionally ':port' (DNS's and TCP's limits: labels of at most "
            "63 characters, 253 in all; a port from 1 to 65535)",
        )
    return address


#: what the site itself publishes at its top level: no template may name it
SITE_OWN = (
    "404.html",
    "index.html",
    "index",
    "files",
    "metadata",
    "assets",
    "_ibistatic",
    "_redirects",
    "_headers",
    "_worker.js",
    "sitemap.xml",
    "robots.txt",
    ".nojekyll",
)
#: a template's start: an http(s) URL with a host, the site, or a path on the site's host
_TEMPLATE_START = re.compile(r"(?i:https?://)[^/{}]*[^/]|\{site\}|/(?![/\\])")
URL_TEMPLATE = "an http(s) URL, {site}... or /path template (archive-format.md, URLs)"


def _template(c: Collector, key: str, value: Any, context: dict) -> str | None:
    if not isinstance(value, str) or not value.strip():
        c.error(key, _shown(value), "a URL template string")
        return None
    value = value.strip()
    try:  # str.format's own parser: what it takes here is what _format_url can format
        fields = [(name, spec, conversion) for _, name, spec, conversion in _FORMAT.parse(value)]
    except ValueError as error:
        c.error(key, f"{value!r} ({error})", "a template whose { and } enclose a field name")
        return None
    for name, spec, conversion in fields:
        if name is not None and (name not in TEMPLATE_FIELDS or spec or conversion):
            written = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            c.error(
                key,
                f"field {{{written}}} in {value!r}",
                "only " + ", ".join(f"{{{f}}}" for f in TEMPLATE_FIELDS),
            )
            return None
    why = _template_problem(key, value)
    if why is not None:
        c.error(key, f"{value!r}, {why}", URL_TEMPLATE)
        return None
    return value


def _template_problem(key: str, template: str) -> str | None:
    """Why a URL template may not be used, or None (the URL rule, archive-format.md):
    it starts with http(s)://host, {site} or one '/'; its literal text is a safe URL;
    inside the site it names no page of the site, and a file list lies in files/{repository}/."""
    from ..core.properties import unsafe_url

    if not _TEMPLATE_START.match(template):
        return "which does not start with http://host, https://host, {site} or a single /"
    literal = unsafe_url(re.sub(r"\{[a-z]+\}", "x", template).replace("{site}", "https://x/"))
    if literal is not None:
        return f"which has {literal}"
    if not template.startswith("{site}"):
        return None
    inside = template[len("{site}") :]
    if key == "file-list-url":
        ok = inside.startswith("files/{repository}/")
        return None if ok else "which is a page of the site outside files/{repository}/"
    first = inside.split("/")[0]
    if first.startswith("{") or first in SITE_OWN or first == "":
        return f"which names a page of the site ({first or '/'!s}...)"
    return None


def _relations(c: Collector, key: str, value: Any, context: dict):
    if not isinstance(value, list):
        c.error(
            key, _shown(value), 'a list of relations such as "", .lastedition, .metadata(oai_dc)'
        )
        return None
    relations = []
    for index, text in enumerate(value):
        text = "" if text is None else text
        if not isinstance(text, str):
            c.error(f"{key}[{index}]", _shown(text), "a relation string")
            continue
        try:
            relation = parse_relation(text.strip())
        except IbiSyntaxError as error:
            c.error(
                f"{key}[{index}]",
                _syntax_found(error),
                f"a relation of Table 7.5: {error.expected} there",
            )
            continue
        if relation not in relations:
            relations.append(relation)
    return tuple(relations)


def _timestamp(c: Collector, key: str, value: Any, context: dict) -> str:
    fallback = context["fallback_timestamp"]
    expected = "an ISO 8601 UTC time ending in Z, e.g. 2009-07-21T13:23:45Z"
    if isinstance(value, _dt.datetime):  # YAML turned an unquoted timestamp into a datetime
        if value.tzinfo is None:
            c.error(key, _shown(value), expected)
            return fallback
        try:  # an offset can move the time out of datetime's years 1-9999
            value = value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        except OverflowError:
            c.error(key, _shown(value), "a time between years 1 and 9999 once in UTC")
            return fallback
    elif isinstance(value, _dt.date):
        c.error(key, _shown(value), expected)
        return fallback
    if not isinstance(value, str) or not ISO_UTC.fullmatch(value):
        c.error(key, _shown(value), expected)
        return fallback
    try:  # the shape is ISO_UTC's: fromisoformat only checks the calendar (strptime is much slower)
        _dt.datetime.fromisoformat(value[:19])
    except ValueError:
        c.error(key, repr(value), "a real calendar date and time")
    return value


def _translations(c: Collector, key: str, value: Any, context: dict) -> tuple[tuple[str, Ibi], ...]:
    if not isinstance(value, Mapping):
        c.error(key, _shown(value), "a mapping of language tag to IBI")
        return ()
    pairs = []
    for tag, ibi_text in value.items():
        language = _language(c, f"{key}.{tag}", tag)
        ibi = _ibi(c, f"{key}.{tag}", ibi_text)
        if language is not None and ibi is not None:
            pairs.append((language, ibi))
    return tuple(sorted(pairs, key=lambda pair: pair[0]))


def _doc_file_problem(path: Any, files: tuple[str, ...]) -> tuple[str, str] | None:
    """(found, expected) when `path` (a target or format) names no file of doc/, else None."""
    if not isinstance(path, str) or not path:
        return _shown(path), "a file inside doc/"
    if CONTROL.search(path):
        return f"{path!r}, which holds a control character", NO_CONTROL
    if split_query(path)[0] not in files:
        return f"{split_query(path)[0]!r}, which is not in doc/", "a file inside doc/"
    return None


def _formats(c: Collector, key: str, value: Any, context: dict) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        c.error(key, _shown(value), "a mapping of format name to a file inside doc/")
        return ()
    formats = []
    for name, path in value.items():
        problem = _doc_file_problem(path, context["files"])
        if problem is not None:
            c.error(f"{key}.{name}", *problem)
        else:
            formats.append((str(name), path))
    return tuple(sorted(formats))


def _dublin_core(
    c: Collector, key: str, value: Any, context: dict
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        c.error(key, _shown(value), "a mapping of Dublin Core element to text")
        return ()
    elements = []
    for element, values in value.items():
        values = values if isinstance(values, list) else [values]
        texts = []
        for text in values:
            if isinstance(text, (str, int, float)) and not isinstance(text, bool):
                texts.append(str(text))
            elif isinstance(text, (_dt.date, _dt.datetime)):
                texts.append(text.isoformat())
            else:
                c.error(f"{key}.{element}", _shown(text), "a string or a list of strings")
        _split_names(c, f"{key}.{element}", texts)
        elements.append((str(element), tuple(texts)))
    return tuple(elements)


#: a value that is only initials ("A.", "A. B.", "J.-P."): the second half of a name
_INITIALS = re.compile(r"(?:[^\W\d_](?:\.|\.-[^\W\d_]\.)\s*)+")


def _split_names(c: Collector, key: str, texts: list[str]) -> None:
    """`[Silva, A., Costa, B.]` is a YAML flow list of four strings: the comma in each
    name splits it.  Initials alone after a value are most likely such a split name."""
    for index in range(1, len(texts)):
        if _INITIALS.fullmatch(texts[index].strip()) and not _INITIALS.fullmatch(texts[index - 1]):
            joined = f"{texts[index - 1]}, {texts[index].strip()}"
            c.warning(
                f"{key}[{index}]",
                f"{texts[index]!r}, initials alone after {texts[index - 1]!r}",
                f"one name a value: quote names that hold a comma (['{joined}'], or one "
                "name a line under the key)",
            )


def _target(c: Collector, key: str, value: Any, context: dict) -> str | None:
    if context["state"] == "Deleted":
        return None  # a Deleted item answers no file
    problem = _doc_file_problem(value, context["files"])
    if problem is not None:
        c.error(key, *problem)
        return None
    return value


def _only_file(c: Collector, context: dict) -> str | None:
    """The target of an item.yaml that names none: the only file of doc/."""
    files = context["files"]
    if context["state"] == "Deleted":
        return None
    if len(files) == 1:
        return files[0]
    if not files:
        c.error("target", "an empty doc/", "a file in doc/ (an item that is not Deleted has one)")
    else:
        c.error(
            "target",
            f"no target and {len(files)} files in doc/",
            "a target naming the default file",
        )
    return None


# --- the schemas: one declaration per key, in the order of the tables of archive-format.md --

_DEPOSIT = "where [`ibistatic deposit`](cli/deposit.md) mints new IBIs for this Archive: "
ARCHIVE_SCHEMA = Schema(
    "archive.yaml",
    (
        Field(
            "address",
            "the Archive's web address, `host[:port]` (no scheme, no path), e.g. "
            "`mtc-m16c.sid.inpe.br`; answered as `archiveaddress`",
            required=True,
            expected="the Archive's host[:port]",
            read=_address,
        ),
        Field(
            "service-ibi",
            "the IBI, in repository-name form, of the archive service; answered as "
            "`ibi.archiveservice`",
            required=True,
            expected="the repository name of the archive service",
            read=_repository_name,
        ),
        Field("service-ibip", "the same service's IBIp", "none", read=_ibip("an IBIp")),
        Field(
            "platform-software-ibi",
            "IBI (either form) of the platform software; answered as `ibi.platformsoftware`",
            "none (`{}` in answers)",
            read=_any_ibi,
            attribute="platform_ibi",
        ),
        Field(
            "file-url",
            "template of a file's URL",
            f"`{DEFAULT_FILE_URL}`",
            read=_template,
            absent=DEFAULT_FILE_URL,
        ),
        Field(
            "file-list-url",
            "template of the page listing an item's files",
            f"`{DEFAULT_FILE_LIST_URL}` (a page of the static site)",
            read=_template,
            absent=DEFAULT_FILE_LIST_URL,
        ),
        Field(
            "relations",
            'list of the relations this Archive answers, e.g. `""`, `.lastedition`, '
            "`.metadata(oai_dc)`, `.translation(pt)`; an empty list answers none; an empty entry is the "
            "item itself",
            "every relation its items can answer",
            read=_relations,
        ),
        Field(
            "pair-list-charset",
            "how the Archive's answers (its pair lists: the Archive service, "
            '`ibistatic properties`) write non-ASCII characters as `%hh`, Table 4.2 leaving "o sistema de '
            'codificação adotado" to the Archive: `utf-8` (`Relat%C3%B3rio`) or `iso-8859-1` (`Relat%f3rio`, '
            "lower-case hex, as Example 4.2 prints it). A character ISO-8859-1 lacks (`€`) keeps its UTF-8 "
            "escapes, so that nothing is lost; ASCII escapes (`%20`) stay as written. The site, the index's "
            "URLs and the resolver's redirects keep UTF-8 (RFC 3986)",
            "`utf-8`",
            read=_one_of(PAIR_LIST_CHARSETS, "utf-8"),
            absent="utf-8",
        ),
        # read by `ibistatic deposit` (deposit.py), not by the crawl
        Field(
            "deposit-host",
            _DEPOSIT + "the identification subsystem's host name, e.g. "
            "`mtc-m18.sid.inpe.br` (not an IP address)",
            "none",
        ),
        Field(
            "deposit-ip",
            _DEPOSIT + "the subsystem's IP address (IPv4 or IPv6): every new item also "
            "gets an IBIp",
            "none",
        ),
        Field(
            "deposit-port",
            _DEPOSIT + "the subsystem's port, an integer from 1 to 65535",
            "none (the ports the algorithms leave out)",
        ),
        Field(
            "deposit-granularity",
            _DEPOSIT + "the distributor's grid: `60`, `1`, `0.1`, `0.01`, ... seconds",
            "`1`",
        ),
    ),
)

ITEM_SCHEMA = Schema(
    "item.yaml",
    (
        Field(
            "state",
            "`Original`, `Copy` or `Deleted` (exactly so capitalised)",
            required=True,
            expected="one of " + ", ".join(STATES),
            read=_one_of(STATES, None),
        ),
        Field(
            "ibip",
            "the item's IBIp form",
            "none",
            read=_ibip("an IBIp such as 8JMKD3MGP8W/35MME4E"),
        ),
        Field(
            "content-type",
            "`Data` or `Metadata`",
            "`Data`",
            read=_one_of(CONTENT_TYPES, "Data"),
            absent="Data",
        ),
        Field(
            "timestamp",
            "last update (or removal), ISO 8601 UTC: `2009-07-21T13:23:45Z`",
            "newest modification time of a file under `doc/` (of `item.yaml` for a `Deleted` item, or when "
            "`doc/` is empty)",
            read=_timestamp,
            absent=lambda c, context: context["fallback_timestamp"],
        ),
        Field(
            "target",
            "the default file, a path inside `doc/` (without `doc/`); an error when `doc/` has "
            "several files and none is named; not needed for a `Deleted` item",
            "the only file of `doc/`",
            read=_target,
            absent=_only_file,
        ),
        Field(
            "language",
            "language of the content: an ISO 639-1 code, optionally `-` and an ISO 3166-1 "
            "country in capitals: `pt`, `pt-BR`",
            "none",
            read=_language,
        ),
        Field(
            "translations",
            "map language tag → IBI (either form) of the translation in that language",
            "none",
            read=_translations,
            absent=(),
        ),
        Field(
            "next-edition",
            "IBI (either form) of the next edition of this item (not the item itself)",
            "none",
            read=_any_ibi,
        ),
        Field(
            "metadata",
            "IBI (either form) of the `Metadata` item that describes this item",
            "none",
            read=_any_ibi,
        ),
        Field(
            "formats",
            "(Metadata items) map format → file inside `doc/`; `oai_dc` is the format the "
            "standard names; the `target` is the free-format metadata",
            "none",
            read=_formats,
            absent=(),
        ),
        Field(
            "dublin-core",
            "inline metadata: map Dublin Core element (`title`, `creator`, `date`, ...) → "
            "string or list of strings; without a `metadata` item, ibistatic publishes it as a free-format "
            "page and an `oai_dc` record in the site (such metadata has no IBI)",
            "none",
            read=_dublin_core,
            absent=(),
        ),
        Field(
            "transferable",
            "`true` or `false` (YAML booleans, not strings); `false` for originals that "
            "must never migrate, such as an archive service",
            "`true`",
            read=_boolean,
            absent=True,
        ),
        Field(
            "reason",
            "(Deleted items) why the item was removed, a sentence shown on its record page "
            "(its tombstone) with the title and the date of removal (`timestamp`)",
            "none",
            read=_reason,
        ),
    ),
)
ARCHIVE_KEYS = ARCHIVE_SCHEMA.keys
ITEM_KEYS = ITEM_SCHEMA.keys


# --- reading the descriptors -----------------------------------------------------------------


def read_archive_info(name: str, raw: Any) -> tuple[ArchiveInfo | None, list[Problem]]:
    """Validate archive.yaml (ARCHIVE_SCHEMA, its table in archive-format.md)."""
    c = Collector(name, "archive.yaml")
    if raw is None:
        c.error("", "an empty file", "a YAML mapping of keys to values")
        return None, c.problems
    if not isinstance(raw, Mapping):
        c.error("", _shown(raw), "a YAML mapping of keys to values")
        return None, c.problems
    values = ARCHIVE_SCHEMA.read(c, raw, {})
    if c.failed:
        return None, c.problems
    return ArchiveInfo(name=name, **values), c.problems


def read_item(
    archive: str,
    repository: str,
    raw: Any,
    files: tuple[str, ...],
    fallback_timestamp: str,
    files_stamp: str = "",
) -> tuple[Item | None, list[Problem]]:
    """Validate one item.yaml (ITEM_SCHEMA, its table in archive-format.md).

    ``repository`` is the repository path as found on disk (its four directory names
    joined by ``/``); ``files`` are the paths under ``doc/``; ``fallback_timestamp`` the
    newest modification time there (of item.yaml for a Deleted item); ``files_stamp``
    what the crawl saw of those files (Item.files_stamp).
    """
    c = Collector(archive, f"{repository}/item.yaml")
    try:
        name = parse_repository_name(repository)
    except IbiSyntaxError as error:
        c.error(
            "",
            f"repository path {_syntax_found(error)}",
            f"a repository name: {error.expected} there",
        )
        return None, c.problems
    long = _long_segment(name.text)
    if long is not None:
        c.error(
            "",
            f"repository path {long}",
            f"a repository name with {IBI_PARTS}",
        )
        return None, c.problems
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        c.error("", _shown(raw), "a YAML mapping of keys to values")
        return None, c.problems
    values = ITEM_SCHEMA.read(c, raw, {"files": files, "fallback_timestamp": fallback_timestamp})
    _self_references(c, name, values)
    if c.failed:
        return None, c.problems
    item = Item(
        archive=sys.intern(archive),
        repository=name,
        files=_interned(files),
        files_stamp=files_stamp,
        **_shared_values(values),
    )
    return item, c.problems


#: the item.yaml values that repeat over an Archive's items
_REPEATED = ("state", "content_type", "target", "language")
#: Dublin Core values up to this length are shared (a type, a language, a date); longer
#: ones, titles and descriptions, seldom repeat
_SHORT = 16


def _shared_values(values: dict) -> dict:
    """`values` with what repeats over items (states, types, languages, file, format and
    Dublin Core names) as one string each: a large build holds every item, and a
    copy of "Original" per item adds up.  Done where the crawl
    reads items, not when they are loaded again: a pickle keeps shared strings shared."""
    for name in _REPEATED:
        if values.get(name) is not None:
            values[name] = sys.intern(values[name])
    if values.get("translations"):
        values["translations"] = tuple([(sys.intern(t), i) for t, i in values["translations"]])
    if values.get("formats"):
        values["formats"] = tuple([_interned(pair) for pair in values["formats"]])
    if values.get("dublin_core"):
        values["dublin_core"] = tuple(
            [
                (sys.intern(key), tuple([sys.intern(v) if len(v) <= _SHORT else v for v in vs]))
                for key, vs in values["dublin_core"]
            ]
        )
    return values


def _interned(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple([sys.intern(name) for name in names])


def _self_references(c: Collector, name, fields: Mapping) -> None:
    ibip = fields.get("ibip")
    own = {name.key} | ({ibip.key} if ibip else set())
    if fields.get("next_edition") is not None and fields["next_edition"].key in own:
        c.error(
            "next-edition",
            repr(fields["next_edition"].text),
            "the IBI of another item (an item is not its own next edition)",
        )
    if fields.get("metadata") is not None and fields["metadata"].key in own:
        c.error(
            "metadata", repr(fields["metadata"].text), "the IBI of another item (a Metadata item)"
        )
