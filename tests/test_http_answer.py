"""One HTTP answer (core.http): the rule 302 / 303 / alert statuses, header safety, and
the server agreeing with the host files for every published URL of the sample."""

from __future__ import annotations

import http.client
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from ibistatic.core.http import ALERT_STATUS, HttpAnswer, header_value, http_answer
from ibistatic.core.outcome import ALERTS, Resolution
from ibistatic.core.relations import parse_modifier
from ibistatic.serve import make_server
from site_helpers import build

URL = "https://a.example/doc/x.pdf"


def redirect(content_type: str = "Data") -> Resolution:
    return Resolution(URL, None, content_type=content_type)


@pytest.mark.parametrize(
    "modifier, status",
    [
        ("", 302),
        ("!", 302),
        ("+(en)", 302),
        ("!+(pt-BR)", 302),
        (":", 303),
        (":(oai_dc)", 303),
        ("!:", 303),
        ("!:(oai_dc)", 303),
        ("+(en):", 303),
        (":+(pt)", 303),
    ],
)
def test_303_exactly_when_the_url_asks_for_metadata_about_the_item(modifier, status):
    answer = http_answer(redirect(), parse_modifier(modifier))
    assert answer == HttpAnswer(status, URL, (("Location", URL),))


def test_the_bare_url_of_a_metadata_record_is_the_record_itself():
    """Content type Metadata, bare URL: the URL names that record, so 302 (as the host
    files always said; the server used to answer 303 by content type)."""
    assert http_answer(redirect("Metadata"), ()).status == 302
    assert http_answer(redirect("Metadata"), parse_modifier(":")).status == 303


@pytest.mark.parametrize("alert", ALERTS)
def test_every_alert_has_a_status_and_no_location(alert):
    answer = http_answer(Resolution(None, alert), ())
    assert answer == HttpAnswer(ALERT_STATUS[alert], None, ())
    assert answer.header("Location") is None


@pytest.mark.parametrize(
    "alert, status",
    [
        ("not-found", 404),
        ("unavailable", 404),
        ("deleted", 410),
        ("conflict", 409),
        ("no-original", 409),
        ("loop", 409),
    ],
)
def test_alert_statuses(alert, status):
    assert http_answer(Resolution(None, alert), ()).status == status


def test_an_outcome_with_neither_url_nor_alert_is_refused():
    with pytest.raises(ValueError, match="an outcome with neither a URL nor a known alert: None"):
        http_answer(Resolution(None, None), ())


@pytest.mark.parametrize(
    "modifier, varies", [("+", True), ("!+:", True), (":+", True), ("+(en)", False), ("", False)]
)
def test_vary_only_when_the_browser_languages_choose(modifier, varies):
    for outcome in (redirect(), Resolution(None, "unavailable")):
        answer = http_answer(outcome, parse_modifier(modifier))
        assert answer.header("vary") == ("Accept-Language" if varies else None)


@pytest.mark.parametrize(
    "url, location",
    [
        ("https://a.example/x\r\nSet-Cookie: a=b", "https://a.example/x%0D%0ASet-Cookie:%20a=b"),
        ("https://a.example/x\nLocation: //evil", "https://a.example/x%0ALocation:%20//evil"),
        ("https://a.example/São José\t1.pdf", "https://a.example/S%C3%A3o%20Jos%C3%A9%091.pdf"),
        ("https://a.example/\x00\x7f\x85", "https://a.example/%00%7F%C2%85"),
        (
            "https://a.example/CCSDS%20650.0-B-1.pdf?x=1",
            "https://a.example/CCSDS%20650.0-B-1.pdf?x=1",
        ),
    ],
)
def test_header_values_never_carry_controls(url, location):
    answer = http_answer(Resolution(url, None), ())
    assert answer.location == location
    for _, value in answer.headers:
        assert not re.search(r"[\x00-\x20\x7f-\U0010ffff]", value)
    assert header_value(url) == location


def test_header_lookup_ignores_case():
    answer = HttpAnswer(302, URL, (("Location", URL), ("Vary", "Accept-Language")))
    assert (answer.header("location"), answer.header("VARY"), answer.header("ETag")) == (
        URL,
        "Accept-Language",
        None,
    )


# -- the server and the host files give the same answers ------------------------------


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("http-answer"), modifiers="all")


@pytest.fixture(scope="module")
def server(sample_site):
    server = make_server(sample_site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def ask(server, path: str) -> tuple[int, str | None, str | None]:
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location"), response.getheader("Vary")
    finally:
        connection.close()


def redirects_rules(site: Path) -> dict[str, tuple[int, str]]:
    """`_redirects`: browser path -> (status, URL)."""
    rules = {}
    for line in (site / "_redirects").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            path, url, status = line.split(" ")
            rules[path] = (int(status), url)
    return rules


def server_rules(site: Path) -> dict[str, tuple[int, str | None]]:
    """The rules of `ibistatic server-config` (nginx, Apache): folded path -> (status, URL)."""
    from ibistatic.index.reader import Index
    from ibistatic.site.serverconfs import index_rules

    rules = {}
    for rule in index_rules(Index(site)):
        rules.setdefault(rule.path.lower(), (rule.status, rule.url))
    return rules


def sitemap_paths(site: Path) -> set[str]:
    text = (site / "sitemap.xml").read_text(encoding="utf-8")
    return {urlsplit(loc).path for loc in re.findall(r"<loc>([^<]*)</loc>", text)}


def test_the_server_answers_every_published_url_as_the_host_files_do(sample_site, server):
    redirects = redirects_rules(sample_site)
    rules = server_rules(sample_site)
    gone = {"/" + key for key, (status, _) in rules.items() if status == 410}
    paths = sitemap_paths(sample_site) | set(redirects) | gone
    assert (
        len(redirects) > 250 and len(gone) > 3 and len(paths) > 400
    )  # modifiers: all emits one language per page (bounded)
    left_to_pages = 0
    for path in sorted(paths):
        status, location, vary = ask(server, path)
        server_key = unquote(path).lower()[1:]
        if path in redirects:
            assert (status, location) == redirects[path], path
            assert rules[server_key] == redirects[path], path
        elif server_key in rules:
            assert (status, location) == rules[server_key] == (410, None), path
        else:
            # no rule: the answer depends on the browser's languages, or is an alert
            # page other than 410; either way the site's pages answer it
            assert vary == "Accept-Language" or (location is None and status in (404, 409)), (
                path,
                status,
            )
            left_to_pages += 1
    assert left_to_pages > 80  # the sample's language-less '+' URLs


def test_the_server_redirects_the_bare_url_of_a_metadata_record_with_302(server):
    path = "/sid.inpe.br/mtc-m18/2012/07.12.18.08.49"  # content type Metadata
    assert ask(server, path)[:2] == (
        302,
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi",
    )
    edition = "/sid.inpe.br/mtc-m18/2012/07.12.18.08:(oai_dc)"  # asks for that record as metadata
    assert ask(server, edition)[:2] == (
        303,
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc",
    )
