"""Every innocent item publishes, by construction (issue 36): generated hostile values.

The values come from tests/hostile/generate.py, field by field from the schemas
(ITEM_SCHEMA, ARCHIVE_SCHEMA, CONFIG_SCHEMA, iterated: a key added later is generated
too), at and beyond the edges of each type, written as YAML, plus faults of a
repository's tree and of its files' metadata.  They are injected into an otherwise
valid site of two Archives (and victim Archives of one item each) that was built good
first, one fault per faulty item or Archive, and ``python -m ibistatic build`` runs as a
subprocess.  The invariants (design.md, "Hostile input is found, not listed"):

1. the build ends (a hang is killed after 60 s, its stacks printed), with exit 0 or 1
   (2 for ibistatic.yaml), and no traceback;
2. exit 1 comes with ``error:`` lines, each naming the Archive and a faulty repository
   (``error: <archive>: <repository>/...``) or ``<archive>: archive.yaml``;
3. every other item's publication (its pages, and its records in the index) is
   byte-identical to the good build's;
4. a faulty item (or Archive) that is reported keeps its last good publication; on a
   first build it is left out.  A fault that is a valid change is published.

The sweeps try every (key, value class) pair, the nastiest value of each class first,
many victims to a build (ibistatic.yaml's in this process, through load_config); a build
that fails is built again fault by fault, so that the report names each fault that
fails alone.  The other tests draw keys, classes and values
at random (derandomized: CI tries the same inputs every time).  ``--hypothesis-show-
statistics`` shows the value classes tried; IBISTATIC_HOSTILE_COUNTS=file.json counts
them; IBISTATIC_HOSTILE_SHRINK=0 skips minimising a failing random input.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, event, given, note, reject, settings
from hypothesis import strategies as st

from ibistatic.archive.descriptors import ARCHIVE_SCHEMA, ITEM_SCHEMA
from ibistatic.config import CONFIG_SCHEMA, load_config
from ibistatic.errors import ConfigError
from tests.hostile import generate as g

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="builds in subprocesses, Linux")


#: IBISTATIC_HOSTILE_SHRINK=0 reports a failing input as found, without minimising it
#: (each step of minimising is a build: a hang makes it long)
PHASES = (
    (Phase.explicit, Phase.generate)
    if os.environ.get("IBISTATIC_HOSTILE_SHRINK") == "0"
    else (Phase.explicit, Phase.generate, Phase.shrink)
)


def examples(count: int, phases=None):
    return settings(
        max_examples=count,
        phases=phases or PHASES,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )


@pytest.fixture(scope="session")
def pristine(tmp_path_factory):
    """The good site, built once: (where a copy of it is restored for each example,
    the pristine copy, the published files)."""
    base = g.scratch(tmp_path_factory)
    work = base / "work" / "p" / "q"  # deep: a relative '..' value stays in base
    g.write_project(work)
    run = g.ibistatic(work)
    assert run.code == 0 and not run.errors and "Traceback" not in run.err, str(run)
    site = g.snapshot(work)
    for repository in g.REPOSITORIES:  # each is published, under its own keys
        assert g.published(site, repository), repository.path
        assert g.publication(site, repository), repository.path
    copy = base / "pristine"
    shutil.copytree(work, copy, symlinks=True)
    yield Pristine(work, copy, site)
    g._remove(base)


class Pristine(tuple):
    """(work folder, pristine copy, published files), shown shortly in hypothesis' reports."""

    def __new__(cls, *parts):
        return super().__new__(cls, parts)

    def __repr__(self) -> str:
        return "<the good site>"


def _fresh(pristine) -> tuple[Path, dict[str, bytes]]:
    work, copy, site = pristine
    g.restore(copy, work)
    return work, site


def assert_sound(run: g.Run, located: tuple[str, ...], codes=(0, 1)) -> None:
    """Invariants 1 and 2: it ended, with an allowed code, no traceback, and every error
    line names what was faulty."""
    assert run.code is not None, f"a hang: no end after {g.BUILD_TIMEOUT} s\n{run}"
    assert "Traceback" not in run.err and "Traceback" not in run.out, str(run)
    assert run.code in codes, f"exit {run.code}, expected one of {codes}\n{run}"
    stray = [line for line in run.errors if not line.startswith(located)]
    assert not stray, f"error lines that name no faulty input: {stray[:3]}\n{run}"
    if run.code == 1:
        assert run.errors, f"exit 1 without an error: line\n{run}"
    if run.code == 0:
        assert not run.errors, f"exit 0 with error lines\n{run}"


