"""The browser resolver gives Python's answers and Python's error messages, exactly.

node runs the site's own ``assets/resolve.js`` (with the ``assets/facts.js`` the build
generated) over more than 10,000 generated requests, in one process, against the
built sample and a synthetic site made to disagree with itself (conflicts, loops,
copies without an original, deleted items, translations, editions, metadata items,
inline Dublin Core, a declared relation subset).  For every request the answer (url,
alert, archive, state, ibi, chain, message) or the syntax error (the whole message the
command line prints, with its caret and hint, and the position) must equal what
``ibistatic.resolver.Resolver`` gives.
"""

from __future__ import annotations

import random
import re

import pytest

from archive_factory import write_archive, write_item
from ibistatic.core.facts import COUNTRIES, LANGUAGES, URL_SHAPES, browser_facts
from ibistatic.core.relations import compositions, modifier_text
from ibistatic.errors import IbiSyntaxError
from ibistatic.resolver import Resolver
from ibistatic.site.assets import facts_script
from node_resolver import NODE, node_answers
from site_helpers import build

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node is not installed (scripts/test.sh installs it)"
)

REP = "example.org/rep/2020/01.02.03."
LANGUAGE_LISTS = (
    [],
    ["pt-BR"],
    ["pt", "en"],
    ["en"],
    ["fr", "de"],
    ["pt-PT"],
    ["*", "pt"],
    ["EN-us", "pt-br"],
)
MODIFIERS = [modifier_text(r) for r in compositions(["en", "pt", "pt-BR"], ["oai_dc"])]
QUERIES = [
    "?ibiurl.verblist=GetFileList",
    "?ibiurl.requireditemstatus=Original",
    "?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
    "?ibiurl.verblist=GetTranslation(pt)",
    "?ibiurl.verblist=GetMetadata%20GetTranslation",
    "?a=b&ibiurl.verblist=GetLastEdition",
    "?ibiurl.requireditemstatus=Original&ibiurl.verblist=GetFileList",
    "?x=%C3%A9&y=",
    # malformed
    "?ibiurl.requireditemstatus=original",
    "?ibiurl.requireditemstatus=Orig",
    "?ibiurl.requireditemstatus=Originals",
    "?ibiurl.verblist=GetMetadata+GetLastEdition",
    "?ibiurl.verblist=GetFoo",
    "?ibiurl.verblist=GetTranslation(xx)",
    "?ibiurl.verblist=GetFileList&ibiurl.verblist=GetFileList",
    "?=x",
    "?a",
    "?a=b=c",
    "?a=%zz",
    "?a=b c",
    "?ibiurl.verblist=GetTranslation(pt-XX)",
    "?ibiurl.verblist=GetMetadata(foo)",
    "?ibiurl.verblist=GetLastEdition,",
]
BAD_MODIFIERS = [
    "!!",
    "::",
    "+(xx)",
    "+(pt-XX)",
    "+(PT)",
    "+(pt",
    ":(foo)",
    ":(oai_dc",
    "!(",
    "+(p)",
    "+(pt-B)",
    ":!",
    ":+:",
    "+!+",
    "!+!",
    "+()",
    "+(pt-br)",
    "*",
    ":(OAI_DC)",
]
#: requests drawn per site from all those generated (two sites: over 10,000 in all)
CASES_PER_SITE = 6000
NOISE = "Z#%\t \"'<>é/?.:!+()-@_~xX0W"


@pytest.fixture(scope="module")
def synthetic_site(tmp_path_factory):
    """Archives that disagree: every alert, followed relations and a declared subset."""
    root = tmp_path_factory.mktemp("parity")
    a = write_archive(root / "a", "a.example.org", "example.org/service/2020/01.01.00.00")
    b = write_archive(
        root / "b",
        "b.example.org",
        "example.org/service/2020/01.01.00.01",
        relations=["", ".metadata", ".metadata(oai_dc)", ".translation(pt)", ".lastedition"],
    )
    files = {"document.txt": "d", "sub/ação.pdf": "%PDF"}
    for archive in (a, b):
        write_item(archive, REP + "04", state="Original")  # conflict
    write_item(
        a, REP + "05", files, state="Original", next_edition=REP + "06", target="document.txt"
    )  # loop
    write_item(a, REP + "06", state="Original", next_edition=REP + "05")
    write_item(b, REP + "07", state="Copy", ibip="8JMKD3MGP8W/35AAAAA")  # no original anywhere
    write_item(a, REP + "08", state="Deleted", files={})
    write_item(b, REP + "16", state="Deleted", files={})  # deleted everywhere
    write_item(b, REP + "08", state="Copy")
    write_item(
        a,
        REP + "09",
        files,
        state="Original",
        language="en",
        translations={"pt": REP + "10"},
        metadata=REP + "11",
        next_edition=REP + "12",
        ibip="8JMKD3MGP8W/35BBBBB",
    )
    write_item(
        b,
        REP + "09",
        state="Copy",
        language="en",
        translations={"pt": REP + "10"},
        metadata=REP + "11",
        next_edition=REP + "12",
    )
    write_item(
        a,
        REP + "10",
        files,
        state="Original",
        language="pt",
        translations={"en": REP + "09"},
        target="document.txt",
    )
    write_item(
        b,
        REP + "11",
        state="Original",
        content_type="Metadata",
        files={"m.html": "m", "dc.xml": "<x/>"},
        target="m.html",
        formats={"oai_dc": "dc.xml"},
    )
    write_item(
        b,
        REP + "12",
        state="Original",
        language="en",
        dublin_core={"title": "twelve"},
        translations={"pt-BR": REP + "13"},
    )
    write_item(
        a,
        REP + "13",
        state="Original",
        language="pt-BR",
        translations={"en": REP + "12"},
        next_edition=REP + "14",
    )
    write_item(
        a,
        REP + "15",
        files,
        state="Original",
        dublin_core={"title": "no language"},
        target="sub/ação.pdf",
    )
    return build(root / "build", archives=[a, b], modifiers="all")  # "+" pages too


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory):
    return build(tmp_path_factory.mktemp("parity-sample"))


