"""The fast paths taken for speed give what the plain code gives, on any input.

Each was measured as a hot spot of a 100k-item build (benchmarks/README.md); each is
checked here against the code it stands in for, kept in this file as the oracle.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit

import jinja2
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markupsafe import Markup, escape

from ibistatic.core.facts import URL_PATH_SAFE
from ibistatic.core.model import quote_path
from ibistatic.core.properties import TARGET_SCHEMES, unsafe_url
from ibistatic.site.fastjinja import Texts, escaped
from ibistatic.site.pages import Site
from site_helpers import SAMPLE

# -- the oracles: the code before the fast paths ------------------------------------------


def unsafe_url_oracle(url: str) -> str | None:
    file_part = url.partition("?")[0]
    if re.search(r"[\x00-\x20\x7f-\x9f\\]", file_part) or re.search(r"[\x00-\x1f\x7f-\x9f]", url):
        return "a space, control character or backslash"
    parts = urlsplit(url)
    if parts.scheme:
        if parts.scheme.lower() not in TARGET_SCHEMES:
            return f"the scheme {parts.scheme}: (only http: and https: are published)"
        if not parts.netloc:
            return "no host after the scheme"
    elif url.startswith("//"):
        return "a protocol-relative URL ('//host': it leaves the site for any host)"
    if {".", ".."} & set(unquote(parts.path).split("/")):
        return "a '.' or '..' segment"
    return None


def outcome(function, value):
    try:
        return ("returned", function(value))
    except ValueError as error:  # urlsplit's, on a malformed IPv6 host
        return ("raised", type(error))


# -- URLs as templates and careless descriptors write them ---------------------------------

PIECES = st.sampled_from(
    [
        "http",
        "https",
        "HTTP",
        "hTtPs",
        "ftp",
        "javascript",
        ":",
        "//",
        "/",
        "?",
        "#",
        "@",
        "[",
        "]",
        "[::1]",
        ".",
        "..",
        "%2e",
        "%2E",
        "%2F",
        "%",
        "a",
        "Z",
        "0",
        "-",
        "_",
        "~",
        " ",
        "\t",
        "\n",
        "\x00",
        "\x7f",
        "\x85",
        "\\",
        "é",
        "ｈ",
        "\u2100",
        "﹖",
        "ibi.example.org",
        "doc/file.pdf",
        "col/repo",
        "8JMKD3MGP8W/35MMLL8",
        "&",
        "=",
        "'",
        "(",
        ";",
        "+",
        "*",
    ]
)
URLS = st.lists(PIECES, max_size=14).map("".join)


@settings(max_examples=3000)
@given(URLS)
@example("https://ibi.example.org/col/repo/doc/../x")
@example("https://ibi.example.org/col/%2e%2E/x?a=..")
@example("http://[::1/x")
@example("https://user@host/x/./y")
@example("https://h?x/../y")
@example("HTTPS://h#/..")
@example("https:///x")
@example("https://ｈ/x")
def test_unsafe_url_is_what_urlsplit_says(url):
    assert outcome(unsafe_url.__wrapped__, url) == outcome(unsafe_url_oracle, url)


@settings(max_examples=2000)
@given(
    st.text(
        alphabet=st.sampled_from(list("aZ09/ .%-_~:@!$&'()*+,;=?#[]\\é\x00\n^`{|}\"<>")),
        max_size=20,
    )
    | st.text(max_size=10)
)
@example("")
@example("a/b c.pdf")
def test_quote_path_is_quote(path):
    assert quote_path(path) == quote(path, safe=URL_PATH_SAFE)


VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "plain", "a&b", "<b>", '"q"', "it's", "&amp;"]),
    st.integers(),
    st.none(),
    st.builds(Markup, st.sampled_from(["<i>kept</i>", "&amp;", "plain"])),
)


@settings(max_examples=1000)
@given(VALUES)
def test_escaped_prints_what_markupsafe_prints(value):
    assert str(escaped(value)) == str(escape(value))
    assert isinstance(escaped(value), Markup) or escaped(value) == value  # no escaping skipped


def test_texts_are_the_dict_with_attributes():
    """A site's own template may read the words as the dict they were (``t.get``,
    ``t[name]``, ``t|length``); a missing word stays missing either way."""
    words = {"word": "Word", "other": "Other"}
    texts = Texts(words)
    assert texts == words and texts.get("other") == "Other" and len(texts) == 2
    assert (texts.word, texts["other"]) == ("Word", "Other")
    assert not hasattr(texts, "missing") and "missing" not in texts


def test_templates_use_the_fast_escape_and_render_the_same():
    """The site's templates run with `escaped` in place of markupsafe's, and print what a
    plain jinja2 environment prints for values that need escaping and values that do not."""
    import jinja2

    from ibistatic.config import load_config
    from ibistatic.site.pages import SITE_SRC

    site = Site(load_config(SAMPLE / "ibistatic.yaml"))
    template = site.template("filelist.html")
    assert template.root_render_func.__globals__["escape"] is escaped
    # jinja2's globals, as a dict: its ChainMap was copied key by key at each render
    assert type(template.globals) is dict
    assert template.globals == dict(jinja2.Environment().make_globals(None))
    plain = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(SITE_SRC)),
        autoescape=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    ).get_template("filelist.html")

    class Row:
        def __init__(self, path, size):
            self.url, self.path, self.default, self.size = "https://x/" + path, path, True, size
            self.type, self.sha256 = "text/html", None

    values = {
        "files": [Row("a<b>&c.pdf", 12345), Row("plain.pdf", None)],
        "canonical": "https://ibi.example.org/x?a=1&b=2",
        "repository": "col/repo",
        "title": 'Title "quoted" & <tagged>',
        "persistent": "https://ibi.example.org/col/repo",
        "archive": "archive-a",
        "item_lang": Markup(' lang="pt"'),
        "record": "https://ibi.example.org/record/col/repo/",
    }
    constants = site.constants("en")
    assert template.render(**constants, **values) == plain.render(
        **{**constants, "t": dict(constants["t"])}, **values
    )


@settings(max_examples=300)
@given(st.binary(max_size=70000) | st.text(alphabet='abc {}:,"é', max_size=20000).map(str.encode))
@example(b"")
@example(b"x" * 512)
def test_pack_round_trips_and_is_no_larger_than_a_full_window(data):
    """pack's window fits the data: what unpack reads back is the data, and it takes no
    more bytes than zlib's default 32 KB window would."""
    import zlib

    from ibistatic.store.files import pack, unpack

    assert unpack(pack(data)) == data
    assert len(pack(data)) <= len(zlib.compress(data, 1))


