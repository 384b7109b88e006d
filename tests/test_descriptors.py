"""read_item / read_archive_info on in-memory mappings: one row per rule, exact messages.

The rows follow the tables of archive-format.md key by key; the descriptors of its own
example come first.
"""

from __future__ import annotations

import datetime as _dt
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.archive import descriptors
from ibistatic.archive.descriptors import read_archive_info, read_item

REPO = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
META = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47"
FALLBACK = "2020-01-01T00:00:00Z"
FILES = ("report.txt",)
E = f"error: a: {REPO}/item.yaml"
W = f"warning: a: {REPO}/item.yaml"
ITEM_KEYS = (
    "one of state, ibip, content-type, timestamp, target, language, translations, "
    "next-edition, metadata, formats, dublin-core, transferable, reason"
)
ISO = "expected an ISO 8601 UTC time ending in Z, e.g. 2009-07-21T13:23:45Z"
LANGUAGE = "expected an ISO 639-1 language, optionally '-' and an ISO 3166-1 country"
NOT_A_LANGUAGE = f"{LANGUAGE}: an ISO 639-1 language code (Table A.1) there"
ANY_IBI = "expected an IBI (repository name or IBIp)"


def _item(raw, files=FILES, repository=REPO):
    item, problems = read_item("a", repository, raw, files, FALLBACK)
    return item, [str(p) for p in problems]


def _original(**keys):
    return {"state": "Original", **{k.replace("_", "-"): v for k, v in keys.items()}}


# --- item.yaml: valid descriptors and what they become --------------------------------

VALID_ITEMS = [
    # archive-format.md's own example (the technical report and its metadata item)
    pytest.param(
        {
            "state": "Original",
            "ibip": "8JMKD3MGP8W/35MME4E",
            "timestamp": "2009-07-21T13:23:45Z",
            "target": "CCSDS 643.0-B-1.pdf",
            "language": "en",
            "translations": {"pt": "sid.inpe.br/mtc-m18@80/2009/08.25.19.43"},
            "metadata": META,
        },
        ("CCSDS 643.0-B-1.pdf", "reference.bib"),
        REPO,
        {
            "state": "Original",
            "content_type": "Data",
            "timestamp": "2009-07-21T13:23:45Z",
            "target": "CCSDS 643.0-B-1.pdf",
            "language": "en",
            "transferable": True,
        },
        id="format-example-report",
    ),
    pytest.param(
        {
            "state": "Original",
            "content-type": "Metadata",
            "timestamp": "2014-04-04T17:39:54Z",
            "target": "metadata.html",
            "formats": {"oai_dc": "oai_dc.xml"},
        },
        ("metadata.html", "oai_dc.xml"),
        META,
        {
            "content_type": "Metadata",
            "target": "metadata.html",
            "formats": (("oai_dc", "oai_dc.xml"),),
        },
        id="format-example-metadata",
    ),
    # defaults
    pytest.param(
        {"state": "Copy"},
        FILES,
        REPO,
        {
            "state": "Copy",
            "content_type": "Data",
            "timestamp": FALLBACK,
            "target": "report.txt",
            "transferable": True,
            "language": None,
            "ibip": None,
        },
        id="defaults-only-file-is-target",
    ),
    pytest.param(
        {"state": "Deleted"},
        (),
        REPO,
        {"state": "Deleted", "target": None, "timestamp": FALLBACK},
        id="deleted-needs-no-file",
    ),
    # the ?query extension: the file part must exist, the query is kept
    pytest.param(
        _original(
            target="metadata.cgi?choice=oai_dc", formats={"oai_dc": "metadata.cgi?choice=oai_dc"}
        ),
        ("metadata.cgi",),
        REPO,
        {
            "target": "metadata.cgi?choice=oai_dc",
            "formats": (("oai_dc", "metadata.cgi?choice=oai_dc"),),
        },
        id="target-and-format-with-query",
    ),
    pytest.param(
        _original(target="sub dir/relatório.txt"),
        ("sub dir/relatório.txt", "x.txt"),
        REPO,
        {"target": "sub dir/relatório.txt"},
        id="target-in-subdirectory-non-ascii",
    ),
    # timestamps: YAML may hand in a datetime; an aware one is turned into UTC
    pytest.param(
        _original(
            timestamp=_dt.datetime(
                2009, 7, 21, 10, 23, 45, tzinfo=_dt.timezone(_dt.timedelta(hours=-3))
            )
        ),
        FILES,
        REPO,
        {"timestamp": "2009-07-21T13:23:45Z"},
        id="aware-datetime-to-utc",
    ),
    pytest.param(
        _original(timestamp="2009-07-21T13:23:45.5Z"),
        FILES,
        REPO,
        {"timestamp": "2009-07-21T13:23:45.5Z"},
        id="fractional-seconds",
    ),
    pytest.param(
        _original(language="pt-BR", transferable=False),
        FILES,
        REPO,
        {"language": "pt-BR", "transferable": False},
        id="language-with-country",
    ),
    # optional keys left empty in YAML (None) mean "absent"
    pytest.param(
        _original(ibip=None, target=None, language=None, metadata=None, content_type=None),
        FILES,
        REPO,
        {"ibip": None, "target": "report.txt", "content_type": "Data"},
        id="empty-optional-keys",
    ),
    pytest.param(
        _original(
            dublin_core={
                "title": "Relatório",
                "creator": ["Banon, G.", "Banon, L."],
                "date": _dt.date(2009, 7, 21),
            }
        ),
        FILES,
        REPO,
        {
            "dublin_core": (
                ("title", ("Relatório",)),
                ("creator", ("Banon, G.", "Banon, L.")),
                ("date", ("2009-07-21",)),
            )
        },
        id="dublin-core-strings-lists-dates",
    ),
]


