"""The pure part of check-deployment (ibistatic.deploycheck) and the shared URL table
(tests/url_forms.py): which forms are asked, what each must get, sampling, the report."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from ibistatic.deploycheck import (
    FORM_KINDS,
    Answer,
    Checked,
    UrlForm,
    expected_answer,
    report_lines,
    sample_forms,
    url_forms,
)
from ibistatic.resolver import Resolver
from url_forms import EXTRA, build_sample_site, build_synthetic_site, url_table


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory):
    return build_sample_site(tmp_path_factory.mktemp("deploycheck-sample"))


@pytest.fixture(scope="module")
def synthetic_site(tmp_path_factory):
    return build_synthetic_site(tmp_path_factory.mktemp("deploycheck-synthetic"))


@pytest.fixture(scope="module")
def sample_table(sample_site):
    return url_table(sample_site)


@pytest.fixture(scope="module")
def synthetic_table(synthetic_site):
    return url_table(synthetic_site)


def test_the_tables_hold_every_kind_and_every_status(sample_table, synthetic_table):
    for table in (sample_table, synthetic_table):
        assert {case.kind for case in table} == set(FORM_KINDS)
    statuses = Counter(case.status for case in sample_table + synthetic_table)
    assert set(statuses) == {302, 303, 404, 409, 410}


def test_each_form_is_asked_once(sample_table):
    keys = [(case.target, case.accept_language) for case in sample_table]
    assert len(keys) == len(set(keys))


def test_the_readme_example_is_in_the_table_with_its_answer(sample_table):
    case = next(c for c in sample_table if c.target == "8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    assert (case.kind, case.status, case.location) == (
        "precomputed",  # one of the default forms: every host's rules and pages have it
        303,
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/"
        "metadata.cgi?choice=oai_dc",
    )


def test_every_hand_written_form_is_in_the_sample_table(sample_table):
    keys = {(case.target, case.accept_language) for case in sample_table}
    assert [form for form in EXTRA if (form.target, form.accept_language) not in keys] == []


@pytest.mark.parametrize(
    "target, language, answer",
    [
        # a file path keeps its escapes in the Location
        (
            "J8LNKB5R7W/3ABCDE/100%25%20sure%20&%20x=y.txt",
            None,
            Answer(
                302,
                "http://synth-a.example.org/col/example.org/synth/2020/01.01.00.00/doc/"
                "100%25%20sure%20&%20x=y.txt",
            ),
        ),
        # lower-case hex is the same URL
        (
            "J8LNKB5R7W/3ABCDE/r%c3%a9sum%c3%a9%20%c3%bc.txt",
            None,
            Answer(
                302,
                "http://synth-a.example.org/col/example.org/synth/2020/01.01.00.00/doc/"
                "r%C3%A9sum%C3%A9%20%C3%BC.txt",
            ),
        ),
        ("example.org/synth/2020/02.02.00.00", None, Answer(410, None)),
        (
            "example.org/synth/2020/03.03.00.00?ibiurl.requireditemstatus=Original",
            None,
            Answer(409, None),
        ),
        (
            "J8LNKB5R7W/3ABCDE+",
            "es",
            Answer(
                302,
                "http://synth-a.example.org/col/example.org/synth/2020/01.01.00.02/doc/document.txt",
            ),
        ),
        (
            "J8LNKB5R7W/3ABCDE:(oai_dc)",
            None,
            Answer(
                303,
                "http://synth-a.example.org/col/example.org/synth/2020/01.01.00.09/doc/oai%20dc+1.xml",
            ),
        ),
        ("J8LNKB5R7W/2222222", None, Answer(404, None)),
    ],
)
def test_synthetic_answers(synthetic_table, target, language, answer):
    case = next(c for c in synthetic_table if (c.target, c.accept_language) == (target, language))
    assert (case.status, case.location) == answer


def test_unknown_ibis_are_not_held(synthetic_site):
    resolver = Resolver(synthetic_site)
    unknown = [form for form in url_forms(resolver.index) if form.kind == "unknown"]
    assert unknown
    for form in unknown:
        assert resolver.resolve(resolver.index.site_url + form.target).alert == "not-found"


def test_something_that_is_no_persistent_url_expects_400(sample_site):
    assert expected_answer(Resolver(sample_site), UrlForm("x", "no/such/thing")) == Answer(
        400, None
    )


def test_a_sample_spreads_over_the_kinds_and_is_reproducible(sample_site):
    forms = url_forms(Resolver(sample_site).index)
    chosen = sample_forms(forms, len(FORM_KINDS) * 2)
    assert Counter(form.kind for form in chosen) == Counter(
        {kind: 2 for kind in FORM_KINDS if kind != "deleted"} | {"deleted": 1, "precomputed": 3}
    )
    assert sample_forms(forms, 18) == chosen
    assert sample_forms(forms, 18, seed=1) != chosen
    assert sample_forms(forms, None) == forms
    assert sample_forms(forms, 10**6) == forms


def test_the_report_names_each_difference_and_counts_per_kind():
    good = Checked(
        UrlForm("precomputed", "A/B"), Answer(302, "http://x/"), Answer(302, "http://x/")
    )
    bad = Checked(UrlForm("file", "A/B/f%20g", "pt"), Answer(302, "http://x/f"), Answer(404, None))
    gone = Checked(UrlForm("deleted", "C/D"), Answer(410, None), "timed out")
    lines = report_lines("http://h/", [good, bad, gone])
    assert lines == [
        "DIFFERS http://h/A/B/f%20g (Accept-Language: pt)",
        "    expected 302 http://x/f",
        "    got      404",
        "DIFFERS http://h/C/D",
        "    expected 410",
        "    got      timed out",
        "kind          asked differ",
        "precomputed       1      0",
        "file              1      1",
        "deleted           1      1",
        "3 persistent URL forms asked of http://h/: 2 differ",
    ]
    assert report_lines("http://h/", [good])[-1] == (
        "1 persistent URL forms asked of http://h/: all match"
    )


def check(capsys, *argv: str) -> tuple[int, list[str], str]:
    from ibistatic.cli import main

    status = main(["check-deployment", *argv])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def serve_url(synthetic_site):
    """`ibistatic serve` over the synthetic site: a deployment that answers every form."""
    import threading

    from ibistatic.serve import make_server

    server = make_server(synthetic_site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_check_deployment_of_serve_matches_everywhere(synthetic_site, serve_url, capsys):
    status, lines, err = check(capsys, serve_url, "--index", str(synthetic_site), "--sample", "all")
    every = len(url_forms(Resolver(synthetic_site).index))
    assert (status, err) == (0, "")
    assert lines[-1] == f"{every} persistent URL forms asked of {serve_url}: all match"
    assert lines[0] == "kind          asked differ"


def test_check_deployment_against_another_index_names_the_differences(
    sample_site, serve_url, capsys
):
    status, lines, _ = check(capsys, serve_url, "--index", str(sample_site), "--sample", "50")
    assert status == 1
    assert any(line.startswith(f"DIFFERS {serve_url}") for line in lines)
    assert lines[-1].startswith(f"50 persistent URL forms asked of {serve_url}: ")
    assert lines[-1].endswith(" differ")


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["ftp://h/"],
            "ibistatic check-deployment: 'ftp://h/': expected the deployment's site URL, e.g. "
            "https://ibi.example.org/",
        ),
        (
            ["http://h/", "--concurrency", "0"],
            "ibistatic check-deployment: --concurrency 0: expected 1 to 32",
        ),
        (
            ["http://h/", "--timeout", "0"],
            "ibistatic check-deployment: --timeout 0.0: expected a number of seconds above 0",
        ),
    ],
)
def test_check_deployment_bad_usage_exits_2(sample_site, capsys, argv, message):
    status, lines, err = check(capsys, *argv, "--index", str(sample_site))
    assert (status, lines, err.strip()) == (2, [], message)


def test_check_deployment_sample_must_be_positive_or_all(capsys):
    with pytest.raises(SystemExit) as exit_info:
        check(capsys, "http://h/", "--sample", "0")
    assert exit_info.value.code == 2
    assert "argument --sample: expected a positive number or 'all', not '0'" in (
        capsys.readouterr().err
    )


def test_an_unreachable_deployment_exits_2(sample_site, capsys):
    base = f"http://127.0.0.1:{free_port()}/"
    status, lines, err = check(capsys, base, "--index", str(sample_site), "--timeout", "2")
    assert (status, lines) == (2, [])
    assert err.startswith(f"ibistatic check-deployment: {base}: unreachable (no answer: ")


# --- --host: a static host judged by what it can do (issue 38) ---------------------------


@pytest.fixture(scope="module")
def pages_site(tmp_path_factory):
    """The sample built for GitHub Pages, copied so that a test may break it."""
    from dataclasses import replace

    from ibistatic.config import load_config
    from ibistatic.site.build import build_site
    from site_helpers import SAMPLE, write_config

    folder = tmp_path_factory.mktemp("pages")
    config = load_config(write_config(folder, [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"]))
    build_site(replace(config, hosts=("github-pages",)))
    return config.output.resolve()


def _static_host(site):
    from site_helpers import SiteServer

    return SiteServer(site).running()


def test_a_static_host_is_judged_by_what_it_can_do(pages_site, capsys):
    """GitHub Pages-like (files, a 301 to add the slash, 404.html): as a server most forms
    differ; as the host it is, every form is right, the pages' targets checked."""
    with _static_host(pages_site) as host:
        url = f"http://127.0.0.1:{host.port}/"
        status, lines, _ = check(capsys, url, "--index", str(pages_site), "--sample", "300")
        assert status == 1 and lines[-1].endswith(" differ")
        status, lines, err = check(
            capsys, url, "--index", str(pages_site), "--sample", "all", "--host", "github-pages"
        )
    assert (status, err) == (0, ""), lines[-20:]
    assert lines[0] == "kind          asked differ browser"
    assert re.fullmatch(
        rf"\d+ persistent URL forms asked of {re.escape(url)}: all match \(\d+ left to the "
        r"browser's resolver, as the host can do no more\)",
        lines[-1],
    )
    precomputed = next(line for line in lines if line.startswith("precomputed"))
    asked, differ, browser = map(int, precomputed.split()[1:])
    assert differ == 0 and browser < asked / 4  # most pages' targets checked here


