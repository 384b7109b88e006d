"""Watch mode's targeted re-read (`reload_repositories`) gives what a whole crawl gives.

The re-read patches the holdings in time proportional to the change; where a change
touches a storage-model clash (two items with one IBI in an Archive, an IBIp claimed
twice) it checks everything again.  Random sequences of writes, breakages and deletions
over two Archives, with clashing IBIps, copies and conflicting originals, compare the two
after every step.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives, reload_repositories

SITE = "https://ibi.example.org/"
REPOSITORIES = [f"example.org/arch/2020/01.01.00.0{n}" for n in range(1, 6)]
#: another spelling of the first: the same IBI (repository names ignore case), so a
#: second item with it in one Archive breaks rule 3
REPOSITORIES.append("Example.org/arch/2020/01.01.00.01")
IBIPS = [None, "8JMKD3MGP8W/3FAAAAA", "8JMKD3MGP8W/3FBBBBB"]

item_fields = st.fixed_dictionaries(
    {
        "state": st.sampled_from(["Original", "Original", "Copy", "Deleted"]),
        "ibip": st.sampled_from(IBIPS),
        "next_edition": st.sampled_from([None, *REPOSITORIES[:2]]),
        "target": st.just("document.txt"),
    }
)
operations = st.lists(
    st.tuples(
        st.sampled_from(["write", "write", "break", "delete"]),
        st.integers(0, 1),  # which Archive
        st.sampled_from(REPOSITORIES),
        item_fields,
    ),
    min_size=1,
    max_size=8,
)


def _write(root: Path, repository: str, fields: dict) -> None:
    fields = {key: value for key, value in fields.items() if value is not None}
    write_item(root, repository, **fields)


def _apply(root: Path, operation: str, repository: str, fields: dict) -> None:
    directory = root.joinpath(*repository.split("/"))
    if operation == "write":
        _write(root, repository, fields)
    elif operation == "break":
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "item.yaml").write_text("state: [unclosed\n", encoding="utf-8")
    elif directory.exists():
        shutil.rmtree(directory)


def _summary(loaded) -> dict:
    holdings = loaded.holdings
    return {
        "by_archive": {name: dict(items) for name, items in holdings.by_archive.items()},
        "conflicts": set(holdings.conflicts),
        "orphans": set(holdings.orphans),
        "problems": sorted(loaded.problems),
        "items": [(archive.name, archive.items) for archive in loaded.crawl.archives],
    }


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from(REPOSITORIES), item_fields), max_size=6
    ),
    steps=operations,
)
def test_a_targeted_reread_equals_a_whole_crawl(tmp_path_factory, start, steps):
    base = tmp_path_factory.mktemp("reload")
    roots = [
        write_archive(base / name, f"{name}.example.org", "example.org/arch/2020/01.01.00.00")
        for name in ("a", "b")
    ]
    for archive, repository, fields in start:
        _write(roots[archive], repository, fields)
    loaded = load_archives(roots, SITE)
    for operation, archive, repository, fields in steps:
        _apply(roots[archive], operation, repository, fields)
        path = str(roots[archive].joinpath(*repository.split("/")))
        reloaded = reload_repositories(loaded, {path})
        assert reloaded is not None
        assert _summary(reloaded) == _summary(load_archives(roots, SITE)), (
            operation,
            archive,
            repository,
            fields,
        )
        loaded = reloaded


def test_a_patch_is_used_when_no_clash_is_touched(tmp_path):
    root = write_archive(tmp_path / "a", "a.example.org", "example.org/arch/2020/01.01.00.00")
    write_item(root, REPOSITORIES[0], state="Original", target="document.txt")
    loaded = load_archives([root], SITE)
    write_item(root, REPOSITORIES[1], state="Original", target="document.txt", ibip=IBIPS[1])
    reloaded = reload_repositories(loaded, {str(root.joinpath(*REPOSITORIES[1].split("/")))})
    new = next(
        item for item in reloaded.crawl.archives[0].items if item.repository.text == REPOSITORIES[1]
    )
    assert reloaded.touched == {new.key}  # patched, not checked whole
    assert reloaded.holdings.by_archive["a"][new.ibip.key] is new


def test_a_clash_falls_back_to_the_whole_check(tmp_path):
    root = write_archive(tmp_path / "a", "a.example.org", "example.org/arch/2020/01.01.00.00")
    write_item(root, REPOSITORIES[0], state="Original", target="document.txt", ibip=IBIPS[1])
    loaded = load_archives([root], SITE)
    write_item(root, REPOSITORIES[1], state="Original", target="document.txt", ibip=IBIPS[1])
    reloaded = reload_repositories(loaded, {str(root.joinpath(*REPOSITORIES[1].split("/")))})
    assert reloaded.touched is None  # the whole check ran
    assert [p.key for p in reloaded.problems] == ["ibip"]