@pytest.mark.parametrize("raw, files, repository, expected", VALID_ITEMS)
def test_valid_item(raw, files, repository, expected):
    item, problems = _item(raw, files, repository)
    assert problems == []
    assert item is not None
    assert {name: getattr(item, name) for name in expected} == expected


def test_format_example_references_are_parsed():
    item, _ = _item(VALID_ITEMS[0].values[0], ("CCSDS 643.0-B-1.pdf", "reference.bib"))
    assert item.ibip.text == "8JMKD3MGP8W/35MME4E"
    assert item.metadata.text == META
    assert [(tag, ibi.text) for tag, ibi in item.translations] == [
        ("pt", "sid.inpe.br/mtc-m18@80/2009/08.25.19.43")
    ]
    assert item.files == ("CCSDS 643.0-B-1.pdf", "reference.bib")


# --- item.yaml: one rule per row, exact lines; the item is left out on any error -----

BAD_ITEMS = [
    # the descriptor as a whole
    pytest.param(
        ["state", "Original"],
        FILES,
        [f"{E}: a list; expected a YAML mapping of keys to values"],
        id="a-list",
    ),
    pytest.param(
        "state Original",
        FILES,
        [f"{E}: 'state Original'; expected a YAML mapping of keys to values"],
        id="a-scalar",
    ),
    pytest.param(
        None,
        FILES,
        [f"{E}: state: nothing; expected one of Original, Copy, Deleted (a required key)"],
        id="empty-file",
    ),
    # state
    pytest.param(
        {"target": "report.txt"},
        FILES,
        [f"{E}: state: nothing; expected one of Original, Copy, Deleted (a required key)"],
        id="state-missing",
    ),
    pytest.param(
        {"state": "Orignal"},
        FILES,
        [f"{E}: state: 'Orignal'; expected one of Original, Copy, Deleted"],
        id="state-misspelt",
    ),
    pytest.param(
        {"state": "original"},
        FILES,
        [f"{E}: state: 'original'; expected one of Original, Copy, Deleted"],
        id="state-lower-case",
    ),
    pytest.param(
        {"state": 3},
        FILES,
        [f"{E}: state: 3 (a number); expected one of Original, Copy, Deleted"],
        id="state-int",
    ),
    pytest.param(
        {"state": _dt.date(2009, 7, 21)},
        FILES,
        [
            f"{E}: state: '2009-07-21' (a date without a time); expected one of Original, Copy, Deleted"
        ],
        id="state-unquoted-date",
    ),
    pytest.param(
        {"state": None},
        FILES,
        [f"{E}: state: nothing; expected one of Original, Copy, Deleted (a required key)"],
        id="state-empty",
    ),
    # ibip
    pytest.param(
        _original(ibip="8JMKD3MGP8W/35MMEIE"),
        FILES,
        [
            f"{E}: ibip: '8JMKD3MGP8W/35MMEIE' ('I' at character 18); {ANY_IBI}: an IBIp digit "
            "(2-9, A-H, J-N, P-U), 'W' or end of input there"
        ],
        id="ibip-letter-I",
    ),
    pytest.param(
        _original(ibip=REPO),
        FILES,
        [f"{E}: ibip: '{REPO}'; expected an IBIp such as 8JMKD3MGP8W/35MME4E"],
        id="ibip-repository-form",
    ),
    pytest.param(
        _original(ibip=12), FILES, [f"{E}: ibip: 12 (a number); {ANY_IBI}"], id="ibip-int"
    ),
    # content-type
    pytest.param(
        _original(content_type="data"),
        FILES,
        [f"{E}: content-type: 'data'; expected one of Data, Metadata"],
        id="content-type-lower-case",
    ),
    # timestamp
    pytest.param(
        _original(timestamp="21/07/2009 13:23"),
        FILES,
        [f"{E}: timestamp: '21/07/2009 13:23'; {ISO}"],
        id="timestamp-not-iso",
    ),
    pytest.param(
        _original(timestamp="2009-07-21T13:23:45-03:00"),
        FILES,
        [f"{E}: timestamp: '2009-07-21T13:23:45-03:00'; {ISO}"],
        id="timestamp-string-with-offset",
    ),
    pytest.param(
        _original(timestamp="2009-07-21T13:23:45"),
        FILES,
        [f"{E}: timestamp: '2009-07-21T13:23:45'; {ISO}"],
        id="timestamp-string-without-Z",
    ),
    pytest.param(
        _original(timestamp=_dt.datetime(2009, 7, 21, 13, 23, 45)),
        FILES,
        [f"{E}: timestamp: '2009-07-21 13:23:45' (a time without a time zone); {ISO}"],
        id="timestamp-naive-datetime",
    ),
    pytest.param(
        _original(timestamp="2009-02-30T00:00:00Z"),
        FILES,
        [f"{E}: timestamp: '2009-02-30T00:00:00Z'; expected a real calendar date and time"],
        id="timestamp-february-30",
    ),
    pytest.param(
        _original(timestamp=1234),
        FILES,
        [f"{E}: timestamp: 1234 (a number); {ISO}"],
        id="timestamp-int",
    ),
    pytest.param(
        _original(timestamp=_dt.date(2009, 7, 21)),
        FILES,
        [f"{E}: timestamp: '2009-07-21' (a date without a time); {ISO}"],
        id="timestamp-date-only",
    ),
    # target
    pytest.param(
        _original(target="report.pdf"),
        FILES,
        [f"{E}: target: 'report.pdf', which is not in doc/; expected a file inside doc/"],
        id="target-not-in-doc",
    ),
    pytest.param(
        _original(target="doc/report.txt"),
        FILES,
        [f"{E}: target: 'doc/report.txt', which is not in doc/; expected a file inside doc/"],
        id="target-with-doc-prefix",
    ),
    pytest.param(
        _original(target="report.pdf?x=1"),
        FILES,
        [f"{E}: target: 'report.pdf', which is not in doc/; expected a file inside doc/"],
        id="target-query-on-missing-file",
    ),
    pytest.param(
        _original(target=7),
        FILES,
        [f"{E}: target: 7 (a number); expected a file inside doc/"],
        id="target-int",
    ),
    pytest.param(
        _original(),
        ("report.txt", "reference.bib"),
        [f"{E}: target: no target and 2 files in doc/; expected a target naming the default file"],
        id="two-files-no-target",
    ),
    pytest.param(
        _original(),
        (),
        [
            f"{E}: target: an empty doc/; expected a file in doc/ (an item that is not Deleted has one)"
        ],
        id="no-files",
    ),
    # language and translations
    pytest.param(
        _original(language="xx"),
        FILES,
        [f"{E}: language: 'xx' ('x' at character 1); {NOT_A_LANGUAGE}"],
        id="language-xx",
    ),
    pytest.param(
        _original(language="pt-br"),
        FILES,
        [
            f"{E}: language: 'pt-br' ('b' at character 4); {LANGUAGE}: an upper-case letter "
            "(ISO 3166-1 country code) there"
        ],
        id="language-lower-case-country",
    ),
    pytest.param(
        _original(language=3),
        FILES,
        [f"{E}: language: 3 (a number); expected a language tag such as pt or pt-BR"],
        id="language-int",
    ),
    # YAML reads an unquoted `no` (Norwegian) as the boolean false
    pytest.param(
        _original(language=False),
        FILES,
        [f"{E}: language: false (a boolean); expected a language tag such as pt or pt-BR"],
        id="language-no",
    ),
    pytest.param(
        _original(translations={"english": REPO}),
        FILES,
        [
            f"{E}: translations.english: 'english' ('g' at character 3); "
            f"{LANGUAGE}: '-' or end of language tag there"
        ],
        id="translations-bad-tag",
    ),
    pytest.param(
        _original(translations={"pt": "nonsense"}),
        FILES,
        [
            f"{E}: translations.pt: 'nonsense' (end of input at character 9); {ANY_IBI}: "
            "a letter, a digit, '-', '.' or '/' there"
        ],
        id="translations-bad-ibi",
    ),
    pytest.param(
        _original(translations={"pt": None}),
        FILES,
        [f"{E}: translations.pt: nothing; {ANY_IBI}"],
        id="translations-empty-ibi",
    ),
    pytest.param(
        _original(translations=["pt"]),
        FILES,
        [f"{E}: translations: a list; expected a mapping of language tag to IBI"],
        id="translations-list",
    ),
    # next-edition and metadata
    pytest.param(
        _original(next_edition="sid.inpe.br/mtc-m18@80/2009/7.21.13.23"),
        FILES,
        [
            f"{E}: next-edition: 'sid.inpe.br/mtc-m18@80/2009/7.21.13.23' ('.' at character 30); "
            f"{ANY_IBI}: a digit there"
        ],
        id="next-edition-bad-ibi",
    ),
    pytest.param(
        _original(next_edition=REPO.upper()),
        FILES,
        [
            f"{E}: next-edition: '{REPO.upper()}'; expected the IBI of another item "
            "(an item is not its own next edition)"
        ],
        id="next-edition-itself-any-case",
    ),
    pytest.param(
        _original(ibip="8JMKD3MGP8W/35MME4E", metadata="8jmkd3mgp8w/35mme4e"),
        FILES,
        [
            f"{E}: metadata: '8jmkd3mgp8w/35mme4e'; expected the IBI of another item (a Metadata item)"
        ],
        id="metadata-own-ibip",
    ),
    pytest.param(
        _original(metadata="x"),
        FILES,
        [
            f"{E}: metadata: 'x' (end of input at character 2); {ANY_IBI}: a letter, "
            "a digit, '-', '.' or '/' there"
        ],
        id="metadata-bad-ibi",
    ),
    # formats
    pytest.param(
        _original(
            content_type="Metadata", target="metadata.html", formats={"oai_dc": "oai_dc.xml"}
        ),
        ("metadata.html",),
        [f"{E}: formats.oai_dc: 'oai_dc.xml', which is not in doc/; expected a file inside doc/"],
        id="formats-file-missing",
    ),
    pytest.param(
        _original(formats={"oai_dc": 3}),
        FILES,
        [f"{E}: formats.oai_dc: 3 (a number); expected a file inside doc/"],
        id="formats-int",
    ),
    pytest.param(
        _original(formats={"oai_dc": None}),
        FILES,
        [f"{E}: formats.oai_dc: nothing; expected a file inside doc/"],
        id="formats-empty-file",
    ),
    pytest.param(
        _original(formats=["oai_dc"]),
        FILES,
        [f"{E}: formats: a list; expected a mapping of format name to a file inside doc/"],
        id="formats-list",
    ),
    # dublin-core
    pytest.param(
        _original(dublin_core="title"),
        FILES,
        [f"{E}: dublin-core: 'title'; expected a mapping of Dublin Core element to text"],
        id="dublin-core-string",
    ),
    pytest.param(
        _original(dublin_core={"title": {"en": "T"}}),
        FILES,
        [f"{E}: dublin-core.title: a mapping; expected a string or a list of strings"],
        id="dublin-core-nested-mapping",
    ),
    pytest.param(
        _original(dublin_core={"title": True}),
        FILES,
        [f"{E}: dublin-core.title: true (a boolean); expected a string or a list of strings"],
        id="dublin-core-boolean",
    ),
    pytest.param(
        _original(dublin_core={"title": None}),
        FILES,
        [f"{E}: dublin-core.title: nothing; expected a string or a list of strings"],
        id="dublin-core-empty-element",
    ),
    # transferable
    pytest.param(
        _original(transferable="maybe"),
        FILES,
        [f"{E}: transferable: 'maybe'; expected true or false"],
        id="transferable-maybe",
    ),
    pytest.param(
        _original(transferable="false"),
        FILES,
        [f"{E}: transferable: 'false'; expected true or false"],
        id="transferable-quoted-false",
    ),
    pytest.param(
        _original(transferable=0),
        FILES,
        [f"{E}: transferable: 0 (a number); expected true or false"],
        id="transferable-zero",
    ),
    # every problem of one descriptor, in the order found: unknown keys, then the table's order
    pytest.param(
        {"titel": "x", "state": "Orignal", "language": "xx", "transferable": "maybe"},
        FILES,
        [
            f"{W}: titel: an unknown key; expected {ITEM_KEYS}",
            f"{E}: state: 'Orignal'; expected one of Original, Copy, Deleted",
            f"{E}: language: 'xx' ('x' at character 1); {NOT_A_LANGUAGE}",
            f"{E}: transferable: 'maybe'; expected true or false",
        ],
        id="all-problems-in-order",
    ),
]


