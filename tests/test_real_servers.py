"""The generated host files in real servers: nginx and Apache on loopback.

Every persistent URL the host files list is requested from each server (no redirect
following) and must come back with the documented status (302, or 303 for metadata)
and a ``Location`` equal to what the offline resolver answers for it.  The servers are
the Debian binaries (``scripts/test.sh`` installs them); a test skips only when its
binary is absent.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from ibistatic.config import load_config
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from ibistatic.site.hostfiles import (
    HostRule,
    browser_path,
)
from ibistatic.site.serverconfs import (
    apache_conf_text,
    apache_map_text,
    apache_status_text,
    nginx_map_text,
    nginx_server_text,
)

pytestmark = pytest.mark.server

SAMPLE = Path(__file__).resolve().parent.parent / "ibistatic" / "sample_archive"
SITE_URL = "http://127.0.0.1:8080/"
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"])
NGINX = shutil.which("nginx", path=SEARCH_PATH)
APACHE = shutil.which("apache2", path=SEARCH_PATH) or shutil.which("httpd", path=SEARCH_PATH)
APACHE_MODULES = Path("/usr/lib/apache2/modules")
START_TIMEOUT = 15.0
DELETED = "sid.inpe.br/mtc-m19/2011/05.10.18.31"

# Hostile keys and values for the escaping of each file: quotes, backslashes, '$',
# spaces, non-ASCII, and a query that Apache must not take for an unsafe '?'.
HOSTILE = [
    HostRule('a"quote', 302, "https://t.example/q?x=%22&y=1"),
    HostRule("back\\slash", 302, 'https://t.example/b\\s"q'),
    HostRule("dollar$uri", 303, "https://t.example/$uri/$1?a=$b"),
    HostRule("sp ace/é", 302, "https://t.example/%C3%A9%20x"),
    HostRule("paren(x)!:+@", 302, "https://t.example/p?choice=oai_dc&z=%3F"),
    HostRule("gone item", 410, None),
    HostRule("long/" + "x" * 300, 302, "https://t.example/long"),  # nginx hash bucket size
]


def worker_identity() -> str:
    """Apache's User/Group lines: as root, a real unprivileged account (Apache refuses
    root, and its default #-1 is no account); otherwise the lines mean nothing."""
    if os.geteuid() != 0:
        return ""
    import grp

    group = next((name for name in ("nogroup", "nobody") if _has_group(grp, name)), None)
    return "User nobody\n" + (f"Group {group}\n" if group else "")


