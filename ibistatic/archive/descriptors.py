"""archive.yaml and item.yaml: raw mappings to validated models (archive-format.md).

Pure functions: the crawler hands in what it read (the YAML mapping, the files of
``doc/``, the fallback timestamp) and gets back a model or ``None`` plus every problem
found, each naming archive, path, key, what was found and what was expected.  A bad
value makes that one item invalid; unknown keys are warnings.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

from ..core.identifiers import Ibi, parse_ibi, parse_repository_name
from ..core.languages import parse_language_tag
from ..core.model import CONTENT_TYPES, STATES, ArchiveInfo, Item, split_query
from ..core.relations import parse_relation
from ..errors import IbiSyntaxError, Problem

__all__ = ["ARCHIVE_KEYS", "ITEM_KEYS", "read_archive_info", "read_item", "Collector"]

ARCHIVE_KEYS = (
    "address", "service-ibi", "service-ibip", "platform-software-ibi",
    "file-url", "file-list-url", "relations",
    # how its pair lists write non-ASCII characters (docs/archive-format.md)
    "pair-list-charset",
    # where `ibistatic deposit` mints new IBIs (docs/cli/deposit.md)
    "deposit-host", "deposit-ip", "deposit-port", "deposit-granularity",
)
ITEM_KEYS = (
    "state", "ibip", "content-type", "timestamp", "target", "language", "translations",
    "next-edition", "metadata", "formats", "dublin-core", "transferable",
)
TEMPLATE_FIELDS = ("address", "repository", "ibip", "path", "site")

# hostport (Section 4.1): a host name or IPv4, optional port.
def _shown(value: Any) -> str:
    """A value as the user wrote it in YAML, with its YAML kind (no Python names)."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, str):
        return repr(value)  # text is the common case: quoting it says enough
    if isinstance(value, _dt.datetime):
        return f"{str(value)!r} (a time)" if value.tzinfo else f"{str(value)!r} (a time without a time zone)"
    if isinstance(value, _dt.date):
        return f"{value.isoformat()!r} (a date without a time)"
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a value of another kind"


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

    @property
    def failed(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


def _syntax_found(error: IbiSyntaxError) -> str:
    """One-line account of a grammar error for a Problem (the caret needs two lines)."""
    return f"{error.text!r} ({error.found} at character {error.position + 1})"


def _string(c: Collector, raw: Mapping, key: str, expected: str) -> str | None:
    if key not in raw:
        return None
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        c.error(key, _shown(value), expected)
        return None
    return value.strip()


def _ibi(c: Collector, key: str, text: Any, *, repository_only: bool = False) -> Ibi | None:
    what = "an IBI in repository-name form" if repository_only else "an IBI (repository name or IBIp)"
    if not isinstance(text, str):
        c.error(key, _shown(text), what)
        return None
    try:
        return parse_repository_name(text.strip()) if repository_only else parse_ibi(text.strip())
    except IbiSyntaxError as error:
        c.error(key, _syntax_found(error), f"{what}: {error.expected} there")
        return None


def _language(c: Collector, key: str, text: Any) -> str | None:
    if not isinstance(text, str):
        c.error(key, _shown(text), "a language tag such as pt or pt-BR")
        return None
    try:
        return str(parse_language_tag(text.strip()))
    except IbiSyntaxError as error:
        c.error(key, _syntax_found(error), f"an ISO 639-1 language, optionally '-' and an ISO 3166-1 country: {error.expected} there")
        return None


#: what the site itself publishes at its top level: no template may name it
SITE_OWN = ("404.html", "index.html", "index", "files", "metadata", "assets", "_ibistatic", "_redirects",
            "_headers", "_worker.js", "sitemap.xml", "robots.txt", ".nojekyll")
#: a template's start: an http(s) URL with a host, the site, or a path on the site's host
_TEMPLATE_START = re.compile(r"(?i:https?://)[^/{}]*[^/]|\{site\}|/(?![/\\])")
URL_TEMPLATE = "an http(s) URL, {site}... or /path template (archive-format.md, URLs)"


def _template(c: Collector, raw: Mapping, key: str, default: str) -> str:
    value = _string(c, raw, key, "a URL template string") if raw.get(key) is not None else None
    if value is None:
        return default
    for name in re.findall(r"\{([^{}]*)\}", value):
        if name not in TEMPLATE_FIELDS:
            c.error(key, f"field {{{name}}} in {value!r}", "only " + ", ".join(f"{{{f}}}" for f in TEMPLATE_FIELDS))
            return default
    why = _template_problem(key, value)
    if why is not None:
        c.error(key, f"{value!r}, {why}", URL_TEMPLATE)
        return default
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
    inside = template[len("{site}"):]
    if key == "file-list-url":
        ok = inside.startswith("files/{repository}/")
        return None if ok else "which is a page of the site outside files/{repository}/"
    first = inside.split("/")[0]
    if first.startswith("{") or first in SITE_OWN or first == "":
        return f"which names a page of the site ({first or '/'!s}...)"
    return None


def _unknown_keys(c: Collector, raw: Mapping, known: tuple[str, ...]) -> None:
    for key in raw:
        if key not in known:
            c.warning(str(key), "an unknown key", "one of " + ", ".join(known))


def read_archive_info(name: str, raw: Any) -> tuple[ArchiveInfo | None, list[Problem]]:
    """Validate archive.yaml (its table in archive-format.md)."""
    from ..core.model import DEFAULT_FILE_LIST_URL, DEFAULT_FILE_URL
    from ..core.pairlists import PAIR_LIST_CHARSETS

    c = Collector(name, "archive.yaml")
    if raw is None:
        c.error("", "an empty file", "a YAML mapping of keys to values")
        return None, c.problems
    if not isinstance(raw, Mapping):
        c.error("", _shown(raw), "a YAML mapping of keys to values")
        return None, c.problems
    _unknown_keys(c, raw, ARCHIVE_KEYS)
    address = _string(c, raw, "address", "the Archive's host[:port], e.g. mtc-m16c.sid.inpe.br") if raw.get("address") is not None else None
    if raw.get("address") is None:
        c.error("address", "nothing", "the Archive's host[:port] (a required key)")
    elif address is not None and not HOSTPORT.fullmatch(address):
        c.error("address", repr(address), "a host name or IP, optionally ':port'")
    if raw.get("service-ibi") is None:
        c.error("service-ibi", "nothing", "the repository name of the archive service (a required key)")
    service = _ibi(c, "service-ibi", raw["service-ibi"], repository_only=True) if raw.get("service-ibi") is not None else None
    service_ibip = _ibi(c, "service-ibip", raw["service-ibip"]) if raw.get("service-ibip") is not None else None
    if service_ibip is not None and service_ibip.form != "ibip":
        c.error("service-ibip", repr(service_ibip.text), "an IBIp")
    platform = _ibi(c, "platform-software-ibi", raw["platform-software-ibi"]) if raw.get("platform-software-ibi") is not None else None
    file_url = _template(c, raw, "file-url", DEFAULT_FILE_URL)
    file_list_url = _template(c, raw, "file-list-url", DEFAULT_FILE_LIST_URL)
    relations = _relations(c, raw["relations"]) if raw.get("relations") is not None else None
    charset = _choice(c, raw, "pair-list-charset", PAIR_LIST_CHARSETS, "utf-8")
    if c.failed:
        return None, c.problems
    info = ArchiveInfo(
        name=name, address=address, service_ibi=service, service_ibip=service_ibip,
        platform_ibi=platform, file_url=file_url, file_list_url=file_list_url, relations=relations,
        pair_list_charset=charset,
    )
    return info, c.problems


def _relations(c: Collector, value: Any):
    if not isinstance(value, list):
        c.error("relations", _shown(value), "a list of relations such as \"\", .lastedition, .metadata(oai_dc)")
        return None
    relations = []
    for index, text in enumerate(value):
        text = "" if text is None else text
        if not isinstance(text, str):
            c.error(f"relations[{index}]", _shown(text), "a relation string")
            continue
        try:
            relation = parse_relation(text.strip())
        except IbiSyntaxError as error:
            c.error(f"relations[{index}]", _syntax_found(error), f"a relation of Table 7.5: {error.expected} there")
            continue
        if relation not in relations:
            relations.append(relation)
    return tuple(relations)


def read_item(
    archive: str,
    repository: str,
    raw: Any,
    files: tuple[str, ...],
    fallback_timestamp: str,
) -> tuple[Item | None, list[Problem]]:
    """Validate one item.yaml (its table in archive-format.md).

    ``repository`` is the repository path as found on disk (its four directory names
    joined by ``/``); ``files`` are the paths under ``doc/``; ``fallback_timestamp`` the
    newest modification time there (of item.yaml for a Deleted item).
    """
    c = Collector(archive, f"{repository}/item.yaml")
    try:
        name = parse_repository_name(repository)
    except IbiSyntaxError as error:
        c.error("", f"repository path {_syntax_found(error)}", f"a repository name: {error.expected} there")
        return None, c.problems
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        c.error("", _shown(raw), "a YAML mapping of keys to values")
        return None, c.problems
    _unknown_keys(c, raw, ITEM_KEYS)
    fields: dict[str, Any] = {"archive": archive, "repository": name, "files": files}
    fields["state"] = _state(c, raw)
    if raw.get("ibip") is not None:
        ibip = _ibi(c, "ibip", raw["ibip"])
        if ibip is not None and ibip.form != "ibip":
            c.error("ibip", repr(ibip.text), "an IBIp such as 8JMKD3MGP8W/35MME4E")
        fields["ibip"] = ibip
    fields["content_type"] = _choice(c, raw, "content-type", CONTENT_TYPES, "Data")
    fields["timestamp"] = _timestamp(c, raw, fallback_timestamp)
    fields["language"] = _language(c, "language", raw["language"]) if raw.get("language") is not None else None
    fields["translations"] = _translations(c, raw.get("translations"))
    for key, attribute in (("next-edition", "next_edition"), ("metadata", "metadata")):
        if raw.get(key) is not None:
            fields[attribute] = _ibi(c, key, raw[key])
    fields["formats"] = _formats(c, raw.get("formats"), files)
    fields["dublin_core"] = _dublin_core(c, raw.get("dublin-core"))
    fields["transferable"] = _boolean(c, raw, "transferable", True)
    if fields["state"] != "Deleted":
        fields["target"] = _target(c, raw, files)
    _self_references(c, name, fields)
    if c.failed:
        return None, c.problems
    return Item(**fields), c.problems


def _state(c: Collector, raw: Mapping) -> str | None:
    if raw.get("state") is None:
        c.error("state", "nothing", "one of Original, Copy, Deleted (a required key)")
        return None
    return _choice(c, raw, "state", STATES, None)


def _choice(c: Collector, raw: Mapping, key: str, allowed: tuple[str, ...], default):
    value = raw.get(key)
    if value is None:
        return default
    if value not in allowed:
        c.error(key, _shown(value), "one of " + ", ".join(allowed))
        return default
    return value


def _boolean(c: Collector, raw: Mapping, key: str, default: bool) -> bool:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        c.error(key, _shown(value), "true or false")
        return default
    return value


def _timestamp(c: Collector, raw: Mapping, fallback: str) -> str:
    value = raw.get("timestamp")
    if value is None:
        return fallback
    expected = "an ISO 8601 UTC time ending in Z, e.g. 2009-07-21T13:23:45Z"
    if isinstance(value, _dt.datetime):  # YAML turned an unquoted timestamp into a datetime
        if value.tzinfo is None:
            c.error("timestamp", _shown(value), expected)
            return fallback
        value = value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    elif isinstance(value, _dt.date):
        c.error("timestamp", _shown(value), expected)
        return fallback
    if not isinstance(value, str) or not ISO_UTC.fullmatch(value):
        c.error("timestamp", _shown(value), expected)
        return fallback
    try:
        _dt.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        c.error("timestamp", repr(value), "a real calendar date and time")
    return value


def _translations(c: Collector, value: Any) -> tuple[tuple[str, Ibi], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        c.error("translations", _shown(value), "a mapping of language tag to IBI")
        return ()
    pairs = []
    for tag, ibi_text in value.items():
        language = _language(c, f"translations.{tag}", tag)
        ibi = _ibi(c, f"translations.{tag}", ibi_text)
        if language is not None and ibi is not None:
            pairs.append((language, ibi))
    return tuple(sorted(pairs, key=lambda pair: pair[0]))


def _formats(c: Collector, value: Any, files: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        c.error("formats", _shown(value), "a mapping of format name to a file inside doc/")
        return ()
    formats = []
    for name, path in value.items():
        if not isinstance(path, str) or not path:
            c.error(f"formats.{name}", _shown(path), "a file inside doc/")
        elif CONTROL.search(path):
            c.error(f"formats.{name}", f"{path!r}, which holds a control character", NO_CONTROL)
        elif split_query(path)[0] not in files:
            c.error(f"formats.{name}", f"{split_query(path)[0]!r}, which is not in doc/", "a file inside doc/")
        else:
            formats.append((str(name), path))
    return tuple(sorted(formats))


def _dublin_core(c: Collector, value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        c.error("dublin-core", _shown(value), "a mapping of Dublin Core element to text")
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
                c.error(f"dublin-core.{element}", _shown(text), "a string or a list of strings")
        elements.append((str(element), tuple(texts)))
    return tuple(elements)


def _target(c: Collector, raw: Mapping, files: tuple[str, ...]) -> str | None:
    value = raw.get("target")
    if value is None:
        if len(files) == 1:
            return files[0]
        if not files:
            c.error("target", "an empty doc/", "a file in doc/ (an item that is not Deleted has one)")
        else:
            c.error("target", f"no target and {len(files)} files in doc/", "a target naming the default file")
        return None
    if not isinstance(value, str) or not value:
        c.error("target", _shown(value), "a file inside doc/")
        return None
    if CONTROL.search(value):
        c.error("target", f"{value!r}, which holds a control character", NO_CONTROL)
        return None
    if split_query(value)[0] not in files:
        c.error("target", f"{split_query(value)[0]!r}, which is not in doc/", "a file inside doc/")
        return None
    return value


def _self_references(c: Collector, name, fields: Mapping) -> None:
    ibip = fields.get("ibip")
    own = {name.key} | ({ibip.key} if ibip else set())
    if fields.get("next_edition") is not None and fields["next_edition"].key in own:
        c.error("next-edition", repr(fields["next_edition"].text), "the IBI of another item (an item is not its own next edition)")
    if fields.get("metadata") is not None and fields["metadata"].key in own:
        c.error("metadata", repr(fields["metadata"].text), "the IBI of another item (a Metadata item)")

