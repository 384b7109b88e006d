"""Running the shares of one job in forked processes (this project's machines have two cores).

`work(share, counter)` handles share `share` of WORKERS (its own slice, e.g. every
WORKERS-th element from `share` on) and adds what it finishes to `counter`, an integer
shared with the parent, which reports it as progress.  The work reaches the workers by
fork, so it may be a closure over anything; only its results are pickled, back to the
parent.  Callers decide when a job is large enough to be worth the fork.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

__all__ = ["WORKERS", "available", "run_shares", "count"]

WORKERS = 2

_JOB: tuple | None = None  # (work, counter) for the workers: set just before the fork


def available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def run_shares(work: Callable[[int, Any], Any], progress: Callable[[int], None] | None = None) -> list:
    """[work(0, counter), ..., work(WORKERS - 1, counter)], each in a forked process;
    `progress(units counted so far)` is called about ten times a second meanwhile."""
    global _JOB
    context = multiprocessing.get_context("fork")
    counter = context.Value("l", 0)
    _JOB = (work, counter)
    try:
        with context.Pool(WORKERS) as pool:
            pending = pool.map_async(_run_share, range(WORKERS))
            while not pending.ready():
                pending.wait(0.1)
                if progress is not None:
                    progress(counter.value)
            return pending.get()
    finally:
        _JOB = None


def count(counter, units: int) -> None:
    """Add `units` finished to the shared counter (from a worker)."""
    with counter.get_lock():
        counter.value += units


def _run_share(share: int):
    work, counter = _JOB
    return work(share, counter)
