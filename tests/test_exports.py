"""core.exports: which file an Accept header prefers, the virtual hosts' pattern that
sends such headers to the resolver, and the BibTeX, RIS and CSL-JSON of any Dublin Core
(no value leaves its field).  The engines' answers: tests/negotiation.py."""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.core.exports import (
    EXPORT_NAMES,
    EXPORTS,
    accept_pattern,
    bibtex,
    csl_json,
    negotiate,
    ris,
)
from ibistatic.core.facts import browser_facts
from ibistatic.web.app import ArchiveApp

NEGOTIATED = [
    (None, None),
    ("", None),
    ("*/*", None),
    ("text/html", None),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", None),
    ("application/x-bibtex", "cite.bib"),
    ("APPLICATION/X-BIBTEX", "cite.bib"),
    ("application/x-research-info-systems", "cite.ris"),
    ("application/vnd.citationstyles.csl+json", "csl.json"),
    ("application/ld+json", "record.jsonld"),
    ("application/xml", "oai_dc.xml"),
    ("text/xml", "oai_dc.xml"),
    ("application/x-bibtex;q=0", None),
    ("application/x-bibtex;q=0.5, application/x-research-info-systems;q=0.8", "cite.ris"),
    ("application/x-bibtex, application/x-research-info-systems", "cite.bib"),
    ("text/html;q=0.9, application/ld+json", "record.jsonld"),
    ("application/x-bibtex;q=0.1, text/html", None),
    ("application/x-bibtex, text/html", None),  # a tie keeps the item
    ("application/x-bibtex, */*;q=0.1", "cite.bib"),
    ("text/*;q=0.2, application/x-bibtex;q=0.3", "cite.bib"),
    ("application/x-bibtex;charset=utf-8;q=0.7, text/html;q=0.6", "cite.bib"),
    ("application/x-bibtex; q=2", "cite.bib"),  # a bad q: the parameter is ignored
    ("application/json", None),
    ("garbage, ;;;, /, a/", None),
]


@pytest.mark.parametrize("accept, name", NEGOTIATED)
def test_negotiate(accept, name):
    chosen = negotiate(accept)
    assert (chosen.name if chosen else None) == name


@pytest.mark.parametrize(
    "accept",
    [
        "application/x-bibtex," * 6000,
        "a" * 65536,
        "a/" + "b" * 65536,
        "application/x-bibtex" + ";q=0.5" * 10000,
        " " * 65536 + "application/x-bibtex",
        "application/x-bibtex;q=0.5," + "a/b;q=0.1;x=y," * 4700,
    ],
)
def test_a_hostile_accept_costs_linear_time(accept):
    started = time.perf_counter()
    negotiate(accept)
    re.search(accept_pattern(), accept, re.IGNORECASE)
    assert time.perf_counter() - started < 0.2


def test_only_the_first_ranges_are_read():
    assert negotiate("a/b," * 64 + "application/x-bibtex") is None
    assert negotiate("a/b," * 63 + "application/x-bibtex").name == "cite.bib"


ACCEPT_PIECES = st.sampled_from(
    [t for e in EXPORTS for t in e.accepts]
    + ["text/html", "*/*", "text/*", "application/*", "image/webp", "application/xhtml+xml"]
)
QS = st.sampled_from(["", ";q=0", ";q=0.1", ";q=0.5", ";q=0.9", ";q=1", ";level=1", " ; q=0.8"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(ACCEPT_PIECES, QS), max_size=6))
def test_the_servers_send_every_negotiable_accept_to_the_resolver(pieces):
    """nginx and Apache proxy an Accept that matches accept_pattern() to serve, and
    answer the rest with the redirect: no Accept that prefers an export is kept."""
    accept = ", ".join(kind + q for kind, q in pieces)
    if negotiate(accept) is not None:
        assert re.search(accept_pattern(), accept, re.IGNORECASE), accept


def test_the_worker_reads_the_one_list():
    facts = browser_facts()
    assert [e["name"] for e in facts["exports"]] == list(EXPORT_NAMES)
    assert [e["contentType"] for e in facts["exports"]] == [e.content_type for e in EXPORTS]
    assert [e["accepts"] for e in facts["exports"]] == [list(e.accepts) for e in EXPORTS]


# --- the formats: any value stays inside its field ------------------------------------

VALUES = st.lists(st.text(max_size=300), min_size=1, max_size=3)
DUBLIN_CORE = st.lists(
    st.tuples(
        st.sampled_from(["title", "creator", "date", "publisher", "description", "subject"]),
        VALUES.map(tuple),
    ),
    max_size=8,
).map(tuple)
URL = "https://ibi.example.org/LK47B6W/362SFKH"
#: the title an item without one is shown by: its repository name (never blank)
FALLBACK = st.from_regex(r"[a-z0-9./-]{1,60}", fullmatch=True)


def _one_line(value: str) -> str:
    return " ".join(re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]", "", value).split())


_BIBTEX_FIELD = re.compile(r"  ([a-z]+) = \{(.*)\},")


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


@settings(max_examples=300, deadline=None)
@given(DUBLIN_CORE, FALLBACK)
def test_bibtex_keeps_every_value_in_its_field(dublin_core, title):
    text = bibtex(dublin_core, "LK47B6W/362SFKH", URL, title)
    lines = text.split("\n")
    assert lines[0] == "@misc{LK47B6W/362SFKH," and lines[-2:] == ["}", ""]
    names = []
    for line in lines[1:-2]:
        field = _BIBTEX_FIELD.fullmatch(line)
        assert field, line
        assert _balanced(field.group(2)), line
        # no raw special of TeX: each is a command (\%, \textbraceleft{}...)
        assert not re.search(r"(?<!\\)[%&$#_~^]", field.group(2).replace("\\textbackslash{}", ""))
        names.append(field.group(1))
    assert names[0] == "title" and names[-1] == "url" and len(set(names)) == len(names)


