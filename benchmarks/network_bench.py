"""The live resolver under wrk: N Archives on loopback, some of them hung, uncached and cached.

Each honest Archive is a real ``ibistatic serve --join`` process over its own built site;
each hung one is a loopback server that accepts connections and never answers (it joins
first, so it ranks first: the worst place for it); the resolver is a real ``ibistatic
resolver`` process.  A resolution of an IBI whose holder the resolver knows asks that
Archive alone and acknowledges the one that gave the URL; a cached one asks no one and is
acknowledged too.  For each mode it runs wrk twice: a throughput run (``-c32``) and a
latency run at a lighter load (``-c4``), and checks that the Archives counted one
acknowledgment per redirect.  Prints one line per run: redirects/s and wrk's p50/p99.

    python benchmarks/network_bench.py [--archives 2 5 20] [--hung 1] [--items 200]
                                       [--seconds 10] [--workdir DIR] [--profile]
                                       [--release DIR]

Anchors (arklet, nginx ``map``) and every figure: benchmarks/README.md.  Goals: 500
resolutions/s uncached with 5 Archives, 5,000/s cached; with one of 5 Archives hung, p99
under 50 ms.  ``--profile`` runs the resolver under cProfile during the uncached run and
prints where its time goes.  ``--release DIR`` (a checkout of the release, 98d7e1f) runs
the release's own network_bench.py with the same --archives, --items and --seconds before
and after this version's runs, and prints this version's rates over the release's mean:
on a shared machine only figures of one run compare.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from resolver_bench import WRK_SCRIPT  # noqa: E402  (random paths, statuses counted)

import hostile_peers  # noqa: E402
from archive_factory import write_archive, write_item  # noqa: E402
from federation_helpers import (  # noqa: E402
    SERVICE,
    Process,
    build_site,
    start_archive,
    write_keys,
)


def _service(number: int) -> str:
    return f"bench.example.org/service{number}/2020/01.01.00.00"


def _repository(archive: int, item: int) -> str:
    return f"bench.example.org/a{archive}/2020/01.01.{item // 60:02d}.{item % 60:02d}"


def make_network_sites(workdir: Path, archives: int, items: int) -> tuple[list[Path], list[str]]:
    """`archives` sites of `items` items each, and the persistent-URL paths of all items."""
    sites, paths = [], []
    for number in range(archives):
        tree = write_archive(
            workdir / "trees" / f"a{number}", f"a{number}.example.org", _service(number)
        )
        for item in range(items):
            repository = _repository(number, item)
            write_item(tree, repository, state="Original", target="doc.txt", files={"doc.txt": "x"})
            paths.append("/" + repository)
        sites.append(build_site(tree, workdir / "sites" / f"a{number}"))
    return sites, paths


def wrk(port: int, paths_file: Path, seconds: int, connections: int = 32) -> dict:
    script = paths_file.with_suffix(".lua")
    script.write_text(WRK_SCRIPT, encoding="utf-8")
    threads = min(2, connections)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    command += ["-s", str(script)]
    command += [f"http://127.0.0.1:{port}/", "--", str(paths_file)]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s*([\d.]+)", output).group(1))
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", output, re.M))
    statuses = dict(re.findall(r"^status (\d+) (\d+)$", output, re.M))
    errors = re.search(r"Socket errors:.*|Non-2xx or 3xx responses: \d+", output)
    return {
        "rate": rate,
        "p50": latency.get("50"),
        "p99": latency.get("99"),
        "statuses": statuses,
        "errors": errors.group(0) if errors else "",
    }


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(
    port: int, paths_file: Path, seconds: int, resolver, members, logs, connections: int = 32
) -> dict:
    """wrk's figures, the CPU the resolver and the Archives spent per answer (what the
    machine's other load does not change), and the acknowledgments the Archives counted
    against the redirects wrk got."""
    pids = [resolver.process.pid] + [member.process.pid for member in members]
    counted = _settled_acks(logs)  # what earlier runs left queued is counted by then
    before = [_cpu_seconds(pid) for pid in pids]
    result = wrk(port, paths_file, seconds, connections)
    spent = [_cpu_seconds(pid) - was for pid, was in zip(pids, before)]
    answers = max(1, sum(int(count) for count in result["statuses"].values()))
    result["resolver_ms"] = spent[0] / answers * 1000
    result["archives_ms"] = sum(spent[1:]) / answers * 1000
    result["acks"] = _settled_acks(logs) - counted
    result["redirects"] = sum(int(n) for s, n in result["statuses"].items() if s[0] == "3")
    return result


def _acks(logs: list[Path]) -> int:
    return sum(len(log.read_bytes().splitlines()) for log in logs if log.exists())


def _settled_acks(logs: list[Path], limit: float = 60.0) -> int:
    """The acknowledgments counted once the resolver's queues are empty (the count has not
    moved for a second), or after `limit` seconds."""
    deadline, count = time.monotonic() + limit, _acks(logs)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _acks(logs)
        if now == count:
            break
        count = now
    return count


def _resolver(keys: Path, state: Path, port: int, cache: float, profile: Path | None) -> Process:
    args = ["resolver", "--keys", str(keys), "--state", str(state), "--port", str(port)]
    args += ["--cache-seconds", str(cache), "--timeout", "2"]
    if profile is None:
        process = Process(*args)
    else:
        process = Process.python("-m", "cProfile", "-o", str(profile), "-m", "ibistatic", *args)
    process.wait_for(r"service at http://127\.0\.0\.1:(\d+)/")
    return process


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_one(
    workdir: Path, archives: int, hung: int, items: int, seconds: int, profile: bool
) -> dict:
    honest = archives - hung
    sites, paths = make_network_sites(workdir, honest, items)
    keys = write_keys(workdir / "keys.yaml", {_service(n): f"{n:010d}" for n in range(archives)})
    state, port = workdir / "state.json", _free_port()
    paths_file = workdir / "paths.txt"
    paths_file.write_text("\n".join(paths) + "\n", encoding="utf-8")
    profile_file = workdir / "resolver.prof" if profile else None
    logs = [workdir / f"acks-{n}.jsonl" for n in range(honest)]
    resolver = _resolver(keys, state, port, 0, profile_file)
    peers = [
        hostile_peers.Peer(_service(honest + n), lambda *_: hostile_peers.hang())
        for n in range(hung)
    ]
    members = []
    try:
        for number, peer in enumerate(peers):
            hostile_peers.join(port, peer, f"{honest + number:010d}")  # ranks first
        for number, site in enumerate(sites):
            extra = ("--ack-log", str(logs[number]))
            members.append(start_archive(site, port, f"{number:010d}", *extra)[0])
        return _run_modes(
            workdir, port, paths_file, seconds, resolver, members, logs, archives, hung
        )
    finally:
        for member in members:
            member.stop()
        for peer in peers:
            peer.close()


def _run_modes(workdir, port, paths_file, seconds, resolver, members, logs, archives, hung):
    """{mode: redirects/s} of each wrk run, each reported as it ends."""
    keys, state = workdir / "keys.yaml", workdir / "state.json"
    label, rates = f"{archives} Archives ({hung} hung)", {}

    def run(mode: str, duration: int = seconds, connections: int = 32) -> None:
        result = measured(port, paths_file, duration, resolver, members, logs, connections)
        _report(label, mode, result)
        rates[mode] = result["rate"]

    try:
        run("first asked")  # mostly IBIs never resolved: every Archive asked
        _ask_each(port, paths_file)  # every holder known from now on
        run("uncached")
        run("uncached, -c4", 5, 4)
        resolver.stop()
        if (workdir / "resolver.prof").exists():
            _print_profile(workdir / "resolver.prof")
        resolver = _resolver(keys, state, port, 3600, None)  # the same Archives, from --state
        _ask_each(port, paths_file)  # one resolution per URL fills the cache
        run("cached")
        run("cached, -c4", 5, 4)
    finally:
        resolver.stop()
    return rates


def _ask_each(port: int, paths_file: Path) -> None:
    """One request for each persistent URL, on one kept-alive connection."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for path in paths_file.read_text(encoding="utf-8").split():
            connection.request("GET", path)
            connection.getresponse().read()
    finally:
        connection.close()


