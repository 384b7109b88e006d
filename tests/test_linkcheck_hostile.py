"""``ibistatic linkcheck`` run as users run it, against targets that attack it: hosts that
drip their answers or chain slow redirects (``--timeout`` must bound each whole check),
and targets or redirects that lead to loopback, private and link-local addresses (never
reached unless ``--allow-private`` names them).  Every server is on loopback."""

from __future__ import annotations

import contextlib
import csv
import io
import ipaddress
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ibistatic.linkcheck import internal_kind
from serve_process import ENV, ROOT

TIMEOUT = 1.0  # --timeout of the checks here
ITEM = "example.org/ibi/2020/01.01.00.{:02d}"


class Target(threading.Thread):
    """A raw HTTP server on `host`: each connection is handled by `answer(path, sock)`;
    every connection made to it is counted, answered or not."""

    def __init__(self, host: str, answer) -> None:
        super().__init__(daemon=True)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.bind((host, 0))
        self.listener.listen(64)
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.host = host
        self.answer = answer
        self.connections = 0
        self.stop = threading.Event()

    def url(self, path: str) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                sock, _ = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        with sock:
            sock.settimeout(5)
            head = b""
            with contextlib.suppress(OSError):
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = sock.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                method, path = head.split(b" ", 2)[:2]
                self.answer(method.decode(), path.decode(), sock)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.join(5)
        self.listener.close()


def drip(sock: socket.socket, data: bytes, every: float, budget: float = 20.0) -> None:
    """Send `data` a byte at a time, `every` seconds apart, until the client hangs up
    (or `budget` seconds have gone: a bound on the test itself)."""
    ended = time.monotonic() + budget
    for byte in data:
        if time.monotonic() > ended:
            return
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return
        time.sleep(every)


def answer(sock: socket.socket, status: str, location: str | None = None) -> None:
    extra = f"Location: {location}\r\n" if location else ""
    sock.sendall(f"HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\n\r\n".encode())


def make_site(tmp_path: Path, urls: list[str]) -> Path:
    """A built site whose items' targets are `urls`: an Archive per host, whose items'
    one file each is the path of a URL."""
    from urllib.parse import urlsplit

    from ibistatic.cli import main

    hosts = list(dict.fromkeys(urlsplit(url).netloc for url in urls))
    for number, host in enumerate(hosts):
        archive = tmp_path / f"a{number}"
        archive.mkdir()
        (archive / "archive.yaml").write_text(
            "address: 127.0.0.1\n"
            f"service-ibi: example.org/ibi/2019/01.01.00.{number:02d}\n"
            f"file-url: 'http://{host}/{{path}}'\n"
        )
    for number, url in enumerate(urls):
        parts = urlsplit(url)
        item = tmp_path / f"a{hosts.index(parts.netloc)}" / ITEM.format(number)
        (item / "doc" / parts.path[1:]).parent.mkdir(parents=True)
        (item / "doc" / parts.path[1:]).write_text("x")
        (item / "item.yaml").write_text(
            f"state: Original\ntimestamp: 2020-01-01T00:00:00Z\ntarget: {parts.path[1:]}\n"
        )
    archives = ", ".join(f"a{number}" for number in range(len(hosts)))
    (tmp_path / "ibistatic.yaml").write_text(
        f"site-url: https://ibi.example.org/\narchives: [{archives}]\noutput: site\n"
    )
    assert main(["build", "--quiet", "--config", str(tmp_path / "ibistatic.yaml")]) == 0
    return tmp_path / "site"


def linkcheck(site: Path, *options: str) -> tuple[float, dict[str, str], str]:
    """Run ``ibistatic linkcheck`` as a process: (seconds, url -> error, stderr)."""
    report = site.parent / "broken.csv"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "ibistatic", "linkcheck", "--site", str(site), "--quiet"]
        + ["--csv", str(report), "--per-host-rate", "1000", *options],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=str(ROOT),
        timeout=60,
    )
    seconds = time.monotonic() - started
    assert result.returncode in (0, 1), result.stderr
    rows = list(csv.DictReader(io.StringIO(report.read_text(encoding="utf-8"))))
    return seconds, {row["url"]: row["error"] for row in rows}, result.stderr


def test_published_targets_are_the_urls_given(tmp_path):
    from ibistatic.linkcheck import published_targets

    urls = ["http://127.0.0.1:9/a/x.pdf", "http://[::1]:9/b/y.pdf"]
    site = make_site(tmp_path, urls)
    assert sorted(t.url for t in published_targets(site / "index")) == sorted(urls)