def _held(site) -> list[tuple[str, list[str]]]:
    """(IBI as stored, file names) of every key of the site's index."""
    import json

    held = []
    for shard in sorted((site / "index" / "shards").glob("*.json")):
        for key, records in json.loads(shard.read_text("utf-8")).items():
            files = sorted({name for record in records for name in record.get("files", [])})
            held.append((key, files))
    return sorted(held)


def _spellings(ibi: str, rng: random.Random) -> list[str]:
    mixed = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in ibi)
    return [ibi, ibi.lower(), ibi.upper(), mixed]


def _paths(files: list[str]) -> list[str]:
    from urllib.parse import quote

    return ["/" + quote(name, safe="/") for name in files] + [
        "/missing.txt",
        "/",
        "/./x",
        "/a/../b",
        "/a%2",
        "/a%00b",
        "/%C3",
        "/é",
        "/a b",
        "/a#frag",
        "/a%2Fb",
    ]


def _valid(held, rng: random.Random) -> list[str]:
    requests = []
    for ibi, files in held:
        for spelling in _spellings(ibi, rng):
            requests += [spelling + modifier for modifier in MODIFIERS]
            requests += [shape + spelling for shape in URL_SHAPES] + [
                f"col/{spelling}/doc/x.txt",
                f"col/{spelling}/do/x",
            ]
            requests += [spelling + path for path in _paths(files)]
            requests += [spelling + rng.choice(MODIFIERS) + query for query in QUERIES]
            requests += [spelling + bad for bad in BAD_MODIFIERS]
    return requests


def _malformed(valid: list[str], rng: random.Random, count: int) -> list[str]:
    """Bad characters at every kind of position, truncations, insertions."""
    out = []
    for _ in range(count):
        text = rng.choice(valid)
        at = rng.randrange(len(text) + 1)
        kind = rng.randrange(3)
        if kind == 0:
            out.append(text[:at] + rng.choice(NOISE) + text[at + 1 :])
        elif kind == 1:
            out.append(text[:at])
        else:
            out.append(text[:at] + rng.choice(NOISE) + text[at:])
    return out


