"""Netlify, with Netlify's own redirect engine (``@netlify/redirects``, what ``netlify
dev`` runs) over sites built with ``--host netlify``: every rule of ``_redirects`` is
applied, none is shadowed by the page at its path (every rule is forced), each answers
what ``ibistatic resolve`` answers, and deleted items answer 410 with ``404.html``.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import pytest

from host_engines import NETLIFY_ENGINE, expected, missing, netlify_answers, netlify_server
from ibistatic.config import load_config
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from site_helpers import write_config
from url_forms import SITE_URL, write_synthetic_archives

SAMPLE = Path(__file__).resolve().parent.parent / "ibistatic" / "sample_archive"
WHY = missing(NETLIFY_ENGINE)
GENERATED_ITEMS = 300
#: forms check-deployment asks (a seeded spread over every kind): every form of the
#: sample and the synthetic site, a share of the generated items' tens of thousands
SAMPLED = 2000
MODIFIERS = ["", "!", ":", ":(oai_dc)", "!:(oai_dc)", "+(pt)", "+(en)"]


@pytest.fixture(scope="module", params=["sample", "synthetic", "generated"])
def site(request, tmp_path_factory) -> Path:
    """The sample; url_forms' hard cases; 300 items of benchmarks/make_archive.py."""
    if WHY:
        pytest.skip(WHY)
    work = tmp_path_factory.mktemp(f"netlify-{request.param}")
    if request.param == "sample":
        archives = (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d")
    elif request.param == "synthetic":
        archives = write_synthetic_archives(work / "archives")
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
        from make_archive import make_project

        project = make_project(work / "project", GENERATED_ITEMS)
        archives = (project / "archive-a", project / "archive-b")
    config = load_config(write_config(work, archives, site_url=SITE_URL, modifiers=MODIFIERS))
    build_site(replace(config, hosts=("netlify",)))
    return config.output


def lines(site: Path) -> list[tuple[str, ...]]:
    return [
        tuple(line.split(" "))
        for line in (site / "_redirects").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]


def rules(site: Path) -> list[tuple[str, str, str]]:
    """The rules of persistent URLs: path, target, status (not the query rules)."""
    return [line for line in lines(site) if len(line) == 3]


@pytest.fixture(scope="module")
def answered(site) -> dict[str, dict]:
    return {answer["path"]: answer for answer in netlify_answers(site, [r[0] for r in rules(site)])}


def test_every_rule_is_applied_and_none_is_shadowed(site, answered):
    listed = rules(site)
    assert len(listed) > 30
    with_page = 0
    for path, target, status in listed:
        answer = answered[path]
        assert answer["matched"] and answer["force"], answer
        assert answer["ruleStatus"] == int(status.rstrip("!")), answer
        with_page += answer["page"]
        if answer["ruleStatus"] != 410:  # the rule wins over the page at its path
            assert (answer["status"], answer["location"]) == (answer["ruleStatus"], target), answer
    # the written spellings have pages (not the lower-case, /ibi/ and /rep/ ones): forced wins
    assert with_page >= len(listed) // 5


def test_every_rule_answers_what_resolve_answers(site, answered):
    resolver = Resolver(site / "index")
    for path, target, status in rules(site):
        answer = answered[path]
        wanted = expected(resolver, path[1:])
        if wanted[0] == 410:
            assert (answer["ruleStatus"], answer["target"]) == (410, "/404.html"), answer
        else:
            assert (answer["status"], answer["location"]) == wanted, path


def test_deleted_items_answer_410_with_the_404_page(site, answered):
    gone = [path for path, _, status in rules(site) if status == "410!"]
    assert gone
    for path in gone:
        assert answered[path]["ruleStatus"] == 410
        assert answered[path]["status"] == 200  # the engine's body: 404.html, which exists
    assert (site / "404.html").is_file()


def test_a_query_the_resolver_reads_gets_the_page_at_the_path(site):
    """Netlify passes a query on to a rule's target: the query rules, first, leave such
    URLs to the page at the path (or 404.html), whose script resolves the query."""
    assert [line for line in lines(site) if len(line) == 4] == lines(site)[:2]
    asked = [path + "?ibiurl.verblist=GetFileList" for path, _, _ in rules(site)]
    for answer in netlify_answers(site, asked):
        assert (answer["ruleStatus"], answer["force"]) == (200, True), answer
        assert answer["status"] == (200 if answer["page"] else None), answer  # None: 404.html


def test_rules_name_no_path_twice(site):
    paths = [unquote(path) for path, _, _ in rules(site)]
    assert len(paths) == len(set(paths))


def test_check_deployment_finds_every_rule_answered(site):
    listed = {unquote(path) for path, _, _ in rules(site)}
    with netlify_server(site) as port:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "ibistatic",
                "check-deployment",
                f"http://127.0.0.1:{port}/",
                "--index",
                str(site),
                "--sample",
                str(SAMPLED),
                "--concurrency",
                "8",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    report = result.stdout.splitlines()
    asked = min(SAMPLED, len(url_table_of(site)))  # all of the sample's and synthetic's
    assert report[-1].startswith(f"{asked} persistent URL forms asked"), report[-1]
    differing = [
        unquote(line.split(" ", 1)[1].split(f":{port}", 1)[1].split(" (Accept")[0])
        for line in report
        if line.startswith("DIFFERS ")
    ]
    # forms with no rule (other spellings, file paths, queries) get the pages' answers:
    # right in a browser, not for curl (docs/hosting.md); every listed one is answered
    assert result.returncode == 1 and differing
    assert [path for path in differing if path in listed] == []


def url_table_of(site: Path) -> list:
    from ibistatic.deploycheck import url_forms

    return url_forms(Resolver(site).index)


def test_emitted_alerts_are_left_to_the_404_page(site):
    """A host profile writes no alert page (alert-pages by hosts): an emitted URL answered
    with an alert other than deleted has neither a rule nor a page in Netlify's engine,
    so Netlify answers it 404 with 404.html, whose resolver shows the alert."""
    resolver = Resolver(site / "index")
    forms = [f for f in url_table_of(site) if f.kind == "precomputed"]
    alerts = [f.target for f in forms if expected(resolver, f.target)[0] in (404, 409)]
    assert alerts  # every site here has items without metadata, asked with ':'
    for answer in netlify_answers(site, ["/" + target for target in alerts]):
        assert (answer["matched"], answer["page"]) == (False, False), answer