@pytest.mark.parametrize("raw, files, expected", BAD_ITEMS)
def test_bad_item(raw, files, expected):
    item, problems = _item(raw, files)
    assert problems == expected
    assert item is None


def test_bad_repository_path_names_the_character():
    item, problems = _item(_original(), repository="sid.inpe.br/mtc m18/2009/07.21.13.23")
    assert item is None
    assert problems == [
        "error: a: sid.inpe.br/mtc m18/2009/07.21.13.23/item.yaml: repository path "
        "'sid.inpe.br/mtc m18/2009/07.21.13.23' (' ' at character 16); "
        "expected a repository name: a letter, a digit, '-', '.', '@' or '/' there"
    ]


@pytest.mark.parametrize("key", ["titel", "Title", 3])
def test_unknown_key_is_a_warning_and_the_item_is_kept(key):
    item, problems = _item({"state": "Original", key: "x"})
    assert item is not None and item.state == "Original"
    assert problems == [f"{W}: {key}: an unknown key; expected {ITEM_KEYS}"]


@pytest.mark.parametrize(
    "creators, flagged",
    [
        (["Silva", "A.", "Costa", "B."], [1, 3]),  # [Silva, A., Costa, B.] in a flow list
        (["Souza", "J.-P."], [1]),
        (["Silva, A.", "Costa, B."], []),  # quoted: one name a value
        (["A.", "Silva"], []),  # initials first: a name of its own
        (["Silva", "Costa"], []),
    ],
)
def test_names_split_by_a_flow_lists_commas_are_a_warning(creators, flagged):
    item, problems = _item(_original(dublin_core={"title": "T", "creator": creators}))
    assert item is not None and item.dublin_core[1] == ("creator", tuple(creators))
    assert [p.split(": ")[3] for p in problems] == [
        f"dublin-core.creator[{index}]" for index in flagged
    ]
    assert all(p.startswith("warning: ") and "initials alone after" in p for p in problems)


