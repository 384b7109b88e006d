"""``sitemap.xml``: every persistent URL that redirects; ``sitemap-pages.xml``: the
pages with content (landing, record, metadata and file-list pages), which robots.txt
names.  Past 50,000 URLs each is an index of parts in ``sitemaps/``.

In watch, each repository's rows are made once and kept in the state's memo
(site.memo): a republish makes the rows of the items it rendered and joins the others'
as they were.  A build writes the rows as it makes them, a part at a time."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import partial

from ...store.files import File
from .. import sitewide
from ..memo import CHANGES, PerRepository


class Sitemap:
    name = "sitemaps"
    pages = True
    remembered = False
    #: forked in a full build, the costliest first: every page's URL
    apart = 1

    def files(self, plan, context) -> Iterator[File]:
        site, state = context.site, context.state
        urlset = sitewide.UrlSet(site)
        landing = [urlset.row(site.site_url)]  # a urlset is never empty
        if context.kept:  # watch: each repository's rows kept for the next republish
            redirects, contents = _rows_of(state.memo, urlset)
            changes = state.memo.get(CHANGES)
            published = redirects.joined(state.published, changes) or landing
            pages = landing + contents.joined(state.item_files, changes)
        else:  # made as written, never all held
            published = _or(_streamed(urlset, state.published, sitewide.redirect_urls), landing)
            pages = itertools.chain(
                landing, _streamed(urlset, state.item_files, sitewide.content_urls)
            )
        limit = sitewide.SITEMAP_LIMIT
        for name, rows in (("sitemap.xml", published), (sitewide.CONTENT_SITEMAP, pages)):
            for path, text in sitewide.sitemap_files(urlset, name, rows, limit):
                yield File(path, text)


def _streamed(urlset: sitewide.UrlSet, table: dict, urls_of) -> Iterator[str]:
    """The rows of every entry of `table`, in key order, as PerRepository joins them."""
    site_url = urlset.site.site_url
    for key in sorted(table):
        for url in urls_of(site_url, table[key]):
            yield urlset.row(url)


def _or(rows: Iterator[str], instead: list[str]) -> Iterator[str]:
    """`rows`, or `instead` when there are none."""
    first = next(rows, None)
    return iter(instead) if first is None else itertools.chain([first], rows)


def _rows_of(memo: dict, urlset: sitewide.UrlSet) -> tuple[PerRepository, PerRepository]:
    """The rows of each repository in sitemap.xml and in sitemap-pages.xml, as kept."""
    kept = memo.get(Sitemap.name)
    if kept is None or kept[0] != (urlset.parts, urlset.site.site_url):
        site_url = urlset.site.site_url

        def rows(urls_of, entry) -> list[str]:
            return [urlset.row(url) for url in urls_of(site_url, entry)]

        kept = memo[Sitemap.name] = (
            (urlset.parts, site_url),
            PerRepository(partial(rows, sitewide.redirect_urls)),
            PerRepository(partial(rows, sitewide.content_urls)),
        )
    return kept[1], kept[2]


OUTPUT = Sitemap()
