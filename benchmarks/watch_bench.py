"""Time from a deposit's last write to its page being served by `ibistatic watch`.

    python benchmarks/watch_bench.py [--items 1000 100000] [--deposits 5] [--workdir DIR]

For each archive size: a synthetic project (benchmarks/make_archive.py), a full build,
then a Watcher (real file events) in this process; each deposit's repository appears in
one rename (ibistatic deposit), and the clock runs from that rename (the ctime it gave
the repository folder) to the moment the page is *served*: the later of the rename that
put the page into the generation being made (its ctime) and the rename that turned the
output link to that generation (the link's ctime).  Both are the kernel's file-system
timestamps, a few ms coarse.  A republish writes the changed pages first but publishes
its generation once, after the site-wide files: the page is served at the end of the
republish, not when it is written.  (Until 2026-11-23 the clock stopped at the page's
own ctime, which the generations store made the time it was written, not served: the
figures of 0.098 s at 100k were that.)  Also printed: when the page was written; when a
thread of this process noticed it through the output path; the time from ``deposit()``
returning (it fsyncs the parent folder after the rename); and the end of the republish.
Prints the median and the worst latency per size, and the ratio of the largest size to
the smallest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_archive import make_project  # noqa: E402

from ibistatic.config import load_config  # noqa: E402
from ibistatic.deposit import deposit  # noqa: E402
from ibistatic.site.build import build_site  # noqa: E402
from ibistatic.watch import Watcher  # noqa: E402

DEFAULT_WORKDIR = Path("/tmp/ibistatic-watch-bench")


def measure(items: int, deposits: int, workdir: Path) -> list[float]:
    project = workdir / f"watch-{items}"
    if not (project / "ibistatic.yaml").exists():
        make_project(project, items)
    config = load_config(project / "ibistatic.yaml")
    started = time.perf_counter()
    build_site(config, full=True)
    print(f"  {items:>7} items: full build {time.perf_counter() - started:.1f} s", flush=True)
    _wait_for_discards(config.output)
    watcher = Watcher(config, debounce=0.05, rescan=3600, log=lambda message: None)
    ready = threading.Event()
    failures: list[Exception] = []

    def watch() -> None:
        try:
            watcher.run(ready)
        except Exception as error:  # e.g. the inotify watch limit: say so, do not hang
            failures.append(error)
            ready.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    ready.wait(600)
    if failures:
        raise SystemExit(f"  {items:>7} items: watch failed: {failures[0]}")
    _wait_for_discards(config.output)  # the trees watch's first build set aside
    document = workdir / "deposit.txt"
    document.write_text("A deposited document.\n", encoding="utf-8")
    latencies: list[float] = []
    after_return: list[float] = []
    noticed: list[float] = []  # when this process's polling thread saw the page
    whole: list[float] = []  # to the end of the republish: site-wide files included
    written: list[float] = []  # to the page's rename into the generation being made
    try:
        for number in range(deposits):
            done = deposit(
                project / "archive-a", [document], host="mtc-m99.sid.inpe.br", granularity="0.01"
            )
            returned = time.time()
            # the deposit's last write is the rename that puts the repository in place (it
            # then fsyncs the parent folder before returning): the rename set the folder's ctime
            renamed = os.stat(project / "archive-a" / done.repository).st_ctime_ns / 1e9
            page = config.output / done.repository / "index.html"
            while not page.exists():
                time.sleep(0.002)
                if time.time() - returned > 300:
                    raise SystemExit(f"no page for {done.repository} after 300 s")
            noticed.append(time.time() - renamed)
            after_return.append(time.time() - returned)
            written.append(os.stat(page).st_ctime_ns / 1e9 - renamed)
            # served: the page is in the generation the output link points at, and the
            # link was turned (renamed over) when that generation was published
            turned = os.lstat(config.output).st_ctime_ns / 1e9
            latencies.append(max(turned, os.stat(page).st_ctime_ns / 1e9) - renamed)
            while not watcher.up_to_date():  # let the republish finish before the next deposit
                time.sleep(0.01)
            whole.append(time.time() - renamed)
    finally:
        watcher.stop()
        thread.join(30)
    print(
        f"  {items:>7} items: (noticed by a polling thread of this process: median {statistics.median(noticed):.3f} s, "
        f"worst {max(noticed):.3f} s; from deposit() returning: median {statistics.median(after_return):.3f} s)",
        flush=True,
    )
    print(
        f"  {items:>7} items: (to the end of the republish, site-wide files included: median "
        f"{statistics.median(whole):.2f} s)",
        flush=True,
    )
    print(
        f"  {items:>7} items: (page written into the generation being made, not yet served: "
        f"median {statistics.median(written):.3f} s)",
        flush=True,
    )
    return latencies


def _wait_for_discards(output: Path) -> None:
    """A full build swaps its tree in and deletes the previous one in the background: at
    100k items that is 700,000 files, minutes of disk work that would slow every deposit
    (and its fsyncs) measured meanwhile.  Measure the steady state: wait for it to end."""
    started = time.perf_counter()
    while _discarding(output):
        time.sleep(1)
    os.sync()
    if time.perf_counter() - started > 1:
        print(
            f"  (waited {time.perf_counter() - started:.0f} s for the previous site's deletion)",
            flush=True,
        )


def _discarding(output: Path) -> bool:
    """Whether trees of `output` are being deleted: set aside beside it (a plain folder
    replaced) or in its generations folder (``old...``, store.swap.clean_folder)."""
    beside = any(path.name.startswith(f".{output.name}.old") for path in output.parent.iterdir())
    generations = output.parent / f".{output.name}.ibistatic"
    inside = generations.is_dir() and any(
        path.name.startswith("old") for path in generations.iterdir()
    )
    return beside or inside


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[1000, 100000])
    parser.add_argument("--deposits", type=int, default=5)
    # one reused folder, not a new temporary one per run: at 100k items a project and its
    # site take about a million inodes, and runs that each left theirs filled this disk
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    args = parser.parse_args(argv)
    workdir = args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"working in {workdir} (projects reused; remove it when done)", flush=True)
    medians = {}
    for items in args.items:
        latencies = measure(items, args.deposits, workdir)
        medians[items] = statistics.median(latencies)
        print(
            f"  {items:>7} items: deposit -> page served: median {medians[items]:.3f} s, "
            f"worst {max(latencies):.3f} s over {len(latencies)} deposits (goal: under 0.1 s)",
            flush=True,
        )
    if len(medians) > 1:
        small, large = min(medians), max(medians)
        print(
            f"  ratio {large} / {small} items: {medians[large] / medians[small]:.2f}x (goal: under 2x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
