"""The build warns when an Archive's explicit `relations` miss what its items need
(resolution-system §7.2: an Archive holding items without a language "deverá incluir
... a relação .translation sem parâmetro de idioma")."""

from __future__ import annotations

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives

SITE_URL = "https://ibi.example.org/"
REP = "example.org/rep/2020/01.02.03."


def warnings_of(roots) -> list[str]:
    return [str(p) for p in load_archives(roots, SITE_URL).problems]


def test_the_bundled_sample_needs_nothing_more(sample_loaded):
    assert [str(p) for p in sample_loaded.problems] == []


def test_an_item_without_a_language_needs_the_bare_translation(tmp_path):
    a = write_archive(
        tmp_path / "a",
        "a.example.org",
        "example.org/service/2020/01.01.00.00",
        relations=["", ".metadata", ".translation(en)"],
    )
    write_item(a, REP + "04", state="Original", language="en")
    write_item(a, REP + "05", state="Original")
    write_item(a, REP + "06", state="Original")
    assert warnings_of([a]) == [
        "warning: a: archive.yaml: relations: no '.translation', which example.org/rep/2020/01.02.03.05 "
        "(an item without a language) needs; expected every relation the Archive's items need "
        "(resolution-system §7.2)",
    ]


def test_languages_held_or_named_need_their_translation(tmp_path):
    a = write_archive(
        tmp_path / "a",
        "a.example.org",
        "example.org/service/2020/01.01.00.00",
        relations=["", ".translation", ".translation(pt)"],
    )
    write_item(a, REP + "04", state="Original", language="pt-BR", translations={"es": REP + "05"})
    write_item(a, REP + "05", state="Original", language="es")
    assert warnings_of([a]) == [
        "warning: a: archive.yaml: relations: no '.translation(es)', which example.org/rep/2020/01.02.03.04 "
        "(a translation in es) needs; expected every relation the Archive's items need (resolution-system §7.2)",
    ]  # pt-BR is answered by .translation(pt) (a tag L matches L-CC)


def test_deleted_items_and_default_relations_need_nothing(tmp_path):
    # a's service item would need '.translation' (it has no language): a holds none
    service = "example.org/service/2020/01.01.00.00"
    a = write_archive(tmp_path / "a", "a.example.org", service, relations=[""], service_item=False)
    write_item(a, REP + "04", state="Deleted", files={})
    b = write_archive(tmp_path / "b", "b.example.org", "example.org/service/2020/01.01.00.01")
    write_item(b, REP + "05", state="Original")  # no `relations`: every relation is answered
    assert warnings_of([a, b]) == [
        f"warning: a: archive.yaml: service-ibi: {service}, which this Archive does not hold; "
        "expected the repository of the Archive's service in this Archive: state Original, "
        "transferable: false (storage model, rule 5)"
    ]
