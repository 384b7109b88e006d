"""Shared helpers of the site tests: building a site in tmp, loopback HTTP servers, and
headless Chromium.

- :func:`build` writes an ``ibistatic.yaml`` next to the site and builds it.
- :class:`SiteServer` serves a built site like a static host: ``/<dir>`` redirects to
  ``/<dir>/``, a directory serves its ``index.html``, and a missing path gets
  ``404.html`` with status 404.
- :class:`LandingServer` is the catch-all for every other host (the Archives'
  addresses): it records the Host and path asked for and answers a page that shows the
  absolute URL it was asked for.
- :func:`chromium_dom` loads one URL in a fresh headless Chromium whose resolver maps the
  site's host to the site server and every other host to the landing server.

Every server binds 127.0.0.1 on a free port and is stopped by the context manager that
started it.
"""

from __future__ import annotations

import contextlib
import html
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "ibistatic" / "sample_archive"
SITE_HOST = "ibi.example.org"
SITE_URL = f"http://{SITE_HOST}/"
CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)
#: the flags the brief asks for, plus those that keep Chromium's own services quiet
#: (HTTPS upgrades would send TLS handshakes to the loopback servers)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-default-browser-check",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,MediaRouter,OptimizationHints,Translate",
)
#: hosts Chromium itself may contact despite the flags; never an answer of the site
BACKGROUND_HOSTS = ("google.com", "googleapis.com", "gvt1.com", "gstatic.com")


def write_config(
    directory: Path,
    archives,
    *,
    site_url: str = SITE_URL,
    modifiers="default",
    output: str = "site",
    hosts: tuple[str, ...] = (),
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = {
        "site-url": site_url,
        "archives": [str(Path(a).resolve()) for a in archives],
        "output": output,
        "modifiers": modifiers if isinstance(modifiers, str) else list(modifiers),
    }
    if hosts:
        config["hosts"] = list(hosts)
    path = directory / "ibistatic.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def build(directory: Path, archives=(SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"), **options) -> Path:
    """Build `archives` into `directory`/site; return the site's path."""
    from ibistatic.config import load_config
    from ibistatic.site.build import build_site

    config = load_config(write_config(directory, archives, **options))
    build_site(config)
    return config.output


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` (relative path -> bytes)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


# ----------------------------------------------------------------------------------
# Servers


@dataclass
class Request:
    host: str
    path: str
    accept_language: str | None

    @property
    def url(self) -> str:
        return f"http://{self.host}{self.path}"


@dataclass
class _Log:
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        with self.lock:
            self.requests.append(
                Request(
                    handler.headers.get("Host", ""),
                    handler.path,
                    handler.headers.get("Accept-Language"),
                )
            )

    def snapshot(self) -> list[Request]:
        with self.lock:
            return list(self.requests)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Quiet:
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def _serving(handler_class):
    server = _Server(("127.0.0.1", 0), handler_class)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class SiteServer:
    """A static host over `root`; ``.log.requests`` records what was asked."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.log = _Log()
        self.port = 0

    @contextlib.contextmanager
    def running(self):
        root, log = str(self.root), self.log

        class Handler(_Quiet, http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=root, **kwargs)

            def do_GET(self):
                log.add(self)
                super().do_GET()

            def send_error(self, code, message=None, explain=None):
                page = os.path.join(root, "404.html")
                if code != 404 or not os.path.exists(page):
                    return super().send_error(code, message, explain)
                with open(page, "rb") as handle:
                    body = handle.read()
                self.send_response(404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

        with _serving(Handler) as server:
            self.port = server.server_address[1]
            yield self


class LandingServer:
    """The catch-all for every host but the site's: records Host and path, answers a
    page whose ``#landed`` element holds the absolute URL it was asked for."""

    def __init__(self) -> None:
        self.log = _Log()
        self.port = 0

    @contextlib.contextmanager
    def running(self):
        log = self.log

        class Handler(_Quiet, http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                log.add(self)
                landed = html.escape(f"http://{self.headers.get('Host', '')}{self.path}")
                body = (
                    '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                    f'<p id="landed">{landed}</p><p id="href"></p>'
                    '<script>document.getElementById("href").textContent = location.href;</script>'
                    "</body></html>"
                ).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                self.send_response(204)
                self.end_headers()

        with _serving(Handler) as server:
            self.port = server.server_address[1]
            yield self


def foreign(requests: list[Request]) -> list[Request]:
    """Requests that are not Chromium's own background traffic."""
    return [
        r for r in requests if not any(r.host.split(":")[0].endswith(h) for h in BACKGROUND_HOSTS)
    ]


# ----------------------------------------------------------------------------------
# Chromium


def chromium_dom(
    url: str,
    site_port: int,
    landing_port: int,
    *,
    accept_language: str = "en-US,en",
    budget_ms: int = 5000,
    timeout: float = 60,
) -> str:
    """The DOM after loading `url` (and following its redirects) in a fresh headless
    Chromium, with `accept_language` as the browser's languages.

    ``--dump-dom`` now and then prints nothing when the virtual-time budget ends while a
    navigation is under way (seen on a loaded machine); an empty document is never an
    answer, so it is asked again, with a longer budget.
    """
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed")
    for attempt in range(3):
        dom = _dump_dom(
            url, site_port, landing_port, accept_language, budget_ms * (attempt + 1), timeout
        )
        if "<html" in dom:
            return dom
    return dom


def _dump_dom(
    url: str,
    site_port: int,
    landing_port: int,
    accept_language: str,
    budget_ms: int,
    timeout: float,
) -> str:
    rules = f"MAP {SITE_HOST} 127.0.0.1:{site_port}, MAP * 127.0.0.1:{landing_port}"
    with tempfile.TemporaryDirectory(prefix="ibistatic-chromium-") as profile:
        command = [
            CHROMIUM,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--host-resolver-rules={rules}",
            f"--accept-lang={accept_language}",
            "--dump-dom",
            f"--virtual-time-budget={budget_ms}",
            url,
        ]
        result = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(
            f"chromium exited with {result.returncode}: {result.stderr.decode(errors='replace')[-2000:]}"
        )
    return result.stdout.decode("utf-8", errors="replace")


def landed_url(dom: str) -> str | None:
    """The URL the landing server answered, from its page; None for any other page."""
    start = dom.find('<p id="landed">')
    if start < 0:
        return None
    end = dom.find("</p>", start)
    return html.unescape(dom[start + len('<p id="landed">') : end])


def page_attribute(dom: str, name: str) -> str | None:
    """The value of attribute `name` of the site's ``<main id="ibistatic">`` element."""
    from html.parser import HTMLParser

    found: list[str | None] = []

    class Finder(HTMLParser):
        def handle_starttag(self, tag, attrs):
            values = dict(attrs)
            if tag == "main" and values.get("id") == "ibistatic" and not found:
                found.append(values.get(name))

    Finder().feed(dom)
    return found[0] if found else None


def site_host_of(url: str) -> bool:
    return urlsplit(url).hostname == SITE_HOST


@contextlib.contextmanager
def portuguese_site_servers(directory: Path):
    """The sample site built with ``language: pt`` into `directory`, served with the
    landing server: (site, landing), both running."""
    from ibistatic.config import load_config
    from ibistatic.site.build import build_site

    path = write_config(directory, (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"))
    path.write_text(path.read_text(encoding="utf-8") + "language: pt\n", encoding="utf-8")
    config = load_config(path)
    build_site(config)
    site, landing = SiteServer(config.output), LandingServer()
    with site.running(), landing.running():
        yield site, landing
