"""nginx and Apache with the virtual hosts of ``ibistatic server-config``, on loopback.

Each server (the Debian binaries; ``scripts/test.sh`` installs them) runs unprivileged
with four virtual hosts on their own ports, ``ibistatic serve`` behind them:

- ``sample`` and ``synthetic``: two sites in one server, the vhosts included after
  another ``map``; every form of tests/url_forms.py is asked (no redirect followed) and
  must get what ``ibistatic resolve`` answers (status and Location);
- ``rules-only``: the sample with its resolver down: the rules alone still answer the
  precomputed forms (the server answers them itself), the rest gets the server's 502/503
  (nginx with ``map_hash_bucket_size 128`` set once and ``--map-bucket-size 128``: no
  rule is left to the resolver);
- ``wrong``: the sample with the synthetic site's resolver behind it, a deployment
  ``check-deployment`` must find wrong (exit 1, the report names the URL).
Content negotiation (``Accept``), ARK's ``?info`` and URLib's ``??`` are asked of each
server and of ``serve`` alone (tests/negotiation.py).
Apache runs twice: with the text map, and with it hashed (``httxt2dbm``, ``dbm:``).
A test skips only when its binary is absent.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ibistatic.cli import main
from ibistatic.deploycheck import url_forms
from ibistatic.resolver import Resolver
from ibistatic.site.hostfiles import HostRule
from ibistatic.site.serverconfs import (
    VirtualHost,
    apache_map_text,
    apache_vhost_text,
    nginx_vhost_text,
)
from negotiation import ITEM, negotiation_problems
from serve_process import stop
from url_forms import build_sample_site, build_synthetic_site, url_table

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parent.parent
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"])
NGINX = shutil.which("nginx", path=SEARCH_PATH)
APACHE = shutil.which("apache2", path=SEARCH_PATH) or shutil.which("httpd", path=SEARCH_PATH)
APACHE_MODULES = Path("/usr/lib/apache2/modules")
START_TIMEOUT = 15.0
DELETED = "sid.inpe.br/mtc-m19/2011/05.10.18.31"
VHOSTS = ("sample", "synthetic", "rules-only", "wrong")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{process.args[0]} exited with {process.returncode}:\n{_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"nothing listened on 127.0.0.1:{port} within {START_TIMEOUT} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


def start(command: list[str], port: int, log: Path) -> subprocess.Popen:
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    try:
        wait_for_port(port, process, log)
    except BaseException:
        stop(process)
        raise
    return process


class Client:
    """One kept-alive connection to a port; redirects are never followed."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def get(self, target: str, language: str | None = None) -> tuple[int, str | None, bytes]:
        headers = {"Accept-Language": language} if language else {}
        for attempt in range(2):
            try:
                self.connection.request("GET", target, headers=headers)
                response = self.connection.getresponse()
                body = response.read()
                if response.will_close:
                    self.connection.close()
                return response.status, response.getheader("Location"), body
            except (OSError, http.client.HTTPException):
                self.connection.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.connection.close()


def worker_identity() -> str:
    """Apache's User/Group lines: as root, a real unprivileged account (Apache refuses
    root, and its default #-1 is no account); otherwise the lines mean nothing."""
    if os.geteuid() != 0:
        return ""
    import grp

    groups = {entry.gr_name for entry in grp.getgrall()}
    group = next((name for name in ("nogroup", "nobody") if name in groups), None)
    return "User nobody\n" + (f"Group {group}\n" if group else "")


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
def sites(readable_tmp) -> dict[str, Path]:
    """The sample with every modifier composition (hundreds of rules) and the synthetic
    Archives of tests/url_forms.py, built for nginx and Apache: with no redirect or alert
    page (but a deleted item's), which these servers never serve (redirect-pages)."""
    hosts = ("nginx", "apache")
    sample = build_sample_site(subfolder(readable_tmp, "sample"), "all", hosts)
    synthetic = build_synthetic_site(subfolder(readable_tmp, "synthetic"), "all", hosts)
    return {"sample": sample, "synthetic": synthetic}


def test_the_sites_have_no_redirect_page(sites):
    for site in sites.values():
        pages = [p for p in site.rglob("index.html") if b'data-state="redirect"' in p.read_bytes()]
        assert pages == []
        assert b'data-alert="deleted"' in b"".join(p.read_bytes() for p in site.rglob("index.html"))


