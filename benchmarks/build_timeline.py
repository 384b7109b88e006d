"""When a build's cores are busy: its forked phases, and the parent's time alone.

    python benchmarks/build_timeline.py [ibistatic build options ...]

Runs ``ibistatic build`` (the checkout's, in this process) with the given options, and
prints one line per forked phase (``forked.each``) once the build has read its results:
when its workers started (seconds from the start), how long until the last chunk's
result arrived, and how long the parent took to merge the chunks' results, in all and
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


def _timed(each):
    """forked.each, reporting its phase once the last chunk's result is merged: the
    workers' span runs to that result's arrival (the others are merged meanwhile)."""

    def timed(work, count, doing):
        caller = sys._getframe(1).f_code.co_name
        started = last = time.perf_counter()
        merging = 0.0
        for number, result in each(work, count, doing):
            last = time.perf_counter()
            yield number, result
            merging += time.perf_counter() - last
        SPANS.append(last - started)
        _say(
            f"[{started - START:7.2f} s] {caller:>22}: workers {last - started:6.2f} s, "
            f"results merged {merging:5.2f} s, {time.perf_counter() - last:5.2f} s of it after the last"
        )

    return timed


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "build":
        _say("usage: build_timeline.py build [ibistatic build options ...]")
        return 2
    forked.each = _timed(forked.each)
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
