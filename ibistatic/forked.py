"""Numbered chunks of a job run by a small pool of forked processes.

:func:`each` runs ``work(0)`` ... ``work(count - 1)`` over workers() processes and
yields ``(number, result)`` as each chunk is done; the parent merges them (:func:`ordered`
when their order matters).  The work reaches the workers by fork, so it may be a
closure over anything the parent holds (nothing of it is pickled); each chunk's result
comes back pickled through its worker's pipe.  Callers make chunks small: a result
is held twice while it is unpickled, and the parent merges one while the workers go on.

The shape of sphinx's ``util/parallel.py`` (a pipe per process, one merge loop), with
workers forked once per job that each take the next chunk left, rather than a fork per
chunk.  A worker that dies raises WorkerDied, never a hang; a chunk's exception is
raised again in the parent; leaving the loop (an error, Ctrl-C) kills the workers, and a
worker whose parent is killed dies with it.  Callers decide when a job is worth a fork.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.connection
import os
import pickle
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .errors import IbistaticError

__all__ = ["WorkerDied", "available", "default_jobs", "each", "in_process", "ordered"]
__all__ += ["using_jobs", "workers"]

T = TypeVar("T")

_JOBS: int | None = None  # set by using_jobs(); None: default_jobs()
_IN_PROCESS = 0  # > 0 while a caller with threads of its own forbids forking
_WORK: Callable | None = None  # the job's work, for the workers: set just before the fork


class WorkerDied(IbistaticError):
    """A forked worker ended without a result: a crash, not a problem of the input.
    `what` says which work and how it ended, without the message's word on the output
    (a caller that forks after publishing, the state's save, says its own)."""

    exit_code = 1

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}; nothing was published, the previous output is unchanged")
        self.what = what

    def __reduce__(self):  # pickled from a process to another: made again from `what`
        return type(self), (self.what,)


def available() -> bool:
    """Whether a job may run in forked workers now (more than one, no thread forbids it)."""
    forks = "fork" in multiprocessing.get_all_start_methods()
    return _IN_PROCESS == 0 and workers() > 1 and forks


def workers() -> int:
    """How many processes a job is shared among: `--jobs`, else the CPUs this process may use."""
    return _JOBS if _JOBS is not None else default_jobs()


@contextmanager
def using_jobs(jobs: int | None) -> Iterator[None]:
    """Jobs are shared among `jobs` processes meanwhile (1: in this process; None: the default)."""
    global _JOBS
    before, _JOBS = _JOBS, jobs
    try:
        yield
    finally:
        _JOBS = before


@contextmanager
def in_process() -> Iterator[None]:
    """No forked workers meanwhile: forking while other threads run (watch's observers)
    copies locks they may hold, and the child can deadlock on them."""
    global _IN_PROCESS
    _IN_PROCESS += 1
    try:
        yield
    finally:
        _IN_PROCESS -= 1


