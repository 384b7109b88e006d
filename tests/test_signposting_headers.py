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
from ibistatic.cli import main
from ibistatic.core.http import header_value
from ibistatic.index.reader import Index
from ibistatic.site.pagelinks import PageLinks, all_page_links, page_patterns
from ibistatic.site.serverconfs import nginx_key_limit
from ibistatic.site.serverlinks import apache_links, nginx_links, page_uris
from ibistatic.site.signposting import Link, link_header, uri_reference
from ibistatic.web.app import ArchiveApp
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
    includes, ports = _vhosts(kind, sites, workdir)  # nginx: its default bucket size
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


def test_the_hostile_targets_are_percent_encoded_in_the_header(server, sites):
    _, ports = server
    header = get(ports["hostile"], "/record/example.org/hostile/2020/01.01.00.00/").getheader(
        "Link"
    )
    files = "<https://files.example.org/a%22b%3Ec,d;e/%C3%A7%C3%A3o/example.org/hostile/"
    assert files + '2020/01.01.00.00/q%22uote%3E,semi;colon.txt>;rel="item";type="text/plain"' in (
        header
    )
    assert "break" not in header  # the file with CR/LF in its name is not published
    assert [rel for rel, *_ in parse_link_header(header)] == [
        "cite-as",
        "describedby",
        "describedby",
        "item",
        "item",
        "item",
        "type",
        "type",
    ]


# -- the pure parts ----------------------------------------------------------------------


HOSTILE_HREFS = [
    'https://h.example/a"b>c,d;e',
    "https://h.example/line\r\nbreak\tand space",
    "https://h.example/ção/ü?q=ñ#frag",
    "https://h.example/<tag>/%41%zz/100%",
    "https://h.example/{a}|b\\c^d`e",
]


@pytest.mark.parametrize("href", HOSTILE_HREFS)
def test_a_hostile_target_parses_back_to_the_same_link(href):
    value = link_header((Link(href, "item", "text/plain"), Link("https://s/x", "cite-as")))
    assert value.isascii() and not re.search(r"[\s\x00-\x1f]", value)
    assert header_value(value) == value  # nothing left for serve to escape
    (rel, got, kind, _), cite = parse_link_header(value)
    assert (rel, unquote(got), kind) == ("item", unquote(href), "text/plain")
    assert cite == ("cite-as", "https://s/x", None, None)
    assert uri_reference(got) == got  # already a URI-Reference


def test_uri_reference_keeps_escapes_and_encodes_a_lone_percent():
    assert uri_reference("https://h/%C3%A7 %zz%") == "https://h/%C3%A7%20%25zz%25"
    assert uri_reference("https://h/a,b;c=d?e=f&g#h") == "https://h/a,b;c=d?e=f&g#h"


def test_a_link_whose_parameter_cannot_be_quoted_is_left_out():
    links = (Link("https://s/a", "item", 'text/"x"'), Link("https://s/b", "cite-as"))
    assert link_header(links) == '<https://s/b>;rel="cite-as"'


def test_a_page_with_too_many_links_has_them_on_the_page_only(tmp_path):
    archive = write_archive(
        tmp_path / "many", "many.example.org", "example.org/many/2019/01.01.00.00"
    )
    files = {f"figure-{n:03d}-{'x' * 40}.png": "png\n" for n in range(80)}
    write_item(
        archive,
        "example.org/many/2020/01.01.00.00",
        files,
        state="Original",
        target=sorted(files)[0],
        dublin_core={"title": ["Many figures"]},
    )
    site = build(tmp_path, [archive], site_url=SITE_URL)
    app = ArchiveApp(site)
    record = "/record/example.org/many/2020/01.01.00.00/"
    page = (site / record[1:] / "index.html").read_bytes()
    assert len(page_links(page)) == 85 and len(link_header_of(app, record)) == 0
    metadata = "/metadata/example.org/many/2020/01.01.00.00/"
    assert (
        header_matches_page(
            link_header_of(app, metadata)[0], (site / metadata[1:] / "index.html").read_bytes()
        )
        is None
    )
    assert record[1:] + "index.html" not in dict(all_page_links(Index(site)))


def link_header_of(app, target: str) -> list[str]:
    return [value for name, value in app.respond("GET", target, {}).headers if name == "Link"]


