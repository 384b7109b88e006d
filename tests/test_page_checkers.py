"""The published pages against the tools others judge them with: the official XML
schemas (oai_dc, sitemaps; tests/xsd/README.md), the Nu HTML Checker (vnu), axe-core in
headless Chromium and LinkChecker, over every page type in both interface languages
(the showcase sites of tests/page_sites.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from page_sites import PAGE_TYPES, SCRIPTED, build_showcase
from site_helpers import CHROMIUM, SiteServer

ROOT = Path(__file__).resolve().parent.parent
XSD = Path(__file__).resolve().parent / "xsd"
NODE_MODULES = ROOT / ".node" / "node_modules"
VNU_JAR = NODE_MODULES / "vnu-jar" / "build" / "dist" / "vnu.jar"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
PUPPETEER = NODE_MODULES / "puppeteer-core"
NODE = shutil.which("node")
JAVA = shutil.which("java")
#: where the schemas import each other from: the copies kept beside them
SCHEMA_LOCATIONS = {
    "http://dublincore.org/schemas/xmls/simpledc20021212.xsd": XSD / "simpledc20021212.xsd",
    "http://www.w3.org/2001/03/xml.xsd": XSD / "xml.xsd",
}


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    return {
        language: build_showcase(tmp_path_factory.mktemp(f"checked-{language}"), language)
        for language in ("en", "pt")
    }


def _html_pages(sites: dict[str, Path]) -> list[Path]:
    """Every HTML page of both sites (each page type in both languages)."""
    return sorted(page for site in sites.values() for page in site.rglob("*.html"))


def test_both_languages_have_every_page_type(sites):
    from html.parser import HTMLParser

    languages: dict[str, set[str]] = {}

    class Lang(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "html":
                languages.setdefault(kind.removesuffix("-en"), set()).add(dict(attrs)["lang"])

    for site in sites.values():
        for kind, path in PAGE_TYPES.items():
            Lang().feed((site / path).read_text("utf-8"))
    # the pages about an item in both (the item's language), the others in the site's
    assert languages == dict.fromkeys(languages, {"en", "pt"}) and len(languages) == 11
    assert {"404", "search", "list"} <= set(languages)


# --- official XML schemas -------------------------------------------------------------


def _schema(name: str):
    etree = pytest.importorskip("lxml.etree", reason="lxml (the test extra) is not installed")

    class Local(etree.Resolver):
        def resolve(self, url, public_id, context):
            local = SCHEMA_LOCATIONS.get(url)
            return self.resolve_filename(str(local), context) if local else None

    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(Local())
    return etree.XMLSchema(etree.parse(str(XSD / name), parser))


def _validate(schema, path: Path) -> list[str]:
    from lxml import etree

    ok = schema.validate(etree.parse(str(path)))
    return [] if ok else [f"{path}: {error.message}" for error in schema.error_log]


def test_every_oai_dc_record_is_valid_against_the_official_schema(sites):
    schema = _schema("oai_dc.xsd")
    records = [r for site in sites.values() for r in sorted(site.glob("metadata/**/oai_dc.xml"))]
    assert len(records) == 2 * 12  # the sample's 10 and the showcase's 2, in each site
    assert [error for record in records for error in _validate(schema, record)] == []


def test_the_schema_check_finds_an_invalid_record(tmp_path):
    schema = _schema("oai_dc.xsd")
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:titel>x</dc:titel></oai_dc:dc>'
    )
    [error] = _validate(schema, bad)
    assert "titel" in error


def test_every_sitemap_is_valid_against_the_official_schema(sites, tmp_path, monkeypatch):
    from ibistatic.site import sitewide
    from site_helpers import SAMPLE, build

    urlset, index = _schema("sitemap.xsd"), _schema("siteindex.xsd")
    monkeypatch.setattr(sitewide, "SITEMAP_LIMIT", 20)  # the index form too
    large = build(tmp_path, archives=[SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"])
    maps = [m for site in [*sites.values(), large] for m in site.rglob("sitemap*.xml")]
    maps += list((large / "sitemaps").glob("*.xml"))
    errors, kinds = [], set()
    for path in maps:
        is_index = "<sitemapindex" in path.read_text("utf-8")
        kinds.add(is_index)
        errors += _validate(index if is_index else urlset, path)
    assert errors == [] and kinds == {True, False}


# --- the Nu HTML Checker --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(JAVA is None, reason="java is not installed (scripts/test.sh installs it)")
@pytest.mark.skipif(not VNU_JAR.exists(), reason="vnu-jar is not in .node/ (scripts/test.sh)")
def test_nu_html_checker_finds_no_error_on_any_page(sites):
    pages = _html_pages(sites)
    assert len(pages) > 2 * 100
    result = subprocess.run(
        [JAVA, "-jar", str(VNU_JAR), "--errors-only", "--format", "json", *map(str, pages)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    messages = json.loads(result.stderr or "{}").get("messages", [])
    errors = [f"{m.get('url')}: {m.get('message')} ({m.get('extract', '')})" for m in messages]
    assert errors == [] and result.returncode == 0


# --- axe-core in headless Chromium ----------------------------------------------------


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
@pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/test.sh installs it)")
@pytest.mark.skipif(
    not (AXE.exists() and PUPPETEER.exists()),
    reason="axe-core or puppeteer-core is not in .node/ (scripts/test.sh installs them)",
)
def test_axe_finds_no_violation_on_any_page_type(sites):
    found = {}
    for language, site in sites.items():
        with SiteServer(site).running() as server:
            base = f"http://127.0.0.1:{server.port}/"
            urls = [base + path.removesuffix("index.html") for path in PAGE_TYPES.values()]
            urls += ["scripted:" + base + path for path in SCRIPTED.values()]
            result = subprocess.run(
                [NODE, str(ROOT / "tests" / "js" / "axe_pages.js"), CHROMIUM, str(AXE), *urls],
                capture_output=True,
                text=True,
                timeout=300,
                env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
            )
        assert result.returncode == 0, result.stderr[-2000:]
        for line in result.stdout.splitlines():
            page = json.loads(line)
            found[(language, page["url"])] = page["violations"]
    assert len(found) == 2 * (len(PAGE_TYPES) + len(SCRIPTED))
    assert {page: v for page, v in found.items() if v} == {}


# --- LinkChecker ----------------------------------------------------------------------


@pytest.mark.slow
def test_linkchecker_finds_no_dead_internal_link(tmp_path):
    pytest.importorskip("linkcheck", reason="LinkChecker (the test extra) is not installed")
    from ibistatic.config import load_config
    from ibistatic.site.build import build_site
    from page_sites import write_showcase_config

    # the site is served where its site-url says, so that its absolute links are internal
    config_path = write_showcase_config(tmp_path, "en")
    root = tmp_path / "served"
    with SiteServer(root).running() as server:
        base = f"http://127.0.0.1:{server.port}/"
        text = config_path.read_text().replace("http://ibi.example.org/", base)
        config_path.write_text(text)
        config = load_config(config_path, output=str(root))
        build_site(config)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "linkcheck",
                "--no-status",
                "--no-warnings",
                "--output=csv",
                "--ignore-url=^mailto:",
                "--ignore-url=^https?://(?!127\\.0\\.0\\.1)",
                base,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
    rows = [line for line in result.stdout.splitlines() if line and not line.startswith("#")]
    dead = [row for row in rows[1:] if ";False;" in row or ";0;" not in row and "Error" in row]
    assert result.returncode == 0 and dead == [], result.stdout[-4000:] + result.stderr[-2000:]
    assert server.log.snapshot(), "LinkChecker asked nothing"
