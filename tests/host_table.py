"""What each host answers for the URL forms a user cites (issue 38), observed: the table
of docs/hosting.md ("Host by URL form") is rendered from it.

Fourteen forms on the bundled sample (:data:`FORMS`), asked of seven hosts, each serving
the sample built with its profile for :data:`SITE_URL`:

- ``serve``: ``ibistatic serve`` over the portable build;
- ``nginx``, ``Apache``: ``ibistatic server-config``'s virtual hosts, ``ibistatic serve``
  behind them (tests/test_real_servers.py starts them);
- ``Cloudflare``: ``wrangler pages dev`` (tests/host_engines.py);
- ``Netlify``: Netlify's redirect engine as ``netlify dev`` runs it (host_engines);
- ``GitHub Pages``: a plain static server answering as GitHub Pages does (a folder's
  ``index.html``, ``404.html`` with 404; site_helpers.SiteServer);
- ``S3``: :class:`S3Website`, an S3 website endpoint: files, ``index.html`` for folders,
  ``404.html`` on a miss, and a 301 for each object redirect of the build's manifest,
  reading ``+`` in a path as a space as S3 does.

For each (host, form): ``curl`` (one GET, no redirect followed) is right when status and
Location are what ``ibistatic serve`` answers (host_engines.expected); a 301 to the
right Location is counted right and shown as such (:data:`PERMANENT`: S3 has no other
redirect status); headless Chromium is right when it lands on that Location, or shows
the alert (410: deleted; 404: not found or unavailable).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from host_engines import (
    NETLIFY_ENGINE,
    NODE,
    NODE_MODULES,
    WRANGLER,
    Wrangler,
    ask,
    expected,
    netlify_server,
)
from host_engines import missing as missing_node
from ibistatic.config import load_config
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from ibistatic.site.hosts.s3 import MANIFEST
from serve_process import running, serve_command
from site_helpers import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    SAMPLE,
    SITE_HOST,
    SITE_URL,
    LandingServer,
    SiteServer,
    _serving,
    write_config,
)

ROOT = Path(__file__).resolve().parent.parent
LAND_PAGES = ROOT / "tests" / "js" / "land_pages.js"
PUPPETEER = NODE_MODULES / "puppeteer-core"

#: the URL forms a user cites (label, path after the site URL as a client sends it)
FORMS = (
    ("IBIp", "8JMKD3MGP8W/35MMLL8"),
    ("IBIp in lower case", "8jmkd3mgp8w/35mmll8"),
    ("repository name", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"),
    ("`!` (latest edition)", "8JMKD3MGP8W/35MMLL8!"),
    ("`:` (metadata)", "8JMKD3MGP8W/35MMLL8:"),
    ("`:(oai_dc)`", "8JMKD3MGP8W/35MMLL8:(oai_dc)"),
    ("`!:(oai_dc)` (the README's)", "8JMKD3MGP8W/35MMLL8!:(oai_dc)"),
    ("`+(pt)` (translation)", "8JMKD3MGP8W/35MME4E+(pt)"),
    ("`/ibi/<IBI>`", "ibi/8JMKD3MGP8W/35MMLL8"),
    ("`/rep/<IBI>`", "rep/8JMKD3MGP8W/35MMLL8"),
    ("file path", "LK47B6W/362SFKH/reference.bib"),
    ("`?ibiurl.verblist=GetFileList`", "8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetFileList"),
    ("deleted item (410)", "sid.inpe.br/mtc-m19/2011/05.10.18.31"),
    ("unknown IBI (404)", "8JMKD3MGP8W/3333333"),
)
#: host -> the profiles its build is made with
HOSTS = {
    "serve": (),
    "nginx": ("nginx",),
    "Apache": ("apache",),
    "Cloudflare": ("cloudflare-pages",),
    "Netlify": ("netlify",),
    "GitHub Pages": ("github-pages",),
    "S3": ("s3",),
}
#: the curl cell of a 301 to the right Location (S3 answers no other redirect status)
PERMANENT = "301"
#: the alerts a page shows for an alert status
ALERTS = {404: ("not-found", "unavailable"), 410: ("deleted",)}
START, END = "<!-- host-table -->", "<!-- /host-table -->"


def missing() -> str | None:
    """Why the table cannot be observed here (an engine absent), or None."""
    from test_real_servers import APACHE, NGINX

    why = missing_node(NETLIFY_ENGINE, WRANGLER, PUPPETEER)
    for name, found in (("chromium", CHROMIUM), ("nginx", NGINX), ("apache2", APACHE)):
        if found is None:
            why = why or f"{name} is not installed (scripts/test.sh installs it)"
    return why


@dataclass(frozen=True)
class Cell:
    """One (host, form): what curl got and what it should, where Chromium landed."""

    got: tuple[int, str | None]
    wanted: tuple[int, str | None]
    landed: str
    alert: str | None

    @property
    def curl(self) -> str:
        """ "yes", PERMANENT, or "no (<status got>)"."""
        if self.got == self.wanted:
            return "yes"
        if self.got == (301, self.wanted[1]) and self.wanted[0] in (302, 303):
            return PERMANENT
        return f"no ({self.got[0]})"

    @property
    def browser(self) -> bool:
        status, location = self.wanted
        if location is not None:
            return self.landed == location
        return self.alert in ALERTS.get(status, ())


# -- the S3 website endpoint -----------------------------------------------------------


class S3Website:
    """An S3 website endpoint over a site and its object-redirect manifest."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        lines = (self.root / MANIFEST).read_text(encoding="utf-8").splitlines()
        self.redirects = dict(line.split("\t") for line in lines if not line.startswith("#"))
        self.port = 0

    def answer(self, target: str) -> tuple[int, dict[str, str], Path | None]:
        """(status, headers, file of the body) for a request target."""
        path = urlsplit(target).path  # S3 looks the key up without the query
        key = unquote(path.replace("+", " "))[1:]  # S3 website endpoints: "+" is a space
        if key in self.redirects:
            return 301, {"Location": self.redirects[key]}, None
        file = self.root / key
        if file.is_dir() and not path.endswith("/") and (file / "index.html").is_file():
            return 302, {"Location": path + "/"}, None  # S3's answer for a folder
        if file.is_dir():
            file = file / "index.html"
        if file.is_file():
            return 200, {}, file
        return 404, {}, self.root / "404.html"

    @contextlib.contextmanager
    def running(self):
        website = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                status, headers, file = website.answer(self.path)
                body = file.read_bytes() if file is not None else b""
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", _type(file))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):  # noqa: A002 - the base class's name
                pass

        with _serving(Handler) as server:
            self.port = server.server_address[1]
            yield self


