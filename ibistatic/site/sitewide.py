"""The pages of the whole site (docs/site.md): the landing page, ``404.html``, the
sitemaps and ``robots.txt``.

Two sitemaps: ``sitemap.xml`` lists every emitted persistent URL that redirects (what a
link checker or a mirror walks), ``sitemap-pages.xml`` the pages with content of their
own (the landing page, every record, metadata and file-list page), which ``robots.txt``
names for search engines.  Past 50,000 URLs (the sitemaps.org limit) a sitemap becomes an
index of parts; it is never an empty ``<urlset>`` (which the schema forbids).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from urllib.parse import quote

from ..core.facts import URL_PATH_SAFE
from .pages import Site, persistent_url, script_json
from .script_words import browser_words

__all__ = [
    "SITEMAP_LIMIT",
    "CONTENT_SITEMAP",
    "landing",
    "sitemaps",
    "content_sitemap",
    "content_urls",
    "robots",
    "not_found_page",
    "special_pages",
]

#: URLs per sitemap file (the sitemaps.org limit); more make a sitemap an index.
SITEMAP_LIMIT = 50_000
#: the sitemap of the pages with content, the one robots.txt names
CONTENT_SITEMAP = "sitemap-pages.xml"


def landing(site: Site, loaded, published: Sequence) -> str:
    counts: dict[str, Counter] = {info.name: Counter() for info in loaded.infos}
    keys: set[str] = set()
    for item in loaded.holdings.all_items():
        counts[item.archive][item.state] += 1
        keys.update(item.keys())
    archives = [
        {"name": info.name, "address": info.address, "counts": counts[info.name]}
        for info in loaded.infos
    ]
    # an example with a page of its own (any other form is resolved by 404.html)
    example = next((t for t in published if t.url and t.modifier == ":(oai_dc)"), None)
    return site.render(
        "landing.html",
        archives=archives,
        states=("Original", "Copy", "Deleted"),
        items=sum(sum(c.values()) for c in counts.values()),
        keys=len(keys),
        urls=len(published),
        example=persistent_url(site.site_url, example.path) if example else None,
    )


def _write_sitemap(site: Site, name: str, urls: list[str], writer, limit: int) -> int:
    """`name`: a urlset of `urls`, or past `limit` an index of ``sitemaps/<stem>-<n>.xml``
    (of ``sitemaps/<n>.xml`` for sitemap.xml, as before)."""
    if len(urls) <= limit:
        return int(writer.write(name, site.render("sitemap.xml", urls=urls)))
    stem = name.removesuffix(".xml")
    prefix = "" if stem == "sitemap" else stem + "-"
    parts = [urls[start : start + limit] for start in range(0, len(urls), limit)]
    names = [f"sitemaps/{prefix}{number}.xml" for number in range(1, len(parts) + 1)]
    for part_name, part in zip(names, parts):
        writer.write(part_name, site.render("sitemap.xml", urls=part))
    index = [site.site_url + part_name for part_name in names]
    writer.write(name, site.render("sitemap_index.xml", urls=index))
    return len(parts) + 1


def sitemaps(site: Site, published: Sequence, writer, limit: int) -> int:
    """sitemap.xml: every emitted persistent URL that redirects (alert pages are noindex);
    the landing page when there is none (a urlset may not be empty)."""
    urls = [persistent_url(site.site_url, t.path) for t in published if t.url is not None]
    return _write_sitemap(site, "sitemap.xml", urls or [site.site_url], writer, limit)


def content_urls(site_url: str, item_files: Iterable[Sequence[str]]) -> list[str]:
    """The landing page, then the URL of each HTML page of the items (record, metadata,
    file list: what the build remembers of each item), sorted."""
    pages = set()
    for paths in item_files:
        for path in paths:
            if path.endswith("/index.html"):
                pages.add(site_url + quote(path.removesuffix("index.html"), safe=URL_PATH_SAFE))
    return [site_url] + sorted(pages)


def content_sitemap(site: Site, item_files: Iterable[Sequence[str]], writer, limit: int) -> int:
    return _write_sitemap(
        site, CONTENT_SITEMAP, content_urls(site.site_url, item_files), writer, limit
    )


def robots(site: Site) -> str:
    """robots.txt: everything may be crawled; the pages with content are in the sitemap."""
    return site.render("robots.txt", sitemap=site.site_url + CONTENT_SITEMAP)


def not_found_page(site: Site) -> str:
    """404.html in the site's language; its script (resolve.js) gets the words it writes."""
    config = {"base": site.base, "site": site.site_url, "words": browser_words(site.language)}
    return site.render("404.html", config=script_json(config))


def special_pages(site: Site, loaded, published: Sequence, writer) -> None:
    """404.html, the landing page and robots.txt, given every PublishedUrl."""
    writer.write("404.html", not_found_page(site))
    writer.write("index.html", landing(site, loaded, published))
    writer.write("robots.txt", robots(site))
