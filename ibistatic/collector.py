"""The cyclic garbage collector, set for bulk work (a build, a republish).

CPython collects its youngest generation every 700 allocations more than deallocations,
and each such collection may go on to the older generations. A build allocates tens of
millions of objects that live until it ends (the crawl cache, the state, the items), and
almost none of them in cycles: reference counting frees what it drops. With the
default thresholds the collector took a large share of a full build's time (the same
peak memory with these thresholds or with it off: benchmarks/README.md), most of it
walking the long-lived heap while the crawl cache and the state were unpickled.

The thresholds are raised, not the collector turned off: a cycle made by a bad input's
exception, a template or a library is still freed, in a build of any length and in the
long life of ``watch``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BULK_THRESHOLDS", "bulk"]

#: the youngest generation collected every 200,000 allocations, the middle one every 50
#: of those, the oldest every 100 of the middle's (and, as always, only once the objects
#: that survived since its last pass are a quarter of those it holds)
BULK_THRESHOLDS = (200_000, 50, 100)


@contextmanager
def bulk() -> Iterator[None]:
    """The collector's thresholds set for bulk work, then back to what they were (forked
    workers inherit them)."""
    before = gc.get_threshold()
    gc.set_threshold(*BULK_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
