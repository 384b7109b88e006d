"""Running the shares of one job in forked processes (this project's machines have two cores).

`work(share, counter)` handles share `share` of WORKERS (its own slice, e.g. every
WORKERS-th element from `share` on) and adds what it finishes to `counter`, an integer
shared with the parent, which reports it as progress.  The work reaches the workers by
fork, so it may be a closure over anything; only its results are pickled, back to the
parent, through a temporary file each: the parent reads it back in frames, where a pipe
would bring it whole (at 100,000 items a result is over 100 MB, held twice while
unpickled).  Callers decide when a job is large enough to be worth the fork.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["WORKERS", "available", "in_process", "run_shares", "count"]

WORKERS = 2

_JOB: tuple | None = None  # (work, counter, folder) for the workers: set just before the fork


_IN_PROCESS = 0  # > 0 while a caller with threads of its own forbids forking


def available() -> bool:
    return _IN_PROCESS == 0 and "fork" in multiprocessing.get_all_start_methods()


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


def run_shares(work: Callable[[int, Any], Any], progress: Callable[[int], None] | None = None) -> Iterator:
    """work(0, counter), ..., work(WORKERS - 1, counter), each run in a forked process;
    `progress(units counted so far)` is called about ten times a second meanwhile.
    Once all are done, the results are read back one at a time, as they are iterated
    (let go of each before taking the next, and one result at a time is in memory)."""
    global _JOB
    context = multiprocessing.get_context("fork")
    counter = context.Value("l", 0)
    folder = tempfile.mkdtemp(prefix="ibistatic-shares-")
    _JOB = (work, counter, folder)
    try:
        with context.Pool(WORKERS) as pool:
            pending = pool.map_async(_run_share, range(WORKERS))
            while not pending.ready():
                pending.wait(0.1)
                if progress is not None:
                    progress(counter.value)
            paths = pending.get()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        _JOB = None
    return _read_all(paths, folder)


def count(counter, units: int) -> None:
    """Add `units` finished to the shared counter (from a worker)."""
    with counter.get_lock():
        counter.value += units


def _run_share(share: int) -> str:
    work, counter, folder = _JOB
    result = work(share, counter)
    path = os.path.join(folder, f"share-{share}.pickle")
    with open(path, "wb") as handle:
        pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


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
