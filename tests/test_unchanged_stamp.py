"""A rebuild with nothing new is answered from the build's stamp by lstat alone
(site/unchanged.py, archive/observe.py); every change the crawl would see still is."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest

from ibistatic import forked
from ibistatic.archive import observe
from ibistatic.config import load_config
from ibistatic.site import build as site_build
from ibistatic.site import unchanged
from ibistatic.site.build import build_site
from ibistatic.site.unchanged import stamp_path
from ibistatic.store.layout import live_generation
from test_publish import make_project, snapshot

ITEM = "archives/mtc-m16d/sid.inpe.br/mtc-m19/2014/01.02.17.23.57"


@pytest.fixture
def settled(monkeypatch):
    """Entries count as settled at once (the tests' files are all just written)."""
    monkeypatch.setattr(observe, "RACY_SECONDS", 0.0)


class Crawled(Exception):
    """Raised by a crawl where the stamp should have answered."""


def _built(tmp_path):
    config = load_config(make_project(tmp_path))
    first = build_site(config, full=True)
    assert stamp_path(config).is_file()
    return config, first


def test_a_rebuild_of_nothing_new_reads_no_descriptor_and_reports_the_same(
    tmp_path, settled, monkeypatch
):
    config = load_config(make_project(tmp_path))
    (tmp_path / "archives/mtc-m16d/sid.inpe.br/mtc-m19/2014/01.02.17.23.58").mkdir()
    first = build_site(config, full=True)
    assert len(first.problems) == 1  # a folder without item.yaml: a warning, also next time
    generation, before = live_generation(config.output), snapshot(config.output)
    cache_files = {p.name: p.stat().st_mtime_ns for p in config.cache_dir.iterdir()}
    monkeypatch.setattr(site_build, "load_archives", _refuse)
    again = build_site(config)
    assert (again.mode, again.written, again.removed) == (
        "update of 0 changed, 0 affected items",
        0,
        0,
    )
    assert (again.items, again.keys, again.pages) == (first.items, first.keys, first.pages)
    assert again.problems == first.problems
    assert live_generation(config.output) == generation and snapshot(config.output) == before
    assert {p.name: p.stat().st_mtime_ns for p in config.cache_dir.iterdir()} == cache_files


def _refuse(*args, **kwargs):
    raise Crawled


@pytest.mark.parametrize(
    "change",
    [
        "same size, new bytes",
        "a file added to doc/",
        "a file removed from doc/",
        "a new repository",
        "made unreadable",
        "archive.yaml rewritten",
    ],
)
def test_every_change_the_crawl_would_see_makes_the_build_crawl(tmp_path, settled, change):
    config, _ = _built(tmp_path)
    item = tmp_path / ITEM
    descriptor = item / "item.yaml"
    if change == "same size, new bytes":
        text = descriptor.read_text(encoding="utf-8")
        descriptor.write_text(text[:-1] + " ", encoding="utf-8")  # was a newline
        stat = descriptor.stat()
        os.utime(descriptor, ns=(stat.st_atime_ns, stat.st_mtime_ns - 10**10))  # mtime back
    elif change == "a file added to doc/":
        (item / "doc" / "errata.txt").write_text("errata\n", encoding="utf-8")
    elif change == "a file removed from doc/":
        next(p for p in (item / "doc").iterdir() if p.is_file()).unlink()
    elif change == "a new repository":
        (tmp_path / "archives/mtc-m16d/sid.inpe.br/mtc-m19/2014/01.02.17.23.58").mkdir()
    elif change == "made unreadable":
        descriptor.chmod(0o000)
    else:
        info = tmp_path / "archives/mtc-m16d/archive.yaml"
        info.write_bytes(info.read_bytes())
    try:
        with pytest.raises(Crawled):
            _build_refusing_crawls(config)
    finally:
        descriptor.chmod(0o644)


def _build_refusing_crawls(config):
    original = site_build.load_archives
    site_build.load_archives = _refuse
    try:
        return build_site(config)
    finally:
        site_build.load_archives = original


def test_other_settings_another_live_tree_or_full_make_the_build_crawl(tmp_path, settled):
    config, _ = _built(tmp_path)
    with pytest.raises(Crawled):
        _build_refusing_crawls(replace(config, hosts=("netlify",)))
    with pytest.raises(Crawled):
        _build_refusing_crawls(replace(config, alert_pages=not config.alert_pages))
    manifest = config.output / "index" / "manifest.json"
    manifest.write_bytes(manifest.read_bytes() + b" ")
    with pytest.raises(Crawled):
        _build_refusing_crawls(config)
    assert build_site(config, full=True).mode == "full"  # --full never asks the stamp


def test_a_failed_build_leaves_no_stamp_behind(tmp_path, settled, monkeypatch):
    config, _ = _built(tmp_path)
    (tmp_path / ITEM / "doc" / "errata.txt").write_text("errata\n", encoding="utf-8")
    with pytest.raises(Crawled):
        _build_refusing_crawls(config)
    assert not stamp_path(config).exists()
    assert build_site(config).written >= 1  # then the change is published, and stamped
    assert stamp_path(config).is_file()


def _marked(path, timeout=20.0):
    """Wait for another process to create `path` (a step of the other side of a race)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never came"
        time.sleep(0.01)


def test_a_change_made_while_the_build_reads_is_crawled_next_time(tmp_path, settled, monkeypatch):
    """The Archives are walked for the stamp before the build reads them: a file changed
    once the crawl has read it no longer matches the stamp, and is crawled next time."""
    config = replace(load_config(make_project(tmp_path)), jobs=2)
    build_site(config, full=True)
    load = site_build.load_archives

    def loaded_meanwhile(*args, **kwargs):  # the file is changed once the crawl has read
        loaded = load(*args, **kwargs)
        time.sleep(0.05)  # past the file system's clock tick since the build began
        (tmp_path / ITEM / "doc" / "errata.txt").write_text("errata\n", encoding="utf-8")
        return loaded

    monkeypatch.setattr(site_build, "load_archives", loaded_meanwhile)
    assert build_site(config, full=True).written >= 1
    assert stamp_path(config).exists()
    monkeypatch.setattr(site_build, "load_archives", load)
    with pytest.raises(Crawled):
        _build_refusing_crawls(config)


def test_a_walk_that_fails_costs_only_the_next_builds_short_cut(
    tmp_path, settled, monkeypatch, caplog
):
    """The site is published and the failure said; only the stamp is missing."""
    config = load_config(make_project(tmp_path))
    first = build_site(config, full=True)

    def failing(roots, began=None):
        raise MemoryError

    monkeypatch.setattr(observe, "observe", failing)
    again = build_site(config, full=True)
    assert (again.pages, again.problems) == (first.pages, first.problems)
    assert not stamp_path(config).exists()
    said = caplog.text
    assert "the Archives were not observed for the build's stamp (" in said
    assert "MemoryError" in said


def test_with_one_job_the_walk_is_done_first_in_the_builds_process(tmp_path, settled, monkeypatch):
    config = replace(load_config(make_project(tmp_path)), jobs=1)
    seen, walk, load = [], observe.observe, site_build.load_archives

    def walked_here(*args, **kwargs):
        seen.append(("observe", os.getpid()))
        return walk(*args, **kwargs)

    def loaded(*args, **kwargs):
        seen.append(("load_archives", os.getpid()))
        return load(*args, **kwargs)

    monkeypatch.setattr(observe, "observe", walked_here)
    monkeypatch.setattr(site_build, "load_archives", loaded)
    build_site(config, full=True)
    assert seen == [("observe", os.getpid()), ("load_archives", os.getpid())]
    assert stamp_path(config).is_file()


def test_a_tree_with_a_symbolic_link_or_just_changed_is_never_stamped(tmp_path, monkeypatch):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)  # every file written just now: racy
    assert not stamp_path(config).exists()
    monkeypatch.setattr(observe, "RACY_SECONDS", 0.0)
    os.symlink("doc", tmp_path / ITEM / "link")
    build_site(config)
    assert not stamp_path(config).exists()
    assert observe.observe(config.archives) is None


def test_an_observation_holds_until_an_entry_changes(tmp_path, settled):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("1", encoding="utf-8")
    seen = observe.observe([tmp_path / "a"])
    assert seen is not None and seen.entries == 3 and seen.holds([tmp_path / "a"])
    assert not seen.holds([tmp_path / "a", tmp_path / "a" / "b"])  # other roots
    (tmp_path / "a" / "b" / "f").write_text("2", encoding="utf-8")
    assert not seen.holds([tmp_path / "a"])
    again = observe.observe([tmp_path / "a"])
    (tmp_path / "a" / "b" / "f").unlink()
    assert not again.holds([tmp_path / "a"])
    assert observe.observe([tmp_path / "missing"]) is None


def test_another_ibistatic_makes_the_build_crawl(tmp_path, settled, monkeypatch):
    """An upgrade (or an edit of the code) is never answered by an older build's stamp."""
    config, _ = _built(tmp_path)
    assert _build_refusing_crawls(config).written == 0  # the same code: the stamp answers
    monkeypatch.setattr(unchanged, "code_fingerprint", lambda: b"another ibistatic")
    with pytest.raises(Crawled):
        _build_refusing_crawls(config)


def _tree(root, folders=40, files=3):
    """`folders` repositories two levels down, each with `files` files in doc/."""
    for number in range(folders):
        doc = root / f"host{number % 3}" / f"repo{number}" / "doc"
        doc.mkdir(parents=True)
        for file in range(files):
            (doc / f"f{file}.txt").write_text(str(file), encoding="utf-8")


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_an_observation_walked_by_forked_workers_is_the_one_walked_here(
    tmp_path, settled, monkeypatch
):
    """Split into many parts and shared among forked workers, the walk lists the same
    entries in the same order, with the same digest, as one process walking them all;
    it holds until an entry deep in one part changes, and a link there spoils it."""
    monkeypatch.setattr(observe, "SPLIT_FOLDERS", 8)  # split even this small tree
    monkeypatch.setattr(observe, "FORK_FOLDERS", 8)
    forks = []
    fork = forked._fork
    monkeypatch.setattr(forked, "_fork", lambda *a: forks.append(1) or fork(*a))
    _tree(tmp_path / "a")
    _tree(tmp_path / "b", folders=7)
    roots = [tmp_path / "a", tmp_path / "b"]
    with forked.using_jobs(3):
        apart = observe.observe(roots)
    with forked.using_jobs(1):
        here = observe.observe(roots)
    assert forks == [1]  # the first walk was shared out, the second was not
    assert apart == here and len(apart.counts) > 6 and apart.entries == 2 + 3 + 40 * 5 + 3 + 7 * 5
    digest, slept = observe._digest, []

    def slow_first(results):  # each worker's first part is slow: the parts come back
        if not slept:  # out of order, as on a loaded machine
            slept.append(time.sleep(0.2))
        return digest(results)

    monkeypatch.setattr(observe, "_digest", slow_first)
    with forked.using_jobs(3):  # checked again part by part, shared out as walked
        assert apart.holds(roots)
    assert forks == [1, 1] and not slept  # only the workers slept
    deep = tmp_path / "a" / "host1" / "repo4" / "doc" / "f2.txt"
    os.utime(deep, ns=(1, 1))  # only its times: nothing else under the roots changes
    with forked.using_jobs(3):
        assert not apart.holds(roots)
    with forked.using_jobs(1):
        assert not apart.holds(roots)
        assert here.holds([tmp_path / "b"]) is False  # other roots
    now = observe.observe(roots)
    (tmp_path / "a" / "host0" / "repo3" / "doc" / "f1.txt").unlink()  # an entry gone
    with forked.using_jobs(3):
        assert not now.holds(roots)
    os.symlink("f1.txt", deep.parent / "link")
    with forked.using_jobs(3):
        assert observe.observe(roots) is None
