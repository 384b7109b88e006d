"""Language tags, Table A.1 and Accept-Language (ibistatic.core.languages)."""

from __future__ import annotations

import pytest

from ibistatic.core.languages import (
    COUNTRIES,
    LANGUAGES,
    LanguageTag,
    match_language,
    match_language_tag,
    parse_accept_language,
    parse_language_tag,
)
from ibistatic.errors import IbiSyntaxError

# --- Table A.1 --------------------------------------------------------------------------


def test_table_a1_sizes():
    # 19 printed lines of languages (18 x 10 + 5), 25 of countries (24 x 10 + 9).
    assert len(LANGUAGES) == 185
    assert len(COUNTRIES) == 249


@pytest.mark.parametrize(
    "ocr, code",
    [
        ("pbh", "bh"),
        ("or", "br"),
        ("ecr", "cr"),
        ("k1", "kl"),
        ("ku (2nd)", "kw"),
        ("1b", "lb"),
        ("s1", "sl"),
        ("£", "ff"),
        ("£j", "fj"),
        ("Meu", "eu"),
        ("sk (2nd)", "sh"),
    ],
)
def test_ocr_slips_of_languages_are_fixed(ocr, code):
    assert code in LANGUAGES


@pytest.mark.parametrize(
    "code", ["BR", "PT", "US", "FR", "MF", "PN", "SS", "SX", "CW", "BQ", "IO", "ID"]
)
def test_countries_present(code):
    assert code in COUNTRIES


@pytest.mark.parametrize("code", ["mo", "xx", "iw", "ji", "in"])
def test_languages_absent(code):
    # mo was withdrawn in 2008; iw, ji, in are the pre-1989 codes of he, yi, id.
    assert code not in LANGUAGES


@pytest.mark.parametrize("code", ["AN", "XK", "UK", "EU", "ZZ"])
def test_countries_absent(code):
    assert code not in COUNTRIES


def test_codes_are_two_letters_in_the_right_case():
    assert all(len(c) == 2 and c.isascii() and c.islower() for c in LANGUAGES)
    assert all(len(c) == 2 and c.isascii() and c.isupper() for c in COUNTRIES)


# --- language tags ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, language, country",
    [
        ("pt", "pt", None),
        ("pt-BR", "pt", "BR"),
        ("en", "en", None),
        ("wa", "wa", None),
        ("en-GB", "en", "GB"),
        ("zh-TW", "zh", "TW"),
    ],
)
def test_parse_language_tag(text, language, country):
    tag = parse_language_tag(text)
    assert tag == LanguageTag(language, country)
    assert str(tag) == text


FAILURES = [
    ("xx", 0, "an ISO 639-1 language code (Table A.1)"),
    ("PT", 0, "a lower-case letter (ISO 639-1 language code)"),
    ("pT", 1, "a lower-case letter (ISO 639-1 language code)"),
    ("pt-br", 3, "an upper-case letter (ISO 3166-1 country code)"),
    ("pt-XX", 3, "an ISO 3166-1 country code (Table A.1)"),
    ("pt-B", 4, "an upper-case letter (ISO 3166-1 country code)"),
    ("pt-BRA", 5, "end of language tag"),
    ("ptx", 2, "'-' or end of language tag"),
    ("pt_BR", 2, "'-' or end of language tag"),
    ("p", 1, "a lower-case letter (ISO 639-1 language code)"),
    ("", 0, "a lower-case letter (ISO 639-1 language code)"),
]


@pytest.mark.parametrize("text, position, expected", FAILURES)
def test_parse_language_tag_failures(text, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_language_tag(text)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "language tag",
    )


def test_failure_message_is_exact():
    with pytest.raises(IbiSyntaxError) as info:
        parse_language_tag("pt-XX")
    assert str(info.value) == (
        "invalid language tag 'pt-XX': expected an ISO 3166-1 country code (Table A.1) "
        "at character 4, found 'X'\n"
        "    pt-XX\n"
        "       ^"
    )


