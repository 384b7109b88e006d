"""Screenshots of each page type of the published site, in English and Portuguese.

    python scripts/screenshots.py            # writes docs/screenshots/<type>-<language>.png

Builds the showcase site (the bundled sample and a conflict, a tombstone and a site
identity: tests/page_sites.py) once per interface language, serves it on loopback and
has headless Chromium photograph one page of each type (docs/site.md shows them):
the pages for people, the search page with a query's results, the list of every item
and 404.html as the in-browser resolver leaves it for an unknown IBI (redirect pages
leave for their Archive at once); then the catalog's search with a query's results, and
what ``ibistatic serve`` answers for an unknown IBI (the site's own not-found page).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout and the showcase

from page_sites import PAGE_TYPES, SCRIPTED, build_showcase  # noqa: E402
from serve_process import running, serve_command  # noqa: E402
from site_helpers import SiteServer  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
WIDTH, HEIGHT = 1000, 900
#: the page types photographed, in each language (a page about an item speaks the
#: item's language, so each type has an English and a Portuguese page in the showcase)
SHOWN = {
    "landing": {"en": "landing", "pt": "landing"},
    "record": {"en": "record-en", "pt": "record"},
    "tombstone": {"en": "tombstone-en", "pt": "tombstone"},
    "metadata": {"en": "metadata-en", "pt": "metadata"},
    "file-list": {"en": "file-list-en", "pt": "file-list"},
    "alert": {"en": "alert-unavailable-en", "pt": "alert-deleted"},
    "list": {"en": "list", "pt": "list"},
}
#: the page types shown after their scripts ran: type -> URL after the site's
SCRIPTED_SHOWN = {
    "search": SCRIPTED["search"],
    "not-found": SCRIPTED["not-found"],
    "catalog-search": "catalog/search/?query=ascii",
}
#: what `ibistatic serve` is asked for its not-found page: an IBI no Archive holds
SERVE_NOT_FOUND = "8JMKD3MGP8W/22222"
#: how long (virtual time) a page's scripts get to write it before the photograph
SCRIPT_BUDGET_MS = 5000


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("screenshots: headless Chromium is not installed")


def photograph(browser: str, url: str, target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="ibistatic-shot-") as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},{HEIGHT}",
                f"--virtual-time-budget={SCRIPT_BUDGET_MS}",  # the scripts write the page
                # the catalog theme's CDN scripts: fail at once, as offline
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                f"--screenshot={target}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> int:
    browser = chromium()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ibistatic-screenshots-") as work:
        for language in ("en", "pt"):
            site = build_showcase(Path(work) / language, language, catalog=True)
            # a static host as the tests' (a missing path gets the site's 404.html)
            with SiteServer(site).running() as server:
                base = f"http://127.0.0.1:{server.port}/"
                shown = {name: PAGE_TYPES[kinds[language]] for name, kinds in SHOWN.items()}
                for name, path in {**shown, **SCRIPTED_SHOWN}.items():
                    path = path.removesuffix("index.html")
                    target = OUT / f"{name}-{language}.png"
                    photograph(browser, base + path, target)
                    print(f"{target.relative_to(ROOT)}: {path or '/'}")
            with running(serve_command(site)) as (_, port):
                target = OUT / f"serve-not-found-{language}.png"
                photograph(browser, f"http://127.0.0.1:{port}/{SERVE_NOT_FOUND}", target)
                print(f"{target.relative_to(ROOT)}: ibistatic serve, {SERVE_NOT_FOUND}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
