"""Resolver speed over a large JSON index: cold command line, warm API, HTTP server.

    python benchmarks/resolver_bench.py [--keys 1000000] [--workdir DIR] [--urls N] [--runs 20]
                                        [--profile] [--no-serve] [--reuse-index]

The index: ``DIR/resolver-index-K-sS`` holds about K IBI keys; it is built unless one
built by the same sources is there.  Writing that many items to disk and crawling them
would take longer than the benchmark, so the items are planned by ``make_archive.py``
(same mix: translations, editions, metadata items, deleted items, 5% copies in a second
Archive), turned into the mappings ``item.yaml`` would parse to, validated by
``read_item`` exactly as a crawl does, checked by ``check_storage_model`` and written by
``write_index``.  Then:

(1) cold: median wall time of ``ibistatic resolve URL --index DIR`` (a subprocess,
    random URLs) beside that of ``python -c pass``, and the ratio;
(2) warm: one :class:`~ibistatic.resolver.Resolver`, N random persistent URLs (bare,
    ``!`` and ``:(oai_dc)`` in equal shares) resolved twice: the first pass loads
    shards on demand, the second finds everything loaded.  ``--profile`` adds a third
    pass under cProfile and prints its top 10 functions by own and cumulative time;
(2b) URLs the build does not precompute (``+`` with Accept-Language), all distinct,
    through the resolution process;
(3) when ``ibistatic serve`` exists: the server on a free loopback port over the index,
    ``wrk -t2 -c32 -d10s`` with a Lua script that requests random persistent URLs from
    a list; requests/s and the share of 302/303.  Twice: on the fresh server (shards
    loaded on demand), then after one request per shard has loaded them all.

Figures are printed, never asserted: see benchmarks/README.md for a run and the goals.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import http.client
import importlib.util
import json
import os
import pstats
import random
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

__all__ = ["build_index", "ensure_index", "index_dir", "sample_urls", "source_fingerprint", "main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# make_archive.py sits beside this script; the package measured is the checkout this
# script sits in, whatever tree an editable install points at.
sys.path[:0] = [str(HERE), str(ROOT)]

import make_archive  # noqa: E402
import yaml  # noqa: E402

import ibistatic  # noqa: E402
from ibistatic.archive.crawl import CrawlResult  # noqa: E402
from ibistatic.archive.descriptors import read_archive_info, read_item  # noqa: E402
from ibistatic.archive.load import LoadedArchives  # noqa: E402
from ibistatic.core.model import ArchiveInfo, Item  # noqa: E402
from ibistatic.core.storage import check_storage_model  # noqa: E402
from ibistatic.index.writer import write_index  # noqa: E402
from ibistatic.resolver import Resolver  # noqa: E402

DEFAULT_WORKDIR = Path("/tmp/ibistatic-bench")
MODIFIERS = ("", "!", ":(oai_dc)")
ACCEPT_LANGUAGE = "pt-BR,pt;q=0.8,en;q=0.5"
PROCESS_URLS = 20_000  # URLs of the resolution-process pass (2b)
IBIS_FILE = "ibis.txt"  # every IBI text of the index, one a line, beside manifest.json
BUILD_FILE = "bench-build.json"  # how and from which sources it was built; written last
# What decides the index's bytes here (crawl.py does not: the items are built in memory).
INDEX_SOURCES = (
    "core/*.py",
    "index/*.py",
    "site/*.py",
    "archive/descriptors.py",
    "archive/load.py",
)
SAMPLE_ITEMS = 20_000  # planned once to learn how many keys an item gives on average
WRK_SECONDS = 10
SERVER_START_TIMEOUT = 60.0


# ------------------------------------------------------------------ building the index


def _raw_descriptor(item, state: str) -> dict:
    """The mapping make_archive's item.yaml parses to (see its ``_descriptor``)."""
    raw: dict = {"state": state, "timestamp": item.timestamp}
    optional = {
        "ibip": item.ibip,
        "content-type": "Metadata" if item.kind == "metadata" else None,
        "target": item.target,
        "formats": {"oai_dc": "oai_dc.xml"} if item.kind == "metadata" else None,
        "language": item.language,
        "translations": dict(sorted(item.translations.items())) or None,
        "next-edition": item.next_edition,
        "metadata": item.metadata,
        "dublin-core": item.dublin_core or None,
    }
    raw.update({key: value for key, value in optional.items() if value is not None})
    return raw