def _cases(site, seed: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    valid = _valid(_held(site), rng)
    others = [
        "10.1000/xyz",
        "doi:10.1000/xyz",
        "sid.inpe.br/mtc-m21d/2022/07.20.15.45-NTC",
        "foo/8JMKD3MGP8W/35AAAAA",
        "IBI: <8JMKD3MGP8W/35AAAAA>",
        "http://ibi.example.org/8JMKD3MGP8W/35AAAAA",
        "http:/x",
        "",
        "/",
        "8JMKD3MGP8W/",
        "8JMKD3MGP8W",
        "rep/8JMKD3MGP7W",
        "LK47B6W/362SFKH",
        "sid.inpe.br/mtc-m16c/2010/10.15.17.4Z",
    ]
    generated = valid + _malformed(valid, rng, len(valid) // 2)
    requests = rng.sample(generated, min(CASES_PER_SITE, len(generated))) + others
    return [(request, rng.choice(LANGUAGE_LISTS)) for request in requests]


def _python(resolver: Resolver, request: str, languages: list[str]) -> dict:
    try:
        r = resolver.resolve(request, ", ".join(languages) or None)
    except IbiSyntaxError as error:
        return {"error": str(error), "position": error.position, "expected": error.expected}
    return {
        "url": r.url,
        "alert": r.alert,
        "archive": r.archive,
        "state": r.state,
        "ibi": r.ibi,
        "chain": list(r.chain),
        "message": r.message,
    }


def _browser_languages(languages: list[str]) -> list[str]:
    """What resolve.js's browserLanguages() gives for navigator.languages: no "*"."""
    return [tag for tag in languages if tag and tag != "*"]


def _differences(site, cases):
    resolver = Resolver(site)
    answers = node_answers(site, [(request, _browser_languages(langs)) for request, langs in cases])
    assert len(answers) == len(cases)
    python = [_python(resolver, request, langs) for request, langs in cases]
    different = [(case, js, py) for case, js, py in zip(cases, answers, python) if js != py]
    return python, different


@pytest.mark.parametrize("which", ["sample", "synthetic"])
def test_the_browser_resolver_answers_as_python_does(which, request):
    site = request.getfixturevalue(f"{which}_site")
    cases = _cases(site, seed=7)
    python, different = _differences(site, cases)
    assert different[:5] == []
    # the requests cover what they claim to: redirects, alerts and errors of many kinds
    errors = {answer["expected"] for answer in python if "error" in answer}
    alerts = {answer["alert"] for answer in python if "error" not in answer}
    assert len(errors) >= 30, sorted(errors)
    assert None in alerts and "unavailable" in alerts
    if which == "synthetic":
        assert {"conflict", "loop", "no-original", "deleted", "not-found"} <= alerts
    assert sum(1 for answer in python if answer.get("url")) >= 200


def test_over_ten_thousand_requests_are_compared(sample_site, synthetic_site):
    assert len(_cases(sample_site, seed=7)) + len(_cases(synthetic_site, seed=7)) >= 10_000


def test_the_browser_gets_its_tables_from_the_build(sample_site):
    """facts.js is core/facts.py's, and resolve.js holds no copy of a table."""
    assert (sample_site / "assets" / "facts.js").read_text("utf-8") == facts_script()
    import json

    script = facts_script()
    facts = json.loads(
        script[script.index("var facts = ") + 12 : script.index(";\n  root.ibistaticFacts")]
    )
    assert facts == browser_facts()
    assert set(facts["languages"]) == LANGUAGES and set(facts["countries"]) == COUNTRIES
    source = (sample_site / "assets" / "resolve.js").read_text("utf-8")
    for copied in (
        "oai_dc",
        "GetLastEdition",
        "ibiurl.",
        "no Archive holds",
        "Not found",
        " pt-BR",
        "rep-/",
    ):
        assert copied not in source, copied
    assert re.search(r'"(?:aa|AD) ', source) is None  # no language or country list


PAGE_SCRIPT = r"""
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const [site, page] = process.argv.slice(1);
const html = fs.readFileSync(page, "utf8");
// the page's code is the shared asset it names (no inline script)
const shared = html.match(/<script src="\/(assets\/target-[0-9a-f]+\.js)"><\/script>/)[1];
const script = fs.readFileSync(path.join(site, shared), "utf8");
const data = html.match(/id="ibistatic-target">(.*?)<\/script>/)[1];
const out = [];
for (const languages of JSON.parse(fs.readFileSync(0, "utf8"))) {
  const loads = [];
  let landed = null;
  const elements = {
    "ibistatic-target": { textContent: data }, "ibistatic": { setAttribute() {} }, "ibistatic-message": {},
  };
  const context = {
    TextEncoder, TextDecoder, navigator: { languages: languages, language: languages[0] || "" },
    location: { search: "", pathname: "/page/", hash: "", replace(url) { landed = url; } },
    document: {
      getElementById(id) { return elements[id] || null; },
      createElement() { return {}; },
      head: { appendChild(element) { loads.push(element); } },
    },
  };
  context.window = context;
  vm.createContext(context);
  vm.runInContext(script, context);
  for (const element of loads) {  // in order, as async = false asks
    vm.runInContext(fs.readFileSync(path.join(site, element.src), "utf8"), context);
    element.onload();
  }
  out.push({ url: landed, loaded: loads.map(function (e) { return e.src; }) });
}
process.stdout.write(JSON.stringify(out));
"""


def test_a_plus_page_picks_its_translation_with_the_resolvers_matching(synthetic_site):
    """The redirect page of a bare "+" loads facts.js and resolve.js and lands where
    the Python resolver sends the same Accept-Language."""
    import json
    import subprocess

    page = synthetic_site / (REP + "09+") / "index.html"
    lists = [["pt-BR"], ["en"], ["fr"], [], ["de", "pt"], ["*"], ["EN-gb"]]
    done = subprocess.run(
        [NODE, "-e", PAGE_SCRIPT, str(synthetic_site), str(page)],
        input=json.dumps(lists),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    resolver = Resolver(synthetic_site)
    landed = json.loads(done.stdout)
    for languages, got in zip(lists, landed):
        header = ", ".join(tag for tag in languages if tag != "*") or None
        assert got == {
            "url": resolver.resolve(REP + "09+", header).url,
            "loaded": ["/assets/facts.js", "/assets/resolve.js"],
        }
    assert (
        len({got["url"] for got in landed}) == 2
    )  # the English item and its Portuguese translation
