"""``ibistatic serve`` under load over a 1M-key index, with stalled clients connected.

    python benchmarks/serve_bench.py [--keys 1000000] [--workdir DIR] [--urls 200000]
                                     [--stalled 8] [--seconds 10] [--rebuild-index]

The index: the one ``resolver_bench.py`` builds (``DIR/resolver-index-K-sS``, about K
IBI keys from about 0.77 K synthetic items planned by ``make_archive.py``, validated by
``read_item`` and written by the real ``write_index``; a full crawl and build of that
many items takes too long here).  Any complete one there is reused (the index format
does not depend on the server); ``--rebuild-index`` builds it again.

Then ``ibistatic serve INDEX`` runs as a real process on a free loopback port; a thread
keeps `--stalled` clients connected the whole time (half connect and say nothing, half
send a request head a header at a time, one a second: slowloris), opening a new one
whenever the server drops one at its head deadline; and ``wrk -t2 -c32 --latency``
cycles through `--urls` distinct persistent URLs (each thread from its own offset):
three in four are forms the build precomputes (bare, ``!``, ``:(oai_dc)``), one in four
needs the resolution process (``!:``, ``+(en)`` and a ``?ibiurl.language`` query).  A
5-second run first warms the caches; the measured run prints requests/s, redirects/s,
p50 and p99 latency, the count of answers other than 3xx, and the server's memory.
With ``--baseline``, the same wrk run first goes to a bare ASGI application under
uvicorn (httptools, uvloop) that answers every request with one fixed redirect: the
ceiling of the server stack on this machine at this moment (the machine is shared, so
compare the two figures of one run rather than runs of different hours).  ``--workers N``
runs ``ibistatic serve --workers N``.
Figures are printed, never asserted: see benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

import resolver_bench  # noqa: E402

PRECOMPUTED = ("", "!", ":(oai_dc)")
RESOLVED = ("!:", "+(en)", "?ibiurl.language=en")
WRK_SCRIPT = (
    r"""
