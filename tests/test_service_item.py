"""An Archive's service is itself an identified, non-transferable original item (the
storage model's rule 5): the build warns when an Archive does not hold its service-ibi
so, and the sample and a new project hold theirs (0 warnings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives
from ibistatic.init import Project, init_project

SAMPLE = Path(__file__).resolve().parent.parent / "ibistatic" / "sample_archive"
SITE = "https://ibi.example.org/"
SERVICE = "example.org/service/2020/01.01.00.00"
RULE = (
    "expected the repository of the Archive's service in this Archive: state Original, "
    "transferable: false (storage model, rule 5)"
)


def service_warnings(roots) -> list[str]:
    return [str(p) for p in load_archives(roots, SITE).problems if p.key == "service-ibi"]


def test_the_sample_holds_both_services_with_no_problem():
    loaded = load_archives([SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"], SITE)
    assert loaded.problems == []
    for archive in loaded.crawl.archives:
        held = [i for i in archive.items if i.repository.text == archive.info.service_ibi.text]
        assert [(i.state, i.transferable) for i in held] == [("Original", False)]


@pytest.mark.parametrize(
    "descriptor, found",
    [
        (None, "which this Archive does not hold"),
        ({"state": "Copy", "transferable": False}, "which this Archive holds as Copy"),
        ({"state": "Original"}, "which this Archive holds as a transferable original"),
        ({"state": "Deleted", "files": {}}, "which this Archive holds as Deleted"),
    ],
)
def test_an_archive_not_holding_its_service_so_is_warned(tmp_path, descriptor, found):
    root = write_archive(tmp_path / "a", "a.example.org", SERVICE, service_item=False)
    write_item(root, "example.org/rep/2020/01.02.03.04", state="Original")
    if descriptor is not None:
        write_item(root, SERVICE, **descriptor)
    assert service_warnings([root]) == [
        f"warning: a: archive.yaml: service-ibi: {SERVICE}, {found}; {RULE}"
    ]


def test_the_service_held_by_another_archive_is_no_substitute(tmp_path):
    a = write_archive(tmp_path / "a", "a.example.org", SERVICE, service_item=False)
    b = write_archive(tmp_path / "b", "b.example.org", "example.org/service/2020/01.01.00.01")
    write_item(b, SERVICE, state="Original", transferable=False)
    assert service_warnings([a, b]) == [
        f"warning: a: archive.yaml: service-ibi: {SERVICE}, which this Archive does not hold; {RULE}"
    ]


def test_a_new_project_holds_its_service_and_builds_clean(tmp_path):
    written = init_project(tmp_path / "p", Project(site_url=SITE))
    archive = tmp_path / "p" / "archives" / "archive"
    service = next(p for p in written if p.name == "item.yaml")
    assert (service.parent / "doc" / "index.html") in written
    loaded = load_archives([archive], SITE)
    assert loaded.problems == []
    (item,) = loaded.crawl.archives[0].items
    assert (item.repository.text, item.state, item.transferable, item.target) == (
        loaded.crawl.archives[0].info.service_ibi.text,
        "Original",
        False,
        "index.html",
    )
