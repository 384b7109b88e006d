"""Property lists (Algorithm 2 MONTARLISTADEURL), filtering and the Archive service,
on the sample archive modelled on the standard's own examples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ibistatic.cli import main
from ibistatic.core.identifiers import ibi_key
from ibistatic.core.pairlists import serialize_pairs
from ibistatic.core.properties import (
    archive_response,
    filter_property_list,
    property_list,
    property_pairs,
)
from ibistatic.core.relations import parse_verb_list

GOLDEN = Path(__file__).parent / "golden"
URLKEY = re.compile(r"^urlkey [0-9]{10,}(-[0-9]{10,})?$", re.M)  # at the end: no CRLF after it


def without_urlkey(text: str) -> str:
    return URLKEY.sub("urlkey <fresh>", text)


def test_example_7_2_byte_for_byte(capsys, sample_dir):
    """ibistatic properties prints Example 7.2 as served (CRLF between pairs, nothing
    after the last), the urlkey value aside."""
    assert (
        main(["properties", "8JMKD3MGP8W/35MME4E", "--archive", str(sample_dir / "mtc-m16c")]) == 0
    )
    printed = capsys.readouterr().out
    listing = (
        (GOLDEN / "service" / "example_7_2.txt").read_text(encoding="utf-8").partition("\n\n")[2]
    )
    assert without_urlkey(printed) == without_urlkey("\r\n".join(listing.splitlines()))


def test_properties_of_an_ibi_the_archive_does_not_hold_prints_nothing(capsys, sample_dir):
    assert (
        main(["properties", "8JMKD3MGP8W/3333333", "--archive", str(sample_dir / "mtc-m16c")]) == 0
    )
    assert capsys.readouterr().out == ""


def test_urlkey_is_fresh_per_answer_and_follows_its_grammar(sample_loaded):
    view = sample_loaded.view("mtc-m16c")
    keys = {property_list(view, ibi_key("8JMKD3MGP8W/35MME4E")).urlkey for _ in range(5)}
    assert len(keys) == 5
    assert all(re.fullmatch(r"[0-9]{10,}-[0-9]{10,}", key) for key in keys)


def test_section_8_2_first_answer_has_next_edition_and_no_url(sample_loaded):
    view = sample_loaded.view("mtc-m16c")
    verbs = parse_verb_list("GetLastEdition GetMetadata(oai_dc)")
    pairs = property_pairs(
        filter_property_list(
            property_list(
                view,
                ibi_key("8JMKD3MGP8W/35MMLL8"),
                verbs=verbs,
                urlkey=lambda: "1427244889-5349022633744855",
            ),
            verbs,
        )
    )
    assert serialize_pairs(pairs).splitlines() == [
        "archiveaddress mtc-m16c.sid.inpe.br",
        "ibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}",
        "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}",
        "ibi.nextedition {rep sid.inpe.br/mtc-m18/2012/07.12.18.08}",
        "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}",
    ]  # no urlkey where no url pair survives (the printed listing of §8.2)


def test_section_8_2_second_answer_has_the_oai_dc_url(sample_loaded):
    view = sample_loaded.view("mtc-m16c")
    verbs = parse_verb_list("GetLastEdition GetMetadata(oai_dc)")
    pairs = property_pairs(
        filter_property_list(
            property_list(
                view,
                ibi_key("sid.inpe.br/mtc-m18/2012/07.12.18.08"),
                verbs=verbs,
                urlkey=lambda: "1426286454-36108967764060357",
            ),
            verbs,
        )
    )
    assert serialize_pairs(pairs).splitlines() == [
        "archiveaddress mtc-m16c.sid.inpe.br",
        "contenttype.lastedition.metadata(oai_dc) Metadata",
        "ibi {rep sid.inpe.br/mtc-m18/2012/07.12.18.08 ibip 8JMKD3MGP8W/3C9EP6P}",
        "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}",
        "ibi.lastedition.metadata(oai_dc) {rep sid.inpe.br/mtc-m18/2012/07.12.18.08.49}",
        "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}",
        "state.lastedition.metadata(oai_dc) Original",
        "timestamp.lastedition.metadata(oai_dc) 2014-04-04T17:36:01Z",
        "url.lastedition.metadata(oai_dc) http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc",
        "urlkey 1426286454-36108967764060357",
    ]


def test_section_8_1_answer_without_verbs(sample_loaded):
    view = sample_loaded.view("mtc-m16c")
    pairs = property_pairs(
        filter_property_list(
            property_list(
                view, ibi_key("8JMKD3MGP8W/35MMLL8"), urlkey=lambda: "1427244889-5349022633744855"
            ),
            None,
        )
    )
    assert serialize_pairs(pairs).splitlines() == [
        "archiveaddress mtc-m16c.sid.inpe.br",
        "contenttype Data",
        "ibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}",
        "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}",
        "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}",
        "state Original",
        "timestamp 2009-07-21T14:43:31Z",
        "url http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
        "urlkey 1427244889-5349022633744855",
    ]


def test_example_7_3_filter_keeps_every_translation(sample_loaded):
    view = sample_loaded.view("mtc-m16c")
    verbs = parse_verb_list("GetTranslation")
    pairs = property_pairs(
        filter_property_list(
            property_list(
                view, ibi_key("8JMKD3MGP8W/35MME4E"), urlkey=lambda: "1426387214-9164566186556927"
            ),
            verbs,
        )
    )
    names = [name for name, _ in pairs]
    assert names == [
        "archiveaddress",
        "contenttype.translation(en)",
        "contenttype.translation(pt)",
        "ibi",
        "ibi.archiveservice",
        "ibi.platformsoftware",
        "ibi.translation(en)",
        "ibi.translation(pt)",
        "state.translation(en)",
        "state.translation(pt)",
        "timestamp.translation(en)",
        "timestamp.translation(pt)",
        "url.translation(en)",
        "url.translation(pt)",
        "urlkey",
    ]


def test_unknown_ibi_gives_an_empty_answer(sample_loaded):
    assert property_list(sample_loaded.view("mtc-m16c"), ibi_key("LK47B6W/362SFKH")) is None
    assert property_pairs(None) == []


def test_deleted_branch(sample_loaded):
    pairs = property_pairs(
        property_list(
            sample_loaded.view("mtc-m16c"), ibi_key("sid.inpe.br/mtc-m19/2011/05.10.18.31")
        )
    )
    assert serialize_pairs(pairs).splitlines() == [
        "archiveaddress mtc-m16c.sid.inpe.br",
        "ibi {rep sid.inpe.br/mtc-m19/2011/05.10.18.31}",
        "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}",
        "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}",
        "state Deleted",
        "timestamp 2011-05-10T18:31:00Z",
    ]


def test_unidentified_platform_is_empty_braces(tmp_path):
    from archive_factory import write_archive, write_item
    from ibistatic.archive.load import load_archives

    root = write_archive(tmp_path / "a", "a.example.org", "example.org/svc/2020/01.01.00.00")
    write_item(root, "example.org/one/2020/01.02.03.04", state="Original")
    loaded = load_archives([root], "https://ibi.example.org/")
    text = serialize_pairs(
        property_pairs(
            property_list(
                loaded.view("a"), ibi_key("example.org/one/2020/01.02.03.04"), urlkey=lambda: "1"
            )
        )
    )
    assert "ibi.platformsoftware {}" in text.splitlines()


def test_filepath_and_file_list_variants(sample_loaded):
    view = sample_loaded.view("mtc-m16d")
    key = ibi_key("LK47B6W/362SFKH")
    with_path = dict(property_pairs(property_list(view, key, filepath="Relatório técnico.txt")))
    assert (
        with_path["url"]
        == "http://mtc-m16d.sid.inpe.br/col/iconet.com.br/banon/2009/09.09.22.01/doc/Relat%C3%B3rio%20t%C3%A9cnico.txt"
    )
    missing = dict(property_pairs(property_list(view, key, filepath="no-such-file.pdf")))
    assert "url" not in missing and "ibi" in missing
    file_list = dict(
        property_pairs(
            property_list(view, key, filepath="reference.bib", verbs=parse_verb_list("GetFileList"))
        )
    )
    assert (
        file_list["url"] == "https://ibi.example.org/files/iconet.com.br/banon/2009/09.09.22.01/"
    )  # the verb list wins


def test_example_7_9_default_file(sample_loaded):
    pairs = dict(
        property_pairs(property_list(sample_loaded.view("mtc-m16d"), ibi_key("LK47B6W/362SFKH")))
    )
    assert (
        pairs["url"]
        == "http://mtc-m16d.sid.inpe.br/col/iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf"
    )


def test_inline_dublin_core_has_url_but_no_ibi(sample_loaded):
    pairs = dict(
        property_pairs(property_list(sample_loaded.view("mtc-m16d"), ibi_key("LK47B6W/362SFKH")))
    )
    assert (
        pairs["url.metadata(oai_dc)"]
        == "https://ibi.example.org/metadata/iconet.com.br/banon/2009/09.09.22.01/oai_dc.xml"
    )
    assert "ibi.metadata(oai_dc)" not in pairs
    assert pairs["contenttype.metadata"] == "Metadata"


def test_archive_service_subjects(sample_loaded):
    view = sample_loaded.view("mtc-m16c")
    assert (
        serialize_pairs(archive_response(view, {"servicesubject": "inclusionConfirmationRequest"}))
        == "confirmation yes"
    )
    assert (
        serialize_pairs(archive_response(view, {"servicesubject": "acknowledgment", "ibi": "x"}))
        == "notice {acknowledgment received}"
    )
    answer = archive_response(
        view,
        {
            "servicesubject": "urlRequest",
            "clientinformation.ipaddress": "150.163.2.175",
            "parsedibiurl.ibi": "8JMKD3MGP8W/35MMLL8",
            "parsedibiurl.verblist": "GetLastEdition GetMetadata(oai_dc)",
        },
    )
    assert dict(answer)["ibi.nextedition"] == ("rep", "sid.inpe.br/mtc-m18/2012/07.12.18.08")


def test_unknown_service_subject_is_a_clear_error(sample_loaded):
    from ibistatic.errors import UsageError

    with pytest.raises(
        UsageError,
        match="servicesubject 'x': expected inclusionConfirmationRequest, urlRequest or acknowledgment",
    ):
        archive_response(sample_loaded.view("mtc-m16c"), {"servicesubject": "x"})


def test_properties_command_filters_with_verbs(capsys, sample_dir):
    assert (
        main(
            [
                "properties",
                "8JMKD3MGP8W/35MMLL8",
                "--archive",
                str(sample_dir / "mtc-m16c"),
                "--verbs",
                "GetLastEdition GetMetadata(oai_dc)",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert "ibi.nextedition {rep sid.inpe.br/mtc-m18/2012/07.12.18.08}" in lines
    assert not any(line.startswith("url") and not line.startswith("urlkey") for line in lines)


def test_properties_command_bad_ibi_exits_2(capsys, sample_dir):
    assert (
        main(["properties", "8JMKD3MGP8W/35MMEIE", "--archive", str(sample_dir / "mtc-m16c")]) == 2
    )
    assert "^" in capsys.readouterr().err


# -- the typed answer ------------------------------------------------------------------


def test_property_list_is_a_frozen_typed_answer(sample_loaded):
    from dataclasses import FrozenInstanceError

    from ibistatic.core.properties import RelationAnswer
    from ibistatic.core.relations import parse_relation

    answer = property_list(
        sample_loaded.view("mtc-m16c"), ibi_key("8JMKD3MGP8W/35MMLL8"), urlkey=lambda: "1"
    )
    assert (answer.archiveaddress, answer.urlkey) == ("mtc-m16c.sid.inpe.br", "1")
    assert answer.services == ("rep", "sid.inpe.br/mtc-m18@80/2008/03.17.15.17")
    assert answer.platform == ("rep", "dpi.inpe.br/banon/1998/08.02.08.56")
    assert answer.nextedition == ("rep", "sid.inpe.br/mtc-m18/2012/07.12.18.08")
    assert answer.item == RelationAnswer(
        ("rep", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43", "ibip", "8JMKD3MGP8W/35MMLL8"),
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
        "Original",
        "2009-07-21T14:43:31Z",
        "Data",
    )
    assert (answer.ibi, answer.state) == (answer.item.ibi, "Original")
    assert (
        answer.answer(parse_relation(".lastedition")) is None
    )  # not the last edition: unknown here
    with pytest.raises(FrozenInstanceError):
        answer.urlkey = "2"


def test_deleted_answer_is_the_item_alone(sample_loaded):
    from ibistatic.core.properties import RelationAnswer

    answer = property_list(
        sample_loaded.view("mtc-m16c"), ibi_key("sid.inpe.br/mtc-m19/2011/05.10.18.31")
    )
    assert dict(answer.relations) == {
        (): RelationAnswer(
            ("rep", "sid.inpe.br/mtc-m19/2011/05.10.18.31"), None, "Deleted", "2011-05-10T18:31:00Z"
        )
    }
    assert (answer.urlkey, answer.nextedition) == (None, None)
    assert (
        filter_property_list(answer, parse_verb_list("GetMetadata")) == answer
    )  # all of it identifies


def test_filtering_keeps_only_the_ibi_of_the_item_and_the_asked_relation(sample_loaded):
    from ibistatic.core.relations import parse_relation

    view = sample_loaded.view("mtc-m16c")
    whole = property_list(view, ibi_key("sid.inpe.br/mtc-m18/2012/07.12.18.08"), urlkey=lambda: "7")
    kept = filter_property_list(whole, parse_verb_list("GetMetadata(oai_dc)"))
    asked = parse_relation(".metadata(oai_dc)")
    assert set(kept.relations) == {(), asked}
    assert kept.item.ibi == whole.item.ibi and (kept.item.url, kept.item.state) == (None, None)
    assert kept.answer(asked) == whole.answer(asked)
    assert kept.urlkey == "7"  # a url survives: its key too
    no_url = filter_property_list(whole, parse_verb_list("GetTranslation(fr)"))
    assert set(no_url.relations) == {()} and no_url.urlkey is None


def test_property_pairs_spell_every_known_field_sorted():
    from ibistatic.core.properties import PropertyList, RelationAnswer
    from ibistatic.core.relations import parse_relation

    answer = PropertyList(
        "a.example",
        ("rep", "x/y/2020/01.01.00.00"),
        (),
        {
            (): RelationAnswer(("rep", "x/i/2020/01.02.03.04")),
            parse_relation(".metadata"): RelationAnswer(
                None, "https://a.example/m", "Original", "2020-01-01T00:00:00Z", "Metadata"
            ),
        },
        urlkey="5",
    )
    assert property_pairs(answer) == [
        ("archiveaddress", "a.example"),
        ("contenttype.metadata", "Metadata"),
        ("ibi", ("rep", "x/i/2020/01.02.03.04")),
        ("ibi.archiveservice", ("rep", "x/y/2020/01.01.00.00")),
        ("ibi.platformsoftware", ()),
        ("state.metadata", "Original"),
        ("timestamp.metadata", "2020-01-01T00:00:00Z"),
        ("url.metadata", "https://a.example/m"),
        ("urlkey", "5"),
    ]
