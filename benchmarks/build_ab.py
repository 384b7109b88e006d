"""Two (or more) checkouts of ibistatic building the same project, alternated.

On a shared machine one build of 100k items took 62 s and then 80 s within twenty
minutes, so one run of each tree tells nothing about a change of a few percent.  This
script builds the same synthetic project with each tree in turn, `--rounds` times,
reversing the order every other round (ABBA: a machine that slows down or speeds up
through the run favours neither tree), and prints every build's wall and CPU time, then
each tree's mean and median and each tree's paired differences with the first one.

    python benchmarks/build_ab.py TREE [TREE ...] [--items 100000] [--rounds 3]
                                  [--workdir /dev/shm/bb] [--host NAME] [--jobs N]

A TREE is a checkout (``git worktree add /tmp/base <commit>`` makes one of any commit);
each build runs ``python -m ibistatic build --full`` with that tree first on
``PYTHONPATH``, into a fresh output beside the project (removed before each build, not
timed).  CPU is the build's and its workers' user and system time (``wait4``).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_archive  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    trees = [Path(tree).resolve() for tree in args.trees]
    for tree in trees:
        if not (tree / "ibistatic" / "__init__.py").is_file():
            print(f"build_ab: {tree}: not an ibistatic checkout", file=sys.stderr)
            return 2
    project = make_archive.ensure_project(Path(args.workdir), args.items, args.seed)
    output = Path(args.workdir) / "site-ab"
    extra = [arg for host in args.host for arg in ("--host", host)]
    extra += ["--jobs", str(args.jobs)] if args.jobs else []
    print(f"{args.items:,} items, {args.rounds} rounds, trees: {', '.join(map(str, trees))}")
    runs: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    for number in range(args.rounds):
        order = trees if number % 2 == 0 else trees[::-1]
        for tree in order:
            wall, cpu = _build(tree, project / "ibistatic.yaml", output, extra)
            runs[tree].append((wall, cpu))
            load = os.getloadavg()[0]
            print(
                f"round {number + 1} {tree}: wall {wall:7.2f} s, CPU {cpu:7.1f} s (load {load:.1f})"
            )
    _summary(trees, runs)
    _remove(output)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", metavar="TREE", help="ibistatic checkouts to compare")
    parser.add_argument("--items", type=int, default=100_000, help="items in archive-a")
    parser.add_argument("--seed", type=int, default=0, help="the project's random seed")
    parser.add_argument("--rounds", type=int, default=3, help="builds of each tree (default 3)")
    parser.add_argument("--workdir", default="/dev/shm/bb", help="project and output folder")
    parser.add_argument("--host", action="append", default=[], help="passed to ibistatic build")
    parser.add_argument("--jobs", type=int, help="passed to ibistatic build")
    return parser


def _build(tree: Path, config: Path, output: Path, extra: list[str]) -> tuple[float, float]:
    """One full build by `tree` into a fresh `output`: (wall seconds, CPU seconds)."""
    _remove(output)
    command = [sys.executable, "-m", "ibistatic", "build", "--full", "--quiet"]
    command += ["--config", str(config), "--output", str(output), *extra]
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=tree, env=environment, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"build_ab: the build of {tree} failed (status {status})")
    return wall, usage.ru_utime + usage.ru_stime


def _summary(trees: list[Path], runs: dict[Path, list[tuple[float, float]]]) -> None:
    first = runs[trees[0]]
    for tree in trees:
        walls = [wall for wall, _ in runs[tree]]
        cpus = [cpu for _, cpu in runs[tree]]
        print(
            f"{tree}: wall mean {statistics.mean(walls):.2f} s, median "
            f"{statistics.median(walls):.2f} s (from {min(walls):.2f} to {max(walls):.2f}); "
            f"CPU mean {statistics.mean(cpus):.1f} s"
        )
        if tree != trees[0]:
            paired = [mine[0] - theirs[0] for mine, theirs in zip(runs[tree], first)]
            print(
                f"  against {trees[0]}, round by round: "
                + ", ".join(f"{difference:+.2f} s" for difference in paired)
            )


def _remove(output: Path) -> None:
    """The output, its generations and its cache (they sit beside it)."""
    for path in (output, output.parent / f".{output.name}.ibistatic"):
        shutil.rmtree(path, ignore_errors=True)
        if path.is_symlink():
            path.unlink()
    shutil.rmtree(output.parent / f".{output.name}.ibistatic-cache", ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
