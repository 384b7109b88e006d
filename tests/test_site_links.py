"""LinkChecker (the link checker of W3C's lineage, PyPI ``linkchecker``) over the sample
built with ``catalog: true``, served on a loopback port: no internal link may be dead.

The record pages (``record/<key>/``) that the search and its list link to are written
by another output; while a build writes none, those links are left out of the count
(the test says so), and counted as soon as the build writes ``record/``.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path

import pytest

from ibistatic.config import load_config
from ibistatic.site.build import build_site
from site_helpers import SAMPLE, SiteServer, write_config

LINKCHECKER = shutil.which("linkchecker")

pytestmark = pytest.mark.skipif(LINKCHECKER is None, reason="linkchecker is not installed")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    path = write_config(
        tmp_path_factory.mktemp("links"), (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d")
    )
    path.write_text(path.read_text(encoding="utf-8") + "catalog: true\n", encoding="utf-8")
    config = load_config(path)
    build_site(config)
    return config.output


def _check(site: Path) -> list[dict]:
    server = SiteServer(site)
    with server.running():
        result = subprocess.run(
            [
                LINKCHECKER,
                "--verbose",
                "--no-warnings",
                "--threads=4",
                "-o",
                "csv",
                f"http://127.0.0.1:{server.port}/",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    lines = [line for line in result.stdout.splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines)), delimiter=";"))


def test_no_internal_link_is_dead_with_the_catalog_published(site):
    rows = _check(site)
    checked = {row["urlname"] for row in rows}
    assert any(url.startswith("catalog/items/") or "/catalog/items/" in url for url in checked)
    assert any("search/list/1/" in url for url in checked)
    dead = [
        (row["parentname"], row["urlname"], row["result"]) for row in rows if row["valid"] != "True"
    ]
    if not (site / "record").exists():  # the record pages' output is not in this build
        dead = [entry for entry in dead if not entry[1].startswith("/record/")]
    assert dead == []
    landing = (site / "index.html").read_text(encoding="utf-8")
    assert '<li><a href="/catalog/">Catalog</a></li>' in landing