def test_a_static_host_serving_a_wrong_page_or_no_404_page_differs(pages_site, tmp_path, capsys):
    import shutil

    broken = tmp_path / "site"
    shutil.copytree(pages_site, broken)
    page = broken / "8JMKD3MGP8W/35MMLL8/index.html"
    page.write_text(
        page.read_text().replace(
            'rel="canonical" href="', 'rel="canonical" href="http://elsewhere/'
        )
    )
    (broken / "404.html").write_text("<!DOCTYPE html><title>Not found</title>\n")
    with _static_host(broken) as host:
        url = f"http://127.0.0.1:{host.port}/"
        argv = ("--sample", "all", "--host", "github-pages")
        status, lines, _ = check(capsys, url, "--index", str(broken), *argv)
        assert status == 1
        text = "\n".join(lines)
        assert f"DIFFERS {url}8JMKD3MGP8W/35MMLL8\n" in text
        assert "(a page leading to http://elsewhere/" in text  # its own page, a wrong target
        status, lines, _ = check(capsys, url, "--index", str(pages_site), *argv)
    assert status == 1
    text = "\n".join(lines)
    assert (
        "(a page other than the build's)" in text and "(a 404 without the site's 404.html)" in text
    )


def test_an_unknown_host_profile_is_refused(pages_site, capsys):
    status, _, err = check(capsys, "http://h/", "--index", str(pages_site), "--host", "geocities")
    assert status == 2 and "--host 'geocities': expected one of " in err
