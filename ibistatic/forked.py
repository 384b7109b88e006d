"""Running the shares of one job in forked processes, one per core this process may use.

`work(share, counter)` handles share `share` of :func:`workers` (its own slice, e.g. every
workers()-th element from `share` on) and adds what it finishes to `counter`, an integer
shared with the parent, which reports it as progress.  The work reaches the workers by
fork, so it may be a closure over anything; only its results are pickled, back to the
parent, through a temporary file each: the parent reads it back in frames, where a pipe
would bring it whole (at 100,000 items a result is over 100 MB, held twice while
unpickled).  Callers decide when a job is large enough to be worth the fork.

:func:`run_shares` hands the results back once every worker has ended, in share order;
:func:`shares_as_done` as each ends (the parent reads one while the others work), and
what a worker :func:`send` s before its end as soon as it is written; an
:class:`Aside` is one more process, forked now and begun later, for work that a core
freed by the end of a job can do while the parent goes on.
"""

from __future__ import annotations

import ctypes
import fcntl
import gc
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .errors import IbistaticError

__all__ = [
    "Aside",
    "WorkerDied",
    "available",
    "count",
    "default_jobs",
    "in_process",
    "owned_folder",
    "release",
    "run_shares",
    "shares_as_done",
    "send",
    "using_jobs",
    "workers",
]

_JOBS: int | None = None  # set by using_jobs(); None: default_jobs()

#: (work, counter, folder, the parent's pid) for the workers: set just before the fork
_JOB: tuple | None = None


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


_IN_PROCESS = 0  # > 0 while a caller with threads of its own forbids forking


def available() -> bool:
    """Whether a job may run in forked workers now (more than one, no thread forbids it,
    and the workers' shared counter can be made)."""
    return _IN_PROCESS == 0 and workers() > 1 and _can_fork()


_SAID_WHY_NOT: set[str] = set()  # each reason for working in one process, said once


