"""Language and country codes (resolution-system-pt.txt, Appendix A, Table A.1).

The modifier ``+(pt-BR)``, the verb ``GetTranslation(pt-BR)`` and the relation
``.translation(pt-BR)`` name a translation by an ISO 639-1 language code (lower case)
and, optionally, an ISO 3166-1 alpha-2 country code (upper case)::

    language-tag = idioma ["-" pais]      ; pt , pt-BR
    idioma       = 2ALFAMI                ; one of LANGUAGES
    pais         = 2ALFAMA                ; one of COUNTRIES

Browsers state their preferences in the HTTP ``Accept-Language`` header (RFC 9110
§12.5.4); :func:`parse_accept_language` reads it and :func:`match_language` picks the
best available translation, as the resolver does for a bare ``+``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import IbiSyntaxError
from .facts import COUNTRIES, LANGUAGES  # Table A.1

__all__ = [
    "LANGUAGES",
    "COUNTRIES",
    "LanguageTag",
    "parse_language_tag",
    "match_language_tag",
    "parse_accept_language",
    "match_language",
]

# RFC 9110 §12.5.4: language-range = (1*8ALPHA *("-" 1*8alphanum)) / "*"
LANGUAGE_RANGE = re.compile(r"(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)")
# RFC 9110 §12.4.2: weight = OWS ";" OWS "q=" qvalue
WEIGHT = re.compile(r"[ \t]*;[ \t]*[qQ]=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)")
OWS = " \t"


@dataclass(frozen=True)
class LanguageTag:
    """A language of Table A.1, optionally with a country: ``pt`` or ``pt-BR``."""

    language: str
    country: str | None = None

    def __post_init__(self) -> None:
        # Built by hand (not parsed)?  Hold it to the same grammar.
        text = str(self)
        _idioma(text, 0, "language tag")
        if self.country is not None:
            _pais(text, 3, "language tag")

    def __str__(self) -> str:
        if self.country is None:
            return self.language
        return f"{self.language}-{self.country}"


def parse_language_tag(text: str) -> LanguageTag:
    """``language-tag = idioma ["-" pais]``: the whole of *text*, e.g. ``pt-BR``."""
    tag, end = match_language_tag(text)
    if end != len(text):
        expected = "end of language tag" if tag.country else "'-' or end of language tag"
        raise IbiSyntaxError(text, end, expected, "language tag")
    return tag


def match_language_tag(
    text: str, start: int = 0, what: str = "language tag"
) -> tuple[LanguageTag, int]:
    """``idioma ["-" pais]`` at ``text[start:]``; returns the tag and the index after it.

    Errors carry positions in the whole *text* and name *what* is being parsed, so a
    modifier such as ``+(xx)`` gets its caret under the ``x``.
    """
    language = _idioma(text, start, what)
    end = start + 2
    if text.startswith("-", end):
        return LanguageTag(language, _pais(text, end + 1, what)), end + 3
    return LanguageTag(language), end


def _idioma(text: str, start: int, what: str) -> str:
    """``idioma = 2ALFAMI`` restricted to the codes of Table A.1 (ISO 639-1)."""
    expected = "a lower-case letter (ISO 639-1 language code)"
    _two_letters(text, start, string.ascii_lowercase, expected, what)
    code = text[start : start + 2]
    if code not in LANGUAGES:
        raise IbiSyntaxError(text, start, "an ISO 639-1 language code (Table A.1)", what)
    return code


def _pais(text: str, start: int, what: str) -> str:
    """``pais = 2ALFAMA`` restricted to the codes of Table A.1 (ISO 3166-1 alpha-2)."""
    expected = "an upper-case letter (ISO 3166-1 country code)"
    _two_letters(text, start, string.ascii_uppercase, expected, what)
    code = text[start : start + 2]
    if code not in COUNTRIES:
        raise IbiSyntaxError(text, start, "an ISO 3166-1 country code (Table A.1)", what)
    return code


def _two_letters(text: str, start: int, letters: str, expected: str, what: str) -> None:
    for position in (start, start + 1):
        if position >= len(text) or text[position] not in letters:
            raise IbiSyntaxError(text, position, expected, what)


def parse_accept_language(header: str) -> list[tuple[str, float]]:
    """The language ranges of an HTTP ``Accept-Language`` header with their q-values.

    ``Accept-Language = #( language-range [ weight ] )`` (RFC 9110 §12.5.4).  Sorted by
    q descending, ties in header order.  Headers come from any browser or proxy, and
    RFC 9110 asks recipients to be lenient: malformed elements are skipped, not fatal.
    Ranges with ``q=0`` ("not acceptable") are left out; ``*`` is kept.
    """
    ranges: list[tuple[str, float]] = []
    for element in header.split(","):
        parsed = _accept_language_element(element.strip(OWS))
        if parsed is not None and parsed[1] > 0:
            ranges.append(parsed)
    return sorted(ranges, key=lambda item: -item[1])


def _accept_language_element(element: str) -> tuple[str, float] | None:
    """``language-range [weight]``; None when the element is empty or malformed."""
    match = LANGUAGE_RANGE.match(element)
    if match is None:
        return None
    rest = element[match.end() :]
    if not rest:
        return match.group(), 1.0
    weight = WEIGHT.fullmatch(rest.rstrip(OWS))
    if weight is None:
        return None
    return match.group(), float(weight.group(1))


def match_language(preferences: list[str], available: Iterable[str]) -> str | None:
    """The available tag that best meets *preferences* (most preferred first), or None.

    For each preference in turn: an available tag equal to it (case-insensitive); else
    one equal to its language part (``pt`` for ``pt-BR``); else one with the same
    language part (``pt-PT`` for ``pt-BR``).  ``*`` takes the first available tag.
    Ties go to the order of *available*; the tag is returned as written there.
    """
    candidates = list(available)
    for preference in preferences:
        found = _best_for(preference.lower(), candidates)
        if found is not None:
            return found
    return None


def _best_for(preference: str, candidates: list[str]) -> str | None:
    if preference == "*":
        return candidates[0] if candidates else None
    language = preference.split("-", 1)[0]
    tiers = (
        lambda tag: tag == preference,
        lambda tag: tag == language,
        lambda tag: tag.split("-", 1)[0] == language,
    )
    for tier in tiers:
        for candidate in candidates:
            if tier(candidate.lower()):
                return candidate
    return None
