"""Rendering the static site's pages (docs/site.md).

Every emitted persistent URL gets ``out/<path>/index.html`` (a directory per URL, so
every static host serves ``/<path>`` and ``/<path>/``): a redirect page when the
resolver answers with a URL, an alert page (noindex) when it answers with an alert.
Around them: ``404.html`` with ``assets/resolve.js`` (the in-browser resolver of every
other form), the metadata pages of items with inline Dublin Core (free-format HTML and
an ``oai_dc`` record), the file-list pages, the landing page and the sitemap.

Escaping is done twice, separately: jinja2 autoescaping for HTML text and attributes,
and :func:`script_json` for data read by scripts (JSON in a non-executed
``<script type="application/json">`` block, never concatenated into code).

The output is deterministic (no build time, sorted JSON) and rendering is one pass over
the targets with templates compiled once per process.  The persistent-URL pages, which
are most of a site, are filled in from a :class:`Skeleton` of their template: the same
bytes jinja2 renders, at a fraction of its cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import jinja2
from markupsafe import Markup

import ibistatic

from ..archive.filesums import FileSums
from ..core.exports import beside
from ..core.facts import ALERT_TEXTS, DC_ELEMENTS, URL_PATH_SAFE
from ..core.relations import describe_relation, parse_modifier
from ..core.urls import base_path
from ..errors import IbistaticError
from ..index.sharding import canonical_key
from . import fastjinja, i18n, record, signposting
from .script import PAGE_POLICY, target_script
from .skeleton import Skeleton

__all__ = [
    "SITE_SRC",
    "check_relative",
    "DC_ELEMENTS",
    "ALERT_TEXTS",
    "Site",
    "target_page",
    "item_pages",
    "site_file",
    "script_json",
    "persistent_url",
    "base_path",
    "oai_dc_elements",
]

SITE_SRC = Path(ibistatic.__file__).resolve().parent / "site_src"

# What ends a JSON string's safety in HTML ("</script>", "<!--"), and U+2028/U+2029.
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}

_NOT_INSIDE = frozenset(("", ".", ".."))  # path segments that may lead out of the site
# XML 1.0 Char: what an XML document may hold at all (control characters may not).
XML_CHAR_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


#: one encoder for every page (json.dumps with options makes one per call)
_SCRIPT_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def script_json(value) -> Markup:
    """`value` as JSON that is safe verbatim inside ``<script type="application/json">``."""
    text = _SCRIPT_ENCODER.encode(value)
    # five memchr, not a character class's search: a third of its time on a target URL
    special = "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text
    return Markup(text.translate(_SCRIPT_ESCAPES) if special else text)


def persistent_url(site_url: str, path: str) -> str:
    """The absolute persistent URL of a target path (percent-encoded as RFC 3986 asks)."""
    return site_url + quote(path, safe=URL_PATH_SAFE)


def oai_dc_elements(
    dublin_core: Iterable[tuple[str, Sequence[str]]], identifiers: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(element, value) pairs of the 15 DC elements, in schema order, the persistent URLs
    `identifiers` first among the ``identifier``s; other keys are left out, and characters
    XML cannot hold are dropped."""
    given: dict[str, list[str]] = {"identifier": list(identifiers)}
    for key, values in dublin_core:
        if key.lower() in DC_ELEMENTS:
            given.setdefault(key.lower(), []).extend(values)
    return [
        (element, XML_CHAR_INVALID.sub("", value))
        for element in DC_ELEMENTS
        for value in given.get(element, ())
    ]


