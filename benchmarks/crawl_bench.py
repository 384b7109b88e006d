"""Crawl, property-list and index-write speed over a synthetic project.

    python benchmarks/crawl_bench.py --items 100000 [--workdir DIR] [--seed S] [--profile PHASE]

Generates (or reuses) a project of ``make_archive.py`` in ``DIR/project-N-sS``, then
runs each phase in a child process of its own and prints what it measured:

- ``crawl-cold``: ``load_archives`` with no ``CrawlCache`` (every item.yaml parsed);
- ``crawl-fill``: the same with an empty ``CrawlCache``, then the cache saved to disk
  (what a first ``ibistatic build`` does);
- ``crawl-warm``: the saved cache loaded, then ``load_archives`` with it (a rebuild with
  nothing changed: every descriptor a cache hit, the tree still walked and stat'ed);
- ``properties``: ``property_list(view, key)`` for every IBI key of every Archive;
- ``index``: ``write_index`` into ``DIR/index-crawl-N-sS``.

Peak memory is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the phase's child
process at its end: the whole process, so the properties and index phases include the
(warm) load they need first.  "Cold" means no descriptor cache, not a cold disk: the
tree is read once before the phases (timed and printed) so that every phase finds it
in the operating system's page cache; dropping that cache needs root and would disturb
other users.

Figures are printed, never asserted: see benchmarks/README.md for a run and the goals.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["PHASES", "main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# make_archive.py sits beside this script; the package measured is the checkout this
# script sits in, whatever tree an editable install points at.
sys.path[:0] = [str(HERE), str(ROOT)]

import make_archive  # noqa: E402

import ibistatic  # noqa: E402
from ibistatic.archive.crawl import CrawlCache  # noqa: E402
from ibistatic.archive.load import LoadedArchives, load_archives  # noqa: E402
from ibistatic.config import load_config  # noqa: E402
from ibistatic.core.properties import property_list  # noqa: E402
from ibistatic.core.storage import check_storage_model  # noqa: E402
from ibistatic.index.writer import write_index  # noqa: E402

PHASES = ("crawl-cold", "crawl-fill", "crawl-warm", "properties", "index")
DEFAULT_WORKDIR = Path("/tmp/ibistatic-bench")


# ------------------------------------------------------------------ the project


def _cache_path(workdir: Path, project: Path) -> Path:
    return workdir / f"{project.name}.crawl-cache.pickle"


def _index_path(workdir: Path, project: Path) -> Path:
    return workdir / f"index-crawl-{project.name.removeprefix('project-')}"


# ------------------------------------------------------------------ phases (child side)


def _load(project: Path, cache: CrawlCache | None) -> tuple[LoadedArchives, float]:
    config = load_config(project / "ibistatic.yaml")
    started = time.perf_counter()
    loaded = load_archives(config.archives, config.site_url, cache=cache)
    return loaded, time.perf_counter() - started


def _item_count(loaded: LoadedArchives) -> int:
    return sum(len(archive.items) for archive in loaded.crawl.archives)


def _crawl_figures(loaded: LoadedArchives, seconds: float) -> dict:
    items = _item_count(loaded)
    started = time.perf_counter()
    check_storage_model(loaded.infos, loaded.crawl.items())  # its share of the load
    checks = time.perf_counter() - started
    return {
        "items": items,
        "seconds": seconds,
        "items_per_s": items / seconds,
        "storage_checks_s": checks,
        "problems": len(loaded.problems),
    }


def _phase_crawl_cold(project: Path, cache_path: Path, index_path: Path) -> dict:
    loaded, seconds = _load(project, None)
    return _crawl_figures(loaded, seconds)


def _phase_crawl_fill(project: Path, cache_path: Path, index_path: Path) -> dict:
    cache_path.unlink(missing_ok=True)
    cache = CrawlCache(cache_path)
    loaded, seconds = _load(project, cache)
    started = time.perf_counter()
    cache.save()
    figures = _crawl_figures(loaded, seconds)
    figures |= {
        "save_s": time.perf_counter() - started,
        "cache_bytes": cache_path.stat().st_size,
        "misses": cache.misses,
    }
    return figures


def _phase_crawl_warm(project: Path, cache_path: Path, index_path: Path) -> dict:
    started = time.perf_counter()
    cache = CrawlCache(cache_path)
    opened = time.perf_counter() - started
    loaded, seconds = _load(project, cache)
    figures = _crawl_figures(loaded, seconds)
    figures |= {
        "cache_load_s": opened,
        "hits": cache.hits,
        "misses": cache.misses,
        "items_per_s_with_cache_load": figures["items"] / (seconds + opened),
    }
    return figures


def _phase_properties(project: Path, cache_path: Path, index_path: Path) -> dict:
    loaded, _ = _load(project, CrawlCache(cache_path))
    lists = pairs = 0
    started = time.perf_counter()
    for view in loaded.views():
        for key in view.items:
            pairs += len(property_list(view, key))
            lists += 1
    seconds = time.perf_counter() - started
    return {
        "lists": lists,
        "pairs": pairs,
        "seconds": seconds,
        "lists_per_s": lists / seconds,
        "relations": {view.info.name: len(view.relations()) for view in loaded.views()},
    }


def _phase_index(project: Path, cache_path: Path, index_path: Path) -> dict:
    loaded, _ = _load(project, CrawlCache(cache_path))
    if index_path.exists():
        shutil.rmtree(index_path)
    started = time.perf_counter()
    manifest = write_index(loaded, index_path)
    seconds = time.perf_counter() - started
    size = sum(path.stat().st_size for path in index_path.rglob("*.json"))
    return {
        "seconds": seconds,
        "keys": manifest["counts"]["keys"],
        "shards": manifest["counts"]["shards"],
        "bytes": size,
    }


_PHASE_FUNCTIONS = {
    "crawl-cold": _phase_crawl_cold,
    "crawl-fill": _phase_crawl_fill,
    "crawl-warm": _phase_crawl_warm,
    "properties": _phase_properties,
    "index": _phase_index,
}


def _run_phase(phase: str, project: Path, workdir: Path, profile: bool) -> int:
    """Child side: run one phase and print its figures as one JSON line on stdout."""
    function = _PHASE_FUNCTIONS[phase]
    arguments = (project, _cache_path(workdir, project), _index_path(workdir, project))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if profile:
        profiler = cProfile.Profile()
        figures = profiler.runcall(function, *arguments)
        # The profile goes to stderr so stdout stays one JSON line.
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(10)
    else:
        figures = function(*arguments)
    figures["baseline_rss_kib"] = baseline
    figures["peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(figures))
    return 0


# ------------------------------------------------------------------ parent side


def _child(phase: str, project: Path, workdir: Path, profile: bool) -> dict:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--phase",
        phase,
        "--project",
        str(project),
        "--workdir",
        str(workdir),
    ]
    if profile:
        command.append("--profile-this")
    print(f"  running {phase} ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mib(kib: int) -> str:
    return f"{kib / 1024:,.0f} MiB"


def _report(figures: dict[str, dict]) -> None:
    cold, fill, warm = figures["crawl-cold"], figures["crawl-fill"], figures["crawl-warm"]
    props, index = figures["properties"], figures["index"]
    print(
        f"crawl cold (no cache):         {cold['items']:,} items in {cold['seconds']:.2f} s = "
        f"{cold['items_per_s']:,.0f} items/s  (storage checks {cold['storage_checks_s']:.2f} s of it; "
        f"{cold['problems']} problems)"
    )
    print(
        f"crawl filling a CrawlCache:    {fill['seconds']:.2f} s = {fill['items_per_s']:,.0f} items/s; "
        f"save {fill['save_s']:.2f} s, {fill['cache_bytes'] / 2**20:,.1f} MiB"
    )
    print(
        f"crawl warm (cache from above): {warm['seconds']:.2f} s = {warm['items_per_s']:,.0f} items/s "
        f"(+ {warm['cache_load_s']:.2f} s to load the cache: {warm['items_per_s_with_cache_load']:,.0f} items/s); "
        f"hits {warm['hits']:,}, misses {warm['misses']:,}"
    )
    print(
        f"  warm / cold speed-up:        {cold['seconds'] / warm['seconds']:.1f}x "
        f"({cold['seconds'] / (warm['seconds'] + warm['cache_load_s']):.1f}x counting the cache load)"
    )
    relations = ", ".join(f"{name} {count}" for name, count in props["relations"].items())
    print(
        f"property lists:                {props['lists']:,} lists ({props['pairs']:,} pairs) in "
        f"{props['seconds']:.2f} s = {props['lists_per_s']:,.0f} lists/s  (relations per Archive: {relations})"
    )
    print(
        f"JSON index write:              {index['keys']:,} keys, {index['shards']:,} shards, "
        f"{index['bytes'] / 2**20:,.1f} MiB in {index['seconds']:.2f} s"
    )
    print("peak memory (ru_maxrss of each phase's child process; after imports in brackets):")
    for phase in PHASES:
        print(
            f"  {phase:<12} {_mib(figures[phase]['peak_rss_kib']):>10}  "
            f"[{_mib(figures[phase]['baseline_rss_kib'])}]"
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crawl_bench.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--items",
        type=int,
        default=100_000,
        metavar="N",
        help="items in archive-a of the synthetic project (default 100000)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        metavar="DIR",
        help=f"where projects, caches and indexes go (default {DEFAULT_WORKDIR})",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the project (default 0)"
    )
    parser.add_argument(
        "--profile",
        choices=PHASES,
        metavar="PHASE",
        help="print the top 10 functions of PHASE by own time (cProfile; slows it)",
    )
    # Internal: how the parent runs one phase in a child process.
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    parser.add_argument("--project", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--profile-this", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.phase:
        return _run_phase(args.phase, args.project, args.workdir, args.profile_this)
    args.workdir.mkdir(parents=True, exist_ok=True)
    project = make_archive.ensure_project(args.workdir, args.items, args.seed)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, ibistatic from {Path(ibistatic.__file__).parent}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    files, seconds = make_archive.read_tree(project)
    print(
        f"reading the tree once beforehand (page cache state unknown): {files:,} files in {seconds:.1f} s"
    )
    figures = {
        phase: _child(phase, project, args.workdir, phase == args.profile) for phase in PHASES
    }
    _report(figures)
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (other users share the machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
