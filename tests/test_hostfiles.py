"""Host redirect files: golden lines for the sample, agreement with the resolver, rule
limits, and the escaping each file needs (the real servers are in test_real_servers.py,
the hosts' own engines in test_host_*.py).  The nginx and Apache files are never in the
published tree: they are made here from the build's published URLs, as
``ibistatic server-config`` makes them."""

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
from ibistatic.site.build import Publisher
from ibistatic.site.hostfiles import (
    HostRule,
    apache_key,
    browser_path,
    host_rules,
    redirects_text,
    write_host_files,
)
from ibistatic.site.hosts import rule_warnings
from ibistatic.site.serverconfs import (
    apache_conf_text,
    apache_map_text,
    apache_status_text,
    nginx_map_text,
    nginx_server_text,
    nginx_string,
)
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
def published(tmp_path_factory) -> tuple[Path, list]:
    """The sample's site and every URL its build published."""
    work = tmp_path_factory.mktemp("hostfiles")
    publisher = Publisher(load_config(write_config(work)))
    publisher.build()
    state = publisher.state
    return work / "site", [url for key in sorted(state.published) for url in state.published[key]]


@pytest.fixture(scope="module")
def site(published) -> Path:
    return published[0]


def write_server_files(folder: Path, urls: list) -> Path:
    rules = host_rules(urls)
    (folder / "_ibistatic").mkdir(parents=True)
    for name, text in (
        ("nginx-map.conf", nginx_map_text(rules, "/")),
        ("apache-rewritemap.txt", apache_map_text(rules)),
        ("apache-status.txt", apache_status_text(rules)),
    ):
        (folder / "_ibistatic" / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def confs(published, tmp_path_factory) -> Path:
    """The nginx and Apache maps of the sample's published URLs (outside the site)."""
    return write_server_files(tmp_path_factory.mktemp("confs"), published[1])


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
NGINX_MAP = [
    '    "/8JMKD3MGP8W/35MMLL8!:(oai_dc)" '
    f'"{M16C}sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc";',
    f'    "/LK47B6W/362SFKH" "{M16D}iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf";',
    '    "/8JMKD3MGP8W/35MMLL8!:(oai_dc)" 303;',
    '    "/sid.inpe.br/mtc-m19/2011/05.10.18.31" 410;',
    '    "/sid.inpe.br/mtc-m19/2011/05.10.18.31!:(oai_dc)" 410;',
    "map $uri $ibistatic_target {",
]
APACHE_MAP = [
    f"8jmkd3mgp8w/35mmll8!:(oai_dc) {M16C}sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi",
    "8jmkd3mgp8w/35mmll8!:(oai_dc)? choice=oai_dc",
    f"lk47b6w/362sfkh {M16D}iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf",
]
APACHE_STATUS = [
    "8jmkd3mgp8w/35mmll8!:(oai_dc) 303",
    "8jmkd3mgp7w/3epgue5: 303",
    "sid.inpe.br/mtc-m19/2011/05.10.18.31 410",
]


@pytest.mark.parametrize("line", REDIRECTS)
def test_redirects_golden_lines(site, line):
    assert line in lines(site, "_redirects")


@pytest.mark.parametrize("line", NGINX_MAP)
def test_nginx_map_golden_lines(confs, line):
    assert line in lines(confs, "_ibistatic/nginx-map.conf")


@pytest.mark.parametrize("line", APACHE_MAP)
def test_apache_map_golden_lines(confs, line):
    assert line in lines(confs, "_ibistatic/apache-rewritemap.txt")


@pytest.mark.parametrize("line", APACHE_STATUS)
def test_apache_status_golden_lines(confs, line):
    assert line in lines(confs, "_ibistatic/apache-status.txt")


def nginx_keys(site: Path, variable: str) -> list[str]:
    text = (site / "_ibistatic/nginx-map.conf").read_text(encoding="utf-8")
    block = text.split(f"map $uri {variable} {{\n", 1)[1].split("\n}", 1)[0]
    return [re.match(r'    "([^"]*)"', line).group(1) for line in block.splitlines()]


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
def test_urls_without_a_redirect(site, confs, path):
    assert path not in redirect_paths(site)
    assert path not in nginx_keys(confs, "$ibistatic_target")
    assert not any(
        line.split(" ")[0] == apache_key(path[1:])
        for line in rule_lines(confs, "_ibistatic/apache-rewritemap.txt")
    )


def test_language_less_plus_is_in_no_file(confs):
    key = "8JMKD3MGP8W/35MME4E+"
    assert "/" + key not in nginx_keys(confs, "$ibistatic_status")
    assert not any(
        line.startswith(apache_key(key) + " ")
        for line in rule_lines(confs, "_ibistatic/apache-status.txt")
    )


def test_every_redirect_agrees_with_the_resolver(site):
    resolver = Resolver(site)
    rules = [line.split(" ") for line in rule_lines(site, "_redirects")]
    assert len(rules) > 50
    for path, url, status in rules:
        assert resolver.resolve(SITE_URL + unquote(path[1:])).url == url, path
        assert status == ("303" if ":" in path else "302"), path


def test_the_files_list_the_same_urls(site, confs):
    paths = [unquote(path) for path in redirect_paths(site)]
    folded = {path.lower() for path in paths}
    assert {key.lower() for key in nginx_keys(confs, "$ibistatic_target")} == folded
    apache = {line.split(" ")[0] for line in rule_lines(confs, "_ibistatic/apache-rewritemap.txt")}
    assert {key for key in apache if not key.endswith("?")} == {
        apache_key(path[1:]) for path in paths
    }


def test_rules_are_sorted_and_builds_are_deterministic(tmp_path, site, confs):
    publisher = Publisher(load_config(write_config(tmp_path, "again")))
    publisher.build()
    state = publisher.state
    urls = [url for key in sorted(state.published) for url in state.published[key]]
    again = write_server_files(tmp_path / "confs", urls)
    assert (tmp_path / "again" / "_redirects").read_bytes() == (site / "_redirects").read_bytes()
    for name in (
        "_ibistatic/nginx-map.conf",
        "_ibistatic/apache-rewritemap.txt",
        "_ibistatic/apache-status.txt",
    ):
        assert (again / name).read_bytes() == (confs / name).read_bytes(), name
    assert redirect_paths(site) == sorted(redirect_paths(site), key=unquote)


def test_no_server_configuration_is_published(site):
    assert sorted(path.name for path in (site / "_ibistatic").iterdir()) == ["ibistatic-site.txt"]


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
        (("netlify",), 10000, []),
        (("netlify",), 10001, [NETLIFY_OVER]),
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
    # nginx and Apache ignore case: one key each
    assert (
        len([line for line in nginx_map_text(rules).splitlines() if "https://a.example/x" in line])
        == 1
    )
    assert len(rule_text_lines(apache_map_text(rules))) == 1


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


def test_nginx_map_quotes_keys_and_values():
    text = nginx_map_text(HOSTILE)
    target_block = text.split("map $uri $ibistatic_target {\n", 1)[1].split("\n}", 1)[0]
    assert target_block.splitlines() == [
        '    "/a\\"quote" "https://t.example/q?x=%22&y=1";',
        '    "/back\\\\slash" "https://t.example/b\\\\s\\"q";',
        '    "/dollar$uri" "https://t.example/${ibistatic_dollar}uri/${ibistatic_dollar}1?a=${ibistatic_dollar}b";',
        '    "/sp ace/é" "https://t.example/%C3%A9%20x";',
    ]
    status_block = text.split("map $uri $ibistatic_status {\n", 1)[1].split("\n}", 1)[0]
    assert status_block.splitlines() == ['    "/dollar$uri" 303;', '    "/gone item" 410;']
    assert 'geo $ibistatic_dollar { default "$"; }' in text


def test_apache_maps_use_int_escape_spelling():
    assert rule_text_lines(apache_map_text(HOSTILE)) == [
        "a%22quote https://t.example/q",
        "a%22quote? x=%22&y=1",
        'back%5cslash https://t.example/b\\s"q',
        "dollar$uri https://t.example/$uri/$1",
        "dollar$uri? a=$b",
        "sp%20ace/%c3%a9 https://t.example/%C3%A9%20x",
    ]
    assert rule_text_lines(apache_status_text(HOSTILE)) == ["dollar$uri 303", "gone%20item 410"]


def test_urls_are_written_as_a_location_header_can_carry_them():
    rules = host_rules([target("8JMKD3MGP8W/35MMLL8", url="https://a.example/São José\t1.pdf")])
    assert rules[0].url == "https://a.example/S%C3%A3o%20Jos%C3%A9%091.pdf"


@pytest.mark.parametrize(
    "text, variables, expected",
    [
        ("/plain", True, '"/plain"'),
        ('a"b', True, '"a\\"b"'),
        ("a\\b", True, '"a\\\\b"'),
        ("a$b", True, '"a${ibistatic_dollar}b"'),
        ("a$b", False, '"a$b"'),
        ("a b é", True, '"a b é"'),
    ],
)
def test_nginx_string(text, variables, expected):
    assert nginx_string(text, variables) == expected


@pytest.mark.parametrize(
    "path, browser, apache",
    [
        (
            "8JMKD3MGP8W/35MMLL8!:(oai_dc)",
            "8JMKD3MGP8W/35MMLL8!:(oai_dc)",
            "8jmkd3mgp8w/35mmll8!:(oai_dc)",
        ),
        (
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt-BR)",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt-BR)",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23+(pt-br)",
        ),
        ("a b/Relatório.txt", "a%20b/Relat%C3%B3rio.txt", "a%20b/relat%c3%b3rio.txt"),
        (
            'q"<>`{|}^[]\\#?%',
            "q%22%3C%3E%60%7B%7C%7D%5E%5B%5D%5C%23%3F%25",
            "q%22%3c%3e%60%7b%7c%7d%5e%5b%5d%5c%23%3f%25",
        ),
        ("keep!$&'()*+,;=:@~-._", "keep!$&'()*+,;=:@~-._", "keep!$&'()*+,;=:@~-._"),
    ],
)
def test_path_spellings(path, browser, apache):
    assert (browser_path(path), apache_key(path)) == (browser, apache)


