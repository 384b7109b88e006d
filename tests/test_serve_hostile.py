"""``ibistatic serve`` started as users start it, attacked as the issue's attacker did, on
loopback: long URLs of every character class (whose parsing must be linear in their
length), redirects that try to leave for another host, a client that opens thousands of
connections or floods the server with the costliest URLs while others measure their
latency, answers nobody reads, a SIGKILL of the main process, and file paths in the
standard's ISO-8859-1 ``%hh``."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ibistatic.core.urls import parse_persistent_url
from ibistatic.errors import IbistaticError
from serve_process import ENV, ROOT, free_port, parse, raw_exchange, running, serve_command
from site_helpers import build

IBI = "8JMKD3MGP8W/35MMLL8"
REPORT = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
#: the characters of a persistent URL, by class (RFC 3986 and the standard's marks)
CLASSES = {
    "unreserved": "ABCXYZabcxyz0189-._~",
    ":": ":",
    "!": "!",
    "+": "+",
    "(": "(",
    ")": ")",
    "%": "%",
    "/": "/",
    "?": "?",
    "non-ASCII": "éçã€😀",
}
#: characters mixed in with a class: what makes a run look like the start of an IBI
GLUE = "a1.-/:"
#: where the run goes in a URL
PLACES = {
    "bare": "{}",
    "after the IBI": IBI + "{}",
    "in the path": IBI + "/{}",
    "in the query": IBI + "?a={}",
    "after a base": "http://ibi.example.org/{}",
    "after a shape": "http://ibi.example.org/ibi/{}",
}
KB64 = 65536


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("serve-hostile"))


@pytest.fixture(scope="module")
def served(site):
    """The server most tests attack: (process, port)."""
    options = ("--client-connections", "50", "--send-timeout", "1")
    with running(serve_command(site, *options)) as (process, port):
        yield process, port


@pytest.fixture(scope="module")
def port(served) -> int:
    return served[1]


@pytest.fixture(scope="module")
def named(site) -> set[str]:
    """Every host a URL of the index names (the Archives', the site's own)."""
    hosts = set()
    for path in (site / "index").rglob("*.json"):
        for found in re.finditer(r"https?://([^/\"\\?#]+)", path.read_text(encoding="utf-8")):
            hosts.add(found.group(1).lower())
    return hosts


def get(port: int, path: str, source: str = "127.0.0.1") -> tuple[float, int, str | None]:
    """(seconds, status, Location) of one GET on a new connection from `source`."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), 10, source_address=(source, 0)) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:  # a refused request: closed with it unread
            assert data
    status, headers, _ = parse(data)
    return time.monotonic() - started, status, headers.get("location")


