"""The static site's written files: redirect and alert pages, 404.html, metadata pages,
file lists, landing page and sitemap (ibistatic/site/pages.py, ibistatic/site_src/).

The browser's view of the same site is in test_site_browser.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives
from ibistatic.config import load_config
from ibistatic.errors import IbistaticError
from ibistatic.resolver import Resolver
from ibistatic.site import pages as site_pages
from ibistatic.site import script
from ibistatic.site.assets import facts_script
from ibistatic.site.pages import (
    DC_ELEMENTS,
    SITE_SRC,
    base_path,
    check_relative,
    oai_dc_elements,
    persistent_url,
    script_json,
    site_file,
)
from ibistatic.site.script import target_script
from ibistatic.targets import page_targets
from site_helpers import SAMPLE, SITE_URL, build, tree_bytes, write_config

OAI_DC = "http://www.openarchives.org/OAI/2.0/oai_dc/"
DC = "http://purl.org/dc/elements/1.1/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = (
    "http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
)
M16C = "http://mtc-m16c.sid.inpe.br/col/"
M16D = "http://mtc-m16d.sid.inpe.br/col/"


class Page(HTMLParser):
    """What the tests look at in a written HTML page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self.text: list[str] = []
        self._script: dict | None = None
        self._title = False
        self.title = ""
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        values = {name: value for name, value in attrs}
        self.tags.append((tag, values))
        if tag == "script":
            self._script = values
            self.scripts.append((values, ""))
        self._title = tag == "title"

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None
        self._title = False

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        else:
            self.text.append(data)
            if self._title:
                self.title += data

    def first(self, tag: str, **wanted) -> dict | None:
        for name, values in self.tags:
            if name == tag and all(values.get(k.replace("_", "-")) == v for k, v in wanted.items()):
                return values
        return None

    @property
    def canonical(self) -> str | None:
        found = self.first("link", rel="canonical")
        return found["href"] if found else None

    @property
    def refresh(self) -> str | None:
        found = self.first("meta", http_equiv="refresh")
        return found["content"] if found else None

    @property
    def main(self) -> dict:
        return self.first("main", id="ibistatic")

    def data(self, element_id: str):
        for attrs, text in self.scripts:
            if attrs.get("id") == element_id:
                return json.loads(text)
        return None


def page(site: Path, path: str) -> Page:
    return Page((site / path / "index.html").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("pages"))


@pytest.fixture(scope="module")
def resolver(site) -> Resolver:
    return Resolver(site)


# ---------------------------------------------------------------------------------
# Redirect pages: the standard's own vectors first (docs/sample-archive.md)

