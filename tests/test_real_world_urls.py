"""Real IBIs and persistent URLs, as found in public code and documents
(tests/data/real_world_ibis.tsv), through every parser ibistatic has: the core URL
parser, ``parse-url``, ``inspect``, ``resolve`` on a site whose archive holds some of
them, and the browser resolver (under node).  Each is read as the IBI it names, or
rejected for the reason its row states; none is accepted with a wrong IBI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from archive_factory import write_archive, write_item
from ibistatic.cli import main
from ibistatic.core.identifiers import parse_ibi
from ibistatic.core.pairlists import parse_pairs
from ibistatic.core.urls import parse_persistent_url
from ibistatic.errors import IbiSyntaxError
from ibistatic.resolver import Resolver
from site_helpers import build

CORPUS = Path(__file__).parent / "data" / "real_world_ibis.tsv"


def _rows() -> list[tuple[str, str, str]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines if line and not line.startswith("#")]


ROWS = _rows()
ACCEPTED = [(text, expected) for text, _, expected in ROWS if not expected.startswith("rejected:")]
REJECTED = [
    (text, expected.removeprefix("rejected: "))
    for text, _, expected in ROWS
    if expected.startswith("rejected:")
]


def _named(expected: str) -> tuple[str, str]:
    """(IBI key, file path) of an expected outcome 'KEY' or 'KEY /file'."""
    key, _, path = expected.partition(" /")
    return key, path


def _message_parts(reason: str) -> list[str]:
    """What the error message must say for a stated reason."""
    if reason.startswith("series code"):
        return ["series code", f"the IBI is {reason.removeprefix('series code ')}"]
    if reason.startswith("label before"):
        return [f"the IBI in it is {reason.removeprefix('label before ')}"]
    assert reason == "DOI", reason
    return ["is a DOI, not an IBI", "https://doi.org/10."]


def test_the_corpus_is_large_and_its_rows_are_well_formed():
    assert len(ROWS) >= 150
    assert len({text for text, _, _ in ROWS}) == len(ROWS)
    for text, source, expected in ROWS:
        assert source and expected
        if not expected.startswith("rejected:"):
            key, _ = _named(expected)
            assert parse_ibi(key).key == key  # expectations are canonical IBIs


@pytest.mark.parametrize("text, expected", ACCEPTED)
def test_each_real_url_names_its_ibi(text, expected):
    key, path = _named(expected)
    parsed = parse_persistent_url(text)
    assert (parsed.ibi.key, parsed.filepath) == (key, path)
    assert parsed.relation == () and parsed.required_status == ""


@pytest.mark.parametrize("text, reason", REJECTED)
def test_each_string_that_is_no_ibi_is_rejected_for_its_reason(text, reason):
    with pytest.raises(IbiSyntaxError) as caught:
        parse_persistent_url(text)
    for part in _message_parts(reason):
        assert part in str(caught.value)


def test_parse_url_and_inspect_agree_with_the_corpus(capsys):
    for text, expected in ACCEPTED:
        key, path = _named(expected)
        assert main(["parse-url", text]) == 0
        out = capsys.readouterr().out
        pairs = dict(parse_pairs(out))
        assert parse_ibi(pairs["parsedibiurl.ibi"]).key == key
        assert unquote(pairs.get("parsedibiurl.filepath", "")) == ("/" + path if path else "")
        # inspect takes the IBI alone and accepts it; given the URL it names the IBI in a hint
        assert main(["inspect", "--json", key]) == 0
        assert json.loads(capsys.readouterr().out)["key"] == key
    for text, reason in REJECTED:
        for command in (["parse-url", text], ["inspect", text]):
            assert main(command) == 2
            err = capsys.readouterr().err
            for part in _message_parts(reason):
                assert part in err, (command, err)


def test_inspect_names_the_ibi_of_a_persistent_url(capsys):
    assert main(["inspect", "http://urlib.net/ibi/8JMKD3MGP3W34T/47AF772"]) == 2
    assert capsys.readouterr().err.endswith(
        "    hint: this is a persistent URL; the IBI it names is 8JMKD3MGP3W34T/47AF772\n"
    )


# ---------------------------------------------------------------------------------
# End to end: a site whose archive holds some of these IBIs

HELD = [
    "8JMKD3MGP7W/3FB2RJE",
    "8JMKD3MGP3W34T/47AF772",
    "8JMKD3MGP3W34R/3UGHFGH",
    "8JMKD3MGPDW34P/42SUMHS",
]
HELD_REPOSITORIES = [
    "sid.inpe.br/mtc-m19@80/2010/07.26.20.24",
    "dpi.inpe.br/sbsr@80/2006/10.11.04.08",
    "sid.inpe.br/mtc-m21c/2019/05.16.15.18",
    "sid.inpe.br/sibgrapi/2018/09.03.21.36",
]


@pytest.fixture(scope="module")
def real_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("real-world")
    archive = write_archive(
        root / "mtc-m21d", "mtc-m21d.sid.inpe.br", "sid.inpe.br/mtc-m21d/2020/01.01.00.00"
    )
    for minute, ibip in enumerate(HELD):
        write_item(
            archive,
            f"sid.inpe.br/mtc-m21d/2022/07.20.15.{minute:02d}",
            state="Original",
            ibip=ibip,
            files={"publicacao.pdf": "%PDF"},
            target="publicacao.pdf",
        )
    for repository in HELD_REPOSITORIES:
        write_item(
            archive,
            repository,
            state="Original",
            files={"publicacao.pdf": "%PDF", "6549-6556.pdf": "%PDF"},
            target="publicacao.pdf",
        )
    return build(root / "site", archives=[archive])


def _held_rows() -> list[tuple[str, str]]:
    held = set(HELD) | set(HELD_REPOSITORIES)
    return [(text, expected) for text, expected in ACCEPTED if _named(expected)[0] in held]


def test_resolve_answers_real_urls_of_held_items(real_site, capsys):
    rows = _held_rows()
    assert len(rows) >= 10
    resolver = Resolver(real_site)
    for text, expected in rows:
        key, path = _named(expected)
        answer = resolver.resolve(text)
        item = resolver.resolve(key)
        assert answer.alert is None and item.url is not None, text
        wanted = item.url.rsplit("/", 1)[0] + "/" + path if path else item.url
        assert answer.url == wanted, text
        assert main(["resolve", text, "--index", str(real_site)]) == 0
        assert capsys.readouterr().out == wanted + "\n"


def test_resolve_rejects_what_is_no_persistent_url(real_site, capsys):
    code = main(["resolve", "sid.inpe.br/mtc-m21d/2022/07.20.15.45-NTC", "--index", str(real_site)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[-1] == (
        "    hint: '-NTC' is a catalog's series code, not part of the IBI: the IBI is "
        "sid.inpe.br/mtc-m21d/2022/07.20.15.45"
    )


# ---------------------------------------------------------------------------------
# The browser resolver parses the same way

NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_browser_resolver_parses_the_corpus_as_python_does(real_site):
    resolve_js = real_site / "assets" / "resolve.js"  # with the facts.js the build wrote
    script = (
        "const r = require(process.argv[1]); const rows = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(rows.map(function (t) {"
        "  try { const p = r.parseRequest(t); return [p.ibi.key, p.filepath]; }"
        "  catch (e) { if (e instanceof r.SyntaxProblem) return null; throw e; } })));"
    )
    requests = [_request(text) for text, _, _ in ROWS]
    done = subprocess.run(
        [NODE, "-e", script, str(resolve_js)],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        check=True,
    )
    answers = json.loads(done.stdout)
    for request, answer in zip(requests, answers):
        try:
            parsed = parse_persistent_url(request)
        except IbiSyntaxError:
            assert answer is None, request
        else:
            assert answer == [parsed.ibi.key, parsed.filepath], request


def _request(text: str) -> str:
    """What the browser resolver gets: the path and query after the site's base (the
    host swapped for the site's), without the fragment the browser keeps to itself."""
    text = text.split("#", 1)[0]
    if "://" in text:
        return text.split("://", 1)[1].split("/", 1)[1]
    return text