# --- archive.yaml ----------------------------------------------------------------------

SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
A = "error: a: archive.yaml"
ARCHIVE_KEYS = (
    "one of address, service-ibi, service-ibip, platform-software-ibi, file-url, file-list-url, "
    "relations, pair-list-charset, deposit-host, deposit-ip, deposit-port, deposit-granularity"
)


def _archive(raw):
    info, problems = read_archive_info("a", raw)
    return info, [str(p) for p in problems]


def _good_archive(**keys):
    return {
        "address": "mtc-m16c.sid.inpe.br",
        "service-ibi": SERVICE,
        **{k.replace("_", "-"): v for k, v in keys.items()},
    }


VALID_ARCHIVES = [
    # the bundled sample's two archive.yaml files
    pytest.param(
        _good_archive(
            platform_software_ibi="dpi.inpe.br/banon/1998/08.02.08.56",
            relations=["", ".lastedition", ".metadata(oai_dc)", ".translation(en)"],
        ),
        {
            "address": "mtc-m16c.sid.inpe.br",
            "file_url": "http://{address}/col/{repository}/doc/{path}",
            "file_list_url": "{site}files/{repository}/",
        },
        4,
        id="sample-mtc-m16c",
    ),
    pytest.param(
        {
            "address": "mtc-m16d.sid.inpe.br",
            "service-ibi": "sid.inpe.br/mtc-m19@80/2009/08.21.17.02",
            "service-ibip": "8JMKD3MGP7W/35N6DBS",
        },
        {"address": "mtc-m16d.sid.inpe.br", "relations": None},
        None,
        id="sample-mtc-m16d",
    ),
    pytest.param(
        _good_archive(address="localhost:8080", file_url="{site}doc/{ibip}/{path}"),
        {"address": "localhost:8080", "file_url": "{site}doc/{ibip}/{path}"},
        None,
        id="port-and-template",
    ),
    pytest.param(
        _good_archive(relations=[None, ".lastedition", ".lastedition"]),
        {},
        2,
        id="relations-none-and-repeats",
    ),
    # optional keys left empty mean "absent", as service-ibip and platform-software-ibi do
    pytest.param(
        _good_archive(
            file_url=None, file_list_url=None, service_ibip=None, platform_software_ibi=None
        ),
        {
            "file_url": "http://{address}/col/{repository}/doc/{path}",
            "file_list_url": "{site}files/{repository}/",
            "service_ibip": None,
            "platform_ibi": None,
        },
        None,
        id="empty-optional-keys",
    ),
    pytest.param(_good_archive(relations=None), {"relations": None}, None, id="relations-empty"),
]


