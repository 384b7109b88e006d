"""Host profiles: ``hosts:`` in ibistatic.yaml, ``build --host`` and ``--strict``; what
each profile writes into the published tree, the limits it checks (with small synthetic
limits), and that no server configuration and no build-machine path is ever published.
The hosts' own engines are in test_host_netlify.py, test_host_cloudflare.py and
test_host_github_pages.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ibistatic.cli import main
from ibistatic.config import HOST_NAMES, load_config
from ibistatic.errors import ConfigError
from ibistatic.site import hosts
from ibistatic.site.build import build_site
from ibistatic.site.hosts.limits import TreeLimits, TreeSize, measure, tree_warnings

SAMPLE = Path(__file__).resolve().parent.parent / "ibistatic" / "sample_archive"
ARCHIVES = [str(SAMPLE / "mtc-m16c"), str(SAMPLE / "mtc-m16d")]
SITE_URL = "https://ibi.example.org/"


def write_config(folder: Path, **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ibistatic.yaml"
    config = {"site-url": SITE_URL, "archives": ARCHIVES, "output": "site", **extra}
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def published_files(site: Path) -> set[str]:
    return {str(path.relative_to(site)) for path in site.rglob("*") if path.is_file()}


# -- the configuration ----------------------------------------------------------------


def test_hosts_are_read_in_order_each_once(tmp_path):
    config = load_config(write_config(tmp_path, hosts=["s3", "github-pages", "s3"]))
    assert config.hosts == ("s3", "github-pages")
    assert load_config(write_config(tmp_path / "none")).hosts == ()


@pytest.mark.parametrize(
    "value, found",
    [
        (["netlfy"], "found the unknown host 'netlfy'"),
        ("netlify", "found 'netlify'"),
        ([1], "found [1]"),
    ],
)
def test_a_bad_hosts_value_is_named(tmp_path, value, found):
    path = write_config(tmp_path, hosts=value)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == (
        f"{path}: hosts: {found}; expected a list of host names: " + ", ".join(HOST_NAMES)
    )


def test_netlify_and_cloudflare_cannot_share_an_output(tmp_path):
    path = write_config(tmp_path, hosts=["netlify", "cloudflare-pages"])
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == (
        f"{path}: hosts: found ['netlify', 'cloudflare-pages']; expected netlify and "
        "cloudflare-pages read _redirects in two syntaxes that each rejects of the other; "
        "build each into its own output (ibistatic build --host netlify --output DIR)"
    )


def test_the_command_line_says_the_same_for_host_options(tmp_path, capsys):
    path = write_config(tmp_path)
    code = main(
        [
            "build",
            "--config",
            str(path),
            "--quiet",
            "--host",
            "netlify",
            "--host",
            "cloudflare-pages",
        ]
    )
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "ibistatic build: hosts: netlify and cloudflare-pages read _redirects in two syntaxes "
        "that each rejects of the other; build each into its own output "
        "(ibistatic build --host netlify --output DIR)"
    )
    assert not (tmp_path / "site").exists()  # refused before anything was published


def test_an_unknown_host_option_is_bad_usage(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["build", "--config", str(write_config(tmp_path)), "--host", "heroku"])
    assert raised.value.code == 2
    assert "argument --host: invalid choice: 'heroku'" in capsys.readouterr().err


# -- what each profile writes ----------------------------------------------------------

WRITTEN = {
    (): {".nojekyll", "_redirects"},
    ("github-pages",): {".nojekyll"},
    ("netlify",): {"_redirects"},
    ("cloudflare-pages",): {"_redirects", "_worker.js"},
    ("nginx", "apache"): set(),
    ("s3",): {"_ibistatic/s3-redirects.tsv"},
}
HOST_FILES = {".nojekyll", "_redirects", "_worker.js", "_ibistatic/s3-redirects.tsv"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[tuple, Path]:
    """The sample built once per profile of WRITTEN, from the command line."""
    work = tmp_path_factory.mktemp("profiles")
    path = write_config(work)
    sites = {}
    for chosen in WRITTEN:
        output = work / ("site-" + ("-".join(chosen) or "portable"))
        options = [option for name in chosen for option in ("--host", name)]
        assert (
            main(["build", "--config", str(path), "--output", str(output), "--quiet", *options])
            == 0
        )
        sites[chosen] = output
    return sites


@pytest.mark.parametrize("chosen", list(WRITTEN), ids=lambda c: "-".join(c) or "portable")
def test_each_profile_writes_what_its_host_needs(built, chosen):
    assert published_files(built[chosen]) & HOST_FILES == WRITTEN[chosen]


@pytest.mark.parametrize("chosen", list(WRITTEN), ids=lambda c: "-".join(c) or "portable")
def test_no_server_configuration_and_no_machine_path_is_published(built, chosen):
    site = built[chosen]
    folders = {str(site).encode(), str(site.resolve()).encode(), str(site.parent).encode()}
    leaking = [
        name
        for name in sorted(published_files(site))
        if any(folder in (site / name).read_bytes() for folder in folders)
    ]
    assert leaking == []
    assert not [
        name for name in published_files(site) if name.endswith((".conf", "rewritemap.txt"))
    ]


@pytest.mark.parametrize("name", HOST_NAMES)
def test_the_rules_are_made_only_for_the_profiles_whose_files_hold_them(built, name):
    """needs_rules (which spares a site for nginx, Apache or GitHub Pages making every
    rule) says what the profiles' files do: with no rule, theirs are unchanged."""
    from dataclasses import replace

    from ibistatic.site.hostfiles import host_rules
    from ibistatic.site.state import load_state

    portable = load_config(built[()].parent / "ibistatic.yaml", output=built[()])
    state, _ = load_state(portable.cache_dir / "site-state.pickle")
    config = replace(portable, hosts=(name,))
    published = [url for key in sorted(state.published) for url in state.published[key]]
    rules = host_rules(published)
    assert len(rules) > 30

    def made(with_rules) -> dict:
        return {path: list(lines) for path, lines in hosts.profile_files(config, with_rules, "/")}

    assert (made(rules) != made([])) is hosts.needs_rules((name,))
    assert hosts.needs_rules(()) and not hosts.needs_rules(("nginx", "apache", "github-pages"))