@pytest.fixture(scope="module")
def resolvers(sites, readable_tmp):
    """``ibistatic serve`` for each site, as a user runs it."""
    processes, ports = [], {}
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    try:
        for name, site in sites.items():
            port = free_port()
            command = [sys.executable, "-m", "ibistatic", "serve", "--index", str(site)]
            log = readable_tmp / f"serve-{name}.log"
            with log.open("wb") as sink:
                process = subprocess.Popen(
                    [*command, "--port", str(port)], stdout=sink, stderr=subprocess.STDOUT, env=env
                )
            processes.append(process)
            wait_for_port(port, process, log)
            ports[name] = f"http://127.0.0.1:{port}"
        ports["down"] = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        yield ports
    finally:
        for process in processes:
            stop(process)


def vhost_plan(sites, resolvers) -> dict[str, tuple[Path, str, int]]:
    """vhost name -> (site, resolver URL, port)."""
    return {
        "sample": (sites["sample"], resolvers["sample"], free_port()),
        "synthetic": (sites["synthetic"], resolvers["synthetic"], free_port()),
        "rules-only": (sites["sample"], resolvers["down"], free_port()),
        "wrong": (sites["sample"], resolvers["synthetic"], free_port()),
    }


def server_config(
    server: str, site: Path, resolver: str, port: int, output: Path, *more: str
) -> None:
    """The virtual host, written by the command as an admin runs it."""
    status = main(
        [
            "server-config",
            server,
            "--site",
            str(site),
            "--listen",
            f"127.0.0.1:{port}",
            "--resolver-url",
            resolver,
            "--output",
            str(output),
            *more,
        ]
    )
    assert status == 0


def start_nginx(workdir: Path, includes: list[Path], port: int) -> subprocess.Popen:
    if NGINX is None:
        pytest.skip("nginx is not installed (scripts/test.sh installs nginx-light)")
    temp = workdir / "temp"
    temp.mkdir(parents=True, exist_ok=True)
    include = "\n".join(f"    include {path};" for path in includes)
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
    # the admin's own map first: the vhosts must work after it; the one line to add
    # for rules longer than the default bucket holds (server-config --map-bucket-size)
    map_hash_bucket_size 128;
    map $http_user_agent $admin_is_bot {{ default 0; "~*bot" 1; }}
{include}
}}
""")
    command = [NGINX, "-p", str(workdir), "-c", str(conf), "-g", "daemon off;"]
    return start(command, port, workdir / "nginx.log")


APACHE_MODULE_FILES = {
    "mpm_event_module": "mod_mpm_event.so",
    "authz_core_module": "mod_authz_core.so",
    "rewrite_module": "mod_rewrite.so",
    "dir_module": "mod_dir.so",
    "mime_module": "mod_mime.so",
    "proxy_module": "mod_proxy.so",
    "proxy_http_module": "mod_proxy_http.so",
    "headers_module": "mod_headers.so",  # the vhost's `a2enmod` line (Vary, Link)
}


def start_apache(workdir: Path, includes: list[Path], ports: list[int]) -> subprocess.Popen:
    if APACHE is None:
        pytest.skip("Apache is not installed (scripts/test.sh installs apache2)")
    load = "\n".join(
        f"LoadModule {name} {APACHE_MODULES / file}" for name, file in APACHE_MODULE_FILES.items()
    )
    types = "/etc/mime.types" if Path("/etc/mime.types").exists() else "/dev/null"
    listen = "\n".join(f"Listen 127.0.0.1:{port}" for port in ports)
    include = "\n".join(f'Include "{path}"' for path in includes)
    conf = workdir / "httpd.conf"
    conf.write_text(f"""
