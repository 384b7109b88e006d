"""The hostile and careless inputs of tests/test_hostile.py: one named case each.

Every build case runs in a site of two Archives: ``mtc-m16c`` (A) holds the innocent item
GOOD_A and the item BAD, ``mtc-m16d`` (B) holds GOOD_B.  A case changes one thing (BAD's
``item.yaml``, A's ``archive.yaml``, or the tree) and states the exit code of
``ibistatic build`` and a line, or the stable part of a line, that stderr must hold.
Whatever the case, GOOD_B is published, and GOOD_A too unless the case breaks A's
``archive.yaml`` (``archive_out``).  Configuration and command-line cases run no build
of a broken tree: they state the exit code and the message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

import yaml

from ibistatic.errors import printable

GOOD_A = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
BAD = "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"
GOOD_B = "sid.inpe.br/mtc-m19@80/2010/01.02.03.04"
ARCHIVE_A = "address: mtc-m16c.sid.inpe.br\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n"
ARCHIVE_B = "address: mtc-m16d.sid.inpe.br\nservice-ibi: sid.inpe.br/mtc-m19@80/2009/08.21.17.02\n"
GOOD_ITEM = "state: Original\ntimestamp: 2009-07-21T13:23:45Z\n"
ITEM = f"error: mtc-m16c: {BAD}/item.yaml: "
ARCHIVE = "error: mtc-m16c: archive.yaml: "


@dataclass(frozen=True)
class Case:
    name: str
    exit: int
    message: str  # a line of stderr starts with it (after {bad}/{root} are filled in)
    item: bytes | None = None  # BAD's item.yaml
    archive: bytes | None = None  # A's archive.yaml
    tree: Callable | None = None  # tree(root_a, bad_directory, tmp) changes the tree
    archive_out: bool = False  # A is left out whole
    config: bytes | None = None  # an ibistatic.yaml instead of the good one
    argv: tuple[str, ...] | None = None  # a command line instead of build
    absent: tuple[str, ...] = field(
        default=()
    )  # text stderr must not hold (content of files out of the root)


def _b(text: str) -> bytes:
    return text.encode("utf-8")


# --- item.yaml: one bad value per key (generated variants, each a named input) -------------

BAD_VALUES: dict[str, list[tuple[str, str, str]]] = {
    # key: [(case suffix, YAML value, what the message says was found)]
    "state": [
        ("misspelt", "Orignal", "'Orignal'"),
        ("lower-case", "original", "'original'"),
        ("number", "1", "1 (a number)"),
        ("list", "[Original]", "a list"),
        ("mapping", "{a: b}", "a mapping"),
        ("boolean", "true", "true (a boolean)"),
        ("empty-string", "''", "''"),
        ("date", "2009-07-21", "'2009-07-21' (a date"),
    ],
    "ibip": [
        ("words", "not an ibip", "'not an ibip'"),
        ("number", "123", "123 (a number)"),
        ("list", "[x]", "a list"),
        (
            "repository-form",
            "sid.inpe.br/mtc-m18/2009/07.21.13.23",
            "'sid.inpe.br/mtc-m18/2009/07.21.13.23'",
        ),
        ("space", "'8JMKD3MGP8W /35MME4E'", "'8JMKD3MGP8W /35MME4E'"),
        ("boolean", "false", "false (a boolean)"),
        (
            "segment-over-a-file-name",
            "8JMKD3MGP8W/" + "3" * 5000,
            f"'{'3' * 20}'... (5,000 characters between '/'); expected an IBI (repository name "
            "or IBIp) with at most 255 bytes between '/' and 160 after the last (each part names "
            "a file of the site)",
        ),
    ],
    "content-type": [
        ("lower-case", "data", "'data'"),
        ("number", "5", "5 (a number)"),
        ("list", "[Data]", "a list"),
        ("other", "Software", "'Software'"),
    ],
    "timestamp": [
        ("quoted-impossible-day", "'2009-02-30T00:00:00Z'", "'2009-02-30T00:00:00Z'"),
        ("date-only", "2009-07-21", "'2009-07-21' (a date without a time)"),
        ("no-zone", "2009-07-21 13:23:45", "'2009-07-21 13:23:45' (a time without a time zone)"),
        ("words", "yesterday", "'yesterday'"),
        ("number", "12345", "12345 (a number)"),
        ("month-13", "'2009-13-01T00:00:00Z'", "'2009-13-01T00:00:00Z'"),
        ("hour-25", "'2009-07-21T25:00:00Z'", "'2009-07-21T25:00:00Z'"),
        ("exponent-without-dot", "1e999", "'1e999'"),
        ("list", "[2009]", "a list"),
        ("no-z", "'2009-07-21T13:23:45'", "'2009-07-21T13:23:45'"),
        # an offset moving the time out of datetime's years (UTC conversion overflows)
        (
            "offset-before-year-1",
            "0001-01-01T00:00:00+01:00",
            "'0001-01-01 00:00:00+01:00' (a time); expected a time between years 1 and 9999",
        ),
        (
            "offset-after-year-9999",
            "9999-12-31T23:30:00-01:00",
            "'9999-12-31 23:30:00-01:00' (a time); expected a time between years 1 and 9999",
        ),
    ],
    "target": [
        ("missing-file", "missing.pdf", "'missing.pdf', which is not in doc/"),
        ("number", "5", "5 (a number)"),
        ("list", "[a]", "a list"),
        (
            "control-character",
            '"report.txt?a\\x01b"',
            "'report.txt?a\\x01b', which holds a control character",
        ),
        (
            "newline-in-query",
            '"report.txt?a\\nLocation: x"',
            "'report.txt?a\\nLocation: x', which holds a control character",
        ),
        ("empty", "''", "''"),
        ("parent", "../item.yaml", "'../item.yaml', which is not in doc/"),
        ("absolute", "/etc/passwd", "'/etc/passwd', which is not in doc/"),
    ],
    "language": [
        ("word", "english", "'english'"),
        ("underscore", "pt_BR", "'pt_BR'"),
        ("number", "5", "5 (a number)"),
        ("list", "[pt]", "a list"),
        ("lower-country", "pt-br", "'pt-br'"),
        ("unknown", "xx", "'xx'"),
    ],
    "translations": [
        ("list", "[a]", "a list"),
        ("number", "5", "5 (a number)"),
        ("text", "pt", "'pt'"),
    ],
    "next-edition": [
        ("number", "5", "5 (a number)"),
        ("words", "not an ibi", "'not an ibi'"),
        ("list", "[x]", "a list"),
        ("itself", BAD, repr(BAD)),
        (
            "segment-over-a-file-name",
            "sid.inpe.br/" + "m" * 256 + "/2009/07.21.13.23",
            f"'{'m' * 20}'... (256 characters between '/')",
        ),
    ],
    "metadata": [
        ("number", "5", "5 (a number)"),
        ("words", "not an ibi", "'not an ibi'"),
        ("mapping", "{a: 1}", "a mapping"),
        ("itself", BAD, repr(BAD)),
    ],
    "formats": [
        ("list", "[x]", "a list"),
        ("number", "5", "5 (a number)"),
        ("text", "oai_dc", "'oai_dc'"),
    ],
    "dublin-core": [
        ("number", "5", "5 (a number)"),
        ("list", "[x]", "a list"),
        ("text", "title", "'title'"),
    ],
    "transferable": [
        ("string", "'true'", "'true'; expected true or false"),
        ("number", "1", "1 (a number)"),
        ("words", "maybe", "'maybe'"),
        ("list", "[true]", "a list"),
    ],
}
#: nested bad values, keyed by the sub-key the message names
NESTED_VALUES = [
    (
        "translations-bad-language",
        "translations: {english: sid.inpe.br/mtc-m18@80/2009/08.25.19.43}",
        "translations.english",
        "'english'",
    ),
    ("translations-bad-ibi", "translations: {pt: not an ibi}", "translations.pt", "'not an ibi'"),
    ("translations-number-ibi", "translations: {pt: 5}", "translations.pt", "5 (a number)"),
    (
        "formats-missing-file",
        "formats: {oai_dc: missing.xml}",
        "formats.oai_dc",
        "'missing.xml', which is not in doc/",
    ),
    ("formats-number-file", "formats: {oai_dc: 5}", "formats.oai_dc", "5 (a number)"),
    (
        "formats-control",
        'formats: {oai_dc: "report.txt?\\r\\n"}',
        "formats.oai_dc",
        "'report.txt?\\r\\n', which holds a control character",
    ),
    ("dublin-core-mapping", "dublin-core: {title: {a: b}}", "dublin-core.title", "a mapping"),
    ("dublin-core-boolean", "dublin-core: {title: true}", "dublin-core.title", "true (a boolean)"),
    ("dublin-core-nested-list", "dublin-core: {creator: [[a]]}", "dublin-core.creator", "a list"),
    ("dublin-core-null", "dublin-core: {title: [~]}", "dublin-core.title", "nothing"),
]


def _value_cases():
    for key, values in BAD_VALUES.items():
        for suffix, value, found in values:
            text = f"state: Original\n{key}: {value}\n" if key != "state" else f"state: {value}\n"
            yield Case(f"item-{key}-{suffix}", 1, f"{ITEM}{key}: {found}", item=_b(text))
    for name, line, key, found in NESTED_VALUES:
        yield Case(
            f"item-{name}", 1, f"{ITEM}{key}: {found}", item=_b(f"state: Original\n{line}\n")
        )


# --- item.yaml: what YAML (or the file) makes of it -------------------------------------------

YAML_AT = f"{ITEM}malformed YAML at line "
BILLION_LAUGHS = (
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    + "state: Original\n"
)

ALIASES = (
    "aliases that expand to over 1,048,576 characters; expected a descriptor of at most "
    "1,048,576 characters with every alias written out (archive-format.md, Limits)"
)
ITEM_YAML = [
    (
        "impossible-unquoted-date",
        "state: Original\ntimestamp: 2009-02-30T00:00:00Z\n",
        f"{YAML_AT}2, column 12: '2009-02-30T00:00:00Z' is not a valid timestamp (day is out of range for month)",
    ),
    (
        "impossible-unquoted-month",
        "state: Original\ntimestamp: 2009-13-01\n",
        f"{YAML_AT}2, column 12: '2009-13-01' is not a valid timestamp",
    ),
    (
        "impossible-unquoted-leap-day",
        "state: Original\ntimestamp: 2010-02-29T10:00:00Z\n",
        f"{YAML_AT}2, column 12: '2010-02-29T10:00:00Z' is not a valid timestamp",
    ),
    (
        "impossible-date-in-dublin-core",
        "state: Original\ndublin-core: {date: 2009-04-31}\n",
        f"{YAML_AT}2, column 21: '2009-04-31' is not a valid timestamp",
    ),
    (
        "huge-integer",
        "state: Original\nibip: " + "9" * 5000 + "\n",
        f"{YAML_AT}2, column 7: '{'9' * 39}... is not a valid int (Exceeds the limit (4300 digits) for inte...)",
    ),
    (
        "explicit-bool-tag",
        "state: Original\ntransferable: !!bool maybe\n",
        f"{YAML_AT}2, column 15: 'maybe' is not a valid bool (KeyError)",
    ),
    (
        "explicit-int-tag",
        "state: Original\nibip: !!int x12\n",
        f"{YAML_AT}2, column 7: 'x12' is not a valid int (invalid literal for int() with base 10)",
    ),
    (
        "explicit-float-tag",
        "state: Original\nibip: !!float abc\n",
        f"{YAML_AT}2, column 7: 'abc' is not a valid float",
    ),
    (
        "explicit-timestamp-tag",
        "state: Original\ntimestamp: !!timestamp soon\n",
        f"{YAML_AT}2, column 12: 'soon' is not a valid timestamp",
    ),
    (
        "binary-value",
        "state: Original\nibip: !!binary '!!!'\n",
        f"{ITEM}ibip: a value of another kind; expected an IBI",
    ),
    (
        "python-object-tag",
        "state: !!python/object/apply:os.system ['true']\n",
        f"{YAML_AT}1, column 8: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'",
    ),
    (
        "python-name-tag",
        "state: !!python/name:os.system\n",
        f"{YAML_AT}1, column 8: could not determine a constructor for the tag",
    ),
    (
        "custom-tag",
        "state: !evil Original\n",
        f"{YAML_AT}1, column 8: could not determine a constructor for the tag '!evil'",
    ),
    (
        "duplicate-key",
        "state: Original\nstate: Deleted\n",
        f"{YAML_AT}2, column 1: a duplicate key 'state' (a key may appear once)",
    ),
    (
        "duplicate-key-in-mapping",
        "state: Original\ntranslations:\n  pt: a\n  pt: b\n",
        f"{YAML_AT}4, column 3: a duplicate key 'pt'",
    ),
    (
        "duplicate-key-flow",
        "state: Original\nformats: {a: x, a: y}\n",
        f"{YAML_AT}2, column 17: a duplicate key 'a'",
    ),
    ("undefined-alias", "state: *nope\n", f"{YAML_AT}1, column 8: found undefined alias"),
    (
        "tab-indentation",
        "state: Original\n\ttarget: x\n",
        f"{YAML_AT}2, column 1: found a tab character that violates indentation",
    ),
    (
        "unclosed-flow",
        "state: [Original\n",
        f"{YAML_AT}2, column 1: did not find expected ',' or ']'",
    ),
    (
        "unclosed-quote",
        "state: 'Original\n",
        f"{YAML_AT}2, column 1: found unexpected end of stream",
    ),
    (
        "bad-escape",
        'state: "Orig\\qinal"\n',
        f"{YAML_AT}1, column 13: found unknown escape character",
    ),
    ("two-documents", "state: Original\n---\nstate: Copy\n", f"{ITEM}malformed YAML"),
    (
        "yaml-2-directive",
        "%YAML 2.0\n---\nstate: Original\n",
        f"{YAML_AT}1, column 1: found incompatible YAML document",
    ),
    ("mapping-as-key", "? {a: b}\n: c\nstate: Original\n", f"{ITEM}malformed YAML"),
    (
        "colon-in-plain-value",
        "state: Original: yes\n",
        f"{YAML_AT}1, column 16: mapping values are not allowed in this context",
    ),
    ("merge-of-scalar", "state: Original\n<<: 5\n", f"{YAML_AT}"),
    (
        "top-level-list",
        "- state: Original\n",
        f"{ITEM}a list; expected a YAML mapping of keys to values",
    ),
    (
        "top-level-text",
        "Original\n",
        f"{ITEM}'Original'; expected a YAML mapping of keys to values",
    ),
    ("top-level-number", "42\n", f"{ITEM}42 (a number); expected a YAML mapping of keys to values"),
    (
        "empty-file",
        "",
        f"{ITEM}state: nothing; expected one of Original, Copy, Deleted (a required key)",
    ),
    ("only-comments", "# state: Original\n", f"{ITEM}state: nothing"),
    ("only-whitespace", "   \n\n  \n", f"{ITEM}state: nothing"),
    ("explicit-null", "~\n", f"{ITEM}state: nothing"),
    ("state-null", "state:\n", f"{ITEM}state: nothing"),
    (
        "billion-laughs-state",
        BILLION_LAUGHS.replace("state: Original\n", "state: *i\n"),
        f"{ITEM}{ALIASES}",
    ),
    (
        "billion-laughs-dublin-core",
        BILLION_LAUGHS + "dublin-core: {title: *i}\n",
        f"{ITEM}{ALIASES}",
    ),
    (
        # 5,000 aliases of a 100 kB string: 500 MB of title, once written into pages
        "aliases-of-a-long-string",
        "state: Original\nx: &x '"
        + "y" * 100_000
        + "'\ndublin-core: {title: ["
        + ", ".join(["*x"] * 5000)
        + "]}\n",
        f"{ITEM}{ALIASES}",
    ),
    (
        "key-with-newline",
        'state: Original\n"a\\nerror: forged": 1\n',
        "warning: mtc-m16c: " + BAD + "/item.yaml: a\\nerror: forged: an unknown key",
    ),
    (
        "key-with-escape-sequence",
        'state: Original\n"\\e[31mred": 1\n',
        "warning: mtc-m16c: " + BAD + "/item.yaml: \\x1b[31mred: an unknown key",
    ),
    (
        "unknown-key-number",
        "state: Original\n5: x\n",
        "warning: mtc-m16c: " + BAD + "/item.yaml: 5: an unknown key",
    ),
    (
        "unknown-key-boolean",
        "state: Original\ntrue: x\n",
        "warning: mtc-m16c: " + BAD + "/item.yaml: True: an unknown key",
    ),
    (
        "unknown-key-misspelt",
        "state: Original\ntarget-file: x\n",
        "warning: mtc-m16c: " + BAD + "/item.yaml: target-file: an unknown key",
    ),
    ("value-with-surrogate-escape", 'state: "\\ud800"\n', f"{YAML_AT}"),
]
#: warning-only inputs: the item is kept, the run exits 0
WARNING_ONLY = {
    "key-with-newline",
    "key-with-escape-sequence",
    "unknown-key-number",
    "unknown-key-boolean",
    "unknown-key-misspelt",
}

ITEM_BYTES = [
    (
        "latin-1",
        b"state: Original\ndublin-core: {title: S\xe3o Paulo}\n",
        f"{ITEM}bytes that are not UTF-8 at byte 39; expected a YAML mapping",
    ),
    (
        "utf-16-le",
        "state: Original\n".encode("utf-16"),
        f"{ITEM}UTF-16 text (its byte order mark); expected UTF-8 text",
    ),
    (
        "utf-16-be",
        b"\xfe\xff" + "state: Original\n".encode("utf-16-be"),
        f"{ITEM}UTF-16 text (its byte order mark); expected UTF-8 text",
    ),
    ("utf-32", "state: Original\n".encode("utf-32"), f"{ITEM}UTF-16 text (its byte order mark)"),
    (
        "nul-byte",
        b"state: Original\x00\n",
        f"{ITEM}binary content (a NUL byte at byte 16); expected UTF-8 text",
    ),
    (
        "binary-png",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        f"{ITEM}bytes that are not UTF-8 at byte 1",
    ),
    ("gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00", f"{ITEM}bytes that are not UTF-8 at byte 2"),
    (
        "control-characters",
        b"state: Orig\x07inal\n",
        f"{ITEM}a character YAML does not allow (#x0007) at character 12; expected UTF-8 text",
    ),
    (
        "truncated-utf-8",
        b"state: Original\ndublin-core: {title: \xc3}\n",
        f"{ITEM}bytes that are not UTF-8 at byte 38",
    ),
    ("overlong-utf-8", b"state: \xc0\xafOriginal\n", f"{ITEM}bytes that are not UTF-8 at byte 8"),
    (
        "crlf-line-ends",
        b"state: Original\r\ntarget: nope.pdf\r\n",
        f"{ITEM}target: 'nope.pdf', which is not in doc/",
    ),
    (
        "cr-only-line-ends",
        b"state: Original\rtarget: nope.pdf\r",
        f"{ITEM}target: 'nope.pdf', which is not in doc/",
    ),
    ("bom-then-bad", b"\xef\xbb\xbfstate: Orignal\n", f"{ITEM}state: 'Orignal'"),
]


def _limit_cases():
    deep = lambda n: "state: Original\ndublin-core: {title: " + "[" * n + "x" + "]" * n + "}\n"  # noqa: E731
    block = (
        "state: Original\ndublin-core:\n"
        + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(40))
        + "  " * 41
        + "x\n"
    )
    yield Case(
        "limit-nesting-60k-brackets",
        1,
        f"{ITEM}lists or mappings nested over 32 deep at line 1, column 33; expected at most 32 levels",
        item=_b("[" * 60_000 + "]" * 60_000),
    )
    yield Case(
        "limit-nesting-33-flow",
        1,
        f"{ITEM}lists or mappings nested over 32 deep",
        item=_b(deep(31)),
    )
    yield Case(
        "limit-nesting-33-block", 1, f"{ITEM}lists or mappings nested over 32 deep", item=_b(block)
    )
    yield Case(
        "limit-nesting-braces",
        1,
        f"{ITEM}lists or mappings nested over 32 deep",
        item=_b("{a: " * 5000 + "x" + "}" * 5000),
    )
    yield Case(
        "limit-nesting-compact-sequences",
        1,
        f"{ITEM}lists or mappings nested over 32 deep",
        item=_b("- " * 3000 + "x\n"),
    )
    yield Case("limit-nesting-32-is-fine", 1, f"{ITEM}dublin-core.title: a list", item=_b(deep(30)))
    yield Case(
        "limit-size-over-1-mib",
        1,
        f"{ITEM}a file over 1,048,576 bytes; expected a descriptor of at most 1,048,576 bytes",
        item=_b("state: Original\n# " + "x" * (1 << 20) + "\n"),
    )
    yield Case(
        "limit-size-10-mib-sparse", 1, f"{ITEM}a file over 1,048,576 bytes", tree=_sparse_item
    )
    yield Case(
        "limit-long-line-under-cap",
        1,
        f"{ITEM}state: '{'O' * 40}",
        item=_b("state: " + "O" * 500_000 + "\n"),
    )
    yield Case(
        "limit-many-keys",
        0,
        "warning: mtc-m16c: ... and 980 more warnings like this (an unknown key)",
        item=_b("state: Original\n" + "".join(f"k{i}: 1\n" for i in range(1000))),
    )
    yield Case(
        "limit-long-key",
        1,
        f"{YAML_AT}2, column 100001: could not find expected ':'",
        item=_b("state: Original\n" + "k" * 100_000 + ": 1\n"),
    )
    yield Case(
        "limit-many-aliases",
        1,
        f"{ITEM}state: a list",
        item=_b("a: &a [1]\n" + "state: [" + ", ".join(["*a"] * 100_000) + "]\n"),
    )


def _sparse_item(root, bad, tmp):
    with open(bad / "item.yaml", "wb") as handle:
        handle.truncate(10 << 20)  # ten MiB of zeros, not written


def _item_cases():
    yield from _value_cases()
    for name, text, message in ITEM_YAML:
        yield Case(f"yaml-{name}", 0 if name in WARNING_ONLY else 1, message, item=_b(text))
    for name, data, message in ITEM_BYTES:
        yield Case(f"bytes-{name}", 1, message, item=data)
    yield from _limit_cases()
    # accepted inputs (a careless depositor's, not an attacker's): they publish, exit 0
    for name, data in [
        ("utf-8-bom", b"\xef\xbb\xbfstate: Original\n"),
        ("crlf", b"state: Original\r\n"),
        ("merge-key", b"base: &b {state: Original}\n<<: *b\n"),
        ("anchors", b"state: &s Original\n"),
        ("aliases", b"state: Original\nx: &x a title\ndublin-core: {title: *x, subject: *x}\n"),
        ("document-markers", b"---\nstate: Original\n...\n"),
        ("quoted-date", b"state: Original\ntimestamp: '2009-07-21T13:23:45Z'\n"),
        ("leap-day", b"state: Original\ntimestamp: 2008-02-29T10:00:00Z\n"),
        ("yes-bool", b"state: Original\ntransferable: no\n"),
    ]:
        yield Case(f"accepted-{name}", 0 if name != "merge-key" else 0, "published ", item=data)


# --- archive.yaml ---------------------------------------------------------------------------


def _archive(extra: str) -> bytes:
    return _b(ARCHIVE_A + extra)


START = "which does not start with http://host, https://host, {site} or a single /"
TEMPLATES = [
    (
        "javascript",
        "file-url",
        "'javascript:alert(document.cookie)//{path}'",
        "which does not start with http://host, https://host, {site} or a single /",
    ),
    ("javascript-upper", "file-url", "'JaVaScRiPt:alert(1)'", START),
    ("data", "file-url", "'data:text/html,<script>alert(1)</script>{path}'", START),
    ("vbscript", "file-url", "'vbscript:msgbox({path})'", START),
    ("file-scheme", "file-url", "'file:///etc/{path}'", START),
    ("ftp", "file-url", "'ftp://{address}/{path}'", START),
    ("protocol-relative", "file-url", "'//evil.example/{path}'", START),
    ("backslash-host", "file-url", "'/\\\\evil.example/{path}'", START),
    ("field-first", "file-url", "'{address}/col/{path}'", START),
    ("no-host", "file-url", "'http:///{path}'", START),
    ("dot-dot", "file-url", "'https://{address}/col/../{path}'", "which has a '.' or '..' segment"),
    (
        "encoded-dot-dot",
        "file-url",
        "'https://{address}/col/%2e%2e/{path}'",
        "which has a '.' or '..' segment",
    ),
    (
        "space",
        "file-url",
        "'https://{address}/col x/{path}'",
        "which has a space, control character or backslash",
    ),
    ("tab-in-scheme", "file-url", '"java\\tscript:{path}"', START),
    (
        "newline",
        "file-url",
        '"https://{address}/\\n{path}"',
        "which has a space, control character or backslash",
    ),
    (
        "site-persistent-url",
        "file-url",
        "'{site}{repository}'",
        "which names a page of the site ({repository}...)",
    ),
    ("site-404", "file-url", "'{site}404.html'", "which names a page of the site (404.html...)"),
    ("site-index", "file-url", "'{site}index/{path}'", "which names a page of the site (index...)"),
    (
        "site-files",
        "file-url",
        "'{site}files/{repository}/'",
        "which names a page of the site (files...)",
    ),
    ("site-root", "file-url", "'{site}/{path}'", "which names a page of the site (/...)"),
    (
        "list-404",
        "file-list-url",
        "'{site}404.html'",
        "which is a page of the site outside files/{repository}/",
    ),
    (
        "list-index-json",
        "file-list-url",
        "'{site}index/manifest.json'",
        "which is a page of the site outside files/{repository}/",
    ),
    (
        "list-metadata",
        "file-list-url",
        "'{site}metadata/{repository}/'",
        "which is a page of the site outside files/{repository}/",
    ),
    (
        "list-escape",
        "file-list-url",
        "'{site}files/{repository}/../../../404.html'",
        "which has a '.' or '..' segment",
    ),
    (
        "list-sitemap",
        "file-list-url",
        "'{site}sitemap.xml'",
        "which is a page of the site outside files/{repository}/",
    ),
    ("list-javascript", "file-list-url", "'javascript:alert(1)'", START),
    ("list-protocol-relative", "file-list-url", "'//evil.example/{repository}'", START),
]
#: templates that str.format itself refuses or would run (name, key, value, found)
FORMAT_TEMPLATES = [
    (
        "lone-close-brace",
        "file-url",
        "'https://x.org/{repository}/}'",
        "'https://x.org/{repository}/}' (Single '}' encountered in format string)",
    ),
    (
        "lone-open-brace",
        "file-list-url",
        "'{site}files/{repository}/{'",
        "'{site}files/{repository}/{' (Single '{' encountered in format string)",
    ),
    (
        "format-spec",
        "file-url",
        "'https://x.org/{repository:>99999999999}/{path}'",
        "field {repository:>99999999999} in 'https://x.org/{repository:>99999999999}/{path}'",
    ),
    (
        "conversion",
        "file-url",
        "'https://x.org/{path!r}'",
        "field {path!r} in 'https://x.org/{path!r}'",
    ),
    ("attribute", "file-url", "'https://x.org/{path.__class__}'", "field {path.__class__} in "),
    ("positional", "file-url", "'https://x.org/{0}'", "field {0} in "),
]
HOST = "expected a host name or IP, optionally ':port' (DNS's and TCP's limits"
ARCHIVE_VALUES = [
    (
        "address-port-over-65535",
        "",
        f"error: mtc-m16c: archive.yaml: address: 'x.org:99999'; {HOST}",
        "address: x.org:99999\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-port-0",
        "",
        f"error: mtc-m16c: archive.yaml: address: 'x.org:0'; {HOST}",
        "address: x.org:0\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-label-over-63",
        "",
        f"error: mtc-m16c: archive.yaml: address: '{'a' * 64}.org'; {HOST}",
        f"address: {'a' * 64}.org\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-missing",
        "",
        "error: mtc-m16c: archive.yaml: address: nothing",
        "service-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-scheme",
        "",
        "error: mtc-m16c: archive.yaml: address: 'http://x.org'",
        "address: http://x.org\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-path",
        "",
        "error: mtc-m16c: archive.yaml: address: 'x.org/path'",
        "address: x.org/path\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-javascript",
        "",
        "error: mtc-m16c: archive.yaml: address: 'javascript:alert(1)'",
        "address: 'javascript:alert(1)'\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-number",
        "",
        "error: mtc-m16c: archive.yaml: address: 5 (a number)",
        "address: 5\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "address-list",
        "",
        "error: mtc-m16c: archive.yaml: address: a list",
        "address: [a]\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n",
    ),
    (
        "service-ibi-missing",
        "",
        "error: mtc-m16c: archive.yaml: service-ibi: nothing",
        "address: mtc-m16c.sid.inpe.br\n",
    ),
    (
        "service-ibi-ibip",
        "",
        "error: mtc-m16c: archive.yaml: service-ibi: ",
        "address: a.b\nservice-ibi: 8JMKD3MGP8W/35MME4E\n",
    ),
    (
        "service-ibi-number",
        "",
        "error: mtc-m16c: archive.yaml: service-ibi: 5 (a number)",
        "address: a.b\nservice-ibi: 5\n",
    ),
    (
        "service-ibip-repository",
        "service-ibip: sid.inpe.br/mtc-m18/2009/07.21.13.23\n",
        "error: mtc-m16c: archive.yaml: service-ibip: ",
        None,
    ),
    (
        "platform-number",
        "platform-software-ibi: 5\n",
        "error: mtc-m16c: archive.yaml: platform-software-ibi: 5 (a number)",
        None,
    ),
    (
        "relations-text",
        "relations: everything\n",
        "error: mtc-m16c: archive.yaml: relations: 'everything'",
        None,
    ),
    (
        "relations-bad-entry",
        "relations: ['.nonsense']\n",
        "error: mtc-m16c: archive.yaml: relations[0]: ",
        None,
    ),
    (
        "relations-number-entry",
        "relations: [5]\n",
        "error: mtc-m16c: archive.yaml: relations[0]: 5 (a number)",
        None,
    ),
    (
        "file-url-number",
        "file-url: 5\n",
        "error: mtc-m16c: archive.yaml: file-url: 5 (a number); expected a URL template string",
        None,
    ),
    (
        "file-url-unknown-field",
        "file-url: 'https://{address}/{foo}'\n",
        "error: mtc-m16c: archive.yaml: file-url: field {foo}",
        None,
    ),
    (
        "file-url-format-spec",
        "file-url: 'https://{address}/{path!r}'\n",
        "error: mtc-m16c: archive.yaml: file-url: field {path!r}",
        None,
    ),
    (
        "file-url-attribute",
        "file-url: 'https://{address}/{path.__class__}'\n",
        "error: mtc-m16c: archive.yaml: file-url: field {path.__class__}",
        None,
    ),
]


def _archive_cases():
    for name, key, value, why in TEMPLATES:
        shown = repr(yaml.safe_load(value))
        yield Case(
            f"archive-template-{name}",
            1,
            printable(f"{ARCHIVE}{key}: {shown}, {why}; expected an http(s) URL"),
            archive=_archive(f"{key}: {value}\n"),
            archive_out=True,
        )
    for name, key, value, found in FORMAT_TEMPLATES:
        yield Case(
            f"archive-template-{name}",
            1,
            f"{ARCHIVE}{key}: {found}",
            archive=_archive(f"{key}: {value}\n"),
            archive_out=True,
        )
    for name, extra, message, whole in ARCHIVE_VALUES:
        yield Case(
            f"archive-{name}",
            1,
            message,
            archive=_b(whole) if whole is not None else _archive(extra),
            archive_out=True,
        )
    for name, text, message in ITEM_YAML[:25]:
        if name in WARNING_ONLY or not message.startswith(YAML_AT):
            continue
        yield Case(
            f"archive-yaml-{name}",
            1,
            message.replace(ITEM, ARCHIVE),
            archive=_b(text),
            archive_out=True,
        )
    for name, data, message in ITEM_BYTES[:10]:
        yield Case(
            f"archive-bytes-{name}",
            1,
            message.replace(ITEM, ARCHIVE).replace("expected a YAML mapping", ""),
            archive=data,
            archive_out=True,
        )
    yield Case(
        "archive-empty",
        1,
        f"{ARCHIVE}an empty file; expected a YAML mapping of keys to values",
        archive=b"",
        archive_out=True,
    )
    yield Case(
        "archive-list",
        1,
        f"{ARCHIVE}a list; expected a YAML mapping of keys to values",
        archive=b"- a\n",
        archive_out=True,
    )
    yield Case(
        "archive-nesting",
        1,
        f"{ARCHIVE}lists or mappings nested over 32 deep",
        archive=_b("[" * 60_000),
        archive_out=True,
    )
    yield Case(
        "archive-size",
        1,
        f"{ARCHIVE}a file over 1,048,576 bytes",
        archive=_archive("# " + "x" * (1 << 20) + "\n"),
        archive_out=True,
    )
    yield Case(
        "archive-unknown-key",
        0,
        "warning: mtc-m16c: archive.yaml: colour: an unknown key",
        archive=_archive("colour: blue\n"),
    )
    yield Case(
        "archive-duplicate-address",
        1,
        f"{ARCHIVE}malformed YAML at line 3, column 1: a duplicate key 'address'",
        archive=_archive("address: evil.example\n"),
        archive_out=True,
    )


# --- trees: layout, links, special files, names, permissions -----------------------------------


def _link(target: str, name: str):
    def make(root, bad, tmp):
        path = bad / name
        if path.is_dir() and not path.is_symlink():
            import shutil

            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)

    return make


def _secret(tmp):
    (tmp / "outside").mkdir(exist_ok=True)
    (tmp / "outside" / "secret.yaml").write_text("state: TOP-SECRET-CONTENT\n", encoding="utf-8")
    (tmp / "outside" / "doc").mkdir(exist_ok=True)
    (tmp / "outside" / "doc" / "secret.txt").write_text("TOP-SECRET-CONTENT", encoding="utf-8")
    return tmp / "outside"


def _out_link(relative_target: str, name: str):
    def make(root, bad, tmp):
        outside = _secret(tmp)
        _link(str(outside / relative_target), name)(root, bad, tmp)

    return make


def _fifo(name: str):
    def make(root, bad, tmp):
        path = bad / name
        if path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)

    return make


def _socket(name: str):
    def make(root, bad, tmp):
        import socket

        path = bad / name
        server = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(path.parent)  # a socket's path is limited to 108 bytes
        try:
            server.bind(path.name)
        finally:
            os.chdir(here)
            server.close()

    return make


def _replace_with_directory(name: str):
    def make(root, bad, tmp):
        (bad / name).unlink()
        (bad / name).mkdir()

    return make


def _doc_file(name: str | bytes, extra_item: str = ""):
    def make(root, bad, tmp):
        directory = os.fsencode(bad / "doc")
        with open(
            os.path.join(directory, os.fsencode(name) if isinstance(name, str) else name), "wb"
        ) as handle:
            handle.write(b"x")
        if extra_item:
            (bad / "item.yaml").write_text(extra_item, encoding="utf-8")

    return make


def _many(*steps):
    def make(root, bad, tmp):
        for step in steps:
            step(root, bad, tmp)

    return make


def _write(relative: str, text: str):
    def make(root, bad, tmp):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    return make


def _mkdirs(relative: str | bytes):
    def make(root, bad, tmp):
        os.makedirs(
            os.path.join(
                os.fsencode(root), os.fsencode(relative) if isinstance(relative, str) else relative
            ),
            exist_ok=True,
        )

    return make


def _nested_doc(depth: int):
    def make(root, bad, tmp):
        path = os.path.join(bad, "doc", *(["d"] * depth))
        os.makedirs(path)
        with open(os.path.join(path, "deep.txt"), "w") as handle:
            handle.write("deep")

    return make


def _unreadable(name: str):
    """Unreadable for everyone, root included: tests/test_hostile.py makes os.open and
    os.scandir refuse paths ending in .unreadable (chmod does not stop root)."""

    def make(root, bad, tmp):
        path = bad / name
        os.rename(path, str(path) + ".unreadable") if path.exists() else None
        os.symlink(os.path.basename(str(path)) + ".unreadable", path)

    return make


W = "warning: mtc-m16c: "
E = "error: mtc-m16c: "


def _dated(name: str, seconds: int, extra_item: str = ""):
    """`name` (in BAD's folder) dated `seconds` after 1970 (ext4 clamps to 1901-2446)."""

    def make(root, bad, tmp):
        if extra_item:
            (bad / "item.yaml").write_text(extra_item, encoding="utf-8")
        os.utime(bad / name, (seconds, seconds))

    return make


TREE = [
    # file times beyond what 64-bit nanoseconds hold (year 2262) or before 1970
    ("doc-file-dated-2446", 0, "published ", _dated("doc/report.txt", 2**40)),
    ("doc-file-dated-1901", 0, "published ", _dated("doc/report.txt", -(2**40))),
    ("doc-file-dated-2262", 0, "published ", _dated("doc/report.txt", 9_223_372_037)),
    (
        "deleted-item-dated-2446",
        0,
        "published ",
        _dated("item.yaml", 2**40, "state: Deleted\nreason: withdrawn\n"),
    ),
    # (name, exit, message, tree step, text stderr must not hold)
    (
        "item-yaml-link-out",
        1,
        f"{E}{BAD}/item.yaml: a symbolic link out of the archive root; expected an item.yaml "
        "inside the archive (the link is not followed)",
        _out_link("secret.yaml", "item.yaml"),
    ),
    (
        "item-yaml-link-to-etc",
        1,
        f"{E}{BAD}/item.yaml: a symbolic link out of the archive root",
        _link("/etc/passwd", "item.yaml"),
    ),
    (
        "item-yaml-link-dangling",
        1,
        f"{E}{BAD}/item.yaml: an unreadable file (No such file or directory)",
        _link("nowhere.yaml", "item.yaml"),
    ),
    (
        "item-yaml-link-loop",
        1,
        f"{E}{BAD}/item.yaml: an unreadable file (Too many levels of symbolic links)",
        _link("item.yaml", "item.yaml"),
    ),
    (
        "item-yaml-fifo",
        1,
        f"{E}{BAD}/item.yaml: a FIFO (named pipe), not a regular file; expected a regular file item.yaml",
        _fifo("item.yaml"),
    ),
    (
        "item-yaml-socket",
        1,
        f"{E}{BAD}/item.yaml: a socket, not a regular file",
        _many(
            _link("x", "item.yaml"),
            lambda r, b, t: os.unlink(b / "item.yaml"),
            _socket("item.yaml"),
        ),
    ),
    (
        "item-yaml-device-link",
        1,
        f"{E}{BAD}/item.yaml: a symbolic link out of the archive root",
        _link("/dev/zero", "item.yaml"),
    ),
    (
        "item-yaml-directory",
        1,
        f"{E}{BAD}/item.yaml: a directory, not a regular file",
        _replace_with_directory("item.yaml"),
    ),
    (
        "item-yaml-unreadable",
        1,
        f"{E}{BAD}/item.yaml: an unreadable file (Permission denied); expected a readable item.yaml",
        _unreadable("item.yaml"),
    ),
    (
        "doc-link-out",
        1,
        f"{W}{BAD}/doc: a symbolic link out of the archive root; expected a doc/ folder inside the "
        "archive (the link is not followed)",
        _out_link("doc", "doc"),
    ),
    (
        "doc-link-dangling",
        1,
        f"{W}{BAD}/doc: a symbolic link that leads nowhere (dangling, or a loop)",
        _link("nowhere", "doc"),
    ),
    (
        "doc-is-a-file",
        1,
        f"{W}{BAD}/doc: an unreadable directory (Not a directory)",
        _many(
            _link("x", "doc"), lambda r, b, t: (os.unlink(b / "doc"), (b / "doc").write_text("x"))
        ),
    ),
    (
        "doc-file-link-out",
        0,
        f"{W}{BAD}/doc/secret.txt: a symbolic link out of the archive root; expected a file inside the archive",
        _out_link("doc/secret.txt", "doc/secret.txt"),
    ),
    (
        "doc-file-link-to-etc",
        0,
        f"{W}{BAD}/doc/passwd: a symbolic link out of the archive root",
        _link("/etc/passwd", "doc/passwd"),
    ),
    (
        "doc-file-link-dangling",
        0,
        f"{W}{BAD}/doc/gone.pdf: a symbolic link that leads nowhere (dangling, or a loop); "
        "expected a file inside the archive",
        _link("nowhere.pdf", "doc/gone.pdf"),
    ),
    (
        "doc-file-link-loop",
        0,
        f"{W}{BAD}/doc/loop: a symbolic link that leads nowhere",
        _link("loop", "doc/loop"),
    ),
    (
        "doc-folder-loop",
        0,
        f"{W}{BAD}/doc/again: a symbolic link loop (a folder inside itself); expected a folder "
        "that does not hold itself",
        _link(".", "doc/again"),
    ),
    (
        "doc-folder-loop-deeper",
        0,
        f"{W}{BAD}/doc/a/up: a symbolic link loop (a folder inside itself)",
        _many(_mkdirs(BAD + "/doc/a"), _link("..", "doc/a/up")),
    ),
    (
        "doc-fifo",
        0,
        f"{W}{BAD}/doc/pipe: a FIFO (named pipe); expected a regular file (it is left out, never opened)",
        _fifo("doc/pipe"),
    ),
    ("doc-socket", 0, f"{W}{BAD}/doc/sock: a socket; expected a regular file", _socket("doc/sock")),
    (
        "doc-fifo-as-target",
        1,
        f"{E}{BAD}/item.yaml: target: 'pipe', which is not in doc/",
        _many(
            _fifo("doc/pipe"),
            lambda r, b, t: (b / "item.yaml").write_text("state: Original\ntarget: pipe\n"),
        ),
    ),
    (
        "doc-name-not-utf-8",
        0,
        f"{W}{BAD}/doc/caf\\udce9.txt: a file name that is not UTF-8; expected a name of printable "
        "UTF-8 characters (it is left out)",
        _doc_file(b"caf\xe9.txt"),
    ),
    (
        "doc-name-newline",
        0,
        f"{W}{BAD}/doc/a\\nerror: forged.txt: a file name with a control character",
        _doc_file("a\nerror: forged.txt"),
    ),
    (
        "doc-name-carriage-return",
        0,
        f"{W}{BAD}/doc/a\\rb: a file name with a control character",
        _doc_file("a\rb"),
    ),
    (
        "doc-name-escape",
        0,
        f"{W}{BAD}/doc/\\x1b[2Jclear: a file name with a control character",
        _doc_file("\x1b[2Jclear"),
    ),
    (
        "doc-name-tab",
        0,
        f"{W}{BAD}/doc/a\\tb: a file name with a control character",
        _doc_file("a\tb"),
    ),
    (
        "doc-name-delete",
        0,
        f"{W}{BAD}/doc/a\\x7fb: a file name with a control character",
        _doc_file("a\x7fb"),
    ),
    (
        "doc-name-c1",
        0,
        f"{W}{BAD}/doc/a\\x85b: a file name with a control character",
        _doc_file("a\x85b"),
    ),
    (
        "doc-folder-unreadable",
        0,
        f"{W}{BAD}/doc/private.unreadable: an unreadable directory (Permission denied); expected a readable directory",
        _many(_mkdirs(BAD + "/doc/private.unreadable")),
    ),
    (
        "doc-deep-folders",
        1,
        f"{E}{BAD}/item.yaml: target: no target and 2 files in doc/",
        _nested_doc(300),
    ),
    (
        "doc-missing",
        1,
        f"{E}{BAD}/item.yaml: target: an empty doc/",
        lambda r, b, t: __import__("shutil").rmtree(b / "doc"),
    ),
    (
        "doc-empty",
        1,
        f"{E}{BAD}/item.yaml: target: an empty doc/",
        lambda r, b, t: [p.unlink() for p in (b / "doc").iterdir()],
    ),
    (
        "repository-link-out",
        0,
        f"{W}sid.inpe.br/mtc-m18@80/2009/evil.link: a symbolic link out of the archive root; "
        "expected a directory inside the archive",
        _many(
            lambda r, b, t: os.symlink(str(_secret(t)), r / "sid.inpe.br/mtc-m18@80/2009/evil.link")
        ),
    ),
    (
        "repository-link-dangling",
        0,
        f"{W}sid.inpe.br/mtc-m18@80/2009/12.31.23.59: a symbolic link that leads nowhere (dangling, or a loop)",
        lambda r, b, t: os.symlink("nowhere", r / "sid.inpe.br/mtc-m18@80/2009/12.31.23.59"),
    ),
    (
        "level-link-out",
        0,
        f"{W}evil.br: a symbolic link out of the archive root; expected a directory inside the "
        "archive (the link is not followed)",
        lambda r, b, t: os.symlink(str(_secret(t)), r / "evil.br"),
    ),
    (
        "level-link-loop",
        0,
        f"{W}sid.inpe.br/loop/loop/loop: item.yaml: a 4th-level directory without item.yaml",
        lambda r, b, t: os.symlink(".", r / "sid.inpe.br/loop"),
    ),
    (
        "level-link-inside-is-followed",
        0,
        "published ",
        lambda r, b, t: os.symlink("mtc-m18@80", r / "sid.inpe.br/mtc-alias"),
    ),
    ("doc-link-inside-is-followed", 0, "published ", _link("../07.21.13.23/doc", "doc")),
    (
        "item-yaml-link-inside-is-followed",
        0,
        "published ",
        _link("../07.21.13.23/item.yaml", "item.yaml"),
    ),
    (
        "level-name-not-utf-8",
        1,
        f"{E}sid.inpe.br/mtc-m18\\udce9/2009/01.02.03.04/item.yaml: repository path ",
        _many(
            _mkdirs(b"sid.inpe.br/mtc-m18\xe9/2009/01.02.03.04/doc"),
            lambda r, b, t: open(
                os.path.join(os.fsencode(r), b"sid.inpe.br/mtc-m18\xe9/2009/01.02.03.04/item.yaml"),
                "w",
            ).write("state: Original\n"),
        ),
    ),
    (
        "level-name-newline",
        1,
        f"{E}sid.inpe.br/mtc\\nerror: x/2009/01.02.03.04/item.yaml: repository path ",
        _write("sid.inpe.br/mtc\nerror: x/2009/01.02.03.04/item.yaml", "state: Original\n"),
    ),
    (
        "fourth-level-without-item-yaml",
        0,
        f"{W}sid.inpe.br/mtc-m18@80/2009/11.11.11.11: item.yaml: a 4th-level directory without item.yaml",
        _mkdirs("sid.inpe.br/mtc-m18@80/2009/11.11.11.11/doc"),
    ),
    (
        "item-yaml-at-third-level",
        0,
        "published ",
        _write("sid.inpe.br/mtc-m18@80/2009/item.yaml", "state: Original\n"),
    ),
    (
        "item-yaml-at-fifth-level",
        0,
        "published ",
        _write(BAD + "/extra/item.yaml", "state: Original\n"),
    ),
    (
        "repository-grammar-space",
        1,
        f"{E}sid.inpe.br/mtc m18/2009/01.02.03.04/item.yaml: repository path 'sid.inpe.br/mtc m18/2009/01.02.03.04'",
        _write("sid.inpe.br/mtc m18/2009/01.02.03.04/item.yaml", "state: Original\n"),
    ),
    (
        "repository-overlong-name",
        1,
        f"{E}sid.inpe.br/{'m' * 200}/2009/01.02.03.04/item.yaml: target: an empty doc/",
        _write(f"sid.inpe.br/{'m' * 200}/2009/01.02.03.04/item.yaml", "state: Original\n"),
    ),
    (
        "hidden-repository-ignored",
        0,
        "published ",
        _write(".git/x/2009/01.02.03.04/item.yaml", "state: !!python/object:x\n"),
    ),
    ("file-at-first-level", 0, "published ", _write("README", "notes\n")),
    (
        "archive-yaml-link-out",
        1,
        f"{ARCHIVE}a symbolic link out of the archive root; expected an archive.yaml inside the "
        "archive (the link is not followed)",
        lambda r, b, t: (
            os.unlink(r / "archive.yaml"),
            os.symlink(str(_secret(t) / "secret.yaml"), r / "archive.yaml"),
        ),
    ),
    (
        "archive-yaml-fifo",
        1,
        f"{ARCHIVE}a FIFO (named pipe), not a regular file; expected a regular file",
        lambda r, b, t: (os.unlink(r / "archive.yaml"), os.mkfifo(r / "archive.yaml")),
    ),
    (
        "archive-yaml-directory",
        1,
        f"{ARCHIVE}a directory, not a regular file",
        lambda r, b, t: (os.unlink(r / "archive.yaml"), os.mkdir(r / "archive.yaml")),
    ),
    (
        "archive-yaml-missing",
        1,
        f"{ARCHIVE}no archive.yaml; expected an archive.yaml at the Archive root",
        lambda r, b, t: os.unlink(r / "archive.yaml"),
    ),
    (
        "archive-yaml-loop",
        1,
        f"{ARCHIVE}an unreadable file (Too many levels of symbolic links)",
        lambda r, b, t: (
            os.unlink(r / "archive.yaml"),
            os.symlink("archive.yaml", r / "archive.yaml"),
        ),
    ),
    (
        "archive-yaml-unreadable",
        1,
        f"{ARCHIVE}an unreadable file (Permission denied); expected a readable archive.yaml",
        lambda r, b, t: (
            os.rename(r / "archive.yaml", r / "archive.yaml.unreadable"),
            os.symlink("archive.yaml.unreadable", r / "archive.yaml"),
        ),
    ),
]
#: tree cases that leave A's archive.yaml unusable
TREE_ARCHIVE_OUT = {
    "archive-yaml-link-out",
    "archive-yaml-fifo",
    "archive-yaml-directory",
    "archive-yaml-missing",
    "archive-yaml-loop",
    "archive-yaml-unreadable",
}


def _tree_cases():
    for name, exit_code, message, step in TREE:
        yield Case(
            f"tree-{name}",
            exit_code,
            message,
            tree=step,
            archive_out=name in TREE_ARCHIVE_OUT,
            absent=("TOP-SECRET-CONTENT",),
        )


# --- ibistatic.yaml -----------------------------------------------------------------------------

GOOD_CONFIG = "site-url: https://ibi.example.org/\narchives: [mtc-m16c, mtc-m16d]\noutput: site\n"
SITE_URL_EXPECTED = "expected an absolute http(s) URL such as https://ibi.example.org/"
FOLDER = "expected a folder of at most 2,048 bytes, 240 a name"
CONFIGS = [
    # values at the edges of what their later uses take (ports, DNS, file names, modifiers)
    (
        "site-url-port-over-65535",
        GOOD_CONFIG.replace("ibi.example.org/", "ibi.example.org:99999/"),
        f"{{config}}: site-url: found 'https://ibi.example.org:99999/'; {SITE_URL_EXPECTED}",
    ),
    (
        "site-url-label-over-63",
        GOOD_CONFIG.replace("ibi.example.org/", "a" * 64 + ".org/"),
        "{config}: site-url: found 'https://" + "a" * 64,
    ),
    (
        "site-url-bad-escape",
        GOOD_CONFIG.replace("ibi.example.org/", "ibi.example.org/%zz/"),
        f"{{config}}: site-url: found 'https://ibi.example.org/%zz/'; {SITE_URL_EXPECTED}",
    ),
    (
        "output-name-over-240-bytes",
        GOOD_CONFIG.replace("output: site", "output: " + "o" * 300),
        "{config}: output: found '" + "o" * 79 + "..., a name of 300 bytes",
    ),
    (
        "output-path-over-2048-bytes",
        GOOD_CONFIG.replace("output: site", "output: " + "/o" * 1100),
        "{config}: output: found '" + "/o" * 39 + "/..., a path of 2,200 bytes; " + FOLDER,
    ),
    (
        "archive-name-over-240-bytes",
        GOOD_CONFIG.replace("mtc-m16d]", "m" * 250 + "]"),
        "{config}: archives: found '" + "m" * 79 + "..., a name of 250 bytes",
    ),
    (
        "cache-name-over-240-bytes",
        GOOD_CONFIG + "cache: " + "c" * 241 + "\n",
        "{config}: cache: found '" + "c" * 79 + "..., a name of 241 bytes",
    ),
    (
        "modifier-broken",
        GOOD_CONFIG + "modifiers: ['!', '+(']\n",
        "{config}: modifiers[1]: found '+(' (end of input at character 3); expected a modifier "
        "of Table 6.1",
    ),
    (
        "modifier-not-of-table-6-1",
        GOOD_CONFIG + "modifiers: ['!!']\n",
        "{config}: modifiers[0]: found '!!' ('!' at character 2)",
    ),
    (
        "time-for-text",
        GOOD_CONFIG + "institution: 0001-01-01T00:00:00+01:00\n",
        "{config}: institution: found '0001-01-01 00:00:00+01:00' (a time); expected a text",
    ),
    ("empty", "", "{config}: expected a mapping with site-url and archives"),
    ("list", "- a\n", "{config}: expected a mapping with site-url and archives"),
    ("text", "hello\n", "{config}: expected a mapping with site-url and archives"),
    ("malformed", "site-url: [\n", "{config}: site-url: malformed YAML at line 2, column 1"),
    (
        "tab",
        "site-url: x\n\tarchives: []\n",
        "{config}: site-url: malformed YAML at line 2, column 1",
    ),
    (
        "duplicate-key",
        GOOD_CONFIG + "output: elsewhere\n",
        "{config}: output: malformed YAML at line 4, column 1: a duplicate key 'output'",
    ),
    (
        "impossible-date",
        GOOD_CONFIG + "when: 2009-02-30\n",
        "{config}: when: malformed YAML at line 4, column 7: '2009-02-30' is not a valid timestamp",
    ),
    (
        "python-tag",
        GOOD_CONFIG + "x: !!python/object/apply:os.system [id]\n",
        "{config}: x: malformed YAML at line 4, column 4: could not determine a constructor",
    ),
    ("deep", "[" * 60_000, "{config}: lists or mappings nested over 32 deep"),
    ("huge", GOOD_CONFIG + "# " + "x" * (1 << 20), "{config}: a file over 1,048,576 bytes"),
    (
        "site-url-missing",
        "archives: [mtc-m16c]\n",
        "{config}: site-url: found nothing; expected an absolute http(s) URL such as "
        "https://ibi.example.org/, without query or fragment (a required key)",
    ),
    (
        "site-url-number",
        "site-url: 5\narchives: [mtc-m16c]\n",
        "{config}: site-url: found 5; expected an absolute http(s) URL",
    ),
    (
        "site-url-relative",
        "site-url: /ibi/\narchives: [mtc-m16c]\n",
        "{config}: site-url: found '/ibi/'",
    ),
    (
        "site-url-javascript",
        "site-url: 'javascript://x/%0aalert(1)'\narchives: [mtc-m16c]\n",
        "{config}: site-url: found 'javascript://x/%0aalert(1)'",
    ),
    (
        "site-url-ftp",
        "site-url: ftp://x.org/\narchives: [mtc-m16c]\n",
        "{config}: site-url: found 'ftp://x.org/'",
    ),
    (
        "site-url-no-host",
        "site-url: 'https:///x'\narchives: [mtc-m16c]\n",
        "{config}: site-url: found 'https:///x'",
    ),
    (
        "site-url-bad-ipv6",
        "site-url: 'https://[::1/'\narchives: [mtc-m16c]\n",
        "{config}: site-url: found 'https://[::1/'",
    ),
    (
        "site-url-query",
        "site-url: 'https://x.org/?a=1'\narchives: [mtc-m16c]\n",
        "{config}: site-url: found 'https://x.org/?a=1'",
    ),
    (
        "site-url-list",
        "site-url: [https://x.org/]\narchives: [mtc-m16c]\n",
        "{config}: site-url: found ['https://x.org/']",
    ),
    (
        "site-url-newline",
        'site-url: "https://x.org/\\nerror: forged"\narchives: [mtc-m16c]\n',
        "{config}: site-url: found 'https://x.org/\\nerror: forged'",
    ),
    (
        "archives-missing",
        "site-url: https://x.org/\n",
        "{config}: archives: found nothing; expected a list of archive directories (a required key)",
    ),
    ("archives-empty", "site-url: https://x.org/\narchives: []\n", "{config}: archives: found []"),
    (
        "archives-text",
        "site-url: https://x.org/\narchives: mtc-m16c\n",
        "{config}: archives: found 'mtc-m16c'",
    ),
    (
        "archives-number",
        "site-url: https://x.org/\narchives: [5]\n",
        "{config}: archives: found [5]",
    ),
    (
        "archives-empty-name",
        "site-url: https://x.org/\narchives: ['']\n",
        "{config}: archives: found ['']",
    ),
    (
        "archives-nul",
        'site-url: https://x.org/\narchives: ["a\\0b"]\n',
        "{config}: archives: found ['a\\x00b']",
    ),
    (
        "archives-mapping",
        "site-url: https://x.org/\narchives: {a: b}\n",
        "{config}: archives: found {'a': 'b'}",
    ),
    (
        "archives-duplicate-names",
        "site-url: https://x.org/\narchives: [a/mtc-m16c, b/mtc-m16c]\n",
        "{config}: archives: two archives are named 'mtc-m16c'",
    ),
    (
        "output-number",
        "site-url: https://x.org/\narchives: [mtc-m16c]\noutput: 5\n",
        "{config}: output: found 5; expected a directory",
    ),
    (
        "output-list",
        "site-url: https://x.org/\narchives: [mtc-m16c]\noutput: [a]\n",
        "{config}: output: found ['a']",
    ),
    (
        "output-nul",
        'site-url: https://x.org/\narchives: [mtc-m16c]\noutput: "a\\0"\n',
        "{config}: output: found 'a\\x00'",
    ),
    (
        "modifiers-number",
        "site-url: https://x.org/\narchives: [mtc-m16c]\nmodifiers: 5\n",
        "{config}: modifiers: found 5",
    ),
    (
        "modifiers-mapping",
        "site-url: https://x.org/\narchives: [mtc-m16c]\nmodifiers: {a: b}\n",
        "{config}: modifiers: found {'a': 'b'}",
    ),
    (
        "catalog-text",
        "site-url: https://x.org/\narchives: [mtc-m16c]\ncatalog: 'yes'\n",
        "{config}: catalog: found 'yes'; expected true or false",
    ),
    (
        "cache-number",
        "site-url: https://x.org/\narchives: [mtc-m16c]\ncache: 5\n",
        "{config}: cache: found 5; expected a directory",
    ),
    (
        "cache-list",
        "site-url: https://x.org/\narchives: [mtc-m16c]\ncache: [a]\n",
        "{config}: cache: found ['a']",
    ),
]
CONFIG_BYTES = [
    (
        "latin-1",
        b"site-url: https://x.org/\narchives: [S\xe3o]\n",
        "{config}: bytes that are not UTF-8 at byte 38",
    ),
    (
        "utf-16",
        GOOD_CONFIG.encode("utf-16"),
        "{config}: UTF-16 text (its byte order mark); expected UTF-8 text",
    ),
    ("nul", b"site-url: https://x.org/\x00\n", "{config}: binary content (a NUL byte at byte 25)"),
]


def _config_cases():
    for name, text, message in CONFIGS:
        yield Case(f"config-{name}", 2, "ibistatic build: " + message, config=_b(text))
    for name, data, message in CONFIG_BYTES:
        yield Case(f"config-{name}", 2, "ibistatic build: " + message, config=data)
    yield Case("config-bom", 0, "published ", config=b"\xef\xbb\xbf" + _b(GOOD_CONFIG))
    yield Case(
        "config-archive-missing",
        1,
        "error: mtc-m16x: {tmp}/mtc-m16x: no such directory",
        config=_b(GOOD_CONFIG.replace("mtc-m16c, ", "mtc-m16c, mtc-m16x, ")),
    )


# --- the command line ---------------------------------------------------------------------------

ARGV = [
    (
        "config-missing",
        ("build", "--config", "{tmp}/nowhere.yaml"),
        2,
        "ibistatic build: {tmp}/nowhere.yaml: no such configuration file",
    ),
    (
        "config-is-directory",
        ("build", "--config", "{tmp}"),
        2,
        "ibistatic build: {tmp}: a directory, not a regular file; expected a regular file",
    ),
    (
        "config-is-fifo",
        ("build", "--config", "{tmp}/pipe.yaml"),
        2,
        "ibistatic build: {tmp}/pipe.yaml: a FIFO (named pipe), not a regular file",
    ),
    (
        "config-is-dev-null",
        ("build", "--config", "/dev/null"),
        2,
        "ibistatic build: /dev/null: a character device, not a regular file",
    ),
    (
        "config-name-newline",
        ("build", "--config", "{tmp}/a\nb.yaml"),
        2,
        "ibistatic build: {tmp}/a\\nb.yaml: no such configuration file",
    ),
    (
        "unknown-option",
        ("build", "--bogus"),
        2,
        "ibistatic: error: unrecognized arguments: --bogus",
    ),
    (
        "config-without-value",
        ("build", "--config"),
        2,
        "ibistatic build: error: argument --config: expected one argument",
    ),
    (
        "output-without-value",
        ("build", "--output"),
        2,
        "ibistatic build: error: argument --output: expected one argument",
    ),
    (
        "unknown-command",
        ("publish",),
        2,
        "ibistatic: error: argument COMMAND: invalid choice: 'publish'",
    ),
    ("no-command", (), 2, "usage: ibistatic"),
    (
        "resolve-missing-index",
        ("resolve", "sid.inpe.br/mtc-m18@80/2009/07.21.13.23", "--index", "{tmp}/nowhere"),
        1,
        "ibistatic resolve: {tmp}/nowhere: no index here",
    ),
    (
        "resolve-bad-ibi",
        ("resolve", "sid.inpe.br/mtc m18", "--index", "{tmp}/nowhere"),
        1,
        "ibistatic resolve: {tmp}/nowhere: no index here",
    ),
    (
        "properties-missing-archive",
        ("properties", "sid.inpe.br/mtc-m18@80/2009/07.21.13.23", "--archive", "{tmp}/nowhere"),
        1,
        "error: nowhere: {tmp}/nowhere: no such directory",
    ),
    (
        "inspect-control-character",
        ("inspect", "sid.inpe.br/\x1bx"),
        2,
        "ibistatic inspect: invalid IBI",
    ),
    ("mint-bad-port", ("mint", "--ip", "150.163.34.239", "--port", "99999"), 2, "ibistatic mint: "),
    ("mint-bad-ip", ("mint", "--ip", "999.1.1.1"), 2, "ibistatic mint: "),
]


def _argv_cases():
    for name, argv, exit_code, message in ARGV:
        yield Case(f"cli-{name}", exit_code, message, argv=argv)


def _all() -> list[Case]:
    cases = [*_item_cases(), *_archive_cases(), *_tree_cases(), *_config_cases(), *_argv_cases()]
    names = [case.name for case in cases]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    return cases


CASES = _all()
