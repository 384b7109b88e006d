"""The nginx set-up of ``docs/production.md``, as printed there, in front of a real
``ibistatic serve``: every kind of answer passes through unchanged."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from serve_process import ROOT, free_port, running, serve_command, wait_for_port
from site_helpers import build

SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"])
NGINX = shutil.which("nginx", path=SEARCH_PATH)
REPORT = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
SERVICE = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"


def documented_nginx_block() -> str:
    text = (ROOT / "docs" / "production.md").read_text(encoding="utf-8")
    return re.search(r"```nginx\n(.*?)```", text, re.S).group(1)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    if NGINX is None:
        pytest.skip("nginx is not installed (scripts/test.sh installs nginx-light)")
    workdir = tmp_path_factory.mktemp("production")
    site = build(workdir)
    with running(serve_command(site)) as (_, serve_port):
        port = free_port()
        block = documented_nginx_block()
        assert "server 127.0.0.1:8080;" in block and "listen 80;" in block
        block = block.replace("server 127.0.0.1:8080;", f"server 127.0.0.1:{serve_port};")
        block = block.replace("listen 80;", f"listen 127.0.0.1:{port};")
        temp = workdir / "temp"
        temp.mkdir()
        conf = workdir / "nginx.conf"
        conf.write_text(
            f"""
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
{block}
}}
"""
        )
        log = workdir / "nginx.log"
        with log.open("wb") as sink:
            nginx = subprocess.Popen(
                [NGINX, "-p", str(workdir), "-c", str(conf), "-g", "daemon off;"],
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        try:
            wait_for_port(port, nginx)
            yield port, site
        finally:
            nginx.terminate()
            nginx.wait(timeout=10)


def ask(port: int, method: str, path: str, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()  # names: any case
    finally:
        connection.close()


@pytest.mark.parametrize(
    "path, status, location",
    [
        ("/8JMKD3MGP8W/35MMLL8", 302, REPORT),
        ("/8JMKD3MGP8W/35MMLL8/CCSDS%20650.0-B-1.pdf", 302, REPORT),
        ("/sid.inpe.br/mtc-m19/2011/05.10.18.31", 410, None),
        ("/8JMKD3MGP8W/3333333", 404, None),
    ],
)
def test_redirects_and_alerts_pass_through(proxied, path, status, location):
    port, _ = proxied
    got, headers, body = ask(port, "GET", path)
    assert (got, headers.get("Location")) == (status, location)
    assert (location is None) == (b"<h1>" in body)


def test_files_etags_and_the_service_pass_through(proxied):
    port, site = proxied
    status, headers, body = ask(port, "GET", "/")
    assert (status, body) == (200, (site / "index.html").read_bytes())
    assert ask(port, "GET", "/", {"If-None-Match": headers["ETag"]})[0] == 304
    status, headers, body = ask(
        port, "GET", SERVICE + "?servicesubject=inclusionConfirmationRequest"
    )
    assert (status, headers["Content-Type"], body) == (
        200,
        "text/plain; charset=us-ascii",
        b"confirmation yes",
    )
    status, headers, body = ask(port, "HEAD", "/8JMKD3MGP8W/35MMLL8")
    assert (status, headers["Location"], body) == (302, REPORT, b"")


def test_bad_requests_are_answered_through_nginx(proxied):
    port, _ = proxied
    status, headers, body = ask(port, "GET", "/%ff%fe/x")  # nginx passes it on: no URL, 400
    assert (status, headers["Content-Type"]) == (400, "text/html; charset=utf-8")
    assert b"<h1>Not a persistent URL</h1>" in body
    status, _, body = ask(port, "GET", "/%ff%fe")  # one segment is never an IBI: not found
    assert (status, b"<h1>Resolving a persistent URL") == (404, body[body.index(b"<h1>") :][:30])
    assert ask(port, "GET", "/x%zz")[0] == 400  # nginx's own 400: it decodes paths first


def test_an_iso_8859_1_file_path_passes_through_nginx(proxied):
    # the standard's own charset for %hh (Relat%f3rio): nginx passes it on unchanged
    port, _ = proxied
    status, headers, _ = ask(port, "GET", "/LK47B6W/362SFKH/Relat%f3rio%20t%e9cnico.txt")
    assert (status, headers["Location"]) == (
        302,
        "http://mtc-m16d.sid.inpe.br/col/iconet.com.br/banon/2009/09.09.22.01/doc/"
        "Relat%C3%B3rio%20t%C3%A9cnico.txt",
    )


def test_the_documented_block_is_the_tested_one():
    assert Path(ROOT / "docs" / "production.md").is_file()
    block = documented_nginx_block()
    for directive in (
        "client_header_timeout 10s;",
        "proxy_redirect off;",
        "proxy_http_version 1.1;",
    ):
        assert directive in block