def _archive_infos() -> list[ArchiveInfo]:
    infos = []
    for number, name in enumerate(make_archive.ARCHIVES):
        raw = yaml.safe_load(make_archive._archive_yaml(name[-1], number))
        info, problems = read_archive_info(name, raw)
        if info is None:
            raise RuntimeError(f"{name}: {problems}")
        infos.append(info)
    return infos


def _validated(archive: str, planned, state: str) -> Item:
    files = tuple(sorted(make_archive._files(planned)))
    item, problems = read_item(
        archive, planned.repository, _raw_descriptor(planned, state), files, planned.timestamp
    )
    if item is None:
        raise RuntimeError(f"{planned.repository}: {[str(p) for p in problems]}")
    return item


def _items_for(keys: int, seed: int) -> int:
    planned, _ = make_archive._plan(SAMPLE_ITEMS, seed)
    per_item = sum(1 + bool(item.ibip) for item in planned) / len(planned)
    return max(1, round(keys / per_item))


def build_index(directory: Path, keys: int, seed: int = 0) -> dict:
    """Write an index of about `keys` keys into `directory`; returns timings and counts."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    planned, copies = make_archive._plan(_items_for(keys, seed), seed)
    timings["plan"] = time.perf_counter() - started
    started = time.perf_counter()
    archive_a, archive_b = make_archive.ARCHIVES
    items = [_validated(archive_a, item, item.state) for item in planned]
    items += [_validated(archive_b, item, "Copy") for item in copies]
    timings["items"] = time.perf_counter() - started
    started = time.perf_counter()
    holdings, problems = check_storage_model(_archive_infos(), items)
    loaded = LoadedArchives(CrawlResult([]), holdings, problems, make_archive.SITE_URL)
    timings["storage checks"] = time.perf_counter() - started
    started = time.perf_counter()
    manifest = write_index(loaded, directory)
    timings["write_index"] = time.perf_counter() - started
    texts = [
        name
        for item in items[: len(planned)]
        for name in (item.repository.text, item.ibip and item.ibip.text)
        if name
    ]
    (directory / IBIS_FILE).write_text("\n".join(texts) + "\n", encoding="utf-8")
    return {
        "timings": timings,
        "items": len(items),
        "counts": manifest["counts"],
        "problems": len(problems),
    }


def source_fingerprint() -> str:
    """A digest of the package sources that decide what an index holds: an index built
    by other code is rebuilt rather than measured."""
    digest = hashlib.sha256()
    package = ROOT / "ibistatic"
    for pattern in INDEX_SOURCES:
        for path in sorted(package.glob(pattern)):
            digest.update(f"{path.relative_to(package)}\0".encode() + path.read_bytes() + b"\0")
    digest.update((HERE / "make_archive.py").read_bytes())
    return digest.hexdigest()[:16]


def _built_with(directory: Path) -> str | None:
    try:
        return json.loads((directory / BUILD_FILE).read_text())["fingerprint"]
    except (OSError, ValueError, KeyError):
        return None  # not built, interrupted, or by an older version of this script


def index_dir(workdir: Path, keys: int, seed: int) -> Path:
    return workdir / f"resolver-index-{keys}-s{seed}"


def ensure_index(workdir: Path, keys: int, seed: int, reuse_any: bool = False) -> Path:
    """The index of about `keys` keys, built unless one built by the same sources (or,
    with `reuse_any`, any complete one) is already there."""
    directory = index_dir(workdir, keys, seed)
    fingerprint = source_fingerprint()
    built_with = _built_with(directory)
    if built_with is not None and (built_with == fingerprint or reuse_any):
        print(f"reusing {directory} (built by sources {built_with}; now {fingerprint})")
        return directory
    if built_with is not None:
        print(f"rebuilding {directory}: ibistatic's sources changed since it was built")
    building = directory.with_name(directory.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    print(f"building an index of about {keys:,} keys in {directory} ...", flush=True)
    built = build_index(building, keys, seed)
    (building / BUILD_FILE).write_text(json.dumps({"fingerprint": fingerprint, **built}))  # last
    shutil.rmtree(directory, ignore_errors=True)
    os.replace(building, directory)
    steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in built["timings"].items())
    counts = built["counts"]
    print(
        f"built: {built['items']:,} items, {counts['keys']:,} keys, {counts['shards']:,} shards, "
        f"{built['problems']} problems; {steps}; peak RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB"
    )
    return directory


def sample_urls(index: Path, count: int, seed: int) -> list[str]:
    """`count` random persistent URLs over the index's IBIs, modifiers in equal shares."""
    ibis = (index / IBIS_FILE).read_text(encoding="utf-8").split()
    rng = random.Random(seed)
    return [make_archive.SITE_URL + rng.choice(ibis) + rng.choice(MODIFIERS) for _ in range(count)]


