"""The two written forms of an IBI and their grammars (identification system, Tables 6.1 and 7.1).

A *repository name* (Table 6.1) is written from a host name::

    sid.inpe.br/mtc-m18@80/2009/07.21.13.23

an *IBIp* (Table 7.1) is written opaquely from an IP address::

    8JMKD3MGP8W/35MME4E

Table 7.1 alone reads ``IBIp = word "/" word``; Algorithms 5-7 say what the words hold,
and this module's IBIp grammar is theirs, so that ``rep/8JMKD3MGP7W`` (no ``W`` or
``X`` in ``rep``) is not an IBIp anywhere: not in :func:`parse_ibi`, not in a persistent
URL, not in the index, not in the browser (which reads :data:`.facts.IBIP_PATTERN` from
the site's ``assets/facts.js``)::

    IBIp   = prefix "/" suffix
    prefix = 1*digit ("W" | "X") *digit    ; coded IP, W (IPv4) or X (IPv6), coded port
    suffix = 1*digit ["W" 1*digit]         ; coded seconds, then W and the coded fraction
    digit  = 2-9 | the letters but I, O, V, W, X, Y, Z   ; Table 7.6, either case

Decoding (:mod:`.ibip`) goes further: the numbers must be an IP address, a port and a
date (no leading zero digit, port 1-65535 other than 800).

Both are case-insensitive: values compare and hash on their canonical :attr:`key`
(lower case for repository names, upper case for IBIps) and keep the text as given.

The parser is a small recursive descent, one function per ABNF rule.  It remembers the
farthest position where the text stopped fitting the grammar and what would have fitted
there, so an error points at the first character that no valid IBI could have.
"""

from __future__ import annotations

import re
import string
import sys
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import IbiSyntaxError
from .facts import (
    IBIP_DIGIT_CLASS,
    IBIP_FRACTION_SEPARATORS,
    IBIP_PATTERN,
    IBIP_PORT_SEPARATORS,
    REPOSITORY_PATTERN,
)

__all__ = [
    "RepositoryName",
    "Ibip",
    "Ibi",
    "parse_ibi",
    "parse_repository_name",
    "parse_ibip",
    "match_ibi",
    "ibi_key",
    "split_host_name",
]

# Runs of characters named after the ABNF rules they serve.  A rule is a run plus a check
# of its ends (a word neither begins nor ends with "-"), so the caret can land on the
# character after the run rather than on a hyphen that might still have been followed
# by a letter.
WORD_CHARACTERS = re.compile(r"[A-Za-z0-9-]*")  # *(ALPHANUM | "-")
DIGITS = re.compile(r"[0-9]*")  # *DIGIT
IBIP_DIGITS = re.compile(IBIP_DIGIT_CLASS + "*")  # *digit of Table 7.6

# The whole grammars as single regular expressions (both are regular), for the fast
# accept of well-formed text; the rule-by-rule parser below runs only to explain a
# failure with a caret.  Tests check both agree on every input.
REPOSITORY = re.compile(REPOSITORY_PATTERN)
IBIP = re.compile(IBIP_PATTERN)

ALPHA = frozenset(string.ascii_letters)
DIGIT = frozenset(string.digits)

# What the error message says was expected.
LETTER = "a letter"
A_DIGIT = "a digit"
IBIP_DIGIT = "an IBIp digit (2-9, A-H, J-N, P-U)"
END = "end of input"


def _canonical(text: str, folded: str) -> str:
    """`folded` (the text in its canonical case), or `text` itself when they are equal."""
    return text if folded == text else folded


def pickled_as_call(self) -> tuple:
    """``__reduce__`` of a slotted dataclass: pickled as a call of its constructor with
    its fields in order, which dumps and loads twice as fast as the getstate/setstate
    pair dataclasses provide (the crawl cache and the build state hold 100,000s)."""
    cls = type(self)
    return cls, tuple([getattr(self, name) for name in cls.__match_args__])


