"""GitHub Pages: a plain static server (a folder serves its ``index.html``, a missing
path gets ``404.html`` with status 404, as GitHub Pages does) over a site built with
``--host github-pages``, and headless Chromium for people: the persistent URL forms of
tests/url_forms.py that no page was written for land where ``ibistatic resolve`` says,
through ``404.html``.  ``ibistatic check-deployment`` shows what ``curl`` gets there:
pages and 404s, never a redirect (GitHub Pages has none; docs/hosting.md).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import pytest

from ibistatic.config import load_config
from ibistatic.site.build import build_site
from site_helpers import (
    CHROMIUM,
    SITE_URL,
    LandingServer,
    SiteServer,
    chromium_dom,
    landed_url,
    page_attribute,
    write_config,
)
from url_forms import url_table

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="headless Chromium is not installed (scripts/test.sh installs it)"
    ),
]

SAMPLE = Path(__file__).resolve().parent.parent / "ibistatic" / "sample_archive"
#: one form of each kind that only 404.html answers, and the README's own example
KINDS = ("case", "modifier", "ibi-prefix", "file", "query", "deleted", "unknown")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("github-pages")
    config = load_config(write_config(work, (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d")))
    build_site(replace(config, hosts=("github-pages",)))
    return config.output


@pytest.fixture(scope="module")
def servers(site):
    with SiteServer(site).running() as static, LandingServer().running() as landing:
        yield static, landing


def chosen_cases(site: Path) -> list:
    cases = url_table(site)
    # the site's own pages (metadata, file lists) are not the landing server's to see
    outside = [case for case in cases if not (case.location or "").startswith(SITE_URL)]
    chosen = [next(case for case in outside if case.kind == kind) for kind in KINDS]
    readme = next(case for case in cases if case.target == "8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    # an emitted URL answered with an alert: a host profile writes no page for it
    # (alert-pages by hosts), so GitHub's 404.html must show the alert
    alert = next(
        c for c in cases if c.kind == "precomputed" and c.location is None and c.status == 404
    )
    return [*chosen, readme, alert]


def test_emitted_alerts_have_no_page_here(site):
    alerts = [c for c in url_table(site) if c.kind == "precomputed" and c.status in (404, 409)]
    assert alerts
    for case in alerts:
        assert not (site / unquote(case.target) / "index.html").exists(), case.id


def test_jekyll_is_off(site):
    assert (site / ".nojekyll").read_bytes() == b""


def test_people_land_where_resolve_says(site, servers):
    static, landing = servers
    cases = chosen_cases(site)

    def visit(case) -> tuple:
        dom = chromium_dom(SITE_URL + case.target, static.port, landing.port)
        return case, dom

    with ThreadPoolExecutor(2) as pool:
        for case, dom in pool.map(visit, cases):
            if case.location is not None:
                assert landed_url(dom) == case.location, case.id
            else:
                alert = {404: ("not-found", "unavailable"), 410: ("deleted",)}[case.status]
                assert page_attribute(dom, "data-alert") in alert, case.id


def test_curl_gets_pages_not_redirects(site, servers):
    static, _ = servers
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ibistatic",
            "check-deployment",
            f"http://127.0.0.1:{static.port}/",
            "--index",
            str(site),
            "--sample",
            "40",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.stdout.splitlines()
    assert report[-1].startswith("40 persistent URL forms asked of ")
    got = {line.split()[1] for line in report if line.startswith("    got ")}
    # a page, the folder's slash (301 to the same path + "/"), or 404.html: never the answer
    assert got <= {"200", "301", "404"} and got & {"200", "301"}, got
    assert any(line.startswith("    expected 302 http://mtc-m16") for line in report)
