"""The mkdocs catalog: its pages (pure), the plugin in real mkdocs builds, build_catalog.

The sample archive's catalog is built once with ``python -m mkdocs build --strict``;
every item page's persistent links are read back from the HTML and checked against
``build_persistent_url`` and the offline resolver over an index of the same archives.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import markdown
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives
from ibistatic.catalog.html import to_html
from ibistatic.catalog.pages import catalog_pages, escape, item_page, page_prefix
from ibistatic.catalog.publish import build_catalog
from ibistatic.config import load_config
from ibistatic.core.properties import item_urls
from ibistatic.core.relations import parse_modifier
from ibistatic.core.urls import build_persistent_url
from ibistatic.resolver import Resolver
from ibistatic.targets import DEFAULT_MODIFIERS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CONFIG = ROOT / "ibistatic" / "sample_archive" / "ibistatic.yaml"
SITE_URL = "https://ibi.example.org/"
HOSTILE = "sid.inpe.br/mtc-m19/2014/01.02.17.23.57"
HOSTILE_TITLE = 'Mapa "São José" <2014> & outros'
DELETED = "sid.inpe.br/mtc-m19/2011/05.10.18.31"


# -- escaping -----------------------------------------------------------------------------

ESCAPES = [
    # (value, Markdown, why)
    (
        HOSTILE_TITLE,
        "Mapa &#34;São José&#34; &#60;2014&#62; &#38; outros",
        "the sample's hostile title",
    ),
    ("a_b*c*", "a&#95;b&#42;c&#42;", "emphasis"),
    ("[x](http://evil/)", "&#91;x&#93;(http://evil/)", "a link"),
    ("<script>alert(1)</script>", "&#60;script&#62;alert(1)&#60;/script&#62;", "raw HTML"),
    ("a | b", "a &#124; b", "a table cell separator"),
    ("# not a heading #", "&#35; not a heading &#35;", "heading marks"),
    ("`code` \\n", "&#96;code&#96; &#92;n", "code and a backslash"),
    ("![img](x.png)", "&#33;&#91;img&#93;(x.png)", "an image"),
    ("&amp;", "&#38;amp;", "an entity stays text"),
    ("  two\nlines\t ", "two lines", "white space is one line"),
    ("bell\x07 stx\x02", "bell\ufffd stx\ufffd", "control characters are shown"),
    (
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        "an IBI is left alone",
    ),
]


@pytest.mark.parametrize("value, expected, why", ESCAPES, ids=[case[2] for case in ESCAPES])
def test_escape(value, expected, why):
    assert escape(value) == expected


class _Text(HTMLParser):
    """The text of an HTML fragment (character references decoded), its tags, and the
    text of each table cell."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "td":
            self.cells.append("")
            self._in_cell = True

    def handle_endtag(self, tag):
        self._in_cell = self._in_cell and tag != "td"

    def handle_data(self, data):
        self.text.append(data)
        if self._in_cell:
            self.cells[-1] += data


