"""The resolution process (resolution-system §6.2 and §8) over the JSON index of the sample archive."""

from __future__ import annotations

import pytest

from archive_factory import write_archive, write_item
from conftest import SAMPLE, SITE_URL
from ibistatic.archive.load import load_archives
from ibistatic.index.writer import write_index
from ibistatic.resolver import Resolver

M16C = "http://mtc-m16c.sid.inpe.br/col/"
M16D = "http://mtc-m16d.sid.inpe.br/col/"


@pytest.fixture(scope="module")
def resolver(sample_index):
    return Resolver(sample_index)


def resolver_over(tmp_path, roots) -> Resolver:
    loaded = load_archives(roots, SITE_URL)
    write_index(loaded, tmp_path / "index")
    return Resolver(tmp_path / "index")


CASES = [
    # (persistent URL, Accept-Language, expected URL)
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8",
        None,
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
    ),  # §8.1
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8!:(oai_dc)",
        None,
        M16C + "sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc",
    ),  # §8.2
    (
        "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
        None,
        M16C + "sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP8W/35MMLL8!",
        None,
        M16C + "sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP8W/35MME4E+",
        "pt-BR,pt;q=0.8",
        M16C + "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP8W/35MME4E+",
        "en",
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP8W/35MME4E+",
        "fr",  # no translation matches: the item
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP8W/35MME4E+(pt)",
        None,
        M16C + "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP8W/35MME4E:",
        None,
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/metadata.cgi",
    ),
    (
        "https://ibi.example.org/LK47B6W/362SFKH/Relat%C3%B3rio%20t%C3%A9cnico.txt",
        None,
        M16D + "iconet.com.br/banon/2009/09.09.22.01/doc/Relat%C3%B3rio%20t%C3%A9cnico.txt",
    ),
    (
        "https://ibi.example.org/LK47B6W/362SFKH/figuras/mapa%201.svg",
        None,
        M16D + "iconet.com.br/banon/2009/09.09.22.01/doc/figuras/mapa%201.svg",
    ),
    (
        "https://ibi.example.org/LK47B6W/362SFKH?ibiurl.verblist=GetFileList",
        None,
        "https://ibi.example.org/files/iconet.com.br/banon/2009/09.09.22.01/",
    ),
    (
        "https://ibi.example.org/lk47b6w/362sfkh",
        None,  # lower-case IBIp
        M16D + "iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf",
    ),
    (
        "https://ibi.example.org/SID.INPE.BR/MTC-M18@80/2009/07.21.14.43",
        None,
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
    ),
    (
        "https://ibi.example.org/LK47B6W/362SFKH:(oai_dc)",
        None,
        "https://ibi.example.org/metadata/iconet.com.br/banon/2009/09.09.22.01/oai_dc.xml",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP7W/3EPGUE5:+(en)",
        None,  # English translation of the metadata
        M16D + "sid.inpe.br/mtc-m19/2013/09.04.12.27.59/doc/metadata.html",
    ),
    (
        "https://ibi.example.org/8JMKD3MGP7W/3EPGUE5+(en):",
        None,  # metadata of the English translation (inline)
        "https://ibi.example.org/metadata/sid.inpe.br/mtc-m19/2013/09.04.12.30.12/",
    ),
]


@pytest.mark.parametrize(
    "url, accept, expected",
    CASES,
    ids=[c[0].split("/", 3)[-1] + (f" [{c[1]}]" if c[1] else "") for c in CASES],
)
def test_resolves_to(resolver, url, accept, expected):
    result = resolver.resolve(url, accept_language=accept)
    assert (result.url, result.alert) == (expected, None)