# ------------------------------------------------------------------ cold command line


def _child_env() -> dict[str, str]:
    """The environment of subprocesses: they too import the package from this checkout."""
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _ibistatic_command() -> list[str]:
    # The console script beside this interpreter, not a PATH shim (pyenv's costs ~50 ms).
    script = Path(sys.executable).parent / "ibistatic"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "ibistatic"]


def _wall(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env()
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1 is an alert (a Deleted item): still resolved
        raise RuntimeError(f"{command}: exit {done.returncode}: {done.stderr.strip()}")
    return seconds


def bench_cold(index: Path, urls: list[str], runs: int) -> None:
    resolve = _ibistatic_command()
    parser_only = [sys.executable, "-c", "from ibistatic.cli import build_parser; build_parser()"]
    times: dict[str, list[float]] = {"resolve": [], "pass": [], "parser": []}
    for url in urls[:runs]:  # interleaved, so load from other users hits all three alike
        times["resolve"].append(_wall(resolve + ["resolve", url, "--index", str(index)]))
        times["pass"].append(_wall([sys.executable, "-c", "pass"]))
        times["parser"].append(_wall(parser_only))
    median = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"(1) cold `{Path(resolve[0]).name} resolve URL --index DIR`, median of {runs}: "
        f"{median['resolve'] * 1000:.0f} ms; `python -c pass`: {median['pass'] * 1000:.0f} ms; "
        f"ratio {median['resolve'] / median['pass']:.1f}x (goal: under 3x)"
    )
    print(
        f"    of which importing ibistatic.cli and building its parser: "
        f"{(median['parser'] - median['pass']) * 1000:.0f} ms "
        f"(python -c 'build_parser()' median {median['parser'] * 1000:.0f} ms)"
    )


# ------------------------------------------------------------------ warm API


def _pass(
    resolver: Resolver, urls: list[str], accept_language: str | None = None
) -> tuple[float, Counter]:
    outcomes: Counter = Counter()
    started = time.perf_counter()
    for url in urls:
        result = resolver.resolve(url, accept_language)
        outcomes[result.alert or "url"] += 1
    return time.perf_counter() - started, outcomes


def bench_warm(index: Path, urls: list[str], profile: bool) -> None:
    started = time.perf_counter()
    resolver = Resolver(index)
    opened = time.perf_counter() - started
    first, outcomes = _pass(resolver, urls)
    second, _ = _pass(resolver, urls)
    shards = len(getattr(resolver.index, "_shards", ()))  # private: a count for the report only
    print(
        f"(2) warm API, {len(urls):,} random URLs ({', '.join(repr(m) for m in MODIFIERS)} in equal shares), "
        f"Resolver opened in {opened * 1000:.0f} ms:"
    )
    print(
        f"    first pass (shards loaded on demand, {shards:,} loaded): {len(urls) / first:,.0f} resolutions/s"
    )
    print(
        f"    second pass (all loaded):                    {len(urls) / second:,.0f} resolutions/s"
        " (goal: 50,000/s or more)"
    )
    print(
        f"    outcomes: {', '.join(f'{name} {count:,}' for name, count in outcomes.most_common())}; "
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB"
    )
    if profile:
        profiler = cProfile.Profile()
        profiled, _ = profiler.runcall(_pass, resolver, urls)
        print(f"    a third pass under cProfile: {len(urls) / profiled:,.0f} resolutions/s")
        for order in ("tottime", "cumulative"):
            print(f"    cProfile of the third pass, top 10 by {order}:")
            pstats.Stats(profiler, stream=sys.stdout).sort_stats(order).print_stats(10)


