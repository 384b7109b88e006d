"""Persistent URLs (ibistatic.core.urls): the examples of §6.1, Table 6.2, Table 6.6."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibistatic.core.identifiers import parse_ibi
from ibistatic.core.pairlists import parse_pairs, serialize_pairs
from ibistatic.core.relations import (
    TABLE_6_2,
    VerbList,
    compositions,
    modifier_text,
    parse_modifier,
    parse_relation,
    parse_verb_list,
    verb_list_text,
)
from ibistatic.core.urls import (
    PersistentUrl,
    build_persistent_url,
    parse_persistent_url,
    parsed_pairs,
)
from ibistatic.errors import IbiSyntaxError, UsageError

URLIB = "http://urlib.net/"

# URL, ibi, verb list, file path, required status, query -- as the report gives them
EXAMPLES = [
    # Example 6.1
    ("http://urlib.net/8JMKD3MGP8W/35MME4E", "8JMKD3MGP8W/35MME4E", "", "", "", ()),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8", "8JMKD3MGP8W/35MMLL8", "", "", "", ()),
    ("http://urlib.net/LK47B6W/362SFKH", "LK47B6W/362SFKH", "", "", "", ()),
    (
        "http://urlib.net/iconet.com.br/banon/2009/09.09.22.01",
        "iconet.com.br/banon/2009/09.09.22.01",
        "",
        "",
        "",
        (),
    ),
    # Example 6.2
    ("http://urlib.net/8JMKD3MGP8W/35MME4E:", "8JMKD3MGP8W/35MME4E", "GetMetadata", "", "", ()),
    (
        "http://urlib.net/8JMKD3MGP8W/35MME4E:(oai_dc)",
        "8JMKD3MGP8W/35MME4E",
        "GetMetadata(oai_dc)",
        "",
        "",
        (),
    ),
    # Example 6.3
    ("http://urlib.net/8JMKD3MGP8W/35MME4E+", "8JMKD3MGP8W/35MME4E", "GetTranslation", "", "", ()),
    (
        "http://urlib.net/8JMKD3MGP8W/35MME4E+(pt)",
        "8JMKD3MGP8W/35MME4E",
        "GetTranslation(pt)",
        "",
        "",
        (),
    ),
    # Example 6.4
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8!", "8JMKD3MGP8W/35MMLL8", "GetLastEdition", "", "", ()),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8!:(oai_dc)",
        "8JMKD3MGP8W/35MMLL8",
        "GetLastEdition GetMetadata(oai_dc)",
        "",
        "",
        (),
    ),
    # Example 6.5
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
        "8JMKD3MGP8W/35MMLL8",
        "GetLastEdition GetMetadata(oai_dc)",
        "",
        "",
        (("ibiurl.verblist", "GetLastEdition+GetMetadata(oai_dc)"),),
    ),
    # Example 6.6
    (
        "http://urlib.net/LK47B6W/362SFKH?ibiurl.verblist=GetFileList",
        "LK47B6W/362SFKH",
        "GetFileList",
        "",
        "",
        (("ibiurl.verblist", "GetFileList"),),
    ),
    # Example 6.7
    (
        "http://urlib.net/LK47B6W/362SFKH/reference.bib",
        "LK47B6W/362SFKH",
        "",
        "reference.bib",
        "",
        (),
    ),
    # Example 6.8
    (
        "http://urlib.net/LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original&ibiurl.verblist=GetMetadata",
        "LK47B6W/362SFKH",
        "GetTranslation GetMetadata",
        "",
        "Original",
        (("ibiurl.requireditemstatus", "Original"), ("ibiurl.verblist", "GetMetadata")),
    ),
    # Example 4.1: a service request has the same shape (the archive service's IBI)
    (
        "http://mtc-m16d.sid.inpe.br/sid.inpe.br/mtc-m19@80/2009/08.21.17.02?servicesubject=urlRequest&"
        "clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5",
        "sid.inpe.br/mtc-m19@80/2009/08.21.17.02",
        "",
        "",
        "",
        (
            ("servicesubject", "urlRequest"),
            ("clientinformation.ipaddress", "150.163.2.175"),
            ("parsedibiurl.ibi", "8JMKD3MGP7W/3EPGUE5"),
        ),
    ),
]


@pytest.mark.parametrize("url, ibi, verbs, filepath, status, query", EXAMPLES)
def test_examples(url, ibi, verbs, filepath, status, query):
    parsed = parse_persistent_url(url)
    assert parsed.ibi.text == ibi
    assert verb_list_text(parsed.verbs) == verbs
    assert parsed.filepath == filepath
    assert parsed.required_status == status
    assert parsed.query == query
    assert parsed.base == url[: url.index("/", 8) + 1]


def test_example_4_1_base():
    assert parse_persistent_url(EXAMPLES[-1][0]).base == "http://mtc-m16d.sid.inpe.br/"


def test_example_6_8():
    url = parse_persistent_url(
        "http://urlib.net/LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original&ibiurl.verblist=GetMetadata"
    )
    assert url.ibi == parse_ibi("LK47B6W/362SFKH")
    assert url.modifier == parse_modifier("+")
    assert url.relation == parse_relation(".translation.metadata")
    assert parsed_pairs(url) == [
        ("parsedibiurl.ibi", "LK47B6W/362SFKH"),
        ("parsedibiurl.requireditemstatus", "Original"),
        ("parsedibiurl.verblist", ("GetTranslation", "GetMetadata")),
    ]
    # Table 6.7: what the resolver knows about the user
    pairs = parsed_pairs(url, "150.163.2.175", "pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3")
    assert pairs[:2] == [
        ("clientinformation.ipaddress", "150.163.2.175"),
        ("clientinformation.languagepreference", "pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3"),
    ]
    assert serialize_pairs(pairs) == (
        "clientinformation.ipaddress 150.163.2.175\n"
        "clientinformation.languagepreference pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3\n"
        "parsedibiurl.ibi LK47B6W/362SFKH\n"
        "parsedibiurl.requireditemstatus Original\n"
        "parsedibiurl.verblist {GetTranslation GetMetadata}"
    )


def test_parsed_pairs_file_path_and_proxies():
    url = parse_persistent_url("http://urlib.net/LK47B6W/362SFKH/doc/Relat%C3%B3rio%20Final.pdf")
    pairs = parsed_pairs(url, "172.16.44.200 150.163.68.1")
    assert pairs == [
        ("clientinformation.ipaddress", ("172.16.44.200", "150.163.68.1")),  # Table 6.10
        ("parsedibiurl.filepath", "/doc/Relatório Final.pdf"),  # path-absolute (Table 6.9)
        ("parsedibiurl.ibi", "LK47B6W/362SFKH"),
    ]
    # on the wire the space is %20; reading keeps escapes of ASCII codes as written
    assert (
        serialize_pairs(pairs).splitlines()[1]
        == "parsedibiurl.filepath /doc/Relat%C3%B3rio%20Final.pdf"
    )
    assert parse_pairs(serialize_pairs(pairs))[1] == (
        "parsedibiurl.filepath",
        "/doc/Relatório%20Final.pdf",
    )


def test_modifier_and_verb_list_together_are_their_union():
    url = parse_persistent_url(
        "http://urlib.net/8JMKD3MGP8W/35MMLL8!:(oai_dc)?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)+GetFileList"
    )
    assert url.verbs == parse_verb_list("GetLastEdition GetMetadata(oai_dc) GetFileList")
    url = parse_persistent_url(
        "http://urlib.net/8JMKD3MGP8W/35MMLL8+?ibiurl.verblist=GetMetadata+GetTranslation"
    )
    assert verb_list_text(url.verbs) == "GetTranslation GetMetadata"  # a union: no repetition


def test_modifier_and_verb_list_are_one_request():
    by_modifier = parse_persistent_url("http://urlib.net/8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    by_verbs = parse_persistent_url(
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)"
    )
    assert (
        by_modifier.verbs == by_verbs.verbs == parse_verb_list("GetLastEdition GetMetadata(oai_dc)")
    )
    canonical = "http://urlib.net/8JMKD3MGP8W/35MMLL8!:(oai_dc)"
    assert by_modifier.canonical() == by_verbs.canonical() == canonical
    assert build_persistent_url(URLIB, "8JMKD3MGP8W/35MMLL8", by_verbs.verbs) == canonical
    assert build_persistent_url(URLIB, by_verbs.ibi, by_verbs.relation) == canonical


# --- Table 6.2 in URLs ----------------------------------------------------------------------


def variants(modifier):
    options = [
        {"!": ["!"], "+": ["+", "+(pt)", "+(pt-BR)"], ":": [":", ":(oai_dc)"]}[symbol]
        for symbol in modifier
    ]
    return ["".join(choice) for choice in itertools.product(*options)]


@pytest.mark.parametrize(
    "modifier", [variant for modifier, _ in TABLE_6_2 for variant in variants(modifier)]
)
@pytest.mark.parametrize("tail", ["", "/doc/a.pdf", "?x=1"])
def test_each_composition_in_a_url(modifier, tail):
    url = parse_persistent_url(f"http://urlib.net/8JMKD3MGP8W/35MMLL8{modifier}{tail}")
    assert url.modifier == parse_modifier(modifier)
    assert url.verbs == VerbList(parse_modifier(modifier))
    assert modifier_text(url.modifier) == modifier
    assert url.filepath == ("doc/a.pdf" if tail.startswith("/") else "")


URL_FAILURES = [
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8:!",
        "invalid persistent URL 'http://urlib.net/8JMKD3MGP8W/35MMLL8:!': expected '(', '+', '/', '?' "
        "or end of persistent URL at character 38, found '!'\n"
        "    http://urlib.net/8JMKD3MGP8W/35MMLL8:!\n"
        "                                         ^",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8!!",
        "invalid persistent URL 'http://urlib.net/8JMKD3MGP8W/35MMLL8!!': expected '+', ':', '/', '?' "
        "or end of persistent URL at character 38, found '!'\n"
        "    http://urlib.net/8JMKD3MGP8W/35MMLL8!!\n"
        "                                         ^",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8+(xx)",
        "invalid persistent URL 'http://urlib.net/8JMKD3MGP8W/35MMLL8+(xx)': expected an ISO 639-1 "
        "language code (Table A.1) at character 39, found 'x'\n"
        "    http://urlib.net/8JMKD3MGP8W/35MMLL8+(xx)\n"
        "                                          ^",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8:(marc)",
        "invalid persistent URL 'http://urlib.net/8JMKD3MGP8W/35MMLL8:(marc)': expected 'oai_dc' "
        "at character 39, found 'm'\n"
        "    http://urlib.net/8JMKD3MGP8W/35MMLL8:(marc)\n"
        "                                          ^",
    ),
]


@pytest.mark.parametrize("url, message", URL_FAILURES)
def test_rejected_modifiers_exact(url, message):
    with pytest.raises(IbiSyntaxError) as info:
        parse_persistent_url(url)
    assert str(info.value) == message


MORE_FAILURES = [
    # url, position, expected
    ("http://urlib.net", 16, "'/'"),
    ("http://urlib.net/", 17, "a letter or a digit"),
    ("http://urlib.net/8JMKD3MGP8W", 28, "an IBIp digit (2-9, A-H, J-N, P-U) or '/'"),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8!/a b",
        39,
        "a path character or '?' (spaces and non-ASCII are written %hh)",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8/é",
        37,
        "a path character or '?' (spaces and non-ASCII are written %hh)",
    ),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8/../etc/passwd", 37, "a file name (not '.' or '..')"),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8/doc/%2e%2e/x", 41, "a file name (not '.' or '..')"),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8/doc/./x", 41, "a file name (not '.' or '..')"),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8/a%00b", 38, "a file name character"),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8/a%zz", 38, "'%' followed by two hexadecimal digits"),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.requireditemstatus=Copy", 63, "'Original'"),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.requireditemstatus=Originals", 71, "'Original'"),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetMetadata+GetLastEdition",
        65,
        "'GetTranslation' or 'GetFileList'",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetMetadata%2BGet%4CastEdition",
        67,
        "'GetTranslation' or 'GetFileList'",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8:?ibiurl.verblist=GetLastEdition",
        54,
        "'GetTranslation' or 'GetFileList' after the modifier's verbs GetMetadata",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetFileList&ibiurl.verblist=GetMetadata",
        65,
        "one ibiurl.verblist pair only",
    ),
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?a=b c",
        40,
        "a query character ('#', space and non-ASCII are written %hh)",
    ),
    ("http://urlib.net/8JMKD3MGP8W/35MMLL8?a", 38, "'='"),
    ("8JMKD3MGP8W/35MMLL8:!", 20, "'(', '+', '/', '?' or end of persistent URL"),
]


@pytest.mark.parametrize("url, position, expected", MORE_FAILURES)
def test_more_failures(url, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_persistent_url(url)
    assert (info.value.text, info.value.position, info.value.expected, info.value.what) == (
        url,
        position,
        expected,
        "persistent URL",
    )


# --- bases and bare IBIs -------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, base, expected_base",
    [
        (
            "https://example.org/ibi/8JMKD3MGP8W/35MMLL8!",
            "https://example.org/ibi/",
            "https://example.org/ibi/",
        ),
        (
            "https://EXAMPLE.org/ibi/8JMKD3MGP8W/35MMLL8!",
            "https://example.org/ibi",
            "https://example.org/ibi/",
        ),
        (
            "HTTPS://example.org:8443/8JMKD3MGP8W/35MMLL8!",
            "https://example.org:8443/",
            "https://example.org:8443/",
        ),
        ("http://localhost:8000/8JMKD3MGP8W/35MMLL8!", None, "http://localhost:8000/"),
        ("8JMKD3MGP8W/35MMLL8!", None, ""),
        ("8JMKD3MGP8W/35MMLL8!", "https://example.org/ibi/", ""),
    ],
)
def test_bases(url, base, expected_base):
    parsed = parse_persistent_url(url, base)
    assert parsed.base == expected_base
    assert parsed.ibi.text == "8JMKD3MGP8W/35MMLL8"
    assert parsed.verbs == parse_verb_list("GetLastEdition")


@pytest.mark.parametrize(
    "url, base, position",
    [
        (
            "https://example.org/IBI/8JMKD3MGP8W/35MMLL8",
            "https://example.org/ibi/",
            20,
        ),  # paths keep case
        ("https://other.org/8JMKD3MGP8W/35MMLL8", "https://example.org/", 8),
        ("http://example.org/8JMKD3MGP8W/35MMLL8", "https://example.org/", 4),
        ("https://example.org/8JMKD3MGP8W/35MMLL8", "https://example.org/ibi/", 20),
    ],
)
def test_base_mismatch(url, base, position):
    with pytest.raises(IbiSyntaxError) as info:
        parse_persistent_url(url, base)
    assert info.value.position == position
    assert info.value.expected == f"the base URL {base if base.endswith('/') else base + '/'!r}"


def test_bare_ibis():
    url = parse_persistent_url(
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt)/doc/x.pdf?ibiurl.verblist=GetFileList"
    )
    assert url.base == ""
    assert url.ibi.text == "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
    assert url.verbs == VerbList(parse_modifier("+(pt)"), file_list=True)
    assert url.filepath == "doc/x.pdf"
    assert (
        url.canonical()
        == "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt)/doc/x.pdf?ibiurl.verblist=GetFileList"
    )


def test_path_decoding():
    assert parse_persistent_url(URLIB + "LK47B6W/362SFKH/doc/Relat%f3rio%20Final.pdf").filepath == (
        "doc/Relatório Final.pdf"
    )
    assert (
        parse_persistent_url(URLIB + "LK47B6W/362SFKH/a..b/.x/c:d@e(1)+2").filepath
        == "a..b/.x/c:d@e(1)+2"
    )
    assert parse_persistent_url(URLIB + "LK47B6W/362SFKH/").filepath == ""


def test_other_query_pairs_are_kept_not_interpreted():
    url = parse_persistent_url(URLIB + "LK47B6W/362SFKH?utm_source=x&ibiurl.other=y")
    assert url.query == (("utm_source", "x"), ("ibiurl.other", "y"))
    assert url.verbs == VerbList()
    assert url.canonical() == URLIB + "LK47B6W/362SFKH"


def test_persistent_url_is_frozen():
    url = parse_persistent_url(URLIB + "LK47B6W/362SFKH")
    with pytest.raises(AttributeError):
        url.filepath = "x"  # type: ignore[misc]
    assert isinstance(url, PersistentUrl)


# --- the canonical spelling -----------------------------------------------------------------

BUILDS = [
    (("http://urlib.net", "8jmkd3mgp8w/35mmll8"), {}, "http://urlib.net/8JMKD3MGP8W/35MMLL8"),
    (
        (URLIB, "sid.INPE.br/MTC-m18@80/2009/07.21.13.23"),
        {},
        "http://urlib.net/sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
    ),
    (
        (URLIB, "LK47B6W/362SFKH"),
        {"verbs": parse_verb_list("GetFileList")},
        "http://urlib.net/LK47B6W/362SFKH?ibiurl.verblist=GetFileList",
    ),
    (
        (URLIB, "LK47B6W/362SFKH"),
        {"verbs": parse_verb_list("GetTranslation(pt-BR) GetFileList GetMetadata")},
        "http://urlib.net/LK47B6W/362SFKH+(pt-BR):?ibiurl.verblist=GetFileList",
    ),
    (
        (URLIB, "LK47B6W/362SFKH"),
        {"filepath": "reference.bib"},
        "http://urlib.net/LK47B6W/362SFKH/reference.bib",
    ),
    (
        (URLIB, "LK47B6W/362SFKH"),
        {"filepath": "/reference.bib"},
        "http://urlib.net/LK47B6W/362SFKH/reference.bib",
    ),
    (
        (URLIB, "LK47B6W/362SFKH"),
        {"filepath": "doc/Relatório Final (v2)+x.pdf"},
        "http://urlib.net/LK47B6W/362SFKH/doc/Relat%C3%B3rio%20Final%20%28v2%29%2Bx.pdf",
    ),
    (
        (URLIB, "LK47B6W/362SFKH"),
        {"verbs": parse_modifier("+"), "required_status": "Original"},
        "http://urlib.net/LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original",
    ),
    (("", "LK47B6W/362SFKH"), {"verbs": parse_modifier("!")}, "LK47B6W/362SFKH!"),
]


@pytest.mark.parametrize("args, kwargs, expected", BUILDS)
def test_build_persistent_url(args, kwargs, expected):
    assert build_persistent_url(*args, **kwargs) == expected


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"ibi": "not an ibi"}, IbiSyntaxError),
        ({"required_status": "Copy"}, UsageError),
        ({"filepath": "doc/../x"}, UsageError),
        ({"filepath": "./x"}, UsageError),
    ],
)
def test_build_persistent_url_rejects(kwargs, error):
    arguments = {"base": URLIB, "ibi": "LK47B6W/362SFKH", **kwargs}
    with pytest.raises(error):
        build_persistent_url(**arguments)


file_names = st.text(
    st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="/"), min_size=1, max_size=8
).filter(lambda name: name not in (".", ".."))


@given(
    st.sampled_from(compositions(["pt", "pt-BR", "en"])),
    st.booleans(),
    st.lists(file_names, max_size=3).map("/".join),
    st.sampled_from(["", "Original"]),
    st.sampled_from([URLIB, "https://example.org/ibi/", ""]),
    st.sampled_from(["LK47B6W/362SFKH", "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47"]),
)
def test_build_then_parse(rel, file_list, filepath, status, base, ibi):
    verbs = VerbList(rel, file_list)
    text = build_persistent_url(base, ibi, verbs, filepath, status)
    url = parse_persistent_url(text, base or None)
    assert (url.base, url.ibi.key, url.verbs, url.filepath, url.required_status) == (
        base,
        ibi.lower() if "." in ibi else ibi,
        verbs,
        filepath,
        status,
    )
    assert url.canonical() == text


def test_a_fragment_is_the_readers_own():
    # RFC 3986 §3.5: a browser never sends it; a URL pasted with one names the same item
    parsed = parse_persistent_url("http://urlib.net/8JMKD3MGP8W/35MMLL8/publicacao.pdf#page=105")
    assert (parsed.ibi.key, parsed.filepath) == ("8JMKD3MGP8W/35MMLL8", "publicacao.pdf")