@dataclass(frozen=True, eq=False, slots=True)
class RepositoryName:
    """An IBI written from a host name: ``subdomain/word[.port]/year/month.day.hour.minute[...]``."""

    text: str
    subdomain: str
    word: str
    port: int | None
    port_separator: str
    suffix: str
    #: the canonical index key (a repository name is case-insensitive), kept: the text
    #: itself when already lower case, so that every table keyed by it shares one string
    key: str = field(init=False, repr=False)
    form: ClassVar[str] = "repository"

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", _canonical(self.text, self.text.lower()))

    @property
    def prefix(self) -> str:
        """The identification subsystem: ``sid.inpe.br/mtc-m18@80``."""
        return self.text[: len(self.text) - len(self.suffix) - 1]

    @property
    def parts(self) -> tuple[str, str, str, str]:
        """The four directory names of the uniform repository, as given."""
        subdomain, word_port = self.prefix.split("/")
        year, rest = self.suffix.split("/")
        return subdomain, word_port, year, rest

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RepositoryName):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash((RepositoryName, self.key))

    __reduce__ = pickled_as_call

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, eq=False, slots=True)
class Ibip:
    """An IBI written opaquely from an IP address: ``8JMKD3MGP8W/34PGRBS``."""

    text: str
    prefix: str
    suffix: str
    #: the canonical index key (an IBIp is case-insensitive), kept as RepositoryName.key
    key: str = field(init=False, repr=False)
    form: ClassVar[str] = "ibip"

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", _canonical(self.text, self.text.upper()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ibip):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash((Ibip, self.key))

    __reduce__ = pickled_as_call

    def __str__(self) -> str:
        return self.text


Ibi = RepositoryName | Ibip