def bench_process(index: Path, count: int, seed: int, profile: bool) -> None:
    """URLs the build does not precompute (``+`` chosen by Accept-Language) go through
    the resolution process; every URL distinct, so no answer is remembered."""
    ibis = (index / IBIS_FILE).read_text(encoding="utf-8").split()
    chosen = random.Random(seed).sample(ibis, min(len(ibis), 3 * count))
    urls = [make_archive.SITE_URL + ibi + "+" for ibi in chosen]
    loading, measured, profiled = urls[:count], urls[count : 2 * count], urls[2 * count :]
    resolver = Resolver(index)
    first, _ = _pass(resolver, loading, ACCEPT_LANGUAGE)
    second, outcomes = _pass(resolver, measured, ACCEPT_LANGUAGE)
    print(
        f"(2b) resolution process ('+' with Accept-Language {ACCEPT_LANGUAGE!r}, not precomputed), "
        f"{len(measured):,} distinct URLs: {len(loading) / first:,.0f}/s while loading record shards, "
        f"{len(measured) / second:,.0f}/s after"
    )
    print(
        f"    outcomes: {', '.join(f'{name} {count:,}' for name, count in outcomes.most_common())}"
    )
    if profile and profiled:
        profiler = cProfile.Profile()
        profiler.runcall(_pass, resolver, profiled, ACCEPT_LANGUAGE)
        print(f"    cProfile of {len(profiled):,} more such URLs, top 10 by tottime:")
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(10)


# ------------------------------------------------------------------ HTTP server under wrk

#: what every wrk script here ends with: status codes counted per thread (in the global
#: `counts`: thread:get reads globals only), printed as "status N COUNT" lines at the end
WRK_COUNTING = r"""
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("counts")) do
      total[status] = (total[status] or 0) + count
    end
  end
  for status, count in pairs(total) do io.write(string.format("status %d %d\n", status, count)) end
end
"""
WRK_SCRIPT = (
    r"""
-- Random persistent URLs from the file named after "--"; status codes counted per thread
-- in the global `counts` (thread:get reads globals only).
local paths, threads, next_id = {}, {}, 0
counts = {}

function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  math.randomseed(7919 * id)
end

function request()
  return wrk.format("GET", paths[math.random(#paths)])
end

"""
    + WRK_COUNTING
)


def _serve_available() -> bool:
    return importlib.util.find_spec("ibistatic.commands.serve") is not None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"ibistatic serve exited with {server.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(
        f"ibistatic serve did not listen on port {port} within {SERVER_START_TIMEOUT:.0f} s"
    )


def _wrk(port: int, script: Path, paths: Path) -> tuple[float, Counter, str]:
    command = [
        "wrk",
        "-t2",
        "-c32",
        f"-d{WRK_SECONDS}s",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}/",
        "--",
        str(paths),
    ]
    output = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True
    ).stdout
    rate = re.search(r"Requests/sec:\s*([\d.]+)", output)
    statuses = Counter(
        {int(s): int(n) for s, n in re.findall(r"^status (\d+) (\d+)$", output, re.M)}
    )
    return (float(rate.group(1)) if rate else 0.0), statuses, output


def _one_path_per_shard(index: Path, paths: list[str]) -> list[str]:
    try:
        from ibistatic.index.sharding import shard_name
    except ImportError:  # older trees kept it in records.py
        from ibistatic.index.records import shard_name
    from ibistatic.core.identifiers import ibi_key

    digits = json.loads((index / "manifest.json").read_text(encoding="utf-8"))["shard-digits"]
    first: dict[str, str] = {}
    for path in paths:
        ibi = path.lstrip("/")
        for modifier in MODIFIERS:
            if modifier and ibi.endswith(modifier):
                ibi = ibi[: -len(modifier)]
        first.setdefault(shard_name(ibi_key(ibi), digits), path)
    return list(first.values())


def _warm_up(port: int, index: Path, paths: list[str]) -> tuple[int, float]:
    """Ask the server once for a URL of every shard the list reaches, so that the
    measured run finds them loaded (10 s of wrk reach only part of 4,096 shards)."""
    started = time.perf_counter()
    chosen = _one_path_per_shard(index, paths)
    ask_each(port, chosen)
    return len(chosen), time.perf_counter() - started


