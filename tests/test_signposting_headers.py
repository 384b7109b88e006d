"""FAIR Signposting as HTTP ``Link`` headers, asked of the real servers.

Three sites (the bundled sample, the synthetic Archives of tests/url_forms.py with hard
file names, and a hostile Archive whose file-url holds '"', '>', ',', ';' and non-ASCII
and whose files hold them too) are served by ``ibistatic serve``, by nginx and by Apache
(text and dbm maps) with the virtual hosts of ``ibistatic server-config``.  For every
HTML page of the site, asked as its file and (for a folder's ``index.html``) as its
folder, the ``Link`` header, parsed as RFC 8288 says, must list exactly the links of the
page's own ``<link rel>`` elements, parsed from its HTML: none for the pages that carry
none (landing page, 404.html, search) and none for assets and the index.
"""

from __future__ import annotations

import http.client
import re
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from archive_factory import write_archive, write_item
from ibistatic.site.serverlinks import page_uris
from serve_process import running, serve_command
from site_helpers import build
from test_real_servers import (
    APACHE,
    APACHE_MODULE_FILES,
    APACHE_MODULES,
    hashed_map,
    server_config,
    start,
    start_nginx,
    stop,
    subfolder,
    wait_for_port,
    worker_identity,
)
from url_forms import SITE_URL, build_sample_site, build_synthetic_site

HOSTILE_URL = 'https://files.example.org/a"b>c,d;e/ção/{repository}/{path}'
HOSTILE_FILES = {
    'q"uote>,semi;colon.txt': "x\n",
    "ção ü.txt": "y\n",
    "<angle>.pdf": "z\n",
    "line\r\nbreak.txt": "left out by the crawl, with a warning\n",
}
#: the relation types of FAIR Signposting (https://signposting.org/FAIR/); a page's other
#: <link> elements (icon, canonical, stylesheet, alternate) are no signposts
SIGNPOSTS = {
    "author",
    "cite-as",
    "describedby",
    "describes",
    "item",
    "collection",
    "type",
    "license",
}
RESOLVER_DOWN = "http://127.0.0.1:9"  # the pages are files: no resolver needed


