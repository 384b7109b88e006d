"""The static search's core: words, documents, and the files a browser reads.

The files are read back here as search.js reads them (a binary search over the token
files' first tokens, posting lists as gaps, lists of the documents *without* a token),
so every assertion is about what a reader's query would find.  The script's own
tokenizer is run under node over the same texts: both must find the same words.
"""

from __future__ import annotations

import bisect
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.core.identifiers import parse_ibip, parse_repository_name
from ibistatic.core.model import Item
from ibistatic.search.documents import document_of, documents, representative
from ibistatic.search.index import MAX_BYTES, SearchIndex, search_files
from ibistatic.search.tokens import MAX_TOKEN, normalize, words, year_of

ROOT = Path(__file__).resolve().parent.parent
SEARCH_JS = ROOT / "ibistatic" / "site_src" / "assets" / "search.js"
NODE = shutil.which("node")


def item(
    repository: str,
    *,
    title: str | None = None,
    ibip: str | None = None,
    state: str = "Original",
    timestamp: str = "2020-01-01T00:00:00Z",
    archive: str = "a",
    **dublin_core,
) -> Item:
    core = ([("title", (title,))] if title else []) + [
        (key, tuple(values)) for key, values in dublin_core.items()
    ]
    return Item(
        archive,
        parse_repository_name(repository),
        state,
        timestamp,
        ibip=parse_ibip(ibip) if ibip else None,
        dublin_core=tuple(core),
    )


# -- words -------------------------------------------------------------------------------

WORDS = [
    ("Relatório técnico", {"relatorio", "tecnico"}, "accents dropped, lower case"),
    ('Mapa "São José" <2014> & outros', {"mapa", "sao", "jose", "2014", "outros"}, "markup"),
    ("snake_case word", {"snake", "case", "word"}, "_ separates words"),
    ("ﬁle Ⅻ", {"file", "xii"}, "compatibility forms decompose (NFKD)"),
    ("Ünïcödé ÇA", {"unicode", "ca"}, "upper case with marks"),
    ("x" * (MAX_TOKEN + 5), {"x" * MAX_TOKEN}, "a long word is cut"),
    ("日本語 テキスト", {"日本語", "テキスト"}, "scripts without spaces stay runs"),
    ("", set(), "nothing"),
]


@pytest.mark.parametrize("text, expected, why", WORDS)
def test_words(text, expected, why):
    assert words([text]) == expected, why


def test_normalize_keeps_ascii_and_drops_marks():
    assert normalize("ABC/def") == "abc/def"
    assert normalize("São") == "sao"


@pytest.mark.parametrize(
    "text, year", [("2015-01-20", "2015"), ("c. 1999?", "1999"), ("20150", None), ("", None)]
)
def test_year_of(text, year):
    assert year_of(text) == year


