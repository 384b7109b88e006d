"""Persistent identifiers never vanish or change hands.

- An item whose descriptor breaks keeps its last good publication, in every build that
  has a previous state of the same output (and in watch), and is reported.
- A newcomer that claims an IBI already published (a folder differing only in case, an
  IBIp of another repository) never takes it: the published holder keeps it and the
  newcomer is reported.
- On a first build, ties go by a documented seniority, whatever order the files come in.

The core rule is tested on ibistatic.core.storage with the last build's holders given as
data; the rest through build_site, the CLI and the watcher, with real archives on disk.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.config import load_config
from ibistatic.core.identifiers import parse_ibip, parse_repository_name
from ibistatic.core.model import ArchiveInfo, Item
from ibistatic.core.storage import (
    LastPublished,
    check_storage_model,
    holdings_of,
    patch_holdings,
    published_holders,
)
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from test_publish import make_project, snapshot

# --- the core rule ------------------------------------------------------------------------

INFOS = [
    ArchiveInfo(
        name, f"{name}.example.org", parse_repository_name("example.org/arch/2020/01.01.00.00")
    )
    for name in ("a", "b")
]
G = "example.org/arch/2020/01.01.00.01"
G_UPPER = "Example.ORG/arch/2020/01.01.00.01"  # the same IBI: repository names ignore case
N = "example.org/arch/2019/01.01.00.01"  # sorts before G
P = "8JMKD3MGP8W/3FAAAAA"
Q = "8JMKD3MGP8W/3FBBBBB"


def check_identity(infos, items, **given):
    """check_storage_model without the service-item warnings: INFOS hold no service
    item, and these tests are about who holds an IBI (rule 5 is tested in
    tests/test_service_item.py)."""
    holdings, problems = check_storage_model(infos, items, **given)
    return holdings, [problem for problem in problems if problem.key != "service-ibi"]


def item(archive: str, repository: str, ibip: str | None = None, state: str = "Original") -> Item:
    return Item(
        archive,
        parse_repository_name(repository),
        state,
        "2020-01-01T00:00:00Z",
        ibip=parse_ibip(ibip) if ibip else None,
    )


def held(holdings, archive: str, key: str) -> tuple[str, str | None] | None:
    """(repository as spelled on disk, IBIp) of what `archive` holds under `key`."""
    found = holdings.by_archive[archive].get(key)
    return (
        None if found is None else (found.repository.text, found.ibip.text if found.ibip else None)
    )


def test_the_published_table_names_every_holder_of_both_forms():
    table = published_holders([item("a", G, P), item("b", G_UPPER, P, "Copy"), item("a", N)])
    assert {
        key: [(archive, name.text) for archive, name in holders] for key, holders in table.items()
    } == {
        G: [("a", G), ("b", G_UPPER)],
        P: [("a", G), ("b", G_UPPER)],
        N: [("a", N)],
    }


def test_a_case_variant_newcomer_never_takes_a_published_ibi():
    published = published_holders([item("a", G, P)])
    newcomer = item("a", G_UPPER, Q)  # sorts first in byte order, and brings an IBIp of its own
    holdings, problems = check_identity(INFOS, [newcomer, item("a", G, P)], published=published)
    assert held(holdings, "a", G) == (G, P) and held(holdings, "a", P) == (G, P)
    assert Q not in holdings.by_archive["a"]  # left out whole
    assert [str(p) for p in problems] == [
        f"error: a: {G_UPPER}/item.yaml: the IBI of {G} again, published for {G} by an earlier build; "
        "expected at most one item per IBI in an Archive (storage model, rule 3); a published IBI never changes hands"
    ]


def test_a_published_spelling_in_capitals_keeps_its_ibi_against_the_lower_case_one():
    published = published_holders([item("a", G_UPPER)])
    holdings, problems = check_identity(
        INFOS, [item("a", G_UPPER), item("a", G)], published=published
    )
    assert held(holdings, "a", G) == (G_UPPER, None)
    assert [(p.path, p.severity) for p in problems] == [(f"{G}/item.yaml", "error")]
    assert f"published for {G_UPPER} by an earlier build" in problems[0].found


@pytest.mark.parametrize("newcomer_archive", ["a", "b"])
def test_a_newcomer_never_takes_a_published_ibip(newcomer_archive):
    """The newcomer sorts first and, in Archive a, comes first in resolution order: seniority
    alone would give it the IBIp."""
    holder = item("b", G, P)
    published = published_holders([holder])
    newcomer = item(newcomer_archive, N, P)
    holdings, problems = check_identity(INFOS, [newcomer, holder], published=published)
    assert held(holdings, "b", P) == (G, P)
    assert held(holdings, newcomer_archive, N) == (N, None)  # kept, without the IBIp
    assert all(
        P not in holdings.by_archive[name] or holdings.by_archive[name][P].key == G
        for name in ("a", "b")
    )
    assert [str(p) for p in problems] == [
        f"error: {newcomer_archive}: {N}/item.yaml: ibip: '{P}', published for {G} in b by an earlier build; "
        "expected an IBIp no other repository claims (a published IBI never changes hands)"
    ]


def test_a_newcomer_with_a_published_name_and_a_published_ibip_takes_neither():
    """A case variant of one holder carrying the IBIp of another: both holders keep theirs."""
    published = published_holders([item("a", G), item("a", N, P)])
    holdings, problems = check_identity(
        INFOS, [item("a", G_UPPER, P), item("a", G), item("a", N, P)], published=published
    )
    assert held(holdings, "a", G) == (G, None)
    assert held(holdings, "a", P) == (N, P)
    assert [p.path for p in problems] == [f"{G_UPPER}/item.yaml"]


def test_copies_keep_sharing_a_published_ibip_across_archives():
    published = published_holders([item("a", G, P)])
    holdings, problems = check_identity(
        INFOS, [item("a", G, P), item("b", G_UPPER, P, "Copy")], published=published
    )
    assert held(holdings, "a", P) == (G, P) and held(holdings, "b", P) == (G_UPPER, P)
    assert problems == []


def test_a_withdrawn_holder_frees_its_ibi_for_the_senior_claimant():
    """A holder removed from disk is a deliberate removal: its IBI is free again."""
    published = published_holders([item("a", G, P)])
    holdings, problems = check_identity(
        INFOS,
        [item("a", N, P), item("b", "example.org/arch/2018/01.01.00.01", P)],
        published=published,
    )
    assert held(holdings, "a", P) == (N, P)
    assert [p.found for p in problems] == [f"'{P}', already the IBIp of {N} in a"]


# first build: seniority, whatever the order of the input

FIRST_BUILD_CLAIMANTS = [
    item("b", "example.org/arch/2018/01.01.00.01", P),  # senior by name, but in the second Archive
    item("a", G_UPPER, P),
    item("a", G, P),  # the all-lower-case spelling of G_UPPER
    item("a", "example.org/ARCH/2020/01.01.00.01"),  # a third spelling, in capitals too
    item("a", N, Q),
    item("a", "example.org/arch/2019/01.01.00.02", Q),
]


def test_first_build_ties_go_by_seniority_whatever_the_input_order():
    outcomes = set()
    for permutation in itertools.permutations(FIRST_BUILD_CLAIMANTS):
        holdings, problems = check_identity(INFOS, permutation)
        outcomes.add(
            (
                tuple(
                    sorted(
                        (a, k, held(holdings, a, k))
                        for a in ("a", "b")
                        for k in holdings.by_archive[a]
                    )
                ),
                tuple(map(str, problems)),
            )
        )
    assert len(outcomes) == 1
    holdings, problems = check_identity(INFOS, FIRST_BUILD_CLAIMANTS)
    assert held(holdings, "a", G) == (G, P)  # the lower-case spelling wins rule 3
    assert held(holdings, "a", P) == (G, P)  # Archive a before b for the IBIp
    assert held(holdings, "b", "example.org/arch/2018/01.01.00.01") == (
        "example.org/arch/2018/01.01.00.01",
        None,
    )
    assert held(holdings, "a", Q) == (N, Q)  # within an Archive, the first name
    assert [str(p) for p in problems] == [
        f"error: a: {G_UPPER}/item.yaml: the IBI of {G} again; expected at most one item per IBI "
        "in an Archive (storage model, rule 3)",
        f"error: a: example.org/ARCH/2020/01.01.00.01/item.yaml: the IBI of {G} again; expected at "
        "most one item per IBI in an Archive (storage model, rule 3)",
        f"error: a: example.org/arch/2019/01.01.00.02/item.yaml: ibip: '{Q}', already the IBIp of "
        f"{N} in a; expected an IBIp no other repository claims",
        f"error: b: example.org/arch/2018/01.01.00.01/item.yaml: ibip: '{P}', already the IBIp of "
        f"{G} in a; expected an IBIp no other repository claims",
    ]


def test_without_a_lower_case_spelling_the_first_in_byte_order_wins():
    spellings = ["example.org/ARCH/2020/01.01.00.01", G_UPPER]
    holdings, problems = check_identity(INFOS, [item("a", s) for s in reversed(spellings)])
    assert held(holdings, "a", G) == (sorted(spellings)[0], None)


def test_watch_patch_defers_a_claim_on_a_held_ibi_to_the_whole_check():
    holder = item("a", G, P)
    holdings = holdings_of(INFOS, [holder])
    published = published_holders(holdings.all_items())
    for newcomer in (item("a", G_UPPER), item("a", N, P), item("b", N, P)):
        assert patch_holdings(holdings, [], [newcomer]) is None
        assert held(holdings_of(INFOS, [newcomer, holder], published), "a", G) == (G, P)


def test_a_targeted_reread_hands_the_last_holders_to_the_whole_check(tmp_path):
    """Watch mode's path: a deposit claiming a held IBIp cannot be patched in; the whole
    check it falls back to must know who held the IBIp (without that, seniority would
    give it to the deposit, which sorts first)."""
    from archive_factory import write_archive, write_item
    from ibistatic.archive.load import load_archives, reload_repositories

    root = write_archive(tmp_path / "a", "a.example.org", "example.org/arch/2020/01.01.00.00")
    write_item(root, G, state="Original", ibip=P)
    loaded = load_archives([root], "https://ibi.example.org/")
    published = published_holders(loaded.holdings.all_items())
    write_item(root, N, state="Original", ibip=P)
    for table, holder in ((published, G), (None, N)):
        reloaded = reload_repositories(loaded, {str(root.joinpath(*N.split("/")))}, published=table)
        assert reloaded.touched is None  # checked whole
        assert held(reloaded.holdings, "a", P) == (holder, P)


def test_the_lazy_table_reads_the_last_items_only_when_a_clash_asks():
    asked = []

    def items():
        asked.append(True)
        return [item("a", G, P)]

    published = LastPublished(items)
    holdings_of(INFOS, [item("a", G, P), item("a", N)], published)
    assert asked == []
    holdings = holdings_of(INFOS, [item("a", N, P), item("a", G, P)], published)
    assert asked == [True] and held(holdings, "a", P) == (G, P)
    assert dict(published)[P][0][1].text == G


# property: the first published holder of every IBI keeps it

SPELLINGS = {  # repository key -> its spellings on disk
    G: [G, G_UPPER],
    N: [N, "EXAMPLE.org/arch/2019/01.01.00.01"],
    "example.org/arch/2020/01.01.00.02": ["example.org/arch/2020/01.01.00.02"],
}
operation = st.tuples(
    st.sampled_from(["add", "add", "break", "fix"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from([s for spellings in SPELLINGS.values() for s in spellings]),
    st.sampled_from([None, P, Q]),
    st.sampled_from(["Original", "Copy"]),
)


@settings(max_examples=300, deadline=None)
@given(builds=st.lists(st.lists(operation, min_size=1, max_size=4), min_size=1, max_size=6))
def test_the_first_published_holder_of_every_ibi_keeps_it(builds):
    """Random builds adding claimants (spellings of one name, holders of one IBIp),
    breaking and fixing descriptors; a broken item stands in with what the last build
    published of it, as the loader does.  Nothing is removed, so nothing may move."""
    disk: dict[tuple[str, str], tuple[Item, bool]] = {}  # (archive, spelling) -> (item, valid)
    previous = None
    first_spelling: dict[tuple[str, str], str] = {}  # (archive, repository key) -> spelling
    first_owner: dict[str, str] = {}  # IBIp -> repository key
    for changes in builds:
        for kind, archive, spelling, ibip, state in changes:
            if kind == "add" and (archive, spelling) not in disk:
                disk[archive, spelling] = (item(archive, spelling, ibip, state), True)
            elif kind in ("break", "fix") and (archive, spelling) in disk:
                disk[archive, spelling] = (disk[archive, spelling][0], kind == "fix")
        last = (
            {}
            if previous is None
            else {(i.archive, i.repository.text): i for i in previous.all_items()}
        )
        items = [
            i if valid else last[where]
            for where, (i, valid) in disk.items()
            if valid or where in last
        ]
        published = None if previous is None else published_holders(previous.all_items())
        holdings = holdings_of(INFOS, items, published)
        for (archive, key), spelling in first_spelling.items():
            assert held(holdings, archive, key)[0] == spelling
        for ibip, owner in first_owner.items():
            holders = {
                i.key
                for name in ("a", "b")
                if (i := holdings.by_archive[name].get(ibip)) is not None
            }
            assert holders == {owner}
        for i in holdings.all_items():
            first_spelling.setdefault((i.archive, i.key), i.repository.text)
            if i.ibip is not None:
                first_owner.setdefault(i.ibip.key, i.key)
        previous = holdings


# --- end to end: build_site, the CLI, the watcher ---------------------------------------------

HOLDER = "sid.inpe.br/mtc-m18/2012/07.12.18.08"  # in mtc-m16c only, with the IBIp below
HOLDER_IBIP = "8JMKD3MGP8W/3C9EP6P"
HOLDER_PATH = f"{HOLDER}/item.yaml"

BREAKAGES = {
    "impossible date": (
        "timestamp",
        '"2012-02-30T00:00:00Z"',
        "timestamp: '2012-02-30T00:00:00Z'; expected a real calendar date and time",
    ),
    "bad YAML": ("state", "[Original", "malformed YAML at line"),
    "bad state": ("state", "Orignal", "state: 'Orignal'; expected one of Original, Copy, Deleted"),
}
NOTE = (
    f"warning: mtc-m16c: {HOLDER_PATH}: its last good publication (timestamp 2012-07-12T18:08:11Z) "
    "kept published despite the errors; expected a valid item.yaml (fix it to publish the item again; "
    "remove the repository to withdraw it)"
)


def break_descriptor(path: Path, key: str, value: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "\n".join(f"{key}: {value}" if line.startswith(f"{key}:") else line for line in lines)
        + "\n",
        encoding="utf-8",
    )


def holder_files(site: dict[str, bytes]) -> dict[str, bytes]:
    """The pages of the holder's persistent URLs (both forms, every modifier), file list
    and metadata."""
    mine = tuple(
        f"{prefix}{ibi}{end}"
        for prefix in ("", "files/", "metadata/")
        for ibi in (HOLDER, HOLDER_IBIP)
        for end in "/!:"
    )
    return {path: data for path, data in site.items() if path.startswith(mine)}


def assert_same_publication(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    """Every file byte-identical, but the manifest's count of problems."""
    assert sorted(after) == sorted(before)
    assert [path for path in before if after[path] != before[path]] in ([], ["index/manifest.json"])
    old, new = (json.loads(site["index/manifest.json"]) for site in (before, after))
    assert new["counts"].pop("problems") > old["counts"].pop("problems")
    assert new == old


