"""The two written forms of an IBI: grammars of Tables 6.1 and 7.1 (identification system)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.core import identifiers
from ibistatic.core.identifiers import (
    Ibip,
    RepositoryName,
    ibi_key,
    match_ibi,
    parse_ibi,
    parse_ibip,
    parse_repository_name,
    split_host_name,
)
from ibistatic.errors import IbiSyntaxError

# (text, subdomain, word, port, port separator, suffix, the four parts)
REPOSITORY_NAMES = [
    # the standard's own vectors first
    (
        "sid.inpe.br/mtc-m19/2013/09.04.12.27.57",
        "sid.inpe.br",
        "mtc-m19",
        None,
        "",
        "2013/09.04.12.27.57",
        ("sid.inpe.br", "mtc-m19", "2013", "09.04.12.27.57"),
    ),
    (
        "sid.inpe.br/mtc-m19/2010/08.25.12.38",
        "sid.inpe.br",
        "mtc-m19",
        None,
        "",
        "2010/08.25.12.38",
        ("sid.inpe.br", "mtc-m19", "2010", "08.25.12.38"),
    ),
    (
        "sid.inpe.br/mtc-m18@80/2009/02.16.17.46",
        "sid.inpe.br",
        "mtc-m18",
        80,
        "@",
        "2009/02.16.17.46",
        ("sid.inpe.br", "mtc-m18@80", "2009", "02.16.17.46"),
    ),  # Example 1 of chapter 5
    (
        "sid.INPE.br/MTC-m18@80/2009/02.16.17.46",
        "sid.INPE.br",
        "MTC-m18",
        80,
        "@",
        "2009/02.16.17.46",
        ("sid.INPE.br", "MTC-m18@80", "2009", "02.16.17.46"),
    ),
    (
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
        "sid.inpe.br",
        "mtc-m18",
        80,
        "@",
        "2009/07.21.13.23.47",
        ("sid.inpe.br", "mtc-m18@80", "2009", "07.21.13.23.47"),
    ),
    (
        "dpi.inpe.br/banon/1998/08.02.08.56",
        "dpi.inpe.br",
        "banon",
        None,
        "",
        "1998/08.02.08.56",
        ("dpi.inpe.br", "banon", "1998", "08.02.08.56"),
    ),
    (
        "sid.inpe.br/mtc-m18/2010/10.20.15.21.55",
        "sid.inpe.br",
        "mtc-m18",
        None,
        "",
        "2010/10.20.15.21.55",
        ("sid.inpe.br", "mtc-m18", "2010", "10.20.15.21.55"),
    ),  # Table 6.2
    # our own
    (
        "sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06.394",
        "sid.inpe.br",
        "mtc-m18",
        8080,
        ".",
        "2010/10.20.15.14.06.394",
        ("sid.inpe.br", "mtc-m18.8080", "2010", "10.20.15.14.06.394"),
    ),
    (
        "sid.inpe.br./mtc-m18/2010/10.20.15.14",
        "sid.inpe.br.",
        "mtc-m18",
        None,
        "",
        "2010/10.20.15.14",
        ("sid.inpe.br.", "mtc-m18", "2010", "10.20.15.14"),
    ),
    (
        "b/8/12345/01.02.03.04.00.5",
        "b",
        "8",
        None,
        "",
        "12345/01.02.03.04.00.5",
        ("b", "8", "12345", "01.02.03.04.00.5"),
    ),
    (
        "x-1.a--b/9a-b@007/2009/99.99.99.99",
        "x-1.a--b",
        "9a-b",
        7,
        "@",
        "2009/99.99.99.99",
        ("x-1.a--b", "9a-b@007", "2009", "99.99.99.99"),
    ),
]

IBIPS = [
    ("8JMKD3MGP8W/34PGRBS", "8JMKD3MGP8W", "34PGRBS"),  # Example 2 of chapter 5
    ("8jmkd3mgp8w/34pgrbs", "8jmkd3mgp8w", "34pgrbs"),
    ("8JMKD3MGP7W/3EPGUE5", "8JMKD3MGP7W", "3EPGUE5"),
    ("8JMKD3MGP7W/385N5PE", "8JMKD3MGP7W", "385N5PE"),  # Table 7.1
    ("LK47B6W/362SFKH", "LK47B6W", "362SFKH"),  # Example 6.8
    ("J8LNKB5R7W/3FUQHC5", "J8LNKB5R7W", "3FUQHC5"),  # the resolver service
    ("8JMKD3MGP3W34T/47AF772", "8JMKD3MGP3W34T", "47AF772"),  # port 808: what INPE prints today
    ("2W/3W4", "2W", "3W4"),  # Algorithms 5-7 shape alone: IP, W, no port; seconds, W, fraction
    ("2x2/3", "2x2", "3"),  # X for IPv6 (decoding is stricter)
]


@pytest.mark.parametrize("text, subdomain, word, port, separator, suffix, parts", REPOSITORY_NAMES)
def test_repository_names(text, subdomain, word, port, separator, suffix, parts):
    for value in (parse_repository_name(text), parse_ibi(text)):
        assert isinstance(value, RepositoryName)
        assert (value.text, value.subdomain, value.word) == (text, subdomain, word)
        assert (value.port, value.port_separator, value.suffix) == (port, separator, suffix)
        assert value.parts == parts
        assert value.prefix == "/".join(parts[:2])
        assert value.form == "repository"
        assert value.key == text.lower()
        assert str(value) == text


@pytest.mark.parametrize("text, prefix, suffix", IBIPS)
def test_ibips(text, prefix, suffix):
    for value in (parse_ibip(text), parse_ibi(text)):
        assert isinstance(value, Ibip)
        assert (value.text, value.prefix, value.suffix) == (text, prefix, suffix)
        assert value.form == "ibip"
        assert value.key == text.upper()
        assert str(value) == text


def test_case_never_matters():
    upper = parse_ibi("sid.INPE.br/MTC-m18@80/2009/02.16.17.46")
    lower = parse_ibi("sid.inpe.br/mtc-m18@80/2009/02.16.17.46")
    assert upper == lower and hash(upper) == hash(lower) and len({upper, lower}) == 1
    assert upper.text != lower.text  # the text is kept as given
    assert parse_ibi("8jmkd3mgp8w/34pgrbs") == parse_ibi("8JMKD3MGP8W/34PGRBS")
    assert parse_ibi("8JMKD3MGP8W/34PGRBS") != parse_ibi("8JMKD3MGP8W/34PGRBT")
    assert parse_ibi("sid.inpe.br/mtc-m18/2009/02.16.17.46") != parse_ibi(
        "sid.inpe.br/mtc-m18@80/2009/02.16.17.46"
    )
    assert parse_ibi("8JMKD3MGP8W/34PGRBS") != "8JMKD3MGP8W/34PGRBS"


def test_forms_never_equal():
    repository = parse_ibi("a/b/2009/01.02.03.04")
    ibip = Ibip(
        text="a/b/2009/01.02.03.04", prefix="a", suffix="b"
    )  # built by hand: same key case aside
    assert repository != ibip


@pytest.mark.parametrize(
    "text, key",
    [
        ("sid.INPE.br/MTC-m18@80/2009/02.16.17.46", "sid.inpe.br/mtc-m18@80/2009/02.16.17.46"),
        ("8jmkd3mgp8w/34pgrbs", "8JMKD3MGP8W/34PGRBS"),
    ],
)
def test_ibi_key(text, key):
    assert ibi_key(text) == key


def _caret(text: str, position: int) -> str:
    return f"\n    {text}\n    {' ' * position}^"


LETTER_DIGIT_HYPHEN = "a letter, a digit or '-'"
IBIP_DIGIT = "an IBIp digit (2-9, A-H, J-N, P-U)"

# (text, position of the caret, what was expected there) for parse_ibi
BAD_IBIS = [
    ("sid.inpe.br/mtc m18/2009", 15, "a letter, a digit, '-', '.', '@' or '/'"),
    ("", 0, "a letter or a digit"),
    ("/mtc/2009/01.02.03.04", 0, "a letter or a digit"),
    ("-sid.br/mtc/2009/01.02.03.04", 0, "a letter or a digit"),
    ("sid.inpe.br/mtc-/2009/01.02.03.04", 16, LETTER_DIGIT_HYPHEN),
    ("sid.inpe.br/-mtc/2009/01.02.03.04", 12, "a letter or a digit"),
    (
        "inpe.123/mtc/2009/01.02.03.04",
        8,
        "a letter, a digit, '-' or '.'",
    ),  # last-word begins with a letter
    ("sid..br/mtc/2009/01.02.03.04", 4, "a letter, a digit or '/'"),  # "sid./" would do
    ("sid.inpe.br/mtc.x/2009/01.02.03.04", 16, "a digit"),
    ("sid.inpe.br/mtc@/2009/01.02.03.04", 16, "a digit"),
    ("sid.inpe.br/mtc/200/01.02.03.04", 19, "a digit"),
    ("sid.inpe.br/mtc/2009/1.02.03.04", 22, "a digit"),
    ("sid.inpe.br/mtc/2009/01-02.03.04", 23, "'.'"),
    ("sid.inpe.br/mtc/2009/01.02.03", 29, "'.'"),
    ("sid.inpe.br/mtc/2009/01.02.03.04.5", 34, "a digit"),
    ("sid.inpe.br/mtc/2009/01.02.03.04.05.", 36, "a digit"),
    ("sid.inpe.br/mtc/2009/01.02.03.04.05.6x", 37, "a digit or end of input"),
    ("sid.inpe.br/mtc/2009/01.02.03.04/file.pdf", 32, "'.' or end of input"),
    ("sid.inpe.br/mtc/2009/01.02.03.04 ", 32, "'.' or end of input"),
    ("sid.inpe.br/mtç/2009/01.02.03.04", 14, "a letter, a digit, '-', '.', '@' or '/'"),
    ("8JMKD3MGP8W", 11, f"{IBIP_DIGIT} or '/'"),
    ("8JMKD3MGP8W/", 12, IBIP_DIGIT),
    ("8JMKD3MGP8W/34PGRBS!", 19, f"{IBIP_DIGIT}, 'W' or end of input"),
    ("8JMKD3MGP8W/34PGRBSO", 19, f"{IBIP_DIGIT}, 'W' or end of input"),
    ("8JMKD3MGP8W/34PG/RBS", 16, f"{IBIP_DIGIT}, 'W' or end of input"),
]


@pytest.mark.parametrize("text, position, expected", BAD_IBIS)
def test_bad_ibis(text, position, expected):
    with pytest.raises(IbiSyntaxError) as caught:
        parse_ibi(text)
    found = "end of input" if position >= len(text) else repr(text[position])
    assert str(caught.value) == (
        f"invalid IBI {text!r}: expected {expected} at character {position + 1}, found {found}"
        + _caret(text, position)
    )
    assert (caught.value.position, caught.value.expected) == (position, expected)
    assert caught.value.exit_code == 2


def test_the_message_of_the_design_document():
    with pytest.raises(IbiSyntaxError) as caught:
        parse_ibi("sid.inpe.br/mtc m18/2009")
    assert str(caught.value) == (
        "invalid IBI 'sid.inpe.br/mtc m18/2009': expected a letter, a digit, '-', '.', '@' or '/'"
        " at character 16, found ' '\n"
        "    sid.inpe.br/mtc m18/2009\n"
        "                   ^"
    )


def test_one_form_only():
    with pytest.raises(IbiSyntaxError) as caught:
        parse_repository_name("8JMKD3MGP8W/34PGRBS")
    assert str(caught.value).startswith(
        "invalid repository name '8JMKD3MGP8W/34PGRBS': expected a letter, a digit, '-' or '.' at character 12"
    )
    with pytest.raises(IbiSyntaxError) as caught:
        parse_ibip("sid.inpe.br/mtc-m18/2009/02.16.17.46")
    assert str(caught.value).startswith(
        f"invalid IBIp 'sid.inpe.br/mtc-m18/2009/02.16.17.46': expected {IBIP_DIGIT}, 'W' or 'X' "
        "at character 2, found 'i'"
    )


# (text, start, the IBI found, index after it)
MATCHES = [
    ("http://h/8JMKD3MGP8W/35MMLL8!:(oai_dc)", 9, "8JMKD3MGP8W/35MMLL8", 28),
    (
        "http://h/sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/file.pdf",
        9,
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
        51,
    ),
    ("sid.inpe.br/mtc-m18/2012/07.12.18.08", 0, "sid.inpe.br/mtc-m18/2012/07.12.18.08", 36),
    ("sid.inpe.br/mtc-m18/2012/07.12.18.08+(pt-BR)", 0, "sid.inpe.br/mtc-m18/2012/07.12.18.08", 36),
    ("LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original", 0, "LK47B6W/362SFKH", 15),
    ("8JMKD3MGP8W/35MME4E/reference.bib", 0, "8JMKD3MGP8W/35MME4E", 19),
    # an optional part that does not complete is left to the caller
    ("a.b/c/2009/01.02.03.04.5", 0, "a.b/c/2009/01.02.03.04", 22),
    ("a.b/c/2009/01.02.03.04.05.x", 0, "a.b/c/2009/01.02.03.04.05", 25),
    ("2w/c.x/2009/01.02.03.04", 0, "2w/c", 4),  # not a repository name ("c.x"): an IBIp
    ("ab/cd/2009/01.02.03.04", 0, "ab/cd/2009/01.02.03.04", 22),  # the longest of the two forms
    ("2w/cd/2009", 0, "2w/cd", 5),
]


@pytest.mark.parametrize("text, start, ibi, end", MATCHES)
def test_match_ibi(text, start, ibi, end):
    value, stop = match_ibi(text, start)
    assert (value.text, stop) == (ibi, end)
    assert text[start:stop] == ibi


def test_match_ibi_reports_positions_in_the_whole_text():
    text = "http://h/sid.inpe.br/mtc m18/2009"
    with pytest.raises(IbiSyntaxError) as caught:
        match_ibi(text, 9)
    assert caught.value.position == 24
    assert str(caught.value) == (
        f"invalid IBI {text!r}: expected a letter, a digit, '-', '.', '@' or '/' at character 25, found ' '"
        + _caret(text, 24)
    )


@pytest.mark.parametrize(
    "host, first, subdomain",
    [
        ("mtc-m18.sid.inpe.br", "mtc-m18", "sid.inpe.br"),
        ("MTC-m18.sid.INPE.br", "MTC-m18", "sid.INPE.br"),
        ("www.example.org.", "www", "example.org."),
        ("a.b", "a", "b"),
    ],
)
def test_split_host_name(host, first, subdomain):
    assert split_host_name(host) == (first, subdomain)


@pytest.mark.parametrize(
    "host, position, expected",
    [
        ("localhost", 9, "a letter, a digit, '-' or '.'"),
        ("150.163.34.243", 14, "a letter, a digit, '-' or '.'"),
        ("mtc m18.sid.inpe.br", 3, "a letter, a digit, '-' or '.'"),
        ("mtc-m18.sid.inpe.br/", 19, "a letter, a digit, '-', '.' or end of input"),
    ],
)
def test_bad_host_names(host, position, expected):
    with pytest.raises(IbiSyntaxError) as caught:
        split_host_name(host)
    assert (caught.value.what, caught.value.position, caught.value.expected) == (
        "host name",
        position,
        expected,
    )


# --- properties ------------------------------------------------------------------------

word = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9-]{0,6}[A-Za-z0-9])?", fullmatch=True)
last_word = st.from_regex(r"[A-Za-z]([A-Za-z0-9-]{0,6}[A-Za-z0-9])?", fullmatch=True)
suffix = st.from_regex(
    r"[0-9]{4,5}/[0-9]{2}\.[0-9]{2}\.[0-9]{2}\.[0-9]{2}(\.[0-9]{2}(\.[0-9]{1,6})?)?", fullmatch=True
)


@st.composite
def repository_texts(draw):
    labels = draw(st.lists(word, max_size=3)) + [draw(last_word)]
    subdomain = ".".join(labels) + draw(st.sampled_from(["", "."]))
    port = draw(st.sampled_from(["", ".80", "@80", ".8080", "@1"]))
    return f"{subdomain}/{draw(word)}{port}/{draw(suffix)}"


@given(repository_texts(), st.sampled_from(["", "!", "+:", "/file.pdf", "?a=b", ":(oai_dc)"]))
def test_valid_repository_names_round_trip(text, tail):
    value = parse_ibi(text)
    assert isinstance(value, RepositoryName) and value.text == text
    assert "/".join(value.parts) == text
    assert match_ibi("http://x/" + text + tail, 9) == (value, 9 + len(text))


@given(
    st.from_regex(
        r"[2-9A-HJ-NP-Ua-hj-np-u]+[WXwx][2-9A-HJ-NP-Ua-hj-np-u]*/[2-9A-HJ-NP-Ua-hj-np-u]+(?:[Ww][2-9A-HJ-NP-Ua-hj-np-u]+)?",
        fullmatch=True,
    )
)
def test_valid_ibips_round_trip(text):
    value = parse_ibi(text)
    assert isinstance(value, Ibip) and f"{value.prefix}/{value.suffix}" == text


def _only_syntax_errors(call, text):
    try:
        call()
    except IbiSyntaxError as error:
        assert error.text == text and 0 <= error.position <= len(text)
        # The text before the caret is where the input stopped fitting; everything else
        # about the message must render.
        assert str(error)


@given(st.text())
def test_random_text_never_crashes_parse_ibi(text):
    _only_syntax_errors(lambda: parse_ibi(text), text)


@given(st.text(), st.integers(min_value=0, max_value=40))
def test_random_text_never_crashes_match_ibi(text, start):
    start = min(start, len(text))
    _only_syntax_errors(lambda: match_ibi(text, start), text)


@given(st.text(alphabet="ab1-./@ 2WX", max_size=40))
def test_grammar_shaped_text_never_crashes(text):
    _only_syntax_errors(lambda: parse_ibi(text), text)
    _only_syntax_errors(lambda: match_ibi(text), text)


# --- the fast whole-text regexes agree with the rule-by-rule parser -------------------------

_PIECES = [
    "sid",
    "inpe",
    "br",
    "mtc-m18",
    "-",
    ".",
    "/",
    "@",
    "80",
    "8080",
    "2009",
    "07",
    "21",
    "13",
    "23",
    "5",
    "8JMKD3MGP8W",
    "35MME4E",
    "a1",
    "1a",
    "x-",
    "Z",
    "I",
    "0",
    " ",
]


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_fast_parse_agrees_with_the_rule_parser(text):
    for fast, rule in (
        (identifiers._fast_repository, identifiers._repository),
        (identifiers._fast_ibip, identifiers._ibip),
    ):
        slow, cursor = identifiers._whole(rule, text)
        quick = fast(text)
        if slow is None:
            assert quick is None, text
        else:
            assert quick is not None and dataclasses.astuple(quick) == dataclasses.astuple(slow), (
                text
            )


@settings(max_examples=500)
@given(
    st.sampled_from(
        [
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
            "sid.inpe.br./a.8080/20090/07.21.13.23.47.123",
            "a/b/0000/00.00.00.00",
            "8JMKD3MGP8W/35MME4E",
        ]
    )
)
def test_fast_parse_accepts_valid_names(text):
    assert (
        identifiers._whole(identifiers._repository, text)[0] is not None
        or identifiers._whole(identifiers._ibip, text)[0] is not None
    )
    assert identifiers._fast_repository(text) or identifiers._fast_ibip(text)


def _copy(text: str) -> str:
    """An equal string that is another object (as YAML or a pickle gives)."""
    return "".join(list(text))


def test_a_canonical_ibi_is_its_own_key_and_a_folded_one_keeps_its_key():
    """The key is kept, not folded again on each use, and is the text itself when the
    text is canonical: every table keyed by an item shares one string (memory at 1M)."""
    lower = parse_repository_name(_copy("sid.inpe.br/mtc-m19/2013/09.04.12.27.57"))
    upper = parse_ibip(_copy("8JMKD3MGP7W/3EPGUE5"))
    assert lower.key is lower.text and upper.key is upper.text
    assert lower.key is lower.key  # no new string per use
    mixed = parse_repository_name("SID.inpe.br/MTC-m19/2013/09.04.12.27.57")
    assert mixed.key == "sid.inpe.br/mtc-m19/2013/09.04.12.27.57" and mixed.key is mixed.key
    assert parse_ibip("8jmkd3mgp7w/3epgue5").key == "8JMKD3MGP7W/3EPGUE5"
    for value in (lower, upper, mixed):
        again = pickle.loads(pickle.dumps(value))
        assert again == value and again.key == value.key
        assert (again.key is again.text) == (value.key is value.text)
    moved = dataclasses.replace(mixed, text="sid.inpe.br/x/2013/09.04.12.27.57")
    assert moved.key is moved.text  # made again with the new text


def test_the_parts_of_a_prefix_are_one_string_over_every_name():
    """An Archive's subdomain, word and IBIp prefix repeat over all its items: parsed,
    they are one string each, whichever way they were parsed."""
    first = parse_repository_name(_copy("sid.inpe.br/mtc-m19/2013/09.04.12.27.57"))
    slow = identifiers._whole(identifiers._repository, _copy(first.text[:-2] + "58"))[0]
    assert slow is not None
    assert slow.subdomain is first.subdomain and slow.word is first.word
    assert slow.port_separator is first.port_separator
    assert (
        parse_ibip(_copy("8JMKD3MGP7W/3EPGUE5")).prefix is parse_ibi("8JMKD3MGP7W/3EPGUE6").prefix
    )
