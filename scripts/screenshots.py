"""Screenshots of each page type of the published site, in English and Portuguese.

    python scripts/screenshots.py            # writes docs/screenshots/<type>-<language>.png

Builds the showcase site (the bundled sample and a conflict, a tombstone and a site
identity: tests/page_sites.py) once per interface language, serves it on loopback and
has headless Chromium photograph one page of each type (docs/site.md shows them):
the pages for people; redirect pages leave for their Archive at once, and 404.html is
the in-browser resolver's.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout and the showcase

from page_sites import PAGE_TYPES, build_showcase  # noqa: E402

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
}


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("screenshots: headless Chromium is not installed")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def serve(root: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


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
            site = build_showcase(Path(work) / language, language)
            server = serve(site)
            base = f"http://127.0.0.1:{server.server_address[1]}/"
            try:
                for name, kinds in SHOWN.items():
                    path = PAGE_TYPES[kinds[language]].removesuffix("index.html")
                    target = OUT / f"{name}-{language}.png"
                    photograph(browser, base + path, target)
                    print(f"{target.relative_to(ROOT)}: {path or '/'}")
            finally:
                server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
