"""`alert-pages: false`: no page for a persistent URL answered with an alert (but a deleted
item's), the same answers through 404.html in a browser."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from ibistatic.config import load_config
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from site_helpers import (
    CHROMIUM,
    SAMPLE,
    SITE_URL,
    LandingServer,
    SiteServer,
    chromium_dom,
    page_attribute,
    tree_bytes,
    write_config,
)

ARCHIVES = (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d")
ALERT = re.compile(rb'<main id="ibistatic" data-state="done" data-alert="([a-z-]+)"')


def _build(directory: Path, alert_pages: bool | None) -> Path:
    path = write_config(directory, ARCHIVES)
    if alert_pages is not None:
        with path.open("a", encoding="utf-8") as config:
            config.write(f"alert-pages: {'true' if alert_pages else 'false'}\n")
    config = load_config(path)
    assert config.alert_pages is (alert_pages is not False)
    build_site(config)
    return config.output


def _pages(site: Path) -> dict[str, bytes]:
    return {p: b for p, b in tree_bytes(site).items() if not p.startswith("_ibistatic/")}


def _alerts(pages: dict[str, bytes]) -> dict[str, str]:
    """Page path -> its alert, for every alert page."""
    found = {p: ALERT.search(b) for p, b in pages.items() if p.endswith("index.html")}
    return {p: m.group(1).decode() for p, m in found.items() if m}


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[bool, Path]:
    root = tmp_path_factory.mktemp("alert-pages")
    return {flag: _build(root / str(flag), flag) for flag in (True, False)}


def test_only_the_alert_pages_404_answers_are_left_out(sites):
    every, fewer = _pages(sites[True]), _pages(sites[False])
    alerts = _alerts(every)
    left_out = {p for p, alert in alerts.items() if alert != "deleted"}
    assert len(left_out) >= 8 and "deleted" in alerts.values()
    assert set(every) - set(fewer) == left_out
    assert set(fewer) <= set(every)
    assert {p: every[p] for p in fewer} == fewer  # every other file byte for byte the same
    assert _alerts(fewer) == {p: "deleted" for p, a in alerts.items() if a == "deleted"}


def test_the_left_out_urls_still_resolve_with_their_alert(sites):
    """The index still answers them: 404.html (and `ibistatic resolve`) read it."""
    resolver = Resolver(sites[False])
    for path, alert in _alerts(_pages(sites[True])).items():
        url = SITE_URL + path.removesuffix("/index.html")
        assert resolver.resolve(url).alert == alert, url


def test_turning_alert_pages_off_rebuilds_the_site_without_them(tmp_path, sites):
    site = _build(tmp_path, True)
    assert _alerts(_pages(site)) == _alerts(_pages(sites[True]))
    path = tmp_path / "ibistatic.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("alert-pages: true", "alert-pages: false"), encoding="utf-8")
    report = build_site(load_config(path))
    assert report.mode == "full"  # the setting is part of what an update must keep
    assert _pages(site) == _pages(sites[False])


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_chromium_shows_the_alert_through_404_html(sites):
    site = sites[False]
    left_out = sorted(p for p, a in _alerts(_pages(sites[True])).items() if a != "deleted")
    paths = [p.removesuffix("/index.html") for p in left_out[:6]]
    server, landing = SiteServer(site), LandingServer()
    with server.running(), landing.running():
        for path in paths:
            assert not (site / path / "index.html").exists()
            dom = chromium_dom(SITE_URL + path, server.port, landing.port)
            expected = Resolver(site).resolve(SITE_URL + path).alert
            assert page_attribute(dom, "data-alert") == expected, path


@pytest.mark.parametrize(
    "hosts, written", [((), True), (("github-pages",), False), (("nginx", "s3"), False)]
)
def test_unset_the_hosts_decide(tmp_path, hosts, written):
    """Without the key, a host profile (whose host serves 404.html for a missing page)
    gets no alert pages; the portable output, which may land anywhere, keeps them."""
    config = load_config(write_config(tmp_path, ARCHIVES))
    assert config.alert_pages is None
    assert replace(config, hosts=hosts).writes_alert_pages is written
    assert replace(config, hosts=hosts, alert_pages=True).writes_alert_pages is True


def test_a_host_profile_builds_without_alert_pages(tmp_path, sites):
    config = load_config(write_config(tmp_path, ARCHIVES))
    build_site(replace(config, hosts=("netlify",)))
    pages = _pages(config.output)
    assert set(_alerts(pages).values()) == {"deleted"}
    assert set(_alerts(pages)) == set(_alerts(_pages(sites[False])))


@pytest.mark.parametrize(
    "hosts, written",
    [
        ((), True),
        (("github-pages",), True),
        (("netlify",), True),
        (("s3",), True),
        (("cloudflare-pages",), False),
        (("nginx", "apache"), False),
        (("nginx", "github-pages"), True),  # GitHub Pages serves the pages
    ],
)
def test_redirect_pages_unset_only_hosts_that_answer_every_url_go_without(hosts, written, tmp_path):
    config = replace(load_config(write_config(tmp_path, ARCHIVES)), hosts=hosts)
    assert config.redirect_pages is None and config.writes_redirect_pages is written
    assert replace(config, redirect_pages=True).writes_redirect_pages is True
    assert replace(config, redirect_pages=False).writes_redirect_pages is False


def test_a_site_for_self_answering_hosts_has_no_redirect_page(tmp_path, sites):
    config = load_config(write_config(tmp_path, ARCHIVES))
    build_site(replace(config, hosts=("nginx", "apache")))
    pages = _pages(config.output)
    redirects = [p for p, b in pages.items() if b'data-state="redirect"' in b]
    assert redirects == [] and set(_alerts(pages).values()) == {"deleted"}
    every = _pages(sites[True])
    assert len([p for p, b in every.items() if b'data-state="redirect"' in b]) > 30
    # everything else is there: the index, record, metadata and file-list pages
    left_out = set(every) - set(pages)
    portable = {"_redirects", ".nojekyll"}  # the portable output's, for other static hosts
    assert {p for p in left_out if not p.endswith("/index.html")} == portable
    pages_left_out = left_out - portable
    assert all(b'data-state="redirect"' in every[p] or p in _alerts(every) for p in pages_left_out)


RECORD_LINK = re.compile(rb'<ul class="links">.*?<a href="([^"]+)">[^<]*</a></li>\n</ul>', re.S)


def test_every_alert_page_links_to_a_record_page_of_the_site(sites):
    """The links of an alert page (a skeleton when no copy is listed) end with the
    record page of its item, a page the site holds."""
    every = _pages(sites[True])
    alerts = _alerts(every)
    assert alerts  # the sample has items without metadata: `:` of those is an alert
    for path in alerts:
        found = RECORD_LINK.search(every[path])
        assert found, path
        link = found.group(1).decode()
        assert link.startswith(SITE_URL + "record/"), (path, link)
        assert link[len(SITE_URL) :] + "index.html" in every, (path, link)