def _world_strings() -> list[str]:
    """Persistent URLs and IBIs as public code and documents write them
    (tests/data/real_world_ibis.tsv), and every URL the corpora and the sample archive
    write in their descriptors (targets, templates, addresses)."""
    from pathlib import Path

    from test_real_world_urls import ROWS

    tests = Path(__file__).parent
    found = {text for text, _, _ in ROWS}
    for folder in (tests / "corpus", tests / "hostile", SAMPLE):
        for path in folder.rglob("*.yaml"):
            text = path.read_text(encoding="utf-8", errors="replace")
            found.update(re.findall(r"https?://[^\s\"']+", text))
    return sorted(found)


WORLD = _world_strings()


def test_the_fast_paths_agree_on_what_the_world_writes():
    """Each real string, as it is, as a path in an Archive's file URL and in front of
    one: the fast URL check and the fast quoting give what the plain code gives."""
    assert len(WORLD) > 100
    for text in WORLD:
        quoted = quote(text, safe=URL_PATH_SAFE)
        assert quote_path(text) == quoted, text
        for url in (text, f"https://ibi.example.org/col/{quoted}", f"{text}/doc/{quoted}"):
            assert outcome(unsafe_url.__wrapped__, url) == outcome(unsafe_url_oracle, url), url


def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_flattened_pages_are_what_jinja2_renders(tmp_path, monkeypatch):
    """The sample site (records, tombstones, file lists, metadata and alert pages, the
    landing page, 404.html) built with its pages flattened and with jinja2's extends and
    includes: the same bytes in every file."""
    import shutil

    from ibistatic.config import load_config
    from ibistatic.site import fastjinja, pages
    from ibistatic.site.build import build_site

    shutil.copytree(SAMPLE, tmp_path / "project")
    config = load_config(tmp_path / "project" / "ibistatic.yaml")
    site = Site(config)
    flat = {"record.html", "filelist.html", "metadata.html", "alert.html", "landing.html"}
    assert {n for n in flat if site.template(n) is not site.env.get_template(n)} >= flat
    build_site(config, full=True)
    flattened = _snapshot(config.output)
    monkeypatch.setattr(
        fastjinja, "flattened", lambda env, name, bundled, words=None: env.get_template(name)
    )
    monkeypatch.setattr(pages, "_environment", pages._environment.__wrapped__)  # no shared one
    build_site(config, full=True)
    assert sum(path.endswith(".html") for path in flattened) > 100
    assert _snapshot(config.output) == flattened