@pytest.fixture
def project(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    return config, tmp_path / "archives" / "mtc-m16c", snapshot(config.output)


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_descriptor_keeps_its_last_good_publication(project, breakage):
    config, archive, before = project
    key, value, message = BREAKAGES[breakage]
    break_descriptor(archive / HOLDER_PATH, key, value)
    for full in (False, True):  # a new Publisher each time: the state is read from the cache folder
        report = build_site(config, full=full)
        assert_same_publication(before, snapshot(config.output))
        lines = [str(p) for p in report.problems]
        error = next(
            n for n, line in enumerate(lines) if line.startswith(f"error: mtc-m16c: {HOLDER_PATH}")
        )
        assert message in lines[error]
        assert lines[error + 1] == NOTE
    assert Resolver(config.output).resolve(HOLDER_IBIP).url.endswith("CCSDS%20650.0-M-2.pdf")


def test_a_removed_repository_is_withdrawn_unlike_a_broken_one(project):
    config, archive, before = project
    break_descriptor(archive / HOLDER_PATH, "state", "Orignal")
    build_site(config)
    shutil.rmtree(archive / HOLDER)
    report = build_site(config)
    assert not holder_files(snapshot(config.output))
    assert Resolver(config.output).resolve(HOLDER).alert == "not-found"
    assert not any(HOLDER_PATH in str(p) for p in report.problems)


def test_a_case_variant_takes_over_a_withdrawn_holder_as_a_full_build_does(project):
    """Removing the holder frees its IBI; the update must then publish the other spelling's
    pages, not keep the withdrawn folder's (the two items are equal but for the case)."""
    config, archive, _ = project
    variant = "sid.INPE.br/MTC-m18/2012/07.12.18.08"
    shutil.copytree(archive / HOLDER, archive / variant)
    build_site(config)
    shutil.rmtree(archive / HOLDER)
    report = build_site(config)
    assert report.mode.startswith("update of 1 changed")
    updated = snapshot(config.output)
    assert f"{variant}/index.html" in updated and f"{HOLDER}/index.html" not in updated
    build_site(config, full=True)
    assert snapshot(config.output) == updated


def test_a_fixed_descriptor_publishes_its_new_state(project):
    config, archive, _ = project
    descriptor = archive / HOLDER_PATH
    good = descriptor.read_text(encoding="utf-8")
    break_descriptor(descriptor, "state", "Orignal")
    build_site(config)
    descriptor.write_text(
        good.replace("title: Reference Model", "title: Fixed Reference Model"), encoding="utf-8"
    )
    report = build_site(config)
    assert not any(HOLDER_PATH in str(p) for p in report.problems)
    assert "Fixed Reference Model" in (config.output / HOLDER / "index.html").read_text(
        encoding="utf-8"
    )


def test_a_first_build_of_a_broken_item_leaves_it_out(tmp_path):
    """No previous state: nothing to keep."""
    config = load_config(make_project(tmp_path))
    break_descriptor(tmp_path / "archives" / "mtc-m16c" / HOLDER_PATH, "state", "Orignal")
    report = build_site(config)
    assert not holder_files(snapshot(config.output))
    assert NOTE not in [str(p) for p in report.problems]


def test_the_cli_reports_the_kept_item(project):
    config, archive, before = project
    break_descriptor(archive / HOLDER_PATH, "state", "Orignal")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ibistatic",
            "build",
            "--config",
            str(archive.parent.parent / "ibistatic.yaml"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert run.returncode == 1, (
        run.stderr
    )  # it reported an error (docs/cli/index.md), though nothing was lost
    assert (
        f"error: mtc-m16c: {HOLDER_PATH}: state: 'Orignal'; expected one of Original, Copy, Deleted\n{NOTE}\n"
        in run.stderr
    )
    assert "Traceback" not in run.stderr
    assert_same_publication(before, snapshot(config.output))


def add_case_variant(archive: Path) -> str:
    """A folder that differs from the holder's in case only, with the holder's IBIp too."""
    variant = "sid.INPE.br/MTC-m18/2012/07.12.18.08"
    (archive / variant / "doc").mkdir(parents=True)
    (archive / variant / "doc" / "evil.pdf").write_text("not the report\n", encoding="utf-8")
    descriptor = {"state": "Original", "ibip": HOLDER_IBIP, "timestamp": "2020-01-01T00:00:00Z"}
    (archive / variant / "item.yaml").write_text(yaml.safe_dump(descriptor), encoding="utf-8")
    return variant


def add_ibip_claimant(archive: Path) -> str:
    """A new repository that sorts before the holder and claims its IBIp."""
    claimant = "sid.inpe.br/mtc-m18/2000/01.01.00.00"
    (archive / claimant / "doc").mkdir(parents=True)
    (archive / claimant / "doc" / "evil.pdf").write_text("not the report\n", encoding="utf-8")
    (archive / claimant / "item.yaml").write_text(
        yaml.safe_dump(
            {"state": "Original", "ibip": HOLDER_IBIP, "timestamp": "2000-01-01T00:00:00Z"}
        ),
        encoding="utf-8",
    )
    return claimant


CASE_VARIANT_LINE = (
    "error: mtc-m16c: sid.INPE.br/MTC-m18/2012/07.12.18.08/item.yaml: the IBI of "
    "sid.inpe.br/mtc-m18/2012/07.12.18.08 again, "
    "published for sid.inpe.br/mtc-m18/2012/07.12.18.08 by an earlier build; expected at most one "
    "item per IBI in an Archive "
    "(storage model, rule 3); a published IBI never changes hands"
)
CLAIMANT_LINE = (
    f"error: mtc-m16c: sid.inpe.br/mtc-m18/2000/01.01.00.00/item.yaml: ibip: '{HOLDER_IBIP}', "
    f"published for {HOLDER} in mtc-m16c "
    "by an earlier build; expected an IBIp no other repository claims (a published IBI never changes hands)"
)


def test_a_case_variant_folder_never_takes_a_published_ibi(project):
    config, archive, before = project
    add_case_variant(archive)
    for full in (False, True):
        report = build_site(config, full=full)
        assert_same_publication(before, snapshot(config.output))  # the newcomer is left out whole
        assert CASE_VARIANT_LINE in [str(p) for p in report.problems]
    assert (
        Resolver(config.output)
        .resolve("SID.inpe.br/mtc-M18/2012/07.12.18.08")
        .url.endswith("CCSDS%20650.0-M-2.pdf")
    )


def test_a_second_claimant_of_a_published_ibip_never_takes_it(project):
    config, archive, before = project
    claimant = add_ibip_claimant(archive)
    for full in (False, True):
        report = build_site(config, full=full)
        after = snapshot(config.output)
        assert holder_files(after) == holder_files(before) != {}
        assert f"{claimant}/index.html" in after  # published, under its own name only
        assert CLAIMANT_LINE in [str(p) for p in report.problems]
    assert Resolver(config.output).resolve(HOLDER_IBIP).url.endswith("CCSDS%20650.0-M-2.pdf")


def test_an_item_that_claims_another_items_published_ibip_keeps_its_own(project):
    """Its descriptor now names the holder's IBIp instead of its own: refused, and its last
    good publication (with its own IBIp, 8JMKD3MGP8W/35MMLL8) stays; nothing is lost."""
    config, archive, before = project
    descriptor = archive / "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml"
    text = descriptor.read_text(encoding="utf-8")
    descriptor.write_text(text.replace("8JMKD3MGP8W/35MMLL8", HOLDER_IBIP), encoding="utf-8")
    for full in (False, True):
        report = build_site(config, full=full)
        assert_same_publication(before, snapshot(config.output))
        lines = [str(p) for p in report.problems]
        assert any(
            line.startswith(
                "error: mtc-m16c: sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml: ibip: "
                f"'{HOLDER_IBIP}', published for {HOLDER} in mtc-m16c by an earlier build"
            )
            for line in lines
        ), lines
        assert any("its last good publication" in line for line in lines), lines
    assert Resolver(config.output).resolve("8JMKD3MGP8W/35MMLL8").url is not None


def test_a_broken_holder_keeps_its_ibis_against_newcomers(project):
    config, archive, before = project
    break_descriptor(archive / HOLDER_PATH, "state", "Orignal")
    add_case_variant(archive)
    add_ibip_claimant(archive)
    report = build_site(config)
    assert holder_files(snapshot(config.output)) == holder_files(before)
    lines = [str(p) for p in report.problems]
    assert NOTE in lines and CASE_VARIANT_LINE in lines and CLAIMANT_LINE in lines


class _ReversedListing:
    """os.scandir's answer, in reverse order (a context manager, as scandir's is)."""

    def __init__(self, entries) -> None:
        self.entries = iter(list(entries)[::-1])

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def close(self) -> None:
        pass


def _scandir_reversed(monkeypatch) -> list[str]:
    """Make os.scandir list backwards; returns the directories it listed."""
    real = os.scandir
    listed = []

    def reversed_listing(path="."):
        listed.append(str(path))
        with real(path) as entries:
            return _ReversedListing(entries)

    monkeypatch.setattr(os, "scandir", reversed_listing)
    return listed


def test_first_build_ties_do_not_depend_on_the_directory_listing(tmp_path, monkeypatch):
    """Without a previous state, the lower-case spelling wins rule 3 whichever folder is
    listed first, and the senior name wins an IBIp (here the newcomer: history is what
    protects a holder)."""
    config = load_config(make_project(tmp_path))
    archive = tmp_path / "archives" / "mtc-m16c"
    add_case_variant(archive)
    add_ibip_claimant(archive)
    sites, reports, listed = [], [], []
    for listing in ("sorted", "reversed"):
        if listing == "reversed":
            listed = _scandir_reversed(monkeypatch)
        shutil.rmtree(config.output, ignore_errors=True)
        shutil.rmtree(config.cache_dir, ignore_errors=True)
        reports.append([str(p) for p in build_site(config).problems])
        sites.append(snapshot(config.output))
    assert str(archive / "sid.INPE.br") in listed  # the crawl did list backwards
    assert sites[0] == sites[1] and reports[0] == reports[1]
    assert (
        "error: mtc-m16c: sid.INPE.br/MTC-m18/2012/07.12.18.08/item.yaml: the IBI of "
        "sid.inpe.br/mtc-m18/2012/07.12.18.08 again; expected at most one item per IBI in an "
        "Archive (storage model, rule 3)" in reports[0]
    )
    assert (
        f"error: mtc-m16c: {HOLDER_PATH}: ibip: '{HOLDER_IBIP}', already the IBIp of "
        "sid.inpe.br/mtc-m18/2000/01.01.00.00 in mtc-m16c; expected an IBIp no other repository "
        "claims" in reports[0]
    )
    resolver = Resolver(config.output)
    assert resolver.resolve(HOLDER).url.endswith("CCSDS%20650.0-M-2.pdf")
    assert resolver.resolve(HOLDER_IBIP).url.endswith("evil.pdf")


def test_watch_keeps_published_ibis_and_last_good_publications(tmp_path):
    from test_watch import Watching, wait_for

    config = load_config(make_project(tmp_path))
    archive = tmp_path / "archives" / "mtc-m16c"
    watching = Watching(config)
    try:
        wait_for(watching.watcher.up_to_date, what="the initial build")
        before = snapshot(config.output)
        steps = [
            (lambda: break_descriptor(archive / HOLDER_PATH, "state", "Orignal"), NOTE),
            (lambda: add_case_variant(archive), CASE_VARIANT_LINE),
            (lambda: add_ibip_claimant(archive), CLAIMANT_LINE),
        ]
        for change, line in steps:
            since = len(watching.messages)
            change()
            wait_for(lambda: line in watching.messages[since:], what=line)
            wait_for(watching.watcher.up_to_date, what="the republish to end")
            assert holder_files(snapshot(config.output)) == holder_files(before)
        assert Resolver(config.output).resolve(HOLDER_IBIP).url.endswith("CCSDS%20650.0-M-2.pdf")
    finally:
        watching.stop()
    watched = snapshot(config.output)
    build_site(config, full=True)  # after a restart: the state saved on stop
    assert snapshot(config.output) == watched