def _can_fork() -> bool:
    """fork exists here, and a semaphore can be made: it lives in /dev/shm, and a full
    /dev/shm (inodes or bytes; a container's is 64 MB) refuses it with ENOSPC, which
    came out of a build as a traceback.  Each caller then takes its own in-process way."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        multiprocessing.get_context("fork").Lock()
    except OSError as error:
        why = f"{error.strerror or error}"
        if why not in _SAID_WHY_NOT:
            _SAID_WHY_NOT.add(why)
            logging.getLogger(__name__).warning(
                "ibistatic: working in one process: no semaphore can be made for forked "
                "workers (%s; is /dev/shm full?)",
                why,
            )
        return False
    return True


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
    if allowed <= 0 or every <= 0:
        return None
    return -(-allowed // every)


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


def run_shares(
    work: Callable[[int, Any], Any],
    progress: Callable[[int], None] | None = None,
    doing: str = "running a job in forked processes",
) -> Iterator:
    """work(0, counter), ..., work(workers() - 1, counter), each run in a forked process;
    `progress(units counted so far)` is called about ten times a second meanwhile.
    Once all are done, the results are read back one at a time, as they are iterated
    (let go of each before taking the next, and one result at a time is in memory).

    An exception in a share is raised again here.  A worker that dies without one (a
    segfault, an OOM kill) raises WorkerDied naming `doing` and how it ended: the parent
    watches each process, so it never waits for a result that cannot come."""
    processes, counter, folder = _start(work, doing=doing)
    try:
        _wait(processes, counter, progress)
        for share, process in enumerate(processes):
            _raise_failure(share, process, folder, doing, len(processes))
    except BaseException:
        _stop(processes, folder)
        raise
    return _read_all([_result_path(folder, share) for share in range(len(processes))], folder)


def shares_as_done(
    work: Callable[[int, Any], Any],
    progress: Callable[[int], None] | None = None,
    doing: str = "running a job in forked processes",
    ended: Callable[[], None] | None = None,
) -> Iterator[tuple[int, Any]]:
    """As run_shares, but (share, result) of each share as soon as its worker ends, in
    the order they end: the caller reads and merges one while the others still work (on
    two cores, a share's 0.6 s of unpickling at 100,000 items is no longer time where one
    core waits).  For work whose results may be merged in any order.  `ended()` is
    called as each worker ends, before its result is read (its core is free).

    A worker may also send() results before its end: each is yielded as (share, result)
    soon after it is written, a share's in the order sent and before its last result.
    So a share need not hold all it learns until its end (at 100,000 items, each of the
    items' workers grew from 215 to 419 MiB, then pickled it all while the parent waited).

    A failed share raises at once (after the results it sent), and the workers still
    running are stopped; so does a caller that stops iterating early."""
    processes, counter, folder = _start(work, doing=doing)
    try:
        for share, part in _as_they_come(processes, counter, progress, folder):
            if part is not None:
                yield share, _read(part)
                continue
            _raise_failure(share, processes[share], folder, doing, len(processes))
            if ended is not None:
                ended()
            yield share, _read(_result_path(folder, share))
    finally:
        _stop(processes, folder)


def send(result: Any) -> None:
    """In a worker of shares_as_done: hand `result` to the parent now, before the
    share's end, and let go of it."""
    folder, share, sent = _SENDING
    _dump(result, _part_path(folder, share, sent))
    _SENDING[2] = sent + 1


class Aside:
    """`work()` in one forked process that waits for go() to begin, while this process
    goes on; result() waits for its end and reads what it returned.  For work that needs
    only what exists at the fork, run on a core that a job about to end will free (the
    search, begun when the first of the items' workers ends: it then runs while the
    others end and the parent reads and merges their results).

    Use it as a context manager: leaving the block stops the process if it still runs
    (an error meanwhile, or no result() wanted)."""

    def __init__(self, work: Callable[[], Any], doing: str) -> None:
        ready = _shared(multiprocessing.get_context("fork").Event, doing)
        self._ready = ready
        self._doing = doing
        parent = os.getpid()

        def when_ready(share: int, counter) -> Any:
            while not ready.wait(1.0):
                if os.getppid() != parent:  # the parent was killed: nobody will ask
                    os._exit(1)
            return work()

        self._processes, _, self._folder = _start(when_ready, shares=1, doing=doing)

    def go(self) -> None:
        self._ready.set()

    def result(self) -> Any:
        self.go()
        process = self._processes[0]
        process.join()
        _raise_failure(0, process, self._folder, self._doing, 1)
        return _read(_result_path(self._folder, 0))

    def __enter__(self) -> Aside:
        return self

    def __exit__(self, *exc) -> None:
        _stop(self._processes, self._folder)


def _start(
    work: Callable[[int, Any], Any], shares: int | None = None, *, doing: str
) -> tuple[list, Any, str]:
    """The workers of `work`, forked (`shares` of them, else workers()): (their
    processes, the shared counter, the folder of their results)."""
    global _JOB
    context = multiprocessing.get_context("fork")
    counter = _shared(lambda: context.Value("l", 0), doing)
    folder = owned_folder()
    _JOB = (work, counter, folder, os.getpid())
    processes: list = []
    # what exists now is the workers' shared input: out of the collector's reach, its
    # pages are never written by a collection in a worker (copied on write), nor
    # walked again by each of them
    unfreeze = gc.get_freeze_count() == 0  # else the caller's (watch) freezing stays
    gc.freeze()
    _trim_heap()
    try:
        for share in range(workers() if shares is None else shares):
            processes.append(context.Process(target=_run_share, args=(share,), daemon=True))
            processes[-1].start()
    except BaseException:
        _stop(processes, folder)
        raise
    finally:
        _JOB = None
        if unfreeze:
            gc.unfreeze()
    return processes, counter, folder


def _trim_heap() -> None:
    """The heap's free memory given back to the system (glibc's malloc_trim) before a
    fork: what this process freed but malloc kept would be counted again in each
    worker's memory, which begins as this process's (25 ms at 1 GB; a no-op without
    glibc)."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM: Any = None  # libc's malloc_trim; False where there is none


def _shared(make: Callable[[], Any], doing: str) -> Any:
    """make() of a semaphore-backed object; a clear error when /dev/shm refuses it
    since available() found it could (it filled up during the build)."""
    try:
        return make()
    except OSError as error:
        raise IbistaticError(
            f"{doing}: no semaphore can be made for forked workers ({error.strerror or error}; "
            "is /dev/shm full?); --jobs 1 builds in one process"
        ) from None


def _stop(processes: list, folder: str) -> None:
    """The workers still running killed, and their results' folder removed."""
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join()
    release(folder)


def release(folder: str) -> None:
    """An owned_folder removed, and its lock let go."""
    shutil.rmtree(folder, ignore_errors=True)
    owner = _OWNED.pop(folder, None)
    if owner is not None:
        os.close(owner)


#: the owned folders of this process -> the descriptor of its locked OWNER file
_OWNED: dict[str, int] = {}
_PREFIX = "ibistatic-shares-"
#: the temporary folders of forked work, each owned (owned_folder): a job's results,
#: the state's pickled chunks (ibistatic.pickles)
_PREFIXES = (_PREFIX, "ibistatic-pickles-")
_OWNER = "owner.lock"
#: a folder without OWNER (made by a release before it) is abandoned once this old
_UNOWNED_AGE = 24 * 3600
_SWEPT = False  # whether this process has looked for abandoned folders yet


def owned_folder(prefix: str = _PREFIX) -> str:
    """A new folder for forked work (`prefix`: one of _PREFIXES) under the temporary
    folder, owned: its OWNER file is locked (flock) until release().  A build killed
    with SIGKILL (or by the OOM killer) cannot remove its folder, which then held what
    its workers had written, over 100 MB at 100,000 items; the kernel drops its lock,
    so the next process to make such a folder finds it abandoned and removes it."""
    global _SWEPT
    if not _SWEPT:
        _SWEPT = True
        _remove_abandoned(tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix=prefix)
    _OWNED[folder] = _owned(os.path.join(folder, _OWNER))
    return folder


def _remove_abandoned(parent: str) -> int:
    """Remove the owned folders under `parent` whose owner has died (their lock can
    be taken: it is held by a living process and its workers, in any PID namespace);
    those of other users are left alone.  Returns how many were removed."""
    removed = 0
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(_PREFIXES)]
    except OSError:
        return 0
    for entry in entries:
        if entry.path in _OWNED or not _abandoned(entry):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += not os.path.exists(entry.path)
    return removed


