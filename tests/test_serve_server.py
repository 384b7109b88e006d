"""``ibistatic serve`` as a real process on loopback, tried as clients and attackers try it:
stalled and slowloris clients, malformed and oversized requests, keep-alive, HEAD,
header injection from a forged index, and a clean stop on SIGTERM/SIGINT."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from serve_process import (
    ENV,
    parse,
    raw_exchange,
    read_response,
    running,
    serve_command,
    tamper,
)
from site_helpers import build

REPORT = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
HEAD_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("serve-server"))


@pytest.fixture(scope="module")
def port(site):
    """A server whose deadline for a request head is short (the tests wait it out)."""
    options = ("--head-timeout", str(HEAD_TIMEOUT), "--keep-alive", "1")
    with running(serve_command(site, *options)) as (_, port):
        yield port


def timed_get(port: int, path: str) -> tuple[float, int, str | None]:
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return time.monotonic() - started, response.status, response.getheader("Location")
    finally:
        connection.close()


class Trickler(threading.Thread):
    """A slowloris client: a request head that never ends, one header every 0.1 s."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), 5)
        self.sock.sendall(b"GET /8JMKD3MGP8W/35MMLL8 HTTP/1.1\r\nHost: x\r\n")
        self.stop = threading.Event()
        self.dropped_after: float | None = None

    def run(self) -> None:
        started = time.monotonic()
        while not self.stop.wait(0.1):
            try:
                self.sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                self.dropped_after = time.monotonic() - started
                return


def still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True  # nothing to read, and not closed
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def test_stalled_and_slowloris_clients_cost_the_others_nothing(site):
    with running(serve_command(site)) as (_, port):  # the default deadline: 10 s
        silent = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(32)]
        partial = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(16)]
        for sock in partial:
            sock.sendall(b"GET /8JMKD3MGP8W/35MMLL8 HTT")
        tricklers = [Trickler(port) for _ in range(16)]
        for trickler in tricklers:
            trickler.start()
        try:
            time.sleep(0.3)
            answers = [timed_get(port, "/8JMKD3MGP8W/35MMLL8") for _ in range(50)]
            assert {answer[1:] for answer in answers} == {(302, REPORT)}
            assert max(answer[0] for answer in answers) < 0.5, sorted(answers)[-3:]
            # they were all still connected while the others were answered
            assert all(still_open(sock) for sock in silent + partial)
            assert all(trickler.dropped_after is None for trickler in tricklers)
        finally:
            for trickler in tricklers:
                trickler.stop.set()
            for sock in silent + partial + [t.sock for t in tricklers]:
                sock.close()


def test_a_silent_client_is_dropped_at_the_head_deadline(port):
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        started = time.monotonic()
        assert sock.recv(1) == b""  # closed, with nothing said
        assert HEAD_TIMEOUT - 0.1 < time.monotonic() - started < HEAD_TIMEOUT + 2


def test_a_slowloris_client_is_dropped_however_steadily_it_trickles(port):
    trickler = Trickler(port)
    trickler.start()
    trickler.join(HEAD_TIMEOUT + 5)
    trickler.sock.close()
    assert trickler.dropped_after is not None
    assert trickler.dropped_after < HEAD_TIMEOUT + 2


