"""The Archive server under the servers institutions already run, as real processes with
the commands ``docs/production.md`` prints: WSGI under waitress and gunicorn, ASGI under
uvicorn and gunicorn's uvicorn worker.  Each gives the answers ``ibistatic serve`` gives."""

from __future__ import annotations

import http.client
import importlib.util
import sys
from pathlib import Path

import pytest

from serve_process import free_port, running
from site_helpers import build

REPORT = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
OAI_DC = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc"
SERVICE = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"


def _command(name: str, port: int) -> list[str]:
    python = sys.executable
    address = f"127.0.0.1:{port}"
    return {
        "waitress": [
            python,
            "-m",
            "waitress",
            f"--listen={address}",
            "--call",
            "ibistatic.web.wsgi:from_environment",
        ],
        "gunicorn-wsgi": [
            python,
            "-m",
            "gunicorn",
            "--bind",
            address,
            "--workers",
            "1",
            "ibistatic.web.wsgi:from_environment()",
        ],
        "uvicorn": [
            python,
            "-m",
            "uvicorn",
            "--factory",
            "ibistatic.web.asgi:from_environment",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        "gunicorn-uvicorn": [
            python,
            "-m",
            "gunicorn",
            "--bind",
            address,
            "--workers",
            "1",
            "--worker-class",
            "uvicorn_worker.UvicornWorker",
            "ibistatic.web.asgi:from_environment()",
        ],
    }[name]


NEEDS = {
    "waitress": "waitress",
    "gunicorn-wsgi": "gunicorn",
    "uvicorn": "uvicorn",
    "gunicorn-uvicorn": "uvicorn_worker",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("serve-hosts"))


@pytest.fixture(scope="module", params=list(NEEDS))
def host(request, site):
    if importlib.util.find_spec(NEEDS[request.param]) is None:
        pytest.skip(f"{NEEDS[request.param]} is not installed (pip install -e '.[test]')")
    port = free_port()
    with running(_command(request.param, port), port, {"IBISTATIC_SITE": str(site)}):
        yield port


def ask(port: int, method: str, path: str, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return (
            response.status,
            response.getheader("Location"),
            response.getheader("Content-Type"),
            response.read(),
        )
    finally:
        connection.close()


@pytest.mark.parametrize(
    "path, status, location",
    [
        ("/8JMKD3MGP8W/35MMLL8", 302, REPORT),
        ("/8JMKD3MGP8W/35MMLL8!:(oai_dc)", 303, OAI_DC),
        ("/8JMKD3MGP8W/35MMLL8/CCSDS%20650.0-B-1.pdf", 302, REPORT),  # resolved, not precomputed
        ("/sid.inpe.br/mtc-m19/2011/05.10.18.31", 410, None),
        ("/8JMKD3MGP8W/3333333", 404, None),
    ],
)
def test_redirects_and_alerts(host, path, status, location):
    got, got_location, content_type, body = ask(host, "GET", path)
    assert (got, got_location) == (status, location)
    if location is None:
        assert content_type == "text/html; charset=utf-8" and b"<h1>" in body


def test_the_sites_files(host, site):
    status, _, content_type, body = ask(host, "GET", "/")
    assert (status, content_type, body) == (
        200,
        "text/html; charset=utf-8",
        (site / "index.html").read_bytes(),
    )
    assert ask(host, "GET", "/index/manifest.json")[2] == "application/json"
    assert ask(host, "GET", "/%2e%2e/%2e%2e/etc/passwd")[0] == 400


def test_the_archive_service(host):
    status, _, content_type, body = ask(
        host, "GET", SERVICE + "?servicesubject=inclusionConfirmationRequest"
    )
    assert (status, content_type, body) == (
        200,
        "text/plain; charset=us-ascii",
        b"confirmation yes",
    )


def test_head_and_bad_requests(host):
    status, location, _, body = ask(host, "HEAD", "/8JMKD3MGP8W/35MMLL8")
    assert (status, location, body) == (302, REPORT, b"")
    status, _, content_type, body = ask(host, "GET", "/x%zz")
    assert (status, content_type) == (400, "text/plain; charset=utf-8")
    assert body.startswith(b"bad request: bad percent-encoding '%zz'")
    assert ask(host, "POST", "/8JMKD3MGP8W/35MMLL8")[0] == 405


def test_a_missing_site_variable_is_a_clear_error():
    from ibistatic.errors import IbistaticError
    from ibistatic.web.asgi import from_environment

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("IBISTATIC_SITE", raising=False)
        with pytest.raises(IbistaticError, match="IBISTATIC_SITE is not set: name the built site"):
            from_environment()
