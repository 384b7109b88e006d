"""The built catalog in a real browser: headless Chromium over a loopback http.server.

``build_catalog`` writes the sample's catalog; a static server on 127.0.0.1 serves it;
Chromium takes a 1200x900 screenshot of an item page (decoded here with a tiny PNG
reader: the picture must not be blank) and dumps the DOM of item pages, reached the way
a reader reaches them (following the archive page's link, ``@`` written ``%40``).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import struct
import subprocess
import threading
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest

from ibistatic.catalog.publish import build_catalog
from ibistatic.config import load_config
from ibistatic.core.relations import parse_modifier
from ibistatic.core.urls import build_persistent_url

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CONFIG = ROOT / "ibistatic" / "sample_archive" / "ibistatic.yaml"
CHROMIUM = "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    # the theme's CDN scripts: fail at once instead of waiting for a network
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)
HOSTILE = "items/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/"
HOSTILE_TITLE = 'Mapa "São José" <2014> & outros'

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed"),
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def _serve(directory: Path):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("catalog-site") / "catalog"
    build_catalog(load_config(SAMPLE_CONFIG), out)
    with _serve(out) as base:
        yield base, out


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )


# -- a tiny PNG reader ---------------------------------------------------------------------


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def _unfilter(kind: int, line: bytearray, previous: bytes, bpp: int) -> bytearray:
    """Undo one scanline's filter (PNG specification §9)."""
    if kind == 0:
        return line
    if kind == 2:
        return bytearray((x + b) & 0xFF for x, b in zip(line, previous))
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (a + previous[i]) // 2) & 0xFF
        else:
            c = previous[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _paeth(a, previous[i], c)) & 0xFF
    return line


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of pixels) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, header = 8, b"", None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, bpp)
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def _colours(rows: list[bytes], bpp: int) -> set[bytes]:
    return {row[i : i + bpp] for row in rows[::7] for i in range(0, len(row), bpp * 7)}


READER_CASES = [
    # (width, height, filter byte, rows of RGB pixels, why)
    (2, 2, 0, [b"\x01\x02\x03\x04\x05\x06", b"\x07\x08\x09\x0a\x0b\x0c"], "no filter"),
    (2, 2, 1, [b"\x01\x01\x01\x02\x02\x02", b"\x10\x20\x30\x11\x22\x33"], "Sub"),
    (2, 2, 2, [b"\x05\x05\x05\x06\x06\x06", b"\x07\x07\x07\x08\x08\x08"], "Up"),
    (2, 2, 3, [b"\x09\x08\x07\x06\x05\x04", b"\x03\x02\x01\x00\xff\xfe"], "Average"),
    (2, 2, 4, [b"\x80\x81\x82\x83\x84\x85", b"\x10\x90\x20\xa0\x30\xb0"], "Paeth"),
]