ServerRoot {workdir}
{load}
PidFile {workdir}/httpd.pid
DefaultRuntimeDir {workdir}
ErrorLog {workdir}/error.log
LogLevel warn
TypesConfig {types}
{worker_identity()}{listen}
ServerName 127.0.0.1
{include}
""")
    return start([APACHE, "-f", str(conf), "-DFOREGROUND"], ports[0], workdir / "error.log")


def hashed_map(vhost: Path) -> None:
    """The text map of an Apache vhost hashed, and the vhost reading it, as
    docs/hosting.md says for large sites."""
    tool = shutil.which("httxt2dbm", path=SEARCH_PATH)
    if tool is None:
        pytest.skip("httxt2dbm is not installed (scripts/test.sh installs apache2)")
    text = vhost.with_name(vhost.stem + ".rewritemap.txt")
    dbm = text.with_suffix(".dbm")
    subprocess.run([tool, "-i", text, "-o", dbm], check=True, capture_output=True, timeout=60)
    conf = vhost.read_text(encoding="utf-8")
    assert conf.count(f'"txt:{text}"') == 1
    vhost.write_text(conf.replace(f'"txt:{text}"', f'"dbm:{dbm}"'), encoding="utf-8")


@pytest.fixture(scope="module", params=["nginx", "apache", "apache-dbm"])
def server(request, sites, resolvers, readable_tmp):
    """(server name, vhost name -> port) with the four virtual hosts running."""
    kind = request.param.split("-")[0]
    workdir = subfolder(readable_tmp, request.param)
    plan = vhost_plan(sites, resolvers)
    includes = []
    for name, (site, resolver, port) in plan.items():
        output = workdir / f"{name}.conf"
        bigger = ["--map-bucket-size", "128"] if kind == "nginx" and name == "rules-only" else []
        server_config(kind, site, resolver, port, output, *bigger)
        if request.param == "apache-dbm":
            hashed_map(output)
        includes.append(output)
    ports = [port for _, _, port in plan.values()]
    if kind == "nginx":
        process = start_nginx(workdir, includes, ports[0])
    else:
        process = start_apache(workdir, includes, ports)
    log = workdir / ("nginx.log" if kind == "nginx" else "error.log")
    for port in ports[1:]:
        wait_for_port(port, process, log)
    try:
        yield kind, {name: port for name, (_, _, port) in plan.items()}
    finally:
        stop(process)


def wrong_answers(port: int, table) -> list:
    client = Client(port)
    try:
        wrong = []
        for case in table:
            got = client.get("/" + case.target, case.accept_language)[:2]
            if got != (case.status, case.location):
                wrong.append((case.id, got, (case.status, case.location)))
        return wrong
    finally:
        client.close()


@pytest.mark.parametrize("site_name", ["sample", "synthetic"])
def test_every_url_form_answers_as_resolve(server, sites, site_name):
    _, ports = server
    table = url_table(sites[site_name])
    assert len(table) > 800
    assert wrong_answers(ports[site_name], table) == []


def test_the_rules_answer_without_the_resolver(server, sites):
    """The precomputed forms are the server's own rules: they answer with serve down."""
    _, ports = server
    table = url_table(sites["sample"])
    precomputed = [
        case for case in table if case.kind == "precomputed" and case.status in (302, 303, 410)
    ]
    assert len(precomputed) > 300
    assert wrong_answers(ports["rules-only"], precomputed) == []
    client = Client(ports["rules-only"])
    try:
        status, location, _ = client.get("/LK47B6W/362SFKH/reference.bib")
    finally:
        client.close()
    assert (status, location) in ((502, None), (503, None))  # the resolver's to answer


def test_a_deleted_item_answers_410_with_its_alert_page(server, sites):
    _, ports = server
    client = Client(ports["sample"])
    try:
        status, location, body = client.get("/" + DELETED)
    finally:
        client.close()
    assert (status, location) == (410, None)
    assert body == (sites["sample"] / DELETED / "index.html").read_bytes()


@pytest.mark.parametrize(
    "path, file",
    [
        ("/", "index.html"),
        ("/404.html", "404.html"),
        ("/index/manifest.json", "index/manifest.json"),
        ("/sitemap.xml", "sitemap.xml"),
        (
            "/metadata/iconet.com.br/banon/2009/09.09.22.01/oai_dc.xml",
            "metadata/iconet.com.br/banon/2009/09.09.22.01/oai_dc.xml",
        ),
    ],
)
def test_the_site_files_are_served_as_they_are(server, sites, path, file):
    _, ports = server
    client = Client(ports["sample"])
    try:
        assert client.get(path) == (200, None, (sites["sample"] / file).read_bytes())
    finally:
        client.close()


