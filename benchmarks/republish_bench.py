"""How long a `watch` republish takes, whole, and how long each site-wide output takes.

    python benchmarks/republish_bench.py [--items 100000] [--host nginx] [--output DIR]
                                         [--workdir DIR] [--rounds 3]

Generates (or reuses) a project of ``make_archive.py`` in ``DIR/project-N-s0``, then,
in this process, does what ``ibistatic watch`` does with it: a ``Publisher`` that keeps
its state in memory (``persist = False``) builds the site whole into ``--output``
(default ``/dev/shm/republish-bench``: tmpfs, so the disk's noise stays out), then
republishes ``--rounds`` times after each kind of change, telling it the changed path as
the watcher would:

- ``doc``: a new file in an item's ``doc/`` folder (its file list changes);
- ``title``: the item's title edited in ``item.yaml`` (its pages, its search entry).

Each republish prints its wall time, what the build says it did, and the seconds spent
making each site-wide output (index, sitemaps, search...: the time inside each output's
``files()``, not the store's hashing and writing).  The item's files are put back when
the run ends.  ``--host`` names the host profiles (none: the portable output).  The
process's resident memory is printed after the initial build and at the end (what watch
holds between republishes: the state and what the outputs keep), with its peak.
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_archive import make_project  # noqa: E402

from ibistatic.config import load_config  # noqa: E402
from ibistatic.site import outputs  # noqa: E402
from ibistatic.site.build import Publisher  # noqa: E402

DEFAULT_WORKDIR = Path("/tmp/ibistatic-bench")
SPENT: dict[str, float] = {}  # output name -> seconds in its files() this republish


class Timed:
    """A site output whose files() is timed (the time between the files it yields)."""

    def __init__(self, output) -> None:
        self.output = output
        self.name, self.pages, self.remembered = output.name, output.pages, output.remembered

    def files(self, plan, context):
        started = time.perf_counter()
        for made in self.output.files(plan, context):
            SPENT[self.name] = SPENT.get(self.name, 0.0) + time.perf_counter() - started
            yield made
            started = time.perf_counter()
        SPENT[self.name] = SPENT.get(self.name, 0.0) + time.perf_counter() - started


def _an_item(archive: Path) -> Path:
    """A repository whose item has a target and a title: a change to it is published."""
    for root, folders, files in os.walk(archive):
        if "item.yaml" in files and "doc" in folders:
            text = Path(root, "item.yaml").read_text(encoding="utf-8")
            if "Original" in text and "target" in text and "dublin-core" in text:
                return Path(root)
    raise SystemExit(f"no item with a target and a title under {archive}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100000)
    parser.add_argument("--host", nargs="*", default=[])
    parser.add_argument("--output", type=Path, default=Path("/dev/shm/republish-bench"))
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    project = args.workdir / f"project-{args.items}-s0"
    if not (project / "ibistatic.yaml").exists():
        make_project(project, args.items)
    config = load_config(project / "ibistatic.yaml", output=args.output)
    config = replace(config, hosts=tuple(args.host), cache=args.output.parent / "republish-cache")
    outputs.SITE_OUTPUTS = tuple(Timed(output) for output in outputs.SITE_OUTPUTS)
    publisher = Publisher(config)
    publisher.persist = False  # as watch: the state, and what outputs keep, stay in memory
    started = time.perf_counter()
    report = publisher.build(full=True)
    print(f"{args.items} items, hosts {list(args.host) or 'none (portable)'}", flush=True)
    print(
        f"  initial build: {report.mode}, {time.perf_counter() - started:.1f} s; "
        f"{_resident():,.0f} MiB resident after it",
        flush=True,
    )
    item = _an_item(config.archives[0])
    descriptor = item / "item.yaml"
    original = descriptor.read_bytes()
    atexit.register(_put_back, item, descriptor, original)
    for kind in ("doc", "title"):
        for number in range(args.rounds):
            changed = _change(kind, number, item, descriptor, original)
            SPENT.clear()
            started = time.perf_counter()
            report = publisher.build(changed_paths={str(changed)})
            spent = ", ".join(f"{name} {s:.2f}" for name, s in SPENT.items() if s >= 0.005)
            print(
                f"  {kind:<5} republish: {time.perf_counter() - started:.2f} s "
                f"({report.mode}, {report.written} written; {spent})",
                flush=True,
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  memory of this process: {_resident():,.0f} MiB now, {peak:,.0f} MiB at its peak")
    return 0


def _resident() -> float:
    """This process's resident memory now, in MiB (Linux: /proc/self/statm)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _change(kind: str, number: int, item: Path, descriptor: Path, original: bytes) -> Path:
    if kind == "doc":
        (item / "doc" / f"bench-{time.time_ns()}.txt").write_text("x", encoding="utf-8")
        return item / "doc"
    data = yaml.safe_load(original)
    data["dublin-core"]["title"] = f"A new title {number} zebra{number}"
    descriptor.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return descriptor


def _put_back(item: Path, descriptor: Path, original: bytes) -> None:
    descriptor.write_bytes(original)
    for path in (item / "doc").glob("bench-*.txt"):
        path.unlink()


if __name__ == "__main__":
    sys.exit(main())