def assert_items(
    run: g.Run,
    before: dict[str, bytes],
    after: dict[str, bytes],
    faulty: list[g.Repository],
    kept: bool = True,
) -> None:
    """Invariants 3 and 4 for items: innocents unchanged; a reported faulty item kept at
    its last good publication (`kept`; on a first build: left out), else published."""
    for repository in g.REPOSITORIES:
        old, new = g.publication(before, repository), g.publication(after, repository)
        if repository not in faulty:
            assert new == old, (
                f"the innocent {repository.archive}: {repository.path} changed: "
                f"{g.difference(old, new)}\n{run}"
            )
            continue
        reported = any(line.startswith(repository.error_prefix()) for line in run.errors)
        if reported and kept:
            assert new == old, (
                f"the faulty {repository.path} lost its last good publication: "
                f"{g.difference(old, new)}\n{run}"
            )
        elif reported:
            assert not g.published(after, repository), f"{repository.path} published\n{run}"
        else:  # accepted: a valid change, published as it now is
            assert g.published(after, repository), (
                f"the faulty {repository.path} is neither reported nor published\n{run}"
            )


def _write_fault(work: Path, victim: g.Repository, fault) -> None:
    text = g.descriptor_text(victim.descriptor, fault)
    (victim.folder(work) / "item.yaml").write_text(text, encoding="utf-8", errors="strict")