def _encode(width: int, height: int, kind: int, rows: list[bytes]) -> bytes:
    """A PNG whose rows are filtered with *kind* (the writer side of the same spec)."""
    filtered, previous = b"", bytes(len(rows[0]))
    for row in rows:
        out = bytearray()
        for i, x in enumerate(row):
            a = row[i - 3] if i >= 3 else 0
            b, c = previous[i], (previous[i - 3] if i >= 3 else 0)
            predictor = {0: 0, 1: a, 2: b, 3: (a + b) // 2, 4: _paeth(a, b, c)}[kind]
            out.append((x - predictor) & 0xFF)
        filtered += bytes([kind]) + bytes(out)
        previous = row

    def chunk(kind_: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind_
            + body
            + struct.pack(">I", zlib.crc32(kind_ + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(filtered))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    "width, height, kind, rows, why", READER_CASES, ids=[c[-1] for c in READER_CASES]
)
def test_png_reader(width, height, kind, rows, why):
    assert read_png(_encode(width, height, kind, rows)) == (width, height, rows)


# -- the catalog in Chromium ---------------------------------------------------------------


def test_item_page_screenshot_is_not_blank(site, tmp_path):
    base, _ = site
    result = _chromium(tmp_path, "--window-size=1200,900", "--screenshot=shot.png", base + HOSTILE)
    shot = tmp_path / "shot.png"
    assert shot.is_file(), result.stderr.decode(errors="replace")[-2000:]
    width, height, rows = read_png(shot.read_bytes())
    assert (width, height) == (1200, 900)
    bpp = len(rows[0]) // width
    assert len(_colours(rows, bpp)) > 16  # text, links, tables and the navigation bar
    assert len(set(rows)) > 100  # not a blank page nor a few stripes


class _Dom(HTMLParser):
    """The h1 text and the rows (cell texts, first link) of the persistent-URL table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.h1, self.rows, self.links = "", [], []
        self._in_h1 = False
        self._section = ""
        self._row: list[str] | None = None
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in_h1 = self._in_h1 or tag == "h1"
        if tag == "h2":
            self._section = attrs.get("id", "")
        if tag == "tr" and self._section == "persistent-urls":
            self._row = []
        if tag == "td" and self._row is not None:
            self._row.append("")
            self._in_cell = True
        if tag == "a":
            self.links.append(attrs.get("href"))

    def handle_endtag(self, tag):
        self._in_h1 = self._in_h1 and tag != "h1"
        self._in_cell = self._in_cell and tag != "td"
        if tag == "tr" and self._row:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._in_h1:
            self.h1 += data
        if self._in_cell:
            self._row[-1] += data


def _dom(tmp_path: Path, url: str) -> _Dom:
    result = _chromium(tmp_path, "--dump-dom", url)
    dom = _Dom()
    dom.feed(result.stdout.decode("utf-8"))
    return dom


def test_dom_shows_title_and_persistent_urls(site, tmp_path):
    base, _ = site
    dom = _dom(tmp_path, base + HOSTILE)
    assert dom.h1 == HOSTILE_TITLE
    ibi = "sid.inpe.br/mtc-m19/2014/01.02.17.23.57"
    modifiers = ["", "!", ":", ":(oai_dc)", "!:(oai_dc)"]
    expected = [
        build_persistent_url("https://ibi.example.org/", ibi, parse_modifier(m)) for m in modifiers
    ]
    assert [row[0] for row in dom.rows] == ["(none)", "!", ":", ":(oai_dc)", "!:(oai_dc)"]
    assert [row[1] for row in dom.rows] == expected


def test_an_at_sign_page_is_reached_through_its_link(site, tmp_path):
    base, out = site
    archive_page = (out / "archives" / "mtc-m16c" / "index.html").read_text(encoding="utf-8")
    href = next(h for h in re.findall(r'href="([^"]+)"', archive_page) if "07.21.13.23/" in h)
    assert "%40" in href or "@" in href
    dom = _dom(tmp_path, urljoin(base + "archives/mtc-m16c/", href))
    assert dom.h1 == "ASCII Encoded English (CCSD0002)"
    assert [row[0] for row in dom.rows] == ["(none)", "!", ":", ":(oai_dc)", "!:(oai_dc)", "+(pt)"]
    assert dom.rows[5][1] == "https://ibi.example.org/8JMKD3MGP8W/35MME4E+(pt)"


def test_the_catalog_search_shows_its_results_without_the_themes_dialog(site, tmp_path):
    """mkdocs' theme opens its own search dialog on "?q=", empty, over the results: the
    catalog's search is named "query"."""
    base, _ = site
    result = _chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom",
                       base + "search/?query=ascii")  # fmt: skip
    dom = result.stdout.decode("utf-8")
    results = dom[dom.index('id="ibistatic-search-results"') :]
    assert results.count("<li") >= 1, dom[-3000:]
    modal = re.search(r'<div[^>]*id="mkdocs_search_modal"[^>]*>', dom)
    assert modal is None or "show" not in modal.group(0), modal.group(0)