class _Cursor:
    """A position in the text, and the farthest place where the grammar stopped fitting."""

    __slots__ = ("text", "pos", "farthest", "expected")

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos
        self.farthest = pos
        self.expected: list[str] = []

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def expect(self, pos: int, *what: str) -> None:
        """Note that one of ``what`` would have fitted at ``pos``."""
        if pos > self.farthest:
            self.farthest, self.expected = pos, []
        if pos == self.farthest:
            self.expected.extend(w for w in what if w not in self.expected)

    def take(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        self.expect(self.pos, repr(char))
        return False

    def run(self, pattern: re.Pattern[str]) -> str:
        found = pattern.match(self.text, self.pos)
        assert found is not None  # every run pattern matches the empty string
        self.pos = found.end()
        return found.group()

    def error(self, what: str) -> IbiSyntaxError:
        return IbiSyntaxError(self.text, self.farthest, _either(self.expected), what)


def _either(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items) or "nothing more"
    return ", ".join(items[:-1]) + " or " + items[-1]


def _word(cur: _Cursor) -> str | None:
    """word = ALPHANUM | (ALPHANUM *(ALPHANUM | "-") ALPHANUM)"""
    start = cur.pos
    run = cur.run(WORD_CHARACTERS)
    word = run.rstrip("-")
    if not word or word[0] == "-":
        cur.pos = start
        cur.expect(start, LETTER, A_DIGIT)
        return None
    cur.expect(start + len(run), LETTER, A_DIGIT, "'-'")
    # A trailing hyphen is not part of the word: the next rule starts at it.
    cur.pos = start + len(word)
    return word


def _subdomain(cur: _Cursor) -> str | None:
    """subdomain = *(word ".") last-word ["."]

    last-word = ALPHA | (ALPHA *(ALPHANUM | "-") ALPHANUM)
    """
    start = cur.pos
    labels = []
    while (label := _word(cur)) is not None:
        labels.append(label)
        if not cur.take("."):
            break
    if not labels or labels[-1][0] not in ALPHA:
        cur.pos = start
        return None
    return cur.text[start : cur.pos]


def _some_digits(cur: _Cursor) -> str | None:
    """1*DIGIT"""
    digits = cur.run(DIGITS)
    cur.expect(cur.pos, A_DIGIT)
    return digits or None


def _port(cur: _Cursor) -> str | None:
    """port = 1*DIGIT"""
    return _some_digits(cur)


def _fraction(cur: _Cursor) -> str | None:
    """fraction = 1*DIGIT"""
    return _some_digits(cur)


def _prefix(cur: _Cursor) -> tuple[str, str, str, str] | None:
    """prefix = subdomain "/" word [("." | "@") port]

    Returns (subdomain, word, port separator, port digits).
    """
    start = cur.pos
    subdomain = _subdomain(cur)
    word = None
    if subdomain is not None and cur.take("/"):
        word = _word(cur)
    if subdomain is None or word is None:  # (a word is read only after a subdomain)
        cur.pos = start
        return None
    mark = cur.pos
    separator = cur.peek()
    if separator in (".", "@"):
        cur.pos += 1
        port = _port(cur)
        if port is not None:
            return subdomain, word, separator, port
        cur.pos = mark
    cur.expect(mark, "'.'", "'@'")
    return subdomain, word, "", ""


def _fixed_digits(cur: _Cursor, count: int) -> str | None:
    """month = day = hour = minute = integer = 2DIGIT"""
    start = cur.pos
    for _ in range(count):
        if cur.peek() not in DIGIT:
            cur.expect(cur.pos, A_DIGIT)
            cur.pos = start
            return None
        cur.pos += 1
    return cur.text[start : cur.pos]


def _year(cur: _Cursor) -> str | None:
    """year = 4*DIGIT"""
    start = cur.pos
    digits = cur.run(DIGITS)
    cur.expect(cur.pos, A_DIGIT)
    if len(digits) < 4:
        cur.pos = start
        return None
    return digits


def _second(cur: _Cursor) -> str | None:
    """second = integer ["." fraction] ; integer = 2DIGIT ; fraction = 1*DIGIT"""
    if _fixed_digits(cur, 2) is None:
        return None
    mark = cur.pos
    if cur.take(".") and _fraction(cur) is None:
        cur.pos = mark
    return cur.text[mark - 2 : cur.pos]


def _optional_second(cur: _Cursor) -> None:
    """["." second]"""
    mark = cur.pos
    if cur.take(".") and _second(cur) is None:
        cur.pos = mark


def _suffix(cur: _Cursor) -> str | None:
    """suffix = year "/" month "." day "." hour "." minute ["." second]"""
    start = cur.pos
    fits = _year(cur) is not None and cur.take("/") and _fixed_digits(cur, 2) is not None
    for _ in range(3):  # "." day, "." hour, "." minute
        fits = fits and cur.take(".") and _fixed_digits(cur, 2) is not None
    if not fits:
        cur.pos = start
        return None
    _optional_second(cur)
    return cur.text[start : cur.pos]


def _repository(cur: _Cursor) -> RepositoryName | None:
    """repository = prefix "/" suffix"""
    start = cur.pos
    prefix = _prefix(cur)
    suffix = _suffix(cur) if prefix is not None and cur.take("/") else None
    if prefix is None or suffix is None:
        cur.pos = start
        return None
    subdomain, word, separator, port = prefix
    return _repository_name(cur.text[start : cur.pos], subdomain, word, separator, port, suffix)


def _repository_name(text, subdomain, word, separator, port, suffix) -> RepositoryName:
    # the prefix's parts repeat over an Archive's items: one string each, as a large
    # build holds every item (a pickle keeps them shared when the items are loaded again)
    return RepositoryName(
        text=text,
        subdomain=sys.intern(subdomain),
        word=sys.intern(word),
        port=int(port) if port else None,
        port_separator=sys.intern(separator),
        suffix=suffix,
    )


def _ibip_digits(cur: _Cursor) -> str | None:
    """1*digit   ; Table 7.6: 2-9 and the letters but I, O, V, W, X, Y, Z"""
    digits = cur.run(IBIP_DIGITS)
    cur.expect(cur.pos, IBIP_DIGIT)
    return digits or None


def _ibip_separator(cur: _Cursor, separators: str) -> bool:
    """One of *separators* (``W`` or ``X``), which are not digits."""
    if cur.peek() and cur.peek() in separators:
        cur.pos += 1
        return True
    cur.expect(cur.pos, *(repr(char) for char in separators if char.isupper()))
    return False


def _ibip_prefix(cur: _Cursor) -> str | None:
    """prefix = 1*digit ("W" | "X") *digit   ; coded IP, separator, coded port (Algorithm 5)"""
    start = cur.pos
    if _ibip_digits(cur) is None or not _ibip_separator(cur, IBIP_PORT_SEPARATORS):
        cur.pos = start
        return None
    cur.run(IBIP_DIGITS)
    cur.expect(cur.pos, IBIP_DIGIT)
    return cur.text[start : cur.pos]


def _ibip_suffix(cur: _Cursor) -> str | None:
    """suffix = 1*digit ["W" 1*digit]   ; coded seconds, coded fraction (Algorithm 6)"""
    start = cur.pos
    if _ibip_digits(cur) is None:
        return None
    mark = cur.pos
    if _ibip_separator(cur, IBIP_FRACTION_SEPARATORS) and _ibip_digits(cur) is None:
        cur.pos = mark
    return cur.text[start : cur.pos]


def _ibip(cur: _Cursor) -> Ibip | None:
    """IBIp = prefix "/" suffix"""
    start = cur.pos
    prefix = _ibip_prefix(cur)
    suffix = _ibip_suffix(cur) if prefix is not None and cur.take("/") else None
    if prefix is None or suffix is None:
        cur.pos = start
        return None
    return Ibip(text=cur.text[start : cur.pos], prefix=sys.intern(prefix), suffix=suffix)


def _whole(rule, text: str):
    """Apply ``rule`` to all of ``text``; return its value or the cursor that failed."""
    cur = _Cursor(text)
    value = rule(cur)
    if value is not None and cur.pos == len(text):
        return value, cur
    if value is not None:
        cur.expect(cur.pos, END)
    return None, cur


def parse_repository_name(text: str) -> RepositoryName:
    """Parse a repository name (Table 6.1); :class:`IbiSyntaxError` if it is not one."""
    fast = _fast_repository(text)
    if fast is not None:
        return fast
    value, cur = _whole(_repository, text)
    if value is None:
        raise cur.error("repository name")
    return value


def parse_ibip(text: str) -> Ibip:
    """Parse an IBIp (Table 7.1); :class:`IbiSyntaxError` if it is not one."""
    fast = _fast_ibip(text)
    if fast is not None:
        return fast
    value, cur = _whole(_ibip, text)
    if value is None:
        raise cur.error("IBIp")
    return value


def _looks_like_ibip(text: str, start: int) -> bool:
    """Whether the text up to the first "/" is IBIp letters with a digit or a W or X in
    them (a host name's last word rarely holds digits)."""
    head = text[start:].split("/", 1)[0]
    return (
        bool(head)
        and re.fullmatch(r"[2-9A-HJ-NP-UWXa-hj-np-uwx]+", head) is not None
        and bool(set(head) & set("23456789" + IBIP_PORT_SEPARATORS))
    )


def _blame(repository: _Cursor, ibip: _Cursor, start: int) -> IbiSyntaxError:
    """The error of the form that got farther; on a tie, the form the text looks like."""
    if ibip.farthest > repository.farthest or (
        ibip.farthest == repository.farthest and _looks_like_ibip(ibip.text, start)
    ):
        return ibip.error("IBI")
    return repository.error("IBI")


def _fast_repository(text: str) -> RepositoryName | None:
    match = REPOSITORY.fullmatch(text)
    if match is None:
        return None
    return _repository_name(
        text,
        match["subdomain"],
        match["word"],
        match["separator"] or "",
        match["port"],
        match["suffix"],
    )


def _fast_ibip(text: str) -> Ibip | None:
    match = IBIP.fullmatch(text)
    if match is None:
        return None
    return Ibip(text=text, prefix=sys.intern(match["prefix"]), suffix=match["suffix"])


def parse_ibi(text: str) -> Ibi:
    """Parse an IBI in either form; :class:`IbiSyntaxError` if it is neither."""
    fast = _fast_repository(text) or _fast_ibip(text)
    if fast is not None:
        return fast
    repository, rep_cur = _whole(_repository, text)
    if repository is not None:
        return repository
    ibip, ibip_cur = _whole(_ibip, text)
    if ibip is not None:
        return ibip
    raise _blame(rep_cur, ibip_cur, 0)


def match_ibi(text: str, start: int = 0) -> tuple[Ibi, int]:
    """The longest IBI that begins at ``text[start]``, and the index just after it.

    What follows the IBI is left to the caller (a persistent URL goes on with modifiers,
    a path or a query).  Errors report positions in the whole ``text``.
    """
    rep_cur, ibip_cur = _Cursor(text, start), _Cursor(text, start)
    candidates = [
        (cur.pos, value)
        for value, cur in ((_repository(rep_cur), rep_cur), (_ibip(ibip_cur), ibip_cur))
        if value is not None
    ]
    if not candidates:
        raise _blame(rep_cur, ibip_cur, start)
    end, value = max(candidates, key=lambda candidate: candidate[0])
    return value, end


def ibi_key(text: str) -> str:
    """The canonical key of an IBI text (validated): lower case for a repository name,
    upper case for an IBIp."""
    return parse_ibi(text).key


def _host_name(cur: _Cursor) -> tuple[str, str] | None:
    """host = word "." subdomain   ; the input of Algorithm 1, split at its first dot"""
    first = _word(cur)
    if first is None or not cur.take("."):
        return None
    subdomain = _subdomain(cur)
    if subdomain is None:
        return None
    return first, subdomain


def split_host_name(host: str) -> tuple[str, str]:
    """Split a host name into its first word and the subdomain after it (Algorithm 1).

    ``mtc-m18.sid.inpe.br`` gives ``("mtc-m18", "sid.inpe.br")``; a host name of one word
    cannot name an identification subsystem and raises :class:`IbiSyntaxError`.
    """
    value, cur = _whole(_host_name, host)
    if value is None:
        raise cur.error("host name")
    return value