def _report(label: str, mode: str, result: dict) -> None:
    cpu = result["resolver_ms"] + result["archives_ms"]
    print(
        f"{label}, {mode:14}: {result['rate']:>8,.0f} redirects/s  "
        f"p50 {result['p50']}  p99 {result['p99']}  statuses {result['statuses']} "
        f"{result['errors']}\n    CPU per answer: resolver {result['resolver_ms']:.2f} ms, "
        f"Archives {result['archives_ms']:.2f} ms (2 idle cores: about {2000 / cpu:,.0f}/s); "
        f"acknowledgments counted {result['acks']:,} for {result['redirects']:,} redirects "
        f"wrk got; "
        f"load average {_load()}",
        flush=True,
    )


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def release_rates(release: Path, archives: int, items: int, seconds: int) -> dict:
    """{"uncached" | "cached": redirects/s} of the release's own network_bench.py (run
    from its checkout `release`), its output passed on as it comes."""
    command = [sys.executable, str(release / "benchmarks" / "network_bench.py")]
    command += ["--archives", str(archives), "--items", str(items), "--seconds", str(seconds)]
    env = dict(os.environ, PYTHONPATH=str(release))
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    print("release:", output.replace("\n", "\nrelease: ").rstrip(), flush=True)
    found = re.findall(r"Archives, (uncached|cached)\s*:\s*([\d,.]+) redirects/s", output)
    return {mode: float(rate.replace(",", "")) for mode, rate in found}


def _compare(this: dict, before: dict, after: dict) -> None:
    for mode in ("uncached", "cached"):
        release = (before[mode] + after[mode]) / 2
        print(
            f"{mode}: this {this[mode]:,.0f}/s, the release {before[mode]:,.0f}/s before and "
            f"{after[mode]:,.0f}/s after: {this[mode] / release:.2f} times their mean",
            flush=True,
        )


def _print_profile(path: Path) -> None:
    import pstats

    print("  resolver profile (uncached), top 15 by own time:")
    pstats.Stats(str(path)).sort_stats("tottime").print_stats(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archives", type=int, nargs="+", default=[5])
    parser.add_argument("--hung", type=int, default=1, choices=(0, 1), help="hung Archives")
    parser.add_argument("--items", type=int, default=200, help="items per Archive")
    parser.add_argument("--seconds", type=int, default=10, help="seconds of each wrk run")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--profile", action="store_true", help="profile the uncached resolver")
    parser.add_argument(
        "--release", type=Path, metavar="DIR", help="compare with the release checked out in DIR"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian package wrk)")
    print(f"ibistatic from {ROOT}; wrk -t2 -c32 -d{args.seconds}s; service /{SERVICE}")
    for archives in args.archives:
        if args.release:
            before = release_rates(args.release, archives, args.items, args.seconds)
        workdir = Path(tempfile.mkdtemp(prefix=f"network-{archives}-", dir=args.workdir))
        try:
            rates = run_one(workdir, archives, args.hung, args.items, args.seconds, args.profile)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        time.sleep(1)
        if args.release:
            _compare(rates, before, release_rates(args.release, archives, args.items, args.seconds))


if __name__ == "__main__":
    main()
