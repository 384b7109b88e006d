"""``ibistatic linkcheck``: does every published item's target still answer?

The targets come from the JSON index of a built site (each Archive's record of each item,
once per URL); each URL is asked concurrently, politely:

- at most ``per_host_rate`` requests a second to one host (every request counts: HEAD,
  the GET that follows a refused HEAD, each redirect), and the URLs are interleaved by host
  so that a slow host does not hold every worker;
- ``HEAD`` first; a HEAD answered with an error status is asked again with ``GET`` (some
  servers refuse HEAD), reading no more than a few bytes of the body;
- redirects are followed up to ``max_redirects``, a URL met twice is a loop;
- every request has a ``timeout`` (connecting, and each read) and says who asks
  (``USER_AGENT``).

A target is broken when its last answer is 400 or more, or when no answer came (timeout,
refused connection, unknown host, redirect loop, too many redirects).  The reports
(:func:`csv_report`, :func:`html_report`) list every broken target with each item whose
target it is.
"""

from __future__ import annotations

import http.client
import json
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


@dataclass(frozen=True)
class Settings:
    concurrency: int = 8
    per_host_rate: float = 2.0  # requests a second to one host
    timeout: float = 10.0  # seconds
    max_redirects: int = 10
    user_agent: str = USER_AGENT


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

    def wait(self, host: str) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


def _host_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.lower()}"


class _NoAnswer(Exception):
    """No HTTP answer came: the reason is the message."""


def _ascii_url(url: str) -> str:
    return url if url.isascii() else quote(url, safe=_URL_SAFE)


def _request(method: str, url: str, settings: Settings, pacer: HostPacer) -> tuple[int, str, str]:
    """One request: (status, reason, Location header or '')."""
    parts = urlsplit(_ascii_url(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _NoAnswer(f"not an http(s) URL: {url}")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    pacer.wait(_host_key(url))
    connection = None
    try:
        connection = kind(parts.hostname, parts.port, timeout=settings.timeout)
        connection.request(
            method, path, headers={"User-Agent": settings.user_agent, "Accept": "*/*"}
        )
        response = connection.getresponse()
        if method == "GET":
            response.read(1024)  # enough to know the body comes; never a whole file
        return response.status, response.reason, response.getheader("Location") or ""
    except (TimeoutError, socket.timeout):
        raise _NoAnswer(f"no answer within {settings.timeout:g} s") from None
    except ConnectionRefusedError:
        raise _NoAnswer("connection refused") from None
    except socket.gaierror:
        raise _NoAnswer(f"unknown host {parts.hostname}") from None
    except ssl.SSLError as error:
        raise _NoAnswer(f"TLS error: {error.reason or error}") from None
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise _NoAnswer(f"{type(error).__name__}: {error}") from None
    finally:
        if connection is not None:
            connection.close()


def _ask(url: str, settings: Settings, pacer: HostPacer) -> tuple[str, int, str, str]:
    """HEAD, and GET when HEAD is answered with an error: (method, status, reason, location)."""
    status, reason, location = _request("HEAD", url, settings, pacer)
    if status >= 400:
        status, reason, location = _request("GET", url, settings, pacer)
        return "GET", status, reason, location
    return "HEAD", status, reason, location


def check_url(url: str, settings: Settings, pacer: HostPacer) -> Outcome:
    """Follow `url` to its last answer (redirects up to the limit, loops detected)."""
    chain = [url]
    current = url
    while True:
        try:
            method, status, reason, location = _ask(current, settings, pacer)
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
