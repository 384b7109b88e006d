"""The pages for people and harvesters (docs/site.md, "Pages for people"): record pages
and tombstones, alert pages that link what exists, file lists with checksums, the site
identity, the interface in English and Portuguese, template overrides, Signposting,
citation tags, schema.org, robots.txt and the sitemap of the pages with content."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from archive_factory import write_archive, write_item
from ibistatic.config import SiteIdentity, load_config
from ibistatic.core.identifiers import parse_ibi
from ibistatic.core.model import Item
from ibistatic.errors import ConfigError
from ibistatic.site import i18n, script_words
from ibistatic.site.signposting import Link, link_header, record_links, schema_type
from page_sites import (
    CONFLICT,
    EN_ITEM,
    GONE,
    IDENTITY,
    PAGE_TYPES,
    PT_ITEM,
    build_showcase,
    write_showcase_config,
)
from site_helpers import SAMPLE, SITE_URL

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class Parsed(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self.scripts.append((self._script, data))
        else:
            self.text.append(data)

    def all(self, tag: str, **wanted) -> list[dict]:
        return [
            attrs
            for name, attrs in self.tags
            if name == tag and all(attrs.get(k) == v for k, v in wanted.items())
        ]

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


@pytest.fixture(scope="module")
def showcase(tmp_path_factory) -> Path:
    return build_showcase(tmp_path_factory.mktemp("showcase-en"), "en")


@pytest.fixture(scope="module")
def showcase_pt(tmp_path_factory) -> Path:
    return build_showcase(tmp_path_factory.mktemp("showcase-pt"), "pt")


def parsed(site: Path, path: str) -> Parsed:
    return Parsed((site / path).read_text("utf-8"))


# --- record pages ---------------------------------------------------------------------


def test_every_held_ibi_has_a_record_page(showcase):
    from ibistatic.archive.load import load_archives

    config = load_config(showcase.parent / "ibistatic.yaml")
    loaded = load_archives(config.archives, config.site_url)
    keys = {item.key for item in loaded.holdings.all_items()}
    made = {
        str(p.parent.relative_to(showcase / "record"))
        for p in showcase.rglob("record/**/index.html")
    }
    assert made == keys and len(keys) == 20  # the sample's 15, the showcase's 3 and its 2 services


def test_record_page_shows_what_the_catalog_shows(showcase):
    page = parsed(showcase, PAGE_TYPES["record-en"])
    words = page.words
    assert "IBI resolution system: final report" in words
    assert "Banon, Gerald Jean Francis · 2013-09-04" in words  # creators and dates
    assert "Creator Banon" in words and "Publisher INPE" in words  # human labels
    assert "Language English (en)" in words  # language names, code kept
    # its translation, by language name and title, linked to its record page
    assert "Portuguese (Brazil):" in words
    assert page.all("a", href=SITE_URL + "record/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/")
    assert page.all("a", href=SITE_URL + f"files/{EN_ITEM}/")
    assert page.all("a", href=SITE_URL + f"metadata/{EN_ITEM}/oai_dc.xml")
    assert "Last updated mtc-m16d Original 2013-09-04T12:30:12Z" in words  # where it is kept


def test_record_page_lists_every_archive_holding_the_item(showcase):
    page = parsed(showcase, PAGE_TYPES["record-conflict"])
    assert "showcase-a Original" in page.words and "showcase-b Original" in page.words
    for host in ("a", "b"):
        url = f"http://{host}.example.org/col/{CONFLICT}/doc/report.pdf"
        assert page.all("a", href=url)


def test_tombstone_has_title_date_and_reason(showcase):
    page = parsed(showcase, PAGE_TYPES["tombstone"])
    assert page.all("html", lang="pt")  # the item is in pt-BR: the page speaks Portuguese
    words = page.words
    assert "Relatório retirado" in words and "Este item foi removido" in words
    assert "Removido em 2021-03-04" in words
    assert "Motivo Retirado a pedido dos autores: <duplicado> & substituído." in words
    assert not page.all("meta", name="citation_title")  # nothing to cite any more


def test_reason_must_be_a_sentence(tmp_path):
    from ibistatic.archive.load import load_archives

    archive = write_archive(tmp_path / "a", "a.example.org", "example.org/s/2020/01.01.00.00")
    write_item(archive, "example.org/x/2020/01.01.00.00", state="Deleted", reason=["no"])
    loaded = load_archives([archive], SITE_URL)
    messages = [str(p) for p in loaded.problems]
    assert any(
        "example.org/x/2020/01.01.00.00/item.yaml: reason:" in m
        and "expected a sentence saying why the item was removed" in m
        for m in messages
    ), messages


def test_every_page_about_an_item_links_its_record(showcase):
    record = SITE_URL + f"record/{PT_ITEM}/"
    for kind in ("metadata", "file-list"):
        page = parsed(showcase, PAGE_TYPES[kind])
        assert page.all("a", href=record), kind
    alert = parsed(showcase, PAGE_TYPES["alert-deleted"])
    assert alert.all("a", href=SITE_URL + f"record/{GONE}/")
    unavailable = parsed(showcase, PAGE_TYPES["alert-unavailable-en"])
    assert unavailable.all("a", href=SITE_URL + "record/sid.inpe.br/mtc-m19/2013/09.04.12.27.59/")


def test_alert_pages_speak_plainly_in_the_items_language(showcase):
    page = parsed(showcase, PAGE_TYPES["alert-deleted"])
    assert page.all("html", lang="pt")
    title, explanation = i18n.ALERTS["deleted"]["pt"]
    assert f"{title}: Relatório retirado" in page.words and explanation in page.words
    assert "o próprio item" in page.words  # what was asked for, in Portuguese too
    # the resolver's own message stays as the resolver says it, marked as English
    [message] = page.all("p", id="ibistatic-message")
    assert message["lang"] == "en"
    english = parsed(showcase, PAGE_TYPES["alert-unavailable-en"])
    assert english.all("html", lang="en")
    [message] = english.all("p", id="ibistatic-message")
    assert "lang" not in message  # English on an English page
    assert i18n.ALERTS["unavailable"]["en"][1] in english.words


def test_an_alert_page_says_what_was_asked_for_in_its_language():
    from ibistatic.core.relations import parse_modifier

    assert i18n.describe_steps(parse_modifier("!:+(en)"), "pt") == (
        "tradução (en) dos metadados da última edição"
    )
    assert i18n.describe_steps(parse_modifier(""), "pt") == "o próprio item"
    assert i18n.describe_steps(parse_modifier(":"), "en") == "metadata"


def test_alert_links_the_copies_of_a_conflict(tmp_path):
    from ibistatic.archive.load import load_archives
    from ibistatic.core.outcome import Resolution
    from ibistatic.site.pages import Site, target_page
    from ibistatic.targets import PageTarget

    config = load_config(write_showcase_config(tmp_path))
    loaded = load_archives(config.archives, config.site_url)
    item = loaded.holdings.holders(CONFLICT)[0][1]
    resolution = Resolution(None, "conflict", chain=(CONFLICT,), message="two claim it")
    target = PageTarget(CONFLICT, CONFLICT, "", item, resolution)
    page = Parsed(target_page(Site(config), target, loaded))
    for host, archive in (("a", "showcase-a"), ("b", "showcase-b")):
        url = f"http://{host}.example.org/col/{CONFLICT}/doc/report.pdf"
        assert page.all("a", href=url) and f"Copy in {archive} (Original)" in page.words
    assert page.all("a", href=SITE_URL + f"record/{CONFLICT}/")
    assert "More than one original: A report claimed twice" in page.words


# --- file lists -----------------------------------------------------------------------


def test_file_list_gives_size_type_and_sha256(showcase):
    page = parsed(showcase, PAGE_TYPES["file-list"])
    name = "Mapa de uso do solo — São José dos Campos.svg"
    data = (SAMPLE / "mtc-m16d" / PT_ITEM / "doc" / name).read_bytes()
    words = page.words
    assert f"{name} (arquivo padrão) {len(data):,} bytes image/svg+xml" in words
    assert hashlib.sha256(data).hexdigest() in words


def test_file_list_of_an_unreadable_file_says_unknown(tmp_path):
    archive = write_archive(tmp_path / "a", "a.example.org", "example.org/s/2020/01.01.00.00")
    item = write_item(
        archive,
        "example.org/x/2020/01.01.00.00",
        {"a.txt": "x", "b.txt": "y"},
        target="a.txt",
        state="Original",
    )
    from ibistatic.archive.filesums import FileSums
    from ibistatic.site.record import file_rows

    loaded_item = Item(
        "a",
        parse_ibi("example.org/x/2020/01.01.00.00"),
        "Original",
        "2020-01-01T00:00:00Z",
        target="a.txt",
    )
    (item / "doc" / "b.txt").unlink()
    (item / "doc" / "b.txt").symlink_to(item / "doc" / "a.txt")  # never followed
    rows = file_rows(archive, loaded_item, {"a.txt": "u1", "b.txt": "u2"}, FileSums())
    assert [(r.path, r.size, r.default) for r in rows] == [
        ("a.txt", 1, True),
        ("b.txt", None, False),
    ]
    assert rows[0].sha256 == hashlib.sha256(b"x").hexdigest() and rows[1].sha256 is None


# --- identity, languages, templates ---------------------------------------------------


@pytest.mark.parametrize("kind", sorted(PAGE_TYPES))
def test_every_page_shows_the_site_identity(showcase, kind):
    page = parsed(showcase, PAGE_TYPES[kind])
    assert page.all("a", href=IDENTITY["institution-url"])
    assert IDENTITY["institution"] in page.words
    assert IDENTITY["persistence-policy"] in page.words
    assert page.all("a", href="mailto:" + IDENTITY["contact"])
    assert page.all("a", href=IDENTITY["persistence-policy-url"])


def test_the_site_language_is_the_default_of_pages_without_one(showcase, showcase_pt):
    # the landing page has no item: the site's language
    assert parsed(showcase, "index.html").all("html", lang="en")
    assert parsed(showcase_pt, "index.html").all("html", lang="pt")
    # an item in English keeps English on a Portuguese site, and the reverse
    assert parsed(showcase_pt, PAGE_TYPES["record-en"]).all("html", lang="en")
    assert parsed(showcase, PAGE_TYPES["record"]).all("html", lang="pt")
    pt_footer = parsed(showcase_pt, "index.html").words
    assert "Política de persistência" in pt_footer and "Contato" in pt_footer


def test_content_in_another_language_is_marked(showcase_pt, showcase):
    # an item in pt-BR on a page whose interface is pt: no lang needed; an item in a
    # language the interface lacks is marked where its text stands
    assert parsed(showcase, PAGE_TYPES["record"]).all("h1") == [{}]
    assert i18n.page_language("fr", "en") == "en"
    from ibistatic.site.pages import lang_attribute

    assert lang_attribute("fr", "en") == ' lang="fr"' and lang_attribute("pt-BR", "pt") == ""


RESOLVE_JS = Path(__file__).resolve().parent.parent / "ibistatic/site_src/assets/resolve.js"


def _resolve_js(folder: Path, script: str, data) -> object:
    """`script` run under node with ``r`` (resolve.js beside the generated facts.js) and
    ``data`` (JSON); what it prints, as JSON."""
    import shutil
    import subprocess

    from ibistatic.site.assets import facts_script

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (scripts/test.sh installs it)")
    (folder / "facts.js").write_text(facts_script(), encoding="utf-8")
    shutil.copyfile(RESOLVE_JS, folder / "resolve.js")
    program = (
        f"const r = require({json.dumps(str(folder / 'resolve.js'))});"
        "const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        f"console.log(JSON.stringify({script}));"
    )
    done = subprocess.run(
        [node, "-e", program], input=json.dumps(data), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_404_pages_words_come_from_i18n_and_default_to_its_english(tmp_path):
    from ibistatic.core.facts import BROWSER_ALERT_TITLES

    words = {lang: script_words.browser_words(lang) for lang in ("en", "pt")}
    given, default = _resolve_js(tmp_path, "[r.wordsOf({words: data}), r.wordsOf({})]", words["en"])
    assert given == words["en"]
    # without words (redirect pages), the English of i18n, with the titles of core/facts
    assert default == {**words["en"], "titles": BROWSER_ALERT_TITLES, "explanations": {}}
    # the steps, outermost first, joined as each language joins them
    steps = [{"kind": "translation", "param": None}, {"kind": "lastedition", "param": None}]
    steps += [{"kind": "metadata", "param": "oai_dc"}, {"kind": "translation", "param": "en"}]
    said = _resolve_js(
        tmp_path,
        "[data.pt, data.en, null].map((w) => [[], data.steps].map("
        "(steps) => r.describeSteps(steps, r.wordsOf({words: w}))))",
        {**words, "steps": steps},
    )
    english = "translation (en) of the metadata (oai_dc) of the last edition of the translation"
    assert said == [
        ["o próprio item", "tradução (en) dos metadados (oai_dc) da última edição da tradução"],
        ["the item itself", english],
        ["the item itself", english],
    ]


def test_language_names_and_labels():
    assert i18n.language_name("pt-BR", "en") == "Portuguese (Brazil)"
    assert i18n.language_name("pt-BR", "pt") == "Português (Brasil)"
    assert i18n.language_name("xx-YY", "pt") == "xx-YY"
    assert i18n.element_label("creator", "pt") == "Autor"
    assert i18n.element_label("custom", "en") == "custom"
    assert set(i18n.TEXTS["en"]) == set(i18n.TEXTS["pt"])  # every word in both languages
    assert all(set(texts) == set(i18n.LANGUAGES) for texts in i18n.ALERTS.values())


def test_a_template_folder_overrides_the_bundled_template(tmp_path):
    own = tmp_path / "templates"
    own.mkdir()
    (own / "_footer.html").write_text('<footer class="site"><p>Our own footer</p></footer>\n')
    site = build_showcase(tmp_path, "en", templates="templates")
    page = parsed(site, PAGE_TYPES["record"])
    assert "Our own footer" in page.words and IDENTITY["persistence-policy"] not in page.words


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("language", "fr", "language: found 'fr'; expected one of en, pt"),
        (
            "contact",
            "nobody",
            "contact: found 'nobody'; expected an e-mail address or an http(s) URL",
        ),
        (
            "institution-url",
            "www.x.org",
            "institution-url: found 'www.x.org'; expected an absolute http(s) URL",
        ),
        (
            "logo",
            "../x.png",
            "logo: found '../x.png'; expected an http(s) URL or a path relative to site-url",
        ),
        ("institution", ["a"], "institution: found ['a']; expected a text"),
        (
            "templates",
            "missing",
            "templates: found 'missing', which is not a folder; expected a folder of templates",
        ),
    ],
)
def test_identity_keys_are_checked(tmp_path, key, value, expected):
    path = tmp_path / "ibistatic.yaml"
    path.write_text(yaml.safe_dump({"site-url": SITE_URL, "archives": ["a"], key: value}))
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert f"{path}: {expected}" in str(raised.value)


def test_identity_is_read_into_the_configuration(tmp_path):
    config = load_config(write_showcase_config(tmp_path, "pt", logo="logo.svg"))
    assert config.language == "pt"
    assert config.identity == SiteIdentity(
        institution=IDENTITY["institution"],
        institution_url=IDENTITY["institution-url"],
        contact=IDENTITY["contact"],
        logo="logo.svg",
        persistence_policy=IDENTITY["persistence-policy"],
        persistence_policy_url=IDENTITY["persistence-policy-url"],
    )


def test_the_logo_is_shown_with_the_institution_as_its_text(tmp_path):
    from ibistatic.site.pages import Site

    for logo, src in (
        ("img/logo.svg", "/img/logo.svg"),
        ("https://x.org/l.png", "https://x.org/l.png"),
    ):
        config = load_config(write_showcase_config(tmp_path / logo[:5], logo=logo))
        page = Parsed(Site(config).render("landing.html", **_landing()))
        [image] = page.all("img")
        assert image["src"] == src and image["alt"] == IDENTITY["institution"]


def _landing() -> dict:
    return {"archives": [], "states": (), "items": 0, "keys": 0, "urls": 0, "example": None}


def test_a_changed_identity_rebuilds_every_page(tmp_path):
    from ibistatic.site.build import build_site

    build_showcase(tmp_path, "en")
    config = load_config(write_showcase_config(tmp_path, "en", institution="Another"))
    report = build_site(config)
    assert report.mode == "full"
    assert "Another" in parsed(config.output, PAGE_TYPES["record"]).words


# --- harvesters -----------------------------------------------------------------------


def test_record_page_signposting_and_metadata_for_harvesters(showcase):
    page = parsed(showcase, PAGE_TYPES["record"])
    links = {
        (a["rel"], a["href"], a.get("type")) for a in page.all("link") if a["rel"] != "stylesheet"
    }
    persistent = SITE_URL + PT_ITEM
    assert ("cite-as", persistent, None) in links
    assert ("describedby", SITE_URL + f"metadata/{PT_ITEM}/oai_dc.xml", "application/xml") in links
    assert ("type", "https://schema.org/ImageObject", None) in links
    assert any(rel == "item" and kind == "image/svg+xml" for rel, _, kind in links)
    meta = {(m["name"], m["content"]) for m in page.all("meta") if "name" in m}
    assert ("citation_title", 'Mapa "São José" <2014> & outros') in meta
    assert ("citation_author", "Instituto Nacional de Pesquisas Espaciais (INPE)") in meta
    assert ("citation_publication_date", "2014/01/02") in meta
    [ld] = [
        json.loads(body)
        for attrs, body in page.scripts
        if attrs.get("type") == "application/ld+json"
    ]
    assert ld["@type"] == "ImageObject" and ld["@id"] == persistent
    assert ld["name"] == 'Mapa "São José" <2014> & outros' and ld["inLanguage"] == "pt"


def test_signposting_is_one_pure_function_for_pages_and_headers():
    item = Item(
        "a",
        parse_ibi("example.org/x/2020/01.01.00.00"),
        "Original",
        "2020-01-01T00:00:00Z",
        ibip=parse_ibi("8JMKD3MGP8W/35ABCDE"),
        dublin_core=(("type", ("Dataset",)),),
    )
    urls = {"files": {"d.csv": "http://a/d.csv"}, "oai_dc": "https://s/m/oai_dc.xml"}
    links = record_links("https://s/", item, urls)
    assert links[0] == Link("https://s/8JMKD3MGP8W/35ABCDE", "cite-as")
    assert schema_type(item) == "Dataset"
    assert link_header(links[:3]) == (
        '<https://s/8JMKD3MGP8W/35ABCDE>;rel="cite-as",'
        '<https://s/m/oai_dc.xml>;rel="describedby";type="application/xml";'
        'profile="http://www.openarchives.org/OAI/2.0/oai_dc/",'
        '<http://a/d.csv>;rel="item";type="text/csv"'
    )


def test_every_oai_dc_record_carries_its_persistent_urls(showcase):
    records = sorted(showcase.glob("metadata/**/oai_dc.xml"))
    assert records
    for path in records:
        repository = str(path.parent.relative_to(showcase / "metadata"))
        identifiers = [e.text for e in ET.parse(path).getroot() if e.tag.endswith("}identifier")]
        assert SITE_URL + repository in identifiers, path


def test_robots_txt_names_the_sitemap_of_content_pages(showcase):
    robots = (showcase / "robots.txt").read_text()
    assert "User-agent: *\nAllow: /\n" in robots
    assert f"Sitemap: {SITE_URL}sitemap-pages.xml" in robots
    locs = [
        e.text for e in ET.parse(showcase / "sitemap-pages.xml").getroot().iter(SITEMAP + "loc")
    ]
    assert locs[0] == SITE_URL
    assert SITE_URL + f"record/{GONE}/" in locs
    assert SITE_URL + f"metadata/{PT_ITEM}/" in locs and SITE_URL + f"files/{PT_ITEM}/" in locs
    pages = {
        p
        for p in showcase.rglob("index.html")
        if p.parts[len(showcase.parts)] in ("record", "files", "metadata")
    }
    assert len(locs) == len(pages) + 1


def test_an_empty_site_has_no_empty_sitemap(tmp_path):
    from site_helpers import build

    archive = write_archive(
        tmp_path / "a", "a.example.org", "example.org/s/2020/01.01.00.00", service_item=False
    )
    site = build(tmp_path, archives=[archive])
    for name in ("sitemap.xml", "sitemap-pages.xml"):
        locs = [e.text for e in ET.parse(site / name).getroot().iter(SITEMAP + "loc")]
        assert locs == [SITE_URL], name