@lru_cache(maxsize=4)
def _environment(sources: tuple[Path, ...]) -> jinja2.Environment:
    """One environment per process and template folders (the first found wins: a site's
    own `templates` folder, then the bundled ones): templates are compiled once."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(source) for source in sources]),
        autoescape=jinja2.select_autoescape(["html", "xml"], default_for_string=True),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
    )
    environment.template_class = fastjinja.Template
    return environment


@lru_cache(maxsize=None)
def _texts(lang: str) -> fastjinja.Texts:
    """The words of `lang` as templates read them (``t.word``)."""
    return fastjinja.Texts(i18n.TEXTS[lang])


def check_relative(relative: str) -> None:
    """A path inside the output: no empty, '.' or '..' segment, no backslash or NUL
    (the segments in one set test, not a loop: every path written is checked)."""
    if not _NOT_INSIDE.isdisjoint(relative.split("/")) or "\\" in relative or "\x00" in relative:
        raise IbistaticError(
            f"refusing to write {relative!r}: expected a path inside the site (no empty, '.' or "
            "'..' segment, no backslash or NUL)"
        )


def site_file(site_url: str, url: str | None) -> str | None:
    """Where in the output a URL of the site lives ('files/x/index.html'); None for a
    URL outside the site."""
    if not url or not url.startswith(site_url):
        return None
    relative = unquote(urlsplit(url[len(site_url) :]).path)
    if relative == "" or relative.endswith("/"):
        relative += "index.html"
    return relative


#: the variables of redirect.html and alert.html (the conditions of alert.html test
#: `chain` and `archive`; redirect.html tests `modifier`)
_TARGET_FIELDS = (
    "heading",
    "ibi",
    "modifier",
    "meaning",
    "persistent",
    "url",
    "archive",
    "data",
    "record",
)
_ALERT_FIELDS = _TARGET_FIELDS + (
    "alert",
    "alert_title",
    "explanation",
    "message",
    "chain",
    "links",
)


def template_folders(config) -> tuple[Path, ...]:
    """Where the templates of `config` come from, the first found wins."""
    own = getattr(config, "templates", None)
    return (own, SITE_SRC) if own is not None else (SITE_SRC,)


class Site:
    """What every template needs, computed once per build."""

    def __init__(self, config, file_sums: FileSums | None = None) -> None:
        self.env = _environment(template_folders(config))
        #: the sizes and SHA-256 of the Archives' files, kept between builds
        self.file_sums = file_sums if file_sums is not None else FileSums()
        self.site_url: str = config.site_url
        self.base = base_path(config.site_url)
        self.language: str = config.language
        self.identity = config.identity
        self.catalog: bool = config.catalog  # the landing page links it only when published
        #: Archive name -> its folder (its files' sizes and checksums for the file lists)
        self.roots = {path.name: path for path in config.archives}
        self._meanings: dict[str, str] = {}
        self._skeletons: dict[tuple, Skeleton] = {}
        # fill() renders a site's own template: it may test what a skeleton only marks
        filled = ("redirect.html", "alert.html", "_alert_links.html")
        self.skeletal = {n: fastjinja.all_bundled(self.env, n, SITE_SRC) for n in filled}
        # one file of assets/, never inline (site/script.py)
        self.script = Markup(f'<script src="{self.base}assets/{target_script()[0]}"></script>')
        self.policy = Markup(f'<meta http-equiv="Content-Security-Policy" content="{PAGE_POLICY}">')

    def constants(self, lang: str | None) -> dict:
        """What every page of the interface language `lang` (None: the site's) shares."""
        lang = lang or self.language
        return {
            "base": self.base,
            "site_url": self.site_url,
            "script": self.script,
            "csp": self.policy,
            "identity": self.identity,
            "lang": lang,
            "t": _texts(lang),
            "signposting": (),
            "catalog": self.catalog,
        }

    def template(self, name: str, lang: str | None = None) -> jinja2.Template:
        """`name` as the pages of `lang` (None: the site's) are rendered with: compiled
        once per process and language (fastjinja.flattened)."""
        return fastjinja.flattened(self.env, name, SITE_SRC, _texts(lang or self.language))

    def render(self, name: str, lang: str | None = None, **context) -> str:
        return self.template(name, lang).render(**{**self.constants(lang), **context})

    def fill(
        self, name: str, fields: Sequence[str], context: dict, tested: dict, lang: str | None = None
    ) -> str:
        """`name` in `lang` with `context`: from its skeleton for the outcome `tested` of
        its conditions (the variables it tests), or rendered if it is a site's own."""
        if not self.skeletal[name]:
            return self.render(name, lang, **context)
        key = (name, lang, tuple(bool(value) for value in tested.values()))
        skeleton = self._skeletons.get(key)
        if skeleton is None:
            falsy = {n: v for n, v in tested.items() if not v}
            constants = {**self.constants(lang), **falsy}
            skeleton = self._skeletons[key] = Skeleton(
                self.template(name, lang), [f for f in fields if f not in falsy], constants
            )
        return skeleton.fill(context)

    def meaning(self, modifier: str, lang: str = "en") -> str:
        """What `modifier` asks for, in the words of Table 6.2 (English) or of `lang`."""
        found = self._meanings.get((modifier, lang))
        if found is None:
            relation = parse_modifier(modifier)
            said = (
                describe_relation(relation) if lang == "en" else i18n.describe_steps(relation, lang)
            )
            found = self._meanings[(modifier, lang)] = said
        return found


def _resolution_data(resolution) -> dict:
    """What the page's script needs of `resolution`, without the null and empty values
    (the script reads a missing one as such): a redirect page carries only its URL."""
    found = {"url": resolution.url, "alert": resolution.alert, "message": resolution.message}
    return {name: value for name, value in found.items() if value}


def target_page(site: Site, target, loaded=None) -> str:
    """The redirect page, or the alert page, of one emitted persistent URL (`loaded`:
    the Archives, for the alert page's links to the copies and the record page)."""
    resolution = target.resolution
    title = target.item.title()
    data = {
        "base": site.base,
        **_resolution_data(resolution),
    }
    if target.negotiation:
        data["negotiation"] = [{"tag": tag, **_resolution_data(r)} for tag, r in target.negotiation]
    context = {
        "heading": title or target.ibi,
        "ibi": target.ibi,
        "modifier": target.modifier,
        "meaning": site.meaning(target.modifier),
        "persistent": persistent_url(site.site_url, target.path),
        "url": resolution.url,
        "archive": resolution.archive,
        "data": script_json(data),
        "record": record.record_url(site.site_url, target.item.key),
    }
    if resolution.url is not None:
        return site.fill("redirect.html", _TARGET_FIELDS, context, {"modifier": target.modifier})
    lang = i18n.page_language(target.item.language, site.language)
    alert_title, explanation = i18n.ALERTS[resolution.alert][lang]
    context.update(
        meaning=site.meaning(target.modifier, lang),
        alert=resolution.alert,
        alert_title=alert_title,
        explanation=explanation,
        message=resolution.message,
        chain=" → ".join(resolution.chain),
        links=_alert_links(site, target, loaded, lang),
    )
    tested = {"chain": context["chain"], "archive": resolution.archive}
    return site.fill("alert.html", _ALERT_FIELDS, context, tested, lang)


def _alert_links(site: Site, target, loaded, lang: str) -> Markup:
    """What exists of an alert's item: its copies (for a conflict or no original) and
    its record page; the item is the last IBI the resolver asked, when held."""
    subject = target.item
    copies: list = []
    if loaded is not None and target.resolution.chain:
        held = loaded.holdings.holders(canonical_key(target.resolution.chain[-1]))
        if held:
            subject = record.representative([item for _, item in held])
            if target.resolution.alert in ("conflict", "no-original"):
                copies = [h for h in record.holders(loaded, subject.key) if h.url]
    link = record.record_url(site.site_url, subject.key)
    if copies:
        return Markup(site.render("_alert_links.html", lang, copies=copies, record=link))
    # most alerts (`:` of an item without metadata): from a skeleton, not jinja2
    return Markup(
        site.fill("_alert_links.html", ("record",), {"record": link}, {"copies": ()}, lang)
    )


def _file_list(site: Site, writer, item, urls: dict, common: dict) -> int:
    relative = site_file(site.site_url, urls.get("list"))
    if relative is None:
        return 0  # the Archive lists files elsewhere (its file-list-url)
    files = urls.get("files", {})
    rows = record.file_rows(site.roots.get(item.archive), item, files, site.file_sums)
    text = site.render("filelist.html", files=rows, canonical=urls["list"], **common)
    return int(writer.write(relative, text))


def _metadata(site: Site, writer, item, urls: dict, common: dict) -> int:
    written = 0
    forms = [
        persistent_url(site.site_url, ibi.text)
        for ibi in (item.repository, item.ibip)
        if ibi is not None
    ]
    html = site_file(site.site_url, urls.get("metadata"))
    if html is not None:
        lang = common["lang"]
        elements = record.dublin_core_rows(item, lang)
        written += writer.write(
            html,
            site.render(
                "metadata.html",
                elements=elements,
                forms=forms,
                canonical=urls["metadata"],
                **common,
            ),
        )
    xml = site_file(site.site_url, urls.get("oai_dc"))
    if xml is not None:
        elements = oai_dc_elements(item.dublin_core, identifiers=forms[::-1])
        written += writer.write(xml, site.render("oai_dc.xml", elements=elements))
        # the files for reference managers beside it (core.exports)
        for name, text in record.export_texts(site.site_url, item).items():
            written += writer.write(beside(xml, name), text)
    return written


def lang_attribute(content: str | None, page: str) -> Markup:
    """` lang="…"` for text in the language `content` on a page in `page` ("" if alike)."""
    if not content or content.split("-", 1)[0].lower() == page:
        return Markup("")
    return Markup(' lang="{}"').format(content)


def item_pages(site: Site, writer, item, urls: dict) -> None:
    """The file-list page and, for inline Dublin Core, the metadata pages of `item`
    (those of its `urls` that point into the site), in the item's language."""
    lang = i18n.page_language(item.language, site.language)
    common = {
        "repository": item.repository.text,
        "title": item.title(),
        "persistent": persistent_url(site.site_url, item.repository.text),
        "archive": item.archive,
        "lang": lang,
        "item_lang": lang_attribute(item.language, lang),
        "record": record.record_url(site.site_url, item.key),
        "signposting": signposting.metadata_links(site.site_url, item),
    }
    _file_list(site, writer, item, urls, common)
    _metadata(site, writer, item, urls, common)
