"""``ibistatic linkcheck``: does every published item's target still answer?

The targets come from the JSON index of a built site (each Archive's record of each item,
once per URL); each URL is asked concurrently, politely:

- at most ``per_host_rate`` requests a second to one host (every request counts: HEAD,
  the GET that follows a refused HEAD, each redirect), and the URLs are interleaved by host
  so that a slow host does not hold every worker;
- ``HEAD`` first; a HEAD answered with an error status is asked again with ``GET`` (some
  servers refuse HEAD), reading no more than a few bytes of the body;
- redirects are followed up to ``max_redirects``, a URL met twice is a loop;
- every request says who asks (``USER_AGENT``).

Two rules keep a checker that reads URLs written by others from being turned against the
network it runs in, or held by the hosts it asks:

- it never connects to an internal address (loopback, private, link-local, unique local,
  multicast, unspecified, reserved; in IPv4 or IPv6, or IPv4 inside IPv6) unless
  ``allow_private`` names it.  Host names are looked up once, each address is checked,
  and the connection goes to an address that passed (a second lookup could answer
  otherwise); every redirect is checked again;
- ``timeout`` bounds each whole check: the lookups, connections, answers and bodies of
  every request of its redirect chain together (a host that drips its answer a byte at
  a time is cut at the deadline).  The pauses the per-host rate imposes are ours, not
  the host's, and are not counted.

A target is broken when its last answer is 400 or more, or when no answer came (timeout,
refused connection, unknown host, an internal address, redirect loop, too many
redirects).  The reports (:func:`csv_report`, :func:`html_report`) list every broken
target with each item whose target it is.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from . import __version__

__all__ = [
    "Target",
    "Outcome",
    "Settings",
    "Report",
    "published_targets",
    "check_url",
    "check_targets",
    "csv_report",
    "html_report",
    "USER_AGENT",
]

USER_AGENT = f"ibistatic-linkcheck/{__version__} (checks the targets of IBI persistent links)"
REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: characters kept as they are when a URL with non-ASCII text is percent-encoded
_URL_SAFE = "/%:@!$&'()*+,;=-._~?#[]"


@dataclass(frozen=True)
class Target:
    """The target URL of one item, as one Archive gives it."""

    url: str
    ibi: str  # the repository name
    ibip: str | None
    archive: str


@dataclass(frozen=True)
class Outcome:
    """What checking one URL found: the last status (None when no answer came)."""

    url: str
    status: int | None
    reason: str  # "OK", "Not Found", "no answer within 2 s", "redirect loop: ..."
    final_url: str
    method: str = "HEAD"  # of the last request

    @property
    def broken(self) -> bool:
        return self.status is None or self.status >= 400


#: ``allow_private`` that lets the checker reach every internal address
EVERY_ADDRESS = ("0.0.0.0/0", "::/0")


@dataclass(frozen=True)
class Settings:
    concurrency: int = 8
    per_host_rate: float = 2.0  # requests a second to one host
    timeout: float = 10.0  # seconds for one whole check, redirects included
    max_redirects: int = 10
    user_agent: str = USER_AGENT
    #: internal networks the checker may reach anyway ("10.0.0.0/8"; EVERY_ADDRESS: all)
    allow_private: tuple[str, ...] = ()


@dataclass
class Report:
    targets: list[Target]
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # url -> outcome
    seconds: float = 0.0

    def broken(self) -> list[tuple[Target, Outcome]]:
        """Every item whose target is broken, in the order of the targets."""
        return [
            (target, self.outcomes[target.url])
            for target in self.targets
            if self.outcomes[target.url].broken
        ]

    def summary(self) -> str:
        from .summary import counted

        urls = counted(len(self.outcomes), "target URL")
        hosts = counted(len({_host_key(url) for url in self.outcomes}), "host")
        bad = sum(1 for outcome in self.outcomes.values() if outcome.broken)
        return (
            f"checked {urls} of {counted(len(self.targets), 'item')} on {hosts}: "
            f"{bad:,} broken (the target of {counted(len(self.broken()), 'item')}) "
            f"in {self.seconds:.2f} s"
        )


# --- the targets -------------------------------------------------------------------------


def published_targets(index_dir: Path) -> list[Target]:
    """The target URL of every item record of the index (every Archive's copy), once per
    Archive and repository; deleted items (no target) are left out.  Sorted by IBI."""
    found: dict[tuple[str, str], Target] = {}
    for shard in sorted((Path(index_dir) / "shards").glob("*.json")):
        with open(shard, "rb") as handle:
            records = json.load(handle)
        for record in (r for key in sorted(records) for r in records[key]):
            url = record.get("urls", {}).get("target")
            if not url or record.get("state") == "Deleted":
                continue
            target = Target(url, record["repository"], record.get("ibip"), record["archive"])
            found.setdefault((target.archive, target.ibi), target)
    return sorted(found.values(), key=lambda t: (t.ibi, t.archive))


# --- asking politely ---------------------------------------------------------------------


class HostPacer:
    """At most `rate` requests a second to each host, over every thread."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, host: str) -> float:
        """Wait for the next slot of `host`; the seconds waited."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + self.interval
        if slot > now:
            time.sleep(slot - now)
        return max(0.0, slot - now)


def _host_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.lower()}"


class _NoAnswer(Exception):
    """No HTTP answer came: the reason is the message."""


def _ascii_url(url: str) -> str:
    return url if url.isascii() else quote(url, safe=_URL_SAFE)


# --- where the checker may go ------------------------------------------------------------

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: NAT64's well-known prefix (RFC 6052): the last 32 bits are an IPv4 address
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: deprecated IPv4-compatible addresses (RFC 4291 §2.5.5.1): ::a.b.c.d
_COMPATIBLE = ipaddress.IPv6Network("::/96")


def internal_kind(address: Address) -> str | None:
    """What makes `address` internal ("loopback", "link-local", "private", ...), or None
    for a public address.  An IPv6 address that carries an IPv4 one (mapped, 6to4,
    Teredo, NAT64, compatible) is as internal as the IPv4 address it carries."""
    if address.version == 6:
        for inner in _carried(address):
            kind = internal_kind(inner)
            if kind is not None:
                return kind
        if address.is_site_local:
            return "site-local"
    for kind, test in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
    ):
        if test:
            return kind
    return None if address.is_global else "private"


def _carried(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    found = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [inner for inner in found if inner is not None]


def _allowed(address: Address, networks: tuple[ipaddress._BaseNetwork, ...]) -> bool:
    candidates = [address, *(_carried(address) if address.version == 6 else ())]
    return any(inner in network for inner in candidates for network in networks)


def _networks(texts: tuple[str, ...]) -> tuple[ipaddress._BaseNetwork, ...]:
    return tuple(ipaddress.ip_network(text, strict=False) for text in texts)


class _Clock:
    """What is left of one check's time; the pacer's waits are given back."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def give_back(self, seconds: float) -> None:
        self.deadline += seconds

    def expired(self) -> _NoAnswer:
        return _NoAnswer(f"no answer within {self.seconds:g} s")


def _lookup(host: str, port: int, clock: _Clock) -> list[tuple]:
    """getaddrinfo for `host`, given up at the deadline (the system's resolver may take
    far longer: its own timeouts, times its servers, times its attempts)."""
    found: list = []

    def ask() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as error:
            found.append(error)

    thread = threading.Thread(target=ask, name="linkcheck-lookup", daemon=True)
    thread.start()
    thread.join(max(0.0, clock.left()))
    if not found:
        raise clock.expired()
    if isinstance(found[0], socket.gaierror | UnicodeError):
        raise _NoAnswer(f"unknown host {host}")
    if isinstance(found[0], OSError):
        raise _NoAnswer(f"{type(found[0]).__name__}: {found[0]}")
    return found[0]


def _addresses(host: str, port: int, settings: Settings, clock: _Clock) -> list[tuple]:
    """The socket addresses of `host` the checker may connect to: not internal, or in
    ``settings.allow_private``.  None left: :class:`_NoAnswer` naming the first."""
    allowed, refused = [], None
    networks = _networks(settings.allow_private)
    for family, _, _, _, sockaddr in _lookup(host, port, clock):
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        kind = internal_kind(address)
        if kind is None or _allowed(address, networks):
            allowed.append((family, sockaddr))
        elif refused is None:
            refused = (address, kind)
    if not allowed:
        address, kind = refused or (host, "unknown")
        shown = host if _same_address(host, address) else f"{host} ({address})"
        raise _NoAnswer(f"not checked: {shown}: {kind} address (--allow-private to check it)")
    return allowed


def _same_address(host: str, address) -> bool:
    try:
        return ipaddress.ip_address(host) == address
    except ValueError:
        return False


def _connect(addresses: list[tuple], clock: _Clock, cutter: _Cutter) -> socket.socket:
    """A connection to the first of `addresses` that answers, within the clock."""
    error: OSError | None = None
    for family, sockaddr in addresses:
        if clock.left() <= 0:
            raise TimeoutError
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(clock.left())
            cutter.watch(sock)
            sock.connect(sockaddr)
            return sock
        except OSError as failed:
            cutter.forget()
            sock.close()
            error = failed
    raise error or OSError("no address")


class _Cutter:
    """Shuts a connection down when its check's time is up, whatever it waits for (a
    read of a dripping answer, a TLS handshake): a socket timeout bounds one read, and
    a host could send a byte just before each."""

    def __init__(self, seconds: float) -> None:
        self.cut = False
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._fd = sock.fileno()
            if self.cut:
                self._shutdown()

    def forget(self) -> None:
        with self._lock:
            self._fd = None

    def close(self, connection: http.client.HTTPConnection | None) -> None:
        """Stop watching, then close: under the lock, so that the number of the closed
        socket, which a new one may reuse, is never shut down."""
        self._timer.cancel()
        with self._lock:
            self._fd = None
            if connection is not None:
                connection.close()

    def _cut(self) -> None:
        with self._lock:
            self.cut = True
            self._shutdown()

    def _shutdown(self) -> None:
        # By the file descriptor: the socket object may be wrapped in TLS by now.
        if self._fd is None:
            return
        try:
            with socket.socket(fileno=os.dup(self._fd)) as duplicate:
                duplicate.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _request(
    method: str, url: str, settings: Settings, pacer: HostPacer, clock: _Clock
) -> tuple[int, str, str]:
    """One request: (status, reason, Location header or '')."""
    parts = urlsplit(_ascii_url(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _NoAnswer(f"not an http(s) URL: {url}")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    clock.give_back(pacer.wait(_host_key(url)))
    if clock.left() <= 0:
        raise clock.expired()
    connection = None
    cutter = _Cutter(clock.left())
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = _addresses(parts.hostname, port, settings, clock)
        connection = kind(parts.hostname, port, timeout=clock.left())
        # The connection goes to an address checked above, under the host's own name
        # (Host header, TLS server name and certificate): never to a second lookup's.
        connection._create_connection = lambda *_: _connect(addresses, clock, cutter)
        connection.request(
            method, path, headers={"User-Agent": settings.user_agent, "Accept": "*/*"}
        )
        response = connection.getresponse()
        if method == "GET":
            response.read(1024)  # enough to know the body comes; never a whole file
        if cutter.cut:  # a cut answer can read as a whole one: the end of its head
            raise clock.expired()
        return response.status, response.reason, response.getheader("Location") or ""
    except _NoAnswer:
        raise
    except Exception as error:
        if cutter.cut or isinstance(error, TimeoutError | socket.timeout):
            raise clock.expired() from None
        raise _NoAnswer(_reason(error, parts.hostname)) from None
    finally:
        cutter.close(connection)


def _reason(error: Exception, host: str) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"unknown host {host}"
    if isinstance(error, ssl.SSLError):
        return f"TLS error: {error.reason or error}"
    return f"{type(error).__name__}: {error}"


def _ask(
    url: str, settings: Settings, pacer: HostPacer, clock: _Clock
) -> tuple[str, int, str, str]:
    """HEAD, and GET when HEAD is answered with an error: (method, status, reason, location)."""
    status, reason, location = _request("HEAD", url, settings, pacer, clock)
    if status >= 400:
        status, reason, location = _request("GET", url, settings, pacer, clock)
        return "GET", status, reason, location
    return "HEAD", status, reason, location


def check_url(url: str, settings: Settings, pacer: HostPacer) -> Outcome:
    """Follow `url` to its last answer (redirects up to the limit, loops detected), all
    within ``settings.timeout``."""
    chain = [url]
    current = url
    clock = _Clock(settings.timeout)
    while True:
        try:
            method, status, reason, location = _ask(current, settings, pacer, clock)
        except _NoAnswer as error:
            return Outcome(url, None, str(error), current)
        if status not in REDIRECTS or not location:
            return Outcome(url, status, reason, current, method)
        following = urljoin(current, location)
        if following in chain:
            loop = " -> ".join(chain[chain.index(following) :] + [following])
            return Outcome(url, None, f"redirect loop: {loop}", current, method)
        if len(chain) > settings.max_redirects:
            return Outcome(url, None, f"more than {settings.max_redirects} redirects", current)
        chain.append(following)
        current = following


def _interleaved(urls: Iterable[str]) -> list[str]:
    """The URLs taken round robin by host: a slow or paced host holds one worker at a time."""
    by_host: dict[str, list[str]] = {}
    for url in urls:
        by_host.setdefault(_host_key(url), []).append(url)
    queues = list(by_host.values())
    order = []
    for depth in range(max((len(q) for q in queues), default=0)):
        order.extend(queue[depth] for queue in queues if depth < len(queue))
    return order


def check_targets(
    targets: list[Target], settings: Settings, progress: Callable[[int], None] | None = None
) -> Report:
    """Check every distinct URL of `targets` concurrently; `progress(1)` after each."""
    started = time.perf_counter()
    pacer = HostPacer(settings.per_host_rate)
    urls = _interleaved(dict.fromkeys(target.url for target in targets))
    report = Report(targets)
    with ThreadPoolExecutor(max_workers=settings.concurrency) as pool:
        asked = [pool.submit(check_url, url, settings, pacer) for url in urls]
        for done in as_completed(asked):  # counted as they end, not in the order asked
            if progress is not None:
                progress(1)
        for future in asked:
            report.outcomes[future.result().url] = future.result()
    report.seconds = time.perf_counter() - started
    return report


# --- the reports -------------------------------------------------------------------------

CSV_COLUMNS = ("ibi", "ibip", "archive", "url", "status", "error", "final-url")


def _row(target: Target, outcome: Outcome) -> tuple[str, ...]:
    status = "" if outcome.status is None else str(outcome.status)
    error = outcome.reason if outcome.status is None else f"{outcome.status} {outcome.reason}"
    return (
        target.ibi,
        target.ibip or "",
        target.archive,
        target.url,
        status,
        error,
        outcome.final_url,
    )


def csv_report(report: Report) -> str:
    """One row per item whose target is broken (RFC 4180, a header row first)."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for target, outcome in report.broken():
        writer.writerow(_row(target, outcome))
    return out.getvalue()


def html_report(report: Report, checked_at: str) -> str:
    """A self-contained page listing the broken targets (every value escaped)."""
    from html import escape

    rows = []
    for target, outcome in report.broken():
        ibi, ibip, archive, url, _, error, final = (escape(cell) for cell in _row(target, outcome))
        moved = f'<br>ended at <a href="{final}">{final}</a>' if final != url else ""
        rows.append(
            f"<tr><td>{ibi}</td><td>{ibip}</td><td>{archive}</td>"
            f'<td><a href="{url}">{url}</a>{moved}</td><td>{error}</td></tr>'
        )
    body = (
        "<table>\n<thead><tr><th>IBI</th><th>IBIp</th><th>Archive</th><th>Target</th>"
        "<th>Problem</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>"
        if rows
        else "<p>No broken target.</p>"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Broken targets: ibistatic linkcheck</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #1a1a1a; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #767676; padding: .3em .6em; text-align: left; vertical-align: top; }}
td {{ overflow-wrap: anywhere; }}
</style>
</head>
<body>
<main>
<h1>Broken targets</h1>
<p>{escape(report.summary())}; checked at {escape(checked_at)}.</p>
{body}
</main>
</body>
</html>
"""