@settings(max_examples=300, deadline=None)
@given(DUBLIN_CORE, FALLBACK)
def test_ris_keeps_every_value_on_its_line(dublin_core, title):
    text = ris(dublin_core, URL, title)
    assert text.endswith("\r\nER  - \r\n")
    lines = text.split("\r\n")[:-1]
    assert lines[0] == "TY  - GEN" and lines[-1] == "ER  - "
    assert all(re.fullmatch(r"[A-Z][A-Z0-9]  - [^\r\n]*", line) for line in lines), lines
    values = [v for key, vs in dublin_core if key == "creator" for v in vs if _one_line(v)]
    assert [line[6:] for line in lines if line.startswith("AU  - ")] == [
        _one_line(v) for v in values
    ]
    assert sum(line.startswith("ER  - ") for line in lines) == 1


@settings(max_examples=300, deadline=None)
@given(DUBLIN_CORE, FALLBACK)
def test_csl_json_is_json_with_the_title(dublin_core, title):
    text = csl_json(dublin_core, "LK47B6W/362SFKH", URL, title)
    (item,) = json.loads(text.encode("utf-8"))
    titles = [_one_line(v) for key, vs in dublin_core if key == "title" for v in vs]
    assert item["title"] == next((t for t in titles if t), title)
    assert item["URL"] == URL and item["type"] == "document"


def test_the_sample_item_as_bibtex():
    dublin_core = (
        ("title", ("Relatório {de} 100% & $x$",)),
        ("creator", ("Banon, Gerald", "Ana Souza")),
        ("date", ("2009-09-09",)),
    )
    assert bibtex(dublin_core, "LK47B6W/362SFKH", URL, "t") == (
        "@misc{LK47B6W/362SFKH,\n"
        "  title = {Relatório \\textbraceleft{}de\\textbraceright{} 100\\% \\& \\$x\\$},\n"
        "  author = {Banon, Gerald and Ana Souza},\n"
        "  year = {2009},\n"
        f"  url = {{{URL}}},\n"
        "}\n"
    )
    (item,) = json.loads(csl_json(dublin_core, "LK47B6W/362SFKH", URL, "t"))
    assert item["author"] == [{"family": "Banon", "given": "Gerald"}, {"literal": "Ana Souza"}]
    assert item["issued"] == {"date-parts": [[2009, 9, 9]]}


@pytest.mark.parametrize(
    "accept", ["application/*", "text/*", "*/*;q=0.5", "application/*, text/*"]
)
def test_a_wildcard_names_no_export(accept):
    assert negotiate(accept) is None


def test_the_build_writes_them_beside_oai_dc_and_the_record_page_links_them(tmp_path):
    from url_forms import build_sample_site

    site = build_sample_site(tmp_path, "default", ("nginx",))
    folders = sorted(path.parent for path in site.glob("metadata/**/oai_dc.xml"))
    assert len(folders) > 5
    for folder in folders:
        assert sorted(path.name for path in folder.iterdir()) == sorted(
            [*EXPORT_NAMES, "index.html"]
        )
        repository = folder.relative_to(site / "metadata").as_posix()
        page = (site / "record" / repository / "index.html").read_text(encoding="utf-8")
        for name in EXPORT_NAMES:
            assert f'href="http://127.0.0.1:8080/metadata/{repository}/{name}"' in page
    # an item without Dublin Core has none, its record page links none, and serve
    # answers its Accept as without one (docs/cli/serve.md)
    bare = "sid.inpe.br/mtc-m18/2012/07.12.18.08.49"
    assert not (site / "metadata" / bare).exists()
    assert "cite.bib" not in (site / "record" / bare / "index.html").read_text()
    app = ArchiveApp(site)
    plain = app.respond("GET", "/" + bare, {})
    assert plain.status == 302
    assert app.respond("GET", "/" + bare, {"accept": "application/x-bibtex"}) == plain


def test_the_worker_negotiates_as_python(tmp_path):
    """_worker.js's negotiate (run by node) against core.exports.negotiate, over the
    table above and a few hundred headers made of the same pieces."""
    import random
    import shutil
    import subprocess

    from ibistatic.site.hosts.cloudflare import worker_script

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed")
    module = tmp_path / "worker.mjs"
    module.write_text(worker_script("/") + "\nexport { negotiate };\n", encoding="utf-8")
    pieces = [t for e in EXPORTS for t in e.accepts] + ["text/html", "*/*", "text/*", "a/b"]
    qs = ["", ";q=0", ";q=0.2", ";q=0.5", ";q=1", ";q=1.5", ";level=1", " ; Q = 0.7", ";q=0.500"]
    chance = random.Random(38)
    headers = [accept for accept, _ in NEGOTIATED] + [
        ", ".join(chance.choice(pieces) + chance.choice(qs) for _ in range(chance.randint(1, 6)))
        for _ in range(400)
    ]
    headers.append("a/b," * 70 + "application/x-bibtex")
    script = (
        f"import({json.dumps(module.as_uri())}).then((m) => {{"
        "const headers = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const names = headers.map((h) => { const e = m.negotiate(h); return e ? e.name : null; });"
        "process.stdout.write(JSON.stringify(names)); });"
    )
    done = subprocess.run(
        [node, "-e", script], input=json.dumps(headers), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    python = [(found.name if (found := negotiate(h)) else None) for h in headers]
    assert json.loads(done.stdout) == python
