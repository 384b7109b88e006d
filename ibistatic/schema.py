"""Declarative schemas of the three descriptors: ibistatic.yaml, archive.yaml, item.yaml.

As mkdocs' ``config_options``: one declaration per key (a :class:`Field`) says how its
value is read (a validator), what it is when absent, whether it is required, and the
text the documentation shows for it.  Reading a descriptor is driven by its schema
(:meth:`Schema.read`); the key tables of docs/configuration.md and docs/archive-format.md
are made from it (:meth:`Schema.markdown_table`, ``scripts/schema_tables.py``); an
unknown key is named together with the key it probably meant (:meth:`Schema.suggestion`).

The declarations themselves live beside their validators: ``CONFIG_SCHEMA`` in
``config.py``, ``ARCHIVE_SCHEMA`` and ``ITEM_SCHEMA`` in ``archive/descriptors.py``.
A schema is built once, at import: reading 100k item.yaml files compiles nothing per item.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Field", "Schema", "Report", "shown_value", "host_fits"]

#: how alike an unknown key and a known one must be (difflib's ratio) to be suggested:
#: 0.65 keeps "outptu" -> output, "lang" -> language, and leaves "titel" -> state out (0.6)
SUGGESTION_CUTOFF = 0.65


def shown_value(value: Any) -> str:
    """A value as the user wrote it in YAML, with its YAML kind (no Python names)."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, str):
        return repr(value)  # text is the common case: quoting it says enough
    if isinstance(value, datetime.datetime):
        zone = "" if value.tzinfo else " without a time zone"
        return f"{str(value)!r} (a time{zone})"
    if isinstance(value, datetime.date):
        return f"{value.isoformat()!r} (a date without a time)"
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a value of another kind"


def host_fits(host: str) -> bool:
    """Whether `host` (a name or an IP address) is within DNS's limits, which IDNA encoding
    and every HTTP client enforce: labels of at most 63 characters, 253 in all."""
    return 0 < len(host) <= 253 and all(len(label) <= 63 for label in host.split("."))


class Report(Protocol):
    """Where a schema reports what it finds (descriptors.Collector, config's report)."""

    def error(self, key: str, found: str, expected: str) -> None: ...

    def missing(self, key: str, expected: str) -> None: ...

    def unknown(self, key: str, expected: str) -> None: ...


#: a validator: (report, key, the value as YAML gave it, context) -> the validated value;
#: the context holds what the caller handed in and every field read before this one
Reader = Callable[[Report, str, Any, dict], Any]


@dataclass(frozen=True)
class Field:
    """One key of a descriptor.

    ``meaning`` and ``default`` are the documentation's text (Markdown) for the key;
    ``expected`` what a missing required key's message asks for; ``absent`` the value of a
    key that is missing or given with no value (a callable gets (report, context));
    ``read`` None for a key that is documented and accepted here but read by another
    command (the ``deposit-*`` keys of archive.yaml).
    """

    key: str
    meaning: str
    default: str = ""
    required: bool = False
    expected: str = ""
    read: Reader | None = None
    absent: Any = None
    attribute: str = ""  # the model's name for it; default: the key with '_' for '-'

    @property
    def name(self) -> str:
        return self.attribute or self.key.replace("-", "_")


def _spelling(key: str) -> str:
    """A key as compared for suggestions: case, '_' and spaces do not matter."""
    return key.strip().lower().replace("_", "-").replace(" ", "-")


class Schema:
    """The fields of one descriptor, in the order of its documentation table (and of its
    messages: unknown keys first, then the table's order)."""

    def __init__(
        self, descriptor: str, fields: tuple[Field, ...], retired: dict[str, str] | None = None
    ) -> None:
        self.descriptor = descriptor
        self.fields = fields
        #: keys once read and now unknown -> what to write instead (never a near spelling)
        self.retired = retired or {}
        self.keys = tuple(field.key for field in fields)
        self._known = frozenset(self.keys)
        self._spellings = {_spelling(key): key for key in self.keys}
        self._one_of = "one of " + ", ".join(self.keys)
        # what read() needs of each field, looked up once here rather than once per item
        self._steps = tuple(
            (f.key, f.name, f.read, f.required, f.expected, f.absent, callable(f.absent))
            for f in fields
            if f.read is not None
        )

    def suggestion(self, key: Any) -> str | None:
        """The known key `key` probably meant (another spelling, a typo), or None."""
        if not isinstance(key, str) or key in self.retired:
            return None
        spelt = _spelling(key)
        if spelt in self._spellings:
            return self._spellings[spelt]
        close = difflib.get_close_matches(spelt, self._spellings, n=1, cutoff=SUGGESTION_CUTOFF)
        return self._spellings[close[0]] if close else None

    def expected_instead_of(self, key: Any) -> str:
        """What an unknown key's message expects: the known keys, and the likely one."""
        if key in self.retired:
            return f"{self._one_of}; {self.retired[key]}"
        guess = self.suggestion(key)
        return self._one_of + (f"; did you mean {guess}?" if guess else "")

    def read(self, report: Report, raw: Mapping, context: dict) -> dict[str, Any]:
        """Every field of `raw` validated, by model name; problems go to `report`.
        `context` is what the validators need besides the value (the files of doc/...);
        it also receives each value read, so a later field may depend on an earlier one."""
        for key in raw:
            if key not in self._known:
                report.unknown(str(key), self.expected_instead_of(key))
        values = {}
        for key, name, read, required, expected, absent, computed in self._steps:
            value = raw.get(key)
            if value is not None:
                result = read(report, key, value, context)
            elif required:
                report.missing(key, expected)
                result = None
            else:
                result = absent(report, context) if computed else absent
            values[name] = context[name] = result
        return values

    def markdown_table(self) -> str:
        """The documentation's table of the keys, exactly as the fields declare them."""
        rows = ["| key | required | default | meaning |", "|---|---|---|---|"]
        for field in self.fields:
            required = "yes" if field.required else "no"
            cells = (f"`{field.key}`", required, field.default, field.meaning)
            rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
        return "\n".join(rows) + "\n"
