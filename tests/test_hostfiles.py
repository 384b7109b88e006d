"""Host redirect files: golden lines for the sample, agreement with the resolver, rule
limits, and the escaping ``_redirects`` needs (nginx and Apache virtual hosts are
test_server_config.py's and test_real_servers.py's)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibistatic.config import SiteConfig, load_config
from ibistatic.core.identifiers import ibi_key, parse_ibi
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from ibistatic.site.hostfiles import (
    HostRule,
    browser_path,
    host_rules,
    portable_line,
    redirects_lines,
    redirects_text,
)
from ibistatic.site.hosts import rule_warnings, write_host_files
from ibistatic.targets import PublishedUrl

SAMPLE = Path(__file__).resolve().parent.parent / "ibistatic" / "sample_archive"
SITE_URL = "http://ibi.example.org/"
MODIFIERS = ["", "!", ":", ":(oai_dc)", "!:(oai_dc)", "+", "+(pt)"]
M16C = "http://mtc-m16c.sid.inpe.br/col/"
M16D = "http://mtc-m16d.sid.inpe.br/col/"


def write_config(folder: Path, output: str = "site") -> Path:
    config = folder / "ibistatic.yaml"
    config.write_text(
        f"site-url: {SITE_URL}\n"
        f"archives:\n  - {SAMPLE / 'mtc-m16c'}\n  - {SAMPLE / 'mtc-m16d'}\n"
        f"output: {output}\nmodifiers: {MODIFIERS!r}\n"
    )
    return config


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("hostfiles")
    build_site(load_config(write_config(work)))
    return work / "site"


def lines(site: Path, name: str) -> list[str]:
    return (site / name).read_text(encoding="utf-8").splitlines()


def rule_lines(site: Path, name: str) -> list[str]:
    return [line for line in lines(site, name) if line and not line.startswith("#")]


# The standard's own vectors first: Sections 8.1 and 8.2, Examples 7.9 and 7.10.
REDIRECTS = [
    f"/8JMKD3MGP8W/35MMLL8 {M16C}sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf 302",
    f"/8JMKD3MGP8W/35MMLL8!:(oai_dc) {M16C}sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc 303",
    f"/LK47B6W/362SFKH {M16D}iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf 302",
    f"/8JMKD3MGP7W/3EPGUE5: {M16D}sid.inpe.br/mtc-m19/2013/09.04.12.27.58/doc/metadata.cgi 303",
    f"/8JMKD3MGP8W/35MME4E+(pt) {M16C}sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf 302",
    f"/sid.inpe.br/mtc-m19/2014/01.02.17.23.57 {M16D}sid.inpe.br/mtc-m19/2014/01.02.17.23.57/doc/"
    "Mapa%20de%20uso%20do%20solo%20%E2%80%94%20S%C3%A3o%20Jos%C3%A9%20dos%20Campos.svg 302",
]


@pytest.mark.parametrize("line", REDIRECTS)
def test_redirects_golden_lines(site, line):
    assert line in lines(site, "_redirects")


def redirect_paths(site: Path) -> list[str]:
    return [line.split(" ")[0] for line in rule_lines(site, "_redirects")]


@pytest.mark.parametrize(
    "path",
    [
        "/8JMKD3MGP8W/35MME4E+",  # language-less '+': the browser's languages choose
        "/sid.inpe.br/mtc-m19/2011/05.10.18.31",  # deleted: no redirect
        "/sid.inpe.br/mtc-m19/2013/09.04.12.27.58:",  # unavailable: an alert page
    ],
)
def test_urls_without_a_redirect(site, path):
    assert path not in redirect_paths(site)


def test_every_redirect_agrees_with_the_resolver(site):
    resolver = Resolver(site)
    rules = [line.split(" ") for line in rule_lines(site, "_redirects")]
    assert len(rules) > 50
    for path, url, status in rules:
        assert resolver.resolve(SITE_URL + unquote(path[1:])).url == url, path
        assert status == ("303" if ":" in path else "302"), path


def test_rules_are_sorted_and_builds_are_deterministic(tmp_path, site):
    build_site(load_config(write_config(tmp_path, "again")))
    again = tmp_path / "again"
    assert (again / "_redirects").read_bytes() == (site / "_redirects").read_bytes()
    assert redirect_paths(site) == sorted(redirect_paths(site), key=unquote)


def test_no_server_configuration_and_no_machine_path_is_published(site):
    """nginx and Apache configurations are `ibistatic server-config`'s, never in the tree."""
    published = [path for path in site.rglob("*") if path.is_file()]
    assert not [path for path in published if path.suffix == ".conf" or "rewritemap" in path.name]
    folder = str(site.resolve().parent).encode()
    assert [path for path in published if folder in path.read_bytes()] == []


