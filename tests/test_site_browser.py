"""The published site in a real browser: headless Chromium against loopback servers.

The site of the sample is built with the ``http://ibi.example.org/`` site URL and served
by a static server on 127.0.0.1; Chromium's host resolver maps ibi.example.org to it and
every other host (the Archives' addresses, any "evil" host) to a catch-all landing
server.  For each persistent URL, the browser must end exactly where
``Resolver(site).resolve(url, accept_language=...)`` says: the landing server (or the
site, for its own pages) receives that URL, or the page shows that alert.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from archive_factory import write_archive, write_item
from ibistatic.core.relations import compositions, modifier_text
from ibistatic.errors import IbiSyntaxError
from ibistatic.resolver import Resolver
from ibistatic.site.pages import script_json
from site_helpers import (
    CHROMIUM,
    SITE_URL,
    LandingServer,
    SiteServer,
    build,
    chromium_dom,
    foreign,
    landed_url,
    page_attribute,
    portuguese_site_servers,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="headless Chromium is not installed (scripts/test.sh installs it)"
    ),
]

#: emitted as pages: the defaults and "+" (so that "+" is tested both ways)
MODIFIERS = ["", "!", ":", ":(oai_dc)", "+"]
EN = "en-US,en"
PT = "pt-BR,pt"

# (path after the site URL, the browser's languages, why)
CASES = [
    # pages written by the build
    ("8JMKD3MGP8W/35MME4E", EN, "Example 7.2: the original comes first"),
    ("8JMKD3MGP8W/35MMLL8", EN, "Section 8.1"),
    ("8JMKD3MGP8W/35MMLL8!", EN, "last edition through ibi.nextedition"),
    ("8JMKD3MGP8W/35MME4E:(oai_dc)", EN, "metadata.cgi?choice=oai_dc"),
    ("8JMKD3MGP7W/3EPGUE5:", EN, "Example 7.10"),
    ("LK47B6W/362SFKH", EN, "Example 7.9: @relatorio.pdf"),
    ("sid.inpe.br/mtc-m18@80/2009/07.21.13.23", EN, "repository-name form with @80"),
    ("iconet.com.br/banon/2009/09.09.22.01:", EN, "inline Dublin Core: the site's metadata page"),
    (
        "iconet.com.br/banon/2009/09.09.22.01:(oai_dc)",
        EN,
        "inline Dublin Core: the site's oai_dc record",
    ),
    ("sid.inpe.br/mtc-m19/2014/01.02.17.23.57", EN, "hostile title and file name"),
    ("8JMKD3MGP7W/3EPGUE5+", PT, "+ page negotiated: Portuguese"),
    ("8JMKD3MGP7W/3EPGUE5+", EN, "+ page negotiated: English"),
    ("8JMKD3MGP8W/35MME4E+", PT, "+ page negotiated: pt-BR falls to pt"),
    ("8JMKD3MGP8W/35MME4E+", "fr", "+ page negotiated: no match, the item itself"),
    ("sid.inpe.br/mtc-m19/2011/05.10.18.31", EN, "deleted item: alert page"),
    ("8JMKD3MGP8W/35MME4E/", EN, "trailing slash"),
    (
        "8JMKD3MGP8W/35MME4E/index.html",
        EN,
        "the page's own file name asks for a file the item lacks",
    ),
    (
        "sid.inpe.br/mtc-m18@80/2008/03.17.15.17/index.html",
        EN,
        "the archive service's own index.html",
    ),
    # answered by 404.html in the browser
    ("8jmkd3mgp8w/35mme4e", EN, "lower-case IBIp"),
    ("SID.INPE.BR/MTC-M18@80/2009/07.21.13.23", EN, "upper-case repository name"),
    ("8JMKD3MGP8W/35MMLL8!:(oai_dc)", EN, "Section 8.2: !:(oai_dc) through the next edition"),
    ("8JMKD3MGP8W/35MME4E+(pt)", EN, "forced translation"),
    ("8JMKD3MGP7W/3EPGUE5+(en)", EN, "forced translation, other Archive"),
    ("8JMKD3MGP7W/3EPGUE5:+(en)", EN, "translation of the metadata"),
    ("8JMKD3MGP7W/3EPGUE5+:", PT, "metadata of the negotiated translation"),
    ("8jmkd3mgp7w/3epgue5+", EN, "+ negotiated by 404.html: English"),
    ("8jmkd3mgp7w/3epgue5+", PT, "+ negotiated by 404.html: Portuguese"),
    ("8JMKD3MGP7W/3EPGUE5!+:+", PT, "four steps"),
    ("LK47B6W/362SFKH/reference.bib", EN, "Example 7.11: a file path"),
    (
        "LK47B6W/362SFKH/Relat%C3%B3rio%20t%C3%A9cnico.txt",
        EN,
        "file path with a space and non-ASCII",
    ),
    ("LK47B6W/362SFKH/figuras/mapa%201.svg", EN, "file in a subfolder"),
    ("LK47B6W/362SFKH?ibiurl.verblist=GetFileList", EN, "Example 7.12 on a written page"),
    ("lk47b6w/362sfkh?ibiurl.verblist=GetFileList", EN, "Example 7.12 through 404.html"),
    (
        "8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
        EN,
        "verb list = !:(oai_dc)",
    ),
    ("8JMKD3MGP8W/35MME4E?ibiurl.requireditemstatus=Original", EN, "the original, not the copy"),
    (
        "LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original&ibiurl.verblist=GetMetadata",
        PT,
        "Example 6.8",
    ),
    ("8JMKD3MGP8W/35MME4E?utm_source=x", EN, "a query that is not the resolver's business"),
    ("sid.inpe.br/mtc-m19/2011/05.10.18.31!", EN, "deleted item through 404.html"),
    ("8JMKD3MGP8W/22222", EN, "unknown IBI"),
    ("8JMKD3MGP8W/35MMLL8+(es)", EN, "no such translation"),
]

# crafted URLs: none may land anywhere but a URL of the index or the not-found page
HOSTILE = [
    "8JMKD3MGP8W/35MMLL8/..%2F..%2Fevil.example",
    "/evil.example/",
    "8JMKD3MGP8W/35MMLL8?ibiurl.verblist=x&next=http://evil.example/",
    "javascript:alert(1)",
    "8JMKD3MGP8W/35MMLL8/%2F%2Fevil.example",
    "8JMKD3MGP8W/35MMLL8?ibiurl.requireditemstatus=http://evil.example/",
    "8JMKD3MGP8W/35MMLL8/http:%2F%2Fevil.example",
    "%2F%2Fevil.example",
]


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("browser-site"), modifiers=MODIFIERS)


@pytest.fixture(scope="module")
def servers(sample_site):
    site, landing = SiteServer(sample_site), LandingServer()
    with site.running(), landing.running():
        yield site, landing


def _expected(site: Path, path: str, languages: str):
    """('url', URL) | ('alert', name) | ('alert', 'bad-url') from the Python resolver."""
    request = SITE_URL + path.split("#", 1)[0]
    try:
        resolution = Resolver(site).resolve(request, accept_language=languages)
    except IbiSyntaxError:
        return ("alert", "bad-url")
    return ("url", resolution.url) if resolution.url is not None else ("alert", resolution.alert)


class _Canonical(HTMLParser):
    def __init__(self):
        super().__init__()
        self.href = None

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "link" and values.get("rel") == "canonical" and self.href is None:
            self.href = values.get("href")


def _where(dom: str):
    """Where the browser ended: ('landed', URL), ('alert', name), ('site', canonical) or
    ('xml', None) for the oai_dc record."""
    url = landed_url(dom)
    if url is not None:
        return ("landed", url)
    alert = page_attribute(dom, "data-alert")
    if alert is not None:
        return ("alert", alert)
    if "oai_dc:dc" in dom:
        return ("xml", None)
    finder = _Canonical()
    finder.feed(dom)
    return ("site", finder.href)


def _load_all(servers, urls_and_languages):
    site, landing = servers
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(
            pool.map(
                lambda case: chromium_dom(
                    case[0], site.port, landing.port, accept_language=case[1]
                ),
                urls_and_languages,
            )
        )


def test_chromium_ends_where_the_resolver_says(sample_site, servers):
    site_server, landing = servers
    doms = _load_all(servers, [(SITE_URL + path, languages) for path, languages, _ in CASES])
    expected_urls = set()
    failures = []
    for (path, languages, why), dom in zip(CASES, doms):
        kind, value = _expected(sample_site, path, languages)
        where = _where(dom)
        if where == (
            "site",
            None,
        ):  # the page's script had not finished (a loaded machine): once more, with time
            where = _where(
                chromium_dom(
                    SITE_URL + path,
                    site_server.port,
                    landing.port,
                    accept_language=languages,
                    budget_ms=20000,
                )
            )
        if kind == "alert":
            ok = where == ("alert", value)
        elif urlsplit(value).hostname == "ibi.example.org":
            site_path = value[len(SITE_URL) - 1 :]
            asked = [r.path for r in site_server.log.snapshot()]
            ok = site_path in asked and (
                where == ("site", value) or (where[0] == "xml" and value.endswith(".xml"))
            )
        else:
            expected_urls.add(value)
            ok = where == ("landed", value)
        if not ok:
            failures.append(
                f"{path} [{languages}] ({why}): expected {kind} {value}, browser: {where}"
            )
    assert not failures, "\n".join(failures)
    # Nothing but the expected URLs reached any other host.
    assert {r.url for r in foreign(landing.log.snapshot())} <= expected_urls


def test_the_languages_reach_the_resolver_as_accept_language(servers):
    site, landing = servers
    chromium_dom(SITE_URL + "8JMKD3MGP7W/3EPGUE5+", site.port, landing.port, accept_language=PT)
    asked = [r for r in site.log.snapshot() if r.path.startswith("/8JMKD3MGP7W/3EPGUE5+")]
    assert asked and asked[-1].accept_language == "pt-BR,pt;q=0.9"


def test_a_fragment_is_kept(servers):
    site, landing = servers
    dom = chromium_dom(SITE_URL + "8jmkd3mgp8w/35mme4e#page=2", site.port, landing.port)
    assert (
        'id="href">http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf#page=2<'
        in dom
    )


def test_the_not_found_page_explains_without_a_dead_search(servers):
    site, landing = servers
    dom = chromium_dom(SITE_URL + "8JMKD3MGP8W/22222!", site.port, landing.port)
    assert page_attribute(dom, "data-alert") == "not-found"
    assert "no Archive holds this IBI" in dom
    assert "8JMKD3MGP8W/22222" in dom and "last edition" in dom
    assert 'action="/search/"' in dom and 'value="8JMKD3MGP8W/22222"' in dom
    assert '<a href="/">' in dom


def test_crafted_urls_never_leave_the_index(sample_site, servers):
    site, landing = servers
    before = len(landing.log.snapshot())
    doms = _load_all(servers, [(SITE_URL + path, EN) for path in HOSTILE])
    for path, dom in zip(HOSTILE, doms):
        assert landed_url(dom) is None, path
        assert page_attribute(dom, "data-alert") in ("bad-url", "not-found", "unavailable"), path
    # Python agrees that none of them resolves.
    for path in HOSTILE:
        assert _expected(sample_site, path, EN)[0] == "alert", path
    assert foreign(landing.log.snapshot()[before:]) == []


# ---------------------------------------------------------------------------------
# 404.html in the site's language (script_words.browser_words): a Portuguese site's resolver
# writes Portuguese titles, explanations and labels, the resolver's message in English


class _Explained(HTMLParser):
    """What resolve.js wrote into ``#ibistatic-result``: the title, the alert (text and
    attributes), the other paragraphs and the details as [label, value, value's lang]."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.title = self.h1 = ""
        self.alert: tuple[str, dict] | None = None
        self.paragraphs: list[str] = []
        self.details: list[list] = []
        self.html_lang = None
        self._inside = False  # in #ibistatic-result
        self._into: str | None = None  # what the text read goes to
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "html":
            self.html_lang = values.get("lang")
        elif tag == "div" and values.get("id") == "ibistatic-result":
            self._inside = True
        elif tag == "title" or (self._inside and tag in ("h1", "dt", "dd")):
            self._into = tag
        elif self._inside and tag == "p":
            self._into = "alert" if values.get("role") == "alert" else "p"
        if self._into == "alert" and tag == "p":
            self.alert = ("", values)
        elif self._into == "p" and tag == "p":
            self.paragraphs.append("")
        elif self._into == "dt" and tag == "dt":
            self.details.append(["", "", None])
        elif self._into == "dd" and tag == "dd":
            self.details[-1][2] = values.get("lang")

    def handle_endtag(self, tag):
        if tag == "div":
            self._inside = False  # the result holds no other div
        self._into = None

    def handle_data(self, data):
        if self._into in ("title", "h1"):
            setattr(self, self._into, getattr(self, self._into) + data)
        elif self._into == "alert":
            self.alert = (self.alert[0] + data, self.alert[1])
        elif self._into == "p":
            self.paragraphs[-1] += data
        elif self._into in ("dt", "dd"):
            self.details[-1][0 if self._into == "dt" else 1] += data


@pytest.fixture(scope="module")
def portuguese_servers(tmp_path_factory):
    with portuguese_site_servers(tmp_path_factory.mktemp("pt-site")) as servers:
        yield servers


def _explained(servers, paths: list[str]) -> list[_Explained]:
    return [_Explained(dom) for dom in _load_all(servers, [(SITE_URL + p, PT) for p in paths])]


def test_a_portuguese_sites_404_page_explains_in_portuguese(portuguese_servers):
    from ibistatic.core.facts import ALERT_MESSAGES
    from ibistatic.site.i18n import ALERTS

    not_found, unavailable, bad = _explained(
        portuguese_servers,
        [
            "8JMKD3MGP8W/22222!",
            "8JMKD3MGP8W/35MMLL8:+(es)",
            "8jmkd3mgp8w/35mmll8?ibiurl.verblist=x",  # no page: 404.html parses it
        ],
    )
    assert {page.html_lang for page in (not_found, unavailable, bad)} == {"pt"}
    # the title and explanation of the alert pages, the resolver's message in English
    assert not_found.h1 == "Não encontrado" == ALERTS["not-found"]["pt"][0]
    assert not_found.title == "Não encontrado — 8JMKD3MGP8W/22222!"
    assert not_found.alert == (
        ALERT_MESSAGES["not-found"],
        {"class": "alert", "role": "alert", "lang": "en"},
    )
    assert not_found.paragraphs == [ALERTS["not-found"]["pt"][1]]
    assert not_found.details == [
        ["IBI", "8JMKD3MGP8W/22222", None],
        ["Forma", "IBIp", None],
        ["Pedido", "última edição", None],
        ["Tentado", "8JMKD3MGP8W/22222", None],
    ]
    assert unavailable.h1 == "Não disponível"
    assert unavailable.alert[0] == ALERT_MESSAGES["unavailable"]
    assert unavailable.alert[1]["lang"] == "en"
    assert ["Pedido", "tradução (es) dos metadados", None] in unavailable.details
    assert bad.h1 == "Não é uma URL persistente" and bad.alert[1]["lang"] == "en"
    assert bad.paragraphs == [ALERTS["bad-url"]["pt"][1]]
    labels = [label for label, _, _ in bad.details]
    assert labels == ["Requisição", "Onde", "Esperado", "Dica"]
    expected = bad.details[2]
    assert expected[1].endswith("at character 37, found 'x'") and expected[2] == "en"


def test_an_english_sites_404_page_keeps_its_english(servers):
    [page] = [
        _Explained(dom) for dom in _load_all(servers, [(SITE_URL + "8JMKD3MGP8W/22222!", EN)])
    ]
    assert page.html_lang == "en" and page.h1 == "Not found"
    assert page.alert == ("no Archive holds this IBI", {"class": "alert", "role": "alert"})
    assert [label for label, _, _ in page.details] == ["IBI", "Form", "Asked for", "Tried"]
    assert page.details[2][1] == "last edition"


# ---------------------------------------------------------------------------------
# The JavaScript port against the Python resolver, over many requests in one page


def _requests(site: Path) -> list[tuple[str, list[str]]]:
    keys = sorted(
        {
            key
            for shard in (site / "index" / "shards").glob("*.json")
            for key in json.loads(shard.read_text("utf-8"))
        }
    )
    modifiers = [modifier_text(r) for r in compositions(["en", "pt", "pt-BR", "es"], ["oai_dc"])]
    extras = [
        "/reference.bib",
        "/Relat%C3%B3rio%20t%C3%A9cnico.txt",
        "/figuras/mapa%201.svg",
        "/@relatorio.pdf",
        "/missing",
        "?ibiurl.verblist=GetFileList",
        "?ibiurl.requireditemstatus=Original",
        "!:(oai_dc)/reference.bib",
        "?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
        "+?ibiurl.requireditemstatus=Original&ibiurl.verblist=GetMetadata",
        "?ibiurl.verblist=GetFileList+GetTranslation",
        "/..%2Fx",
        "?ibiurl.verblist=x",
        "+(zz)",
        "+(pt-br)",
        "?a",
        "/%ZZ",
    ]
    requests = []
    for key in keys:
        for form in dict.fromkeys((key, key.swapcase())):
            requests += [
                (form + m, ["pt-BR", "pt"] if n % 2 else ["en"]) for n, m in enumerate(modifiers)
            ]
            requests += [(form + e, []) for e in extras]
    return requests + [("", []), ("javascript:alert(1)", []), ("/evil.example/", []), ("X/Y", [])]


def _python_answer(resolver: Resolver, request: str, languages: list[str]) -> dict:
    try:
        r = resolver.resolve(SITE_URL + request, accept_language=",".join(languages) or None)
    except IbiSyntaxError:
        return {"syntax": True}
    return _comparable({"url": r.url, "alert": r.alert, "ibi": r.ibi, "archive": r.archive})


def _comparable(answer: dict) -> dict:
    # The `ibi` of an answer is the IBI whose URL was returned; an alert's `ibi` only
    # names the request, in whichever form and case (the Python resolver's precomputed
    # answers name the repository, its live resolution the IBI as written).
    if answer.get("alert"):
        return {**answer, "ibi": None}
    if answer.get("ibi"):
        return {**answer, "ibi": answer["ibi"].lower()}
    return answer


HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<script type="application/json" id="cases">{cases}</script>
<pre id="results">pending</pre>
<script src="/assets/facts.js"></script>
<script src="/assets/resolve.js"></script>
<script>
(async function () {{
  const cases = JSON.parse(document.getElementById("cases").textContent);
  const loaded = {{ manifest: null, shards: {{}} }};
  const out = [];
  for (const [request, languages] of cases) {{
    try {{
      const r = (await ibistatic.resolveRequest("/", request, languages, loaded)).resolution;
      out.push({{ url: r.url, alert: r.alert, ibi: r.ibi, archive: r.archive }});
    }} catch (error) {{
      out.push(error instanceof ibistatic.SyntaxProblem ? {{ syntax: true }} : {{ error: String(error) }});
    }}
  }}
  document.getElementById("results").textContent = JSON.stringify(out);
}})();
</script></body></html>
"""


def _browser_answers(
    site_dir: Path, site: SiteServer, landing: LandingServer, requests
) -> list[dict]:
    """What resolve.js answers for each (request, languages), in one page of Chromium."""
    import html

    (site_dir / "harness.html").write_text(
        HARNESS.format(cases=script_json(requests)), encoding="utf-8"
    )
    dom = chromium_dom(SITE_URL + "harness.html", site.port, landing.port, budget_ms=60000)
    start = dom.index('<pre id="results">') + len('<pre id="results">')
    return json.loads(html.unescape(dom[start : dom.index("</pre>", start)]))


def _differences(site_dir: Path, requests, results) -> list:
    resolver = Resolver(site_dir)
    assert len(results) == len(requests)
    return [
        (request, languages, js, py)
        for (request, languages), js in zip(requests, results)
        if _comparable(js) != (py := _python_answer(resolver, request, languages))
    ]


def test_the_javascript_resolver_agrees_with_python(sample_site, servers):
    site, landing = servers
    requests = _requests(sample_site)
    results = _browser_answers(sample_site, site, landing, requests)
    assert len(requests) > 2000
    assert _differences(sample_site, requests, results)[:10] == []
    # Every file fetched was one of the index's shards (records or precomputed answers).
    asked = {r.path for r in site.log.snapshot() if r.path.startswith("/index/")}
    assert all(
        p == "/index/manifest.json" or p.startswith(("/index/shards/", "/index/answers/"))
        for p in asked
    )


@pytest.fixture(scope="module")
def troubled_site(tmp_path_factory) -> Path:
    """Conflicts, loops, copies without an original, a declared relation subset."""
    root = tmp_path_factory.mktemp("troubled")
    a = write_archive(root / "a", "a.example.org", "example.org/service/2020/01.01.00.00")
    b = write_archive(
        root / "b",
        "b.example.org",
        "example.org/service/2020/01.01.00.01",
        relations=["", ".metadata", ".metadata(oai_dc)", ".translation(pt)", ".lastedition"],
    )
    rep = "example.org/rep/2020/01.02.03."
    for archive in (a, b):
        write_item(archive, rep + "04", state="Original")  # conflict
    write_item(a, rep + "05", state="Original", next_edition=rep + "06")  # edition loop
    write_item(a, rep + "06", state="Original", next_edition=rep + "05")
    write_item(b, rep + "07", state="Copy", ibip="8JMKD3MGP8W/35AAAAA")  # no original anywhere
    write_item(a, rep + "08", state="Deleted", files={})
    write_item(b, rep + "08", state="Copy")  # deleted here, a copy there
    write_item(
        a,
        rep + "09",
        state="Original",
        language="en",
        translations={"pt": rep + "10"},
        metadata=rep + "11",
        next_edition=rep + "12",
    )
    write_item(
        b,
        rep + "09",
        state="Copy",
        language="en",
        translations={"pt": rep + "10"},
        metadata=rep + "11",
        next_edition=rep + "12",
    )
    write_item(a, rep + "10", state="Original", language="pt", translations={"en": rep + "09"})
    write_item(
        b,
        rep + "11",
        state="Original",
        content_type="Metadata",
        files={"m.html": "m", "dc.xml": "<x/>"},
        target="m.html",
        formats={"oai_dc": "dc.xml"},
    )
    write_item(
        b,
        rep + "12",
        state="Original",
        language="en",
        dublin_core={"title": "twelve"},
        translations={"pt-BR": rep + "13"},
    )
    write_item(
        a,
        rep + "13",
        state="Original",
        language="pt-BR",
        translations={"en": rep + "12"},
        next_edition=rep + "13.5",
    )
    return build(root / "build", archives=[a, b])


def test_the_javascript_resolver_agrees_with_python_when_archives_disagree(troubled_site):
    modifiers = [modifier_text(r) for r in compositions(["en", "pt", "pt-BR"], ["oai_dc"])]
    keys = [f"example.org/rep/2020/01.02.03.{n:02d}" for n in range(4, 15)] + [
        "8JMKD3MGP8W/35AAAAA",
        "8jmkd3mgp8w/35aaaaa",
    ]
    extras = [
        "?ibiurl.requireditemstatus=Original",
        "!?ibiurl.requireditemstatus=Original",
        "/document.txt",
        "?ibiurl.verblist=GetFileList",
    ]
    requests = [
        (k + m, langs)
        for k in keys
        for m in modifiers + extras
        for langs in (["pt-BR", "pt"], ["en"])
    ]
    site, landing = SiteServer(troubled_site), LandingServer()
    with site.running(), landing.running():
        results = _browser_answers(troubled_site, site, landing, requests)
    alerts = {r.get("alert") for r in results}
    assert {"conflict", "loop", "no-original", "unavailable", None} <= alerts
    assert _differences(troubled_site, requests, results)[:10] == []


# ---------------------------------------------------------------------------------
# Hostile names: escaped everywhere, and the redirect still lands right

HOSTILE_TITLE = 'Quote "><script>alert(1)</script> & </script><!-- \u2028 end'
HOSTILE_FILE = (
    '"><script>alert(2)</script>.txt'  # a folder '"><script>alert(2)<' holding 'script>.txt'
)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    archive = write_archive(
        root / "evil-archive", "files.example.org", "example.org/service/2020/01.01.00.00"
    )
    write_item(
        archive,
        "example.org/rep/2020/01.02.03.04",
        {HOSTILE_FILE: "x\n"},
        state="Original",
        ibip="8JMKD3MGP8W/35ABCDE",
        dublin_core={"title": HOSTILE_TITLE},
        language="en",
    )
    return build(root / "build", archives=[archive], modifiers="all")


def test_hostile_names_redirect_to_the_right_url(hostile_site):
    expected = Resolver(hostile_site).resolve(SITE_URL + "8JMKD3MGP8W/35ABCDE").url
    assert "%22%3E%3Cscript%3Ealert(2)%3C/script%3E.txt" in expected
    site, landing = SiteServer(hostile_site), LandingServer()
    with site.running(), landing.running():
        cases = [
            (SITE_URL + p, EN)
            for p in (
                "8JMKD3MGP8W/35ABCDE",
                "example.org/rep/2020/01.02.03.04",
                "8jmkd3mgp8w/35abcde",
            )
        ]
        doms = _load_all((site, landing), cases)
    for dom in doms:
        assert landed_url(dom) == expected