def cpu_seconds(pid: int) -> float:
    """User and system time of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime: in clock ticks


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[int(len(ordered) * 0.99) - 1]


# --- time linear in the length ------------------------------------------------------------


def parse_seconds(url: str, runs: int) -> float:
    """The least CPU time of `runs` parses of `url` (an error counts: it is the answer)."""
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        try:
            parse_persistent_url(url)
        except IbistaticError as error:
            str(error)
        best = min(best, time.process_time() - started)
        if best > 0.5:  # slow beyond doubt: a regression, not noise
            break
    return best


@pytest.mark.parametrize("name", CLASSES)
@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking a slow case: minutes
)
@given(data=st.data())
def test_parsing_a_url_takes_time_linear_in_its_length(name, data):
    """64 KB of one character class (with a few others mixed in), in each place of a URL:
    parsing it, or writing its error, takes about 4 times what 16 KB takes, which takes
    about twice what 8 KB takes.  (Quadratic steps took 4 and 16 times: 8 KB of ':' after
    an IBI took 6 s, 64 KB would take minutes; a regression fails at 16 KB.)"""
    alphabet = CLASSES[name] + data.draw(st.sampled_from(["", GLUE]), label="glue")
    unit = data.draw(st.text(alphabet, min_size=1, max_size=12), label="unit")
    place = data.draw(st.sampled_from(sorted(PLACES)), label="place")

    def url(size: int) -> str:
        return PLACES[place].format((unit * (size // len(unit) + 1))[:size])

    eighth = parse_seconds(url(KB64 // 8), 3)
    quarter = parse_seconds(url(KB64 // 4), 3)
    assert quarter <= 3.5 * eighth + 0.01, (place, unit, eighth, quarter)
    whole = parse_seconds(url(KB64), 1)
    if whole > 6 * quarter + 0.02:  # once more before failing: a busy machine
        whole = min(whole, parse_seconds(url(KB64), 2))
    assert whole <= 6 * quarter + 0.02, (place, unit, quarter, whole)
    assert whole < 2.0, (place, unit, whole)


def test_long_urls_of_every_class_are_answered_at_once(served):
    """At the server: a request target over its limit (64 KB) gets 414 (or 431: the head
    is over its own limit too) at once; one just under it (8,000 bytes) gets its answer
    in time linear in its length, whatever character it is made of.  (A query that does
    not parse after an IBI gets the 301 to the IBI's page folder.)"""
    process, port = served
    spent, answered = [], []
    for name, characters in CLASSES.items():
        run = characters
        if name == "non-ASCII":  # a request line is ASCII: the rest goes percent-encoded
            run = "".join(f"%{byte:02X}" for byte in characters.encode("utf-8"))
        for place in ("bare", "after the IBI", "in the path", "in the query"):
            for size, expected in ((KB64, {414, 431}), (8000, None)):
                target = PLACES[place].format((run * size)[:size])
                target = "/" + target.replace("#", "%23")
                before = cpu_seconds(process.pid)
                seconds, status, _ = get(port, target)
                spent.append(cpu_seconds(process.pid) - before)
                answered.append((name, place, size, status, seconds))
                assert status in expected if expected else status < 500, answered[-1]
                assert seconds < 1.0, answered[-1]
    assert max(spent) < 0.5, max(spent)


# --- redirects stay where the index says -------------------------------------------------


def assert_stays(named: set[str], port: int, path: str) -> None:
    """The answer to `path` is no redirect, or one to this server or a host the index
    names, read as a browser reads a Location (a backslash is a slash); and its head
    holds only well-formed header lines."""
    response = raw_exchange(port, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode("latin-1"))
    head = response.partition(b"\r\n\r\n")[0].decode("latin-1")
    for line in head.split("\r\n")[1:]:
        assert re.fullmatch(r"[a-z-]+: [\x21-\x7e][\x20-\x7e]*", line), (path, line)
    status, headers, _ = parse(response)
    location = headers.get("location")
    if location is None:
        return
    assert 300 <= status < 400
    landed = urlsplit(urljoin(f"http://127.0.0.1:{port}/a/b", location.replace("\\", "/")))
    allowed = named | {f"127.0.0.1:{port}"}
    assert landed.netloc.lower() in allowed, (path, status, location)


OFF_SITE = [
    "//sid.inpe.br",  # a folder of the site, and a host
    "///sid.inpe.br",
    "//iconet.com.br",
    "//8JMKD3MGP8W",
    "//assets",
    "//attacker.example",
    "//attacker.example/%2e%2e",
    "/\\attacker.example",
    "/\\\\attacker.example",
    "/%2F%2Fattacker.example",
    "/%2f%2fsid.inpe.br",
    "/%5Csid.inpe.br",
    "/%5C%5Csid.inpe.br",
    "//sid.inpe.br%0d%0aLocation:%20http://attacker.example/",
    "/sid.inpe.br%0d%0aSet-Cookie:%20a=b",
    "//sid.inpe.br?next=//attacker.example",
    "//sid.inpe.br/mtc-m18@80",
    "/.//sid.inpe.br",
    "/%2e/%2e%2e//sid.inpe.br",
    "//%09sid.inpe.br",
    "/http://attacker.example/" + IBI,
    "//attacker.example/" + IBI,
    "/" + IBI + "//attacker.example",
    "/" + IBI + "/%2F%2Fattacker.example",
    "/" + IBI + "/@attacker.example",
]


@pytest.mark.parametrize("path", OFF_SITE)
def test_no_redirect_leaves_for_a_host_the_index_does_not_name(named, port, path):
    assert_stays(named, port, path)


def test_a_folder_asked_with_slashes_doubled_stays_on_this_server(port):
    assert get(port, "//sid.inpe.br")[1:] == (301, "/sid.inpe.br/")
    assert get(port, "///sid.inpe.br//mtc-m18@80?x=1")[1:] == (301, "/sid.inpe.br/mtc-m18@80/?x=1")


PIECES = [
    "/", "//", "\\", "%2F", "%2f", "%5C", "%5c", "%2e", ".", "..", "%0d%0a", "%09", "@",
    ":", "?", "#", "sid.inpe.br", "iconet.com.br", "assets", "8JMKD3MGP8W", "35MMLL8",
    "attacker.example", "http:", "%00", "!", "+", ":(oai_dc)", "?ibiurl.verblist=GetFileList",
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
def test_generated_paths_never_redirect_off_site(named, port, pieces):
    path = "/" + "".join(pieces).replace("#", "%23")
    assert_stays(named, port, path)


# --- ISO-8859-1 file paths ----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "LK47B6W/362SFKH/Relat%f3rio%20t%e9cnico.txt",  # the standard's charset (Example 4.2)
        "LK47B6W/362SFKH/Relat%F3rio%20t%E9cnico.txt",
        "LK47B6W/362SFKH/Relat%C3%B3rio%20t%C3%A9cnico.txt",  # UTF-8
        "sid.inpe.br/mtc-m19/2013/09.04.12.27.57/Relat%f3rio%20Final.pdf",
        "8JMKD3MGP8W/35MMLL8/Relat%f3rio.pdf",  # no such file
        "%ff%fe",  # no IBI at all
    ],
)
def test_serve_answers_an_iso_8859_1_path_as_resolve_does(site, port, path):
    resolved = subprocess.run(
        [sys.executable, "-m", "ibistatic", "resolve", "--index", str(site), path],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=str(ROOT),
        timeout=60,
    )
    _, status, location = get(port, "/" + path)
    if resolved.returncode == 0:
        assert (status, location) == (302, resolved.stdout.strip())
    else:
        assert status in (400, 404) and location is None, resolved.stdout + resolved.stderr