# Fabricated published URLs: what host_rules reads.
def target(
    ibi: str, modifier: str = "", url: str | None = "https://a.example/x", alert: str | None = None
) -> PublishedUrl:
    return PublishedUrl(ibi, modifier, ibi_key(ibi), url, alert)


def many(count: int, scheme: str = "https") -> list[PublishedUrl]:
    ibis = [
        f"example.org/rep/2020/{i // 1440 % 12 + 1:02}.{i // 60 % 24 + 1:02}.{i // 60 % 24:02}.{i % 60:02}"
        for i in range(count)
    ]
    return [target(ibi, url=f"{scheme}://a.example/{n}") for n, ibi in enumerate(ibis)]


CLOUDFLARE_OVER = (
    "cloudflare-pages: _redirects holds 2,000 of 2,001 redirects (Cloudflare applies at most "
    "2,000 static rules); _worker.js answers the other 1, one Workers request each "
    "(docs/hosting.md)"
)
NETLIFY_OVER = (
    "netlify: _redirects has 10,001 rules; Netlify advises fewer than 10,000 (the pages still "
    "answer in browsers; docs/hosting.md)"
)


@pytest.mark.parametrize(
    "hosts, count, expected",
    [
        (("cloudflare-pages",), 2000, []),
        (("cloudflare-pages",), 2001, [CLOUDFLARE_OVER]),
        # Netlify lists each rule at /ibi/ and /rep/ too (the repository names are in
        # lower case already), after its two query rules: 3 x 3,333 + 2 = 10,001
        (("netlify",), 3332, []),
        (("netlify",), 3333, [NETLIFY_OVER]),
        (("github-pages", "nginx", "apache"), 10001, []),  # no rule file, no rule limit
        ((), 10001, []),  # the portable output: no host chosen, none checked
    ],
)
def test_rule_warnings_for_the_chosen_hosts_only(hosts, count, expected):
    rules = host_rules(many(count))
    assert len(rules) == count
    assert rule_warnings(hosts, rules) == expected


def test_http_destinations_are_left_to_the_cloudflare_worker():
    rules = host_rules(many(2, "http") + many(3)[2:])
    assert rule_warnings(("cloudflare-pages",), rules) == [
        "cloudflare-pages: _redirects holds 1 of 3 redirects (2 go to http:// URLs or are "
        "longer than 1,000 characters, which Cloudflare rejects); _worker.js answers the "
        "other 2, one Workers request each (docs/hosting.md)"
    ]


def test_write_host_files_returns_the_warnings(tmp_path):
    config = SiteConfig(
        site_url="https://ibi.example.org/",
        archives=(),
        output=tmp_path,
        hosts=("cloudflare-pages",),
    )
    assert write_host_files(config, many(2001), tmp_path) == [CLOUDFLARE_OVER]
    assert len(rule_lines(tmp_path, "_redirects")) == 2000
    assert (tmp_path / "_worker.js").is_file()