def _abandoned(entry: os.DirEntry) -> bool:
    """Whether nobody owns this folder: its OWNER lock is free, or it has no OWNER and
    is older than _UNOWNED_AGE.  Never one of another user's, nor one that cannot be
    looked into."""
    try:
        if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
            return False
        owner = _unlocked(os.path.join(entry.path, _OWNER))
    except FileNotFoundError:
        try:
            return time.time() - entry.stat().st_mtime > _UNOWNED_AGE
        except OSError:
            return False
    except OSError:  # held by its living owner, or not readable: not ours to remove
        return False
    os.close(owner)  # its name was unique: nobody will use the folder again
    return True


def _owned(path: str) -> int:
    """`path` made, locked (flock) before it has its name: a sweeper that finds the
    name finds it locked, never free for the moment between its making and its lock.
    Returns the descriptor that holds the lock."""
    making = path + ".new"
    descriptor = os.open(making, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.rename(making, path)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _unlocked(path: str) -> int:
    """A descriptor holding `path`'s flock, taken without waiting (OSError when another
    process holds it, FileNotFoundError when there is no such file)."""
    descriptor = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _wait(processes: list, counter, progress: Callable[[int], None] | None) -> None:
    """Until every process has ended, reporting progress about ten times a second."""
    for _ in _as_they_end(processes, counter, progress):
        pass


def _as_they_end(processes: list, counter, progress: Callable[[int], None] | None) -> Iterator[int]:
    """The number of each process as it ends (joined), reporting progress about ten
    times a second meanwhile and as each ends."""
    for ended in _ticks(processes, counter, progress):
        yield from ended


def _as_they_come(
    processes: list, counter, progress: Callable[[int], None] | None, folder: str
) -> Iterator[tuple[int, str | None]]:
    """(share, path) of each result a worker sends (send()), as it is written, in the
    order sent; (share, None) as the worker ends, after the last it sent."""
    sent = [0] * len(processes)

    def arrived(share: int) -> Iterator[tuple[int, str]]:
        while os.path.exists(path := _part_path(folder, share, sent[share])):
            sent[share] += 1
            yield share, path

    running = set(range(len(processes)))
    for ended in _ticks(processes, counter, progress):
        # looked for after the wait that saw these end: what they sent is all there
        for share in sorted(running):
            yield from arrived(share)
        for share in ended:
            running.discard(share)
            yield share, None


def _ticks(processes: list, counter, progress: Callable[[int], None] | None) -> Iterator[list]:
    """About ten times a second until every process has ended: the numbers of those
    that ended since (joined); progress is reported each time."""
    waiting = {process.sentinel: number for number, process in enumerate(processes)}
    while waiting:
        ready = multiprocessing.connection.wait(list(waiting), timeout=0.1)
        ended = [waiting.pop(sentinel) for sentinel in ready]
        for number in ended:
            processes[number].join()
        if progress is not None:
            progress(counter.value)
        yield ended


def _raise_failure(share: int, process, folder: str, doing: str, shares: int) -> None:
    """Raise what went wrong in `share`: its exception, or how its process died."""
    failed = _result_path(folder, share) + ".error"
    if os.path.exists(failed):
        with open(failed, "rb") as handle:
            raise pickle.load(handle)
    if process.exitcode != 0 or not os.path.exists(_result_path(folder, share)):
        raise WorkerDied(
            f"{doing}: a worker process {_how_it_ended(process.exitcode)} (share {share + 1} of {shares})"
        )


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (perhaps killed for lack of memory)" if name == "SIGKILL" else ""
        return f"died of {name}{hint}"
    return f"ended with exit status {exitcode} and no result"


def count(counter, units: int) -> None:
    """Add `units` finished to the shared counter (from a worker)."""
    with counter.get_lock():
        counter.value += units


def take(counter) -> int:
    """The next number of the shared counter, each number to one worker only: workers
    that take their next piece of work so keep busy until the last piece is out."""
    with counter.get_lock():
        number = counter.value
        counter.value = number + 1
    return number


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with(parent: int) -> None:
    """Have the kernel kill this worker when the process that forked it dies (kill -9,
    the OOM killer, which picks the largest process: the parent).  An orphaned worker
    went on with its share, up to a minute at 100k items, writing into a generation
    nobody would publish.  Where prctl does not exist (not Linux), it still does."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the call: no signal will come
        os._exit(1)


def _result_path(folder: str, share: int) -> str:
    return os.path.join(folder, f"share-{share}.pickle")


def _part_path(folder: str, share: int, number: int) -> str:
    return os.path.join(folder, f"share-{share}.part-{number}.pickle")


#: in a worker: (its results' folder, its share, how many results it sent) for send()
_SENDING: list = []


def _run_share(share: int) -> None:
    """In the worker: its result, or its exception, into a file of the folder."""
    global _SENDING
    work, counter, folder, parent = _JOB
    _die_with(parent)
    _SENDING = [folder, share, 0]
    path = _result_path(folder, share)
    try:
        _dump(work(share, counter), path)
    except BaseException as error:  # noqa: BLE001 - handed to the parent, which raises it
        try:
            _write_error(path + ".error", share, error)
        except OSError as unwritten:  # a full disk: the parent can only say the worker
            # died, so its cause is said here, in one line (never a traceback)
            sys.stderr.write(
                f"ibistatic: share {share + 1}: {type(error).__name__}: {error}; "
                f"its report could not be written either: {unwritten}\n"
            )
            sys.stderr.flush()
            os._exit(1)


def _dump(result: Any, path: str) -> None:
    with open(path + ".tmp", "wb") as handle:
        pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(path + ".tmp", path)  # a result file is whole or absent


def _write_error(path: str, share: int, error: BaseException) -> None:
    with open(path, "wb") as handle:
        try:
            pickle.dump(error, handle, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an exception that cannot be pickled: its text goes instead
            handle.seek(0)
            handle.truncate()
            pickle.dump(RuntimeError(f"share {share}: {type(error).__name__}: {error}"), handle)


def _read_all(paths: list[str], folder: str) -> Iterator:
    try:
        for path in paths:
            yield _read(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _read(path: str):
    with open(path, "rb") as handle:
        result = pickle.load(handle)
    os.unlink(path)  # its pages leave the page cache before the next result is read
    return result
