"""Publishing: full builds are atomic and deterministic; updates equal full builds."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import SAMPLE
from ibistatic.config import load_config
from ibistatic.site.build import build_site


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def make_project(tmp_path: Path, archives=("mtc-m16c", "mtc-m16d")) -> Path:
    for name in archives:
        shutil.copytree(SAMPLE / name, tmp_path / "archives" / name)
    config = {
        "site-url": "https://ibi.example.org/",
        "archives": [f"archives/{n}" for n in archives],
        "output": "site",
    }
    (tmp_path / "ibistatic.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path / "ibistatic.yaml"


def assert_update_equals_full(config_path: Path) -> None:
    config = load_config(config_path)
    report = build_site(config)
    updated = snapshot(config.output)
    full = build_site(config, full=True)
    assert full.mode == "full"
    rebuilt = snapshot(config.output)
    assert sorted(updated) == sorted(rebuilt)
    assert [path for path in rebuilt if updated[path] != rebuilt[path]] == []
    return report


def test_two_full_builds_are_byte_identical(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    first = snapshot(config.output)
    build_site(config, full=True)
    assert snapshot(config.output) == first
    assert len(first) > 100


def test_a_second_build_rewrites_nothing(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    mtimes = {p: p.stat().st_mtime_ns for p in config.output.rglob("*") if p.is_file()}
    report = build_site(config)
    assert (report.written, report.removed) == (0, 0)
    assert {p: p.stat().st_mtime_ns for p in config.output.rglob("*") if p.is_file()} == mtimes


def _edit(path: Path, **changes) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    st = path.stat()
    os.utime(
        path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000)
    )  # a later mtime, however fast the test


def test_updates_equal_full_builds(tmp_path):
    config_path = make_project(tmp_path)
    config = load_config(config_path)
    build_site(config)
    m16c = tmp_path / "archives" / "mtc-m16c"
    # edit a title: only that item's pages change
    item = m16c / "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml"
    _edit(item, **{"dublin-core": {"title": "A new title"}})
    report = assert_update_equals_full(config_path)
    assert report.mode.startswith("update") and 0 < report.written < 40
    # the next edition's metadata moves: the older edition's '!:' answers change too
    _edit(
        m16c / "sid.inpe.br/mtc-m18/2012/07.12.18.08/item.yaml",
        metadata="sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
    )
    assert_update_equals_full(config_path)
    # a new item, then its removal
    new = m16c / "sid.inpe.br/mtc-m19/2020/01.02.03.04"
    (new / "doc").mkdir(parents=True)
    (new / "doc" / "new.txt").write_text("new\n", encoding="utf-8")
    (new / "item.yaml").write_text(
        'state: Original\ntimestamp: "2020-01-02T03:04:00Z"\nibip: 8JMKD3MGP8W/3FAAAAA\n',
        encoding="utf-8",
    )
    assert_update_equals_full(config_path)
    assert (config.output / "8JMKD3MGP8W/3FAAAAA/index.html").exists()
    shutil.rmtree(new)
    assert_update_equals_full(config_path)
    assert not (config.output / "8JMKD3MGP8W/3FAAAAA").exists()
    # a broken descriptor leaves the item out; fixing it brings it back
    _edit(item, state="Orignal")
    assert_update_equals_full(config_path)
    _edit(item, state="Original")
    assert_update_equals_full(config_path)


def test_a_state_of_another_generation_leads_to_a_full_build(tmp_path):
    """An update killed after it pointed the output at its new generation but before it
    saved its state: the state describes the tree before, so the next build is full."""
    from ibistatic.store.layout import generations, live_generation
    from ibistatic.store.swap import clone_tree, point

    config = load_config(make_project(tmp_path))
    build_site(config)
    folder, live = generations(config.output), live_generation(config.output)
    clone_tree(folder / live, folder / "g0")
    point(config.output, f"{folder.name}/g0")
    assert build_site(config).mode == "full"
    assert live_generation(config.output) not in (live, "g0")


@pytest.mark.slow
def test_a_killed_build_leaves_the_previous_site_intact(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from make_archive import make_project as make_synthetic

    project = make_synthetic(tmp_path / "project", 3000)
    config = load_config(project / "ibistatic.yaml")
    build_site(config)
    before = snapshot(config.output)
    killed_while_writing = 0
    for delay in (0.0, 0.3, 0.8):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ibistatic",
                "build",
                "--full",
                "--config",
                str(project / "ibistatic.yaml"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        staging = (
            config.output.parent / f".{config.output.name}.ibistatic" / f"staging-{process.pid}"
        )
        deadline = time.monotonic() + 60
        while not staging.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # wait until it writes the new tree
        time.sleep(delay)
        killed_while_writing += staging.exists() and process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert snapshot(config.output) == before
    assert killed_while_writing >= 2  # the kills did land in the middle of writing
    # a staging tree left by a killed build is removed by the next build (in the background)
    build_site(config, full=True)
    generations = config.output.parent / f".{config.output.name}.ibistatic"
    assert not [p for p in generations.iterdir() if p.name.startswith("staging-")]
    deadline = time.monotonic() + 180  # deleting 20,000 files each, on a shared disk
    while [p for p in generations.iterdir() if p.name != os.readlink(config.output).split("/")[-1]]:
        assert time.monotonic() < deadline, "leftovers of killed builds are still there"
        time.sleep(0.1)
    assert snapshot(config.output) == before


def test_catalog_is_published_when_configured(tmp_path):
    config_path = make_project(tmp_path)
    data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config_path.write_text(yaml.safe_dump({**data, "catalog": True}), encoding="utf-8")
    config = load_config(config_path)
    build_site(config)
    assert (config.output / "catalog" / "index.html").exists()
    pages = list((config.output / "catalog" / "items").rglob("index.html"))
    assert len(pages) == 15  # one page per IBI: 17 items, two of them copies


def test_a_failed_targeted_update_is_not_forgotten(tmp_path, monkeypatch):
    """Watch mode re-reads only the paths that changed. When a republish fails midway,
    the next one must read everything: the changes of the failed one are not in its paths."""
    from ibistatic.deposit import deposit
    from ibistatic.site.build import Publisher

    config = load_config(make_project(tmp_path))
    publisher = Publisher(config, keep_last_good=True)
    publisher.persist = False
    publisher.build()
    archive = tmp_path / "archives" / "mtc-m16d"
    first = deposit(archive, [Path(__file__)], host="mtc-m19.sid.inpe.br")
    import ibistatic.site.plan as plan

    original = plan.patched_references

    def fail(*args, **kwargs):  # before the update marks the output (its journal file)
        raise MemoryError

    monkeypatch.setattr(plan, "patched_references", fail)
    with pytest.raises(MemoryError):
        publisher.build(changed_paths={str(archive / first.repository)})
    monkeypatch.setattr(plan, "patched_references", original)
    second = deposit(archive, [Path(__file__)], host="mtc-m19.sid.inpe.br")
    publisher.build(changed_paths={str(archive / second.repository)})
    assert (config.output / first.repository / "index.html").exists()
    assert (config.output / second.repository / "index.html").exists()
    watched = snapshot(config.output)
    build_site(config, full=True)
    assert watched == snapshot(config.output)


def test_a_full_build_reads_only_the_items_of_the_last_state(tmp_path):
    """A full build needs only what the last one published: load_state(items_only=True)
    gives its items and small fields as the whole read does, and leaves the rest empty."""
    from ibistatic.site.state import _LARGE_FIELDS, load_state
    from site_helpers import write_config

    config = load_config(write_config(tmp_path, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"]))
    build_site(config)
    path = config.cache_dir / "site-state.pickle"
    whole, _ = load_state(path)
    items, warning = load_state(path, items_only=True)
    assert warning is None and whole.items and items.items == whole.items
    assert (items.fingerprint, items.generation, items.key_count) == (
        whole.fingerprint,
        whole.generation,
        whole.key_count,
    )
    assert all(getattr(whole, name) for name in ("published", "records", "digests"))
    assert all(getattr(items, name) == {} for name in _LARGE_FIELDS[1:])


@pytest.mark.skipif(
    "fork" not in __import__("multiprocessing").get_all_start_methods(), reason="fork"
)
def test_a_worker_dying_while_the_state_is_saved_costs_only_the_next_build(tmp_path, monkeypatch):
    """The state is saved after the site is published: a worker lost there is a warning
    that says so, not an error claiming that nothing was published."""
    from dataclasses import replace

    from ibistatic import forked, pickles

    monkeypatch.setattr(pickles, "PARALLEL_CHUNKS", 1)  # the sample's state saved forked
    run_shares = forked.run_shares

    def dying_in_the_save(work, progress=None, doing=""):
        if doing == "saving the build state":  # the first share's worker dies
            saving = work
            work = lambda share, counter: os._exit(9) if share == 0 else saving(share, counter)  # noqa: E731
        return run_shares(work, progress, doing)

    monkeypatch.setattr(forked, "run_shares", dying_in_the_save)
    config = replace(load_config(make_project(tmp_path)), jobs=2)
    report = build_site(config, full=True)
    assert (config.output / "index.html").is_file() and not report.state_saved
    said = [w for w in report.warnings if w.startswith("build state ")]
    assert len(said) == 1 and said[0].endswith(
        "not saved: saving the build state: a worker process ended with exit status 9 and no"
        " result (chunk 1 of 2); the next build is a full one"
    )
    monkeypatch.setattr(forked, "run_shares", run_shares)
    assert build_site(config).mode == "full"


def test_a_build_runs_with_the_collector_set_for_bulk_work(tmp_path, monkeypatch):
    """The collector's thresholds are raised for the whole build, the observation and the
    crawl included (it took a quarter of a 100k build), also for watch's Publisher, and
    put back after it, failed or not."""
    import gc

    from ibistatic import collector
    from ibistatic.site import build

    seen = []

    def watched(function):
        def call(*args, **kwargs):
            seen.append((function.__name__, gc.get_threshold()))
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(build, "observing", watched(build.observing))
    monkeypatch.setattr(build, "load_archives", watched(build.load_archives))
    before = gc.get_threshold()
    assert before != collector.BULK_THRESHOLDS
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    bulk = collector.BULK_THRESHOLDS
    assert seen == [("observing", bulk), ("load_archives", bulk)]
    assert gc.get_threshold() == before
    build.Publisher(config).build(full=True)  # as watch republishes
    assert seen[2:] == [("load_archives", bulk)]
    assert gc.get_threshold() == before

    def fail(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(build, "load_archives", fail)
    with pytest.raises(MemoryError):
        build_site(config, full=True)
    assert gc.get_threshold() == before


def test_each_items_urls_are_made_once_and_chunks_change_no_byte(tmp_path, monkeypatch):
    """A build asks for an item's URLs for its index record, its file list and its record
    page: they are made once (site.record.ItemUrls). A share is rendered a chunk of
    CHUNK_KEYS repositories at a time: chunks of 2 give the same site as one chunk."""
    from ibistatic.core import properties
    from ibistatic.site import item_phase, record

    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    whole = snapshot(config.output)
    asked = []

    def counted(view, item):
        asked.append(item)
        return properties.item_urls(view, item)

    monkeypatch.setattr(record, "item_urls", counted)
    monkeypatch.setattr(item_phase, "CHUNK_KEYS", 2)
    build_site(config, full=True)
    assert snapshot(config.output) == whole
    items = len(list((tmp_path / "archives").rglob("item.yaml")))
    assert items > 10 and len(asked) == items  # every item, none twice
    assert len({id(item) for item in asked}) == items


def test_the_state_keeps_an_items_alike_answers_once(tmp_path):
    """An item's repository name and IBIp answer alike: their packed answers are one
    bytes object, in the build's state and in the state read back (and the index still
    lists each key with its answers)."""
    import json

    from ibistatic.site.state import load_state
    from ibistatic.store.files import unpack
    from site_helpers import write_config

    config = load_config(write_config(tmp_path, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"]))
    build_site(config)
    state, _ = load_state(config.cache_dir / "site-state.pickle")
    shared = different = 0
    for answers in state.answers.values():
        values = list(answers.values())
        for first, second in zip(values, values[1:]):
            if unpack(first) == unpack(second):
                assert first is second
                shared += 1
            else:
                assert first is not second
                different += 1
    assert shared >= 5, (shared, different)
    answers_files = list((config.output / "index" / "answers").glob("*.json"))
    listed = {key for path in answers_files for key in json.loads(path.read_bytes())}
    assert listed == {key for answers in state.answers.values() for key in answers}
