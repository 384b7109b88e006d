"""Pair lists (Table 4.2) and query strings (Table 4.1): the wire formats of the standard.

Every answer of a resolver or Archive service is a *pair list*, ``text/plain``::

    lista-de-pares = par *(espaco par)          ; al {a2 a3} a4 a5
    par      = nome 1*SP valor
    nome     = palavra
    valor    = palavra | "{" lista "}"
    lista    = palavra 1*(SP palavra)
    espaco   = SP | CRLF                        ; LF accepted too (not by strict reading)
    palavra  = 1*caractere
    caractere = %x21-7A | %x7C | %x7E           ; printable ASCII but { and }

and every request is a URL whose query is ``name=value`` pairs joined by ``&``, with
the escapes of Table 4.1.  In both, other characters are written ``%hh``.

A value is a ``str`` (one word) or a ``tuple`` of ``str`` (a ``{...}`` list).  Only
non-ASCII characters are ``%hh`` on the wire (Table 4.2: ``Relat%f3rio``): a ``%``
followed by an ASCII code is the word's own text, so URL values such as
``.../doc/CCSDS%20643.0-B-1.pdf`` pass through unchanged, as in Example 7.2.  Reading
decodes ``%hh`` runs of bytes 80-FF (UTF-8 where valid, else ISO-8859-1) and keeps the
others literally; serialize → parse is the identity for words of printable ASCII and
non-ASCII characters.  A space, brace or control character inside one word is written
``%hh`` too (the grammar has no other way), and reads back as that escape.

On the wire (:func:`wire_text`) pairs are separated by CRLF, one pair a line as the
report prints its listings, with nothing after the last pair; the empty answer is zero
bytes.  ``parse_pairs(text, strict=True)`` reads exactly that grammar and nothing more.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from ..errors import IbiSyntaxError, UsageError
from .facts import QUERY_CHARACTER_CLASS
from .identifiers import parse_ibi

__all__ = [
    "Pair",
    "QueryPair",
    "serialize_pairs",
    "wire_text",
    "WIRE_SEPARATOR",
    "parse_pairs",
    "escape_word",
    "unescape_word",
    "PAIR_LIST_CHARSETS",
    "in_charset",
    "decode_percent",
    "ibi_forms",
    "parse_ibi_forms",
    "encode_query",
    "escape_query_value",
    "decode_query",
    "match_query",
]

Pair = tuple[str, str | tuple[str, ...]]

# caractere = %x21-7A | %x7C | %x7E   (Table 4.2)
CARACTERE = re.compile(r"[\x21-\x7a\x7c\x7e]")
# palavra = 1*caractere
PALAVRA = re.compile(r"[\x21-\x7a\x7c\x7e]+")
# caractere of a query (Table 6.1): %x21-25 | %x27-3C | %x3E-7E, that is printable ASCII
# but & and =.  '#' is left out too: in a URL it would start a fragment.
QUERY_CARACTERE = re.compile(QUERY_CHARACTER_CLASS)
HEXDIG = re.compile(r"[0-9A-Fa-f]{2}")

# pergunta with no escape at all: par *("&" par), par = 1*caractere "=" *caractere
_PLAIN_QUERY = re.compile(
    f"{QUERY_CHARACTER_CLASS}+={QUERY_CHARACTER_CLASS}*(?:&{QUERY_CHARACTER_CLASS}+={QUERY_CHARACTER_CLASS}*)*"
)

# pergunta whose every '%' begins a well-formed escape: decoded by the standard library
# (match_query, which points at what is wrong, reads the others)
_ESCAPED_RUN = (
    r"[\x21\x22\x24\x27-\x3c\x3e-\x7e]*(?:%[0-9A-Fa-f]{2}[\x21\x22\x24\x27-\x3c\x3e-\x7e]*)*"
)
_ESCAPED_PAIR = f"(?![=&]|$){_ESCAPED_RUN}={_ESCAPED_RUN}"
_ESCAPED_QUERY = re.compile(f"{_ESCAPED_PAIR}(?:&{_ESCAPED_PAIR})*")

# a query value with nothing to escape: printable ASCII but the specials below
_QUERY_PLAIN_VALUE = re.compile(r"[\x21\x22\x24\x27-\x2a\x2c-\x3c\x3e\x40-\x7e]*")

# Table 4.1: what a query value must escape, plus '#' (see QUERY_CARACTERE).
_QUERY_SPECIALS = frozenset(" %&+=?#")
SEPARATORS = (" ", "\n", "\r\n")


# ---------------------------------------------------------------------------------------
# %hh escapes


#: how an Archive's pair lists may write non-ASCII characters (archive.yaml
#: ``pair-list-charset``; Table 4.2 leaves "o sistema de codificação adotado" open)
PAIR_LIST_CHARSETS = ("utf-8", "iso-8859-1")


def escape_word(text: str, charset: str = "utf-8") -> str:
    """*text* as a ``palavra``: ``{``, ``}``, spaces, controls and non-ASCII characters
    written ``%hh`` (UTF-8 bytes, upper-case hex); ``%`` is a word character.

    With `charset` ``"iso-8859-1"`` a non-ASCII character ISO-8859-1 has is its one
    byte in lower-case hex, as Example 4.2 prints it (``Relat%f3rio``); one it lacks
    (``€``, ``—``) keeps its UTF-8 escapes, so that no character is lost."""
    if PALAVRA.fullmatch(text):
        return text  # the common case, one regex: nothing to escape
    return "".join(char if CARACTERE.fullmatch(char) else _percent(char, charset) for char in text)


def _percent(char: str, charset: str = "utf-8") -> str:
    if charset == "iso-8859-1" and 0x80 <= ord(char) <= 0xFF:
        return f"%{ord(char):02x}"
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))


def in_charset(pairs: Iterable[Pair], charset: str) -> list[Pair]:
    """`pairs` with the non-ASCII characters of their words, raw or already ``%hh`` (a
    URL's UTF-8 escapes), escaped in `charset` (see :func:`escape_word`); ASCII
    escapes such as ``%20`` stay as written."""
    if charset == "utf-8":
        return list(pairs)  # what serialize_pairs writes anyway

    def word(text: str) -> str:
        return escape_word(unescape_word(text), charset)

    return [
        (name, tuple(word(w) for w in value) if isinstance(value, tuple) else word(value))
        for name, value in pairs
    ]


def unescape_word(text: str) -> str:
    """Undo ``%hh`` escapes: runs that are valid UTF-8 decode as UTF-8, other bytes as
    ISO-8859-1 (``Relat%f3rio`` is ``Relatório``, as in Example 4.2)."""
    return decode_percent(text, 0, len(text), "word", keep_ascii=True)[0]


def decode_percent(
    text: str, start: int, end: int, what: str, keep_ascii: bool = False
) -> tuple[str, tuple[int, ...]]:
    """Decode ``text[start:end]``; also return, for each decoded character and for the
    end, its index in *text* (so that later errors can point into the raw text).
    With `keep_ascii` (pair-list words) an escape of an ASCII code stays as written."""
    out: list[tuple[str, int]] = []
    data = bytearray()
    offsets: list[int] = []
    position = start
    while position < end:
        if text[position] != "%":
            out += _decode_bytes(data, offsets)
            data, offsets = bytearray(), []
            out.append((text[position], position))
            position += 1
            continue
        if not HEXDIG.fullmatch(text[position + 1 : min(position + 3, end)]):
            if keep_ascii:  # '%' is a word character of its own (Table 4.2)
                out += _decode_bytes(data, offsets)
                data, offsets = bytearray(), []
                out.append(("%", position))
                position += 1
                continue
            raise IbiSyntaxError(text, position, "'%' followed by two hexadecimal digits", what)
        code = int(text[position + 1 : position + 3], 16)
        if keep_ascii and code < 0x80:
            out += _decode_bytes(data, offsets)
            data, offsets = bytearray(), []
            out += [(text[position + i], position + i) for i in range(3)]
            position += 3
            continue
        data.append(code)
        offsets.append(position)
        position += 3
    out += _decode_bytes(data, offsets)
    return "".join(char for char, _ in out), tuple([index for _, index in out] + [end])


def _decode_bytes(data: bytearray, offsets: list[int]) -> list[tuple[str, int]]:
    """UTF-8 where the bytes are UTF-8, ISO-8859-1 byte by byte elsewhere."""
    out = []
    index = 0
    while index < len(data):
        size = _utf8_size(data[index])
        try:
            char = bytes(data[index : index + size]).decode("utf-8")
        except UnicodeDecodeError:
            char, size = chr(data[index]), 1
        out.append((char, offsets[index]))
        index += size
    return out


def _utf8_size(lead: int) -> int:
    """Length of the UTF-8 sequence that *lead* would begin (1 when it begins none)."""
    for size, (low, high) in enumerate(((0xC2, 0xDF), (0xE0, 0xEF), (0xF0, 0xF4)), start=2):
        if low <= lead <= high:
            return size
    return 1


# ---------------------------------------------------------------------------------------
# Pair lists (Table 4.2)


def serialize_pairs(pairs: Iterable[Pair], separator: str = "\n") -> str:
    """``lista-de-pares``: ``name value`` for each pair, joined by *separator* (one of
    ``"\\n"``, ``" "``, ``"\\r\\n"``); no trailing separator.  A tuple value is written
    ``{w1 w2 ...}`` (``{}`` when empty)."""
    if separator not in SEPARATORS:
        raise UsageError(f"pair-list separator must be SP, LF or CRLF, not {separator!r}")
    return separator.join(_par(name, value) for name, value in pairs)


#: the separator of served pair lists: ``espaco = SP | CRLF``, a pair a line
WIRE_SEPARATOR = "\r\n"


def wire_text(pairs: Iterable[Pair]) -> str:
    """A pair list as served (Table 4.2): CRLF between pairs, nothing after the last;
    no pairs is the empty answer, zero bytes (Algorithm 2 returns ``""``)."""
    return serialize_pairs(pairs, WIRE_SEPARATOR)


def _par(name: str, value: str | tuple[str, ...]) -> str:
    """``par = nome 1*SP valor``."""
    if isinstance(value, tuple):
        shown = "{" + " ".join(_palavra(word, name) for word in value) + "}"
    else:
        shown = _palavra(value, name)
    return f"{_palavra(name, name)} {shown}"


def _palavra(text: str, name: str) -> str:
    if not isinstance(text, str) or not text:
        raise UsageError(f"pair {name!r}: names, values and list words must be non-empty str")
    return escape_word(text)


def parse_pairs(text: str, strict: bool = False) -> list[Pair]:
    """``lista-de-pares = par *(espaco par)``; ``espaco = SP | CRLF`` (LF too).

    The empty text is the empty list (the answer for an unknown IBI), and a final line
    ending is allowed (files end with one).  ``{}`` and one-word lists are accepted: the
    standard writes ``{}`` for an unidentified platform software.

    `strict` reads Table 4.2 to the letter, as a served answer must be: each separator
    exactly one SP or one CRLF (no bare LF) and nothing after the last pair.
    """
    pairs: list[Pair] = []
    end = len(text)
    for ending in () if strict else ("\r\n", "\n"):
        if text.endswith(ending):
            end -= len(ending)
            break
    position = 0
    while end > 0:
        pair, position = _pair(text, position, end)
        pairs.append(pair)
        if position == end:
            break
        position = _espaco(text, position, end, strict)
        if strict and position == end:
            raise IbiSyntaxError(
                text,
                position,
                "a pair after the separator (nothing may follow the last pair)",
                "pair list",
            )
    return pairs


def _pair(text: str, start: int, end: int) -> tuple[Pair, int]:
    """``par = nome 1*SP valor``."""
    name, position = _word(text, start, end, "a pair name")
    if not text.startswith(" ", position) or position >= end:
        raise IbiSyntaxError(text, position, _hint(text, position, "' '"), "pair list")
    while text.startswith(" ", position):
        position += 1
    if text.startswith("{", position):
        words, position = _lista(text, position + 1, end)
        return (name, words), position
    value, position = _word(text, position, end, "a value or '{'")
    return (name, value), position


def _lista(text: str, start: int, end: int) -> tuple[tuple[str, ...], int]:
    """``lista = palavra 1*(SP palavra)`` up to the closing ``}``."""
    words: list[str] = []
    position = start
    while not text.startswith("}", position) or position >= end:
        if words:
            if not text.startswith(" ", position) or position >= end:
                expected = _hint(text, position, "' ' or '}'")
                raise IbiSyntaxError(text, position, expected, "pair list")
            position += 1
        word, position = _word(text, position, end, "a word" if words else "a word or '}'")
        words.append(word)
    return tuple(words), position + 1


def _word(text: str, start: int, end: int, expected: str) -> tuple[str, int]:
    """``palavra = 1*caractere``, decoded."""
    match = PALAVRA.match(text, start, end)
    if match is None:
        raise IbiSyntaxError(text, start, _hint(text, start, expected), "pair list")
    word = match.group()
    if "%" not in word:
        return word, match.end()  # nothing to decode (most words)
    return decode_percent(text, start, match.end(), "pair list", keep_ascii=True)[0], match.end()


def _espaco(text: str, start: int, end: int, strict: bool = False) -> int:
    """``espaco = SP | CRLF``, or LF unless `strict`; returns the index after it."""
    for separator in (" ", "\r\n") if strict else (" ", "\r\n", "\n"):
        if text.startswith(separator, start) and start + len(separator) <= end:
            return start + len(separator)
    expected = (
        "one SP or CRLF, or end of pair list" if strict else "' ', a line break or end of pair list"
    )
    raise IbiSyntaxError(text, start, _hint(text, start, expected), "pair list")


def _hint(text: str, position: int, expected: str) -> str:
    """Say how to write a character the grammar has no room for."""
    char = text[position : position + 1]
    if char and not char.isascii():
        return f"{expected} (non-ASCII characters are written %hh)"
    return expected


# ---------------------------------------------------------------------------------------
# formas-de-ibi (Table 7.4)


def ibi_forms(rep: str | None = None, ibip: str | None = None) -> tuple[str, ...]:
    """``formas-de-ibi = forma-rep | forma-ibip | forma-rep " " forma-ibip``, as a list
    value: ``('rep', X, 'ibip', Y)`` is written ``{rep X ibip Y}``.

    With neither form the value is ``()``, written ``{}``: how the standard says
    "not identified" (``ibi.platformsoftware``, §7 Algorithm 2).
    """
    forms: tuple[str, ...] = ()
    if rep:
        forms += ("rep", rep)
    if ibip:
        forms += ("ibip", ibip)
    return forms


def parse_ibi_forms(value: str | tuple[str, ...]) -> dict[str, str]:
    """``formas-de-ibi`` from a pair value: ``{'rep': X, 'ibip': Y}`` (either or both,
    in that order), each checked against its grammar; ``{}`` for the empty list."""
    if not isinstance(value, tuple):
        raise IbiSyntaxError(str(value), 0, "'{'", "formas-de-ibi")
    text = "{" + " ".join(value) + "}"
    forms: dict[str, str] = {}
    position, rest = 1, list(value)
    for key, form in (("rep", "repository"), ("ibip", "ibip")):
        if rest[:1] != [key]:
            continue
        if len(rest) < 2:
            raise IbiSyntaxError(text, position + len(key), "' ' and an IBI", "formas-de-ibi")
        _check_form(text, position + len(key) + 1, rest[1], form)
        forms[key] = rest[1]
        position += len(key) + len(rest[1]) + 2
        rest = rest[2:]
    if rest:
        later = {0: "'rep', 'ibip' or '}'", 1: "'ibip' or '}'", 2: "'}'"}
        done = 2 if "ibip" in forms else len(forms)
        raise IbiSyntaxError(text, position, later[done], "formas-de-ibi")
    return forms


def _check_form(text: str, start: int, ibi: str, form: str) -> None:
    """``forma-rep = "rep " repositorio``; ``forma-ibip = "ibip " IBIp``."""
    try:
        parsed = parse_ibi(ibi)
    except IbiSyntaxError as error:
        position = start + error.position
        raise IbiSyntaxError(text, position, error.expected, "formas-de-ibi") from None
    if parsed.form != form:
        expected = "a repository name" if form == "repository" else "an IBIp"
        raise IbiSyntaxError(text, start, expected, "formas-de-ibi")


# ---------------------------------------------------------------------------------------
# Query strings (Tables 4.1 and 6.1)


@dataclass(frozen=True)
class QueryPair:
    """One ``name=value`` of a query, decoded, with where it sits in the raw text:
    ``start`` is the index of its name, ``value_positions[i]`` that of ``value[i]`` (the
    last entry is the index after the value)."""

    name: str
    value: str
    start: int
    value_positions: tuple[int, ...]


def encode_query(pairs: Iterable[tuple[str, str | tuple[str, ...]]]) -> str:
    """``name=value`` pairs joined by ``&``, escaped per Table 4.1 (space ``%20``,
    ``%`` ``%25``, ``&`` ``%26``, ``+`` ``%2B``, ``=`` ``%3D``, ``?`` ``%3F``; also ``#``
    and everything outside printable ASCII, as UTF-8 ``%hh``).  A tuple value is its
    words joined by spaces (``ibi=rep%20X%20ibip%20Y``, Example 6.9)."""
    return "&".join(
        f"{escape_query_value(name)}={escape_query_value(_joined(value))}" for name, value in pairs
    )


def _joined(value: str | tuple[str, ...]) -> str:
    return " ".join(value) if isinstance(value, tuple) else value


def escape_query_value(text: str) -> str:
    """One query name or value, escaped as :func:`encode_query` escapes it."""
    if _QUERY_PLAIN_VALUE.fullmatch(text):
        return text  # nothing to escape (most values)
    return "".join(
        _percent(char) if char in _QUERY_SPECIALS or not "\x21" <= char <= "\x7e" else char
        for char in text
    )


def decode_query(qs: str) -> list[tuple[str, str]]:
    """``pergunta = [par *("&" par)]``, ``par = nome "=" valor`` (Table 6.1), decoded.

    ``+`` is a plus sign, not a space: verb lists use it (``GetLastEdition+GetMetadata``).
    """
    if "%" not in qs and _PLAIN_QUERY.fullmatch(qs):
        # nothing escaped: the pairs are the text itself (what the service mostly gets)
        return [(name, value) for name, _, value in map(_split_pair, qs.split("&"))] if qs else []
    if _ESCAPED_QUERY.fullmatch(qs):  # decode_percent's answer, in C (acknowledgments)
        return [
            (_unquote(name), _unquote(value))
            for name, value in (pair.split("=", 1) for pair in qs.split("&"))
        ]
    return [(pair.name, pair.value) for pair in match_query(qs)]


def _split_pair(pair: str) -> tuple[str, str, str]:
    return pair.partition("=")


def _unquote(text: str) -> str:
    """:func:`decode_percent` of well-formed `text`: UTF-8 where the bytes are UTF-8,
    ISO-8859-1 byte by byte elsewhere."""
    if "%" not in text:
        return text
    return unquote_to_bytes(text).decode("utf-8", "ibistatic-latin-1")


def _latin_1_byte(error: UnicodeError) -> tuple[str, int]:
    """The first byte of a sequence that is no UTF-8, as ISO-8859-1; then decode on."""
    assert isinstance(error, UnicodeDecodeError)  # registered for decoding only
    return chr(error.object[error.start]), error.start + 1


codecs.register_error("ibistatic-latin-1", _latin_1_byte)


def match_query(text: str, start: int = 0, what: str = "query string") -> list[QueryPair]:
    """The query pairs of ``text[start:]``; errors point into the whole *text*."""
    pairs: list[QueryPair] = []
    position = start
    while position < len(text):
        if pairs:
            position += 1  # the '&' that ended the previous pair
        pair, position = _query_pair(text, position, what)
        pairs.append(pair)
    return pairs


def _query_pair(text: str, start: int, what: str) -> tuple[QueryPair, int]:
    """``par = nome "=" valor``; ``nome = 1*caractere``; ``valor = *caractere``."""
    equals = _query_chars(text, start, what)
    if equals == start:
        raise IbiSyntaxError(text, start, "a pair name", what)
    if not text.startswith("=", equals):
        raise IbiSyntaxError(text, equals, "'='", what)
    name = decode_percent(text, start, equals, what)[0]
    end = _query_chars(text, equals + 1, what)
    if end < len(text) and text[end] != "&":
        raise IbiSyntaxError(text, end, "'&' or end of query", what)
    value, positions = decode_percent(text, equals + 1, end, what)
    return QueryPair(name, value, start, positions), end


def _query_chars(text: str, start: int, what: str) -> int:
    """The index after the run of query ``caractere`` at *start*."""
    position = start
    while position < len(text) and QUERY_CARACTERE.fullmatch(text[position]):
        position += 1
    if position < len(text) and text[position] not in "&=":
        expected = "a query character ('#', space and non-ASCII are written %hh)"
        raise IbiSyntaxError(text, position, expected, what)
    return position
