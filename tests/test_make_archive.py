"""The synthetic-archive generator (benchmarks/make_archive.py).

A 200-item project must have the advertised mix, only valid repository names and
IBIps, no dangling reference, copies identical to their originals, and the same bytes
on every run with the same arguments.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "make_archive.py"
ITEMS = 200


def _load_module():
    spec = importlib.util.spec_from_file_location("make_archive", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is being built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


make_archive = _load_module()

# Table 6.1 of the identification system, written out independently of the package under test.
ALPHANUM = "[A-Za-z0-9]"
WORD = rf"(?:{ALPHANUM}(?:[A-Za-z0-9-]*{ALPHANUM})?)"
LAST_WORD = rf"(?:[A-Za-z](?:[A-Za-z0-9-]*{ALPHANUM})?)"
SUBDOMAIN = rf"(?:{WORD}\.)*{LAST_WORD}\.?"
PREFIX = rf"{SUBDOMAIN}/{WORD}(?:[.@][0-9]+)?"
SUFFIX = r"[0-9]{4,}/[0-9]{2}\.[0-9]{2}\.[0-9]{2}\.[0-9]{2}(?:\.[0-9]{2}(?:\.[0-9]+)?)?"
REPOSITORY = re.compile(rf"{PREFIX}/{SUFFIX}")
# Table 7.1 of the identification system: digits 2-9 and letters without I O V Y Z; W, X separate.
IBIP = re.compile(r"[2-9A-HJ-NP-UWX]+/[2-9A-HJ-NP-UWX]+")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


@pytest.mark.parametrize(
    "name, valid",
    [
        # the standard's own examples first
        ("sid.inpe.br/mtc-m19/2010/08.25.12.38", True),
        ("sid.inpe.br/mtc-m18@80/2009/07.21.13.23", True),
        ("sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06", True),
        ("sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47", True),
        ("iconet.com.br/banon/2009/09.09.22.01", True),
        ("dpi.inpe.br/banon/1998/08.02.08.56", True),
        ("sid.inpe.br/mtc-m19/2013/09.04.12.27.57.5", True),
        ("sid.inpe.br/mtc m18/2009/07.21.13.23", False),
        ("sid.inpe.br/mtc-/2009/07.21.13.23", False),
        ("sid.inpe.9r/mtc-m18/2009/07.21.13.23", False),
        ("sid.inpe.br/mtc-m18/09/07.21.13.23", False),
        ("sid.inpe.br/mtc-m18/2009/7.21.13.23", False),
        ("sid.inpe.br/mtc-m18/2009/07.21.13", False),
        ("sid.inpe.br/2009/07.21.13.23", False),
    ],
)
def test_repository_regex_follows_the_grammar(name, valid):
    assert bool(REPOSITORY.fullmatch(name)) is valid


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _archive(root: Path) -> dict[str, dict]:
    """Repository name -> descriptor, with the doc/ file names under "_files"."""
    items = {}
    for directory in sorted(p for p in root.glob("*/*/*/*") if p.is_dir()):
        name = directory.relative_to(root).as_posix()
        descriptor = yaml.safe_load((directory / "item.yaml").read_text(encoding="utf-8"))
        doc = directory / "doc"
        descriptor["_files"] = sorted(
            p.relative_to(doc).as_posix() for p in doc.rglob("*") if p.is_file()
        )
        items[name] = descriptor
    return items


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return make_archive.make_project(tmp_path_factory.mktemp("synthetic"), ITEMS, seed=7)


@pytest.fixture(scope="module")
def archive_a(project) -> dict[str, dict]:
    return _archive(project / "archive-a")


@pytest.fixture(scope="module")
def archive_b(project) -> dict[str, dict]:
    return _archive(project / "archive-b")


def _known(archive: dict[str, dict]) -> dict[str, str]:
    """Every IBI form (upper-cased) -> repository name."""
    known = {name.upper(): name for name in archive}
    known.update({d["ibip"].upper(): name for name, d in archive.items() if "ibip" in d})
    return known


def _references(descriptor: dict) -> list[tuple[str, str]]:
    refs = [(key, descriptor[key]) for key in ("next-edition", "metadata") if key in descriptor]
    refs += [("translations", ibi) for ibi in (descriptor.get("translations") or {}).values()]
    return refs


def _edition_members(archive: dict[str, dict], known: dict[str, str]) -> set[str]:
    members = set()
    for name, descriptor in archive.items():
        if "next-edition" in descriptor:
            members |= {name, known[descriptor["next-edition"].upper()]}
    return members


def _kinds(archive: dict[str, dict]) -> dict[str, int]:
    known = _known(archive)
    deleted = sum(d["state"] == "Deleted" for d in archive.values())
    metadata = sum(d.get("content-type") == "Metadata" for d in archive.values())
    edition = len(_edition_members(archive, known))
    # Translations come in pairs linked both ways: one of each pair is "the translation".
    translation = sum(bool(d.get("translations")) for d in archive.values()) // 2
    plain = len(archive) - deleted - metadata - edition - translation
    return {
        "plain": plain,
        "translation": translation,
        "edition": edition,
        "metadata": metadata,
        "deleted": deleted,
    }


def test_project_files(project):
    config = yaml.safe_load((project / "ibistatic.yaml").read_text())
    assert config == {
        "site-url": "https://ibi.example.org/",
        "archives": ["archive-a", "archive-b"],
        "output": "site",
    }
    for name in ("archive-a", "archive-b"):
        archive = yaml.safe_load((project / name / "archive.yaml").read_text())
        assert set(archive) == {"address", "service-ibi", "service-ibip", "platform-software-ibi"}
        assert REPOSITORY.fullmatch(archive["service-ibi"])
        assert IBIP.fullmatch(archive["service-ibip"])


@pytest.mark.parametrize(
    "kind, low, high",
    [
        ("plain", 0.65, 0.78),
        ("translation", 0.08, 0.12),
        ("edition", 0.06, 0.10),
        ("metadata", 0.05, 0.09),
        ("deleted", 0.02, 0.04),
    ],
)
def test_mix_of_kinds(archive_a, kind, low, high):
    assert len(archive_a) == ITEMS
    assert low * ITEMS <= _kinds(archive_a)[kind] <= high * ITEMS


def test_copies_share(archive_b):
    assert 0.04 * ITEMS <= len(archive_b) <= 0.06 * ITEMS
    assert {d["state"] for d in archive_b.values()} == {"Copy"}


def test_kind_counts_match_generate(tmp_path, archive_a):
    totals = make_archive.generate(tmp_path, ITEMS, seed=7)
    assert totals.kinds == _kinds(archive_a)
    assert totals.items == ITEMS


def test_every_path_is_a_repository_with_a_descriptor(project):
    for archive in ("archive-a", "archive-b"):
        root = project / archive
        for directory in (p for p in root.glob("*/*/*/*") if p.is_dir()):
            name = directory.relative_to(root).as_posix()
            assert REPOSITORY.fullmatch(name), name
            assert (directory / "item.yaml").is_file(), name
        # nothing but archive.yaml and repositories
        assert sorted(p.name for p in root.iterdir() if p.is_file()) == ["archive.yaml"]


def test_every_reference_resolves(archive_a, archive_b):
    known = _known(archive_a) | _known(archive_b)
    for archive in (archive_a, archive_b):
        for name, descriptor in archive.items():
            for key, ibi in _references(descriptor):
                assert ibi.upper() in known, f"{name}: {key} {ibi} is dangling"


def test_links_are_consistent(archive_a):
    known = _known(archive_a)
    for name, descriptor in archive_a.items():
        if "metadata" in descriptor:
            assert archive_a[known[descriptor["metadata"].upper()]]["content-type"] == "Metadata"
        for tag, ibi in (descriptor.get("translations") or {}).items():
            other = archive_a[known[ibi.upper()]]
            assert other["language"] == tag
            back = {known[i.upper()] for i in other["translations"].values()}
            assert name in back, f"{name} -> {ibi} is not linked back"
    chains_heads = set(_edition_members(archive_a, known)) - {
        known[d["next-edition"].upper()] for d in archive_a.values() if "next-edition" in d
    }
    for head in chains_heads:
        length, current = 1, archive_a[head]
        while "next-edition" in current:
            current = archive_a[known[current["next-edition"].upper()]]
            length += 1
        assert 2 <= length <= 3, head


def test_descriptors_are_complete(archive_a):
    languages, with_ibip, with_dc, data = set(), 0, 0, 0
    for name, descriptor in archive_a.items():
        assert TIMESTAMP.fullmatch(descriptor["timestamp"]), name
        if descriptor["state"] == "Deleted":
            assert descriptor["_files"] == [], name
            continue
        files = descriptor["_files"]
        assert files, name
        target = descriptor.get("target")
        assert target in files if target else len(files) == 1, name
        for file in (descriptor.get("formats") or {}).values():
            assert file in files, name
        if descriptor.get("content-type") != "Metadata":
            data += 1
            assert files[0] in ("document.pdf", "document.txt"), name
            languages.add(descriptor.get("language"))
            with_ibip += "ibip" in descriptor
            with_dc += "dublin-core" in descriptor
    assert languages - {None} == {"en", "pt", "es", "pt-BR"}
    assert 0.2 * data <= with_ibip <= 0.6 * data
    assert 0.1 * data <= with_dc <= 0.5 * data


def test_ibips_are_valid_and_unique(archive_a):
    ibips = [d["ibip"] for d in archive_a.values() if "ibip" in d]
    assert ibips
    assert all(IBIP.fullmatch(ibip) for ibip in ibips)
    assert len(set(ibips)) == len(ibips)


def test_copies_equal_their_originals(project, archive_a, archive_b):
    for name, copy in archive_b.items():
        original = archive_a[name]
        assert original["state"] == "Original"
        assert {**copy, "state": "Original"} == original
        for file in copy["_files"]:
            assert (project / "archive-b" / name / "doc" / file).read_bytes() == (
                project / "archive-a" / name / "doc" / file
            ).read_bytes()


def test_same_arguments_give_identical_bytes(tmp_path):
    first = make_archive.make_project(tmp_path / "one", ITEMS, seed=3)
    second = make_archive.make_project(tmp_path / "two", ITEMS, seed=3)
    other = make_archive.make_project(tmp_path / "three", ITEMS, seed=4)
    assert _tree(first) == _tree(second)
    assert _tree(first) != _tree(other)


def test_small_projects(tmp_path):
    for items in (0, 1, 2, 5, 13):
        totals = make_archive.generate(tmp_path / str(items), items)
        assert totals.items == items
        assert len(_archive(tmp_path / str(items) / "archive-a")) == items


def test_command_line(tmp_path, capsys):
    assert make_archive.main([str(tmp_path / "p"), "--items", "50", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(
        r"archive-a: 50 items \(deleted \d+, edition \d+, metadata \d+, "
        r"plain \d+, translation \d+\); archive-b: \d+ copies; "
        r"\d+ files in \d+\.\d\d s\n",
        out,
    )


def test_command_line_refuses_a_used_directory(tmp_path, capsys):
    assert make_archive.main([str(tmp_path), "--items", "5"]) == 0
    capsys.readouterr()
    assert make_archive.main([str(tmp_path), "--items", "5"]) == 2
    assert capsys.readouterr().err == (
        f"make_archive.py: error: {tmp_path / 'ibistatic.yaml'} already exists; "
        "choose an empty OUTPUT_DIR\n"
    )
