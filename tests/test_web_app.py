"""The server's answers, request in, response out (``web/app.py``, ``web/static.py``):
the built site as a static host serves it, redirects, malformed requests, HEAD, and no
control character in any header, whatever the index holds."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from ibistatic.web.app import ArchiveApp
from serve_process import tamper
from site_helpers import build

REPORT = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
SERVICE = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("web-app"))


@pytest.fixture(scope="module")
def app(site) -> ArchiveApp:
    return ArchiveApp(site)


def get(app, target, headers=None, method="GET"):
    response = app.respond(method, target, headers or {}, "127.0.0.1")
    return response.status, dict(response.headers), response.body


def test_root_is_the_sites_home_page(app, site):
    status, headers, body = get(app, "/")
    assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
    assert body == (site / "index.html").read_bytes()
    assert headers["Content-Length"] == str(len(body))


@pytest.mark.parametrize(
    "path, content_type",
    [
        ("/assets/ibistatic.css", "text/css; charset=utf-8"),
        ("/assets/resolve.js", "text/javascript; charset=utf-8"),
        ("/index/manifest.json", "application/json"),
        ("/sitemap.xml", "application/xml"),
        ("/_redirects", "text/plain; charset=utf-8"),
        ("/404.html", "text/html; charset=utf-8"),
    ],
)
def test_files_of_the_site_with_their_content_types(app, site, path, content_type):
    status, headers, body = get(app, path)
    assert (status, headers["Content-Type"]) == (200, content_type)
    assert body == (site / path[1:]).read_bytes()


def test_a_persistent_url_is_a_redirect_and_its_folder_the_page(app, site):
    assert get(app, "/8JMKD3MGP8W/35MMLL8")[:2] == (
        302,
        {"Location": REPORT, "Vary": "Accept", "Content-Length": "0"},  # Accept: core.exports
    )
    status, _, body = get(app, "/8JMKD3MGP8W/35MMLL8/")
    assert (status, body) == (200, (site / "8JMKD3MGP8W" / "35MMLL8" / "index.html").read_bytes())


@pytest.mark.parametrize(
    "target, location",
    [
        # ARK's ?info: the item's record page, by either form of its IBI
        ("/8JMKD3MGP8W/35MMLL8?info", "record/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/"),
        ("/sid.inpe.br/mtc-m18@80/2009/07.21.14.43?info", "record/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/"),
        # URLib's ??: its metadata, as the ':' modifier answers
        ("/8JMKD3MGP8W/35MMLL8??", "metadata/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/"),
    ],
)  # fmt: skip
def test_the_inflections_of_ark_and_urlib_lead_to_the_record_and_the_metadata(
    app, target, location
):
    status, headers, _ = get(app, target)
    assert (status, headers["Location"]) == (303, "http://ibi.example.org/" + location)
    if target.endswith("??"):
        assert get(app, target[:-2] + ":")[:2] == (status, headers)


def test_an_inflection_of_an_ibi_nobody_holds_is_its_not_found_alert(app):
    assert get(app, "/8JMKD3MGP8W/99999?info")[0] == 404


def test_a_folder_without_its_slash_is_sent_to_it(app):
    folder = "/metadata/sid.inpe.br/mtc-m18/2012/07.12.18.08"
    status, headers, _ = get(app, folder + "?x=1")
    assert (status, headers["Location"]) == (301, folder + "/?x=1")
    assert get(app, folder + "/")[0] == 200


def test_etag_and_last_modified_give_304(app):
    _, headers, _ = get(app, "/assets/ibistatic.css")
    etag, modified = headers["ETag"], headers["Last-Modified"]
    assert re.fullmatch(r'"[0-9a-f]+-[0-9a-f]+"', etag)
    for asked in ({"if-none-match": etag}, {"if-none-match": f'"x", {etag}'}):
        status, again, body = get(app, "/assets/ibistatic.css", asked)
        assert (status, body, again["ETag"]) == (304, b"", etag)
    assert get(app, "/assets/ibistatic.css", {"if-modified-since": modified})[0] == 304
    assert get(app, "/assets/ibistatic.css", {"if-none-match": '"other"'})[0] == 200
    earlier = "Mon, 01 Jan 2001 00:00:00 GMT"
    assert get(app, "/assets/ibistatic.css", {"if-modified-since": earlier})[0] == 200
    assert get(app, "/assets/ibistatic.css", {"if-modified-since": "not a date"})[0] == 200


@pytest.fixture(scope="module")
def fenced_site(tmp_path_factory, site) -> Path:
    """The site with a secret beside it, and symlinks from the site to it and within."""
    base = tmp_path_factory.mktemp("fenced")
    copy = base / "site"
    shutil.copytree(site, copy, symlinks=True)
    (base / "secret.txt").write_text("SECRET beside the site\n")
    (copy / "leak.txt").symlink_to(base / "secret.txt")
    (copy / "leakdir").symlink_to(base)
    (copy / "inside.css").symlink_to(copy / "assets" / "ibistatic.css")
    (copy / ".hidden").write_text("SECRET hidden\n")
    return copy


@pytest.mark.parametrize(
    "target",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/%2e%2e/etc/passwd",
        "/assets/..%2f..%2fsecret.txt",
        "/assets%2f..%2f..%2fsecret.txt",
        "/assets/%2e%2e/%2e%2e/secret.txt",
        "/leak.txt",
        "/leakdir/secret.txt",
        "/.hidden",
        "/assets/.%2e/.%2e/secret.txt",
        "/%5c..%5csecret.txt",
        "/assets%00.css",
    ],
)
def test_nothing_outside_the_site_is_ever_served(fenced_site, target):
    status, headers, body = get(ArchiveApp(fenced_site), target)
    assert b"SECRET" not in body and status >= 400, (target, status)
    assert "ETag" not in headers


def test_a_symlink_within_the_site_is_served(fenced_site):
    status, _, body = get(ArchiveApp(fenced_site), "/inside.css")
    assert (status, body) == (200, (fenced_site / "assets" / "ibistatic.css").read_bytes())


@pytest.mark.parametrize(
    "target, message",
    [
        (
            "/8JMKD3MGP8W/35MMLL8%zz",
            "bad request: bad percent-encoding '%zz' at position 20 of the path: "
            "expected '%' and two hexadecimal digits\n",
        ),
        (
            "/x%4",
            "bad request: bad percent-encoding '%4' at position 2 of the path: "
            "expected '%' and two hexadecimal digits\n",
        ),
        (
            "/a b",
            "bad request: character ' ' at position 2 of the request target: "
            "expected visible ASCII (percent-encode the rest)\n",
        ),
        (
            "/a\r\nSet-Cookie: x=y",
            "bad request: character '\\r' at position 2 of the request target: "
            "expected visible ASCII (percent-encode the rest)\n",
        ),
        (
            "/São",
            "bad request: character 'ã' at position 2 of the request target: "
            "expected visible ASCII (percent-encode the rest)\n",
        ),
        (
            "8JMKD3MGP8W/35MMLL8",
            "bad request: the request target '8JMKD3MGP8W/35MMLL8' does not start with '/'\n",
        ),
    ],
)
def test_a_malformed_request_is_400_text_plain_with_a_message(app, target, message):
    status, headers, body = get(app, target)
    assert (status, headers["Content-Type"], body.decode()) == (
        400,
        "text/plain; charset=utf-8",
        message,
    )


def test_a_bad_service_query_is_400_text_plain(app):
    status, headers, body = get(app, SERVICE + "?servicesubject=urlRequest&%zz")
    assert (status, headers["Content-Type"]) == (400, "text/plain; charset=us-ascii")
    assert body.startswith(b"bad service request: invalid query string")


def test_a_url_that_does_not_parse_is_400_with_the_reason(app):
    status, headers, body = get(app, "/8JMKD3MGP8W/35MMLL8:!")
    assert (status, headers["Content-Type"]) == (400, "text/html; charset=utf-8")
    assert b"Not a persistent URL" in body and b"expected" in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_other_methods_are_405(app, method):
    status, headers, body = get(app, "/8JMKD3MGP8W/35MMLL8", method=method)
    assert (status, headers["Allow"]) == (405, "GET, HEAD")
    assert body == f"method {method} not allowed: this server answers GET and HEAD\n".encode()


@pytest.mark.parametrize(
    "target",
    [
        "/",
        "/assets/resolve.js",
        "/8JMKD3MGP8W/35MMLL8",
        "/8JMKD3MGP8W/3333333",
        "/a%zz",
        SERVICE + "?servicesubject=inclusionConfirmationRequest",
    ],
)
def test_head_is_get_without_the_body(app, target):
    got = get(app, target)
    head = get(app, target, method="HEAD")
    assert head == (got[0], got[1], b"")
    assert got[1]["Content-Length"] == str(len(got[2]))


def test_an_index_folder_alone_answers_urls_and_a_home_page(site):
    app = ArchiveApp(site / "index")
    assert get(app, "/8JMKD3MGP8W/35MMLL8")[:2] == (
        302,
        {"Location": REPORT, "Vary": "Accept", "Content-Length": "0"},  # Accept: core.exports
    )
    status, _, body = get(app, "/")
    assert status == 200 and b"This server resolves the persistent URLs of" in body
    assert get(app, "/assets/ibistatic.css")[0] == 400  # no files: not a persistent URL


def test_the_service_callable_is_asked_first(site):
    asked = []

    def service(views, target, client_ip):
        asked.append((len(views), target, client_ip))
        return (200, "notice {mine}") if "servicesubject=" in target else None

    app = ArchiveApp(site, service=service)
    status, headers, body = get(app, "/x/y?servicesubject=acknowledgment")
    assert (status, headers["Content-Type"], body) == (
        200,
        "text/plain; charset=us-ascii",
        b"notice {mine}",
    )
    assert get(app, "/8JMKD3MGP8W/35MMLL8")[0] == 302
    assert asked == [(2, "/x/y?servicesubject=acknowledgment", "127.0.0.1")] + [
        (2, "/8JMKD3MGP8W/35MMLL8", "127.0.0.1")
    ]


# -- no control character reaches a header, whatever the index says ------------------


@pytest.fixture(scope="module")
def tampered_site(tmp_path_factory, site) -> Path:
    copy = tmp_path_factory.mktemp("tampered") / "site"
    shutil.copytree(site, copy)
    tamper(copy)
    return copy


@pytest.mark.parametrize(
    "target, expected",
    [
        ("/8JMKD3MGP8W/35MMLL8", 302),  # precomputed: the index's URL, encoded
        ("/8JMKD3MGP8W/35MMLL8:(oai_dc)", 303),
        # resolved: the manifest's template gives an unsafe URL, which the core refuses
        ("/8JMKD3MGP8W/35MMLL8/CCSDS%20650.0-B-1.pdf", 404),
        ("/sid.inpe.br/mtc-m18@80/2009/07.21.14.43!:", 404),
    ],
)
def test_a_crlf_in_the_index_never_splits_a_header(tampered_site, target, expected):
    status, headers, _ = get(ArchiveApp(tampered_site), target)
    assert status == expected
    for name, value in headers.items():
        assert re.fullmatch(r"[\x20-\x7e]+", value), (name, value)
    if status < 400:
        assert headers["Location"].startswith(
            "http://a.example/x%0D%0ASet-Cookie:%20session=stolen%0D%0AX-Evil:%201/"
        )


def test_files_come_from_the_generation_a_rebuild_points_at(tmp_path):
    """The site is a link that each build points at a new tree: followed per request."""
    from site_helpers import SAMPLE

    site = build(tmp_path)
    app = ArchiveApp(site)
    before = get(app, "/sitemap.xml")[2]
    assert before == (site / "sitemap.xml").read_bytes()
    build(tmp_path, archives=(SAMPLE / "mtc-m16c",))
    expected = (site / "sitemap.xml").read_bytes()
    assert expected != before
    deadline = time.monotonic() + 5  # the link is looked up again once a second
    while get(app, "/sitemap.xml")[2] != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert get(app, "/sitemap.xml")[2] == expected


@pytest.mark.parametrize("target", ["/favicon.ico", "/8JMKD3MGP8W/99999", "/nothing-here?x=1"])
def test_not_found_is_the_sites_own_404_page_with_its_look_and_search(app, site, target):
    """/favicon.ico (asked by every browser) was a 400 "Not a persistent URL"; an IBI
    nobody holds a bare page.  Both are 404 with the site's 404.html."""
    status, headers, body = get(app, target)
    assert (status, headers["Content-Type"]) == (404, "text/html; charset=utf-8")
    assert body == (site / "404.html").read_bytes()
    assert b'<form id="ibistatic-search" role="search"' in body  # the site's search form


def test_not_found_without_a_site_is_a_small_page(site):
    app = ArchiveApp(site / "index")
    status, headers, body = get(app, "/favicon.ico")
    assert status == 404 and b"<h1>Not found</h1>" in body