def test_a_sites_own_templates_keep_jinja2s_way(tmp_path):
    """A page whose layout or includes a site replaced is rendered by jinja2 itself, so
    that an error in the site's template names its own file and line."""
    from ibistatic.config import load_config

    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "_footer.html").write_text("<footer>{{ site_url }}</footer>\n")
    config = load_config(SAMPLE / "ibistatic.yaml")
    site = Site(type(config)(**{**vars(config), "templates": tmp_path / "own"}))
    for name in ("record.html", "filelist.html", "metadata.html", "alert.html"):
        assert site.template(name) is site.env.get_template(name)


def _render_both(folder, name: str, **values) -> tuple:
    """`name` of `folder` as flattened() compiles it, and as jinja2 renders it."""
    import jinja2

    from ibistatic.site import fastjinja

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    flat = fastjinja.flattened(environment, name, folder)
    plain = environment.get_template(name)
    return flat is not plain, flat.render(**values), plain.render(**values)


_LAYOUT = (
    "<title>{% block title %}{% endblock %}</title>{% if canonical is defined %}c{% endif %}\n"
    '{% include "_head.html" %}\n{% block main %}default{% endblock %}\n{% block end %}e'
    "{% endblock %}\n"
)


def test_flattening_keeps_blocks_includes_and_loops_as_jinja2_has_them(tmp_path):
    (tmp_path / "_layout.html").write_text(_LAYOUT)
    (tmp_path / "_head.html").write_text("<h>{{ t }}{% for x in rows %}{{ x }}{% endfor %}</h>\n")
    (tmp_path / "page.html").write_text(
        '{% extends "_layout.html" %}\nignored {{ t }}\n{% block title %}{{ t }}&{% endblock %}'
        "{% block main %}{% for r in rows %}{% if not loop.first %},{% endif %}{{ r }}"
        "{% endfor %}{% endblock %}{% block unused %}u{% endblock %}\n"
    )
    flat, mine, theirs = _render_both(tmp_path, "page.html", t="<T>", rows=["a&", "b"])
    assert flat and mine == theirs
    assert (
        "<title>&lt;T&gt;&</title>" in mine
        and "<h>&lt;T&gt;a&amp;b</h>" in mine
        and "a&amp;,b" in mine
        and mine.endswith("e\n")
    )


def test_a_languages_words_are_printed_once_into_its_template(tmp_path):
    """``{{ t.word }}`` and ``{{ t["word"] }}`` compiled as the word's escaped text: the
    `t` a page is rendered with no longer reaches them (the sample site's pages in
    English and Portuguese are jinja2's bytes: test_flattened_pages_are_what_jinja2_renders).
    Dynamic lookups and unknown words stay lookups; a template with a `t` of its own is
    left as it is."""
    from ibistatic.site import fastjinja

    (tmp_path / "_layout.html").write_text("<p>{% block main %}{% endblock %}</p>\n")
    (tmp_path / "page.html").write_text(
        '{% extends "_layout.html" %}{% block main %}{{ t.hi }}|{{ t["hi"] }}|{{ t[k] }}|'
        "{{ t.other }}{% endblock %}\n"
    )
    (tmp_path / "own.html").write_text(
        '{% extends "_layout.html" %}{% block main %}{% for t in rows %}{{ t.hi }}{% endfor %}'
        "{% endblock %}\n"
    )
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(tmp_path)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    words = fastjinja.Texts({"hi": "<hé & 'x'>", "other": "o"})
    page = fastjinja.flattened(environment, "page.html", tmp_path, words)
    asked = fastjinja.Texts({"hi": "no", "other": "asked", "k": "dyn"})
    assert (
        page.render(t=asked, k="k")
        == "<p>&lt;hé &amp; &#39;x&#39;&gt;|&lt;hé &amp; &#39;x&#39;&gt;|dyn|o</p>"
    )
    plain = environment.get_template("page.html")
    assert page.render(t=words, k="hi") == plain.render(t=words, k="hi")
    own = fastjinja.flattened(environment, "own.html", tmp_path, words)
    assert own.render(t=words, rows=[{"hi": "row"}]) == "<p>row</p>"