def ask_each(port: int, paths: list[str]) -> None:
    """GET each path once, on a connection of its own (so a forked server's workers
    share them as the kernel spreads connections)."""
    for path in paths:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            connection.request("GET", path)
            connection.getresponse().read()
        finally:
            connection.close()


def bench_serve(index: Path, urls: list[str], workdir: Path) -> None:
    if not _serve_available():
        print("(3) `ibistatic serve` does not exist yet: HTTP benchmark skipped")
        return
    if shutil.which("wrk") is None:
        print("(3) wrk is not installed (Debian package wrk): HTTP benchmark skipped")
        return
    base = len(make_archive.SITE_URL) - 1  # keep the "/" that starts the path
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        paths, script, log = (
            Path(scratch, "paths.txt"),
            Path(scratch, "random.lua"),
            Path(scratch, "serve.log"),
        )
        paths.write_text("".join(url[base:] + "\n" for url in urls), encoding="utf-8")
        script.write_text(WRK_SCRIPT, encoding="utf-8")
        port = _free_port()
        command = _ibistatic_command() + [
            "serve",
            "--index",
            str(index),
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        with open(log, "w") as handle:
            server = subprocess.Popen(
                command, stdout=handle, stderr=subprocess.STDOUT, env=_child_env()
            )
        try:
            _wait_for(port, server)
            for run in ("first run (shards loaded on demand)", "second run (warm)"):
                if run.startswith("second"):
                    requested, seconds = _warm_up(port, index, [url[base:] for url in urls])
                    print(
                        f"    warm-up: one request per shard, {requested:,} requests in {seconds:.1f} s"
                    )
                rate, statuses, output = _wrk(port, script, paths)
                total = sum(statuses.values())
                redirects = statuses[302] + statuses[303]
                shown = ", ".join(
                    f"{status}: {count:,}" for status, count in sorted(statuses.items())
                )
                print(
                    f"(3) serve + wrk -t2 -c32 -d{WRK_SECONDS}s, {run}: {rate:,.0f} requests/s "
                    f"(goal: 3,000/s or more); 302/303 {redirects / total:.1%} of {total:,} ({shown})"
                    if total
                    else f"(3) serve + wrk, {run}: no answers counted:\n{output}"
                )
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        if server.returncode not in (0, -15):
            print(
                f"    ibistatic serve ended with {server.returncode}; its log:\n{log.read_text()[-2000:]}"
            )


# ------------------------------------------------------------------ command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="resolver_bench.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--keys",
        type=int,
        default=1_000_000,
        metavar="K",
        help="about how many IBI keys the index holds (default 1000000)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        metavar="DIR",
        help=f"where the index goes (default {DEFAULT_WORKDIR})",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the items and URLs (default 0)"
    )
    parser.add_argument(
        "--urls",
        type=int,
        default=100_000,
        metavar="N",
        help="random URLs of the warm passes and of wrk's list (default 100000)",
    )
    parser.add_argument(
        "--runs", type=int, default=20, metavar="R", help="cold subprocess runs (default 20)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="add a warm pass under cProfile and print its top 10 functions",
    )
    parser.add_argument("--no-serve", action="store_true", help="skip the HTTP benchmark")
    parser.add_argument(
        "--reuse-index",
        action="store_true",
        help="reuse a complete index even if ibistatic's sources changed since it was built",
    )
    # Internal: the index is built in a child process so that its memory does not
    # count in the warm pass's peak RSS.
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.build_only:
        ensure_index(args.workdir, args.keys, args.seed, args.reuse_index)
        return 0
    subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--build-only",
            "--keys",
            str(args.keys),
            "--seed",
            str(args.seed),
            "--workdir",
            str(args.workdir),
        ]
        + (["--reuse-index"] if args.reuse_index else []),
        check=True,
    )
    index = index_dir(args.workdir, args.keys, args.seed)  # what the child built or reused
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}, ibistatic from {Path(ibistatic.__file__).parent}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    urls = sample_urls(index, max(args.urls, args.runs), args.seed + 1)
    bench_cold(index, urls, args.runs)
    bench_warm(index, urls[: args.urls], args.profile)
    bench_process(index, min(PROCESS_URLS, args.urls), args.seed + 2, args.profile)
    if not args.no_serve:
        bench_serve(index, urls[: args.urls], args.workdir)
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (other users share the machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
