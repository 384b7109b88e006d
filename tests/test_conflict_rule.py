"""The conflict rule of resolution-system §6.2, everywhere an answer is computed.

"Se a variável parsedibiurl.requireditemstatus existir ... emitirá um alerta informando
que existem dois ou mais Arquivos sob suspeita ... Em todos os outros casos, o resolvedor
seleciona a primeira resposta não vazia que satisfaz a mensagem": two Archives claiming
the original alert only when the original is asked for; a plain request takes the first
Archive's answer.  The build still reports the double claim.

And "a primeira resposta ... que satisfaz": the first answer that gives the URL or an IBI
to follow decides, even when a later Archive's answer has the URL directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives
from ibistatic.config import load_config
from ibistatic.core.identifiers import ibi_key
from ibistatic.core.relations import parse_verb_list
from ibistatic.core.resolution import resolve
from ibistatic.index.reader import Index
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from node_resolver import NODE, node_resolve
from site_helpers import write_config

SITE_URL = "http://ibi.example.org/"
REP = "example.org/rep/2020/01.02.03.04"
A_URL = "http://a.example.org/col/example.org/rep/2020/01.02.03.04/doc/a.txt"
B_URL = "http://b.example.org/col/example.org/rep/2020/01.02.03.04/doc/b.txt"


def two_claims(root: Path) -> list[Path]:
    """Archives a and b both claim the original of REP (each with its own file)."""
    a = write_archive(root / "a", "a.example.org", "example.org/service/2020/01.01.00.00")
    b = write_archive(root / "b", "b.example.org", "example.org/service/2020/01.01.00.01")
    write_item(a, REP, files={"a.txt": "a"}, state="Original")
    write_item(b, REP, files={"b.txt": "b"}, state="Original")
    return [a, b]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("claims")
    config = load_config(write_config(root, two_claims(root / "archives"), site_url=SITE_URL))
    report = build_site(config)
    return config.output, report


def test_plain_request_takes_the_first_archive_and_original_alerts(tmp_path):
    views = load_archives(two_claims(tmp_path), SITE_URL).views()
    plain = resolve(views, REP)
    assert (plain.url, plain.alert, plain.archive, plain.state) == (A_URL, None, "a", "Original")
    asked = resolve(views, REP, required_status="Original")
    assert (asked.url, asked.alert, asked.ibi) == (None, "conflict", REP)
    assert (
        asked.message
        == "two or more Archives claim the original: they are under suspicion; an investigation is needed"
    )
    # the order of the configuration decides, not the claim
    assert resolve(list(reversed(views)), REP).url == B_URL


def test_build_still_reports_the_double_claim(built):
    _, report = built
    lines = [str(p) for p in report.problems]
    assert any(
        "state" in line and "also claimed by" in line and "under suspicion" in line
        for line in lines
    ), lines


def test_precomputed_answers_and_resolver_follow_the_rule(built):
    site, _ = built
    index = Index(site / "index")
    rows = index.answers(ibi_key(REP))
    assert rows[""][0:2] == [A_URL, None]
    assert rows["!"][0:2] == [A_URL, None]
    resolver = Resolver(site / "index")
    assert resolver.resolve(REP).url == A_URL
    assert resolver.resolve(REP + "?ibiurl.requireditemstatus=Original").alert == "conflict"


def test_host_files_redirect_plain_requests(built):
    site, _ = built
    redirects = (site / "_redirects").read_text(encoding="utf-8").splitlines()
    assert f"/{REP} {A_URL} 302" in redirects
    from ibistatic.index.reader import Index
    from ibistatic.site.serverconfs import index_rules

    urls = {rule.url for rule in index_rules(Index(site))}  # nginx's and Apache's rules
    assert A_URL in urls and B_URL not in urls


def test_plain_page_redirects_instead_of_alerting(built):
    site, _ = built
    page = (site / REP / "index.html").read_text(encoding="utf-8")
    assert A_URL in page
    assert 'data-alert="conflict"' not in page


def test_first_satisfying_answer_is_followed_before_a_later_url(tmp_path):
    """The first Archive's Original gives only the IBI of its metadata; a later Archive's
    Copy holds that metadata too.  §6.2: the selected answer's IBI is followed."""
    a = write_archive(tmp_path / "a", "a.example.org", "example.org/service/2020/01.01.00.00")
    b = write_archive(tmp_path / "b", "b.example.org", "example.org/service/2020/01.01.00.01")
    meta = "example.org/rep/2020/01.02.03.05"
    write_item(a, REP, files={"a.txt": "a"}, state="Original", metadata=meta)
    write_item(b, REP, files={"b.txt": "b"}, state="Copy", metadata=meta)
    write_item(b, meta, files={"m.html": "m"}, state="Original", content_type="Metadata")
    views = load_archives([a, b], SITE_URL).views()
    result = resolve(views, REP, parse_verb_list("GetMetadata"))
    # the URL comes from b, but reached by following a's ibi.metadata (two hops)
    assert result.chain == (REP, meta)
    assert result.url == "http://b.example.org/col/example.org/rep/2020/01.02.03.05/doc/m.html"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_browser_resolver_follows_the_rule(built):
    site, _ = built
    requests = [REP, REP + "!", REP + "?ibiurl.requireditemstatus=Original"]
    plain, last, original = node_resolve(site, requests)
    assert (plain["url"], plain["alert"], plain["archive"]) == (A_URL, None, "a")
    assert (last["url"], last["alert"]) == (A_URL, None)
    assert (original["url"], original["alert"]) == (None, "conflict")
