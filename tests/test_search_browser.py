"""The static search in headless Chromium, over the built sample on a loopback server.

Each query loads ``search/?q=...``; the script reads the search files from the site and
writes the results.  The DOM is read back as Chromium rendered it: the titles as text,
their links, and every request that reached a server (none may leave the site).
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import quote

import pytest

from site_helpers import (
    CHROMIUM,
    SITE_URL,
    LandingServer,
    SiteServer,
    build,
    chromium_dom,
    foreign,
    portuguese_site_servers,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed"),
]

HOSTILE_KEY = "sid.inpe.br/mtc-m19/2014/01.02.17.23.57"
HOSTILE_TITLE = 'Mapa "São José" <2014> & outros'


class _Results(HTMLParser):
    """The results list: (title text, href) per result, the status line, the state."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[list[str]] = []
        self.status = ""
        self.state = None
        self.marks: list[str] = []  # the state marks of the results ("(deleted)")
        self.html_lang = None
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "html":
            self.html_lang = values.get("lang")
        if tag == "span" and values.get("class") == "state":
            self.marks.append("")
            self._in = "mark"
        if tag == "form" and values.get("id") == "ibistatic-search":
            self.state = values.get("data-state")
        if tag == "p" and values.get("id") == "ibistatic-search-status":
            self._in = "status"
        if tag == "a" and values.get("class") == "title":
            self.results.append(["", values.get("href", "")])
            self._in = "title"

    def handle_endtag(self, tag):
        if tag in ("a", "p", "span"):
            self._in = None

    def handle_data(self, data):
        if self._in == "title":
            self.results[-1][0] += data
        elif self._in == "status":
            self.status += data
        elif self._in == "mark":
            self.marks[-1] += data


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    site = SiteServer(build(tmp_path_factory.mktemp("search-site")))
    landing = LandingServer()
    with site.running(), landing.running():
        yield site, landing


@pytest.fixture(scope="module")
def portuguese_servers(tmp_path_factory):
    with portuguese_site_servers(tmp_path_factory.mktemp("pt-search-site")) as servers:
        yield servers


def _search(servers, query: str) -> _Results:
    site, landing = servers
    dom = chromium_dom(f"{SITE_URL}search/?q={quote(query)}", site.port, landing.port)
    parsed = _Results()
    parsed.feed(dom)
    assert parsed.state == "done", f"the search of {query!r} did not finish: {parsed.status!r}"
    return parsed


def _record(key: str) -> str:
    return f"{SITE_URL}record/{key}/"


@pytest.mark.parametrize(
    "query, title, key, why",
    [
        (
            "open archival",
            "Reference Model for an Open Archival Information System (OAIS)",
            "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
            "title words",
        ),
        (
            "35MME4E",
            "ASCII Encoded English (CCSD0002)",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
            "an IBIp suffix",
        ),
        (
            "8JMKD3MGP8W/35MMLL8",
            "Reference Model for an Open Archival Information System (OAIS)",
            "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
            "a whole IBIp",
        ),
        (HOSTILE_KEY, HOSTILE_TITLE, HOSTILE_KEY, "a repository name"),
        ('"são josé" <2014>', HOSTILE_TITLE, HOSTILE_KEY, 'a title with "<& shown as written'),
        ("sao jose", HOSTILE_TITLE, HOSTILE_KEY, "accents need not be typed"),
    ],
)
def test_a_query_finds_the_item_and_links_its_record_page(servers, query, title, key, why):
    found = _search(servers, query)
    assert [title, _record(key)] in found.results, (why, found.results, found.status)


def test_every_word_must_match_and_the_newest_comes_first(servers):
    found = _search(servers, "consultative ascii")
    assert found.results == [
        [
            "Inglês codificado em ASCII (CCSD0002)",
            _record("sid.inpe.br/mtc-m18@80/2009/08.25.19.43"),
        ],
        ["ASCII Encoded English (CCSD0002)", _record("sid.inpe.br/mtc-m18@80/2009/07.21.13.23")],
    ]
    assert found.status == "2 items match “consultative ascii”."


def test_no_match_says_so(servers):
    found = _search(servers, "zzzzqqq")
    assert found.results == []
    assert found.status == "No item matches “zzzzqqq”."


def test_a_hostile_query_is_text(servers):
    found = _search(servers, '<img src=x onerror="document.title=1">')
    assert found.results == []
    assert found.status.startswith("No item matches “<img src=x")


def test_no_request_leaves_the_site(servers):
    site, landing = servers
    _search(servers, "mapa")
    assert foreign(landing.log.snapshot()) == []
    paths = [request.path for request in site.log.snapshot()]
    assert "/search/index.json" in paths
    assert any(path.startswith("/search/t/") for path in paths)
    assert any(path.startswith("/search/d/") for path in paths)


DELETED = "sid.inpe.br/mtc-m19/2011/05.10.18.31"


def test_a_portuguese_sites_search_speaks_portuguese(portuguese_servers):
    two = _search(portuguese_servers, "consultative ascii")
    assert two.html_lang == "pt" and len(two.results) == 2
    assert two.status == "2 itens correspondem a “consultative ascii”."
    one = _search(portuguese_servers, DELETED)
    assert one.status == f"1 item corresponde a “{DELETED}”." and one.marks == ["(removido)"]
    none = _search(portuguese_servers, "zzzzqqq")
    assert none.results == [] and none.status == "Nenhum item corresponde a “zzzzqqq”."


def test_an_english_sites_search_marks_a_deleted_item_in_english(servers):
    found = _search(servers, DELETED)
    assert found.html_lang == "en" and found.marks == ["(deleted)"]
    assert found.status == f"1 item matches “{DELETED}”."