def _type(file: Path | None) -> str:
    if file is not None and file.suffix == ".xml":
        return "application/xml"
    return "text/html; charset=utf-8"


# -- the hosts -------------------------------------------------------------------------


def build_for(directory: Path, profiles: tuple[str, ...]) -> Path:
    """The sample built for SITE_URL with `profiles`, in a folder the servers' workers
    can read."""
    directory.mkdir(mode=0o755, parents=True)
    config = load_config(write_config(directory, (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d")))
    build_site(replace(config, hosts=profiles))
    return config.output


@contextlib.contextmanager
def host_port(host: str, site: Path, work: Path):
    """Start `host` serving `site`; yield its port."""
    if host == "serve":
        with running(serve_command(site)) as (_, port):
            yield port
    elif host in ("nginx", "Apache"):
        with (
            running(serve_command(site)) as (_, resolver),
            _server(host, site, resolver, work) as port,
        ):
            yield port
    elif host == "Cloudflare":
        with Wrangler(site, work).running() as engine:
            yield engine.port
    elif host == "Netlify":
        with netlify_server(site) as port:
            yield port
    elif host == "GitHub Pages":
        with SiteServer(site).running() as server:
            yield server.port
    else:
        with S3Website(site).running() as server:
            yield server.port


@contextlib.contextmanager
def _server(host: str, site: Path, resolver: int, work: Path):
    from test_real_servers import free_port, server_config, start_apache, start_nginx, stop

    port = free_port()
    kind = host.lower()
    vhost = work / f"{kind}-vhost.conf"
    server_config(kind, site, f"http://127.0.0.1:{resolver}", port, vhost)
    start = start_nginx if kind == "nginx" else start_apache
    process = start(work, [vhost], port if kind == "nginx" else [port])
    try:
        yield port
    finally:
        stop(process)


def observe() -> dict[str, dict[str, Cell]]:
    """host -> form label -> Cell: every host built, started, asked with curl, then
    visited by Chromium."""
    # not pytest's tmp (0700 under root): nginx's and Apache's workers must read the sites
    work = Path(tempfile.mkdtemp(prefix="ibistatic-host-table-"))
    work.chmod(0o755)
    try:
        return _observe(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _observe(work: Path) -> dict[str, dict[str, Cell]]:
    sites = {
        host: build_for(work / f"site-{n}", profiles)
        for n, (host, profiles) in enumerate(HOSTS.items())
    }
    wanted = {label: expected(Resolver(sites["serve"]), target) for label, target in FORMS}
    curled: dict[str, dict[str, tuple]] = {}
    with contextlib.ExitStack() as stack:
        ports = {}
        for n, (host, site) in enumerate(sites.items()):
            engine_work = work / f"engine-{n}"
            engine_work.mkdir(mode=0o755)
            ports[host] = stack.enter_context(host_port(host, site, engine_work))
        for host, port in ports.items():
            curled[host] = {label: ask(port, "/" + target)[:2] for label, target in FORMS}
        landing = stack.enter_context(LandingServer().running())
        visited = visit(ports, wanted, landing.port, work)
    return {
        host: {
            label: Cell(curled[host][label], wanted[label], *visited[host, label])
            for label, _ in FORMS
        }
        for host in HOSTS
    }


def visit(ports: dict[str, int], wanted: dict, landing_port: int, work: Path) -> dict:
    """(host, label) -> (the URL Chromium stopped at, the page's alert or None)."""
    flags = [flag for flag in CHROMIUM_FLAGS if flag != "--headless"]
    plan = {
        "site_host": SITE_HOST,
        "landing_port": landing_port,
        "flags": flags,
        "hosts": [
            {
                "host": host,
                "port": port,
                "urls": [
                    {"url": SITE_URL + target, "want": wanted[label][1]} for label, target in FORMS
                ],
            }
            for host, port in ports.items()
        ],
    }
    plan_file = work / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    result = subprocess.run(
        [NODE, str(LAND_PAGES), CHROMIUM, str(plan_file)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"land_pages.js exited with {result.returncode}: {result.stderr[-3000:]}"
        )
    label_of = {SITE_URL + target: label for label, target in FORMS}
    seen = {}
    for line in result.stdout.splitlines():
        page = json.loads(line)
        seen[page["host"], label_of[page["url"]]] = (page["final"], page["alert"])
    return seen


# -- the table -------------------------------------------------------------------------


def counts(cells: dict[str, Cell]) -> tuple[int, int]:
    """(curl right, browser right) of one host's cells; a PERMANENT redirect counts."""
    curl = sum(cell.curl in ("yes", PERMANENT) for cell in cells.values())
    return curl, sum(cell.browser for cell in cells.values())


def render(observed: dict[str, dict[str, Cell]]) -> str:
    """The docs' table: a row per form, a column per host, each cell "curl / browser"."""
    hosts = list(observed)
    lines = [
        "| URL form | " + " | ".join(hosts) + " |",
        "|---" * (len(hosts) + 1) + "|",
    ]
    for label, target in FORMS:
        cells = [observed[host][label] for host in hosts]
        row = [f"{c.curl} / {'yes' if c.browser else 'no'}" for c in cells]
        lines.append(f"| {label}: `{target}` | " + " | ".join(row) + " |")
    totals = [counts(observed[host]) for host in hosts]
    right = [f"**{curl}/{len(FORMS)}** / **{browser}/{len(FORMS)}**" for curl, browser in totals]
    lines.append("| right (curl / browser) | " + " | ".join(right) + " |")
    return "\n".join(lines) + "\n"


def docs_table(text: str) -> str:
    """The text between the table's markers in `text`."""
    return text.split(START + "\n", 1)[1].split(END, 1)[0]


def with_table(text: str, table: str) -> str:
    head, rest = text.split(START + "\n", 1)
    return head + START + "\n" + table + END + rest.split(END, 1)[1]