# --- one client cannot starve the others --------------------------------------------------

FLOOD = r"""
import json, socket, sys, time
port, count, wave, pause = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                            float(sys.argv[4]))
socks = []
print("started", flush=True)
deadline = time.monotonic() + 30
while len(socks) < count and time.monotonic() < deadline:
    for _ in range(min(wave, count - len(socks))):
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind(("127.0.0.2", 0))  # another client than the one that measures
        sock.connect_ex(("127.0.0.1", port))
        socks.append(sock)
    time.sleep(pause)
sys.stdin.readline()  # held, silent, until the measures are done
held = refused = 0
for sock in socks:
    try:
        data = sock.recv(200)
    except BlockingIOError:
        held += 1  # nothing said, not closed
        continue
    except OSError:
        data = b""
    refused += 1
    assert data == b"" or data.startswith(b"HTTP/1.1 503 "), data
print(json.dumps({"opened": len(socks), "held": held, "refused": refused}), flush=True)
"""

COSTLY = r"""
import socket, sys, time
port, connections, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
# the costliest kind of URL for its length: an IBI-like run that never becomes one
request = b"GET /" + b"a." * 4000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
socks = []
for _ in range(connections):
    sock = socket.create_connection(("127.0.0.1", port), 10, source_address=("127.0.0.2", 0))
    sock.setblocking(False)
    socks.append(sock)
print("started", flush=True)
sent = 0
pending = {sock: b"" for sock in socks}
ended = time.monotonic() + seconds
while time.monotonic() < ended:
    for sock in socks:
        if not pending[sock]:
            pending[sock] = request * 4  # pipelined: always more waiting
            sent += 4
        try:
            pending[sock] = pending[sock][sock.send(pending[sock]):]
        except (BlockingIOError, OSError):
            pass
        try:
            while sock.recv(1 << 20):
                pass
        except (BlockingIOError, OSError):
            pass
    time.sleep(0.005)
print(sent, flush=True)
"""


#: a persistent URL long enough to be answered on the thread (query pairs that are not
#: the resolver's business)
LONG = "/" + IBI + "?" + "&".join(f"utm{n}=x" for n in range(100))


def measure(port: int, count: int, path: str = "/" + IBI) -> list[float]:
    """Seconds of `count` requests, one after the other, each on a new connection."""
    answers = [get(port, path) for _ in range(count)]
    assert {answer[1:] for answer in answers} == {(302, REPORT)}
    return [answer[0] for answer in answers]