def _has_group(grp, name: str) -> bool:
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(
        f"the server did not listen on 127.0.0.1:{port} within {START_TIMEOUT} s:\n{_tail(log)}"
    )


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def get(port: int, path: str) -> tuple[int, str | None, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Location"), response.read()
    finally:
        connection.close()


def start_nginx(workdir: Path, site: Path) -> tuple[subprocess.Popen, int]:
    if NGINX is None:
        pytest.skip("nginx is not installed (scripts/test.sh installs nginx-light)")
    port = free_port()
    temp = workdir / "temp"
    temp.mkdir(parents=True, exist_ok=True)
    conf = workdir / "nginx.conf"
    conf.write_text(f"""
worker_processes 1;
pid {workdir}/nginx.pid;
error_log stderr;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {site}/_ibistatic/nginx-map.conf;
    server {{
        listen 127.0.0.1:{port};
        include {site}/_ibistatic/nginx-server.conf;
    }}
}}
""")
    log = workdir / "nginx.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [NGINX, "-p", str(workdir), "-c", str(conf), "-g", "daemon off;"],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        wait_for_port(port, process, log)
    except BaseException:
        stop(process)
        raise
    return process, port


def start_apache(
    workdir: Path, site: Path, snippet: Path | None = None
) -> tuple[subprocess.Popen, int]:
    if APACHE is None:
        pytest.skip("Apache is not installed (scripts/test.sh installs apache2)")
    snippet = snippet or site / "_ibistatic" / "apache.conf"
    port = free_port()
    modules = [
        ("mpm_event_module", "mod_mpm_event.so"),
        ("authz_core_module", "mod_authz_core.so"),
        ("rewrite_module", "mod_rewrite.so"),
        ("dir_module", "mod_dir.so"),
        ("mime_module", "mod_mime.so"),
    ]
    load = "\n".join(f"LoadModule {name} {APACHE_MODULES / file}" for name, file in modules)
    types = (
        "TypesConfig /etc/mime.types"
        if Path("/etc/mime.types").exists()
        else "TypesConfig /dev/null"
    )
    conf = workdir / "apache.conf"
    conf.write_text(f"""
ServerRoot {workdir}
{load}
PidFile {workdir}/httpd.pid
DefaultRuntimeDir {workdir}
ErrorLog {workdir}/error.log
LogLevel warn
{types}
{worker_identity()}Listen 127.0.0.1:{port}
ServerName 127.0.0.1
DocumentRoot "{site}"
<Directory "{site}">
    Require all granted
</Directory>
Include "{snippet}"
""")
    log = workdir / "error.log"
    process = subprocess.Popen(
        [APACHE, "-f", str(conf), "-DFOREGROUND"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, log)
    except BaseException:
        stop(process)
        raise
    return process, port


@pytest.fixture(scope="module")
def readable_tmp():
    """A folder the servers' unprivileged workers can read (pytest's tmp_path is 0700
    under root), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="ibistatic-servers-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def subfolder(parent: Path, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=name + "-", dir=parent))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def site(readable_tmp) -> Path:
    """The sample with every modifier composition, so that the files hold hundreds of
    rules: editions, translations, metadata, oai_dc and the deleted item."""
    work = subfolder(readable_tmp, "sample")
    config = work / "ibistatic.yaml"
    config.write_text(
        f"site-url: {SITE_URL}\n"
        f"archives:\n  - {SAMPLE / 'mtc-m16c'}\n  - {SAMPLE / 'mtc-m16d'}\n"
        "output: site\nmodifiers: all\n"
    )
    build_site(load_config(config))
    return work / "site"


@pytest.fixture(scope="module")
def resolver(site) -> Resolver:
    return Resolver(site)


def start_apache_dbm(workdir: Path, site: Path) -> tuple[subprocess.Popen, int]:
    """Apache with the hashed maps, made as the snippet's comment says."""
    tool = shutil.which("httxt2dbm", path=SEARCH_PATH)
    if APACHE is None or tool is None:
        pytest.skip("Apache or httxt2dbm is not installed (scripts/test.sh installs apache2)")
    folder = site / "_ibistatic"
    snippet = (folder / "apache.conf").read_text(encoding="utf-8").splitlines()
    for command in [line[len("#   ") :] for line in snippet if line.startswith("#   httxt2dbm ")]:
        subprocess.run(
            [tool, *command.split()[1:]], cwd=folder, check=True, timeout=60, capture_output=True
        )
    dbm = [
        line[len("#   ") :]
        for line in snippet
        if line.startswith("#   RewriteMap ") and '"dbm:' in line
    ]
    assert len(dbm) == 2
    kept = [line for line in snippet if not (line.startswith("RewriteMap ") and '"txt:' in line)]
    at = kept.index("RewriteMap ibilower int:tolower") + 1
    (workdir / "apache-dbm.conf").write_text(
        "\n".join(kept[:at] + dbm + kept[at:]) + "\n", encoding="utf-8"
    )
    return start_apache(workdir, site, workdir / "apache-dbm.conf")


STARTERS = {"nginx": start_nginx, "apache": start_apache, "apache-dbm": start_apache_dbm}


@pytest.fixture(scope="module", params=list(STARTERS))
def server(request, site, readable_tmp):
    workdir = subfolder(readable_tmp, request.param)
    process, port = STARTERS[request.param](workdir, site)
    try:
        yield request.param, port
    finally:
        stop(process)


def listed_urls(site: Path) -> list[tuple[str, str, int]]:
    """(request path, URL, status) of every rule of ``_redirects``."""
    rules = []
    for line in (site / "_redirects").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            path, url, status = line.split(" ")
            rules.append((path, url, int(status)))
    return rules


def test_the_sample_lists_hundreds_of_urls(site):
    assert len(listed_urls(site)) > 300


def test_every_listed_url_redirects_as_the_resolver_answers(server, site, resolver):
    _, port = server
    wrong = []
    for path, _, _ in listed_urls(site):
        expected = resolver.resolve(SITE_URL + unquote(path)[1:])
        # the modifier is the only place a ':' can stand in a persistent URL path
        status = 303 if ":" in path else 302
        got = get(port, path)[:2]
        if got != (status, expected.url):
            wrong.append((path, got, (status, expected.url)))
    assert wrong == []


@pytest.mark.parametrize(
    "path, canonical",
    [
        ("/8jmkd3mgp8w/35mmll8", "8JMKD3MGP8W/35MMLL8"),
        ("/8jmkd3mgp8w/35mmll8!:(oai_dc)", "8JMKD3MGP8W/35MMLL8!:(oai_dc)"),
        ("/SID.INPE.BR/MTC-M18@80/2009/07.21.14.43", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"),
    ],
)
def test_other_case_spellings_get_the_canonical_answer(server, resolver, path, canonical):
    _, port = server
    expected = resolver.resolve(SITE_URL + canonical).url
    assert expected is not None
    assert get(port, path)[:2] == (303 if ":" in path else 302, expected)


def test_escaped_modifier_characters_are_the_same_url(server, resolver):
    _, port = server
    expected = resolver.resolve(SITE_URL + "8JMKD3MGP8W/35MMLL8!:(oai_dc)").url
    assert get(port, "/8JMKD3MGP8W/35MMLL8%21%3A%28oai_dc%29")[:2] == (303, expected)


def test_a_deleted_item_answers_410_with_its_alert_page(server, site, resolver):
    _, port = server
    assert resolver.resolve(SITE_URL + DELETED).alert == "deleted"
    status, location, body = get(port, "/" + DELETED)
    assert (status, location) == (410, None)
    page = site / DELETED / "index.html"
    if page.exists():  # the page renderer writes it; the status is the host files' part
        assert body == page.read_bytes()


def test_a_query_with_ibiurl_pairs_is_left_to_the_page(server, site):
    _, port = server
    status, location, body = get(port, "/LK47B6W/362SFKH?ibiurl.verblist=GetFileList")
    page = site / "LK47B6W/362SFKH/index.html"
    assert (status, location) == ((200, None) if page.exists() else (404, None))
    if page.exists():
        assert body == page.read_bytes()


@pytest.mark.parametrize(
    "path", ["sid.inpe.br/mtc-m19/2013/09.04.12.27.58:", "8JMKD3MGP8W/35MME4E+"]
)
def test_page_only_urls_are_served_their_page_at_once(server, site, path):
    """An alert other than 'deleted' and a language-less '+' are the pages' business."""
    _, port = server
    page = site / path / "index.html"
    status, location, body = get(port, browser_path("/" + path))
    assert (status, location) == ((200, None) if page.exists() else (404, None))
    if page.exists():
        assert body == page.read_bytes()


def test_a_query_without_ibiurl_pairs_still_redirects(server, resolver):
    _, port = server
    expected = resolver.resolve(SITE_URL + "LK47B6W/362SFKH").url
    assert get(port, "/LK47B6W/362SFKH?utm_source=mail")[:2] == (302, expected)


def test_unlisted_urls_get_404_html_with_status_404(server, site):
    _, port = server
    status, location, body = get(port, "/8JMKD3MGP8W/3333333")
    assert (status, location) == (404, None)
    if (site / "404.html").exists():
        assert body == (site / "404.html").read_bytes()


def test_the_host_files_are_not_served(server):
    _, port = server
    for path in ("/_ibistatic/nginx-map.conf", "/_ibistatic/apache-rewritemap.txt", "/_redirects"):
        assert get(port, path)[0] == 404, path


@pytest.fixture(scope="module", params=["nginx", "apache"])
def hostile_server(request, readable_tmp):
    """A server over hand-made rules whose keys and values need every escape."""
    site = subfolder(readable_tmp, "hostile-site-" + request.param)
    folder = site / "_ibistatic"
    folder.mkdir()
    (folder / "nginx-map.conf").write_text(nginx_map_text(HOSTILE), encoding="utf-8")
    (folder / "nginx-server.conf").write_text(nginx_server_text(site), encoding="utf-8")
    (folder / "apache-rewritemap.txt").write_text(apache_map_text(HOSTILE), encoding="utf-8")
    (folder / "apache-status.txt").write_text(apache_status_text(HOSTILE), encoding="utf-8")
    (folder / "apache.conf").write_text(apache_conf_text(site), encoding="utf-8")
    (site / "gone item").mkdir()
    (site / "gone item" / "index.html").write_text("gone page\n")
    (site / "404.html").write_text("not found page\n")
    workdir = subfolder(readable_tmp, request.param + "-hostile")
    start = start_nginx if request.param == "nginx" else start_apache
    process, port = start(workdir, site)
    try:
        yield port
    finally:
        stop(process)


@pytest.mark.parametrize("rule", [rule for rule in HOSTILE if rule.url], ids=lambda rule: rule.path)
def test_hostile_keys_and_values_survive_each_server(hostile_server, rule):
    assert get(hostile_server, browser_path("/" + rule.path))[:2] == (rule.status, rule.url)


def test_hostile_gone_page(hostile_server):
    status, _, body = get(hostile_server, "/gone%20item")
    assert (status, body) == (410, b"gone page\n")


def test_hostile_unlisted_spelling_is_404(hostile_server):
    assert get(hostile_server, "/sp%20ace/e")[:2] == (404, None)
