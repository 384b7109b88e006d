"""How many processes a build uses: `--jobs`, `jobs:`, else the CPUs it may use."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ibistatic import forked
from ibistatic.config import load_command_config
from ibistatic.errors import ConfigError
from ibistatic.site.build import build_site
from ibistatic.site.state import load_state
from test_publish import make_project, snapshot


def _cgroup(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="ascii")
    return forked.cgroup_cpus(str(tmp_path))


@pytest.mark.parametrize(
    "files, cpus",
    [
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu.max": "200000 100000\n"}, 2),
        ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: rounded up
        ({"cpu.max": "50000 100000\n"}, 1),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),
        (
            {
                "cpu,cpuacct/cpu.cfs_quota_us": "100000\n",
                "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            },
            1,
        ),
        ({}, None),
        ({"cpu.max": "garbage\n"}, None),
    ],
)
def test_a_cgroup_quota_limits_the_cpus(tmp_path, files, cpus):
    assert _cgroup(tmp_path, files) == cpus


def test_the_default_is_the_cpus_this_process_may_use(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    monkeypatch.setattr(forked, "cgroup_cpus", lambda: None)
    assert forked.default_jobs() == forked.workers() == 6
    monkeypatch.setattr(forked, "cgroup_cpus", lambda: 2)  # a container of 2 CPUs on 6 cores
    assert forked.default_jobs() == 2
    with forked.using_jobs(3):
        assert forked.workers() == 3
    assert forked.workers() == 2


def test_one_job_runs_in_this_process():
    with forked.using_jobs(1):
        assert forked.available() is False
    with forked.using_jobs(2):
        assert forked.available() is (
            "fork" in __import__("multiprocessing").get_all_start_methods()
        )


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_three_jobs_make_three_shares(tmp_path, monkeypatch):
    with forked.using_jobs(3):
        results = list(forked.run_shares(lambda share, counter: (share, os.getpid())))
    assert [share for share, _ in results] == [0, 1, 2]
    assert len({pid for _, pid in results} | {os.getpid()}) == 4  # each in a process of its own


def test_the_jobs_key_and_the_option(tmp_path, monkeypatch):
    path = make_project(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "jobs: 3\n", encoding="utf-8")
    assert load_command_config(path, None).jobs == 3
    assert load_command_config(path, None, 1).jobs == 1  # --jobs wins
    path.write_text(text + "jobs: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_command_config(path, None)
    assert "jobs: found 0; expected a whole number of processes, 1 or more" in str(error.value)


def test_a_bad_jobs_option_is_a_usage_error(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "ibistatic", "build", "--jobs", "0"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "--jobs: expected a whole number of processes, 1 or more; found '0'" in done.stderr


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_every_jobs_count_builds_the_same_site(tmp_path, monkeypatch):
    monkeypatch.setattr("ibistatic.store.store.PARALLEL_ITEMS", 1)  # fork for a small site
    monkeypatch.setattr("ibistatic.archive.crawl.PARALLEL_REPOSITORIES", 1)
    monkeypatch.setattr("ibistatic.archive.crawl.CHUNK_REPOSITORIES", 2)
    monkeypatch.setattr("ibistatic.site.item_phase.CHUNK_KEYS", 2)
    forks = []
    fork = forked._fork  # where each() forks its workers

    def counted(work, count):
        forks.append(count)
        return fork(work, count)

    monkeypatch.setattr(forked, "_fork", counted)
    sites = {}
    path = make_project(tmp_path)
    for jobs in (1, 3):
        config = load_command_config(path, None, jobs)
        shutil.rmtree(config.cache_dir, ignore_errors=True)  # every descriptor parsed
        build_site(config, full=True)
        sites[jobs] = snapshot(config.output)
    # --jobs 1 never forked; 3: 3 workers to crawl each of the 2 Archives, 3 for the
    # items, then 3 for the costly site-wide files (index, sitemaps, search, host files)
    assert forks == [3, 3, 3, 3]
    assert sites[1] == sites[3] and len(sites[1]) > 100
    forks.clear()
    build_site(config, full=True)  # the crawl cache knows every item: still shared out
    assert forks == [3, 3, 3, 3] and snapshot(config.output) == sites[1]


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_the_items_come_back_a_chunk_at_a_time(tmp_path, monkeypatch):
    """Each chunk of CHUNK_KEYS items is rendered by whichever worker is free and its
    facts reach the parent on their own, not a worker's whole share at its end; the
    site is the one a single process builds."""
    monkeypatch.setattr("ibistatic.store.store.PARALLEL_ITEMS", 1)
    monkeypatch.setattr("ibistatic.site.item_phase.CHUNK_KEYS", 2)
    each = forked.each
    chunks = []

    def counted(work, count, doing):
        for number, result in each(work, count, doing):
            chunks.append((doing, number, os.getpid()))
            yield number, result

    monkeypatch.setattr(forked, "each", counted)
    path = make_project(tmp_path)
    config = load_command_config(path, None, 1)
    build_site(config, full=True)
    alone = snapshot(config.output)
    config = load_command_config(path, None, 2)
    build_site(config, full=True)
    assert snapshot(config.output) == alone
    rendered = len(load_state(config.cache_dir / "site-state.pickle")[0].items)
    numbers = sorted(number for doing, number, _ in chunks if doing == "rendering")
    assert numbers == list(range(-(-rendered // 2))) and len(numbers) >= 4


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_a_crawl_cache_saved_by_a_forked_build_serves_the_next_build(tmp_path, monkeypatch):
    """The crawl cache of a build over two processes is saved, and let go, before the
    build plans and renders; the next build finds every descriptor in it and builds
    the same site."""
    from ibistatic.site.build import Publisher

    config = load_command_config(make_project(tmp_path), None, 2)
    first = Publisher(config)
    report = first.build(full=True)
    assert report.state_saved and first.cache.misses > 10
    assert first.cache._entries is None  # let go once saved
    built = snapshot(config.output)
    second = Publisher(config)
    second.build()  # an update: `build --full` would trust no cache and parse everything
    assert second.cache.misses == 0 and second.cache.hits == first.cache.misses
    assert snapshot(config.output) == built