def default_jobs() -> int:
    """The CPUs this process may run on (its affinity), fewer when a cgroup quota allows less."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_cpus()
    return max(1, min(cpus, quota) if quota is not None else cpus)


def cgroup_cpus(root: str = "/sys/fs/cgroup") -> int | None:
    """The CPUs a cgroup quota allows this process (rounded up), None without a quota:
    cgroup v2 ``cpu.max`` ("200000 100000", or "max 100000"), else v1 ``cpu.cfs_quota_us``
    over ``cpu.cfs_period_us`` (-1: none)."""
    v2 = _read_words(os.path.join(root, "cpu.max"))
    if v2 is not None:
        return _quota(v2[0], v2[1] if len(v2) > 1 else "100000")
    for folder in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        quota = _read_words(os.path.join(root, folder, "cpu.cfs_quota_us"))
        period = _read_words(os.path.join(root, folder, "cpu.cfs_period_us"))
        if quota and period:
            return _quota(quota[0], period[0])
    return None


def _read_words(path: str) -> list[str] | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().split() or None
    except (OSError, ValueError):
        return None


def _quota(quota: str, period: str) -> int | None:
    try:
        allowed, every = int(quota), int(period)
    except ValueError:
        return None  # "max": no quota
    return -(-allowed // every) if allowed > 0 and every > 0 else None


def ordered(work: Callable[[int], T], count: int, doing: str) -> list[T]:
    """[work(0), ..., work(count - 1)], run as :func:`each` runs them."""
    done = dict(each(work, count, doing))
    return [done[number] for number in range(count)]


def each(work: Callable[[int], T], count: int, doing: str) -> Iterator[tuple[int, T]]:
    """(n, work(n)) for each n of range(count), in the order they are done: in forked
    workers, each sent the next number left as it hands back a result, when available();
    else here, in order.  `doing` names the work in WorkerDied."""
    if not available() or count == 0:
        yield from ((number, work(number)) for number in range(count))
        return
    pool = _fork(work, min(workers(), count))
    try:
        left = iter(range(count))
        busy = {}  # a worker's pipe -> (its process, the number it works on)
        for process, pipe in pool:
            if (number := next(left, None)) is not None:
                _give(pipe, number)
                busy[pipe] = process, number
        while busy:
            for pipe in multiprocessing.connection.wait(list(busy)):
                process, number = busy.pop(pipe)
                try:
                    failed, result = pipe.recv()
                except EOFError:  # died without a word (a segfault, the OOM killer)
                    process.join()
                    how = _how_it_ended(process.exitcode)
                    raise WorkerDied(
                        f"{doing}: a worker process {how} (chunk {number + 1} of {count})"
                    )
                if failed:
                    raise result
                if (following := next(left, None)) is not None:  # busy while we merge
                    _give(pipe, following)
                    busy[pipe] = process, following
                yield number, result
    finally:
        _stop(pool)  # idle, or working for nothing now


def _stop(pool: list) -> None:
    for process, pipe in pool:
        process.kill()
        process.join()
        pipe.close()


def _give(pipe, number: int) -> None:
    """Send `number` to a worker; one that died meanwhile is found by the next wait."""
    try:
        pipe.send(number)
    except BrokenPipeError:
        pass


def _fork(work: Callable, count: int) -> list:
    """`count` workers of `work`, each (its process, the parent's end of its pipe)."""
    global _WORK
    context = multiprocessing.get_context("fork")
    _WORK, pool = work, []
    # what exists now is the workers' shared input: out of the collector's reach, its
    # pages are never written by a collection in a worker (copied on write)
    unfreeze = gc.get_freeze_count() == 0  # else the caller's (watch) freezing stays
    gc.freeze()
    _trim_heap()
    try:
        for _ in range(count):
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, os.getpid()), daemon=True)
            process.start()
            pool.append((process, mine))
            theirs.close()  # the worker's end is the worker's alone: its death is our EOF
    except BaseException:
        _stop(pool)
        raise
    finally:
        _WORK = None
        if unfreeze:
            gc.unfreeze()
    return pool


def _serve(pipe, parent: int) -> None:
    """In a worker: the work of each number the parent sends, until it closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _die_with(parent)
    work = _WORK
    while True:
        try:
            number = pipe.recv()
        except EOFError:
            return
        try:
            reply = (False, work(number))
        except BaseException as error:  # noqa: BLE001 - handed to the parent, which raises it
            try:  # it must come back whole: an exception that cannot goes as its text
                reply = (True, pickle.loads(pickle.dumps(error)))
            except Exception:  # noqa: BLE001
                reply = (True, RuntimeError(f"chunk {number}: {type(error).__name__}: {error}"))
        pipe.send(reply)


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (perhaps killed for lack of memory)" if name == "SIGKILL" else ""
        return f"died of {name}{hint}"
    return f"ended with exit status {exitcode} and no result"


def _trim_heap() -> None:
    """The heap's free memory given back to the system (glibc's malloc_trim) before a
    fork: what this process freed but malloc kept would count again in each worker."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _die_with(parent: int) -> None:
    """Have the kernel kill this worker when its parent dies (kill -9, the OOM killer):
    an orphan would go on writing into a generation nobody will publish."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the call: no signal will come
        os._exit(1)


# -- for ibistatic.pickles only, until the state moves to its sqlite ledger ---------------


def run_shares(work: Callable[[int, Any], T], progress: Any = None, doing: str = "") -> list[T]:
    """work(share, None) for each share of range(workers()), in share order."""
    return ordered(lambda share: work(share, None), workers(), doing)


def owned_folder(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=prefix)


def release(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