@pytest.mark.parametrize("raw, expected, relation_count", VALID_ARCHIVES)
def test_valid_archive(raw, expected, relation_count):
    info, problems = _archive(raw)
    assert problems == []
    assert {name: getattr(info, name) for name in expected} == expected
    if relation_count is not None:
        assert len(info.relations) == relation_count


BAD_ARCHIVES = [
    pytest.param(
        ["address"], [f"{A}: a list; expected a YAML mapping of keys to values"], id="a-list"
    ),
    pytest.param(
        None, [f"{A}: an empty file; expected a YAML mapping of keys to values"], id="empty-file"
    ),
    pytest.param(
        {"service-ibi": SERVICE},
        [f"{A}: address: nothing; expected the Archive's host[:port] (a required key)"],
        id="address-missing",
    ),
    pytest.param(
        {"address": None, "service-ibi": SERVICE},
        [f"{A}: address: nothing; expected the Archive's host[:port] (a required key)"],
        id="address-empty",
    ),
    pytest.param(
        _good_archive(address="http://mtc-m16c.sid.inpe.br/"),
        [
            f"{A}: address: 'http://mtc-m16c.sid.inpe.br/'; expected a host name or IP, optionally ':port' "
            "(DNS's and TCP's limits: labels of at most 63 characters, 253 in all; a port from 1 to 65535)"
        ],
        id="address-is-a-url",
    ),
    pytest.param(
        {"address": "mtc-m16c.sid.inpe.br"},
        [
            f"{A}: service-ibi: nothing; expected the repository name of the archive service (a required key)"
        ],
        id="service-ibi-missing",
    ),
    pytest.param(
        {"address": "mtc-m16c.sid.inpe.br", "service-ibi": None},
        [
            f"{A}: service-ibi: nothing; expected the repository name of the archive service (a required key)"
        ],
        id="service-ibi-empty",
    ),
    pytest.param(
        _good_archive(service_ibi="8JMKD3MGP7W/35N6DBS"),
        [
            f"{A}: service-ibi: '8JMKD3MGP7W/35N6DBS' ('/' at character 12); expected an IBI in "
            "repository-name form: a letter, a digit, '-' or '.' there"
        ],
        id="service-ibi-is-an-ibip",
    ),
    pytest.param(
        _good_archive(service_ibip=SERVICE),
        [f"{A}: service-ibip: '{SERVICE}'; expected an IBIp"],
        id="service-ibip-is-a-repository-name",
    ),
    pytest.param(
        _good_archive(platform_software_ibi="x y"),
        [
            f"{A}: platform-software-ibi: 'x y' (' ' at character 2); {ANY_IBI}: "
            "a letter, a digit, '-', '.' or '/' there"
        ],
        id="platform-software-ibi-bad",
    ),
    pytest.param(
        _good_archive(file_url="https://{address}/files/{foo}/{path}"),
        [
            f"{A}: file-url: field {{foo}} in 'https://{{address}}/files/{{foo}}/{{path}}'; "
            "expected only {address}, {repository}, {ibip}, {path}, {site}"
        ],
        id="file-url-unknown-field",
    ),
    pytest.param(
        _good_archive(file_list_url=3),
        [f"{A}: file-list-url: 3 (a number); expected a URL template string"],
        id="file-list-url-int",
    ),
    pytest.param(
        _good_archive(relations=".lastedition"),
        [
            f"{A}: relations: '.lastedition'; expected a list of relations such as \"\", "
            ".lastedition, .metadata(oai_dc)"
        ],
        id="relations-not-a-list",
    ),
    pytest.param(
        _good_archive(relations=["", ".lastedition", ".metadata(oai_dc"]),
        [
            f"{A}: relations[2]: '.metadata(oai_dc' (end of input at character 17); "
            "expected a relation of Table 7.5: ')' there"
        ],
        id="relations-unclosed",
    ),
    pytest.param(
        _good_archive(relations=[".lastedition", 3, ".metadata(x)"]),
        [
            f"{A}: relations[1]: 3 (a number); expected a relation string",
            f"{A}: relations[2]: '.metadata(x)' ('x' at character 11); expected a relation of Table 7.5: "
            "'oai_dc' there",
        ],
        id="relations-every-bad-entry",
    ),
]