def _chunks(places: list, size: int) -> list[list]:
    """`places` in chunks of at most `size`, each mixing keys (every n-th place)."""
    count = -(-len(places) // size)
    return [places[start::count] for start in range(count)]


def _shown(fault) -> str:
    where, what = fault
    if isinstance(what, g.TreeFault):
        return f"{where.archive}: {where.path} ({where.kind}): {what.shown}"
    key, name, text = what
    place = (
        f"{where.archive}: {where.path} ({where.kind})"
        if isinstance(where, g.Repository)
        else (f"{where}/archive.yaml")
    )
    return f"{place}: {key} [{name}]: {g._short(repr(text), 300)}"


#: inputs tried, by value class (IBISTATIC_HOSTILE_COUNTS=file.json writes them out)
TRIED: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def _tried():
    yield
    if os.environ.get("IBISTATIC_HOSTILE_COUNTS"):
        with open(os.environ["IBISTATIC_HOSTILE_COUNTS"], "w", encoding="utf-8") as out:
            json.dump(dict(sorted(TRIED.items())), out, indent=1)


def _count(faults, descriptor: str) -> None:
    for where, what in faults:
        label = what.label if isinstance(what, g.TreeFault) else f"{descriptor}: {what[1]}"
        event(label)
        TRIED[label] += 1
        note(_shown((where, what)))


def each_alone(check, faults: list) -> None:
    """check(faults): every fault in one build.  When it fails, each fault is built
    alone, and the failure names those that fail by themselves, each with its own
    symptom: the report is minimised to single faults (a fault that fails only with
    others is reported with the build of all)."""
    try:
        check(faults)
    except AssertionError as together:
        if len(faults) == 1:
            raise
        alone = []
        for fault in faults:
            try:
                check([fault])
            except AssertionError as error:
                alone.append(f"- {_shown(fault)}\n  " + str(error).split("\nFalsifying")[0])
        if not alone:
            raise
        raise AssertionError(
            f"{len(alone)} of {len(faults)} faults fail alone:\n" + "\n".join(alone)
        ) from together


ITEM_FAULTS = g.key_faults(ITEM_SCHEMA, g.ITEM_EXAMPLES)
ITEM_PLACES = g.places(ITEM_SCHEMA, g.ITEM_EXAMPLES)
ITEM_CHUNKS = _chunks(ITEM_PLACES, len(g.VICTIMS))


def check_items(pristine, faults: list, kept: bool = True) -> None:
    """`faults` (victim, item.yaml fault or TreeFault; one per victim) injected into the
    good site (`kept`) or into its archives alone (a first build), built, and checked."""
    work, before = _fresh(pristine)
    if not kept:
        (work / "site").unlink()  # the link to the published generation
        for folder in (".site.ibistatic", ".site.ibistatic-cache"):
            g._remove(work / folder)
    for victim, fault in faults:
        if isinstance(fault, g.TreeFault):
            fault.how(victim.folder(work))
        else:
            _write_fault(work, victim, fault)
    victims = [victim for victim, _ in faults]
    run = g.ibistatic(work)
    assert_sound(run, tuple(v.error_prefix() for v in victims))
    assert_items(run, before, g.snapshot(work), victims, kept)


#: several faults in one build, and when it fails each alone: hypothesis' own shrinking
#: of many draws would take a build a step
BATCH = (Phase.explicit, Phase.generate)


# --- item.yaml: every key with every class of value -------------------------------------------


@pytest.mark.parametrize("chunk", range(len(ITEM_CHUNKS)))
@examples(1, BATCH)  # the first example of each class: its nastiest edge (listed first)
@given(data=st.data())
def test_every_item_key_with_every_value_class_costs_only_its_item(pristine, chunk, data):
    """The sweep: each (key of ITEM_SCHEMA, value class) in some build, one per victim."""
    victims = g.VICTIMS[chunk:] + g.VICTIMS[:chunk]  # each key meets each kind of victim
    faults = [
        (victim, data.draw(g.fault_of(key, name, g.ITEM_EXAMPLES), label=f"{key}: {name}"))
        for victim, (key, name) in zip(victims, ITEM_CHUNKS[chunk])
    ]
    _count(faults, "item.yaml")
    each_alone(lambda some: check_items(pristine, some), faults)


# --- item.yaml: one fault at a time ---------------------------------------------------------


@examples(10)
@given(victim=st.sampled_from(g.VICTIMS), fault=ITEM_FAULTS)
def test_a_generated_item_value_costs_only_that_item(pristine, victim, fault):
    _count([(victim, fault)], "item.yaml")
    check_items(pristine, [(victim, fault)])


# --- item.yaml: many faulty items at once, one fault each ------------------------------------


def _several(faults, most: int, least: int = 1):
    """[(victim, fault)]: `least` to `most` distinct victims, a fault each."""

    def pairs(order: list[int]):
        return st.tuples(*[st.tuples(st.just(g.VICTIMS[i]), faults) for i in order])

    count = st.integers(least, most)
    order = st.permutations(range(len(g.VICTIMS)))
    return st.tuples(count, order).flatmap(lambda c_o: pairs(c_o[1][: c_o[0]])).map(list)


@examples(5, BATCH)
@given(faults=_several(ITEM_FAULTS, len(g.VICTIMS), least=2))
def test_generated_item_values_each_cost_only_their_item(pristine, faults):
    _count(faults, "item.yaml")
    each_alone(lambda some: check_items(pristine, some), faults)


@examples(3, BATCH)
@given(faults=_several(ITEM_FAULTS, 12))
def test_a_first_build_with_generated_values_publishes_every_innocent_item(pristine, faults):
    """No good build before: the faulty items are left out, the others published as in
    the good build."""
    _count(faults, "item.yaml")
    each_alone(lambda some: check_items(pristine, some, kept=False), faults)


# --- the tree of a repository and its files' metadata -----------------------------------------


@examples(6, BATCH)
@given(faults=_several(g.tree_faults(), len(g.VICTIMS)))
def test_a_generated_tree_fault_costs_only_that_item(pristine, faults):
    _count(faults, "tree")
    each_alone(lambda some: check_items(pristine, some), faults)


# --- archive.yaml ----------------------------------------------------------------------------

ARCHIVE_FAULTS = g.key_faults(ARCHIVE_SCHEMA, g.ARCHIVE_EXAMPLES)
#: the keys the crawl reads (the deposit-* keys are read by `ibistatic deposit`)
ARCHIVE_PLACES = [
    (key, name)
    for key, name in g.places(ARCHIVE_SCHEMA, g.ARCHIVE_EXAMPLES)
    if key not in ARCHIVE_SCHEMA.keys
    or next(f for f in ARCHIVE_SCHEMA.fields if f.key == key).read is not None
]
ARCHIVE_CHUNKS = _chunks(ARCHIVE_PLACES, len(g.ARCHIVE_VICTIMS))


def check_archives(pristine, faults: list) -> None:
    """`faults` (Archive, archive.yaml fault; one per Archive) injected into the good site."""
    work, before = _fresh(pristine)
    for archive, fault in faults:
        (work / archive / "archive.yaml").write_text(
            g.descriptor_text(g.ARCHIVES[archive], fault), encoding="utf-8"
        )
    faulty = [archive for archive, _ in faults]
    run = g.ibistatic(work)
    assert_sound(run, tuple(f"error: {archive}: archive.yaml: " for archive in faulty))
    after = g.snapshot(work)
    for repository in g.REPOSITORIES:
        old, new = g.publication(before, repository), g.publication(after, repository)
        reported = any(line.startswith(f"error: {repository.archive}: ") for line in run.errors)
        if repository.archive not in faulty:
            assert new == old, (
                f"{repository.archive}: {repository.path}, of an Archive without a fault, "
                f"changed: {g.difference(old, new)}\n{run}"
            )
        elif reported:  # "that Archive alone, with its last good publication kept"
            assert new == old, (
                f"{repository.archive}: {repository.path} lost its last good publication: "
                f"{g.difference(old, new)}\n{run}"
            )
        else:  # a valid change
            assert g.published(after, repository), f"{repository.path} not published\n{run}"


@pytest.mark.parametrize("chunk", range(len(ARCHIVE_CHUNKS)))
@examples(1, BATCH)
@given(data=st.data())
def test_every_archive_key_with_every_value_class_costs_only_its_archive(pristine, chunk, data):
    """The sweep: each (key of ARCHIVE_SCHEMA read by the crawl, value class), one per
    victim Archive."""
    faults = [
        (archive, data.draw(g.fault_of(key, name, g.ARCHIVE_EXAMPLES), label=f"{key}: {name}"))
        for archive, (key, name) in zip(g.ARCHIVE_VICTIMS, ARCHIVE_CHUNKS[chunk])
    ]
    _count(faults, "archive.yaml")
    each_alone(lambda some: check_archives(pristine, some), faults)


@examples(8)
@given(archive=st.sampled_from([g.A, g.B, *g.ARCHIVE_VICTIMS]), fault=ARCHIVE_FAULTS)
def test_a_generated_archive_value_costs_only_that_archive(pristine, archive, fault):
    _count([(archive, fault)], "archive.yaml")
    check_archives(pristine, [(archive, fault)])


# --- ibistatic.yaml ----------------------------------------------------------------------------

SANDBOX = g.sandbox_available()
#: keys whose value is a folder: an absolute one is tried only with / read-only
PATH_KEYS = ("archives", "output", "cache", "templates")


def _outside(text: str) -> bool:
    return bool(re.search(r'(?:^|[\["\s,])(?:/|~|\\u002f)', text))


CONFIG_PLACES = g.places(CONFIG_SCHEMA, g.CONFIG_EXAMPLES)
#: reading one ibistatic.yaml longer than this is a hang (a 100,000-element list: 2 s)
READ_TIMEOUT = 15


class _Hang(BaseException):
    """Raised by SIGALRM in the code under test (a BaseException: no `except Exception` there
    takes it for its own error)."""


@contextmanager
def _within(seconds: float):
    def alarm(signum, frame):
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _config_message_problem(error: ConfigError, key: str) -> str | None:
    """What is wrong with a refusal's message, or None: a line names the file and the
    key (when the fault is a key of the schema), and no line is over 1,000 characters."""
    named = key if key not in (g.UNKNOWN_KEY, g.WHOLE_DOCUMENT) else ""
    lines = str(error).splitlines()
    if not any("ibistatic.yaml" in line and named in line for line in lines):
        return f"no line names ibistatic.yaml and {named!r}: {g._short(str(error), 400)}"
    if any(len(line) > 1_000 for line in lines):
        return f"a line over 1,000 characters: {g._short(str(error), 400)}"
    return None


@examples(1, BATCH)
@given(data=st.data())
def test_every_configuration_key_with_every_value_class_is_read_or_refused_by_name(
    tmp_path_factory, data
):
    """The sweep, in this process (a build per value would take minutes): each (key of
    CONFIG_SCHEMA, value class) is read by load_config, which returns a configuration or
    raises ConfigError (exit 2) naming the file and the key; any other exception would
    be a traceback.  The builds of the test below run such values for real."""
    folder = tmp_path_factory.mktemp("config-sweep") / "p" / "q"
    folder.mkdir(parents=True)
    failures = []
    classes: Counter = Counter()
    for key, name in CONFIG_PLACES:
        fault = data.draw(g.fault_of(key, name, g.CONFIG_EXAMPLES), label=f"{key}: {name}")
        TRIED[f"ibistatic.yaml, read: {name}"] += 1
        path = folder / "ibistatic.yaml"
        path.write_text(g.descriptor_text(g.CONFIG, fault), encoding="utf-8")
        shown = f"{key} [{name}]: {g._short(repr(fault[2]), 200)}"
        try:
            with _within(READ_TIMEOUT):
                load_config(path)
        except _Hang:
            failures.append(f"- {shown}\n  a hang: load_config did not end in {READ_TIMEOUT} s")
            classes[name] += 1
        except ConfigError as error:
            problem = _config_message_problem(error, key)
            if problem:
                failures.append(f"- {shown}\n  {problem}")
                classes[name] += 1
        except Exception as error:  # any other would be the CLI's traceback
            failures.append(f"- {shown}\n  {type(error).__name__}: {g._short(str(error), 300)}")
            classes[name] += 1
    by_class = ", ".join(f"{name} ({count})" for name, count in classes.most_common())
    assert not failures, (
        f"{len(failures)} of {len(CONFIG_PLACES)} values, by class: {by_class}\n"
        + "\n".join(failures[:30])
    )


@examples(20)
@given(fault=g.key_faults(CONFIG_SCHEMA, g.CONFIG_EXAMPLES))
def test_a_generated_configuration_value_is_one_clear_line_and_changes_nothing(pristine, fault):
    key, label, text = fault
    if not SANDBOX and (key in PATH_KEYS or key == g.WHOLE_DOCUMENT) and _outside(text):
        reject()  # an absolute folder: only where a build cannot write outside /tmp
    event(f"ibistatic.yaml: {label}")
    TRIED[f"ibistatic.yaml: {label}"] += 1
    note(f"ibistatic.yaml: {key} [{label}]: {g._short(repr(text), 300)}")
    work, before = _fresh(pristine)
    link = os.readlink(work / "site")
    (work / "ibistatic.yaml").write_text(g.descriptor_text(g.CONFIG, fault), encoding="utf-8")
    run = g.ibistatic(work, sandbox=SANDBOX)
    # exit 1 only for a valid configuration whose archives are then missing or broken
    assert_sound(run, ("error: ",), codes=(0, 1, 2))
    if run.code != 2:
        return  # a valid configuration (the site may legitimately differ)
    lines = [line for line in run.lines if line.strip()]
    named = key if key not in (g.UNKNOWN_KEY, g.WHOLE_DOCUMENT) else ""
    message = [line for line in lines if "ibistatic.yaml" in line and named in line]
    assert message, f"no line names ibistatic.yaml and {named!r}\n{run}"
    assert all(len(line) <= 1_000 for line in lines), f"a message line over 1,000 characters\n{run}"
    assert os.readlink(work / "site") == link, f"the site was replaced\n{run}"
    after = g.snapshot(work)
    assert after == before, f"the previous site changed: {g.difference(before, after)}\n{run}"


# --- watch ---------------------------------------------------------------------------------------


def _wait(condition, timeout: float, what: str, process, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"watch ended (exit {process.returncode}) while waiting for {what}:\n"
                + log.read_text(encoding="utf-8", errors="replace")[-3_000:]
            )
        try:
            if condition():
                return
        except OSError:  # the site is between generations: ask again
            pass
        time.sleep(0.1)
    raise AssertionError(
        f"timed out waiting for {what}:\n"
        + log.read_text(encoding="utf-8", errors="replace")[-3_000:]
    )


@examples(2)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(g.VICTIMS[1:]), ITEM_FAULTS),
        min_size=4,
        max_size=4,
    )
)
def test_watch_goes_on_past_generated_values(pristine, steps):
    """While watch runs: a generated value in one item, then a valid change to another
    (the first victim's title): watch publishes the valid change, every time, and ends
    cleanly on Ctrl-C, with no traceback.  One fault at a time: each step first puts the
    previous faulty item back as it was."""
    work, _ = _fresh(pristine)
    valid = g.VICTIMS[0]
    page = work / "site" / valid.path / "index.html"
    log = work.parent / "watch.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "ibistatic", "watch", "--debounce", "0.1"],
            cwd=work,
            env={**os.environ, "PYTHONPATH": str(g.ROOT)},
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=g._limits,
        )
    try:
        _wait(lambda: b"initial build" in log.read_bytes(), 60, "the initial build", process, log)
        previous = None
        for number, (victim, fault) in enumerate(steps):
            _count([(victim, fault)], "watch, item.yaml")
            if previous is not None:
                _write_fault(work, previous, None)
            _write_fault(work, victim, fault)
            previous = victim
            time.sleep(0.3)
            title = f"Valid change {number}"
            values = dict(valid.descriptor, **{"dublin-core": {"title": title}})
            (valid.folder(work) / "item.yaml").write_text(
                g.descriptor_text(values), encoding="utf-8"
            )
            _wait(
                lambda: title in page.read_text(encoding="utf-8"),
                60,
                f"the valid change {number} to be published",
                process,
                log,
            )
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        g._reap_group(process.pid)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in text, text[-3_000:]
    assert process.returncode == 0, text[-3_000:]