def _rendered(markdown_text: str) -> _Text:
    parser = _Text()
    parser.feed(markdown.markdown(markdown_text, extensions=["tables", "toc", "fenced_code"]))
    return parser


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1).filter(lambda t: escape(t) != ""))
def test_escaped_text_renders_as_itself(value):
    """In a heading and in a table cell, the escaped value is the value and no markup."""
    expected = " ".join(re.sub(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]", "\ufffd", value).split())
    heading = _rendered(f"# {escape(value)}\n")
    assert heading.tags == ["h1"] and "".join(heading.text) == expected
    cell = _rendered(f"| a | b |\n|---|---|\n| x | {escape(value)} |\n")
    assert [t for t in cell.tags if t not in ("thead", "tbody", "tr", "th", "td")] == ["table"]
    assert cell.cells == ["x", expected]


PREFIXES = [
    ("catalog", "catalog/"),
    ("/catalog/", "catalog/"),
    ("a/b", "a/b/"),
    ("", ""),
    (".", ""),
]


@pytest.mark.parametrize("path, prefix", PREFIXES)
def test_page_prefix(path, prefix):
    assert page_prefix(path) == prefix


def test_item_page_keeps_slashes_at_and_dots():
    assert (
        item_page("sid.inpe.br/mtc-m18@80/2009/07.21.13.23")
        == "catalog/items/sid.inpe.br/mtc-m18@80/2009/07.21.13.23.md"
    )
    assert (
        item_page("iconet.com.br/banon/2009/09.09.22.01", ".")
        == "items/iconet.com.br/banon/2009/09.09.22.01.md"
    )


# -- the pages of the sample --------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(sample_loaded):
    return catalog_pages(sample_loaded)


def _sample_keys(loaded) -> list[str]:
    return sorted({item.key for item in loaded.holdings.all_items()})


def test_every_item_has_a_page_and_nothing_else_is_made(pages, sample_loaded):
    keys = _sample_keys(sample_loaded)
    assert len(keys) == 15
    expected = {"catalog/index.md", "catalog/archives/mtc-m16c.md", "catalog/archives/mtc-m16d.md"}
    expected |= {
        f"catalog/years/{year}.md" for year in ("2008", "2009", "2011", "2012", "2013", "2014")
    }
    expected |= {item_page(key) for key in keys}
    assert set(pages) == expected
    assert list(pages) == sorted(pages)


def test_pages_are_deterministic(sample_loaded, sample_dir):
    again = load_archives([sample_dir / "mtc-m16c", sample_dir / "mtc-m16d"], SITE_URL)
    assert catalog_pages(again) == catalog_pages(sample_loaded)


def test_overview_counts(pages):
    index = pages["catalog/index.md"]
    assert "15 IBIs held by 2 Archives." in index
    assert "| [mtc-m16c](<archives/mtc-m16c.md>) | mtc-m16c.sid.inpe.br | 7 | 0 | 1 | 8 |" in index
    assert "| [mtc-m16d](<archives/mtc-m16d.md>) | mtc-m16d.sid.inpe.br | 7 | 2 | 0 | 9 |" in index
    for state, count in (("Original", 14), ("Copy", 2), ("Deleted", 1)):
        assert f"| {state} | {count} |" in index
    assert "| [2013](<years/2013.md>) | 4 |" in index
    assert index.endswith("## Problems\n\n0 problems found.\n")


def test_hostile_title_is_escaped(pages):
    page = pages[item_page(HOSTILE)]
    assert page.startswith("# Mapa &#34;São José&#34; &#60;2014&#62; &#38; outros\n")
    assert "<2014>" not in page and '"São' not in page


def test_item_page_sections(pages):
    page = pages[item_page("sid.inpe.br/mtc-m18@80/2009/07.21.13.23")]
    assert "| repository name | sid.inpe.br/mtc-m18@80/2009/07.21.13.23 |" in page
    assert "| IBIp | 8JMKD3MGP8W/35MME4E |" in page
    assert "| creator | Consultative Committee for Space Data Systems |" in page
    assert (
        "| pt | [Inglês codificado em ASCII (CCSD0002)](<08.25.19.43.md>) | sid.inpe.br/mtc-m18@80/2009/08.25.19.43 |"
        in page
    )
    assert (
        "- metadata item: [sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47](<07.21.13.23.47.md>)" in page
    )
    assert (
        "| [mtc-m16c](<../../../../archives/mtc-m16c.md>) | mtc-m16c.sid.inpe.br | Original | 2009-07-21T13:23:45Z |"
        in page
    )
    assert (
        "| [mtc-m16d](<../../../../archives/mtc-m16d.md>) | mtc-m16d.sid.inpe.br | Copy | 2009-07-21T13:23:45Z |"
        in page
    )
    assert "(default file) | mtc-m16c |" in page


def test_editions_both_ways(pages):
    first = pages[item_page("sid.inpe.br/mtc-m18@80/2009/07.21.14.43")]
    last = pages[item_page("sid.inpe.br/mtc-m18/2012/07.12.18.08")]
    title = "Reference Model for an Open Archival Information System (OAIS)"
    assert f"- next edition: [{title}](<../../mtc-m18/2012/07.12.18.08.md>)" in first
    assert "- previous edition: none" in first
    assert f"1. **{title}** (this item)\n2. [{title}](<../../mtc-m18/2012/07.12.18.08.md>)" in first
    assert f"- previous edition: [{title}](<../../mtc-m18@80/2009/07.21.14.43.md>)" in last
    assert "- next edition: none (this is the last edition)" in last
    assert (
        f"1. [{title}](<../../mtc-m18@80/2009/07.21.14.43.md>)\n2. **{title}** (this item)" in last
    )


def test_metadata_item_names_what_it_describes(pages):
    page = pages[item_page("sid.inpe.br/mtc-m19/2013/09.04.12.27.58")]
    assert (
        "- metadata of: [Sistema para resolução de IBI: relatório final](<09.04.12.27.57.md>)"
        in page
    )


def test_deleted_item(pages):
    page = pages[item_page(DELETED)]
    assert "No Archive holds a live copy: the item was deleted." in page
    assert (
        "| (none) | "
        "[https://ibi.example.org/sid.inpe.br/mtc-m19/2011/05.10.18.31]"
        "(<https://ibi.example.org/sid.inpe.br/mtc-m19/2011/05.10.18.31>) | deleted: the item was deleted |"
        in page
    )
    assert page.count("](<https://ibi.example.org/") == 1  # no other modifier answers


def _project_with_problems(tmp_path: Path) -> Path:
    archive = write_archive(
        tmp_path / "arch", "arch.example.org", "example.org/arch/2020/01.01.00.00"
    )
    write_item(
        archive,
        "example.org/arch/2020/01.01.00.01",
        state="Original",
        target="document.txt",
        next_edition="example.org/arch/2020/09.09.09.09",
        dublin_core={"title": "Lonely"},
    )
    write_item(
        archive, "example.org/arch/2020/01.01.00.02", state="Sideways", target="document.txt"
    )
    return archive


def test_problems_are_listed(tmp_path):
    archive = _project_with_problems(tmp_path)
    loaded = load_archives([archive], SITE_URL)
    pages = catalog_pages(loaded)
    index = pages["catalog/index.md"]
    problems = sorted(loaded.problems)
    assert len(problems) == 2
    assert (
        f"## Problems\n\n2 problems found.\n\n- {escape(str(problems[0]))}\n- {escape(str(problems[1]))}\n"
        in index
    )
    page = pages[item_page("example.org/arch/2020/01.01.00.01")]
    dangling = next(p for p in problems if p.key == "next-edition")
    assert page.endswith(f"## Problems\n\n- {escape(str(dangling))}\n")
    assert "- next edition: example.org/arch/2020/09.09.09.09 (no Archive holds it)" in page
    assert item_page("example.org/arch/2020/01.01.00.02") not in pages  # left out for errors


def test_catalog_at_the_root():
    loaded = load_archives([ROOT / "ibistatic" / "sample_archive" / "mtc-m16c"], SITE_URL)
    pages = catalog_pages(loaded, ".")
    assert "index.md" in pages and "archives/mtc-m16c.md" in pages
    assert (
        "[Back to the catalog](<../../../../index.md>)"
        in pages["items/sid.inpe.br/mtc-m18@80/2009/07.21.13.23.md"]
    )


# -- mkdocs build --strict of the sample ---------------------------------------------------


def _mkdocs(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _project(directory: Path, plugin_options: dict, nav: list | None = None) -> Path:
    (directory / "docs").mkdir(parents=True)
    (directory / "docs" / "index.md").write_text(
        "# Our documents\n\nSee the catalog.\n", encoding="utf-8"
    )
    config = {"site_name": "Documents", "plugins": ["search", {"ibistatic": plugin_options}]}
    if nav is not None:
        config["nav"] = nav
    (directory / "mkdocs.yml").write_text(
        yaml.safe_dump(config, allow_unicode=True), encoding="utf-8"
    )
    return directory


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = _project(tmp_path_factory.mktemp("catalog-project"), {"config": str(SAMPLE_CONFIG)})
    result = _mkdocs(project, "build", "--strict")
    assert result.returncode == 0, result.stderr
    return project / "site"


class _Page(HTMLParser):
    """The links of each table of a built page, by the id of the heading before it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.section = ""
        self.tables: dict[str, list[list[tuple[str, str | None]]]] = {}
        self._row: list[tuple[str, str | None]] | None = None
        self._cell: list[str] | None = None
        self._href: str | None = None
        self.title: list[str] = []
        self._in_h1 = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":
            self.section = attrs.get("id", "")
        elif tag == "h1":
            self._in_h1 = True
        elif tag == "tr":
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell, self._href = [], None
        elif tag == "a" and self._cell is not None and self._href is None:
            self._href = attrs.get("href")

    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_h1 = False
        elif tag == "td" and self._cell is not None:
            self._row.append(("".join(self._cell), self._href))
            self._cell = None
        elif tag == "tr" and self._row:
            self.tables.setdefault(self.section, []).append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in_h1:
            self.title.append(data)


def _built_page(site: Path, key: str) -> _Page:
    page = _Page()
    page.feed((site / "catalog" / "items" / key / "index.html").read_text(encoding="utf-8"))
    return page


def test_every_sample_item_page_is_built(built, sample_loaded):
    for key in _sample_keys(sample_loaded):
        assert (built / "catalog" / "items" / key / "index.html").is_file(), key
    assert (built / "catalog" / "index.html").is_file()
    assert (built / "catalog" / "archives" / "mtc-m16d" / "index.html").is_file()
    assert (built / "catalog" / "years" / "2014" / "index.html").is_file()


def _expected_links(loaded, resolver: Resolver, key: str) -> list[tuple[str, str]]:
    """(persistent URL, where the resolver sends it) for the modifiers a page must show."""
    holders = loaded.holdings.holders(key)
    item = next((i for _, i in holders if i.state == "Original"), holders[0][1])
    ibi = item.ibip or item.repository
    modifiers = list(DEFAULT_MODIFIERS) + [
        f"+({tag})" for tag in sorted(tag for tag, _ in item.translations)
    ]
    expected = []
    for modifier in modifiers:
        url = build_persistent_url(SITE_URL, ibi, parse_modifier(modifier))
        resolution = resolver.resolve(url)
        if modifier == "" or resolution.url is not None:
            expected.append((url, resolution.url or f"{resolution.alert}: {resolution.message}"))
    return expected


def test_persistent_links_are_canonical_and_resolve(built, sample_loaded, sample_index):
    resolver = Resolver(sample_index)
    checked = 0
    for key in _sample_keys(sample_loaded):
        rows = _built_page(built, key).tables["persistent-urls"]
        links = [(row[1][1], row[2][0]) for row in rows]
        assert links == _expected_links(sample_loaded, resolver, key), key
        for url, leads_to in links:
            resolution = resolver.resolve(url)
            if key == DELETED:
                assert resolution.alert == "deleted" and resolution.url is None
            else:
                assert resolution.url == leads_to, url
            checked += 1
    assert checked >= 40


def test_file_links_are_the_first_holders_urls(built, sample_loaded):
    view = sample_loaded.view("mtc-m16d")
    item = view.item("iconet.com.br/banon/2009/09.09.22.01")
    urls = item_urls(view, item)
    rows = _built_page(built, item.key).tables["files"]
    assert [(text.removesuffix(" (default file)"), href) for (text, href), _ in rows] == sorted(
        urls["files"].items()
    )
    assert rows[0][0][0] == "@relatorio.pdf (default file)"


def test_hostile_title_in_html(built):
    page = _built_page(built, HOSTILE)
    assert "".join(page.title) == HOSTILE_TITLE
    html = (built / "catalog" / "items" / HOSTILE / "index.html").read_text(encoding="utf-8")
    assert "<2014>" not in html


def test_mkdocs_search_keeps_the_overview_and_leaves_out_the_item_pages(built):
    index = json.loads((built / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {unquote(doc["location"]) for doc in index["docs"]}  # mkdocs writes @ as %40
    assert "catalog/" in locations and "" in locations  # the overview, the user's page
    assert not any(location.startswith("catalog/items/") for location in locations)
    assert not any(location.startswith("catalog/archives/") for location in locations)
    assert len(json.dumps(index)) < 20_000  # 16 items made it 60 kB


def test_the_catalog_has_its_own_search(built, sample_loaded):
    page = (built / "catalog" / "search" / "index.html").read_text(encoding="utf-8")
    assert '<script type="application/json" id="ibistatic-search-config">' in page
    assert '{"index":"./","links":"../","param":"query"}' in page  # not mkdocs' own ?q=
    assert '<input type="search" name="query" id="ibistatic-q">' in page
    assert '<script src="./search.js"></script>' in page
    index = json.loads((built / "catalog" / "search" / "index.json").read_text(encoding="utf-8"))
    assert index["link"] == "items/{}/"
    assert index["documents"] == len(_sample_keys(sample_loaded))
    assert (built / "catalog" / "search" / "search.js").is_file()
    overview = (built / "catalog" / "index.html").read_text(encoding="utf-8")
    assert '<a href="search/">Search the catalog</a>' in overview


def test_nav_gets_the_catalog_when_the_users_nav_lacks_it(tmp_path):
    project = _project(tmp_path / "p", {"config": str(SAMPLE_CONFIG)}, nav=[{"Home": "index.md"}])
    result = _mkdocs(project, "build", "--strict")
    assert result.returncode == 0, result.stderr
    home = (project / "site" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="catalog/" class="nav-link">Catalog</a>', home)
    assert 'not included in the "nav"' not in result.stderr


def test_archives_and_site_url_options(tmp_path):
    archive = ROOT / "ibistatic" / "sample_archive" / "mtc-m16c"
    options = {
        "archives": [str(archive)],
        "site_url": "https://links.example.net",
        "path": "holdings",
    }
    project = _project(tmp_path / "p", options)
    result = _mkdocs(project, "build", "--strict")
    assert result.returncode == 0, result.stderr
    page = _built_page_at(project / "site" / "holdings", "sid.inpe.br/mtc-m18@80/2009/07.21.13.23")
    assert (
        page.tables["persistent-urls"][0][1][1] == "https://links.example.net/8JMKD3MGP8W/35MME4E"
    )


def _built_page_at(catalog: Path, key: str) -> _Page:
    page = _Page()
    page.feed((catalog / "items" / key / "index.html").read_text(encoding="utf-8"))
    return page


OPTION_ERRORS = [
    ({}, "ibistatic: expected 'config' (an ibistatic.yaml) or 'archives' with 'site_url'"),
    (
        {"archives": ["ARCHIVE"]},
        "ibistatic: 'archives' needs 'site_url', the URL the persistent links are published at",
    ),
    (
        {"archives": ["ARCHIVE"], "config": "CONFIG"},
        "ibistatic: give either 'config' or 'archives' (with 'site_url'), not both",
    ),
]


@pytest.mark.parametrize("options, message", OPTION_ERRORS)
def test_option_errors(tmp_path, options, message):
    replace = {
        "ARCHIVE": str(ROOT / "ibistatic" / "sample_archive" / "mtc-m16c"),
        "CONFIG": str(SAMPLE_CONFIG),
    }
    options = {
        k: ([replace[v] for v in value] if isinstance(value, list) else replace[value])
        for k, value in options.items()
    }
    result = _mkdocs(_project(tmp_path / "p", options), "build")
    assert result.returncode != 0
    assert message in result.stderr


def test_strict_build_fails_on_archive_problems(tmp_path):
    archive = _project_with_problems(tmp_path)
    project = _project(tmp_path / "p", {"archives": [str(archive)], "site_url": SITE_URL})
    result = _mkdocs(project, "build", "--strict")
    assert result.returncode != 0
    assert (
        "WARNING -  ibistatic: warning: arch: example.org/arch/2020/01.01.00.01/item.yaml: next-edition:"
        in result.stderr
    )
    assert (
        "WARNING -  ibistatic: error: arch: example.org/arch/2020/01.01.00.02/item.yaml: state:"
        in result.stderr
    )
    assert "Aborted with 2 warnings in strict mode!" in result.stdout


def test_a_docs_page_in_the_way_is_an_error(tmp_path):
    project = _project(tmp_path / "p", {"config": str(SAMPLE_CONFIG)})
    (project / "docs" / "catalog").mkdir()
    (project / "docs" / "catalog" / "index.md").write_text("# Mine\n", encoding="utf-8")
    result = _mkdocs(project, "build")
    assert result.returncode != 0
    assert (
        "ibistatic: catalog/index.md exists in the docs; set another 'path' for the catalog"
        in result.stderr
    )


# -- serve: watching the archives ----------------------------------------------------------


class _Server:
    def __init__(self) -> None:
        self.watched: list[tuple[str, bool]] = []

    def watch(self, path, func=None, *, recursive=True):
        self.watched.append((path, recursive))


def test_on_serve_watches_every_archive_and_the_config(tmp_path):
    from mkdocs.config import load_config as load_mkdocs_config

    project = _project(tmp_path / "p", {"config": str(SAMPLE_CONFIG)})
    config = load_mkdocs_config(str(project / "mkdocs.yml"))
    plugin = config.plugins["ibistatic"]
    plugin.on_config(config)
    server = _Server()
    assert plugin.on_serve(server, config=config, builder=None) is server
    site = load_config(SAMPLE_CONFIG)
    assert server.watched == [(str(root), True) for root in site.archives] + [
        (str(SAMPLE_CONFIG), False)
    ]


def test_each_build_crawls_afresh(tmp_path):
    """What a rebuild of ``mkdocs serve`` does after a deposit: the new item's page appears."""
    from mkdocs.config import load_config as load_mkdocs_config
    from mkdocs.structure.files import Files

    archive = write_archive(
        tmp_path / "arch", "arch.example.org", "example.org/arch/2020/01.01.00.00"
    )
    write_item(
        archive, "example.org/arch/2020/01.01.00.01", state="Original", target="document.txt"
    )
    project = _project(tmp_path / "p", {"archives": [str(archive)], "site_url": SITE_URL})
    config = load_mkdocs_config(str(project / "mkdocs.yml"))
    config.plugins.on_config(config)
    first = {f.src_uri for f in config.plugins.on_files(Files([]), config=config)}
    write_item(
        archive, "example.org/arch/2020/01.01.00.02", state="Original", target="document.txt"
    )
    second = {f.src_uri for f in config.plugins.on_files(Files([]), config=config)}
    assert second - first == {item_page("example.org/arch/2020/01.01.00.02")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def _wait_for(url: str, status: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _get(url) == status:
            return True
        time.sleep(0.2)
    return False


def test_mkdocs_serve_publishes_a_deposit(tmp_path):
    archive = write_archive(
        tmp_path / "arch", "arch.example.org", "example.org/arch/2020/01.01.00.00"
    )
    write_item(
        archive, "example.org/arch/2020/01.01.00.01", state="Original", target="document.txt"
    )
    project = _project(tmp_path / "p", {"archives": [str(archive)], "site_url": SITE_URL})
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/catalog/items/example.org/arch/2020/"
        assert _wait_for(base + "01.01.00.01/", 200, 30)
        assert _get(base + "01.01.00.02/") == 404
        write_item(
            archive, "example.org/arch/2020/01.01.00.02", state="Original", target="document.txt"
        )
        assert _wait_for(base + "01.01.00.02/", 200, 30)
    finally:
        server.terminate()
        server.wait(timeout=10)


# -- build_catalog -------------------------------------------------------------------------


def test_build_catalog_writes_a_complete_site(tmp_path, sample_loaded):
    out = tmp_path / "out" / "catalog"
    out.mkdir(parents=True)
    (out / "stale.html").write_text("from an earlier build", encoding="utf-8")
    count = build_catalog(load_config(SAMPLE_CONFIG), out)
    assert count == len(catalog_pages(sample_loaded))
    assert (out / "index.html").is_file() and (out / "404.html").is_file()
    assert not (out / "search" / "search_index.json").exists()  # no mkdocs search
    index = json.loads((out / "search" / "index.json").read_text(encoding="utf-8"))
    assert index["documents"] == len(_sample_keys(sample_loaded))
    sitemap = (out / "sitemap.xml").read_text(encoding="utf-8")
    assert "<loc>https://ibi.example.org/catalog/items/sid.inpe.br/mtc-m18%4080/2009/" in sitemap
    for key in _sample_keys(sample_loaded):
        assert (out / "items" / key / "index.html").is_file(), key
    assert not (out / "stale.html").exists()
    assert [p.name for p in out.parent.iterdir()] == ["catalog"]  # no staging left behind


# -- the catalog's own Markdown reader (ibistatic.catalog.html) -------------------------------


class _Events(HTMLParser):
    """A page as (start, tag, href/id) / (text, ...) / (end, tag) events, white space
    collapsed: what a reader and a link checker see of it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []
        self._in_item = 0

    def handle_starttag(self, tag, attrs):
        self._in_item += tag == "li"
        if tag == "p" and self._in_item:
            return  # a loose list item (<li><p>): the same text
        values = dict(attrs)
        self.events.append(("start", tag, values.get("href"), values.get("id")))

    def handle_endtag(self, tag):
        self._in_item -= tag == "li"
        if not (tag == "p" and self._in_item):
            self.events.append(("end", tag))

    def handle_data(self, data):
        text = " ".join(data.split())
        if text:
            self.events.append(("text", text))


def _events(html: str) -> list[tuple]:
    parser = _Events()
    parser.feed(html)
    return parser.events


def _python_markdown(text: str) -> str:
    return markdown.markdown(text, extensions=["tables", "toc"])


def test_the_catalog_reads_its_markdown_as_python_markdown_does(pages):
    for path, text in pages.items():
        ours, headings = to_html(text, lambda destination: destination)
        assert _events(ours) == _events(_python_markdown(text)), path
        assert headings[0][0] == 1 and all(level in (1, 2) for level, _, _ in headings)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_any_escaped_value_reads_the_same(value):
    text = (
        f"# {escape(value)}\n\n| a | b |\n|---|---|\n| {escape(value)} | [{escape(value)}](<x.md>) |\n\n"
        f"- {escape(value)}: **{escape(value)}** (this)\n\n{escape(value)}\n"
    )
    ours, _ = to_html(text, lambda destination: destination)
    assert _events(ours) == _events(_python_markdown(text))
