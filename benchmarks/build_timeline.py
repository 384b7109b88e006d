"""When a build's cores are busy: its forked phases, and the parent's time alone.

    python benchmarks/build_timeline.py [ibistatic build options ...]

Runs ``ibistatic build`` (the checkout's, in this process) with the given options, and
prints one line per forked phase as the build reads its results: when its workers
started (seconds from the start), how long they ran side by side, and how long the
parent then took to read their results back and merge them.  For a phase whose results
are read as each worker ends (``forked.shares_as_done``: the items, the crawl), the
workers' span runs to the last result's arrival, and the reading is said in all and
after the last (only that part is the parent's time alone).  It ends with the parent's time alone
(the wall time less the workers' spans): on a machine of N cores, that time uses one
core of N, and it bounds what more cores can give (Amdahl).

Example (the issue 18 session of 2026-11-23 23:20):

    python benchmarks/build_timeline.py build --full \\
        --config DIR/project-100000-s0/ibistatic.yaml --output /dev/shm/site100
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's ibistatic

from ibistatic import forked  # noqa: E402
from ibistatic.cli import main as ibistatic_main  # noqa: E402

START = time.perf_counter()
SPANS: list[float] = []  # the workers' wall time of each forked phase


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _timed(run_shares):
    """run_shares, reporting each phase once its results are read."""

    def timed(work, progress=None, doing="running a job in forked processes"):
        caller = sys._getframe(1).f_code.co_name
        started = time.perf_counter()
        results = run_shares(work, progress, doing)
        ended = time.perf_counter()
        SPANS.append(ended - started)

        def read():
            yield from results
            _say(
                f"[{started - START:7.2f} s] {caller:>22}: workers {ended - started:6.2f} s, "
                f"results read and merged {time.perf_counter() - ended:5.2f} s"
            )

        return read()

    return timed


READ = [0.0]  # seconds spent unpickling workers' results (forked._read)


def _counted(read):
    def counted(path):
        started = time.perf_counter()
        try:
            return read(path)
        finally:
            READ[0] += time.perf_counter() - started

    return counted


def _timed_as_done(shares_as_done):
    """shares_as_done, reporting its phase once the last result is read: the workers'
    span runs to the last result's arrival (the results of those that ended first are
    read meanwhile, while the others still work)."""

    def timed(work, progress=None, doing="running a job in forked processes", ended=None):
        caller = sys._getframe(1).f_code.co_name
        started = time.perf_counter()
        last = started
        reading = 0.0
        unpickled = READ[0]
        for share, result in shares_as_done(work, progress, doing, ended):
            last = time.perf_counter() - (READ[0] - unpickled)  # before this one's unpickling
            yield share, result
            reading += time.perf_counter() - last
            unpickled = READ[0]
        SPANS.append(last - started)
        _say(
            f"[{started - START:7.2f} s] {caller:>22}: workers {last - started:6.2f} s, "
            f"results read and merged {reading:5.2f} s, "
            f"{time.perf_counter() - last:5.2f} s of it after the last"
        )

    return timed


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "build":
        _say("usage: build_timeline.py build [ibistatic build options ...]")
        return 2
    forked.run_shares = _timed(forked.run_shares)
    forked.shares_as_done = _timed_as_done(forked.shares_as_done)
    forked._read = _counted(forked._read)
    try:
        code = ibistatic_main(argv)
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else 1
    wall = time.perf_counter() - START
    alone = wall - sum(SPANS)
    _say(
        f"[{wall:7.2f} s] end: {len(SPANS)} forked phases, {sum(SPANS):.2f} s; "
        f"the parent alone {alone:.2f} s ({100 * alone / wall:.0f}% of the wall time)"
    )
    return code or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