def test_serve_looks_up_only_the_keys_a_page_names(sites):
    index = Index(sites["sample"])
    asked = []
    records = index.records
    index.records = lambda key: asked.append(key) or records(key)
    links = PageLinks(index)
    assert asked == []  # nothing read to start: any size of index
    assert links.header("record/iconet.com.br/banon/2009/09.09.22.01/index.html")
    assert asked == ["iconet.com.br/banon/2009/09.09.22.01"]
    assert links.header("files/8JMKD3MGP8W/35MMLL8/index.html") is None
    assert links.header("index.html") is None and links.header("assets/x/index.html") is None
    assert links.header("record/iconet.com.br/banon/2009/09.09.22.01/index.html")
    # the file list's template names the IBIp: its records name the repository
    assert asked[1:] == ["8JMKD3MGP8W/35MMLL8", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"]


def test_the_url_templates_name_the_pages_items():
    patterns = page_patterns(
        [
            ("{site}record/{repository}/", ""),
            ("{site}files/{ibip}/{address}/list.html?x={repository}", "a.example"),
            ("http://{address}/col/{repository}/doc/", "a.example"),  # outside the site
            ("{site}static/list.html", ""),  # names no item
        ]
    )
    assert [p.pattern for p in patterns] == [
        r"record/(?P<repository>[^?#\x00-\x1f]+?)/index\.html",
        r"files/(?P<ibip>[^?#\x00-\x1f]+?)/a\.example/list\.html",
    ]
    assert patterns[1].fullmatch("files/8JMKD3MGP8W/35MMLL8/a.example/list.html")["ibip"] == (
        "8JMKD3MGP8W/35MMLL8"
    )


def test_nginx_keys_a_page_by_its_folder_number_and_item_within_its_bucket():
    links = [
        ("record/" + "a" * 45 + "/index.html", "<https://s/a>"),  # 47 bytes: too long
        ("record/" + "b" * 44 + "/index.html", "<https://s/b>"),  # 46: fits
        ("files/x/index.html", "<https://s/x>"),
        ("record/Ab/index.html", "<https://s/1>"),  # one key, two values: neither
        ("record/aB/index.html", "<https://s/2>"),
        ("record/cd/index.html", "<https://s/3>"),  # one key, one value: both
        ("record/CD/index.html", "<https://s/3>"),
        ("index.html", "<https://s/top>"),  # in no folder of its own
    ]
    made = nginx_links(links, nginx_key_limit(64))
    assert made.folders == ["files", "record"]
    assert made.entries == [
        ("0/x", "<https://s/x>"),
        ("1/" + "b" * 44, "<https://s/b>"),
        ("1/cd", "<https://s/3>"),
    ]
    assert made.left_out == 4


def test_server_config_nginx_maps_every_sample_page_at_the_default_bucket(sites, capsys):
    site = sites["sample"]
    assert main(["server-config", "nginx", "--site", str(site)]) == 0
    out = capsys.readouterr().out
    assert "and 0 pages are\n# sent without their Signposting Link header" in out
    prefix = re.search(r"map \$uri \$(ibistatic_[0-9a-f]{8})_page \{", out).group(1)
    assert [line for line in out.splitlines() if "index\\\\.html$" in line] == [
        f'    "~^/{folder}/(.+?)/+index\\\\.html$" "{code}/$1";'
        for code, folder in enumerate(["files", "metadata", "record"])
    ]
    start = out.index(f"map ${prefix}_page ${prefix}_link {{\n")
    block = out[start : out.index("\n}\n", start)].splitlines()[1:]
    pages = sorted(
        f"{['files', 'metadata', 'record'].index(page.parts[0])}/{'/'.join(page.parts[1:-1])}"
        for folder in ("files", "metadata", "record")
        for page in (p.relative_to(site) for p in (site / folder).rglob("index.html"))
    )
    assert [line.split('"')[1] for line in block] == pages
    assert f"    add_header Link ${prefix}_link;" in out


def test_apache_cuts_long_values_between_links_and_leaves_out_what_cannot_fit():
    links = [Link(f"https://s/{n:04d}/" + "x" * 200, "item") for n in range(12)]
    value = link_header(tuple(links))
    long = "<https://s/" + "y" * 1200 + '>;rel="item"'
    made = apache_links([("record/a/index.html", value), ("record/b/index.html", long)], "/")
    assert (made.chunks, made.left_out) == (3, 1)  # four links of 228 bytes a chunk
    chunks = [line.split(" ", 1)[1] for line in made.lines if line.startswith("link")]
    assert [line.split(" ")[0] for line in made.lines][:5] == [
        "link1:/record/a/index.html",
        "link2:/record/a/index.html",
        "link3:/record/a/index.html",
        "link1:/record/a/",
        "link2:/record/a/",
    ]
    assert all(len(line.encode()) <= 1000 for line in made.lines)
    assert ",".join(chunks[:3]) == value
    assert not any("record/b" in line for line in made.lines)


def test_server_config_apache_sends_the_chunks_as_one_header(sites, tmp_path, capsys):
    output = tmp_path / "ibi.conf"
    assert (
        main(["server-config", "apache", "--site", str(sites["sample"]), "--output", str(output)])
        == 0
    )
    capsys.readouterr()
    vhost = output.read_text(encoding="utf-8")
    assert "# 0 pages are sent without their Signposting Link header" in vhost
    rules = (tmp_path / "ibi.rewritemap.txt").read_text(encoding="utf-8")
    assert "\nlink2:/record/iconet.com.br/banon/2009/09.09.22.01/ <" in rules
    prefix = re.search(r"RewriteMap (ibistatic_[0-9a-f]{8}) ", vhost).group(1)
    variable = prefix.upper() + "_LINK"
    assert f'        Header set Link "%{{{variable}1}}e" env={variable}1\n' in vhost
    assert f'        Header append Link "%{{{variable}2}}e" env={variable}2\n' in vhost
