"""storage_problems against a plain statement of it (the pass over every key it once
made): the shortcuts it takes for speed (keys held once, items naming no other, holders
looked up per Archive, paths compared unsplit) change no problem and no order, on item
sets drawn with clashes, copies, deletions, references and loops."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.core.census import Census
from ibistatic.core.identifiers import parse_ibi, parse_ibip, parse_repository_name
from ibistatic.core.model import ArchiveInfo, Item
from ibistatic.core.relations import relation_problems
from ibistatic.core.storage import (
    _crawl_order,
    _where,
    holdings_of,
    patch_holdings,
    storage_problems,
)
from ibistatic.errors import Problem

INFOS = [
    ArchiveInfo(
        name, f"{name}.example.org", parse_repository_name("example.org/arch/2020/01.01.00.00")
    )
    for name in ("a", "b", "c")
]
#: few names, so that keys clash: case variants, a '-' that sorts before '/'
REPOSITORIES = [
    "example.org/s/2020/01.01.00.01",
    "Example.org/s/2020/01.01.00.01",
    "example.org/s-x/2020/01.01.00.02",
    "example.org/s/2020/01.01.00.02",
    "example.org/s/2019/12.31.23.59",
    "example.org/arch/2020/01.01.00.00",  # the Archives' service
]
IBIPS = ["8JMKD3MGP8W/3FAAAAA", "8JMKD3MGP8W/3FBBBBB"]
NAMES = REPOSITORIES + IBIPS + ["example.org/s/2000/01.01.00.00"]  # the last: held by none


@st.composite
def items(draw) -> list[Item]:
    found = []
    for _ in range(draw(st.integers(0, 9))):
        reference = st.none() | st.sampled_from(NAMES).map(parse_ibi)
        found.append(
            Item(
                draw(st.sampled_from(["a", "b", "c"])),
                parse_repository_name(draw(st.sampled_from(REPOSITORIES))),
                draw(st.sampled_from(["Original", "Copy", "Deleted"])),
                "2020-01-01T00:00:00Z",
                ibip=draw(st.none() | st.sampled_from(IBIPS).map(parse_ibip)),
                transferable=draw(st.booleans()),
                content_type=draw(st.sampled_from(["Data", "Metadata"])),
                next_edition=draw(reference),
                metadata=draw(reference),
                translations=tuple(
                    (tag, draw(reference)) for tag in draw(st.sets(st.sampled_from(["en", "pt"])))
                )
                if draw(st.booleans())
                else (),
            )
        )
    return [i for i in found if all(ibi is not None for _, ibi in i.translations)]


@settings(max_examples=400, deadline=None)
@given(
    items(), st.dictionaries(st.sampled_from(NAMES).map(lambda t: parse_ibi(t).key), st.just("b"))
)
def test_storage_problems_are_those_of_the_plain_statement(drawn, left_out):
    holdings = holdings_of(INFOS, drawn)
    for index in holdings.by_archive.values():  # what the lookup of first holders rests on
        assert all(index[key] is item for item in index.values() for key in item.keys())
    assert [_key(p) for p in storage_problems(holdings, left_out)] == _plain(holdings, left_out)


def test_patched_holdings_give_the_problems_of_the_plain_statement():
    """As watch patches the holdings (a newcomer deposited, a held item re-read away):
    the conflicts and orphans kept by key give the problems a whole pass gives."""
    patched_cases = []

    @settings(max_examples=300, deadline=None)
    @given(items(), st.integers(0, 8), st.booleans())
    def check(drawn, pick, leaves):
        if not drawn:
            return
        newcomer = drawn[pick % len(drawn)]
        holdings = holdings_of(INFOS, [i for i in drawn if i is not newcomer])
        held = {id(i): i for index in holdings.by_archive.values() for i in index.values()}
        removed = [list(held.values())[pick % len(held)]] if held and leaves else []
        holdings.counted()  # as the build before did: the census is patched, not made
        patched = patch_holdings(holdings, removed, [newcomer])
        if patched is not None:
            patched_cases.append(drawn)
            assert patched.census is not None
            assert [_key(p) for p in storage_problems(patched, {})] == _plain(patched, {})
            fresh = Census.of([info.name for info in INFOS], patched.by_archive)
            assert patched.census == fresh

    check()
    assert len(patched_cases) > 50  # the patch refuses clashes: enough cases were not


def _plain(holdings, left_out) -> list[tuple]:
    ordered = _crawl_order(holdings)
    assert ordered == _sorted_by_parts(holdings)
    known: dict[str, Item] = {}
    for item in ordered:
        for key in item.keys():
            known.setdefault(key, item)
    return (
        [_key(p) for p in holdings.clash_problems]
        + _plain_services(holdings, ordered)
        + _plain_originals(ordered)
        + _plain_references(ordered, known, left_out)
        + _plain_loops(ordered, known)
        + [_key(p) for p in relation_problems(holdings.archives, ordered)]
    )


def _sorted_by_parts(holdings) -> list[Item]:
    found = []
    for info in holdings.archives:
        unique = {id(i): i for i in holdings.by_archive.get(info.name, {}).values()}
        found += sorted(unique.values(), key=lambda i: i.repository.parts)
    return found


def _plain_services(holdings, ordered) -> list[tuple]:
    """Rule 5: each Archive holds its service as a non-transferable original."""
    problems = []
    for info in holdings.archives:
        held = [i for i in ordered if i.archive == info.name and i.key == info.service_ibi.key]
        if held and held[0].state == "Original" and not held[0].transferable:
            continue
        found = (
            "which this Archive does not hold"
            if not held
            else f"which this Archive holds as {held[0].state}"
            if held[0].state != "Original"
            else "which this Archive holds as a transferable original"
        )
        problems.append(
            (info.name, "archive.yaml", "service-ibi", f"{info.service_ibi.text}, {found}")
        )
    return problems


def _plain_originals(ordered) -> list[tuple]:
    problems = []
    by_key: dict[str, list[Item]] = {}
    for item in ordered:
        by_key.setdefault(item.key, []).append(item)
    for held in by_key.values():
        originals = [i for i in held if i.state == "Original"]
        if len(originals) > 1:
            for item in originals:
                others = ", ".join(i.archive for i in originals if i is not item)
                problems.append((item, "state", f"Original, also claimed by {others}"))
        elif not originals:
            problems += [
                (i, "state", "a Copy whose original no Archive holds")
                for i in held
                if i.state == "Copy"
            ]
    return [_said(problem) for problem in problems]


def _plain_references(ordered, known, left_out) -> list[tuple]:
    problems = []
    for item in ordered:
        references = [("next-edition", item.next_edition), ("metadata", item.metadata)]
        references += [(f"translations.{tag}", ibi) for tag, ibi in item.translations]
        for key, ibi in references:
            if ibi is not None and ibi.key not in known:
                why = (
                    f"a reference to {ibi.text}, which {left_out[ibi.key]} holds but leaves out for errors"
                    if ibi.key in left_out
                    else f"a dangling reference to {ibi.text}, which no Archive holds"
                )
                problems.append((item, key, why))
        if item.metadata is not None and item.metadata.key in known:
            if known[item.metadata.key].content_type != "Metadata":
                problems.append(
                    (item, "metadata", f"{item.metadata.text}, whose content-type is Data")
                )
    return [_said(problem) for problem in problems]


def _plain_loops(ordered, known) -> list[tuple]:
    problems, reported = [], set()
    for item in ordered:
        seen, current = [item.key], item
        while current.next_edition is not None and current.next_edition.key in known:
            current = known[current.next_edition.key]
            if current.key in seen:
                cycle = seen[seen.index(current.key) :]
                if not reported.intersection(cycle):
                    reported.update(cycle)
                    problems.append(
                        (
                            item,
                            "next-edition",
                            "a next-edition chain that loops: "
                            + " -> ".join(cycle + [current.key]),
                        )
                    )
                break
            seen.append(current.key)
    return [_said(problem) for problem in problems]


def _said(problem) -> tuple:
    """What the test compares of a Problem: who, which key and what was found."""
    item, key, found = problem
    return (item.archive, _where(item), key, found)


def _key(problem: Problem) -> tuple:
    return (problem.archive, problem.path, problem.key, problem.found)
