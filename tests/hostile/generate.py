"""Hostile values generated from the descriptors' schemas, and the site they are tried in.

tests/hostile/cases.py lists the inputs someone thought of; this module *generates*
them (design.md, "Hostile input is found, not listed"): for every key of ITEM_SCHEMA,
ARCHIVE_SCHEMA and CONFIG_SCHEMA (iterated, so that a key added later is covered
without a change here), values at and beyond the edges of each type, written as YAML
text so that YAML's own typing is exercised too (unquoted timestamps, dates, numbers,
booleans, null, tags, anchors and aliases), and faults of a repository's tree and of
its files' metadata (modification times, names, counts, links).

A value is a labelled YAML fragment, ``(value class, text)``: the label says which
class of edge it belongs to (hypothesis.event reports how many of each were tried).

The site (:class:`Project`): two Archives, ``mtc-m16c`` (A) and ``mtc-m16d`` (B), each
with an innocent item (GOOD_A, GOOD_B of cases.py, never touched) and a few *victims*,
valid items of four kinds (data, stamp from doc/, deleted, metadata) that a fault is
injected into, one fault per victim.  Builds run as ``python -m ibistatic build`` in a
subprocess, with a timeout (a hang), an address-space limit (a runaway allocation is a
MemoryError, not the machine's memory) and a guard on forked workers (a runaway ``jobs``
is stopped at :data:`MAX_WORKERS` processes, not forked 65,536 times).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

from tests.hostile.cases import GOOD_A, GOOD_B

ROOT = Path(__file__).resolve().parents[2]
A, B = "mtc-m16c", "mtc-m16d"
SITE_URL = "https://ibi.example.org/"
#: a build longer than this is a hang
BUILD_TIMEOUT = 60
#: the address space a build may take: above what this small site needs (under 1 GiB)
MEMORY_LIMIT = 3 * 1024**3 // 2
#: worker processes one build may start, in all (a build of this site starts a few)
MAX_WORKERS = 48
GUARD_EXIT = 97

# --- YAML text of values ------------------------------------------------------------------


class Raw(str):
    """A YAML fragment written as it is (a plain scalar, a tag, an alias...)."""


def dq(text: str) -> str:
    """`text` as a YAML double-quoted scalar: every character YAML's reader refuses raw
    (controls, NUL, lone surrogates, noncharacters) escaped, so that it reaches the value."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0xD800 <= code <= 0xDFFF or not ch.isprintable():
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def flow(value: Any) -> str:
    """A Python value (or Raw fragments inside one) as one line of flow-style YAML."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, str):
        return dq(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"? {flow(k)} : {flow(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def _float(x: float) -> str:
    if x != x:
        return ".nan"
    if x in (float("inf"), float("-inf")):
        return ".inf" if x > 0 else "-.inf"
    return f"{x:.17e}"  # YAML 1.1 floats need a dot and a signed exponent


def _digits(count: int) -> str:
    return ("9" * count) if count else "0"


# --- edges of each type ---------------------------------------------------------------------

#: strings at the edges of what a later use (a path, a URL, a template, a page) takes
EDGE_STRINGS = (
    "",
    " ",
    "\t",
    "\n",
    "a\nb",
    "\r\n",
    "\x00",
    "a\x00b",
    "\x01",
    "\x1f",
    "\x7f",
    "\x85",
    "\x9f",
    "\ud800",
    "\udfff",
    "a\udce9b",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "\u200b",
    "\u2028",
    "\u202e",
    "\U0010ffff",
    "café",
    "Relatório técnico",
    "e\u0301",
    "😀",
    "עברית",
    "مرحبا",
    "中文文档",
    "{",
    "}",
    "{}",
    "{0}",
    "{1}",
    "{{",
    "}}",
    "{0!r}",
    "{x.y}",
    "{x[0]}",
    "{address}",
    "{path}",
    "{site}",
    "{repository}",
    "{ibip}",
    "%s",
    "%",
    "%%",
    "%(x)s",
    "%d",
    "%00",
    "%zz",
    "%2F",
    "?",
    "#",
    "&",
    "/",
    "\\",
    ".",
    "..",
    "../..",
    "//host",
    "///",
    "/etc/passwd",
    "~",
    "*",
    "-",
    ":",
    "!",
    "@",
    "'",
    '"',
    "`",
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "http://",
    "https://x/{path}",
    "http://[::1",
    "null",
    "true",
    "NaN",
    "1e999",
    "CON",
    "index.html",
    "_ibistatic",
)


def _long(unit: str, count: int) -> str:
    return unit * count


#: long runs: path segments of 250-5,000 characters, and text around the descriptor's
#: size limit (1 MiB): just below, at, just above
LONG_STRINGS = st.one_of(
    st.builds(_long, st.sampled_from(["x", "é", "/", "{", "%", "a/"]), st.integers(250, 5_000)),
    st.builds(_long, st.just("x"), st.sampled_from([255, 256, 4096, 65_536])),
    st.builds(_long, st.just("x"), st.sampled_from([1_000_000, 1_048_000, 1_048_600])),
)
#: any code point, lone surrogates and controls included
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
IBIP_DIGITS = "23456789ABCDEFGHJKLMNPQRSTU"


def _spliced(text: str, edge: str, where: int) -> str:
    where = where % (len(text) + 1)
    return text[:where] + edge + text[where:]


def _grown(text: str, which: int, length: int) -> str:
    """`text` with one of its /-segments (or its only one) grown to `length` characters."""
    parts = text.split("/")
    index = which % len(parts)
    unit = parts[index] or "x"
    parts[index] = (unit * (length // len(unit) + 1))[:length]
    return "/".join(parts)


def _segment(normal: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(256, 5_000).map(lambda n: (normal * (n // len(normal) + 1))[:n]),
        st.sampled_from(["", ".", "..", "x" * 256, "9" * 300, "é", "{}", "%", "a b", "@@"]),
        st.text(st.characters(codec=None), min_size=1, max_size=8),
        st.just(normal),
    )


def _ibis() -> st.SearchStrategy[str]:
    repository = st.builds(
        lambda host, word, year, suffix: f"{host}/{word}/{year}/{suffix}",
        _segment("sid.inpe.br"),
        _segment("mtc-m18@80"),
        _segment("2009"),
        _segment("07.21.13.23"),
    )
    ibip = st.builds(
        lambda prefix, suffix: f"{prefix}/{suffix}",
        _segment("8JMKD3MGP8W") | st.text(st.sampled_from(IBIP_DIGITS), max_size=5_000),
        _segment("35MME4E") | st.text(st.sampled_from(IBIP_DIGITS), max_size=5_000),
    )
    return (repository | ibip).map(dq)


INTS = st.one_of(
    st.sampled_from(
        [2**63, 2**64, 2**31, 65_536, 0, -1, 1, 255, 65_535, 2**31 - 1, 2**32, 2**63 - 1]
        + [-(2**63) - 1]
    ),
    st.integers(),
)
#: other spellings of numbers YAML 1.1 reads (and a few it almost reads)
NUMBER_TOKENS = (
    "190:20:30",
    "0xffffffffffffffffffff",
    "1.0e+999",
    "0x7fffffffffffffff",
    "0o17",
    "017",
    "0b1010",
    "1_000_000",
    "+1",
    "-0",
    "1:0:0:0:0:0:0:0:0",
    "0x",
    "1e5",
    "-1.0e+999",
    "1.0e-999",
    "6.8523015e+5",
    "685.230_15e+03",
    "190:20:30.15",
    ".5",
    "1.",
)
FLOATS = st.one_of(
    st.sampled_from(
        [float("nan"), float("inf"), float("-inf"), -0.0, 1e308, 5e-324, 1.7976931348623157e308]
    ),
    st.floats(),
)
SCALAR_TOKENS = ("~", "true", "false", "yes", "no", "on", "off", "True", "NO", "y", "null")
SCALAR_TOKENS += ("Null", "", "''", '""')
OFFSETS = ("+14:00", "-14:00", "+23:59", "-23:59", "Z", "z", "", "+00:00", "+24:00", "-99:99")
OFFSETS += ("+5",)
MOMENTS = st.one_of(
    st.sampled_from(
        [
            dt.datetime(1, 1, 1),
            dt.datetime(9999, 12, 31, 23, 59, 59),
            dt.datetime(1970, 1, 1),
            dt.datetime(1969, 12, 31, 23, 59, 59),
            dt.datetime(2038, 1, 19, 3, 14, 8),
            dt.datetime(2262, 4, 11, 23, 47, 17),
            dt.datetime(2446, 5, 10, 22, 38, 55),
        ]
    ),
    st.datetimes(),
)


def _timestamp(moment: dt.datetime, separator: str, fraction: str, offset: str) -> str:
    m = moment  # strftime("%Y") writes year 1 as "1", which YAML would not read as a time
    day = f"{m.year:04d}-{m.month:02d}-{m.day:02d}"
    time_ = f"{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
    return day + separator + time_ + (f".{fraction}" if fraction else "") + offset


def _stamps() -> st.SearchStrategy[str]:
    """Timestamps as YAML reads them: any moment, separator, fraction and offset."""
    fractions = st.one_of(
        st.just(""), st.text(st.sampled_from("0123456789"), min_size=1, max_size=40)
    )
    offset = st.one_of(
        st.sampled_from(OFFSETS),
        st.builds(
            lambda sign, h, m: f"{sign}{h:02d}:{m:02d}",
            st.sampled_from("+-"),
            st.integers(0, 99),
            st.integers(0, 99),
        ),
    )
    separators = st.sampled_from(["T", " ", "t", "  "])
    return st.builds(_timestamp, MOMENTS, separators, fractions, offset)


def _impossible() -> st.SearchStrategy[str]:
    """A timestamp's shape with a field beyond its range (day 32, hour 25, month 0)."""
    text = st.builds(
        lambda y, m, d, h, mi, s, off: f"{y:04d}-{m:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{off}",
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 25),
        st.integers(0, 61),
        st.integers(0, 61),
        st.sampled_from(OFFSETS),
    )
    return text | text.map(dq)