def test_what_flattening_cannot_keep_is_left_to_jinja2(tmp_path):
    """A set in an include (it would leak into the page), a set beside the blocks (it
    reaches the layout), super(), a block inside an if: each page keeps jinja2's way."""
    (tmp_path / "_layout.html").write_text(_LAYOUT)
    shapes = {
        "leaky include": ("{% set t = 'x' %}{{ t }}", "{% block main %}{{ t }}{% endblock %}"),
        "set beside blocks": ("h", "{% set t = 'y' %}{% block main %}{{ t }}{% endblock %}"),
        "super": ("h", "{% block main %}{{ super() }}!{% endblock %}"),
    }
    for label, (head, blocks) in shapes.items():
        (tmp_path / "_head.html").write_text(head)
        (tmp_path / "page.html").write_text('{% extends "_layout.html" %}' + blocks)
        flat, mine, theirs = _render_both(tmp_path, "page.html", t="T", rows=[])
        assert not flat and mine == theirs, label
    (tmp_path / "_head.html").write_text("h")
    (tmp_path / "_layout.html").write_text("{% if t %}{% block main %}{% endblock %}{% endif %}")
    (tmp_path / "page.html").write_text(
        '{% extends "_layout.html" %}{% block main %}m{% endblock %}'
    )
    assert _render_both(tmp_path, "page.html", t="T", rows=[])[0] is False


def test_the_key_of_each_persistent_url_is_its_ibis_key():
    """form_key takes the key of the item's form that the URL writes instead of parsing
    the IBI again: the same key as ibi_key for every URL of the sample (modifiers: all),
    in both case spellings, and a parse for an IBI that is neither form."""
    from dataclasses import replace

    from ibistatic.archive.crawl import CrawlCache
    from ibistatic.archive.load import load_archives
    from ibistatic.config import load_config
    from ibistatic.core.facts import has_open_translation
    from ibistatic.core.identifiers import ibi_key, parse_ibi
    from ibistatic.index.writer import precomputed_answers
    from ibistatic.targets import form_key, page_targets

    config = load_config(SAMPLE / "ibistatic.yaml")
    loaded = load_archives(config.archives, config.site_url, CrawlCache())
    targets = list(page_targets(loaded, "all"))
    assert len({t.ibi for t in targets}) > 15
    for target in targets:
        assert form_key(target.item, target.ibi) == ibi_key(target.ibi)
    answers = precomputed_answers(targets)
    asked = {(ibi_key(t.ibi), t.modifier) for t in targets if not has_open_translation(t.modifier)}
    assert {(key, modifier) for key in answers for modifier in answers[key]} == asked
    item = targets[0].item
    upper = item.repository.text.upper()
    assert form_key(item, upper) == ibi_key(upper) == item.repository.key
    written = replace(item, repository=parse_ibi(upper))  # a repository written in capitals
    assert form_key(written, upper) == item.repository.key != upper
    other = replace(item, ibip=None)
    assert form_key(other, "8JMKD3MGP8W/35MMLL8") == "8JMKD3MGP8W/35MMLL8"


_SEGMENT = st.text(
    st.characters(blacklist_characters="/\\\x00", blacklist_categories=("Cs",)), min_size=1
).filter(lambda s: s not in (".", ".."))


@settings(max_examples=200, deadline=None)
@given(segments=st.lists(_SEGMENT, min_size=1, max_size=4))
def test_a_written_file_lands_where_os_path_join_puts_it(tmp_path_factory, segments):
    """Files joins the output folder and a checked site path as a string (os.path.join
    and dirname per file were 3 s at 100k): the same path os.path.join gives."""
    import os

    from ibistatic.site.pages import check_relative
    from ibistatic.store.files import Files

    relative = "/".join(segments)
    check_relative(relative)
    direct = tmp_path_factory.mktemp("direct")
    files = Files({}, direct)
    try:
        path = files._path(relative)
    except OSError:  # a name this file system refuses (too long): not the join's concern
        return
    assert path == os.path.join(direct, *segments)
    assert os.path.isdir(os.path.dirname(path))


