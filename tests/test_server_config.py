"""``ibistatic server-config``: the virtual hosts' text, its options and its errors (the
real nginx and Apache run them in test_real_servers.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ibistatic.cli import main
from ibistatic.index.reader import Index
from ibistatic.site.hostfiles import HostRule
from ibistatic.site.serverconfs import (
    VirtualHost,
    index_rules,
    nginx_key_limit,
    nginx_string,
    nginx_vhost_text,
    site_prefix,
    static_folders,
)
from url_forms import build_sample_site

M16C = "http://mtc-m16c.sid.inpe.br/col/"
DELETED = "sid.inpe.br/mtc-m19/2011/05.10.18.31"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_sample_site(tmp_path_factory.mktemp("server-config"))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["server-config", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def map_block(text: str, name: str) -> list[str]:
    block = text.split(f"map $request_uri ${name} {{\n", 1)[1].split("\n}", 1)[0]
    return block.splitlines()


def prefix_of(text: str) -> str:
    return re.search(r"geo \$(ibistatic_[0-9a-f]{8})_dollar", text).group(1)


def test_nginx_goes_to_stdout_without_output(site, capsys):
    status, out, err = run(capsys, "nginx", "--site", str(site))
    assert (status, err) == (0, "")
    prefix = prefix_of(out)
    assert not re.search(r"^\s*map_hash_\w+ ", out, re.MULTILINE)  # none set: once per http {}
    for line in (
        "    listen 80;",
        "    server_name 127.0.0.1;",
        f'    root "{site}";',
        "        proxy_pass http://127.0.0.1:8411;",
        f"        if (${prefix}_303) {{ return 303 ${prefix}_303; }}",
        f"    location @{prefix}_gone {{ try_files $uri/index.html =410; }}",
        '    location ^~ "/_ibistatic/" { return 404; }',
        '    location ^~ "/assets/" { try_files $uri $uri/index.html =404; }',
    ):
        assert line in out.splitlines(), line


def test_nginx_maps_hold_the_precomputed_answers_folded(site, capsys):
    out = run(capsys, "nginx", "--site", str(site))[1]
    prefix = prefix_of(out)
    assert (
        f'    "/8jmkd3mgp8w/35mmll8" "{M16C}sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/'
        'CCSDS%20650.0-B-1.pdf";'
    ) in map_block(out, f"{prefix}_302")
    assert (
        '    "/8jmkd3mgp8w/35mmll8:(oai_dc)" '
        '"http://127.0.0.1:8080/metadata/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/oai_dc.xml";'
    ) in map_block(out, f"{prefix}_303")
    assert f'    "/{DELETED}" 1;' in map_block(out, f"{prefix}_410")
    keys = [
        line.split('"')[1]
        for block in ("302", "303", "410")
        for line in map_block(out, f"{prefix}_{block}")
    ]
    assert keys and all(key == key.lower() for key in keys)
    assert len(keys) == len(set(keys))


def test_long_paths_are_left_to_the_resolver_unless_the_bucket_is_bigger(site, capsys):
    rules = index_rules(Index(site))
    long = [rule for rule in rules if len(("/" + rule.path).encode()) > nginx_key_limit(64)]
    assert long  # the sample's repository forms with :(oai_dc)
    out = run(capsys, "nginx", "--site", str(site))[1]
    assert f"# {len({r.path.lower() for r in long})} rules have a path longer than " in out
    assert f'"/{long[0].path.lower()}"' not in out
    bigger = run(capsys, "nginx", "--site", str(site), "--map-bucket-size", "128")[1]
    assert f'"/{long[0].path.lower()}"' in bigger
    assert "# 0 rules have a path longer than map_hash_bucket_size 128 holds" in bigger


@pytest.mark.parametrize("bucket, limit", [(64, 46), (128, 110), (256, 238)])
def test_nginx_key_limit(bucket, limit):
    """ngx_hash_init: 8 + the key + 2 rounded up to 8, plus 8, must fit the bucket."""
    assert nginx_key_limit(bucket) == limit
    assert (8 + limit + 2 + 7) // 8 * 8 + 8 <= bucket < (8 + limit + 1 + 2 + 7) // 8 * 8 + 8


def test_apache_writes_the_vhost_and_its_map_beside_it(site, tmp_path, capsys):
    output = tmp_path / "ibi.conf"
    status, out, err = run(capsys, "apache", "--site", str(site), "--output", str(output))
    assert (status, out) == (0, "")
    map_file = tmp_path / "ibi.rewritemap.txt"
    assert err.splitlines() == [
        f"ibistatic server-config: wrote {map_file}",
        f"ibistatic server-config: wrote {output}",
    ]
    vhost = output.read_text(encoding="utf-8").splitlines()
    assert "<VirtualHost *:80>" in vhost and "    ServerName 127.0.0.1" in vhost
    assert any(line.endswith(f'"txt:{map_file}"') for line in vhost)
    assert "    RewriteRule ^/(.+)$ http://127.0.0.1:8411%1 [P,NE,L]" in vhost
    rules = map_file.read_text(encoding="utf-8").splitlines()
    assert f"410:{DELETED} 1" in rules
    assert (
        f"302:8jmkd3mgp8w/35mmll8 {M16C}sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
        in rules
    )


def test_apache_splits_a_query_out_of_the_map_value(tmp_path, capsys):
    site = build_sample_site(tmp_path / "oai", modifiers=["!:(oai_dc)"])
    output = tmp_path / "ibi.conf"
    assert run(capsys, "apache", "--site", str(site), "--output", str(output))[0] == 0
    rules = (tmp_path / "ibi.rewritemap.txt").read_text(encoding="utf-8").splitlines()
    assert (
        f"303:8jmkd3mgp8w/35mmll8!:(oai_dc) {M16C}sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi"
        in rules
    )
    assert "?:8jmkd3mgp8w/35mmll8!:(oai_dc) choice=oai_dc" in rules


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["apache"],
            "ibistatic server-config: apache: --output FILE is needed (the RewriteMap file is "
            "written beside it)",
        ),
        (
            ["nginx", "--resolver-url", "ftp://h:1"],
            "ibistatic server-config: --resolver-url 'ftp://h:1': expected http://HOST:PORT of "
            "`ibistatic serve`, with no path, e.g. http://127.0.0.1:8411",
        ),
        (
            ["nginx", "--resolver-url", "http://h:1/path"],
            "ibistatic server-config: --resolver-url 'http://h:1/path': expected http://HOST:PORT "
            "of `ibistatic serve`, with no path, e.g. http://127.0.0.1:8411",
        ),
        (
            ["nginx", "--listen", "80; evil"],
            "ibistatic server-config: --listen '80; evil': expected PORT or ADDR:PORT, e.g. "
            "127.0.0.1:8080",
        ),
        (
            ["nginx", "--server-name", "a b"],
            "ibistatic server-config: --server-name 'a b': expected a host name, without spaces "
            "or quotes",
        ),
        (
            ["nginx", "--map-bucket-size", "100"],
            "ibistatic server-config: --map-bucket-size 100: expected a power of two, 32 or more",
        ),
        (
            ["apache", "--map-bucket-size", "128"],
            "ibistatic server-config: --map-bucket-size is nginx's; apache has no such limit",
        ),
    ],
)
def test_bad_usage_exits_2_with_a_message(site, capsys, argv, message):
    status, out, err = run(capsys, argv[0], "--site", str(site), *argv[1:])
    assert (status, out, err.strip()) == (2, "", message)


def test_a_folder_without_an_index_is_named(tmp_path, capsys):
    status, _, err = run(capsys, "nginx", "--site", str(tmp_path))
    assert status != 0
    assert err.startswith(f"ibistatic server-config: {tmp_path}: no index here")


def test_a_site_under_a_path_must_sit_in_a_folder_of_that_name(tmp_path, capsys):
    from site_helpers import build

    wrong = build(tmp_path / "a", site_url="http://h.example/ibi/")
    status, _, err = run(capsys, "nginx", "--site", str(wrong))
    assert status == 2
    assert "the site URL http://h.example/ibi/ serves it under /ibi/" in err
    right = build(tmp_path / "b", site_url="http://h.example/ibi/", output="ibi")
    status, out, _ = run(capsys, "nginx", "--site", str(right), "--map-bucket-size", "128")
    assert status == 0
    assert f'    root "{tmp_path / "b"}";' in out.splitlines()
    assert '    location "/ibi/" {' in out.splitlines()
    assert '    location ^~ "/ibi/assets/" { try_files $uri $uri/index.html =404; }' in out
    assert '    "/ibi/8jmkd3mgp8w/35mmll8" ' in out


def test_the_same_input_gives_the_same_file_and_two_sites_two_prefixes(site, capsys):
    one = run(capsys, "nginx", "--site", str(site))[1]
    assert run(capsys, "nginx", "--site", str(site))[1] == one
    other = run(capsys, "nginx", "--site", str(site), "--listen", "127.0.0.1:8081")[1]
    assert prefix_of(other) != prefix_of(one)
    assert site_prefix("http://a/", Path("/s"), "a", "80") != site_prefix(
        "http://b/", Path("/s"), "a", "80"
    )


def test_static_folders_are_those_that_begin_no_ibi(site):
    assert static_folders(site) == (
        "assets",
        "files",
        "index",
        "metadata",
        "record",
        "search",
    )


@pytest.mark.parametrize(
    "text, variables, expected",
    [
        ("/plain", True, '"/plain"'),
        ('a"b', True, '"a\\"b"'),
        ("a\\b", True, '"a\\\\b"'),
        ("a$b", False, '"a$b"'),
        ("a b é", True, '"a b é"'),
    ],
)
def test_nginx_string(text, variables, expected):
    assert nginx_string(text, variables) == expected


def test_a_dollar_in_a_url_is_never_read_as_a_variable():
    host = VirtualHost(Path("/s"), "/", "80", "h", "http://127.0.0.1:8411", "p", ())
    text = nginx_vhost_text([HostRule("A2B3/C4", 302, "https://t/$uri")], host)
    assert '    "/a2b3/c4" "https://t/${p_dollar}uri";' in text.splitlines()
    assert 'geo $p_dollar { default "$"; }' in text


def test_the_site_folders_are_those_of_a_built_site_that_begin_no_ibi(tmp_path):
    """The site's own folders (site/folders.py, known without listing the index) are
    exactly the top-level folders of a built site, catalog included, that begin no IBI."""
    from ibistatic.site.folders import SITE_FOLDERS
    from site_helpers import build

    site = build(tmp_path / "project")
    (tmp_path / "project" / "ibistatic.yaml").write_text(
        (tmp_path / "project" / "ibistatic.yaml").read_text() + "catalog: true\n"
    )
    from ibistatic.config import load_config
    from ibistatic.site.build import build_site

    build_site(load_config(tmp_path / "project" / "ibistatic.yaml"))
    ibi_starts = {key.split("/")[0].lower() for key, _ in Index(site).entries("answers")}
    folders = {p.name.lower() for p in site.iterdir() if p.is_dir()}
    assert folders - ibi_starts == SITE_FOLDERS  # every one the build writes, no other
    assert not SITE_FOLDERS & ibi_starts