@pytest.mark.parametrize("raw, expected", BAD_ARCHIVES)
def test_bad_archive(raw, expected):
    info, problems = _archive(raw)
    assert problems == expected
    assert info is None


def test_archive_unknown_key_is_a_warning():
    info, problems = _archive(_good_archive(adress="x"))
    assert info is not None
    assert problems == [
        f"warning: a: archive.yaml: adress: an unknown key; expected {ARCHIVE_KEYS}; did you mean address?"
    ]


def test_archive_pair_list_charset_defaults_to_utf8_and_takes_iso_8859_1():
    assert _archive(_good_archive())[0].pair_list_charset == "utf-8"
    info, problems = _archive(_good_archive(pair_list_charset="iso-8859-1"))
    assert (info.pair_list_charset, problems) == ("iso-8859-1", [])


def test_archive_unknown_pair_list_charset_is_an_error():
    info, problems = _archive(_good_archive(pair_list_charset="latin-9"))
    assert info is None
    assert problems == [
        "error: a: archive.yaml: pair-list-charset: 'latin-9'; expected one of utf-8, iso-8859-1"
    ]


@settings(max_examples=500, deadline=None)
@given(
    st.tuples(
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 25),
        st.integers(0, 61),
        st.integers(0, 61),
    )
)
def test_a_timestamp_is_refused_exactly_when_it_names_no_real_date_and_time(fields):
    """The calendar check (fromisoformat on ISO_UTC's shape) against its definition:
    what strptime reads as a date and time, at and around every field's bounds."""
    text = "%04d-%02d-%02dT%02d:%02d:%02dZ" % fields
    collector = descriptors.Collector("a", "R/item.yaml")
    context = {"fallback_timestamp": "2000-01-01T00:00:00Z"}
    kept = descriptors._timestamp(collector, "timestamp", text, context)
    try:
        _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
        real = True
    except ValueError:
        real = False
    assert kept == text
    assert collector.failed is not real