def test_a_kept_alive_connection_answers_many_requests_then_idles_out(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.connect()
    sock = connection.sock
    for path in ["/8JMKD3MGP8W/35MMLL8", "/", "/assets/ibistatic.css", "/8JMKD3MGP8W/3333333"]:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        assert (response.version, response.will_close) == (11, False)
        assert connection.sock is sock  # the same connection each time
    time.sleep(2.0)  # idle past --keep-alive 1
    assert sock.recv(1) == b""
    connection.close()


def test_a_slowloris_on_a_kept_alive_connection_is_dropped_too(port):
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert parse(read_response(sock))[0] == 200
        sock.sendall(b"GET / HTTP/1.1\r\n")
        started = time.monotonic()
        with pytest.raises(OSError):
            for _ in range(50):
                time.sleep(0.1)
                sock.sendall(b"X-Slow: 1\r\n")
        assert time.monotonic() - started < HEAD_TIMEOUT + 2


MALFORMED = [
    (b"GARBAGE\r\n\r\n", 400, b"malformed request: Invalid method encountered\n"),
    (
        b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
        400,
        b"malformed request: Invalid char in url path\n",
    ),
    (
        b"GET /x\x01y HTTP/1.1\r\nHost: x\r\n\r\n",
        400,
        b"malformed request: Invalid char in url path\n",
    ),
    (
        b"GET /x HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        400,
        b"malformed request: Invalid header token\n",
    ),
    (
        b"GET /x HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n",
        400,
        b"malformed request: Invalid header value char\n",
    ),
    (
        b"GET /8JMKD3MGP8W/35MMLL8%zz HTTP/1.1\r\nHost: x\r\n\r\n",
        400,
        b"bad request: bad percent-encoding '%zz' at position 20 of the path: "
        b"expected '%' and two hexadecimal digits\n",
    ),
    (
        b"GET /sid.inpe.br/mtc-m18@80/2008/03.17.15.17?servicesubject=urlRequest&a&&b HTTP/1.1\r\n\r\n",
        400,
        None,  # the Archive service's own message (us-ascii): checked below
    ),
    (
        b"GET /" + b"8" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        414,
        b"request target longer than 8192 bytes\n",
    ),
    (
        b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % n for n in range(101)) + b"\r\n",
        431,
        b"more than 100 header fields\n",
    ),
    (
        b"GET / HTTP/1.1\r\n"
        + b"".join(b"X-%d: %s\r\n" % (n, b"y" * 7000) for n in range(10))
        + b"\r\n",
        431,
        b"request head larger than 65536 bytes\n",
    ),
]


MALFORMED_IDS = [
    "no-method",
    "raw-non-ascii",
    "raw-control",
    "header-without-colon",
    "control-in-header",
    "bad-percent",
    "bad-service-query",
    "long-target",
    "many-headers",
    "large-head",
]


@pytest.mark.parametrize("request_bytes, status, message", MALFORMED, ids=MALFORMED_IDS)
def test_a_malformed_request_is_a_text_plain_error_with_a_message(
    port, request_bytes, status, message
):
    got, headers, body = parse(raw_exchange(port, request_bytes))
    assert got == status
    assert headers["content-type"].startswith("text/plain; charset=")
    if message is None:
        assert body.startswith(b"bad service request: invalid query string")
    else:
        assert body == message
    assert timed_get(port, "/8JMKD3MGP8W/35MMLL8")[1:] == (302, REPORT)  # and it goes on


def test_head_sends_the_headers_of_get_and_no_body(port, site):
    with socket.create_connection(("127.0.0.1", port), 5) as sock:
        sock.sendall(
            b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\nHEAD /8JMKD3MGP8W/35MMLL8 HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        data = b""
        while data.count(b"\r\n\r\n") < 2:
            data += sock.recv(65536)
    first, _, second = data.partition(b"\r\n\r\n")
    status, headers, _ = parse(first + b"\r\n\r\n")
    assert (status, headers["content-length"]) == (200, str((site / "index.html").stat().st_size))
    assert second.startswith(b"HTTP/1.1 302 Found\r\n")  # no body between the two answers
    assert parse(second)[1]["location"] == REPORT


def test_a_crlf_in_a_forged_index_never_reaches_the_wire(site, tmp_path):
    forged = tmp_path / "site"
    shutil.copytree(site, forged)
    tamper(forged)
    with running(serve_command(forged)) as (_, port):
        response = raw_exchange(port, b"GET /8JMKD3MGP8W/35MMLL8 HTTP/1.1\r\nHost: x\r\n\r\n")
    head = response.partition(b"\r\n\r\n")[0].decode("latin-1")
    names = [line.split(":", 1)[0].lower() for line in head.split("\r\n")[1:]]
    assert "set-cookie" not in names and "x-evil" not in names
    assert parse(response)[1]["location"].startswith(
        "http://a.example/x%0D%0ASet-Cookie:%20session=stolen%0D%0AX-Evil:%201/"
    )


STOPPING_SCRIPT = """
import http.client, sys
from ibistatic.serve import make_app
from ibistatic.web.server import run_server

def started(host, port):
    print(f"listening {host} {port}", flush=True)
    globals()["port"] = port

def stopping():
    # the server still answers while this runs (a joined Archive says goodbye here)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", "/8JMKD3MGP8W/35MMLL8")
    print("stopping", connection.getresponse().status, flush=True)

run_server(make_app(sys.argv[1]), "127.0.0.1", 0, on_started=started, on_stopping=stopping)
print("stopped", flush=True)
"""


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
def test_run_server_reports_its_port_and_stops_cleanly_on_a_signal(site, signal_number):
    process = subprocess.Popen(
        [sys.executable, "-c", STOPPING_SCRIPT, str(site)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        _, host, port = process.stdout.readline().split()
        assert host == "127.0.0.1" and int(port) > 0
        assert timed_get(int(port), "/8JMKD3MGP8W/35MMLL8")[1] == 302
        process.send_signal(signal_number)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (0, "stopping 302\nstopped\n", "")


def test_serve_says_when_it_cannot_listen(site):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "ibistatic", "serve", str(site), "--port", str(port)],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=30,
        )
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        f"serve: cannot listen on 127.0.0.1 port {port}: Address already in use"
    )
    assert "Traceback" not in result.stderr


