"""ibistatic.forked: numbered chunks of a job run by a pool of forked workers."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from ibistatic import forked

pytestmark = pytest.mark.skipif(not forked.available(), reason="needs fork")


def test_each_chunk_runs_in_one_of_jobs_workers_and_comes_back_merged_in_order(
    tmp_path, monkeypatch
):
    """The work is a closure over the parent's data (reached by fork, never pickled);
    the chunks are shared among --jobs workers, each result merged in chunk order."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # what others leave is not ours
    big = b"x" * 50_000_000  # pickled for each chunk, this would take seconds

    def work(number):
        return number, os.getpid(), len(big) + number

    with forked.using_jobs(3):
        done = forked.ordered(work, 40, "testing")
    assert [(number, size) for number, _, size in done] == [(n, 50_000_000 + n) for n in range(40)]
    pids = {pid for _, pid, _ in done}
    assert len(pids) == 3 and os.getpid() not in pids
    assert multiprocessing.active_children() == []  # none left behind, no files either
    assert os.listdir(tmp_path) == []


def test_one_job_runs_here_in_order():
    with forked.using_jobs(1):
        assert not forked.available()
        done = list(forked.each(lambda number: (number, os.getpid()), 5, "testing"))
    assert done == [(n, (n, os.getpid())) for n in range(5)]


def test_chunks_come_back_as_they_are_done_and_a_slow_one_holds_back_no_other():
    """A worker is sent the next chunk left as it hands one back: the parent merges
    (and counts as progress) each chunk as it comes, while a slow one goes on."""

    def work(number):
        if number == 0:
            time.sleep(1.0)
        return time.monotonic()

    with forked.using_jobs(2):
        seen = [(number, time.monotonic()) for number, _ in forked.each(work, 6, "testing")]
    assert [number for number, _ in seen] == [1, 2, 3, 4, 5, 0]
    assert seen[0][1] < seen[-1][1] - 0.5  # counted long before the slow one ended


def test_a_failing_chunk_raises_its_error_and_stops_the_workers():
    def work(number):
        if number == 3:
            raise ValueError("chunk 3 failed")
        time.sleep(0.05)
        return number

    with forked.using_jobs(2), pytest.raises(ValueError, match="chunk 3 failed"):
        list(forked.each(work, 100, "testing"))
    assert multiprocessing.active_children() == []


def test_an_error_that_cannot_cross_comes_as_its_text():
    class Unpicklable(Exception):
        def __reduce__(self):
            raise TypeError("no")

    def work(number):
        raise Unpicklable("the lock went")

    with forked.using_jobs(2), pytest.raises(RuntimeError, match="Unpicklable: the lock went"):
        list(forked.each(work, 2, "testing"))


def test_a_dying_worker_raises_worker_died_not_a_hang():
    def work(number):
        if number == 5:
            os._exit(7)
        return number

    started = time.monotonic()
    with forked.using_jobs(2), pytest.raises(forked.WorkerDied) as died:
        list(forked.each(work, 10, "rendering"))
    assert died.value.what == (
        "rendering: a worker process ended with exit status 7 and no result (chunk 6 of 10)"
    )
    assert time.monotonic() - started < 10 and multiprocessing.active_children() == []


def test_leaving_the_loop_early_kills_the_workers():
    with forked.using_jobs(2):
        for _ in forked.each(lambda number: time.sleep(0.2 * (number > 0)), 50, "testing"):
            break
    assert multiprocessing.active_children() == []


def test_no_semaphore_is_needed(monkeypatch):
    """/dev/shm full (a container's is 64 MB) refuses semaphores: the pool, pipes and
    processes only, forks all the same."""
    import errno
    import multiprocessing.synchronize

    def refused(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(multiprocessing.synchronize.SemLock, "__init__", refused)
    with forked.using_jobs(2):
        assert forked.available()
        assert forked.ordered(lambda number: os.getpid(), 4, "testing")[0] != os.getpid()


def test_the_heap_is_trimmed_and_the_collector_frozen_only_for_the_fork(monkeypatch):
    import gc

    gc.unfreeze()  # an earlier test's server (web.server) may have frozen this process
    calls = []
    monkeypatch.setattr(forked, "_trim_heap", lambda: calls.append(gc.get_freeze_count() > 0))
    with forked.using_jobs(2):
        assert forked.ordered(lambda number: number, 3, "testing") == [0, 1, 2]
    assert calls == [True] and gc.get_freeze_count() == 0


def test_a_worker_died_error_crosses_processes_as_it_was():
    died = forked.WorkerDied("rendering: a worker process died of SIGKILL (chunk 1 of 2)")
    again = pickle.loads(pickle.dumps(died))
    assert (str(again), again.what) == (str(died), died.what)
    assert str(again).count("nothing was published") == 1


def _job(tmp_path) -> tuple[subprocess.Popen, list[int]]:
    """A process running a job of two workers (each chunk sleeps a minute), in a process
    group of its own, once both workers run: it and its workers' pids."""
    started = tmp_path / "started"
    started.mkdir()
    script = (
        "import os, time\n"
        "from ibistatic import forked\n"
        "def work(number):\n"
        f"    open(os.path.join({str(started)!r}, str(os.getpid())), 'w').close()\n"
        "    time.sleep(60)\n"
        "with forked.using_jobs(2):\n"
        "    list(forked.each(work, 4, 'testing'))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    job = subprocess.Popen(
        [sys.executable, "-c", script], env=env, start_new_session=True, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while len(os.listdir(started)) < 2:
        assert time.monotonic() < deadline and job.poll() is None, "no workers started"
        time.sleep(0.05)
    return job, [int(name) for name in os.listdir(started)]


def _until_ended(pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in pids):
        assert time.monotonic() < deadline, "a worker outlived the job"
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, PR_SET_PDEATHSIG")
def test_ctrl_c_ends_the_job_and_its_workers(tmp_path):
    """Ctrl-C (SIGINT to the terminal's process group): the parent stops, kills its
    workers (which leave it to the parent), and no worker's traceback is printed."""
    job, workers = _job(tmp_path)
    os.killpg(job.pid, signal.SIGINT)
    _, err = job.communicate(timeout=20)
    assert job.returncode != 0 and err.decode().count("KeyboardInterrupt") == 1
    _until_ended(workers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, PR_SET_PDEATHSIG")
def test_workers_die_with_the_process_that_forked_them(tmp_path):
    """The parent killed (kill -9, the OOM killer): its workers end too, not orphans."""
    job, workers = _job(tmp_path)
    job.kill()
    job.communicate()
    _until_ended(workers)