def nginx_unquote(text: str) -> str:
    """What nginx reads from a double-quoted string of nginx_string (variables on)."""
    assert text.startswith('"') and text.endswith('"')
    parts = text[1:-1].split("${ibistatic_dollar}")
    assert not any("$" in part for part in parts)
    return "$".join(re.sub(r'\\(["\\])', r"\1", part) for part in parts)


PATHS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(PATHS)
def test_browser_path_round_trips(path):
    spelled = browser_path(path)
    assert unquote(spelled) == path
    assert spelled.isascii() and not re.search(r"[\s\"<>\\^`{|}#?]", spelled)


@given(PATHS)
def test_apache_key_is_the_folded_escaped_path(path):
    key = apache_key(path)
    assert unquote(key) == path.encode("utf-8").lower().decode("utf-8")
    assert key.isascii() and key == key.lower() and not re.search(r"\s", key)


@given(PATHS)
def test_nginx_string_round_trips(text):
    assert nginx_unquote(nginx_string(text)) == text


def test_snippets_for_a_site_url_with_a_path():
    rules = [HostRule("8JMKD3MGP8W/35MMLL8", 302, "https://a.example/x")]
    assert rule_text_lines(redirects_text(rules, "/ibi/")) == [
        "/ibi/8JMKD3MGP8W/35MMLL8 https://a.example/x 302"
    ]
    assert (
        '    "/ibi/8JMKD3MGP8W/35MMLL8" "https://a.example/x";'
        in nginx_map_text(rules, "/ibi/").splitlines()
    )
    server = nginx_server_text(Path("/var/www/ibi"), "/ibi/")
    assert 'location "/ibi/" {' in server and '    root "/var/www";' in server
    apache = apache_conf_text(Path("/var/www/ibi"), "/ibi/")
    assert (
        "RewriteRule ^/ibi/(.*)$ ${ibi:${ibilower:${ibiescape:$1}}}?${ibi:${ibilower:${ibiescape:$1}}?} [R=302,L,NE]"
        in apache
    )


def test_fabricated_ibis_are_valid():
    for each in many(3):
        parse_ibi(each.ibi)


def test_published_urls_take_the_canonical_case_from_their_item(tmp_path):
    from archive_factory import write_archive, write_item
    from ibistatic.archive.load import load_archives
    from ibistatic.targets import page_targets, published_url

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
    }
    for target in targets:
        published = published_url(target)
        assert published.canonical == ibi_key(target.ibi)  # as parsing the IBI again gives
        assert (published.path, published.url, published.alert) == (
            target.path,
            target.resolution.url,
            target.resolution.alert,
        )
    assert {published_url(t).canonical for t in targets} >= {
        "sid.inpe.br/rep/2020/01.02.03.04",
        "8JMKD3MGP8W/ABCDEF",
    }