def _node(script: str, given=None):
    """What `script` prints as JSON under node, given `given` as JSON on its stdin."""
    done = subprocess.run(
        [NODE, "-e", script],
        input=None if given is None else json.dumps(given),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_script_finds_the_same_words():
    texts = [text for text, _, _ in WORDS] + [
        "Inglês codificado em ASCII (CCSD0002)",
        "İstanbul straße ÅNGSTRÖM ½ ²",
        "tab\tand\nnew line, dots.and-dashes",
    ]
    script = (
        f"const s = require({json.dumps(str(SEARCH_JS))});"
        "const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(texts.map((t) => [...new Set(s.words(t))].sort())));"
    )
    assert _node(script, texts) == [sorted(words([text])) for text in texts]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_script_reads_ibis_and_urls_whole():
    script = (
        f"const s = require({json.dumps(str(SEARCH_JS))});"
        "console.log(JSON.stringify(["
        "s.terms('8JMKD3MGP8W/35MME4E'),"
        "s.terms('https://ibi.example.org/8JMKD3MGP8W/35MME4E/'),"
        "s.terms('São  x')]));"
    )
    whole = [{"token": "8jmkd3mgp8w/35mme4e", "prefix": True}]
    assert _node(script) == [
        whole,
        whole,
        [{"token": "sao", "prefix": True}, {"token": "x", "prefix": False}],
    ]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_scripts_status_lines_in_both_languages():
    from ibistatic.site.script_words import search_words

    script = (
        f"const s = require({json.dumps(str(SEARCH_JS))});"
        "const pt = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify([s.ENGLISH, [0, 1, 7].map((n) => s.statusLine(pt, n, '{q} $& x')),"
        " s.statusLine(s.ENGLISH, 2, '{n}')]));"
    )
    english, portuguese, braces = _node(script, search_words("pt"))
    # the script's own English, used where a page gives no words, is the site's English
    assert english == search_words("en")
    assert portuguese == [
        "Nenhum item corresponde a “{q} $& x”.",
        "1 item corresponde a “{q} $& x”.",
        "7 itens correspondem a “{q} $& x”.",
    ]
    assert braces == "2 items match “{n}”."


# -- documents ---------------------------------------------------------------------------


def test_the_representative_is_the_first_original_else_the_first_live_copy():
    copy, original = item("a.b/c/2020/01.01.00.00", state="Copy"), item("a.b/c/2020/01.01.00.00")
    deleted = item("a.b/c/2020/01.01.00.00", state="Deleted")
    assert representative([copy, original]) is original
    assert representative([deleted, copy]) is copy
    assert representative([deleted]) is deleted


def test_documents_share_each_token_string():
    """A word is one string object however many documents hold it: at 100,000 items a
    copy per document was a tenth of the search's memory."""
    first = document_of("a.b/c/2020/01.01.00.00", [item("a.b/c/2020/01.01.00.00", title="Ozone")])
    second = document_of("a.b/c/2021/01.01.00.00", [item("a.b/c/2021/01.01.00.00", title="Ozone")])
    ozone = [t for t in first.tokens if t == "ozone"] + [t for t in second.tokens if t == "ozone"]
    assert len(ozone) == 2 and ozone[0] is ozone[1]


def test_a_document_is_found_by_its_title_creators_subjects_years_and_ibis():
    doc = document_of(
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        [
            item(
                "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
                title="ASCII Encoded English",
                ibip="8JMKD3MGP8W/35MME4E",
                creator=["Consultative Committee"],
                subject=["Códigos"],
                date=["1992-05"],
                description=["not searched"],
            )
        ],
    )
    assert list(doc.tokens) == sorted(doc.tokens)  # one way to write the same tokens
    assert set(doc.tokens) == {
        "ascii",
        "encoded",
        "english",
        "consultative",
        "committee",
        "codigos",
        "1992",
        "2020",  # the timestamp's year
        "sid",
        "inpe",
        "br",
        "mtc",
        "m18",
        "80",
        "2009",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        "8jmkd3mgp8w",
        "35mme4e",
        "8jmkd3mgp8w/35mme4e",
    }
    assert doc.shown() == [
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        "ASCII Encoded English",
        "8JMKD3MGP8W/35MME4E",
        "2020",
        ["Consultative Committee"],
        "Original",
    ]


def test_an_untitled_item_is_shown_by_its_repository_name():
    doc = document_of("a.b/c/2020/01.01.00.00", [item("A.b/c/2020/01.01.00.00")])
    assert doc.title == "A.b/c/2020/01.01.00.00" and doc.ibi == "A.b/c/2020/01.01.00.00"


def test_documents_are_oldest_first():
    holdings = {
        "a.b/c/2020/01.02.00.00": [
            item("a.b/c/2020/01.02.00.00", timestamp="2021-01-01T00:00:00Z")
        ],
        "a.b/c/2020/01.01.00.00": [
            item("a.b/c/2020/01.01.00.00", timestamp="2022-01-01T00:00:00Z")
        ],
        "a.b/c/2020/01.03.00.00": [
            item("a.b/c/2020/01.03.00.00", timestamp="2021-01-01T00:00:00Z")
        ],
    }
    assert [d.key for d in documents(holdings)] == [
        "a.b/c/2020/01.02.00.00",
        "a.b/c/2020/01.03.00.00",
        "a.b/c/2020/01.01.00.00",
    ]


# -- the files, read as the script reads them ------------------------------------------------


def _find(files: dict[str, str], token: str) -> set[int]:
    """The documents holding *token*, looked up as search.js does."""
    index = json.loads(files["index.json"])
    firsts = [first.encode("utf-16-be") for first, _ in index["chunks"]]
    at = bisect.bisect_right(firsts, token.encode("utf-16-be")) - 1
    if at < 0:
        return set()
    for entry in json.loads(files[f"t/{index['chunks'][at][1]}.json"]):
        if entry[0] == token:
            numbers, total = [], 0
            for gap in entry[1]:
                total += gap
                numbers.append(total)
            if len(entry) == 3:
                return set(range(index["documents"])) - set(numbers)
            return set(numbers)
    return set()


def _holdings(count: int, seed: int = 0) -> dict[str, list[Item]]:
    rng = random.Random(seed)
    vocabulary = [f"w{n}" for n in range(400)] + ["common", "mapa", "relatório"]
    made = {}
    for n in range(count):
        key = f"sid.inpe.br/mtc-m{n % 7}/2020/{n // 1000:02}.{n // 100 % 10:02}.{n // 10 % 10:02}.{n % 10:02}"
        title = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 8)))
        if rng.random() < 0.8:
            title += " common"
        stamp = f"2020-01-01T{n // 3600 % 24:02}:{n // 60 % 60:02}:{n % 60:02}Z"
        made[key] = [item(key, title=title, timestamp=stamp, creator=[f"Author {n % 13}"])]
    return made


