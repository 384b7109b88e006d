"""ibistatic.forked: shares of a job in forked processes, results back through files."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import pytest

from ibistatic import forked

pytestmark = pytest.mark.skipif(not forked.available(), reason="needs fork")


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where run_shares makes its folder
    return tmp_path


def test_results_come_back_in_share_order_and_leave_no_files(scratch):
    def work(share, counter):
        forked.count(counter, 1)
        return {"share": share, "data": b"x" * 100_000 * (share + 1)}

    results = forked.run_shares(work)
    assert list(scratch.iterdir()) != []  # read lazily: the files wait for the reader
    assert [(r["share"], len(r["data"])) for r in results] == [
        (n, 100_000 * (n + 1)) for n in range(forked.workers())
    ]
    assert list(scratch.iterdir()) == []


def test_a_failing_share_raises_and_leaves_no_files(scratch):
    def work(share, counter):
        if share == 1:
            raise ValueError("share 1 failed")
        return share

    with pytest.raises(ValueError, match="share 1 failed"):
        list(forked.run_shares(work))
    assert list(scratch.iterdir()) == []


def test_a_worker_that_cannot_report_says_why_in_one_line(scratch, capfd):
    """A full disk fails the work and then the worker's own report of it: the worker
    says its cause in one line on stderr, never a traceback, and the parent raises
    WorkerDied (the build's message: nothing was published)."""
    import shutil

    def work(share, counter):
        if share == 1:
            shutil.rmtree(forked._JOB[2])  # nowhere to write: as a full disk
            raise OSError(28, "No space left on device", "page.html")
        return share

    with forked.using_jobs(2), pytest.raises(forked.WorkerDied, match="no result"):
        list(forked.run_shares(work, None, "writing"))
    err = capfd.readouterr().err
    assert "share 2: OSError: [Errno 28] No space left on device: 'page.html'" in err
    assert "its report could not be written either" in err and "Traceback" not in err


def test_shares_as_done_come_as_their_workers_end(scratch):
    """The share that ends first is read first, while the other still works: the
    parent's reading no longer waits for the slowest worker."""
    import time

    def work(share, counter):
        if share == 0:
            time.sleep(1.0)
        return share, time.monotonic()

    ends = []
    with forked.using_jobs(2):
        shares = forked.shares_as_done(work, ended=lambda: ends.append(time.monotonic()))
        seen = [(share, result, time.monotonic()) for share, result in shares]
    assert [share for share, _, _ in seen] == [1, 0]
    # told of each end before its result was read
    assert len(ends) == 2 and ends[0] <= seen[0][2] and seen[0][2] < ends[1] <= seen[1][2]
    assert [result[0] for _, result, _ in seen] == [1, 0]
    # share 1 was read before share 0 had ended
    assert seen[0][2] < seen[1][1][1]
    assert list(scratch.iterdir()) == []


def test_what_a_worker_sends_comes_while_it_still_works_in_order(scratch):
    """send() hands a part to the parent before the share ends: the parent reads it
    while the worker waits for that (so a worker holds one part at a time, not its
    share's whole result), a share's parts in the order sent, its last result after."""
    received = scratch / "received"

    def work(share, counter):
        for number in range(3):
            forked.send((share, number))
        deadline = time.monotonic() + 20
        while not (received / f"{share}-2").exists():  # the parent has read part 2
            assert time.monotonic() < deadline, "the parts were not read before the end"
            time.sleep(0.01)
        return (share, "end")

    received.mkdir()
    seen = []
    with forked.using_jobs(2):
        for share, result in forked.shares_as_done(work):
            seen.append(result)
            if result[1] != "end":
                (received / f"{result[0]}-{result[1]}").touch()
    for share in (0, 1):
        assert [r for r in seen if r[0] == share] == [
            (share, 0),
            (share, 1),
            (share, 2),
            (share, "end"),
        ]
    assert sorted(p.name for p in scratch.iterdir()) == ["received"]  # no part left behind


def test_a_share_that_fails_after_sending_gives_its_parts_then_its_error(scratch):
    def work(share, counter):
        forked.send(f"part of {share}")
        if share == 1:
            raise ValueError("share 2 failed after a part")
        return share

    seen = []
    with forked.using_jobs(2), pytest.raises(ValueError, match="share 2 failed after a part"):
        for _, result in forked.shares_as_done(work):
            seen.append(result)
    assert "part of 1" in seen
    assert list(scratch.iterdir()) == []


def test_shares_as_done_stop_the_others_when_one_fails(scratch):
    import time

    def work(share, counter):
        if share == 1:
            raise ValueError("share 2 failed")
        time.sleep(30)  # killed, not waited for
        return share

    started = time.monotonic()
    with forked.using_jobs(2), pytest.raises(ValueError, match="share 2 failed"):
        list(forked.shares_as_done(work))
    assert time.monotonic() - started < 10
    assert list(scratch.iterdir()) == []


def test_a_caller_that_stops_early_stops_the_workers(scratch):
    import time

    def work(share, counter):
        if share == 0:
            time.sleep(30)
        return share

    started = time.monotonic()
    with forked.using_jobs(2):
        shares = forked.shares_as_done(work)
        assert next(shares) == (1, 1)
        shares.close()
    assert time.monotonic() - started < 10
    assert list(scratch.iterdir()) == []


def test_an_aside_begins_only_when_told_and_gives_its_result(scratch):
    import time

    with forked.Aside(lambda: time.monotonic(), "testing") as aside:
        time.sleep(0.5)
        told = time.monotonic()
        aside.go()
        began = aside.result()
    assert began >= told
    assert list(scratch.iterdir()) == []


def test_an_aside_raises_its_error(scratch):
    def work():
        raise ValueError("the search failed")

    with (
        pytest.raises(ValueError, match="the search failed"),
        forked.Aside(work, "testing") as aside,
    ):
        aside.result()
    assert list(scratch.iterdir()) == []


def test_an_aside_never_asked_is_stopped_with_its_block(scratch):
    import time

    with forked.Aside(lambda: time.sleep(60), "testing") as aside:
        aside.go()
        process = aside._processes[0]
    assert not process.is_alive()
    assert list(scratch.iterdir()) == []


def test_a_dev_shm_that_refuses_semaphores_makes_a_build_work_in_one_process(
    tmp_path, monkeypatch, caplog
):
    """A semaphore refused (ENOSPC: /dev/shm full) came out of a build as a traceback.
    The build now works in one process, publishes the same site, and says why once."""
    import errno
    import logging
    import multiprocessing.synchronize
    from dataclasses import replace

    from ibistatic.config import load_config
    from ibistatic.site.build import build_site
    from test_publish import make_project, snapshot

    serial = load_config(make_project(tmp_path / "serial"))
    build_site(replace(serial, jobs=1), full=True)
    config = replace(load_config(make_project(tmp_path / "refused")), jobs=3)

    def refused(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(multiprocessing.synchronize.SemLock, "__init__", refused)
    monkeypatch.setattr(forked, "_SAID_WHY_NOT", set())
    monkeypatch.setattr(forked, "_start", None)  # no worker may be started
    with caplog.at_level(logging.WARNING, logger="ibistatic.forked"):
        build_site(config, full=True)
        build_site(config, full=True)
    assert snapshot(config.output) == snapshot(serial.output)
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 1 and "No space left on device; is /dev/shm full?" in said[0]


def test_a_semaphore_refused_after_the_probe_is_a_clear_error(monkeypatch):
    """/dev/shm filled between available() and the fork: an error saying what to do, not
    a traceback (the CLI prints an IbistaticError as one line)."""
    import errno
    import multiprocessing.synchronize

    from ibistatic.errors import IbistaticError

    def refused(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(multiprocessing.synchronize.SemLock, "__init__", refused)
    with pytest.raises(IbistaticError, match=r"rendering: no semaphore .*No space left on device"):
        forked.run_shares(lambda share, counter: share, doing="rendering")
    with pytest.raises(IbistaticError, match=r"the search: no semaphore .*--jobs 1 builds"):
        forked.Aside(lambda: 1, "the search")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG)")
def test_workers_die_with_the_process_that_forked_them(tmp_path):
    """The build's process killed (kill -9, the OOM killer): its workers end too, instead
    of going on with their shares as orphans."""
    _, workers = _killed_job(tmp_path)
    _until_ended(workers)


def _until_ended(workers: list[int]) -> None:
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers):
        assert time.monotonic() < deadline, "a worker outlived the process that forked it"
        time.sleep(0.05)


def _killed_job(tmp_path, kill: bool = True) -> tuple[subprocess.Popen, list[int]]:
    """A process running a job of two workers (each sleeps a minute), its results'
    folder under tmp_path/tmp: killed with SIGKILL once both workers run (unless not
    `kill`).  Returns it and its workers' pids."""
    started, temporary = tmp_path / "started", tmp_path / "tmp"
    started.mkdir()
    temporary.mkdir(exist_ok=True)
    script = (
        "import os, sys, time\n"
        "from ibistatic import forked\n"
        "def work(share, counter):\n"
        f"    open(os.path.join({str(started)!r}, str(os.getpid())), 'w').close()\n"
        "    time.sleep(60)\n"
        "with forked.using_jobs(2):\n"
        "    list(forked.run_shares(work))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(temporary)}
    build = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 30
        while len(os.listdir(started)) < 2:
            assert time.monotonic() < deadline and build.poll() is None, "no workers started"
            time.sleep(0.05)
    finally:
        if kill or build.poll() is not None:
            build.kill()
            build.wait()
    return build, [int(name) for name in os.listdir(started)]


def _results_folders(temporary) -> list[str]:
    return sorted(p.name for p in temporary.iterdir() if p.name.startswith("ibistatic-shares-"))


def test_a_killed_jobs_results_folder_is_removed_by_the_next_job(tmp_path, monkeypatch):
    """SIGKILL leaves the results' folder of the killed job (up to its workers' whole
    results) under the temporary folder; the next process to start a job removes it."""
    _until_ended(_killed_job(tmp_path)[1])  # they hold the lock they inherited
    temporary = tmp_path / "tmp"
    assert len(_results_folders(temporary)) == 1  # the kill left it
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setattr(forked, "_SWEPT", False)  # this process has not looked yet
    assert list(forked.run_shares(lambda share, counter: share)) == list(range(forked.workers()))
    assert _results_folders(temporary) == []


def test_a_living_jobs_results_folder_is_left_alone(tmp_path):
    """Another process's job that runs: its folder is owned, whatever its age."""
    build, workers = _killed_job(tmp_path, kill=False)
    temporary = tmp_path / "tmp"
    try:
        (folder,) = _results_folders(temporary)
        os.utime(temporary / folder, (0, 0))  # old: only its lock says it is in use
        assert forked._remove_abandoned(str(temporary)) == 0
        assert _results_folders(temporary) == [folder]
    finally:
        build.kill()
        build.wait()
    _until_ended(workers)
    assert forked._remove_abandoned(str(temporary)) == 1
    assert _results_folders(temporary) == []


def test_a_folder_without_owner_goes_only_once_a_day_old(tmp_path):
    """A folder with no OWNER file (an earlier release's, or one being made right now)
    is removed only when no job of a day could still be writing into it."""
    fresh, stale = tmp_path / "ibistatic-shares-fresh", tmp_path / "ibistatic-shares-stale"
    for folder in (fresh, stale):
        folder.mkdir()
        (folder / "share-0.pickle").write_bytes(b"x")
    day_and_more = time.time() - 25 * 3600
    os.utime(stale, (day_and_more, day_and_more))
    (tmp_path / "ibistatic-shares-a-file").write_text("not a folder")
    assert forked._remove_abandoned(str(tmp_path)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ibistatic-shares-a-file",
        "ibistatic-shares-fresh",
    ]


def test_another_users_results_folder_is_not_looked_into(tmp_path, monkeypatch):
    folder = tmp_path / "ibistatic-shares-theirs"
    folder.mkdir()
    os.utime(folder, (0, 0))
    monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1)
    assert forked._remove_abandoned(str(tmp_path)) == 0
    assert folder.exists()


def _running(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended but not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_worker_died_error_crosses_processes_as_it_was():
    """Pickled (an error handed from a process to another), it says the same once."""
    import pickle

    died = forked.WorkerDied("rendering: a worker process died of SIGKILL (share 1 of 2)")
    again = pickle.loads(pickle.dumps(died))
    assert (str(again), again.what) == (str(died), died.what)
    assert str(again).count("nothing was published") == 1


def _full_dev_shm_works() -> bool:
    """Whether this machine lets a test mount a full /dev/shm of its own (root, unshare)."""
    import shutil

    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o nr_inodes=1 none /dev/shm"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _full_dev_shm_works(), reason="needs root and unshare -m")
def test_a_real_full_dev_shm_builds_in_one_process(tmp_path):
    """The real thing: `ibistatic build` in a mount namespace whose /dev/shm has no inode
    left (the state the 100k benchmark left this machine in) publishes, and says why it
    forked nothing.  Before, it ended in a traceback from sem_open."""
    from test_publish import make_project

    project = make_project(tmp_path)
    script = (
        "mount -t tmpfs -o size=64k,nr_inodes=2 none /dev/shm && touch /dev/shm/full && "
        'exec "$0" -m ibistatic build --jobs 2 --quiet --config "$1" --output "$2"'
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, sys.executable, str(project), str(tmp_path / "out")],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "working in one process: no semaphore can be made for forked workers" in done.stderr
    assert (tmp_path / "out" / "index.html").is_file()


def test_the_heap_is_trimmed_before_each_fork(scratch, monkeypatch):
    """What this process freed but malloc kept would count again in every worker's
    memory: it is given back to the system before the workers are forked."""
    calls = []
    monkeypatch.setattr(forked, "_MALLOC_TRIM", lambda pad: calls.append(pad))
    assert list(forked.run_shares(lambda share, counter: share)) == list(range(forked.workers()))
    assert calls == [0]
    monkeypatch.setattr(forked, "_MALLOC_TRIM", False)  # no glibc: nothing to call
    assert list(forked.run_shares(lambda share, counter: share)) == list(range(forked.workers()))
