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

__all__ = [
    "LANGUAGES",
    "COUNTRIES",
    "LanguageTag",
    "parse_language_tag",
    "match_language_tag",
    "parse_accept_language",
    "match_language",
]

# Table A.1 "idioma", transcribed line by line (ten codes a line, as printed) and checked
# against ISO 639-1: the OCR'd "pbh", "or", "ecr", "k1", the second "ku", "1b", "s1"...
# are bh, br, cr, kl, kw, lb, sl.  The table is the 2011 list: it has "sh" but not "mo".
LANGUAGES: frozenset[str] = frozenset(
    """
    aa ab ae af ak am an ar as av
    ay az ba be bg bh bi bm bn bo
    br bs ca ce ch co cr cs cu cv
    cy da de dv dz ee el en eo es
    et eu fa ff fi fj fo fr fy ga
    gd gl gn gu gv ha he hi ho hr
    ht hu hy hz ia id ie ig ii ik
    io is it iu ja jv ka kg ki kj
    kk kl km kn ko kr ks ku kv kw
    ky la lb lg li ln lo lt lu lv
    mg mh mi mk ml mn mr ms mt my
    na nb nd ne ng nl nn no nr nv
    ny oc oj om or os pa pi pl ps
    pt qu rm rn ro ru rw sa sc sd
    se sg sh si sk sl sm sn so sq
    sr ss st su sv sw ta te tg th
    ti tk tl tn to tr ts tt tw ty
    ug uk ur uz ve vi vo wa wo xh
    yi yo za zh zu
    """.split()
)

# Table A.1 "pais": ISO 3166-1 alpha-2 as of 2011 (249 codes, with BQ, CW, SS and SX;
# without AN).  OCR slips such as "ME" for MF and "Ilell" for PN fixed against ISO.
COUNTRIES: frozenset[str] = frozenset(
    """
    AD AE AF AG AI AL AM AO AQ AR
    AS AT AU AW AX AZ BA BB BD BE
    BF BG BH BI BJ BL BM BN BO BQ
    BR BS BT BV BW BY BZ CA CC CD
    CF CG CH CI CK CL CM CN CO CR
    CU CV CW CX CY CZ DE DJ DK DM
    DO DZ EC EE EG EH ER ES ET FI
    FJ FK FM FO FR GA GB GD GE GF
    GG GH GI GL GM GN GP GQ GR GS
    GT GU GW GY HK HM HN HR HT HU
    ID IE IL IM IN IO IQ IR IS IT
    JE JM JO JP KE KG KH KI KM KN
    KP KR KW KY KZ LA LB LC LI LK
    LR LS LT LU LV LY MA MC MD ME
    MF MG MH MK ML MM MN MO MP MQ
    MR MS MT MU MV MW MX MY MZ NA
    NC NE NF NG NI NL NO NP NR NU
    NZ OM PA PE PF PG PH PK PL PM
    PN PR PS PT PW PY QA RE RO RS
    RU RW SA SB SC SD SE SG SH SI
    SJ SK SL SM SN SO SR SS ST SV
    SX SY SZ TC TD TF TG TH TJ TK
    TL TM TN TO TR TT TV TW TZ UA
    UG UM US UY UZ VA VC VE VG VI
    VN VU WF WS YE YT ZA ZM ZW
    """.split()
)

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