@pytest.fixture(scope="module")
def large():
    holdings = _holdings(3000)
    return holdings, search_files(holdings, "record/{}/")


def test_every_token_finds_exactly_the_documents_holding_it(large):
    holdings, files = large
    docs = documents(holdings)
    tokens = set().union(*(doc.tokens for doc in docs))
    for token in tokens:
        expected = {n for n, doc in enumerate(docs) if token in doc.tokens}
        assert _find(files, token) == expected, token
    assert _find(files, "absent") == set() and _find(files, "") == set()


def test_a_token_most_documents_hold_is_written_as_those_without_it(large):
    _, files = large
    entries = [e for name, text in files.items() if name.startswith("t/") for e in json.loads(text)]
    negated = {entry[0] for entry in entries if len(entry) == 3}
    assert "common" in negated and "w1" not in negated
    assert all(len(entry[1]) <= 1500 for entry in entries)  # never more than half


def test_the_files_stay_small_and_the_index_names_them_all(large):
    _, files = large
    index = json.loads(files["index.json"])
    assert index["format"] == "ibistatic-search" and index["documents"] == 3000
    assert index["link"] == "record/{}/" and index["per-file"] == 32
    named = {f"t/{name}.json" for _, name in index["chunks"]}
    assert named == {name for name in files if name.startswith("t/")}
    firsts = [first.encode("utf-16-be") for first, _ in index["chunks"]]
    assert firsts == sorted(firsts)
    for name in named:
        entries = json.loads(files[name])
        assert len(files[name]) <= MAX_BYTES or len(entries) == 1
    assert {name for name in files if name.startswith("d/")} == {f"d/{n}.json" for n in range(94)}


def test_a_deposit_changes_a_few_files_and_gives_what_a_fresh_build_gives():
    holdings = _holdings(3000)
    index = SearchIndex("record/{}/")
    before = index.files(holdings)
    key = "sid.inpe.br/mtc-m9/2030/01.01.00.00"
    holdings[key] = [item(key, title="newest zebra w5", timestamp="2030-01-01T00:00:00Z")]
    after = index.files(holdings)
    assert after == search_files(holdings, "record/{}/")
    changed = {name for name in after if before.get(name) != after[name]}
    assert "index.json" in changed and "d/93.json" in changed
    assert len(changed) < 20, sorted(changed)
    assert _find(after, "zebra") == {3000}


def test_an_edited_item_gives_what_a_fresh_build_gives():
    holdings = _holdings(500)
    index = SearchIndex("items/{}/")
    index.files(holdings)
    key = next(iter(holdings))
    holdings[key] = [item(key, title="renamed", timestamp="2020-01-01T00:00:00Z")]
    del holdings[list(holdings)[-1]]
    assert index.files(holdings) == search_files(holdings, "items/{}/")


# -- in the built site -------------------------------------------------------------------


def _search_config(page: str) -> dict:
    start = page.index('<script type="application/json" id="ibistatic-search-config">')
    start = page.index(">", start) + 1
    return json.loads(page[start : page.index("</script>", start)])