@pytest.mark.parametrize("path", ["/_ibistatic/ibistatic-site.txt", "/no-such-file.txt"])
def test_private_and_missing_files_are_404(server, path):
    _, ports = server
    client = Client(ports["sample"])
    try:
        assert client.get(path)[0] == 404
    finally:
        client.close()


def test_check_deployment_finds_every_form_right(server, sites, capsys):
    _, ports = server
    for name in ("sample", "synthetic"):
        base = f"http://127.0.0.1:{ports[name]}/"
        status = main(["check-deployment", base, "--index", str(sites[name]), "--sample", "400"])
        out = capsys.readouterr().out
        assert status == 0, out
        assert out.splitlines()[-1] == f"400 persistent URL forms asked of {base}: all match"


def test_check_deployment_finds_a_wrong_deployment(server, sites, capsys):
    _, ports = server
    base = f"http://127.0.0.1:{ports['wrong']}/"
    status = main(["check-deployment", base, "--index", str(sites["sample"]), "--sample", "all"])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1
    # a file path goes to the (wrong) resolver: 404 there, the sample's file here
    at = lines.index(f"DIFFERS {base}LK47B6W/362SFKH/reference.bib")
    assert lines[at + 1 : at + 3] == [
        "    expected 302 http://mtc-m16d.sid.inpe.br/col/iconet.com.br/banon/2009/09.09.22.01/"
        "doc/reference.bib",
        "    got      404",
    ]
    every = len(url_forms(Resolver(sites["sample"]).index))
    assert lines[-1].endswith(" differ") and lines[-1].startswith(
        f"{every} persistent URL forms asked of {base}: "
    )


# Escaping: rules whose URLs carry what each server's syntax must escape.
HOSTILE = [
    HostRule("A1B2/Q1", 302, "https://t.example/q?x=%22&y=1"),
    HostRule("A1B2/Q2", 302, 'https://t.example/b\\s"q'),
    HostRule("A1B2/Q3", 303, "https://t.example/$uri/$1?a=$b&c=${x}"),
    HostRule("A1B2/Q4", 302, "https://t.example/%C3%A9%20x;p=1"),
    HostRule("A1B2/Q5", 302, "https://t.example/p?choice=oai_dc&z=%3F"),
]


@pytest.fixture(scope="module", params=["nginx", "apache"])
def hostile_server(request, readable_tmp):
    site = subfolder(readable_tmp, "hostile-site")
    (site / "404.html").write_text("not found page\n")
    workdir = subfolder(readable_tmp, request.param + "-hostile")
    port = free_port()
    host = VirtualHost(
        site, "/", f"127.0.0.1:{port}", "hostile.test", "http://127.0.0.1:9", "hostile", ()
    )
    conf = workdir / "site.conf"
    if request.param == "nginx":
        conf.write_text(nginx_vhost_text(HOSTILE, host), encoding="utf-8")
        process = start_nginx(workdir, [conf], port)
    else:
        map_file = workdir / "site.rewritemap.txt"
        map_file.write_text(apache_map_text(HOSTILE), encoding="utf-8")
        conf.write_text(apache_vhost_text(host, map_file), encoding="utf-8")
        process = start_apache(workdir, [conf], [port])
    try:
        yield port
    finally:
        stop(process)


@pytest.mark.parametrize("rule", HOSTILE, ids=lambda rule: rule.path)
def test_hostile_urls_survive_each_server(hostile_server, rule):
    client = Client(hostile_server)
    try:
        assert client.get("/" + rule.path)[:2] == (rule.status, rule.url)
        assert client.get("/" + rule.path.lower())[:2] == (rule.status, rule.url)
    finally:
        client.close()


# Content negotiation and inflections (tests/negotiation.py), on each server and on
# the resolver alone, as a client asks them.
def _redirect_of_item(site: Path) -> tuple[int, str]:
    answer = Resolver(site).resolve(ITEM)
    return 302, answer.url


def test_content_negotiation_on_the_server(server, sites):
    _, ports = server
    assert negotiation_problems(ports["sample"], _redirect_of_item(sites["sample"])) == []


def test_content_negotiation_on_serve(resolvers, sites):
    port = int(resolvers["sample"].rpartition(":")[2])
    assert negotiation_problems(port, _redirect_of_item(sites["sample"])) == []