def test_section_8_2_records_the_chain_and_final_ibi(resolver):
    result = resolver.resolve("8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    assert result.chain == ("8JMKD3MGP8W/35MMLL8", "sid.inpe.br/mtc-m18/2012/07.12.18.08")
    assert (result.archive, result.state, result.ibi, result.content_type) == (
        "mtc-m16c",
        "Original",
        "sid.inpe.br/mtc-m18/2012/07.12.18.08.49",
        "Metadata",
    )


def test_deleted_item(resolver):
    result = resolver.resolve("https://ibi.example.org/sid.inpe.br/mtc-m19/2011/05.10.18.31")
    assert (result.url, result.alert, result.state, result.archive) == (
        None,
        "deleted",
        "Deleted",
        "mtc-m16c",
    )


def test_unknown_ibi_is_not_found(resolver):
    result = resolver.resolve("https://ibi.example.org/8JMKD3MGP8W/3333333")
    assert (result.url, result.alert) == (None, "not-found")


def test_missing_file_is_unavailable(resolver):
    assert resolver.resolve("LK47B6W/362SFKH/nothing.pdf").alert == "unavailable"


def test_required_original_when_a_copy_comes_first(tmp_path):
    # mtc-m16d holds a Copy of 8JMKD3MGP8W/35MME4E; put it first in resolution order.
    resolver = resolver_over(tmp_path, [SAMPLE / "mtc-m16d", SAMPLE / "mtc-m16c"])
    plain = resolver.resolve("8JMKD3MGP8W/35MME4E")
    assert (plain.archive, plain.state) == ("mtc-m16d", "Copy")
    assert plain.url == M16D + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf"
    original = resolver.resolve("8JMKD3MGP8W/35MME4E?ibiurl.requireditemstatus=Original")
    assert (original.archive, original.state) == ("mtc-m16c", "Original")
    assert (
        original.url == M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf"
    )


def test_only_copies_and_original_required_is_no_original(tmp_path):
    a = write_archive(tmp_path / "a", "a.example.org", "example.org/svc/2020/01.01.00.00")
    write_item(a, "example.org/one/2020/01.02.03.04", state="Copy")
    resolver = resolver_over(tmp_path, [a])
    assert resolver.resolve("example.org/one/2020/01.02.03.04").state == "Copy"
    assert (
        resolver.resolve(
            "example.org/one/2020/01.02.03.04?ibiurl.requireditemstatus=Original"
        ).alert
        == "no-original"
    )


def test_two_originals_conflict_only_when_the_original_is_asked(tmp_path):
    rogue = write_archive(
        tmp_path / "rogue", "rogue.example.org", "example.org/svc/2020/01.01.00.00"
    )
    write_item(
        rogue,
        "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
        state="Original",
        ibip="8JMKD3MGP8W/35MMLL8",
    )
    resolver = resolver_over(tmp_path, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d", rogue])
    plain = resolver.resolve(
        "8JMKD3MGP8W/35MMLL8"
    )  # §6.2 "em todos os outros casos": the first answer
    assert (plain.url, plain.alert, plain.archive) == (
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
        None,
        "mtc-m16c",
    )
    result = resolver.resolve("8JMKD3MGP8W/35MMLL8?ibiurl.requireditemstatus=Original")
    assert (result.url, result.alert) == (None, "conflict")
    assert "investigation" in result.message


def test_edition_cycle_is_a_loop(tmp_path):
    a = write_archive(tmp_path / "a", "a.example.org", "example.org/svc/2020/01.01.00.00")
    write_item(
        a,
        "example.org/one/2020/01.02.03.04",
        state="Original",
        next_edition="example.org/one/2020/01.02.03.05",
    )
    write_item(
        a,
        "example.org/one/2020/01.02.03.05",
        state="Original",
        next_edition="example.org/one/2020/01.02.03.04",
    )
    resolver = resolver_over(tmp_path, [a])
    result = resolver.resolve("example.org/one/2020/01.02.03.04!")
    assert result.alert == "loop"
    assert result.chain[:2] == (
        "example.org/one/2020/01.02.03.04",
        "example.org/one/2020/01.02.03.05",
    )
    # without asking for the last edition there is no loop
    assert resolver.resolve("example.org/one/2020/01.02.03.04").url.endswith("/doc/document.txt")


def test_deleted_only_when_no_other_archive_has_it(tmp_path):
    a = write_archive(tmp_path / "a", "a.example.org", "example.org/svc/2020/01.01.00.00")
    b = write_archive(tmp_path / "b", "b.example.org", "example.org/svc/2020/01.01.00.01")
    write_item(a, "example.org/one/2020/01.02.03.04", state="Deleted")
    write_item(b, "example.org/one/2020/01.02.03.04", state="Original")
    result = resolver_over(tmp_path, [a, b]).resolve("example.org/one/2020/01.02.03.04")
    assert (result.archive, result.state) == ("b", "Original")


def test_resolve_cli_json_and_exit_codes(capsys, sample_index):
    import json

    from ibistatic.cli import main

    assert (
        main(["resolve", "8JMKD3MGP8W/35MMLL8!:(oai_dc)", "--index", str(sample_index), "--json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert {"url", "alert", "archive", "state", "ibi"} <= set(result)
    assert result["ibi"] == "sid.inpe.br/mtc-m18/2012/07.12.18.08.49"
    assert (
        main(["resolve", "sid.inpe.br/mtc-m19/2011/05.10.18.31", "--index", str(sample_index)]) == 1
    )
    assert capsys.readouterr().out.startswith("deleted: ")
    assert main(["resolve", "8JMKD3MGP8W/35MMLL8:!", "--index", str(sample_index)]) == 2
    assert "^" in capsys.readouterr().err


def test_precomputed_answers_equal_the_resolution_process(resolver):
    """Every answer the build precomputed is what the resolution process gives."""
    from ibistatic.core.urls import parse_persistent_url
    from ibistatic.resolver import resolve_url

    index = resolver.index
    checked = 0
    for path in sorted((index.path / "answers").glob("*.json")):
        for key in index.shard(path.stem, "answers"):
            for modifier in index.answers(key):
                for spelling in (key, key.lower(), key.upper()):
                    url = "https://ibi.example.org/" + spelling + modifier
                    fast = resolver.precomputed(url)
                    slow = resolve_url(resolver.views, parse_persistent_url(url))
                    assert fast == slow, url
                checked += 1
    assert checked >= 20 * 4  # every IBI of the sample, four modifiers each


def test_precomputed_lookup_resolves_nothing(resolver, monkeypatch):
    import ibistatic.core.resolution as process

    monkeypatch.setattr(process, "resolve", lambda *a, **k: pytest.fail("resolution ran"))
    assert resolver.resolve("https://ibi.example.org/8jmkd3mgp8w/35mmll8!").url.endswith(
        "/doc/CCSDS%20650.0-M-2.pdf"
    )
    assert resolver.resolve("8JMKD3MGP8W/35MMLL8").chain == ("8JMKD3MGP8W/35MMLL8",)


def test_typed_iri_is_sent_as_a_browser_would(resolver):
    result = resolver.resolve("LK47B6W/362SFKH/Relatório técnico.txt")
    assert (
        result.url
        == M16D + "iconet.com.br/banon/2009/09.09.22.01/doc/Relat%C3%B3rio%20t%C3%A9cnico.txt"
    )