def _stock_outcome(data: bytes):
    """What parse_descriptor gives with the stock constructor (no string fast path)."""
    from ibistatic.archive import safe_yaml

    class Stock(safe_yaml._Loader):
        construct_object = safe_yaml._BaseLoader.construct_object

    real, safe_yaml._Loader = safe_yaml._Loader, Stock
    try:
        return _outcome(safe_yaml.parse_descriptor, data)
    finally:
        safe_yaml._Loader = real


def _outcome(parse, data: bytes):
    from ibistatic.archive.safe_yaml import DescriptorError

    try:
        return ("value", parse(data))
    except DescriptorError as error:
        return ("error", error.found, error.expected)


_YAML_SCALAR = st.sampled_from(
    [
        "a",
        "Original",
        "yes",
        "on",
        "~",
        "",
        "1",
        "0x1F",
        "1_000",
        "1:20",
        ".inf",
        "2009-02-30",
        "2009-07-21T13:23:45Z",
        "'quoted'",
        '"dq \\u00e9"',
        "!!str 5",
        "!!binary aGk=",
        "&x v",
        "*x",
        "São José",
        "a: b",
        "- a",
        "[a, *x]",
        "{k: v, k: w}",
        "<<: {m: 1}",
        "!!bool maybe",
        "# c",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(
        st.tuples(st.sampled_from(["state", "a", "b", "yes", "1", "  c"]), _YAML_SCALAR), max_size=6
    )
)
def test_strings_read_as_the_stock_constructor_reads_them(lines):
    """Descriptors, hostile ones included, read the same with the string fast path as
    with the stock constructor: the same value, or the same error."""
    from ibistatic.archive.safe_yaml import parse_descriptor

    text = "".join(f"{key}: {value}\n" for key, value in lines).encode()
    assert _outcome(parse_descriptor, text) == _stock_outcome(text)


def test_the_hostile_and_sample_descriptors_read_as_the_stock_constructor_reads_them():
    from hostile.cases import BILLION_LAUGHS, CASES
    from ibistatic.archive.safe_yaml import parse_descriptor

    inputs = [case.item for case in CASES if case.item is not None]
    inputs += [path.read_bytes() for path in SAMPLE.parent.rglob("*.yaml")]
    inputs.append(BILLION_LAUGHS.encode())
    inputs.append(b"a: &r [*r]\nb: &m {k: *m}\n")  # recursive: a list and a mapping in themselves
    assert len(inputs) > 150
    for data in inputs:
        fast, stock = _outcome(parse_descriptor, data), _stock_outcome(data)
        assert len(fast) == len(stock) and fast[0] == stock[0], data[:200]
        assert all(_same(x, y) for x, y in zip(fast[1:], stock[1:])), data[:200]


def _same(a, b, seen=None) -> bool:
    """a == b for YAML values whose lists and mappings may be shared (a billion laughs:
    2 GB as text) or hold themselves (== would recurse): each pair is compared once."""
    seen = set() if seen is None else seen
    if type(a) is not type(b):
        return False
    if not isinstance(a, (list, dict)):
        return a == b  # a key of a mapping, a scalar
    if (id(a), id(b)) in seen:  # the values stay alive meanwhile: their ids are theirs
        return True
    seen.add((id(a), id(b)))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k], seen) for k in a)
    return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.text(max_size=8), max_size=6))
def test_a_file_of_lines_is_its_lines_each_ended(tmp_path_factory, lines):
    """An update joins a file's lines in C ("\\n".join: a watch's 350,000-line
    _redirects): the same bytes as each line with its newline, and as a full build's
    streamed write, empty lines and no lines at all included."""
    from ibistatic.store.files import File, Files, digest

    expected = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
    try:
        expected.decode("utf-8")
    except UnicodeDecodeError:  # a lone surrogate: no file holds it
        return
    update = Files({})
    update.put(File("f.txt", lines=iter(lines)))
    assert update.files["f.txt"] == expected
    direct = tmp_path_factory.mktemp("lines")
    full = Files({}, direct)
    full.put(File("f.txt", lines=iter(lines)))
    assert (direct / "f.txt").read_bytes() == expected
    assert update.digests["f.txt"] == full.digests["f.txt"] == digest(expected)