def test_netlify_forces_every_rule_and_answers_410_for_deleted_items(built):
    rules = [
        line.split(" ")
        for line in (built[("netlify",)] / "_redirects").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert rules and all(rule[-1].endswith("!") for rule in rules)
    assert ["/sid.inpe.br/mtc-m19/2011/05.10.18.31", "/404.html", "410!"] in rules
    # a query the resolver reads goes to the page at the path (first: the first match wins)
    assert rules[:2] == [
        ["/*", "ibiurl.verblist=:value", "/:splat", "200!"],
        ["/*", "ibiurl.requireditemstatus=:value", "/:splat", "200!"],
    ]


def test_cloudflare_rules_are_those_it_accepts_most_valued_first(built):
    lines = (built[("cloudflare-pages",)] / "_redirects").read_text(encoding="utf-8").splitlines()
    rules = [line.split(" ") for line in lines if line and not line.startswith("#")]
    assert len(rules) == 25  # the sample's Archives are http://: only the metadata pages
    assert all(url.startswith("https://") and status in ("302", "303") for _, url, status in rules)
    values = [cloudflare_value(path) for path, _, _ in rules]
    assert values == sorted(values)


def cloudflare_value(path: str) -> int:
    from ibistatic.site.hostfiles import HostRule
    from ibistatic.site.hosts.cloudflare import _value

    return _value(HostRule(path[1:], 302, "https://x"))


def test_the_worker_is_the_site_resolver_in_one_module(built):
    worker = (built[("cloudflare-pages",)] / "_worker.js").read_text(encoding="utf-8")
    resolver = (SAMPLE.parent / "site_src" / "assets" / "resolve.js").read_text(encoding="utf-8")
    assert resolver.replace('require("./facts.js")', "null") in worker
    assert 'const IBISTATIC_BASE = "/";' in worker
    assert "export default {" in worker and "require(" not in worker


def test_the_s3_manifest_lists_every_redirect_by_object_key(built):
    manifest = built[("s3",)] / "_ibistatic" / "s3-redirects.tsv"
    rows = [line.split("\t") for line in manifest.read_text(encoding="utf-8").splitlines()[1:]]
    portable = [
        line.split(" ")
        for line in (built[()] / "_redirects").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    keys = [key for key, _ in rows]
    assert len(keys) == len(set(keys))
    # each portable rule, and the same answer at the spellings people cite
    assert {path[1:] for path, _, _ in portable} < set(keys) and len(portable) > 50
    url = portable_url(portable, ":(oai_dc)")
    for key in ("8JMKD3MGP8W/35MMLL8", "8jmkd3mgp8w/35mmll8", "ibi/8JMKD3MGP8W/35MMLL8"):
        assert [key + ":(oai_dc)", url] in rows
    listed = {path[1:] for path, _, _ in portable}
    folded = {path.lower() for path in listed}  # the sample's modifiers have no capital
    for key in set(keys) - listed:
        assert key[4:] in listed if key[:4] in ("ibi/", "rep/") else key in folded, key


def portable_url(rules, modifier: str) -> str:
    return next(url for path, url, _ in rules if path == "/8JMKD3MGP8W/35MMLL8" + modifier)


def test_another_host_removes_the_files_of_the_last(tmp_path):
    path = write_config(tmp_path)
    assert main(["build", "--config", str(path), "--quiet", "--host", "cloudflare-pages"]) == 0
    assert (tmp_path / "site" / "_worker.js").is_file()
    assert main(["build", "--config", str(path), "--quiet", "--host", "s3"]) == 0
    files = published_files(tmp_path / "site")
    assert files & HOST_FILES == {"_ibistatic/s3-redirects.tsv"}


# -- limits ----------------------------------------------------------------------------


def test_measure_counts_every_file_and_finds_the_largest(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "big.bin").write_bytes(b"x" * 300)
    (tmp_path / "small.txt").write_bytes(b"y" * 20)
    assert measure(tmp_path) == TreeSize(2, 320, (300, "a/big.bin"))


LIMITS = TreeLimits("example-host", files=10, bytes=1000, file_bytes=200, source="its docs")


@pytest.mark.parametrize(
    "size, expected",
    [
        (TreeSize(8, 800, (100, "a")), []),
        (
            TreeSize(9, 900, (100, "a")),
            [
                "example-host: the site has 9 files, 90% of the 10 the host accepts (its docs)",
                "example-host: the site has 900 bytes, 90% of the 1,000 the host accepts (its docs)",
            ],
        ),
        (
            TreeSize(11, 1001, (201, "big.pdf")),
            [
                "example-host: the site has 11 files, more than the 10 the host accepts (its docs)",
                "example-host: the site has 1,001 bytes, more than the 1,000 the host accepts "
                "(its docs)",
                "example-host: big.pdf is 201 bytes; the host takes files of at most 200 bytes "
                "(its docs)",
            ],
        ),
    ],
)
def test_tree_warnings_near_and_past_each_limit(size, expected):
    assert tree_warnings([LIMITS], size) == expected


def test_the_documented_limits():
    assert hosts.TREE_LIMITS["github-pages"].bytes == 1_000_000_000
    assert hosts.TREE_LIMITS["cloudflare-pages"].files == 20_000
    assert hosts.chosen_tree_limits(("nginx", "netlify", "s3")) == []


@pytest.fixture
def tiny_limits(monkeypatch):
    """GitHub Pages and Cloudflare Pages limits small enough for the sample to pass."""
    monkeypatch.setitem(
        hosts.TREE_LIMITS, "github-pages", TreeLimits("github-pages", bytes=1000, source="tiny")
    )
    monkeypatch.setitem(
        hosts.TREE_LIMITS,
        "cloudflare-pages",
        TreeLimits("cloudflare-pages", files=5, source="tiny"),
    )


def test_limits_warn_for_the_chosen_hosts_only(tmp_path, tiny_limits):
    config = load_config(write_config(tmp_path, hosts=["github-pages"]))
    warnings = build_site(config).warnings
    assert len(warnings) == 1
    assert warnings[0].startswith("github-pages: the site has ")
    assert warnings[0].endswith(" bytes, more than the 1,000 the host accepts (tiny)")
    assert build_site(load_config(write_config(tmp_path / "none"))).warnings == []


def test_strict_fails_on_a_limit_but_the_site_is_published(tmp_path, tiny_limits, capsys):
    path = write_config(tmp_path)
    assert main(["build", "--config", str(path), "--quiet", "--host", "cloudflare-pages"]) == 0
    capsys.readouterr()
    code = main(
        ["build", "--config", str(path), "--quiet", "--strict", "--host", "cloudflare-pages"]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "warning: cloudflare-pages: the site has " in err
    assert " files, more than the 5 the host accepts (tiny)" in err
    assert (tmp_path / "site" / "_worker.js").is_file()  # published all the same
    assert main(["build", "--config", str(path), "--quiet", "--strict", "--host", "nginx"]) == 0