def test_match_language_tag_reports_positions_in_the_whole_text():
    assert match_language_tag("+(pt-BR)", 2) == (LanguageTag("pt", "BR"), 7)
    with pytest.raises(IbiSyntaxError) as info:
        match_language_tag("X+(xx)", 3, "modifier")
    assert (info.value.text, info.value.position, info.value.what) == ("X+(xx)", 3, "modifier")


@pytest.mark.parametrize(
    "language, country", [("xx", None), ("pt", "br"), ("PT", None), ("pt", "XX")]
)
def test_language_tag_built_by_hand_is_checked(language, country):
    with pytest.raises(IbiSyntaxError):
        LanguageTag(language, country)


# --- Accept-Language --------------------------------------------------------------------

ACCEPT_LANGUAGE = [
    # Tables 6.7 and §8.2 of the resolution report
    ("pt-BR,fr;q=0.8,en;q=0.5,pt;q=0.3", [("pt-BR", 1.0), ("fr", 0.8), ("en", 0.5), ("pt", 0.3)]),
    # Example 6.8 as OCR'd ("9=" for "q="): the broken element is skipped, not fatal
    ("pt-br,fr;q=0.8,en;9=0.5,pt;q=0.3", [("pt-br", 1.0), ("fr", 0.8), ("pt", 0.3)]),
    ("", []),
    ("*", [("*", 1.0)]),
    ("en;q=0.5, *;q=0.1, de", [("de", 1.0), ("en", 0.5), ("*", 0.1)]),
    ("fr;q=0.7,en;q=0.7,de;q=0.7", [("fr", 0.7), ("en", 0.7), ("de", 0.7)]),  # stable
    ("en ; q=0.5 ,\tfr", [("fr", 1.0), ("en", 0.5)]),
    ("en;q=0, fr", [("fr", 1.0)]),  # q=0: not acceptable
    ("en;q=1.000,fr;q=0.001", [("en", 1.0), ("fr", 0.001)]),
    ("en;q=1.5,fr;q=0.0001,de;q=x,it;level=1,12,pt", [("pt", 1.0)]),
    ("zh-Hant-TW,,  ,en-US", [("zh-Hant-TW", 1.0), ("en-US", 1.0)]),
    ("toolonglanguage,en", [("en", 1.0)]),
]


@pytest.mark.parametrize("header, expected", ACCEPT_LANGUAGE)
def test_parse_accept_language(header, expected):
    assert parse_accept_language(header) == expected


MATCHES = [
    (["pt-BR"], ["en", "pt"], "pt"),  # the language part
    (["pt-BR"], ["en", "pt", "pt-BR"], "pt-BR"),  # exact first
    (["pt-br"], ["pt-BR"], "pt-BR"),  # case-insensitive, returned as written
    (["pt-BR"], ["pt-PT"], "pt-PT"),  # same language, other country
    (["pt-BR"], ["pt-PT", "pt"], "pt"),  # the bare language beats another country
    (["fr", "en"], ["en", "pt"], "en"),  # preferences in order
    (["de"], ["en", "pt"], None),
    (["*"], ["pt", "en"], "pt"),
    (["de", "*"], ["pt", "en"], "pt"),
    ([], ["pt"], None),
    (["pt"], [], None),
    (["pt"], ["pt-BR", "pt-PT"], "pt-BR"),  # ties: order of available
]


@pytest.mark.parametrize("preferences, available, expected", MATCHES)
def test_match_language(preferences, available, expected):
    assert match_language(preferences, available) == expected


def test_match_language_takes_any_iterable():
    assert match_language(["en"], (tag for tag in ["pt", "en"])) == "en"


def test_accept_language_feeds_match_language():
    preferences = [tag for tag, _ in parse_accept_language("pt-BR,fr;q=0.8,en;q=0.5,pt;q=0.3")]
    assert match_language(preferences, ["en", "pt"]) == "pt"
    assert match_language(preferences, ["en", "fr"]) == "fr"