def test_a_dripping_or_slowly_redirecting_target_is_cut_at_the_timeout(tmp_path):
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nX-Padding: " + b"x" * 200 + b"\r\n\r\n"

    def dripping(method: str, path: str, sock: socket.socket) -> None:
        if path.endswith("/head.pdf"):  # the status line and headers, a byte at a time
            drip(sock, head, 0.05)
        elif path.endswith("/body.pdf"):  # HEAD refused; the GET's body, a byte at a time
            if method == "HEAD":
                return answer(sock, "405 Method Not Allowed")
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n")
            drip(sock, b"x" * 5000, 0.05)
        elif "/hop" in path:  # each answer well within the timeout, the chain not
            step = int(path.rsplit("hop", 1)[1].split(".")[0])
            time.sleep(0.3)
            answer(sock, "302 Found", path.replace(f"hop{step}.", f"hop{step + 1}."))

    with Target("127.0.0.1", dripping) as host:
        urls = [host.url(f"/d/{name}") for name in ("head.pdf", "body.pdf", "hop0.pdf")]
        site = make_site(tmp_path, urls)
        seconds, broken, _ = linkcheck(
            site, "--timeout", str(TIMEOUT), "--allow-private", "127.0.0.1"
        )
    # before: each read was timed alone, and every one of them came in time: all three
    # "worked" (the first after 13 s, the second after 250 s)
    assert broken == {url: f"no answer within {TIMEOUT:g} s" for url in urls}
    assert seconds < 10  # the three at once, each cut at 1 s, plus the start of Python


HIDDEN = [
    ("127.0.0.2", "loopback"),
    ("169.254.169.254", "link-local"),
    ("10.0.0.1", "private"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("0.0.0.0", "unspecified"),
]


def test_redirects_to_internal_addresses_are_not_followed(tmp_path):
    """The first host is allowed (127.0.0.1/32, as an intranet Archive would be); each
    redirect leads to another internal address, which is never connected to."""
    with contextlib.ExitStack() as stack:
        trap = stack.enter_context(Target("127.0.0.2", lambda *_: None))
        traps = [trap]
        if socket.has_ipv6:
            with contextlib.suppress(OSError):
                traps.append(stack.enter_context(Target("::1", lambda *_: None)))
        six = traps[-1].port if len(traps) > 1 else 9

        def places(_method: str, path: str, sock: socket.socket) -> None:
            name = path.rsplit("/", 1)[1]
            locations = {
                "lo.pdf": f"http://127.0.0.2:{trap.port}/x",
                "meta.pdf": "http://169.254.169.254/latest/meta-data/",
                "private.pdf": "http://10.0.0.1/",
                "six.pdf": f"http://[::1]:{six}/x",
                "mapped.pdf": f"http://[::ffff:127.0.0.2]:{trap.port}/x",
                "zero.pdf": f"http://0.0.0.0:{trap.port}/x",
                "decimal.pdf": f"http://2130706434:{trap.port}/x",  # 127.0.0.2
                "relative.pdf": f"//127.0.0.2:{trap.port}/x",
            }
            answer(sock, "301 Moved Permanently", locations.get(name))

        host = stack.enter_context(Target("127.0.0.1", places))
        names = ["lo", "meta", "private", "six", "mapped", "zero", "decimal", "relative"]
        urls = [host.url(f"/r/{name}.pdf") for name in names]
        site = make_site(tmp_path, urls)
        _, broken, _ = linkcheck(site, "--timeout", "5", "--allow-private", "127.0.0.1/32")
        assert [trap.connections for trap in traps] == [0] * len(traps)
    reasons = [broken[url] for url in urls]
    assert all(reason.startswith("not checked: ") for reason in reasons), reasons
    assert reasons[0] == "not checked: 127.0.0.2: loopback address (--allow-private to check it)"
    assert reasons[1].endswith(": link-local address (--allow-private to check it)")
    assert "private address" in reasons[2]
    assert reasons[6] == (
        "not checked: 2130706434 (127.0.0.2): loopback address (--allow-private to check it)"
    )


def test_internal_targets_are_not_asked_unless_allowed(tmp_path):
    def ok(_method: str, _path: str, sock: socket.socket) -> None:
        answer(sock, "200 OK")

    with Target("127.0.0.1", ok) as host:
        urls = [host.url("/a/x.pdf"), f"http://localhost:{host.port}/b/y.pdf"]
        site = make_site(tmp_path, urls)
        _, broken, _ = linkcheck(site, "--timeout", "5")
        assert host.connections == 0
        assert broken == {
            urls[0]: "not checked: 127.0.0.1: loopback address (--allow-private to check it)",
            urls[1]: broken[urls[1]],
        }
        assert broken[urls[1]].startswith("not checked: localhost (")
        _, broken, _ = linkcheck(site, "--timeout", "5", "--allow-private")
        assert broken == {} and host.connections == 2


@pytest.mark.parametrize(
    "address, kind",
    HIDDEN
    + [
        ("192.168.1.1", "private"),
        ("172.16.0.1", "private"),
        ("100.64.0.1", "private"),  # shared address space (carrier-grade NAT)
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "private"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("::", "unspecified"),
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("2002:a9fe:a9fe::1", "link-local"),  # 6to4 of 169.254.169.254
        ("::127.0.0.1", "loopback"),  # IPv4-compatible
        ("8.8.8.8", None),
        ("2001:4860:4860::8888", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_internal_addresses(address, kind):
    assert internal_kind(ipaddress.ip_address(address)) == kind


def test_a_bad_network_is_a_usage_error():
    result = subprocess.run(
        [sys.executable, "-m", "ibistatic", "linkcheck", "--allow-private", "10.0.0.0/33"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=30,
    )
    assert result.returncode == 2
    assert (
        "argument --allow-private: '10.0.0.0/33': expected an address or a network, "
        "such as 10.1.0.0/16" in result.stderr
    )