def test_thousands_of_idle_connections_from_one_client_cost_the_others_nothing(site):
    options = ("--client-connections", "50", "--head-timeout", "30")
    with running(serve_command(site, *options)) as (_, port):
        flood = subprocess.Popen(
            [sys.executable, "-c", FLOOD, str(port), "2000", "100", "0.05"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert flood.stdout.readline() == "started\n"
            latencies = measure(port, 300)  # while the connections pour in, and after
            flood.stdin.write("done\n")
            flood.stdin.flush()
            counts = json.loads(flood.stdout.readline())
        finally:
            flood.kill()
            flood.wait()
        assert counts["opened"] == 2000
        assert counts["held"] <= 50 and counts["refused"] >= 1950, counts
        assert p99(latencies) < 0.1, sorted(latencies)[-5:]
        assert get(port, "/" + IBI)[1] == 302  # and it goes on when they are gone


def test_a_flood_of_the_costliest_urls_costs_the_others_little(site):
    """40 connections from one client, each with 8 KB URLs that cost the most to read
    pipelined: others' short URLs (answered on the event loop) and long ones (on the
    thread that takes clients in turn) wait little."""
    assert len(LONG) > 512
    with running(serve_command(site)) as (_, port):
        flood = subprocess.Popen(
            [sys.executable, "-c", COSTLY, str(port), "40", "4"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert flood.stdout.readline() == "started\n"
            time.sleep(0.3)
            latencies = measure(port, 150)
            long = measure(port, 50, LONG)
            sent = int(flood.stdout.readline())
        finally:
            flood.kill()
            flood.wait()
        assert sent > 100
        assert p99(latencies) < 0.1, sorted(latencies)[-5:]
        # in turn: behind one of the flood's (first come, first served: behind all 40, 1-2 s)
        assert max(long) < 0.5, sorted(long)[-5:]


def test_pipelined_requests_are_not_counted_as_one_large_head(port):
    """A head that ends in a read full of pipelined requests: only its own bytes count
    against the 64 KiB a head may take (all of them did, and the client got 431)."""
    request = f"GET /{IBI} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.2)  # the rest of this head comes in the next read, with 96 KB more
        sock.sendall(b"\r\n" + request * 2000)
        data = b""
        while data.count(b"HTTP/1.1 ") < 2001:
            chunk = sock.recv(1 << 20)
            assert chunk, data[-300:]
            data += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d+) ", data)
    assert statuses[0] == b"200" and set(statuses[1:]) == {b"302"}


def test_an_answer_nobody_reads_is_dropped_at_the_send_timeout(site, port):
    """A client that asks for a file again and again, pipelined, and reads nothing: its
    answers fill the server's buffers, and at --send-timeout (1 s here) it is dropped."""
    request = b"GET /assets/resolve.js HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(request * 1000)
        time.sleep(3.0)  # the timeout, and time to spare
        sock.settimeout(5)
        received = 0
        try:
            while chunk := sock.recv(1 << 20):
                received += len(chunk)
        except ConnectionResetError:
            pass
    whole = 1000 * (site / "assets" / "resolve.js").stat().st_size
    assert received < whole / 4, (received, whole)


# --- a killed server leaves nothing behind ------------------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def _running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_sigkilled_server_leaves_no_worker_running(site):
    port = free_port()
    command = [sys.executable, "-m", "ibistatic", "serve", str(site), "--port", str(port)]
    with running([*command, "--workers", "2"], port) as (process, _):
        deadline = time.monotonic() + 15  # on a loaded machine the port opens first
        while len(workers := _children(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(workers) == 2
        assert get(port, "/" + IBI)[1] == 302
        process.kill()  # SIGKILL: no handler runs in the main process
        process.wait()
        deadline = time.monotonic() + 15
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(pid) for pid in workers)
    # and the port is free again for the next serve
    with running(command, port):
        assert get(port, "/" + IBI)[1] == 302


@pytest.mark.parametrize(
    "peer, key",
    [
        (("203.0.113.7", 5000), "203.0.113.7"),
        (("2001:db8:1:2:aaaa::1", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:ffff::9", 5000, 0, 0), "2001:db8:1:2::/64"),  # the same subscriber
        (("::ffff:203.0.113.7", 5000, 0, 0), "203.0.113.7"),
        (None, None),  # a Unix socket
    ],
)
def test_what_a_connection_counts_against(peer, key):
    from ibistatic.web.limits import client_key

    assert client_key(peer) == key


def test_serve_refuses_a_bad_connection_limit(site):
    result = subprocess.run(
        [sys.executable, "-m", "ibistatic", "serve", str(site), "--client-connections", "-1"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=30,
    )
    assert result.returncode == 2
    assert (
        "argument --client-connections: '-1': expected a number of connections, "
        "0 (no limit) to 1000000" in result.stderr
    )
