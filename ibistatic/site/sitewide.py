"""The pages of the whole site (docs/site.md): the landing page, ``404.html``, the
sitemaps and ``robots.txt``.

Two sitemaps: ``sitemap.xml`` lists every emitted persistent URL that redirects (what a
link checker or a mirror walks), ``sitemap-pages.xml`` the pages with content of their
own (the landing page, every record, metadata and file-list page), which ``robots.txt``
names for search engines.  Past 50,000 URLs (the sitemaps.org limit) a sitemap becomes an
index of parts; it is never an empty ``<urlset>`` (which the schema forbids).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from urllib.parse import quote

from markupsafe import escape

from ..core.facts import URL_PATH_SAFE
from ..store.files import batched
from .pages import Site, persistent_url, script_json
from .script_words import browser_words

__all__ = [
    "SITEMAP_LIMIT",
    "CONTENT_SITEMAP",
    "landing",
    "UrlSet",
    "sitemap_files",
    "redirect_urls",
    "content_urls",
    "robots",
    "not_found_page",
    "special_pages",
]

#: URLs per sitemap file (the sitemaps.org limit); more make a sitemap an index.
SITEMAP_LIMIT = 50_000
#: the sitemap of the pages with content, the one robots.txt names
CONTENT_SITEMAP = "sitemap-pages.xml"


def published_in_order(published: Mapping[str, Sequence]) -> Iterator:
    """Every PublishedUrl of `published` (State.published), by repository key."""
    return (url for key in sorted(published) for url in published[key])


def landing(site: Site, loaded, published: Mapping[str, Sequence], keys: int) -> str:
    """The landing page; `published`: the PublishedUrls of each repository key
    (State.published); `keys`: the distinct index keys of the items (State.key_count).
    Counted and searched as they are, not joined into one list: a list of every URL
    would cost each watch republish a pass over the whole site."""
    counts = loaded.state_counts
    archives = [
        {"name": info.name, "address": info.address, "counts": counts[info.name]}
        for info in loaded.infos
    ]
    # an example with a page of its own (any other form is resolved by 404.html)
    in_order = published_in_order(published)
    example = next((t for t in in_order if t.url and t.modifier == ":(oai_dc)"), None)
    return site.render(
        "landing.html",
        archives=archives,
        states=("Original", "Copy", "Deleted"),
        items=sum(sum(c.values()) for c in counts.values()),
        keys=keys,
        urls=sum(map(len, published.values())),
        example=persistent_url(site.site_url, example.path) if example else None,
    )


class UrlSet:
    """How a sitemap's ``<url>`` rows are written: the template sitemap.xml renders
    `urls` as a head, ``before + url + after`` for each URL and a tail, so a part is
    those strings joined, its rows made once (watch keeps them between republishes) and
    never passed through Jinja again.  A site's own sitemap.xml that does anything else
    is rendered by Jinja, its rows being the URLs themselves."""

    def __init__(self, site: Site, name: str = "sitemap.xml") -> None:
        self.site, self.name = site, name
        self.parts = _loop_parts(site, name)

    def row(self, url: str) -> str:
        if self.parts is None:
            return url
        return self.parts[1] + str(escape(url)) + self.parts[2]

    def text(self, rows: Sequence[str]) -> str:
        if self.parts is None:
            return self.site.render(self.name, urls=rows)
        return self.parts[0] + "".join(rows) + self.parts[3]


def _loop_parts(site: Site, name: str) -> tuple[str, str, str, str] | None:
    """(head, before, after, tail) such that the template `name` with `urls` renders
    head + (before + url + after for each url) + tail; None when it does not."""
    stand_ins = [f"https://stand-in.invalid/{n}" for n in range(3)]
    texts = [site.render(name, urls=stand_ins[:count]) for count in range(4)]
    one, two = texts[1], texts[2]
    at = one.find(stand_ins[0])
    if at < 0 or two.find(stand_ins[0]) != at:
        return None
    between = two[at + len(stand_ins[0]) : two.find(stand_ins[1])]  # after + before
    for cut in range(len(between) + 1):
        after, before = between[:cut], between[cut:]
        head, tail = one[: at - len(before)], one[at + len(stand_ins[0]) + len(after) :]
        parts = (head, before, after, tail)
        if one[:at].endswith(before) and all(
            text == head + "".join(before + url + after for url in stand_ins[:count]) + tail
            for count, text in enumerate(texts)
        ):
            return parts
    return None


def sitemap_files(
    urlset: UrlSet, name: str, rows: Iterable[str], limit: int
) -> Iterator[tuple[str, str]]:
    """(path, text) of `name`: a urlset of `rows` (UrlSet.row), or past `limit` an index
    of ``sitemaps/<stem>-<n>.xml`` (of ``sitemaps/<n>.xml`` for sitemap.xml, as
    before).  `rows` are read as the parts are written, so a full build never holds
    all of them (every row held with its part's text made the sitemaps' worker the
    build's largest process)."""
    parts = batched(rows, limit)
    first = next(parts, ())
    second = next(parts, None)
    if second is None:
        yield name, urlset.text(first)
        return
    stem = name.removesuffix(".xml")
    prefix = "" if stem == "sitemap" else stem + "-"
    site = urlset.site
    names = []
    for number, part in enumerate(itertools.chain([first, second], parts), 1):
        names.append(f"sitemaps/{prefix}{number}.xml")
        yield names[-1], urlset.text(part)
    index = [site.site_url + part_name for part_name in names]
    yield name, site.render("sitemap_index.xml", urls=index)


def redirect_urls(site_url: str, published: Iterable) -> list[str]:
    """What sitemap.xml lists of one item's PublishedUrls: those that redirect (alert
    pages are noindex)."""
    return [persistent_url(site_url, t.path) for t in published if t.url is not None]


def content_urls(site_url: str, paths: Iterable[str]) -> list[str]:
    """What sitemap-pages.xml lists of one item's pages (its record, metadata and
    file-list pages: what the build remembers of it): their folders' URLs, sorted."""
    pages = {path.removesuffix("index.html") for path in paths if path.endswith("/index.html")}
    return [site_url + quote(page, safe=URL_PATH_SAFE) for page in sorted(pages)]


def robots(site: Site) -> str:
    """robots.txt: everything may be crawled; the pages with content are in the sitemap."""
    return site.render("robots.txt", sitemap=site.site_url + CONTENT_SITEMAP)


def not_found_page(site: Site) -> str:
    """404.html in the site's language; its script (resolve.js) gets the words it writes."""
    config = {"base": site.base, "site": site.site_url, "words": browser_words(site.language)}
    return site.render("404.html", config=script_json(config))


def special_pages(site: Site, loaded, published: Mapping[str, Sequence], keys: int, writer) -> None:
    """404.html, the landing page and robots.txt, given the PublishedUrls of each
    repository key and the number of distinct index keys."""
    writer.write("404.html", not_found_page(site))
    writer.write("index.html", landing(site, loaded, published, keys))
    writer.write("robots.txt", robots(site))