def test_serve_refuses_a_bad_timeout(site):
    result = subprocess.run(
        [sys.executable, "-m", "ibistatic", "serve", str(site), "--head-timeout", "0"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=30,
    )
    assert result.returncode == 2
    assert "argument --head-timeout: '0': expected seconds, more than 0 and at most 3600" in (
        result.stderr
    )


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def test_workers_answer_on_one_port_are_replaced_and_stop_together(site):
    with running(serve_command(site, "--workers", "2")) as (process, port):
        workers = _children(process.pid)
        assert len(workers) == 2
        assert {timed_get(port, "/8JMKD3MGP8W/35MMLL8")[1] for _ in range(20)} == {302}
        killed = min(workers)
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while (killed in _children(process.pid) or len(_children(process.pid)) < 2) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.1)
        replaced = _children(process.pid)
        assert len(replaced) == 2 and killed not in replaced
        assert timed_get(port, "/8JMKD3MGP8W/35MMLL8")[1] == 302
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    for pid in replaced:
        assert not Path(f"/proc/{pid}").exists()


def test_serve_refuses_a_bad_worker_count(site):
    result = subprocess.run(
        [sys.executable, "-m", "ibistatic", "serve", str(site), "--workers", "0"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=30,
    )
    assert result.returncode == 2
    assert "argument --workers: '0': expected a number of processes, 1 to 64" in result.stderr


class _Cycle:
    """Cyclic garbage, as a closed connection's objects can be."""

    def __init__(self) -> None:
        self.me = self


def test_collector_pacing_freezes_survivors_then_gives_them_to_a_full_collection():
    import asyncio
    import gc
    import weakref

    from ibistatic.web.server import CollectorPacing

    async def run() -> tuple[int, bool, int, bool]:
        loop = asyncio.get_running_loop()
        pacing = CollectorPacing(loop, freeze_every=0.02, full_every=0.3)
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        pacing.start()
        try:
            await asyncio.sleep(0.05)  # a freeze: the live cycle is out of every pass
            frozen = gc.get_freeze_count()
            del cycle
            gc.collect()  # a full pass does not see frozen objects
            kept_while_frozen = gone() is not None
            await asyncio.sleep(0.4)  # past full_every: unfrozen, collected, frozen again
            return frozen, kept_while_frozen, gc.get_freeze_count(), gone() is None
        finally:
            pacing.stop()
            gc.unfreeze()

    frozen, kept_while_frozen, frozen_again, collected = asyncio.run(run())
    assert frozen > 0 and kept_while_frozen  # the pause-free part: survivors frozen
    assert collected  # the bounded part: the full collection freed the frozen cycle
    assert frozen_again > 0
