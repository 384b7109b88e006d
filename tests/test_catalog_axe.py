"""axe-core (npm, in .node/) in headless Chromium over the catalog's pages: 0 violations
of the WCAG 2.1 A and AA rules.  (axe's best-practice rule ``region`` still finds the
mkdocs theme's navigation bar outside any landmark: the theme's own markup.)

A copy of the built catalog gets axe and a few lines that run it after the page's own
scripts and write the violations into the page, which Chromium's DOM dump returns.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from ibistatic.catalog.publish import build_catalog
from ibistatic.config import load_config
from site_helpers import CHROMIUM, ROOT, SITE_URL, LandingServer, SiteServer, chromium_dom, foreign

AXE = ROOT / ".node" / "node_modules" / "axe-core" / "axe.min.js"
SAMPLE_CONFIG = ROOT / "ibistatic" / "sample_archive" / "ibistatic.yaml"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed"),
    pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: bash scripts/test.sh"),
]

RUN_AXE = """<script src="/__axe.js"></script>
<script>
window.addEventListener("load", () => setTimeout(() => axe.run(document, {
  runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}
}).then((result) => {
  const out = document.createElement("pre");
  out.id = "axe-result";
  out.textContent = JSON.stringify(result.violations.map((v) => [v.id, v.nodes.map((n) => n.target.join(" "))]));
  document.body.append(out);
}), 300));
</script>
</body>"""

PAGES = [
    ("", "the overview"),
    ("items/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/", "an item page with a hostile title"),
    ("items/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/", "an item with editions and copies"),
    ("archives/mtc-m16c/", "an Archive page"),
    ("years/2009/", "a year page"),
    ("search/?query=ascii", "the search page with results"),
    ("404.html", "the not-found page"),
]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    catalog = tmp_path_factory.mktemp("axe") / "catalog"
    build_catalog(load_config(SAMPLE_CONFIG), catalog)
    for page in catalog.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("</body>", RUN_AXE, 1), encoding="utf-8")
    shutil.copyfile(AXE, catalog / "__axe.js")
    site, landing = SiteServer(catalog), LandingServer()
    with site.running(), landing.running():
        yield site, landing


@pytest.mark.parametrize("path, why", PAGES)
def test_no_axe_violation(servers, path, why):
    site, landing = servers
    dom = chromium_dom(SITE_URL + path, site.port, landing.port, budget_ms=10000)
    found = re.search(r'<pre id="axe-result">(.*?)</pre>', dom, re.S)
    assert found, f"axe did not run on {why}"
    violations = json.loads(
        found.group(1)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
        .replace("&quot;", '"')
    )
    assert violations == [], (why, [(v[0], v[1][:2]) for v in violations])
    assert foreign(landing.log.snapshot()) == []  # nothing but the site was asked