@pytest.mark.parametrize(
    "written, canonical",
    [
        ("8jmkd3mgp8w/35mmll8", "8JMKD3MGP8W/35MMLL8"),
        ("SID.INPE.BR/mtc-m18@80/2009/07.21.14.43", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"),
    ],
)
def test_the_canonical_case_is_listed_besides_the_written_one(written, canonical):
    rules = host_rules([target(written, "!:(oai_dc)")])
    assert [rule.path for rule in rules] == sorted(
        [written + "!:(oai_dc)", canonical + "!:(oai_dc)"]
    )
    assert {rule.status for rule in rules} == {303}
    redirects = rule_text_lines(redirects_text(rules))
    assert len(redirects) == 2


def rule_text_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_which_targets_become_rules():
    rules = host_rules(
        [
            target("8JMKD3MGP8W/35MMLL8"),
            target("8JMKD3MGP8W/35MMLL8", ":"),
            target("8JMKD3MGP8W/35MMLL8", "+"),
            target("8JMKD3MGP8W/35MMLL8", "!+:"),
            target("8JMKD3MGP8W/35MMLL8", "+(en)", "https://a.example/en"),
            target("8JMKD3MGP8W/35MME4E", url=None, alert="deleted"),
            target("8JMKD3MGP8W/35MME4E", "+", url=None, alert="deleted"),
            target("8JMKD3MGP8W/3C9EP6P", url=None, alert="unavailable"),
            target("8JMKD3MGP8W/3C9EP6P", "!", url=None, alert="conflict"),
        ]
    )
    assert rules == [
        HostRule("8JMKD3MGP8W/35MME4E", 410, None),
        HostRule("8JMKD3MGP8W/35MMLL8", 302, "https://a.example/x"),
        HostRule("8JMKD3MGP8W/35MMLL8+(en)", 302, "https://a.example/en"),
        HostRule("8JMKD3MGP8W/35MMLL8:", 303, "https://a.example/x"),
    ]


# Escaping, file by file.
HOSTILE = [
    HostRule('a"quote', 302, "https://t.example/q?x=%22&y=1"),
    HostRule("back\\slash", 302, 'https://t.example/b\\s"q'),
    HostRule("dollar$uri", 303, "https://t.example/$uri/$1?a=$b"),
    HostRule("sp ace/é", 302, "https://t.example/%C3%A9%20x"),
    HostRule("gone item", 410, None),
]


def test_redirects_text_escapes_paths_as_browsers_send_them():
    assert rule_text_lines(redirects_text(HOSTILE)) == [
        "/a%22quote https://t.example/q?x=%22&y=1 302",
        '/back%5Cslash https://t.example/b\\s"q 302',
        "/dollar$uri https://t.example/$uri/$1?a=$b 303",
        "/sp%20ace/%C3%A9 https://t.example/%C3%A9%20x 302",
    ]


def test_redirects_lines_made_already_are_the_lines_made_from_the_rules():
    """watch keeps each rule's portable line (site.memo): given them, the file is the same,
    made from them, not from the rules (a 410's "" is no line)."""
    made = [portable_line(rule, "/ibi/") for rule in HOSTILE]
    assert made[-1] == ""
    assert list(redirects_lines(HOSTILE, "/ibi/", made)) == list(redirects_lines(HOSTILE, "/ibi/"))
    assert list(redirects_lines(HOSTILE, "/", ["a", "", "b"]))[2:] == ["a", "b"]


def test_urls_are_written_as_a_location_header_can_carry_them():
    rules = host_rules([target("8JMKD3MGP8W/35MMLL8", url="https://a.example/São José\t1.pdf")])
    assert rules[0].url == "https://a.example/S%C3%A3o%20Jos%C3%A9%091.pdf"


@pytest.mark.parametrize(
    "path, browser",
    [
        ("8JMKD3MGP8W/35MMLL8!:(oai_dc)", "8JMKD3MGP8W/35MMLL8!:(oai_dc)"),
        (
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt-BR)",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt-BR)",
        ),
        ("a b/Relatório.txt", "a%20b/Relat%C3%B3rio.txt"),
        ('q"<>`{|}^[]\\#?%', "q%22%3C%3E%60%7B%7C%7D%5E%5B%5D%5C%23%3F%25"),
        ("keep!$&'()*+,;=:@~-._", "keep!$&'()*+,;=:@~-._"),
    ],
)
def test_path_spellings(path, browser):
    assert browser_path(path) == browser