def _site(tmp_path: Path, catalog: bool = False, language: str = "en") -> Path:
    from ibistatic.config import load_config
    from ibistatic.site import outputs
    from ibistatic.site.build import build_site
    from site_helpers import SAMPLE, write_config

    path = write_config(tmp_path, (SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"))
    if catalog:
        path.write_text(path.read_text() + "catalog: true\n", encoding="utf-8")
    path.write_text(path.read_text() + f"language: {language}\n", encoding="utf-8")
    config = load_config(path)
    if catalog:  # the catalog itself is tested in test_catalog.py: keep this one fast
        assert any(output.name == "catalog" for output in outputs.SITE_OUTPUTS)
    build_site(config)
    return config.output


def test_the_forms_go_to_the_search_page_and_the_catalog_link_needs_a_catalog(tmp_path):
    site = _site(tmp_path)
    landing = (site / "index.html").read_text(encoding="utf-8")
    not_found = (site / "404.html").read_text(encoding="utf-8")
    for page in (landing, not_found):
        assert '<form id="ibistatic-search" role="search" method="get" action="/search/">' in page
        assert "catalog/search.html" not in page
    assert 'href="/catalog/"' not in landing
    assert 'href="/search/list/1/"' in landing and 'href="/search/list/1/"' in not_found
    assert (site / "search" / "index.html").is_file()
    assert not (site / "catalog").exists()


def test_the_list_links_every_item_to_its_record_page(tmp_path):
    site = _site(tmp_path)
    page = (site / "search" / "list" / "1" / "index.html").read_text(encoding="utf-8")
    index = json.loads((site / "search" / "index.json").read_text(encoding="utf-8"))
    rows = page.count("<tr><td>")
    assert rows == index["documents"] == 15
    assert (
        '<a href="/record/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/">'
        "Mapa &#34;São José&#34; &lt;2014&gt; &amp; outros</a>" in page
    )
    assert "Items 1 to 15 of 15, oldest first." in page
    search = (site / "search" / "index.html").read_text(encoding="utf-8")
    config = _search_config(search)
    assert (config["index"], config["links"]) == ("/search/", "/")
    assert config["words"]["matches"] == "{n} items match “{q}”."
    assert '<script src="/assets/search.js"></script>' in search
    assert (site / "assets" / "search.js").is_file()


def test_the_search_and_list_pages_of_a_portuguese_site_are_portuguese(tmp_path, monkeypatch):
    from ibistatic.site.i18n import TEXTS
    from ibistatic.site.outputs import search as search_output
    from ibistatic.site.script_words import search_words

    monkeypatch.setattr(search_output, "LIST_SIZE", 5)  # pages with both links
    site = _site(tmp_path, language="pt")
    search = (site / "search" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="pt">' in search and "<title>Busca</title>" in search
    assert "<h1>Buscar nos itens de http://ibi.example.org/</h1>" in search
    assert '<label for="ibistatic-q">Títulos, autores, assuntos, anos ou IBIs</label>' in search
    assert '<a href="/search/list/1/">a lista de todos os 15 itens</a>' in search
    assert ">Mais resultados</button>" in search and "A busca precisa de JavaScript" in search
    words = _search_config(search)["words"]
    assert words == search_words("pt") and words["no_match"] == "Nenhum item corresponde a “{q}”."
    middle = (site / "search" / "list" / "2" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="pt">' in middle
    assert middle.count("<h1>Todos os itens, página 2 de 3</h1>") == 1
    assert "<p>Itens 6 a 10 de 15, dos mais antigos aos mais novos." in middle
    assert '<nav class="pages" aria-label="Páginas da lista">' in middle
    assert '<nav class="pages" aria-label="Páginas da lista, ao final">' in middle
    assert 'rel="prev">Página anterior</a>' in middle and 'rel="next">Próxima página</a>' in middle
    assert '<th scope="col">Título</th><th scope="col">IBI</th><th scope="col">Ano</th>' in middle
    pages = [
        p.read_text(encoding="utf-8") for p in sorted((site / "search" / "list").rglob("*.html"))
    ]
    assert sum(page.count("</a> (removido)</td>") for page in pages) == 1
    # no English word of the interface is left on them
    english = {TEXTS["en"][k] for k in ("search_label", "more_results", "previous_page", "title")}
    assert not [word for word in english for page in [search, middle] if f">{word}<" in page]


# -- a search index kept between calls (watch) ------------------------------------------

EDITS = st.lists(
    st.tuples(
        st.sampled_from(["retitle", "deposit", "delete", "redate", "common", "rare"]),
        st.integers(0, 10**6),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(EDITS)
def test_a_kept_index_gives_what_a_fresh_one_gives_after_any_edits(edits):
    """Each call of one SearchIndex, after edits in place, deposits, deletions and new
    dates, with files of about 300 bytes (dozens of token files to cut again), equals
    the files made afresh; words held by about half of the documents flip between
    written and negated lists as the total moves."""
    from ibistatic.search import index as search_index

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_index, "TARGET_BYTES", 300)
        patch.setattr(search_index, "MAX_BYTES", 1200)
        holdings = {key: tuple(items) for key, items in _holdings(120, seed=3).items()}
        kept = SearchIndex("record/{}/")
        kept.files(holdings)
        for number, (edit, pick) in enumerate(edits):
            keys = sorted(holdings)
            key = keys[pick % len(keys)]
            old = holdings[key][0]
            title, stamp = old.title(), old.timestamp
            if edit == "deposit":
                key = f"sid.inpe.br/mtc-m9/2031/01.01.00.{number:02}"
                title, stamp = f"new w{pick % 400}", f"2031-01-01T00:00:{number:02}Z"
            elif edit == "delete" and len(holdings) > 1:
                del holdings[key]
                key = None
            elif edit == "retitle":
                title = f"w{pick % 400} w{pick % 37} zebra{number}"
            elif edit == "redate":
                stamp = f"20{10 + pick % 20}-01-01T00:00:00Z"
            elif edit in ("common", "rare"):  # a word of about half the documents
                title = f"{title} half" if edit == "common" else title.replace("half", "")
            if key is not None:
                holdings[key] = (item(key, title=title, timestamp=stamp),)
            assert kept.files(holdings) == search_files(holdings, "record/{}/"), (number, edit)


def test_an_edit_in_place_makes_again_only_its_own_token_files(monkeypatch):
    from ibistatic.search import index as search_index

    monkeypatch.setattr(search_index, "TARGET_BYTES", 300)
    monkeypatch.setattr(search_index, "MAX_BYTES", 1200)
    holdings = {key: tuple(items) for key, items in _holdings(600, seed=5).items()}
    kept = SearchIndex("record/{}/")
    before = kept.files(holdings)
    chunks = sum(1 for name in before if name.startswith("t/"))
    made = []
    original = search_index._Chunk.__init__
    monkeypatch.setattr(
        search_index._Chunk,
        "__init__",
        lambda self, tokens, texts: made.append(tokens) or original(self, tokens, texts),
    )
    key = sorted(holdings)[300]
    holdings[key] = (item(key, title="w1 w2 zebra", timestamp=holdings[key][0].timestamp),)
    after = kept.files(holdings)
    assert chunks > 50 and 0 < len(made) <= 20, (chunks, len(made))
    assert after == search_files(holdings, "record/{}/")


def test_a_word_that_comes_to_most_documents_follows_the_total():
    """Edits in place give a word to most documents (its list is then written as the
    documents without it); a deposit changes the total, and with it that list."""
    holdings = {key: tuple(items) for key, items in _holdings(8, seed=1).items()}
    kept = SearchIndex("record/{}/")
    kept.files(holdings)
    for key in sorted(holdings)[:6]:
        old = holdings[key][0]
        holdings[key] = (item(key, title=f"{old.title()} half", timestamp=old.timestamp),)
        assert kept.files(holdings) == search_files(holdings, "record/{}/")
    new = "sid.inpe.br/mtc-m9/2031/01.01.00.00"
    holdings[new] = (item(new, title="newest", timestamp="2031-01-01T00:00:00Z"),)
    files = kept.files(holdings)
    assert files == search_files(holdings, "record/{}/")
    held = {n for n, doc in enumerate(documents(holdings)) if "half" in doc.tokens}
    assert _find(files, "half") == held and len(held) == 6