REDIRECTS = [
    # Example 7.2: url, url.metadata(oai_dc)
    (
        "8JMKD3MGP8W/35MME4E",
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf",
    ),
    (
        "8JMKD3MGP8W/35MME4E:(oai_dc)",
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/metadata.cgi?choice=oai_dc",
    ),
    ("8JMKD3MGP8W/35MME4E:", M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/metadata.cgi"),
    (
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf",
    ),
    # Section 8.1 and the last edition of Section 8.2
    (
        "8JMKD3MGP8W/35MMLL8",
        M16C + "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
    ),
    (
        "8JMKD3MGP8W/35MMLL8!",
        M16C + "sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf",
    ),
    # Example 7.9 and 7.10
    ("LK47B6W/362SFKH", M16D + "iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf"),
    ("8JMKD3MGP7W/3EPGUE5:", M16D + "sid.inpe.br/mtc-m19/2013/09.04.12.27.58/doc/metadata.cgi"),
    # inline Dublin Core: the site's own pages
    ("LK47B6W/362SFKH:", SITE_URL + "metadata/iconet.com.br/banon/2009/09.09.22.01/"),
    (
        "LK47B6W/362SFKH:(oai_dc)",
        SITE_URL + "metadata/iconet.com.br/banon/2009/09.09.22.01/oai_dc.xml",
    ),
    # hostile file name and title
    (
        "sid.inpe.br/mtc-m19/2014/01.02.17.23.57",
        M16D
        + "sid.inpe.br/mtc-m19/2014/01.02.17.23.57/doc/"
        + "Mapa%20de%20uso%20do%20solo%20%E2%80%94%20S%C3%A3o%20Jos%C3%A9%20dos%20Campos.svg",
    ),
]


@pytest.mark.parametrize(("path", "url"), REDIRECTS)
def test_redirect_page_names_its_target_everywhere(site, resolver, path, url):
    assert resolver.resolve(SITE_URL + path).url == url  # the vector is the resolver's answer
    found = page(site, path)
    assert found.canonical == url
    assert found.refresh == f"0; url={url}"
    assert found.data("ibistatic-target")["url"] == url
    assert found.first("a", href=url) is not None
    assert found.first("meta", name="robots") is None
    assert found.main["data-state"] == "redirect"


def test_the_refresh_is_for_browsers_without_javascript_only(site):
    text = (site / "8JMKD3MGP8W/35MMLL8/index.html").read_text("utf-8")
    assert re.search(
        r'<noscript><meta http-equiv="refresh" content="0; url=[^"]+"></noscript>', text
    )


GOLDEN_LAST_EDITION = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src * data:; base-uri 'none'; form-action 'none'">
<link rel="icon" href="data:,">
<title>Reference Model for an Open Archival Information System (OAIS)</title>
<noscript><meta http-equiv="refresh" content="0; url=http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf"></noscript>
<link rel="canonical" href="http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf">
<link rel="stylesheet" href="/assets/ibistatic.css">
</head>
<body>
<main id="ibistatic" data-state="redirect">
<div id="ibistatic-result">
<h1>Reference Model for an Open Archival Information System (OAIS)</h1>
<p id="ibistatic-message">This persistent URL (last edition) leads to <a href="http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf">http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf</a>.</p>
<dl>
<dt>IBI</dt><dd>8JMKD3MGP8W/35MMLL8</dd>
<dt>Modifier</dt><dd>!</dd>
<dt>Archive</dt><dd>mtc-m16c</dd>
</dl>
<p><a href="http://ibi.example.org/record/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/">Record of this item</a></p>
</div>
</main>
<script type="application/json" id="ibistatic-target">{"base":"/","url":"http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS%20650.0-M-2.pdf"}</script>
<script src="/assets/target-DIGEST.js"></script>
</body>
</html>
"""  # noqa: E501 (the golden page must match byte for byte: its lines stay whole)


def test_golden_redirect_page(site):
    """The page of Section 8.2's last edition, byte for byte."""
    text = (site / "8JMKD3MGP8W/35MMLL8!/index.html").read_text("utf-8")
    digest = hashlib.sha256((site / "assets" / target_script()[0]).read_bytes()).hexdigest()
    assert text == GOLDEN_LAST_EDITION.replace("DIGEST", digest[:12])


def test_every_page_runs_the_same_script_from_one_asset(site):
    """No redirect or alert page holds code: each loads the one shared script of assets/
    (data never enters code, and its bytes are cached once), under a policy that would
    refuse an inline script."""
    name, text = target_script()
    sources, inline, policies = Counter(), [], set()
    for path in site.rglob("index.html"):
        found = Page(path.read_text("utf-8"))
        if found.main is None or found.main.get("data-state") not in ("redirect", "done"):
            continue
        for attrs, body in found.scripts:
            if "src" in attrs:
                sources[attrs["src"]] += 1
            elif attrs.get("type") != "application/json":
                inline.append((path, body))
        policies.add(found.first("meta", http_equiv="Content-Security-Policy")["content"])
    assert inline == []
    assert list(sources) == [f"/assets/{name}"] and sources[f"/assets/{name}"] > 50
    assert policies == {script.PAGE_POLICY} and "'unsafe-inline'" not in script.PAGE_POLICY
    assert (site / "assets" / name).read_text("utf-8") == text
    assert 'document.getElementById("ibistatic-target")' in text and "<script" not in text


def test_paths_keep_modifier_characters_literally(site):
    for path in (
        "8JMKD3MGP8W/35MME4E:(oai_dc)",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23!",
        "8JMKD3MGP7W/3EPGUE5:",
    ):
        assert (site / path / "index.html").is_file()
    assert not list(site.rglob("*%*"))  # nothing percent-encoded on disk


def test_a_page_for_every_target_and_nothing_else(tmp_path):
    from ibistatic.site.build import build_site

    config = load_config(write_config(tmp_path, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"]))
    loaded = load_archives(config.archives, config.site_url)
    targets = list(page_targets(loaded, config.modifiers))
    out = config.output
    pages = build_site(config).pages
    written = {
        str(p.relative_to(out))
        for p in out.rglob("*")
        if p.is_file()
        and p.parts[len(out.parts)]
        not in ("assets", "index", "_ibistatic", "_redirects", ".nojekyll", "search")
    }
    assert (out / "search" / "index.html").is_file()  # the search (test_search.py)
    target_pages = {t.path + "/index.html" for t in targets}
    assert target_pages <= written
    others = written - target_pages
    site_wide = {"404.html", "index.html", "sitemap.xml", "sitemap-pages.xml", "robots.txt"}
    assert site_wide <= others
    assert all(p.startswith(("files/", "metadata/", "record/")) for p in others - site_wide)
    assert pages == len(written)
    assert len(targets) == 20 * 5  # 20 IBIs (both forms) x the five default modifiers


# ---------------------------------------------------------------------------------
# Alert pages


ALERTS = [
    ("sid.inpe.br/mtc-m19/2011/05.10.18.31", "deleted", "the item was deleted"),
    ("sid.inpe.br/mtc-m19/2011/05.10.18.31!", "deleted", "the item was deleted"),
    (
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47:",
        "unavailable",
        "no Archive can answer this relation of the item",
    ),
    (
        "sid.inpe.br/mtc-m19/2013/09.04.12.27.58:(oai_dc)",
        "unavailable",
        "no Archive can answer this relation of the item",
    ),
]


@pytest.mark.parametrize(("path", "alert", "message"), ALERTS)
def test_alert_pages_explain_and_are_not_indexed(site, resolver, path, alert, message):
    assert resolver.resolve(SITE_URL + path).alert == alert
    found = page(site, path)
    assert found.first("meta", name="robots") == {"name": "robots", "content": "noindex"}
    assert found.main["data-alert"] == alert
    assert message in "".join(found.text)
    assert found.canonical is None and found.refresh is None
    assert found.data("ibistatic-target") == {"alert": alert, "base": "/", "message": message}


def test_conflict_and_loop_alert_pages(tmp_path):
    root = tmp_path / "archives"
    a = write_archive(root / "a", "a.example.org", "example.org/service/2020/01.01.00.00")
    b = write_archive(root / "b", "b.example.org", "example.org/service/2020/01.01.00.01")
    for archive in (a, b):
        write_item(archive, "example.org/rep/2020/01.02.03.04", state="Original")
    write_item(
        a,
        "example.org/rep/2020/01.02.03.05",
        state="Original",
        next_edition="example.org/rep/2020/01.02.03.06",
    )
    write_item(
        a,
        "example.org/rep/2020/01.02.03.06",
        state="Original",
        next_edition="example.org/rep/2020/01.02.03.05",
    )
    site = build(tmp_path / "build", archives=[a, b])
    # a double claim alerts only when the original is asked for (a query the page
    # resolves in the browser); the plain URL redirects to the first Archive's answer
    claimed = page(site, "example.org/rep/2020/01.02.03.04")
    assert (
        claimed.data("ibistatic-target")["url"]
        == "http://a.example.org/col/example.org/rep/2020/01.02.03.04/doc/document.txt"
    )
    assert claimed.main.get("data-alert") is None
    loop = page(site, "example.org/rep/2020/01.02.03.05!")
    assert loop.main["data-alert"] == "loop"


# ---------------------------------------------------------------------------------
# "+" pages carry the negotiation for the browser


def test_open_translation_pages_carry_the_negotiation(tmp_path):
    site = build(tmp_path, modifiers=["", "+"])
    data = page(site, "8JMKD3MGP7W/3EPGUE5+").data("ibistatic-target")
    assert (
        data["url"]
        == M16D + "sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%C3%B3rio%20Final.pdf"
    )
    assert [(n["tag"], n["url"]) for n in data["negotiation"]] == [
        ("en", M16D + "sid.inpe.br/mtc-m19/2013/09.04.12.30.12/doc/publication.pdf"),
        ("pt-BR", M16D + "sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%C3%B3rio%20Final.pdf"),
    ]
    resolver = Resolver(site)
    for entry in data["negotiation"]:
        assert (
            resolver.resolve(SITE_URL + "8JMKD3MGP7W/3EPGUE5+", accept_language=entry["tag"]).url
            == entry["url"]
        )
    assert not (site / "8JMKD3MGP7W/3EPGUE5!").exists()  # only the listed modifiers


def test_modifiers_all_emits_table_6_2_with_languages(tmp_path):
    site = build(tmp_path, modifiers="all")
    for path in (
        "8JMKD3MGP8W/35MME4E+(pt)",
        "8JMKD3MGP8W/35MME4E!+:+",
        "8JMKD3MGP7W/3EPGUE5+(pt-BR):(oai_dc)+(pt-BR)",
    ):
        assert (site / path / "index.html").is_file(), path
    assert not (
        site / "8JMKD3MGP7W/3EPGUE5+(pt-BR):(oai_dc)+(en)"
    ).exists()  # two languages: 404.html answers
    assert (
        page(site, "8JMKD3MGP8W/35MME4E+(pt)").canonical
        == M16C + "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf"
    )


# ---------------------------------------------------------------------------------
# 404.html, landing page, sitemap


def test_404_page_runs_the_resolver_from_the_site_root(site):
    found = Page((site / "404.html").read_text("utf-8"))
    from ibistatic.site.script_words import browser_words

    words = browser_words("en")  # the site's language
    assert found.data("ibistatic-config") == {"base": "/", "site": SITE_URL, "words": words}
    assert found.first("script", id="ibistatic-config")["data-run"] == "404"
    assert found.first("script", src="/assets/facts.js") is not None
    assert found.first("script", src="/assets/resolve.js") is not None
    assert found.first("form", id="ibistatic-search")["action"] == "/search/"
    assert found.first("input", name="q") is not None
    assert found.first("a", href="/") is not None
    assert found.first("meta", name="robots")["content"] == "noindex"
    assert (site / "assets" / "resolve.js").read_bytes() == (
        SITE_SRC / "assets" / "resolve.js"
    ).read_bytes()
    assert (site / "assets" / "facts.js").read_text("utf-8") == facts_script()
    assert (site / "assets" / "ibistatic.css").is_file()


def test_a_site_below_a_path_finds_its_assets_there(tmp_path):
    site = build(tmp_path, site_url="http://example.org/ibi/")
    found = Page((site / "404.html").read_text("utf-8"))
    config = found.data("ibistatic-config")
    assert (config["base"], config["site"]) == ("/ibi/", "http://example.org/ibi/")
    assert found.first("script", src="/ibi/assets/resolve.js") is not None
    assert found.first("script", src="/ibi/assets/facts.js") is not None
    redirect = page(site, "LK47B6W/362SFKH")
    assert redirect.data("ibistatic-target")["base"] == "/ibi/"
    record = "http://example.org/ibi/record/iconet.com.br/banon/2009/09.09.22.01/"
    assert redirect.first("a", href=record) is not None
    assert (
        page(site, "LK47B6W/362SFKH:").canonical
        == "http://example.org/ibi/metadata/iconet.com.br/banon/2009/09.09.22.01/"
    )


def test_landing_page_counts_and_links(site):
    found = Page((site / "index.html").read_text("utf-8"))
    text = " ".join("".join(found.text).split())
    assert "17 items held in 2 Archives: 20 IBIs, 100 persistent URLs" in text
    rows = [
        cells
        for cells in re.findall(r"<tr><td>(.*?)</tr>", (site / "index.html").read_text("utf-8"))
    ]
    assert [re.findall(r"<td>(.*?)</td>", "<td>" + r) for r in rows] == [
        ["mtc-m16c", "mtc-m16c.sid.inpe.br", "7", "0", "1"],
        ["mtc-m16d", "mtc-m16d.sid.inpe.br", "7", "2", "0"],
    ]
    for href in ("/search/list/1/", "/sitemap-pages.xml", "/sitemap.xml"):
        assert found.first("a", href=href) is not None
    assert found.first("a", href="/catalog/") is None  # catalog: false publishes none
    assert found.first("form", id="ibistatic-search")["action"] == "/search/"


def _locs(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    return [loc.text for loc in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")]


def test_sitemap_lists_every_redirecting_persistent_url(site, resolver):
    locs = _locs(site / "sitemap.xml")
    # alert pages left out: the deleted item (5 modifiers) and the metadata of the four
    # Metadata items (`:`, `:(oai_dc)`, `!:(oai_dc)`: 12), which have no metadata of their own
    assert len(locs) == len(set(locs)) == 20 * 5 - 5 - 12
    assert SITE_URL + "8JMKD3MGP8W/35MME4E:(oai_dc)" in locs
    assert SITE_URL + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23!" in locs
    for loc in locs:
        assert loc.startswith(SITE_URL)
        assert resolver.resolve(loc).url is not None


def test_a_large_sitemap_becomes_an_index(tmp_path, monkeypatch):
    from ibistatic.site import sitewide
    from ibistatic.site.build import build_site

    monkeypatch.setattr(sitewide, "SITEMAP_LIMIT", 30)
    config = load_config(
        write_config(tmp_path, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"], output="out")
    )
    build_site(config)
    index = _locs(tmp_path / "out" / "sitemap.xml")
    assert index == [
        SITE_URL + "sitemaps/1.xml",
        SITE_URL + "sitemaps/2.xml",
        SITE_URL + "sitemaps/3.xml",
    ]
    parts = [_locs(tmp_path / "out" / "sitemaps" / f"{n}.xml") for n in (1, 2, 3)]
    assert [len(p) for p in parts] == [30, 30, 23]


def test_sitemap_parts_are_made_as_their_rows_come(tmp_path):
    """A urlset of up to `limit` rows is the sitemap itself; past it, parts and an index.
    The rows are read a part ahead of what is written, never all at once."""
    from ibistatic.site import sitewide
    from ibistatic.site.pages import Site

    config = load_config(write_config(tmp_path, [SAMPLE / "mtc-m16c"]))
    urlset = sitewide.UrlSet(Site(config))
    pulled = []

    def rows(count):
        for n in range(count):
            pulled.append(n)
            yield urlset.row(f"{SITE_URL}{n}/")

    for count, names in [
        (0, ["sitemap.xml"]),
        (5, ["sitemap.xml"]),
        (6, ["sitemaps/1.xml", "sitemaps/2.xml", "sitemap.xml"]),
        (23, [f"sitemaps/{n}.xml" for n in range(1, 6)] + ["sitemap.xml"]),
    ]:
        pulled.clear()
        made = sitewide.sitemap_files(urlset, "sitemap.xml", rows(count), 5)
        written = []
        for name, text in made:
            written.append(name)
            if name.startswith("sitemaps/"):  # the part after this one at most is read
                assert len(pulled) <= 5 * (len(written) + 1)
                assert text.count("<url>") == min(5, count - 5 * (len(written) - 1))
        assert written == names and len(pulled) == count


# ---------------------------------------------------------------------------------
# Metadata pages and file lists


def _check_oai_dc(path: Path) -> list[tuple[str, str]]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{{{OAI_DC}}}dc"
    assert root.attrib == {f"{{{XSI}}}schemaLocation": SCHEMA_LOCATION}
    children = []
    for child in root:
        namespace, local = child.tag[1:].split("}")
        assert namespace == DC and local in DC_ELEMENTS
        assert not child.attrib and len(child) == 0
        children.append((local, child.text or ""))
    order = [DC_ELEMENTS.index(local) for local, _ in children]
    assert order == sorted(order)
    return children


def test_every_oai_dc_record_is_valid(site):
    records = sorted(site.glob("metadata/**/oai_dc.xml"))
    assert len(records) == 10  # every item with inline dublin-core, once (copies share the page)
    for record in records:
        assert _check_oai_dc(record)


def test_oai_dc_record_golden(site):
    text = (site / "metadata/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/oai_dc.xml").read_text("utf-8")
    assert (
        text
        == f"""<?xml version="1.0" encoding="UTF-8"?>
<oai_dc:dc xmlns:oai_dc="{OAI_DC}" xmlns:dc="{DC}" xmlns:xsi="{XSI}" xsi:schemaLocation="{SCHEMA_LOCATION}">
  <dc:title>Mapa &#34;São José&#34; &lt;2014&gt; &amp; outros</dc:title>
  <dc:creator>Instituto Nacional de Pesquisas Espaciais (INPE)</dc:creator>
  <dc:subject>uso do solo</dc:subject>
  <dc:subject>São José dos Campos</dc:subject>
  <dc:description>Mapa esquemático de uso do solo do município de São José dos Campos (SP).</dc:description>
  <dc:date>2014-01-02</dc:date>
  <dc:type>Image</dc:type>
  <dc:format>image/svg+xml</dc:format>
  <dc:identifier>{SITE_URL}sid.inpe.br/mtc-m19/2014/01.02.17.23.57</dc:identifier>
  <dc:language>pt</dc:language>
</oai_dc:dc>
"""
    )


OAI_DC_CASES = [
    ((("title", ("T",)),), [("title", "T")]),
    ((("date", ("2020",)), ("title", ("T",))), [("title", "T"), ("date", "2020")]),  # schema order
    (
        (("Title", ("T",)), ("note", ("n",))),
        [("title", "T")],
    ),  # case folded; not a DC element: left out
    ((("subject", ("a", "b")),), [("subject", "a"), ("subject", "b")]),
    ((("title", ("bell\x07 and \ufffe",)),), [("title", "bell and ")]),  # not XML characters
]


@pytest.mark.parametrize(("dublin_core", "expected"), OAI_DC_CASES)
def test_oai_dc_elements(dublin_core, expected):
    assert oai_dc_elements(dublin_core) == expected


def test_metadata_page_shows_every_element(site):
    path = "metadata/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/index.html"
    text = (site / path).read_text("utf-8")
    assert "<h1>Mapa &#34;São José&#34; &lt;2014&gt; &amp; outros</h1>" in text
    found = Page(text)
    assert found.canonical == SITE_URL + "metadata/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/"
    assert found.first("a", href="oai_dc.xml") is not None
    assert found.first("a", href=SITE_URL + "sid.inpe.br/mtc-m19/2014/01.02.17.23.57") is not None
    assert "Mapa esquemático de uso do solo" in "".join(found.text)


def test_file_list_links_every_file(site):
    found = page(site, "files/iconet.com.br/banon/2009/09.09.22.01")
    base = M16D + "iconet.com.br/banon/2009/09.09.22.01/doc/"
    links = [
        (values["href"])
        for tag, values in found.tags
        if tag == "a" and values["href"].startswith(base)
    ]
    assert links == [
        base + "@relatorio.pdf",
        base + "Relat%C3%B3rio%20t%C3%A9cnico.txt",
        base + "figuras/mapa%201.svg",
        base + "reference.bib",
    ]
    assert "Relatório técnico.txt" in found.text
    assert found.canonical == SITE_URL + "files/iconet.com.br/banon/2009/09.09.22.01/"


def test_the_file_list_is_where_getfilelist_leads(site, resolver):
    url = resolver.resolve(SITE_URL + "LK47B6W/362SFKH?ibiurl.verblist=GetFileList").url
    assert url == SITE_URL + "files/iconet.com.br/banon/2009/09.09.22.01/"
    assert (site / site_file(SITE_URL, url)).is_file()


def test_no_page_for_deleted_items(site):
    assert not (site / "files/sid.inpe.br/mtc-m19/2011/05.10.18.31").exists()
    assert not (site / "metadata/sid.inpe.br/mtc-m19/2011/05.10.18.31").exists()


# ---------------------------------------------------------------------------------
# Escaping: HTML and JavaScript separately


SCRIPT_JSON = [
    (
        "</script><script>alert(1)</script>",
        '"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"',
    ),
    ("<!-- x", '"\\u003c!-- x"'),
    ("a & b", '"a \\u0026 b"'),
    ("line\u2028para\u2029end", '"line\\u2028para\\u2029end"'),
    ('quote " and \\', '"quote \\" and \\\\"'),
    ("São José", '"São José"'),
    ({"b": 1, "a": [None, True]}, '{"a":[null,true],"b":1}'),
]


@pytest.mark.parametrize(("value", "expected"), SCRIPT_JSON)
def test_script_json(value, expected):
    assert str(script_json(value)) == expected


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=8,
    )
)
def test_script_json_round_trips_and_never_closes_the_script(value):
    text = str(script_json(value))
    assert json.loads(text) == value
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    parsed = Page(f'<script type="application/json" id="x">{text}</script>')
    assert parsed.data("x") == value


HOSTILE_TITLE = 'Quote "><script>alert(1)</script> & </script><!-- \u2028 end'
HOSTILE_FILE = (
    '"><script>alert(2)</script>.txt'  # a folder '"><script>alert(2)<' holding 'script>.txt'
)
OTHER_FILE = 'it\'s & "quoted" <b>.txt'


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    archive = write_archive(
        root / "evil-archive", "files.example.org", "example.org/service/2020/01.01.00.00"
    )
    write_item(
        archive,
        "example.org/rep/2020/01.02.03.04",
        {HOSTILE_FILE: "x\n", OTHER_FILE: "y\n"},
        state="Original",
        target=HOSTILE_FILE,
        ibip="8JMKD3MGP8W/35ABCDE",
        language="en",
        dublin_core={
            "title": HOSTILE_TITLE,
            "creator": "</script>",
            "description": "<b>bold</b> & co",
        },
    )
    return build(root / "build", archives=[archive], modifiers="all")


def _every_page(site: Path):
    for path in sorted(site.rglob("*")):
        if path.suffix in (".html", ".xml") and path.is_file():
            yield path, path.read_text("utf-8")


def test_hostile_values_are_escaped_in_every_page(hostile_site):
    inline_scripts = set()
    pages = 0
    for path, text in _every_page(hostile_site):
        pages += 1
        assert "alert(1)</script>" not in text and "alert(2)</script>" not in text, path
        if path.suffix == ".xml":
            ET.fromstring(text.encode("utf-8"))  # well-formed
            continue
        found = Page(text)
        for attrs, body in found.scripts:
            if attrs.get("type") in ("application/json", "application/ld+json"):
                json.loads(body)
                assert "<" not in body
            elif "src" in attrs:
                assert attrs["src"] in (
                    "/assets/facts.js",
                    "/assets/resolve.js",
                    f"/assets/{target_script()[0]}",
                    "/assets/search.js",
                )
            else:
                inline_scripts.add(body)
        for tag, attrs in found.tags:
            assert not [name for name in attrs if name.startswith("on")], (path, tag)
    assert inline_scripts == set()  # the pages' code is in assets/, never beside their data
    assert pages > 90  # modifiers: all emits 25 + 19 per language for each form


def test_hostile_values_read_back_exactly(hostile_site):
    resolver = Resolver(hostile_site)
    url = resolver.resolve(SITE_URL + "8JMKD3MGP8W/35ABCDE").url
    assert (
        url
        == "http://files.example.org/col/example.org/rep/2020/01.02.03.04/doc/%22%3E%3Cscript%3Ealert(2)%3C/script%3E.txt"
    )
    found = page(hostile_site, "8JMKD3MGP8W/35ABCDE")
    assert found.title == HOSTILE_TITLE
    assert HOSTILE_TITLE in found.text
    assert found.canonical == url and found.refresh == f"0; url={url}"
    assert found.data("ibistatic-target")["url"] == url
    listing = page(hostile_site, "files/example.org/rep/2020/01.02.03.04")
    assert HOSTILE_FILE in listing.text and OTHER_FILE in listing.text
    assert listing.first(
        "a",
        href="http://files.example.org/col/example.org/rep/2020/01.02.03.04/doc/it's%20&%20%22quoted%22%20%3Cb%3E.txt",
    )
    record = _check_oai_dc(hostile_site / "metadata/example.org/rep/2020/01.02.03.04/oai_dc.xml")
    assert record == [
        ("title", HOSTILE_TITLE),
        ("creator", "</script>"),
        ("description", "<b>bold</b> & co"),
        ("identifier", SITE_URL + "8JMKD3MGP8W/35ABCDE"),
        ("identifier", SITE_URL + "example.org/rep/2020/01.02.03.04"),
    ]


# ---------------------------------------------------------------------------------
# Determinism, paths, and the JavaScript port's tables


def test_two_builds_give_identical_trees(tmp_path):
    first = tree_bytes(build(tmp_path, modifiers="all"))
    shutil.rmtree(
        load_config(tmp_path / "ibistatic.yaml").cache_dir
    )  # from scratch: no crawl cache, no build state
    second = tree_bytes(build(tmp_path, modifiers="all"))  # in place: host files name the output
    assert first.keys() == second.keys() and len(first) > 900
    assert [name for name in first if first[name] != second[name]] == []


def test_two_processes_write_the_same_pages(tmp_path, monkeypatch):
    from ibistatic.site.build import build_site
    from ibistatic.store import store

    serial = build_site(
        load_config(
            write_config(
                tmp_path / "one", [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"], modifiers="all"
            )
        ),
        full=True,
    )
    monkeypatch.setattr(store, "PARALLEL_ITEMS", 1)  # fork even for the small sample
    forked = build_site(
        load_config(
            write_config(
                tmp_path / "two", [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"], modifiers="all"
            )
        ),
        full=True,
    )
    assert serial.pages == forked.pages > 900
    one, two = tree_bytes(tmp_path / "one" / "site"), tree_bytes(tmp_path / "two" / "site")
    assert one.keys() == two.keys()
    # the host files name their own output folder; every other file is the same
    assert [
        name for name in one if one[name] != two[name] and not name.startswith("_ibistatic/")
    ] == []


def test_a_failing_forked_site_output_fails_the_build_and_keeps_the_last_site(
    tmp_path, monkeypatch
):
    """The search, made in a forked worker with the other costly site outputs, fails the
    build as any site output would: its error is raised, the last site stays as it was."""
    from ibistatic.site.build import build_site
    from ibistatic.site.outputs import search
    from ibistatic.store import store

    config = load_config(write_config(tmp_path, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"]))
    build_site(config, full=True)
    before = tree_bytes(config.output)

    def broken(self, plan, context):
        raise RuntimeError(f"search broke in process {os.getpid()}")
        yield

    monkeypatch.setattr(store, "PARALLEL_ITEMS", 1)
    monkeypatch.setattr(search.Search, "files", broken)
    with pytest.raises(RuntimeError, match="search broke in process") as failed:
        build_site(config, full=True)
    assert str(os.getpid()) not in str(failed.value)  # made in a forked process
    assert tree_bytes(config.output) == before


SITE_FILES = [
    (
        "http://ibi.example.org/files/a.b/c/2020/01.01.00.00/",
        "files/a.b/c/2020/01.01.00.00/index.html",
    ),
    (
        "http://ibi.example.org/metadata/a.b/c/2020/01.01.00.00/oai_dc.xml",
        "metadata/a.b/c/2020/01.01.00.00/oai_dc.xml",
    ),
    ("http://ibi.example.org/x%20y/", "x y/index.html"),
    ("http://elsewhere.example.org/files/x/", None),
    (None, None),
]


@pytest.mark.parametrize(("url", "expected"), SITE_FILES)
def testsite_file(url, expected):
    assert site_file(SITE_URL, url) == expected


@pytest.mark.parametrize(
    "relative", ["../x/index.html", "a/../../x", "a//b", "/etc/passwd", "a/./b", "a\\b"]
)
def test_writing_outside_the_site_is_refused(relative):
    with pytest.raises(IbistaticError) as error:
        check_relative(relative)
    assert (
        str(error.value)
        == f"refusing to write {relative!r}: expected a path inside the site (no empty, '.' or "
        "'..' segment, no backslash or NUL)"
    )


@pytest.mark.parametrize(
    ("site_url", "expected"),
    [
        ("https://ibi.example.org/", "/"),
        ("https://x.org/ibi/", "/ibi/"),
        ("https://x.org", "/"),
        ("https://x.org/a/b", "/a/b/"),
    ],
)
def test_base_path(site_url, expected):
    assert base_path(site_url) == expected


def test_persistent_urls_keep_modifier_characters():
    assert (
        persistent_url(SITE_URL, "sid.inpe.br/mtc-m18@80/2009/07.21.13.23!+(pt-BR):(oai_dc)")
        == SITE_URL + "sid.inpe.br/mtc-m18@80/2009/07.21.13.23!+(pt-BR):(oai_dc)"
    )


def test_page_text_is_html_escaped_once(site):
    text = (site / "sid.inpe.br/mtc-m19/2014/01.02.17.23.57/index.html").read_text("utf-8")
    assert "<title>Mapa &#34;São José&#34; &lt;2014&gt; &amp; outros</title>" in text
    assert "&amp;lt;" not in text and "&amp;#34;" not in text  # not escaped twice


HOSTILE_VALUES = [
    "plain",
    '"><script>alert(1)</script>',
    "a & b < c > d 'q'",
    "</script><!--",
    "ação — 日本",
    "",
]


@settings(deadline=None)  # a loaded CI machine is no measure of a page's cost
@given(
    values=st.lists(
        st.sampled_from(HOSTILE_VALUES) | st.text(max_size=12),
        min_size=len(site_pages._ALERT_FIELDS),
        max_size=len(site_pages._ALERT_FIELDS),
    ),
    modifier=st.sampled_from(["", "!", ":(oai_dc)", "+pt-BR"]),
    archive=st.sampled_from([None, "", "mtc-m16c", "<b>"]),
    chain=st.sampled_from(["", "a → b", "<x>"]),
)
def test_skeletons_fill_in_what_jinja_renders(values, modifier, archive, chain):
    """The redirect and alert pages come from skeletons; jinja2 itself is the reference."""
    from ibistatic.site.pages import _ALERT_FIELDS, _TARGET_FIELDS, Site

    site = Site(load_config(SAMPLE / "ibistatic.yaml"))
    context = dict(zip(_ALERT_FIELDS, values))
    context.update(
        modifier=modifier, archive=archive, chain=chain, data=script_json({"url": values[0]})
    )
    redirect = {name: context[name] for name in _TARGET_FIELDS}
    assert site.fill(
        "redirect.html", _TARGET_FIELDS, redirect, {"modifier": modifier}
    ) == site.render("redirect.html", **redirect)
    tested = {"chain": chain, "archive": archive}
    assert site.fill("alert.html", _ALERT_FIELDS, context, tested) == site.render(
        "alert.html", **context
    )


@given(
    record=st.sampled_from([v for v in HOSTILE_VALUES if v]) | st.text(min_size=1, max_size=12),
    lang=st.sampled_from(["en", "pt"]),
)
def test_alert_links_without_copies_fill_in_what_jinja_renders(record, lang):
    """An alert page's links when no copy is listed come from a skeleton (most alert
    pages); jinja2 rendering the template with no copies is the reference."""
    from ibistatic.site.pages import Site

    site = Site(load_config(SAMPLE / "ibistatic.yaml"))
    filled = site.fill("_alert_links.html", ("record",), {"record": record}, {"copies": ()}, lang)
    assert filled == site.render("_alert_links.html", lang, copies=[], record=record)
    assert "<li>" in filled  # the record's link, whatever the value


def test_a_sites_own_alert_links_are_rendered_by_jinja2(tmp_path):
    """A site's own _alert_links.html may test or filter `record`: it is rendered, not
    filled from a skeleton (whose marker would fail the test)."""
    from types import SimpleNamespace

    from ibistatic.site.pages import Site, _alert_links

    own = tmp_path / "own"
    own.mkdir()
    (own / "_alert_links.html").write_text(
        '{% if record.startswith("https://") %}secure {% endif %}{{ record|upper }}\n'
    )
    config = load_config(SAMPLE / "ibistatic.yaml")
    target = SimpleNamespace(
        item=SimpleNamespace(key="sid.inpe.br/mtc-m19/2013/09.04.12.27.57"),
        resolution=SimpleNamespace(chain=(), alert="unavailable"),
    )
    site = Site(type(config)(**{**vars(config), "templates": own}))
    assert not site.skeletal["_alert_links.html"]
    assert str(_alert_links(site, target, None, "en")).startswith("secure HTTPS://")
    bundled = Site(config)
    assert bundled.skeletal["_alert_links.html"]
    assert "<li><a href=" in str(_alert_links(bundled, target, None, "en"))


def test_a_sites_own_filled_templates_are_rendered_as_written(tmp_path):
    """Site.fill cuts only all-bundled templates into skeletons: a site's own redirect
    page, or its own header under the bundled alert page, may test or filter a variable
    (a skeleton would give it the marker), so fill() renders them."""
    from ibistatic.site.pages import _TARGET_FIELDS, Site

    own = tmp_path / "own"
    own.mkdir()
    (own / "redirect.html").write_text(
        '{% if url.startswith("https://") %}secure {% endif %}{{ url|upper }} {{ ibi }}\n'
    )
    (own / "_header.html").write_text("<header>{{ heading|length }}</header>\n")
    config = load_config(SAMPLE / "ibistatic.yaml")
    site = Site(type(config)(**{**vars(config), "templates": own}))
    assert site.skeletal == {"redirect.html": False, "alert.html": False, "_alert_links.html": True}
    context = dict.fromkeys(_TARGET_FIELDS, "x") | {"url": "https://a.example/d", "ibi": "I"}
    page = site.fill("redirect.html", _TARGET_FIELDS, context, {"modifier": "x"})
    assert page == "secure HTTPS://A.EXAMPLE/D I\n"
    assert all(Site(config).skeletal.values())  # the bundled ones: skeletons


@given(st.text(alphabet=["a", ".", "/", "\\", "\x00", "é"], max_size=12))
def test_check_relative_refuses_exactly_the_paths_that_may_leave_the_site(relative):
    """Refused iff a segment is empty, '.' or '..', or the path holds a backslash or NUL."""
    leaves = (
        any(segment in ("", ".", "..") for segment in relative.split("/"))
        or "\\" in relative
        or "\x00" in relative
    )
    try:
        check_relative(relative)
    except IbistaticError:
        assert leaves
    else:
        assert not leaves