-- Persistent URLs from the file named after "--", each thread cycling from its own
-- offset; status codes counted per thread in the global `counts`.
local paths, threads, next_id = {}, {}, 0
counts = {}
local position = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  position = math.floor(#paths * (id - 1) / 2)
end

function request()
  position = position % #paths + 1
  return wrk.format("GET", paths[position])
end

"""
    + resolver_bench.WRK_COUNTING
)


class StalledClients(threading.Thread):
    """Keeps `count` stalled connections open: silent ones, and slowloris ones that send
    a header line a second; a dropped one is replaced at once."""

    def __init__(self, port: int, count: int) -> None:
        super().__init__(daemon=True)
        self.port, self.count = port, count
        self.stop = threading.Event()
        self.dropped = 0
        self.sockets: list[tuple[socket.socket, bool]] = []

    def _open(self, talking: bool) -> tuple[socket.socket, bool]:
        sock = socket.create_connection(("127.0.0.1", self.port), 5)
        if talking:
            sock.sendall(b"GET /8JMKD3MGP8W/35MMLL8 HTTP/1.1\r\nHost: bench\r\n")
        return sock, talking

    def run(self) -> None:
        self.sockets = [self._open(n % 2 == 1) for n in range(self.count)]
        while not self.stop.wait(1.0):
            for n, (sock, talking) in enumerate(self.sockets):
                if not _alive(sock, talking):
                    sock.close()
                    self.dropped += 1
                    self.sockets[n] = self._open(talking)
        for sock, _ in self.sockets:
            sock.close()


def _alive(sock: socket.socket, talking: bool) -> bool:
    try:
        if talking:
            sock.sendall(b"X-Slow: 1\r\n")
        sock.setblocking(False)
        try:
            return sock.recv(1) != b""
        except BlockingIOError:
            return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def make_paths(index: Path, count: int, seed: int) -> list[str]:
    ibis = (index / resolver_bench.IBIS_FILE).read_text(encoding="utf-8").split()
    rng = random.Random(seed)
    chosen = rng.sample(ibis, min(count, len(ibis)))
    paths = []
    for n, ibi in enumerate(chosen):
        forms = RESOLVED if n % 4 == 3 else PRECOMPUTED
        paths.append("/" + ibi + forms[n % len(forms)])
    return paths


def run_wrk(port: int, script: Path, paths: Path, seconds: int) -> dict:
    command = ["wrk", "-t2", "-c32", f"-d{seconds}s", "--latency", "-s", str(script)]
    command += [f"http://127.0.0.1:{port}/", "--", str(paths)]
    output = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True
    ).stdout
    statuses = Counter(
        {int(s): int(n) for s, n in re.findall(r"^status (\d+) (\d+)$", output, re.M)}
    )
    return {
        "rate": float(re.search(r"Requests/sec:\s*([\d.]+)", output).group(1)),
        "p50": _latency(output, "50"),
        "p99": _latency(output, "99"),
        "statuses": statuses,
        "errors": re.search(r"Socket errors:.*", output).group(0)
        if "Socket errors" in output
        else "",
        "output": output,
        "seconds": seconds,
    }


def _latency(output: str, percent: str) -> float:
    """wrk's latency at `percent`, in milliseconds."""
    value, unit = re.search(rf"^\s*{percent}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


BARE_APP = """
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 302,
                "headers": [(b"location", b"http://example.org/x"), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
"""


def baseline(script: Path, paths_file: Path, seconds: int, scratch: str) -> None:
    Path(scratch, "bare_app.py").write_text(BARE_APP, encoding="utf-8")
    port = resolver_bench._free_port()
    command = [sys.executable, "-m", "uvicorn", "bare_app:app", "--port", str(port)]
    command += ["--http", "httptools", "--loop", "auto", "--log-level", "warning"]
    bare = subprocess.Popen(command, cwd=scratch, stderr=subprocess.DEVNULL)
    try:
        resolver_bench._wait_for(port, bare)
        report(
            "bare uvicorn+httptools redirect app (the ceiling)",
            run_wrk(port, script, paths_file, seconds),
        )
    finally:
        bare.terminate()
        bare.wait(timeout=10)


def rss_mib(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def _memory(pid: int) -> str:
    """RSS of the server and its workers, and the part that is mapped index files (the
    operating system's file cache, shared and reclaimable) rather than heap."""
    pids = [pid] + [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]
    total = anon = 0
    for each in pids:
        text = Path(f"/proc/{each}/status").read_text()
        total += int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1))
        anon += int(re.search(r"RssAnon:\s+(\d+) kB", text).group(1))
    return f"{total / 1024:,.0f} MiB, of which {anon / 1024:,.0f} MiB heap (the rest: mapped files)"


def report(name: str, result: dict) -> None:
    statuses = result["statuses"]
    total = sum(statuses.values())
    redirects = sum(count for status, count in statuses.items() if 300 <= status < 400)
    shown = ", ".join(f"{status}: {count:,}" for status, count in sorted(statuses.items()))
    print(
        f"{name}: {result['rate']:,.0f} requests/s, {redirects / result['seconds']:,.0f} "
        f"redirects/s; p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms; "
        f"non-3xx {total - redirects:,} of {total:,} ({shown}) {result['errors']}",
        flush=True,
    )


def bench(index: Path, paths: list[str], args) -> None:
    stalled, seconds, workdir = args.stalled, args.seconds, args.workdir
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        paths_file, script = Path(scratch, "paths.txt"), Path(scratch, "cycle.lua")
        paths_file.write_text("\n".join(paths) + "\n", encoding="utf-8")
        script.write_text(WRK_SCRIPT, encoding="utf-8")
        if args.baseline:
            baseline(script, paths_file, seconds, scratch)
        port = resolver_bench._free_port()
        command = resolver_bench._ibistatic_command() + ["serve", str(index), "--port", str(port)]
        command += ["--workers", str(args.workers)]
        server = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=resolver_bench._child_env(),
        )
        clients = StalledClients(port, stalled)
        try:
            resolver_bench._wait_for(port, server)
            print(
                f"serve --workers {args.workers}: pid {server.pid}, "
                f"{rss_mib(server.pid):,.0f} MiB after start",
                flush=True,
            )
            clients.start()
            requested, spent = _warm_up(port, index, paths, args.workers)
            print(
                f"warm-up: one request per shard and kind (answers/, shards/) and worker, "
                f"{requested:,} in {spent:.1f} s",
                flush=True,
            )
            report("warm-up (5 s)", run_wrk(port, script, paths_file, 5))
            result = run_wrk(port, script, paths_file, seconds)
            report(f"wrk -t2 -c32 -d{seconds}s with {stalled} stalled clients", result)
            print(
                f"stalled clients dropped by the server (and reopened): {clients.dropped}; "
                f"server RSS {_memory(server.pid)}",
                flush=True,
            )
        finally:
            clients.stop.set()
            clients.join(5)
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        if server.returncode not in (0, -15):
            print(f"serve ended with {server.returncode}: {server.stderr.read()[-2000:]!r}")


def _warm_up(port: int, index: Path, paths: list[str], workers: int) -> tuple[int, float]:
    """Map every shard before measuring, as a long-running server has: one resolved
    form per shard reads its answers/ shard and its shards/ shard (the first map
    of a shard reads it from the page cache, a one-time cost).  Each worker maps its
    own: one pass per worker (the kernel spreads the connections)."""
    resolved = paths[3::4]  # as make_paths lays them out; each reads both kinds of shard
    by_ibi = {re.split(r"[!:+?]", path, maxsplit=1)[0]: path for path in resolved}
    chosen = [by_ibi[ibi] for ibi in resolver_bench._one_path_per_shard(index, list(by_ibi))]
    started = time.perf_counter()
    for _ in range(workers):
        resolver_bench.ask_each(port, chosen)
    return len(chosen) * workers, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=resolver_bench.DEFAULT_WORKDIR)
    parser.add_argument(
        "--urls", type=int, default=200_000, help="distinct URLs wrk cycles through"
    )
    parser.add_argument("--stalled", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rebuild-index", action="store_true")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--baseline", action="store_true", help="measure a bare uvicorn app first")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print("wrk is not installed (Debian package wrk)")
        return 1
    print(f"measuring {ROOT}", flush=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    index = resolver_bench.ensure_index(
        args.workdir, args.keys, args.seed, reuse_any=not args.rebuild_index
    )
    paths = make_paths(index, args.urls, args.seed)
    print(f"{len(paths):,} distinct URLs (3 in 4 precomputed forms, 1 in 4 resolved)", flush=True)
    bench(index, paths, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