# -- parsing, independent of the code under test ---------------------------------------

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_LINK_VALUE = re.compile(
    r"\s*<(?P<href>[^>]*)>(?P<params>(?:\s*;\s*" + _TOKEN + r'\s*=\s*"(?:[^"\\]|\\.)*")*)\s*'
)
_PARAM = re.compile(r"\s*;\s*(" + _TOKEN + r')\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_link_header(value: str) -> list[tuple[str, str, str | None, str | None]]:
    """(rel, href, type, profile) of each link of a Link header (RFC 8288 §3, quoted
    parameters only); an assertion error when the value is not one."""
    links, at = [], 0
    while at < len(value):
        match = _LINK_VALUE.match(value, at)
        assert match, f"not a Link header at {at}: {value[at : at + 80]!r}"
        params = {name: text for name, text in _PARAM.findall(match.group("params"))}
        href = match.group("href")
        assert re.fullmatch(r"[!#-;=?-\[\]_a-z~]*", href, re.I), f"not a URI-Reference: {href}"
        links.append((params.get("rel"), href, params.get("type"), params.get("profile")))
        at = match.end()
        if at < len(value):
            assert value[at] == ",", f"expected ',' at {at}: {value[at : at + 80]!r}"
            at += 1
    return links


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "link" and found.get("rel") in SIGNPOSTS:
            self.links.append((found["rel"], found["href"], found.get("type")))


def page_links(html: bytes) -> list[tuple[str, str, str | None]]:
    parser = _Links()
    parser.feed(html.decode("utf-8"))
    return parser.links


def header_matches_page(header: str | None, html: bytes) -> str | None:
    """What differs between a Link header and the page's <link> elements, or None."""
    wanted = page_links(html)
    got = parse_link_header(header) if header is not None else []
    if header is not None and not got:
        return "an empty Link header"
    # the same URI, percent-encoded where the header must (RFC 3986 §6.2.2.2)
    if [(rel, unquote(href), kind) for rel, href, kind, _ in got] != [
        (rel, unquote(href), kind) for rel, href, kind in wanted
    ]:
        return f"header {got} != page {wanted}"
    profiles = [(rel, kind, profile) for rel, _, kind, profile in got if profile]
    if any(p != ("describedby", "application/xml", OAI) for p in profiles):
        return f"unexpected profile: {profiles}"
    return None


OAI = "http://www.openarchives.org/OAI/2.0/oai_dc/"


# -- the sites ---------------------------------------------------------------------------


def build_hostile_site(directory: Path) -> Path:
    archive = write_archive(
        directory / "archives" / "hostile",
        "hostile.example.org",
        "example.org/hostile/2019/01.01.00.00",
        **{"file-url": HOSTILE_URL},
    )
    write_item(
        archive,
        "example.org/hostile/2020/01.01.00.00",
        HOSTILE_FILES,
        state="Original",
        ibip="J8LNKB5R7W/3ABCDG",
        target="ção ü.txt",
        dublin_core={"title": ['Mapa "São José" <2014>, a; b'], "type": ["Dataset"]},
    )
    write_item(archive, "example.org/hostile/2020/02.02.00.00", state="Deleted")
    return build(directory, [archive], site_url=SITE_URL)


@pytest.fixture(scope="module")
def readable_tmp():
    """A folder the servers' unprivileged workers can read, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="ibistatic-links-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def sites(readable_tmp) -> dict[str, Path]:
    return {
        "sample": build_sample_site(subfolder(readable_tmp, "sample")),
        "synthetic": build_synthetic_site(subfolder(readable_tmp, "synthetic")),
        "hostile": build_hostile_site(subfolder(readable_tmp, "hostile")),
    }


def asked_paths(site: Path) -> list[tuple[str, Path]]:
    """(request path, file) of every HTML page of the site's own folders (a folder's
    page also as the folder) and of a few files that are no pages."""
    asked = [("/", site / "index.html"), ("/404.html", site / "404.html")]
    for folder in ("record", "metadata", "files", "search"):
        for page in sorted((site / folder).rglob("*.html")):
            relative = page.relative_to(site).as_posix()
            for uri in page_uris(relative, "/"):
                asked.append((quote(uri), page))
    for other in ("index/manifest.json", "assets/ibistatic.css", "sitemap.xml"):
        asked.append(("/" + other, site / other))
    return asked


def signposted(site: Path) -> int:
    return sum(1 for _, page in asked_paths(site) if b'rel="cite-as"' in page.read_bytes())


def get(port: int, path: str, method="GET", headers=None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response
    finally:
        connection.close()


def differences(port: int, site: Path) -> list:
    wrong = []
    for path, page in asked_paths(site):
        response = get(port, path)
        if response.status != 200:
            wrong.append((path, response.status))
            continue
        header = response.getheader("Link")
        if page.suffix != ".html":
            if header is not None:
                wrong.append((path, "a Link header on a file that is no page"))
            continue
        problem = header_matches_page(header, page.read_bytes())
        if problem:
            wrong.append((path, problem))
    return wrong


# -- the servers -------------------------------------------------------------------------


def start_apache_with_headers(workdir: Path, includes: list[Path], ports: list[int]):
    """Apache as tests/test_real_servers.py starts it, with mod_headers (which the
    Link header needs: `a2enmod headers`)."""
    if APACHE is None:
        pytest.skip("Apache is not installed (scripts/test.sh installs apache2)")
    modules = {**APACHE_MODULE_FILES, "headers_module": "mod_headers.so"}
    load = "\n".join(f"LoadModule {name} {APACHE_MODULES / file}" for name, file in modules.items())
    types = "/etc/mime.types" if Path("/etc/mime.types").exists() else "/dev/null"
    listen = "\n".join(f"Listen 127.0.0.1:{port}" for port in ports)
    include = "\n".join(f'Include "{path}"' for path in includes)
    conf = workdir / "httpd.conf"
    conf.write_text(
        f"ServerRoot {workdir}\n{load}\nPidFile {workdir}/httpd.pid\n"
        f"DefaultRuntimeDir {workdir}\nErrorLog {workdir}/error.log\nLogLevel warn\n"
        f"TypesConfig {types}\n{worker_identity()}{listen}\nServerName 127.0.0.1\n{include}\n"
    )
    return start([APACHE, "-f", str(conf), "-DFOREGROUND"], ports[0], workdir / "error.log")


def free_port() -> int:
    from test_real_servers import free_port as free

    return free()


def _vhosts(kind: str, sites: dict, workdir: Path, *more: str) -> tuple[list, dict]:
    includes, ports = [], {}
    for name, site in sites.items():
        ports[name] = free_port()
        output = workdir / f"{name}.conf"
        server_config(kind.split("-")[0], site, RESOLVER_DOWN, ports[name], output, *more)
        if kind == "apache-dbm":
            hashed_map(output)
        includes.append(output)
    return includes, ports


@pytest.fixture(scope="module", params=["serve", "nginx", "apache", "apache-dbm"])
def server(request, sites, readable_tmp):
    """(kind, site name -> port): every site served by one kind of server."""
    kind = request.param
    if kind == "serve":
        with (
            running(serve_command(sites["sample"])) as (_, sample),
            running(serve_command(sites["synthetic"])) as (_, synthetic),
            running(serve_command(sites["hostile"])) as (_, hostile),
        ):
            yield kind, {"sample": sample, "synthetic": synthetic, "hostile": hostile}
        return
    workdir = subfolder(readable_tmp, kind + "-links")
    bigger = ("--map-bucket-size", "128") if kind == "nginx" else ()
    includes, ports = _vhosts(kind, sites, workdir, *bigger)
    if kind == "nginx":
        process = start_nginx(workdir, includes, next(iter(ports.values())))
        log = workdir / "nginx.log"
    else:
        process = start_apache_with_headers(workdir, includes, list(ports.values()))
        log = workdir / "error.log"
    try:
        for port in ports.values():
            wait_for_port(port, process, log)
        yield kind, ports
    finally:
        stop(process)


# -- the tests ---------------------------------------------------------------------------


@pytest.mark.server
@pytest.mark.parametrize("name", ["sample", "synthetic", "hostile"])
def test_every_page_says_its_links_in_a_link_header(server, sites, name):
    _, ports = server
    site = sites[name]
    assert signposted(site) >= {"sample": 72, "synthetic": 30, "hostile": 6}[name]
    assert differences(ports[name], site) == []


@pytest.mark.server
def test_head_and_304_carry_the_link_header_too(server, sites):
    kind, ports = server
    page = "/record/iconet.com.br/banon/2009/09.09.22.01/"
    full = get(ports["sample"], page)
    expected = full.getheader("Link")
    assert expected and expected.startswith("<http://127.0.0.1:8080/LK47B6W/362SFKH>;")
    assert get(ports["sample"], page, "HEAD").getheader("Link") == expected
    again = get(ports["sample"], page, headers={"If-None-Match": full.getheader("ETag")})
    assert again.status == 304
    assert again.getheader("Link") == expected