DATES = st.one_of(
    st.sampled_from(["0001-01-01", "9999-12-31", "2009-02-29", "2009-02-30", "0000-01-01"]),
    st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"),
)


def _bomb(width: int, leaf: str, as_mapping: bool) -> str:
    """Anchors of anchors: `width` aliases a level, deep enough to expand past 150 MB."""
    depth = 1
    while (width**depth) * (len(leaf) + 1) < 150_000_000:
        depth += 1
    levels = [f"&a0 [{', '.join([leaf] * width)}]"]
    for level in range(1, depth + 1):
        levels.append(f"&a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    if as_mapping:
        return "{" + ", ".join(f"k{n}: {text}" for n, text in enumerate(levels)) + "}"
    return "[" + ", ".join(levels) + "]"


RECURSIVE_ALIASES = (
    "&a [*a]",
    "&a {k: *a}",
    "&a [x, [y, *a]]",
    "&a {? *a : x}",
    "{<<: &a {k: *a}}",
    "[&a x, *a, *a]",
    "*undefined",
    "&a [&a x, *a]",
)
TAG_TOKENS = (
    "!!timestamp '0001-01-01T00:00:00+14:00'",
    "!!binary aGVsbG8=",
    "!!binary '!!!'",
    "!!set {a, b}",
    "!!omap [{a: 1}, {b: 2}]",
    "!!pairs [{a: 1}, {a: 2}]",
    "!!timestamp 2009-07-21",
    "!!timestamp '9999-12-31T23:59:59-14:00'",
    "!!timestamp 'x'",
    "!!float '1e999'",
    "!!float 'x'",
    "!!int '0x'",
    "!!int '" + "9" * 5_000 + "'",
    "!!bool maybe",
    "!!null x",
    "!!str 1",
    "!!str",
    "!!map []",
    "!!seq {}",
    "!foo bar",
    "!<tag:example.org,2000:x> y",
    "!!python/name:os.system",
    "!!python/object/apply:os.system ['true']",
    "!!merge x",
    "!!value x",
)


def _block(lines: list[str], style: str) -> str:
    return style + "".join("\n  " + line for line in lines)


#: the scalars a generated list or mapping is made of
SCALARS = st.one_of(
    st.sampled_from(EDGE_STRINGS),
    TEXT,
    INTS,
    st.floats(),
    st.booleans(),
    st.none(),
    st.sampled_from([Raw(t) for t in (*NUMBER_TOKENS, "2009-07-21", "0001-01-01T00:00:00+14:00")]),
)
HASHABLE_KEYS = st.one_of(
    st.sampled_from([Raw("[a]"), Raw("{a: b}"), Raw("2009-07-21"), Raw(".nan"), Raw("[]")]),
    st.sampled_from(EDGE_STRINGS),
    TEXT,
    INTS,
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
#: 100,000 elements: distinct strings first (what a check of duplicates meets at its worst)
BIG_LISTS = (
    "[" + ", ".join(f"k{n}" for n in range(100_000)) + "]",
    "[" + ", ".join(["0"] * 100_000) + "]",
    "[" + ", ".join(["x"] * 100_000) + "]",
)
#: 10,000 keys: each bad entry is an error line of its own (50,000 took 13 s to report)
BIG_MAPPINGS = (
    "{" + ", ".join(f"k{n}: {n}" for n in range(10_000)) + "}",
    "{" + ", ".join(f"k{n}: [x]" for n in range(10_000)) + "}",
)
DEEP_COLLECTIONS = ("[" * 33 + "]" * 33, "[" * 31 + "]" * 31, "{a: " * 31 + "x" + "}" * 31)
#: the classes that take a second or more to parse: the sweeps try them on the keys whose
#: good value is a list or mapping (the random tests on every key)
BIG_CLASSES = ("list: 100,000 elements", "mapping: 10,000 keys")


def _nested() -> st.SearchStrategy[Any]:
    inner = st.recursive(
        SCALARS,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(HASHABLE_KEYS, inner, max_size=4)
        ),
        max_leaves=8,
    )
    return st.lists(inner, min_size=1, max_size=4) | st.dictionaries(
        HASHABLE_KEYS, inner, min_size=1, max_size=4
    )


def _structure(valid: Any) -> st.SearchStrategy[str]:
    """`valid` (a list or mapping) with one leaf, or one key, replaced by an edge value."""
    replacement = st.one_of(
        st.sampled_from(
            [Raw("0001-01-01T00:00:00+14:00"), Raw(_digits(5000)), Raw("2009-07-21"), Raw("[]")]
        ),
        st.sampled_from(EDGE_STRINGS),
        LONG_STRINGS,
        TEXT,
        INTS,
        st.floats(),
        st.none(),
        st.booleans(),
    )
    paths = st.sampled_from(list(_leaf_paths(valid)))
    return st.builds(_replaced, st.just(valid), paths, replacement, st.booleans()).map(flow)


def _text_of(valid: Any) -> str:
    return valid if isinstance(valid, str) else "x"


#: the classes of values: name -> (whether it fits a key's good value, the YAML texts of
#: its values given that good value).  Ordered sampled values put the nastiest first:
#: hypothesis starts from them.
VALUE_CLASSES: dict[str, tuple[Callable[[Any], bool], Callable[[Any], st.SearchStrategy]]] = {
    "string: edge": (lambda v: True, lambda v: st.sampled_from(EDGE_STRINGS).map(dq)),
    "string: long": (lambda v: True, lambda v: LONG_STRINGS.map(dq)),
    "string: random": (lambda v: True, lambda v: TEXT.map(dq)),
    "string: valid value, an edge spliced in": (
        lambda v: True,
        lambda v: st.builds(
            _spliced, st.just(_text_of(v)), st.sampled_from(EDGE_STRINGS), st.integers(0, 200)
        ).map(dq),
    ),
    "string: valid value, one segment 256-5,000 long": (
        lambda v: True,
        lambda v: st.builds(
            _grown, st.just(_text_of(v)), st.integers(0, 10), st.integers(256, 5_000)
        ).map(dq),
    ),
    "structure: valid value, a leaf or key replaced": (
        lambda v: isinstance(v, (list, dict)) and bool(v),
        _structure,
    ),
    "ibi: strange or huge segment": (lambda v: True, lambda v: _ibis()),
    "int: edge or random": (lambda v: True, lambda v: INTS.map(str)),
    "int: 3,990-10,000 digits": (lambda v: True, lambda v: st.integers(3_990, 10_000).map(_digits)),
    "float: edge or random": (lambda v: True, lambda v: FLOATS.map(_float)),
    "number: another spelling": (lambda v: True, lambda v: st.sampled_from(NUMBER_TOKENS)),
    "boolean or null": (lambda v: True, lambda v: st.sampled_from(SCALAR_TOKENS)),
    "time: plain timestamp": (lambda v: True, lambda v: _stamps()),
    "time: quoted timestamp": (lambda v: True, lambda v: _stamps().map(dq)),
    "time: a field out of range": (lambda v: True, lambda v: _impossible()),
    "date: plain or quoted": (lambda v: True, lambda v: DATES | DATES.map(dq)),
    "alias bomb (>100 MB expanded)": (
        lambda v: True,
        lambda v: st.builds(
            _bomb,
            st.integers(2, 12),
            st.sampled_from(["lol", "x", "'{0}'", "2009-07-21T13:23:45Z", "1"]),
            st.booleans(),
        ),
    ),
    "alias: recursive or undefined": (lambda v: True, lambda v: st.sampled_from(RECURSIVE_ALIASES)),
    "tag": (lambda v: True, lambda v: st.sampled_from(TAG_TOKENS)),
    "block scalar or collection": (
        lambda v: True,
        lambda v: st.builds(
            _block,
            st.lists(
                st.sampled_from(["a", "", "{0}", "- x", "#", "  deeper", "é", "---"]), max_size=4
            ),
            st.sampled_from(["|", ">", "|-", ">+", "|2", ""]),
        ),
    ),
    "list or mapping: empty": (
        lambda v: True,
        lambda v: st.sampled_from(["[]", "{}", "[[]]", "[{}]", "{a: {}}"]),
    ),
    "list or mapping: generated": (lambda v: True, lambda v: _nested().map(flow)),
    "list: 100,000 elements": (lambda v: True, lambda v: st.sampled_from(BIG_LISTS)),
    "mapping: 10,000 keys": (lambda v: True, lambda v: st.sampled_from(BIG_MAPPINGS)),
    "list or mapping: nested 31-33 deep": (
        lambda v: True,
        lambda v: st.sampled_from(DEEP_COLLECTIONS),
    ),
    "mapping: non-string keys": (
        lambda v: True,
        lambda v: st.dictionaries(HASHABLE_KEYS, SCALARS, min_size=1, max_size=3).map(flow),
    ),
}

#: not keys of a schema, but places a value can go: a strange key, the whole document
UNKNOWN_KEY = "<an unknown key>"
WHOLE_DOCUMENT = "<the whole document>"
ODD_KEYS = st.one_of(
    st.sampled_from(["? [a, b]", "? {a: b}", "1", "~", "2009-07-21", ".nan", "true", "'<<'", "<<"]),
    st.sampled_from(EDGE_STRINGS).map(dq),
    st.integers(250, 5_000).map(lambda n: dq("k" * n)),
)
ODD_DOCUMENTS = (
    "&a {state: *a}",
    "",
    "---",
    "--- \n...\n--- \n",
    "state: Original\n---\nstate: Copy\n",
    "[state, Original]",
    "Original",
    "%YAML 1.3\n---\nstate: Original\n",
    "%TAG ! tag:x,2000:\n---\nstate: !x Original\n",
    "\ufeffstate: Original\n",
    "<<: {state: Original}\n",
    "? state\n: Original\n",
    "!!map {state: Original}",
    "!!set {state}",
)


def classes_for(valid: Any) -> list[str]:
    """The value classes that apply to a key whose good value is `valid`."""
    return [name for name, (fits, _) in VALUE_CLASSES.items() if fits(valid)]


def places(schema, examples: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (key, value class) of `schema`, keys read from its fields at run time, and the
    two places that are not keys (an odd key, the whole document); the BIG_CLASSES only
    for keys whose good value is a list or mapping."""
    pairs = [
        (f.key, name)
        for f in schema.fields
        for name in classes_for(examples.get(f.key, "x"))
        if name not in BIG_CLASSES or isinstance(examples.get(f.key), (list, dict))
    ]
    return pairs + [(UNKNOWN_KEY, "key: odd"), (WHOLE_DOCUMENT, "document: odd")]


def fault_of(key: str, name: str, examples: dict[str, Any]) -> st.SearchStrategy:
    """(key, value class, YAML text): a value of class `name` for `key`."""
    if key == UNKNOWN_KEY:
        text = ODD_KEYS
    elif key == WHOLE_DOCUMENT:
        text = st.sampled_from(ODD_DOCUMENTS)
    else:
        text = VALUE_CLASSES[name][1](examples.get(key, "x"))
    return text.map(lambda value: (key, name, value))


def key_faults(schema, examples: dict[str, Any]) -> st.SearchStrategy[tuple[str, str, str]]:
    """A key of `schema` (or an odd key, or the whole document), then a value class
    that fits it, then a value of that class: every class equally likely."""
    keys = [f.key for f in schema.fields] + [UNKNOWN_KEY, WHOLE_DOCUMENT]

    def for_key(key: str):
        if key in (UNKNOWN_KEY, WHOLE_DOCUMENT):
            return fault_of(key, "key: odd" if key == UNKNOWN_KEY else "document: odd", examples)
        names = st.sampled_from(classes_for(examples.get(key, "x")))
        return names.flatmap(lambda name: fault_of(key, name, examples))

    return st.sampled_from(keys).flatmap(for_key)


def _leaf_paths(value: Any, path: tuple = ()):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaf_paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _leaf_paths(inner, (*path, index))
    else:
        yield path


def _replaced(value: Any, path: tuple, new: Any, as_key: bool) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = {}
        for key, inner in value.items():
            if key == head and as_key and not rest and not isinstance(new, (list, dict)):
                copy[new] = inner
            elif key == head:
                copy[key] = _replaced(inner, rest, new, as_key)
            else:
                copy[key] = inner
        return copy
    copy = list(value)
    copy[head] = _replaced(value[head], rest, new, as_key)
    return copy


# --- the site: two Archives, innocents and victims --------------------------------------------


@dataclass(repr=False)
class Repository:
    archive: str
    path: str  # the repository name, as its four folders
    ibip: str | None
    kind: str  # innocent, data, stampless, deleted, metadata
    descriptor: dict[str, Any]  # key -> Python value (flow() writes it), in order
    files: dict[str, str] = field(default_factory=dict)  # doc/ file -> text

    @property
    def keys(self) -> tuple[str, ...]:
        """What names the item in the site's paths and the index's keys."""
        return (self.path, self.ibip) if self.ibip else (self.path,)

    def folder(self, project: Path) -> Path:
        return project / self.archive / self.path

    def error_prefix(self) -> str:
        return f"error: {self.archive}: {self.path}/"

    def __repr__(self) -> str:
        return f"<{self.kind} {self.archive}: {self.path}>"

    def __hash__(self) -> int:
        return hash((self.archive, self.path))


#: victims per Archive
VICTIMS_PER_ARCHIVE = 12
#: fixed modification times, so the pristine site is the same on every run
FILE_TIME = 1_300_000_000  # 2011-03-13
DESCRIPTOR_TIME = 1_300_000_500


def _ibip(number: int) -> str:
    return f"LK47B6W/36{IBIP_DIGITS[number // 27]}{IBIP_DIGITS[number % 27]}FKH"


def _victim(number: int, archive: str) -> Repository:
    kind = ("data", "stampless", "deleted", "metadata")[number % 4]
    if archive == A:
        path = f"sid.inpe.br/mtc-m21@80/2011/01.01.00.{number:02d}"
    else:
        path = f"sid.inpe.br/mtc-m22@80/2012/02.02.00.{number:02d}"
    unique = number + (VICTIMS_PER_ARCHIVE if archive == B else 0)
    ibip = _ibip(unique) if kind in ("data", "metadata", "deleted") else None
    title = f"Victim report {number}"
    descriptor: dict[str, Any] = {"state": "Original"}
    files = {"report.txt": f"The report of victim {number}.\n", "annex/data.csv": "a,b\n1,2\n"}
    if kind == "data":
        descriptor.update(
            {
                "ibip": ibip,
                "content-type": "Data",
                "timestamp": Raw("2011-01-01T00:00:00Z"),
                "target": "report.txt",
                "language": "en",
                "dublin-core": {"title": title, "creator": ["Ana Souza", "Bo Li"], "date": "2011"},
                "transferable": True,
            }
        )
    elif kind == "stampless":
        descriptor.update({"target": "report.txt", "language": "pt-BR"})
    elif kind == "deleted":
        descriptor.update(
            {
                "state": "Deleted",
                "ibip": ibip,
                "timestamp": Raw("2012-05-06T07:08:09Z"),
                "reason": "Withdrawn by the author.",
                "dublin-core": {"title": title},
            }
        )
    else:
        descriptor.update(
            {
                "ibip": ibip,
                "content-type": "Metadata",
                "timestamp": Raw("2011-02-03T04:05:06Z"),
                "target": "metadata.html",
                "formats": {"oai_dc": "oai_dc.xml"},
            }
        )
        files = {
            "metadata.html": f"<p>{title}</p>\n",
            "oai_dc.xml": f"<oai_dc:dc><dc:title>{title}</dc:title></oai_dc:dc>\n",
        }
    return Repository(archive, path, ibip, kind, descriptor, files)


INNOCENTS = (
    Repository(
        A,
        GOOD_A,
        "8JMKD3MGP8W/35MME4E",
        "innocent",
        {
            "state": "Original",
            "ibip": "8JMKD3MGP8W/35MME4E",
            "timestamp": Raw("2009-07-21T13:23:45Z"),
            "target": "report.txt",
            "language": "en",
            "translations": {"pt": GOOD_B},
            "dublin-core": {"title": "An innocent report", "creator": ["Ana Souza"]},
            "transferable": False,
        },
        {"report.txt": "The innocent report.\n", "figures/fig 1.png": "not really a PNG\n"},
    ),
    Repository(
        B,
        GOOD_B,
        None,
        "innocent",
        {
            "state": "Original",
            "timestamp": Raw("2010-01-02T03:04:05Z"),
            "language": "pt",
            "dublin-core": {"title": "Um relatório inocente"},
            "transferable": False,
        },
        {"relatório.txt": "O relatório inocente.\n"},
    ),
)
VICTIMS = tuple(_victim(n, A) for n in range(VICTIMS_PER_ARCHIVE)) + tuple(
    _victim(n, B) for n in range(VICTIMS_PER_ARCHIVE)
)
#: Archives that a fault of archive.yaml is injected into, one item each (A and B too)
ARCHIVE_VICTIMS = tuple(f"mtc-v{n:02d}" for n in range(1, 17))


def _archive(name: str, number: int) -> dict[str, Any]:
    return {
        "address": f"{name}.sid.inpe.br",
        "service-ibi": f"sid.inpe.br/{name}@80/2013/03.03.00.{number:02d}",  # its item
        "service-ibip": f"8JMKD3MGP3W/3{IBIP_DIGITS[number]}MKGS",
        "platform-software-ibi": "dpi.inpe.br/banon/1998/08.02.08.56",
        "file-url": "http://{address}/col/{repository}/doc/{path}",
        "file-list-url": "{site}files/{repository}/",
        "relations": ["", ".lastedition", ".metadata(oai_dc)", ".translation(pt)"],
        "pair-list-charset": "utf-8",
        "deposit-host": f"{name}.sid.inpe.br",
        "deposit-port": 19050,
    }


ARCHIVES: dict[str, dict[str, Any]] = {
    A: {
        "address": "mtc-m16c.sid.inpe.br",
        "service-ibi": GOOD_A,  # an Archive holds its service (an Original, not transferable)
        "file-url": "http://{address}/col/{repository}/doc/{path}",
        "file-list-url": "{site}files/{repository}/",
        "pair-list-charset": "utf-8",
    },
    B: {
        "address": "mtc-m16d.sid.inpe.br",
        "service-ibi": GOOD_B,
    },
    **{name: _archive(name, n) for n, name in enumerate(ARCHIVE_VICTIMS)},
}
#: the item of each victim Archive
ARCHIVE_ITEMS = tuple(
    Repository(
        name,
        f"sid.inpe.br/{name}@80/2013/03.03.00.{n:02d}",
        _ibip(2 * VICTIMS_PER_ARCHIVE + n),
        "data",
        {
            "state": "Original",
            "ibip": _ibip(2 * VICTIMS_PER_ARCHIVE + n),
            "timestamp": Raw("2013-03-03T00:00:00Z"),
            "language": "pt",
            "dublin-core": {"title": f"Relatório {n}"},
            "transferable": False,
        },
        {"relatório técnico.pdf": "not really a PDF\n"},
    )
    for n, name in enumerate(ARCHIVE_VICTIMS)
)
REPOSITORIES = INNOCENTS + VICTIMS + ARCHIVE_ITEMS

CONFIG: dict[str, Any] = {
    "site-url": SITE_URL,
    "archives": [A, B, *ARCHIVE_VICTIMS],
    "output": "site",
}

#: a good value per key, mutated by the generators; a key missing here (one added to a
#: schema later) is still generated, from the generic classes and the value "x"
ITEM_EXAMPLES: dict[str, Any] = {
    "state": "Original",
    "ibip": "8JMKD3MGP8W/35MME4E",
    "content-type": "Data",
    "timestamp": "2011-01-01T00:00:00Z",
    "target": "report.txt",
    "language": "pt-BR",
    "translations": {"pt": "sid.inpe.br/mtc-m18@80/2009/08.25.19.43", "en": "LK47B6W/362SFKH"},
    "next-edition": "sid.inpe.br/mtc-m18@80/2010/07.21.13.23",
    "metadata": "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
    "formats": {"oai_dc": "annex/data.csv", "mods": "report.txt"},
    "dublin-core": {"title": "A title", "creator": ["Ana", "Bo"], "date": "2009"},
    "transferable": "false",
    "reason": "Withdrawn by the author.",
}
ARCHIVE_EXAMPLES: dict[str, Any] = {
    "address": "mtc-m16c.sid.inpe.br:8080",
    "service-ibi": "sid.inpe.br/mtc-m18@80/2008/03.17.15.17",
    "service-ibip": "8JMKD3MGP8W/33SMKGS",
    "platform-software-ibi": "dpi.inpe.br/banon/1998/08.02.08.56",
    "file-url": "http://{address}/col/{repository}/doc/{path}",
    "file-list-url": "{site}files/{repository}/",
    "relations": ["", ".lastedition", ".metadata(oai_dc)", ".translation(pt)"],
    "pair-list-charset": "iso-8859-1",
    "deposit-host": "mtc-m18.sid.inpe.br",
    "deposit-ip": "150.163.34.248",
    "deposit-port": "19050",
    "deposit-granularity": "0.01",
}
CONFIG_EXAMPLES: dict[str, Any] = {
    "site-url": "https://ibi.example.org/sub/",
    "archives": [A, B],
    "output": "site",
    "modifiers": ["", "!", ":(oai_dc)"],
    "cache": "cache-folder",
    "hosts": ["netlify", "nginx"],
    "institution": "Instituto Nacional de Pesquisas Espaciais",
    "institution-url": "https://www.gov.br/inpe/",
    "contact": "biblioteca@inpe.br",
    "logo": "assets/logo.svg",
    "persistence-policy": "Links are kept forever.",
    "persistence-policy-url": "https://ibi.example.org/policy",
    "templates": "templates",
    "language": "pt",
}


def descriptor_text(values_: dict[str, Any], fault: tuple[str, str, str] | None = None) -> str:
    """A descriptor's YAML: `values_` with `fault` (key, class, text) put in."""
    if fault is not None and fault[0] == WHOLE_DOCUMENT:
        return fault[2]
    lines = []
    replaced = False
    for key, value in values_.items():
        if fault is not None and key == fault[0]:
            lines.append(f"{key}: {fault[2]}")
            replaced = True
        else:
            lines.append(f"{key}: {flow(value)}")
    if fault is not None and not replaced:
        if fault[0] == UNKNOWN_KEY:
            text = fault[2]
            lines.append(f"{text}: x" if not text.startswith("?") else f"{text}\n: x")
        else:
            lines.append(f"{fault[0]}: {fault[2]}")
    return "\n".join(lines) + "\n"


# --- faults of a repository's tree and of its files' metadata -------------------------------

#: modification times (seconds) at the edges: ns overflow in 2262, year 10000, before 1970
MTIMES = st.one_of(
    st.sampled_from(
        [
            2**40,
            15_032_385_535,  # ext4's clamp of 2**40: year 2446
            2**34,
            2**33,
            2**32,
            2**31,
            2**31 - 1,
            9_223_372_036,
            9_223_372_037,
            253_402_300_799,
            253_402_300_800,
            0,
            -1,
            -(2**31),
            -62_135_596_800,
            -62_135_596_801,
        ]
    ),
    st.integers(-(2**40), 2**40),
)
ODD_NAMES = (
    "line\nbreak.txt",
    "back\\slash.txt",
    "per%cent.txt",
    "%2e%2e.txt",
    "que?ry.txt",
    "hash#tag.txt",
    "{}.txt",
    "{0}.txt",
    "{path}.txt",
    "tab\t.txt",
    " leading.txt",
    "trailing .txt",
    "-dash.txt",
    ".hidden",
    "item.yaml",
    "index.html",
    "a:b!(oai_dc).txt",
    "é.txt",
    "e\u0301.txt",
    "😀.txt",
    "\u202etxt.exe",
    "x" * 255,
    "é" * 127 + "x",
    "x" * 251 + ".txt",
)


@dataclass(frozen=True)
class TreeFault:
    label: str
    how: Callable[[Path], Any]  # how(folder of the repository) changes its tree
    shown: str

    def __repr__(self) -> str:
        return f"TreeFault({self.shown})"


def _doc_files(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "doc").rglob("*") if p.is_file() or p.is_symlink())


def _set_mtime(seconds: int, which: str):
    def how(folder: Path):
        if which == "item.yaml":
            paths = [folder / "item.yaml"]
        elif which == "doc/":
            paths = [folder / "doc"]
        else:
            paths = _doc_files(folder)[:1] if which == "one file" else _doc_files(folder)
        for path in paths:
            os.utime(path, ns=(seconds * 10**9, seconds * 10**9), follow_symlinks=False)

    return how


def _add_file(name: str | bytes, rename_target: bool):
    def how(folder: Path):
        doc = os.fsencode(folder / "doc")
        raw = name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")
        with open(os.path.join(doc, raw), "wb") as handle:
            handle.write(b"An odd name.\n")
        if rename_target:
            descriptor = folder / "item.yaml"
            text = descriptor.read_text(encoding="utf-8")
            target = re.search(r'^target: "([^"]*)"$', text, re.MULTILINE)
            if target is not None:
                os.unlink(os.path.join(doc, target.group(1).encode()))
                shown = dq(os.fsdecode(raw))
                descriptor.write_text(
                    text.replace(target.group(0), f"target: {shown}"), encoding="utf-8"
                )

    return how


def _many_files(count: int):
    def how(folder: Path):
        doc = folder / "doc"
        for number in range(count):
            (doc / f"f{number:05d}.txt").write_bytes(b"x")

    return how


def _no_files(folder: Path):
    shutil.rmtree(folder / "doc")
    (folder / "doc").mkdir()


def _no_doc(folder: Path):
    shutil.rmtree(folder / "doc")


def _link(target: str, name: str = "link.txt"):
    def how(folder: Path):
        os.symlink(target, folder / "doc" / name)

    return how


def _replace_by_link(relative: str, target: str):
    def how(folder: Path):
        path = folder / relative
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        os.symlink(target, path)

    return how


def _deep(depth: int):
    def how(folder: Path):
        path = folder / "doc"
        for _ in range(depth):
            path = path / "d"
        path.mkdir(parents=True)
        (path / "deep.txt").write_text("deep\n")

    return how


def _long_path(folder: Path):
    """doc/ holding a file whose path is over PATH_MAX (4,096 bytes): made folder by
    folder, each opened relative to the one before."""
    fd = os.open(folder / "doc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(20):  # 20 x 251 bytes
            os.mkdir("p" * 250, dir_fd=fd)
            inner = os.open("p" * 250, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        file = os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(file, b"far down\n")
        os.close(file)
    finally:
        os.close(fd)


def _fifo(folder: Path):
    os.mkfifo(folder / "doc" / "pipe.txt")


def _empty_descriptor(folder: Path):
    (folder / "item.yaml").write_bytes(b"")


def tree_faults() -> st.SearchStrategy[TreeFault]:
    mtime = st.builds(
        lambda seconds, which: TreeFault(
            "tree: modification time", _set_mtime(seconds, which), f"mtime {seconds} on {which}"
        ),
        MTIMES,
        st.sampled_from(["one file", "every file", "item.yaml", "doc/"]),
    )
    names = st.one_of(
        st.sampled_from(ODD_NAMES),
        st.sampled_from([b"caf\xe9.txt", b"\xff\xfe.txt", b"a\x80b", b"\xed\xa0\x80.txt"]),
        st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=30),
    )
    name = st.builds(
        lambda n, rename: TreeFault(
            "tree: odd file name", _add_file(n, rename), f"file {n!r}, target renamed: {rename}"
        ),
        names,
        st.booleans(),
    )
    counts = st.sampled_from(
        [
            TreeFault("tree: file count", _no_files, "an empty doc/"),
            TreeFault("tree: file count", _no_doc, "no doc/"),
            TreeFault("tree: file count", _many_files(10_000), "10,000 files in doc/"),
            TreeFault("tree: file count", _many_files(300), "300 files in doc/"),
        ]
    )
    links = st.sampled_from(
        [
            TreeFault("tree: link", _link("/etc/passwd"), "doc/link.txt -> /etc/passwd"),
            TreeFault("tree: link", _link("../item.yaml"), "doc/link.txt -> ../item.yaml"),
            TreeFault("tree: link", _link("missing"), "doc/link.txt -> missing (dangling)"),
            TreeFault("tree: link", _link(".", "loop"), "doc/loop -> . (a loop)"),
            TreeFault("tree: link", _link("..", "up"), "doc/up -> .. (the repository)"),
            TreeFault("tree: link", _link("/", "root"), "doc/root -> /"),
            TreeFault("tree: link", _link("self.txt", "self.txt"), "doc/self.txt -> itself"),
            TreeFault("tree: link", _replace_by_link("doc", "/usr/share"), "doc -> /usr/share"),
            TreeFault(
                "tree: link",
                _replace_by_link("item.yaml", "/etc/hostname"),
                "item.yaml -> /etc/hostname",
            ),
            TreeFault(
                "tree: link", _replace_by_link("item.yaml", "item.yaml"), "item.yaml -> itself"
            ),
            TreeFault(
                "tree: link",
                _replace_by_link("doc/report.txt", "/dev/zero"),
                "doc/report.txt -> /dev/zero",
            ),
        ]
    )
    others = st.sampled_from(
        [
            TreeFault("tree: other", _deep(100), "doc/ 100 folders deep"),
            TreeFault("tree: other", _long_path, "a path over PATH_MAX"),
            TreeFault("tree: other", _fifo, "a FIFO in doc/"),
            TreeFault("tree: other", _empty_descriptor, "an empty item.yaml"),
        ]
    )
    return st.one_of(mtime, name, counts, links, others)


# --- the project: written, built, compared ---------------------------------------------------


def write_project(project: Path, repositories=REPOSITORIES) -> None:
    project.mkdir(parents=True, exist_ok=True)
    for name, values_ in ARCHIVES.items():
        (project / name).mkdir(exist_ok=True)
        (project / name / "archive.yaml").write_text(descriptor_text(values_), encoding="utf-8")
    for repository in repositories:
        folder = repository.folder(project)
        (folder / "doc").mkdir(parents=True)
        (folder / "item.yaml").write_text(descriptor_text(repository.descriptor), encoding="utf-8")
        for name, text in repository.files.items():
            path = folder / "doc" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            os.utime(path, (FILE_TIME, FILE_TIME))
        os.utime(folder / "item.yaml", (DESCRIPTOR_TIME, DESCRIPTOR_TIME))
    (project / "ibistatic.yaml").write_text(descriptor_text(CONFIG), encoding="utf-8")


def sandbox_available() -> bool:
    """Whether a build can run with / read-only (a mount namespace: root, Linux)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", SANDBOX + " true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


#: /tmp (where the project lies) stays writable, everything else is read-only
SANDBOX = 'mount --bind /tmp /tmp && mount -o remount,bind,ro / && exec "$@"'

#: runs ``python -m ibistatic`` with a guard on the number of worker processes started
_GUARDED = f"""
import multiprocessing.process, os, runpy, sys
_start = multiprocessing.process.BaseProcess.start
_started = [0]
def start(self):
    _started[0] += 1
    if _started[0] > {MAX_WORKERS}:
        os.write(2, b"hostile-test guard: over {MAX_WORKERS} worker processes started\\n")
        os._exit({GUARD_EXIT})
    return _start(self)
multiprocessing.process.BaseProcess.start = start
sys.argv = ["ibistatic", *sys.argv[1:]]
runpy.run_module("ibistatic", run_name="__main__", alter_sys=True)
"""


@dataclass
class Run:
    code: int | None  # None: it hung (killed after the timeout)
    out: str
    err: str
    seconds: float

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()

    @property
    def errors(self) -> list[str]:
        return [line for line in self.lines if line.startswith("error:")]

    def __str__(self) -> str:
        """The exit, the error lines (a few), then the last lines of stderr."""
        errors = [_short(line, 400) for line in self.errors[:8]]
        tail = [_short(line, 400) for line in self.lines[-20:] if not line.startswith("error:")]
        shown = "\n".join([*errors, *tail])
        return f"exit {self.code} after {self.seconds:.1f} s; stderr:\n{shown}"


def _short(text: str, length: int) -> str:
    return text if len(text) <= length else f"{text[:length]}... ({len(text):,} characters)"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def ibistatic(
    project: Path, *args: str, timeout: float = BUILD_TIMEOUT, sandbox: bool = False
) -> Run:
    """`python -m ibistatic ARGS` in `project` (default: build); a hang is killed whole."""
    command = [sys.executable, "-c", _GUARDED, *(args or ("build",))]
    if sandbox:
        command = ["unshare", "-m", "--propagation", "private", "sh", "-c", SANDBOX, "sh", *command]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1", "COLUMNS": "200"}
    env.pop("PYTHONHASHSEED", None)
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_limits,
    )
    try:
        out, err = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)  # faulthandler prints where each thread is
        try:
            out, err = process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
        os.killpg(process.pid, signal.SIGKILL)  # the build and its forked workers
        more_out, more_err = process.communicate()
        out, err = out + more_out, err + more_err
        code = None
    finally:
        _reap_group(process.pid)
    return Run(
        code,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        time.monotonic() - start,
    )


def _reap_group(group: int) -> None:
    """Workers a build left behind (it should leave none): ended, by their group."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def snapshot(project: Path, output: str = "site") -> dict[str, bytes]:
    """Every file of the published site (through its link), by path; links as 'link:'."""
    site = project / output
    files: dict[str, bytes] = {}
    if not site.exists():
        return files
    for folder, directories, names in os.walk(site, followlinks=False):
        for name in [*names, *[d for d in directories if os.path.islink(os.path.join(folder, d))]]:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, site)
            if os.path.islink(path):
                files[relative] = b"link:" + os.fsencode(os.readlink(path))
            else:
                with open(path, "rb") as handle:
                    files[relative] = handle.read()
    return files


def _owner_pattern(keys: tuple[str, ...]) -> re.Pattern:
    names = "|".join(re.escape(key) for key in keys)
    return re.compile(rf"(?:^|/)(?:{names})(?:$|[/!:])", re.IGNORECASE)


#: files of the site that every item's publication shares (they change with the set of
#: items): compared through their records, not whole
INDEX_RECORDS = re.compile(r"^index/(?:shards|answers)/[^/]+\.json$")


def publication(site: dict[str, bytes], repository: Repository) -> dict[str, Any]:
    """What `repository` has published: its own pages (every path naming its repository
    name or IBIp) and its records in the index (the entries under those keys)."""
    pattern = _owner_pattern(repository.keys)
    own: dict[str, Any] = {path: data for path, data in site.items() if pattern.search(path)}
    keys = {key.lower() for key in repository.keys}
    for path, data in site.items():
        if INDEX_RECORDS.match(path):
            try:
                records = json.loads(data)
            except ValueError:
                own[path] = data  # a broken index file: shown whole
                continue
            for key, record in records.items():
                if key.lower() in keys or _names(record, keys):
                    own[f"{path}#{key}"] = json.dumps(record, sort_keys=True)
    return own


def _names(record: Any, keys: set[str]) -> bool:
    """Whether an index record is about one of `keys` (its repository or IBIp)."""
    entries = record if isinstance(record, list) else [record]
    return any(
        isinstance(entry, dict) and str(entry.get("repository", "")).lower() in keys
        for entry in entries
    )


def published(site: dict[str, bytes], repository: Repository) -> bool:
    return f"{repository.path}/index.html" in site


def difference(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The paths that differ, shortly, for a failure message."""
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    changed = sorted(path for path in set(before) & set(after) if before[path] != after[path])
    parts = []
    for words, paths in (("gone", gone), ("new", new), ("changed", changed)):
        if paths:
            parts.append(f"{words}: {paths[:6]}{' ...' if len(paths) > 6 else ''}")
    return "; ".join(parts) or "nothing"


def scratch(tmp_path_factory) -> Path:
    """A folder for the builds: in memory (/dev/shm) where there is one, as copying and
    building there is twice as fast; else pytest's temporary folder."""
    import tempfile

    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return Path(tempfile.mkdtemp(prefix="ibistatic-hostile-", dir="/dev/shm"))
    return tmp_path_factory.mktemp("hostile-properties")


def restore(pristine: Path, work: Path) -> None:
    """`work` made again a copy of `pristine` (the same absolute path as when it was
    built, so that its build state, which names its folders, is its own)."""
    if work.exists() or work.is_symlink():
        _remove(work)
    shutil.copytree(pristine, work, symlinks=True)


def _remove(path: Path) -> None:
    def writable(function, name, info):  # a test may have left a folder unwritable
        os.chmod(os.path.dirname(name), 0o755)
        function(name)

    shutil.rmtree(path, onerror=writable)
