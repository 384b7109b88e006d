"""The loopback resolver: real HTTP redirects, alert pages, the Archive service, reload."""

from __future__ import annotations

import http.client
import threading
import time
from urllib.parse import quote

import pytest

from ibistatic.index.writer import write_index
from ibistatic.serve import make_server


@pytest.fixture
def server(tmp_path, sample_loaded):
    index = tmp_path / "site" / "index"
    write_index(sample_loaded, index)
    server = make_server(tmp_path / "site", port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, index
    finally:
        server.shutdown()
        server.server_close()


def get(server, path, headers=None):
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
    try:
        connection.request("GET", quote(path, safe="/!:()+@?=&%"), headers=headers or {})
        response = connection.getresponse()
        return (
            response.status,
            response.getheader("Location"),
            response.read().decode("utf-8", "replace"),
        )
    finally:
        connection.close()


def test_redirect_for_a_persistent_url(server):
    status, location, _ = get(server[0], "/8JMKD3MGP8W/35MMLL8")
    assert (status, location) == (
        302,
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
    )


def test_metadata_is_303(server):
    status, location, _ = get(server[0], "/8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    assert (status, location) == (
        303,
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc",
    )


def test_accept_language_chooses_the_translation(server):
    status, location, _ = get(
        server[0], "/8JMKD3MGP8W/35MME4E+", {"Accept-Language": "pt-BR,pt;q=0.8"}
    )
    assert status == 302 and location.endswith("/2009/08.25.19.43/doc/RTC-07.pdf")


@pytest.mark.parametrize(
    "path, status",
    [
        ("/sid.inpe.br/mtc-m19/2011/05.10.18.31", 410),
        ("/8JMKD3MGP8W/3333333", 404),
        ("/LK47B6W/362SFKH/missing.pdf", 404),
    ],
)
def test_alerts_are_pages_with_status(server, path, status):
    got, location, body = get(server[0], path)
    assert (got, location) == (status, None)
    assert "<h1>" in body


def test_bad_url_is_400_with_the_reason(server):
    status, _, body = get(server[0], "/8JMKD3MGP8W/35MMLL8:!")
    assert status == 400 and "expected" in body


def test_archive_service_answers(server):
    base = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
    assert (
        get(server[0], base + "?servicesubject=inclusionConfirmationRequest")[2]
        == "confirmation yes"
    )
    assert (
        get(server[0], base + "?servicesubject=acknowledgment&ibi=x")[2]
        == "notice {acknowledgment received}"
    )
    status, _, text = get(
        server[0],
        base
        + "?servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8",
    )
    assert status == 200
    assert (
        "url http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
        in text.splitlines()
    )


def test_reloads_when_the_index_is_rebuilt(server, tmp_path):
    from archive_factory import write_archive, write_item
    from ibistatic.archive.load import load_archives
    from ibistatic.store.swap import publish_tree

    srv, index = server
    assert get(srv, "/example.org/new/2020/01.02.03.04")[0] == 404
    root = write_archive(
        tmp_path / "extra", "extra.example.org", "example.org/svc/2020/01.01.00.00"
    )
    write_item(root, "example.org/new/2020/01.02.03.04", state="Original")
    staging = tmp_path / "staging"
    write_index(load_archives([root], "https://ibi.example.org/"), staging)
    publish_tree(staging, index)
    deadline = time.monotonic() + 5  # the server looks for a new index once a second
    while get(srv, "/example.org/new/2020/01.02.03.04")[0] != 302 and time.monotonic() < deadline:
        time.sleep(0.1)
    status, location, _ = get(srv, "/example.org/new/2020/01.02.03.04")
    assert (status, location) == (
        302,
        "http://extra.example.org/col/example.org/new/2020/01.02.03.04/doc/document.txt",
    )