def test_what_repeats_over_items_is_one_string_and_stays_one_in_a_pickle():
    """States, types, languages, file, format and Dublin Core names repeat over an
    Archive's items: the crawl keeps one string of each, so a large build holds them
    once, and a pickle (the crawl cache, the state, a worker's results) keeps them shared."""

    def copy(text):
        return "".join(list(text))  # an equal string that is another object, as YAML gives

    def read(suffix):
        raw = {
            "state": copy("Original"),
            "content-type": copy("Data"),
            "language": copy("pt-BR"),
            "target": copy("report.txt"),
            "translations": {copy("en"): "sid.inpe.br/x/2020/01.01.00.00"},
            "formats": {copy("oai_dc"): copy("oai_dc.xml")},
            "dublin-core": {copy("type"): copy("Text"), copy("title"): copy("A long title, " * 3)},
        }
        files = (copy("report.txt"), copy("oai_dc.xml"))
        item, problems = read_item(copy("a"), f"{REPO[:-2]}{suffix}", raw, files, FALLBACK)
        assert problems == [] and item is not None
        return item

    first, second = read("01"), read("02")
    for name in ("archive", "state", "content_type", "language", "target"):
        assert getattr(first, name) is getattr(second, name), name
    assert all(a is b for a, b in zip(first.files, second.files))
    assert first.translations[0][0] is second.translations[0][0]
    assert all(a is b for a, b in zip(first.formats[0], second.formats[0]))
    (type_key, (text,)), (title_key, (title,)) = first.dublin_core
    assert type_key is second.dublin_core[0][0] and text is second.dublin_core[0][1][0]
    assert title_key is second.dublin_core[1][0]
    assert title == second.dublin_core[1][1][0]  # a long value is left as it came
    assert first.repository.subdomain is second.repository.subdomain
    shared = pickle.loads(pickle.dumps([first, second]))
    assert shared == [first, second]
    assert shared[0].state is shared[1].state and shared[0].files[0] is shared[1].files[0]
