"""Pair lists (Table 4.2), formas-de-ibi (Table 7.4) and query strings (Table 4.1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibistatic.core.pairlists import (
    decode_query,
    encode_query,
    escape_word,
    ibi_forms,
    in_charset,
    match_query,
    parse_ibi_forms,
    parse_pairs,
    serialize_pairs,
    unescape_word,
)
from ibistatic.errors import IbiSyntaxError, UsageError

DATA = Path(__file__).parent / "data"

REP = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
IBIP = "8JMKD3MGP8W/35MME4E"


# --- the standard's examples -------------------------------------------------------------


def test_example_7_2_round_trips():
    text = (DATA / "example_7_2.txt").read_text(encoding="ascii")
    pairs = parse_pairs(text)
    assert len(pairs) == 49
    assert serialize_pairs(pairs) + "\n" == text
    names = [name for name, _ in pairs]
    assert names == sorted(names)
    values = dict(pairs)
    assert values["archiveaddress"] == "mtc-m16c.sid.inpe.br"
    assert values["ibi"] == ("rep", REP, "ibip", IBIP)
    assert parse_ibi_forms(values["ibi"]) == {"rep": REP, "ibip": IBIP}
    assert values["ibi.platformsoftware"] == ("rep", "dpi.inpe.br/banon/1998/08.02.08.56")
    # %20 is an escape of the pair list: the value holds the space
    assert values["url"] == (f"http://mtc-m16c.sid.inpe.br/col/{REP}/doc/CCSDS%20643.0-B-1.pdf")
    assert values["url.metadata(oai_dc)"].endswith("/doc/metadata.cgi?choice=oai_dc")


EXAMPLE_4_2 = (
    "archiveaddress mtc-m16d.sid.inpe.br\n"
    "contenttype Data\n"
    "ibi {rep sid.inpe.br/mtc-m19/2013/09.04.12.27.57 ibip 8JMKD3MGP7W/3EPGUE5}\n"
    "ibi.archiveservice {rep sid.inpe.br/mtc-m19@80/2009/08.21.17.02}\n"
    "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\n"
    "state Original\n"
    "timestamp 2013-10-04T14:32:14Z\n"
    "url http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf\n"
    "urlkey 1426203276-5985125171467764"
)


def test_example_4_2_decodes_iso_8859_1():
    pairs = parse_pairs(EXAMPLE_4_2)
    assert len(pairs) == 9
    assert dict(pairs)["url"].endswith("/doc/Relatório%20Final.pdf")  # ASCII escapes stay
    # written back as UTF-8, the one encoding ibistatic writes
    assert serialize_pairs(pairs).endswith(
        "/doc/Relat%C3%B3rio%20Final.pdf\nurlkey 1426203276-5985125171467764"
    )


@pytest.mark.parametrize(
    "text, pairs",
    [
        # Table 4.2's own example
        ("a1 {a2 a3} a4 a5", [("a1", ("a2", "a3")), ("a4", "a5")]),
        # Example 7.7 (JUNTAR joins with a space)
        (
            "archiveaddress mtc-m16d.sid.inpe.br state Original",
            [("archiveaddress", "mtc-m16d.sid.inpe.br"), ("state", "Original")],
        ),
        # Algorithm 1
        ("confirmation yes", [("confirmation", "yes")]),
        ("notice {acknowledgment received}", [("notice", ("acknowledgment", "received"))]),
        # §9
        (
            "status.archive included status.confirmation successful",
            [("status.archive", "included"), ("status.confirmation", "successful")],
        ),
        # Algorithm 2: the empty answer, and {} for an unidentified platform software
        ("", []),
        ("ibi.platformsoftware {}", [("ibi.platformsoftware", ())]),
        ("a {b}", [("a", ("b",))]),
        ("a   b", [("a", "b")]),  # 1*SP between name and value
        ("a b\r\nc d\r\n", [("a", "b"), ("c", "d")]),
        ("a b\nc d\n", [("a", "b"), ("c", "d")]),
        ("a b\r\nc d\ne f g h", [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h")]),
        (
            "n%20a%7Bme v%25%7d",
            [("n%20a%7Bme", "v%25%7d")],
        ),  # escapes of ASCII codes stay as written
        ("p 100%", [("p", "100%")]),
        ("a b%2", [("a", "b%2")]),  # '%' is a word character (Table 4.2)
        ("a b%zz", [("a", "b%zz")]),
        ("a Relat%C3%B3rio", [("a", "Relatório")]),
        ("a |~!#$&'()*+,-./:;<=>?@[\\]^_`", [("a", "|~!#$&'()*+,-./:;<=>?@[\\]^_`")]),
    ],
)
def test_parse_pairs(text, pairs):
    assert parse_pairs(text) == pairs


PAIR_FAILURES = [
    ("a", 1, "' '"),
    ("a ", 2, "a value or '{'"),
    ("a b ", 4, "a pair name"),
    ("a b\n\nc d", 4, "a pair name"),
    ("a {b", 4, "' ' or '}'"),
    ("a {b  c}", 5, "a word"),
    ("a { b}", 3, "a word or '}'"),
    ("a {b}c d", 5, "' ', a line break or end of pair list"),
    ("a b}", 3, "' ', a line break or end of pair list"),
    ("a bé", 3, "' ', a line break or end of pair list (non-ASCII characters are written %hh)"),
    ("é b", 0, "a pair name (non-ASCII characters are written %hh)"),
    ("a b\rc d", 3, "' ', a line break or end of pair list"),
    ("a\tb", 1, "' '"),
    ("{a} b", 0, "a pair name"),
    (" a b", 0, "a pair name"),
]


@pytest.mark.parametrize("text, position, expected", PAIR_FAILURES)
def test_parse_pairs_failures(text, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_pairs(text)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "pair list",
    )


def test_parse_pairs_failure_message_exact():
    with pytest.raises(IbiSyntaxError) as info:
        parse_pairs("state Original\nurl http://x/Relatório.pdf")
    assert str(info.value) == (
        "invalid pair list 'state Original\\nurl http://x/Relatório.pdf': expected ' ', a line "
        "break or end of pair list (non-ASCII characters are written %hh) at character 34, found 'ó'\n"
        "    state Original?url http://x/Relatório.pdf\n"
        "                                     ^"
    )


# --- writing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pairs, separator, text",
    [
        ([("a1", ("a2", "a3")), ("a4", "a5")], " ", "a1 {a2 a3} a4 a5"),
        ([("a", "b"), ("c", "d")], "\r\n", "a b\r\nc d"),
        ([("a", "b"), ("c", ())], "\n", "a b\nc {}"),
        ([("url", "http://x/CCSDS 643.0-B-1.pdf")], "\n", "url http://x/CCSDS%20643.0-B-1.pdf"),
        ([("f", "Relatório {final} 100%")], "\n", "f Relat%C3%B3rio%20%7Bfinal%7D%20100%"),
        ([("f", "a\tb\nc\x7f")], "\n", "f a%09b%0Ac%7F"),
        ([], "\n", ""),
    ],
)
def test_serialize_pairs(pairs, separator, text):
    assert serialize_pairs(pairs, separator) == text


@pytest.mark.parametrize(
    "pairs, separator",
    [
        ([("a", "")], "\n"),
        ([("", "b")], "\n"),
        ([("a", ("b", ""))], "\n"),
        ([("a", "b")], "\t"),
        ([("a", 1)], "\n"),
    ],
)
def test_serialize_pairs_rejects(pairs, separator):
    with pytest.raises(UsageError):
        serialize_pairs(pairs, separator)


def test_escape_and_unescape_word():
    assert escape_word("Relatório Final.pdf") == "Relat%C3%B3rio%20Final.pdf"
    assert (
        unescape_word("Relat%C3%B3rio%20Final.pdf") == "Relatório%20Final.pdf"
    )  # %20 is the word's own text
    assert unescape_word("Relat%f3rio") == "Relatório"  # ISO-8859-1 (Example 4.2)
    assert unescape_word("Relat%F3rio") == "Relatório"
    assert unescape_word("%C3%B3%f3%C3") == "óóÃ"  # byte by byte where not UTF-8
    assert unescape_word("%E2%82%AC %F0%9F%98%80") == "€ 😀"
    assert unescape_word("%E2%82") == "â\x82"  # a cut sequence is not UTF-8
    assert escape_word("😀") == "%F0%9F%98%80"


# Words of the grammar's characters (no space, braces or controls inside a word) plus any
# non-ASCII character; '%' only in the literal forms below, since '%hh' of a byte 80-FF is
# read as an escape.
word_chars = st.one_of(
    st.sampled_from([chr(c) for c in range(0x21, 0x7B) if chr(c) != "%"] + ["|", "~"]),
    st.characters(min_codepoint=0x80, exclude_categories=("Cs",)),
)
words = st.text(word_chars, min_size=1, max_size=12)
values = st.one_of(
    words,
    st.tuples(),
    st.lists(words, min_size=1, max_size=4).map(tuple),
    st.sampled_from(["%", "%20", "100%", "CCSDS%20643.0-B-1.pdf", "ó", "Relatório"]),
)
pair_lists = st.lists(st.tuples(words, values), max_size=8)


@given(pair_lists, st.sampled_from(["\n", " ", "\r\n"]))
def test_serialize_then_parse_is_identity(pairs, separator):
    text = serialize_pairs(pairs, separator)
    assert text.isascii()
    assert parse_pairs(text) == pairs
    assert parse_pairs(text + "\n") == pairs


# --- formas-de-ibi (Table 7.4) -------------------------------------------------------------


@pytest.mark.parametrize(
    "rep, ibip, value, text",
    [
        (REP, IBIP, ("rep", REP, "ibip", IBIP), f"{{rep {REP} ibip {IBIP}}}"),
        (REP, None, ("rep", REP), f"{{rep {REP}}}"),
        (None, IBIP, ("ibip", IBIP), f"{{ibip {IBIP}}}"),
        (None, None, (), "{}"),
    ],
)
def test_ibi_forms(rep, ibip, value, text):
    assert ibi_forms(rep, ibip) == value
    assert serialize_pairs([("ibi", value)]) == f"ibi {text}"
    expected = {key: form for key, form in (("rep", rep), ("ibip", ibip)) if form}
    assert parse_ibi_forms(value) == expected


IBI_FORMS_FAILURES = [
    (("rep",), 4, "' ' and an IBI"),
    (("foo",), 1, "'rep', 'ibip' or '}'"),
    (("rep", REP, "foo"), 45, "'ibip' or '}'"),
    (("ibip", IBIP, "rep", REP), 26, "'}'"),
    (("rep", IBIP), 5, "a repository name"),
    (("ibip", REP), 6, "an IBIp"),
    (("rep", "sid.inpe.br/mtc m18"), 20, "a letter, a digit, '-', '.', '@' or '/'"),
    ("x", 0, "'{'"),
]


@pytest.mark.parametrize("value, position, expected", IBI_FORMS_FAILURES)
def test_parse_ibi_forms_failures(value, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_ibi_forms(value)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "formas-de-ibi",
    )


# --- query strings (Tables 4.1, 6.1) ------------------------------------------------------

EXAMPLE_4_1_QUERY = (
    "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&"
    "parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5"
)
EXAMPLE_6_9_QUERY = (
    "servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&"
    "ibi=rep%20sid.inpe.br/mtc-m19/2013/09.04.12.27.57%20ibip%208JMKD3MGP7W/3EPGUE5&"
    "url=http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf&"
    "url.persistent=http://mtc-m16d.sid.inpe.br:80/8JMKD3MGP7W/3EPGUE5&"
    "urlkey=1424636122-5331490054869684"
)


def test_example_4_1_query():
    pairs = [
        ("servicesubject", "urlRequest"),
        ("clientinformation.ipaddress", "150.163.2.175"),
        ("parsedibiurl.ibi", "8JMKD3MGP7W/3EPGUE5"),
    ]
    assert decode_query(EXAMPLE_4_1_QUERY) == pairs
    assert encode_query(pairs) == EXAMPLE_4_1_QUERY


def test_example_6_9_query():
    pairs = decode_query(EXAMPLE_6_9_QUERY)
    values = dict(pairs)
    assert values["ibi"] == "rep sid.inpe.br/mtc-m19/2013/09.04.12.27.57 ibip 8JMKD3MGP7W/3EPGUE5"
    assert values["url"].endswith("/doc/Relatório Final.pdf")
    assert len(pairs) == 7
    # Written back, the only change is the encoding of 'ó': UTF-8, not ISO-8859-1.
    assert encode_query(pairs) == EXAMPLE_6_9_QUERY.replace("%f3", "%C3%B3")
    # the formas-de-ibi of Table 7.4 go into a query as words joined by spaces
    forms = ibi_forms("sid.inpe.br/mtc-m19/2013/09.04.12.27.57", "8JMKD3MGP7W/3EPGUE5")
    assert encode_query([("ibi", forms)]) == (
        "ibi=rep%20sid.inpe.br/mtc-m19/2013/09.04.12.27.57%20ibip%208JMKD3MGP7W/3EPGUE5"
    )


@pytest.mark.parametrize(
    "value, encoded",
    [
        ("1997-07-16T19:20+01:00", "1997-07-16T19:20%2B01:00"),  # Table 4.1's example
        (" ", "%20"),
        ("%", "%25"),
        ("&", "%26"),
        ("+", "%2B"),
        ("=", "%3D"),
        ("?", "%3F"),
        ("#", "%23"),
        ("ó", "%C3%B3"),
        ("\n", "%0A"),
        ("GetLastEdition GetMetadata(oai_dc)", "GetLastEdition%20GetMetadata(oai_dc)"),
        ("http://x/a;b,c:d@e!$'()*~", "http://x/a;b,c:d@e!$'()*~"),
    ],
)
def test_encode_query_table_4_1(value, encoded):
    assert encode_query([("v", value)]) == f"v={encoded}"
    assert decode_query(f"v={encoded}") == [("v", value)]


def test_plus_is_not_a_space():
    assert decode_query("ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)") == [
        ("ibiurl.verblist", "GetLastEdition+GetMetadata(oai_dc)")
    ]


@pytest.mark.parametrize(
    "qs, pairs",
    [
        ("", []),
        ("a=", [("a", "")]),
        ("a=1&a=2", [("a", "1"), ("a", "2")]),
        ("n%20x=v%C3%B3", [("n x", "vó")]),
    ],
)
def test_decode_query(qs, pairs):
    assert decode_query(qs) == pairs


QUERY_FAILURES = [
    ("a", 1, "'='"),
    ("=b", 0, "a pair name"),
    ("a=b=c", 3, "'&' or end of query"),
    ("a=b&", 4, "a pair name"),
    ("a=b&&c=d", 4, "a pair name"),
    ("a=b c", 3, "a query character ('#', space and non-ASCII are written %hh)"),
    ("a=é", 2, "a query character ('#', space and non-ASCII are written %hh)"),
    ("a=b#c", 3, "a query character ('#', space and non-ASCII are written %hh)"),
    ("a=%zz", 2, "'%' followed by two hexadecimal digits"),
    ("a=%2", 2, "'%' followed by two hexadecimal digits"),
]


@pytest.mark.parametrize("qs, position, expected", QUERY_FAILURES)
def test_decode_query_failures(qs, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        decode_query(qs)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "query string",
    )


def test_match_query_positions():
    url = "http://urlib.net/X?a=1&ibiurl.verblist=Get%4Detadata"
    pairs = match_query(url, url.index("?") + 1, "persistent URL")
    assert [(p.name, p.value, p.start) for p in pairs] == [
        ("a", "1", 19),
        ("ibiurl.verblist", "GetMetadata", 23),
    ]
    positions = pairs[1].value_positions
    assert url[positions[3] : positions[4]] == "%4D"
    assert positions[-1] == len(url)


query_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@given(st.lists(st.tuples(query_text.filter(bool), query_text), max_size=6))
def test_encode_then_decode_query_is_identity(pairs):
    qs = encode_query(pairs)
    assert qs.isascii()
    assert decode_query(qs) == pairs


def test_iso_8859_1_escapes_one_lower_case_byte_as_example_4_2_prints():
    assert escape_word("Relatório Final.pdf", "iso-8859-1") == "Relat%f3rio%20Final.pdf"
    # a character ISO-8859-1 lacks keeps its UTF-8 escapes: nothing is lost
    assert escape_word("1€—ó", "iso-8859-1") == "1%E2%82%AC%E2%80%94%f3"


def test_in_charset_recodes_the_utf8_escapes_of_urls_and_keeps_ascii_escapes():
    pairs = [
        ("url", "http://a.b/doc/Relat%C3%B3rio%20%E2%82%AC.pdf"),
        ("ibi", ("rep", "sid.inpe.br/a/2009/01.01")),
    ]
    recoded = in_charset(pairs, "iso-8859-1")
    assert recoded == [
        ("url", "http://a.b/doc/Relat%f3rio%20%E2%82%AC.pdf"),
        ("ibi", ("rep", "sid.inpe.br/a/2009/01.01")),
    ]
    assert in_charset(pairs, "utf-8") == pairs
    # both read back as the same value
    assert parse_pairs(serialize_pairs(recoded)) == parse_pairs(serialize_pairs(pairs))