PATHS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(PATHS)
def test_browser_path_round_trips(path):
    spelled = browser_path(path)
    assert unquote(spelled) == path
    assert spelled.isascii() and not re.search(r"[\s\"<>\\^`{|}#?]", spelled)


def test_redirects_for_a_site_url_with_a_path():
    rules = [HostRule("8JMKD3MGP8W/35MMLL8", 302, "https://a.example/x")]
    assert rule_text_lines(redirects_text(rules, "/ibi/")) == [
        "/ibi/8JMKD3MGP8W/35MMLL8 https://a.example/x 302"
    ]


def test_fabricated_ibis_are_valid():
    for each in many(3):
        parse_ibi(each.ibi)


def test_published_urls_take_the_canonical_case_from_their_item(tmp_path):
    from archive_factory import write_archive, write_item
    from ibistatic.archive.load import load_archives
    from ibistatic.targets import page_targets, published_urls

    root = write_archive(tmp_path / "a", "a.example.org", "example.org/a/2020/01.01.00.00")
    write_item(
        root, "SID.INPE.BR/Rep/2020/01.02.03.04", state="Original", ibip="8jmkd3mgp8w/abcdef"
    )  # neither form canonical
    write_item(
        root, "sid.inpe.br/rep/2020/01.02.03.05", state="Original", ibip="8JMKD3MGP8W/ABCDEG"
    )  # both canonical
    loaded = load_archives([root], SITE_URL)
    assert loaded.problems == []
    targets = list(page_targets(loaded, "all"))
    assert {t.ibi for t in targets} == {
        "SID.INPE.BR/Rep/2020/01.02.03.04",
        "8jmkd3mgp8w/abcdef",
        "sid.inpe.br/rep/2020/01.02.03.05",
        "8JMKD3MGP8W/ABCDEG",
        "example.org/a/2020/01.01.00.00",  # the Archive's service item
    }
    published_all = published_urls(targets)
    assert len(published_all) == len(targets)
    for target, published in zip(targets, published_all):
        assert published.canonical == ibi_key(target.ibi)  # as parsing the IBI again gives
        assert (published.path, published.url, published.alert) == (
            target.path,
            target.resolution.url,
            target.resolution.alert,
        )
    assert {published.canonical for published in published_all} >= {
        "sid.inpe.br/rep/2020/01.02.03.04",
        "8JMKD3MGP8W/ABCDEF",
    }


def test_an_items_published_urls_share_their_equal_strings(tmp_path):
    """A large site keeps every PublishedUrl: an item's bare URL and its '!' lead to one
    URL, kept as one string; a canonical IBI is its own canonical form; a modifier is
    one string over the site."""
    from archive_factory import write_archive, write_item
    from ibistatic.archive.load import load_archives
    from ibistatic.targets import page_targets, published_urls

    root = write_archive(tmp_path / "a", "a.example.org", "example.org/a/2020/01.01.00.00")
    for minute in ("04", "05"):
        write_item(root, f"sid.inpe.br/rep/2020/01.02.03.{minute}", state="Original")
    loaded = load_archives([root], SITE_URL)
    assert loaded.problems == []
    targets = list(page_targets(loaded))
    by_item: dict = {}
    for target in targets:
        if target.ibi != "example.org/a/2020/01.01.00.00":  # the Archive's service item
            by_item.setdefault(target.item.key, []).append(target)
    firsts = []
    for of_item in by_item.values():
        published = {url.modifier: url for url in published_urls(of_item)}
        assert published[""].url == published["!"].url is not None
        assert published[""].url is published["!"].url
        assert all(url.canonical is url.ibi for url in published.values())
        firsts.append(published)
    one, other = firsts
    assert all(one[modifier].modifier is other[modifier].modifier for modifier in one)
