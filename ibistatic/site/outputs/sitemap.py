"""``sitemap.xml``: every persistent URL that redirects; ``sitemap-pages.xml``: the
pages with content (landing, record, metadata and file-list pages), which robots.txt
names.  Past 50,000 URLs each is an index of parts in ``sitemaps/``.

Each repository's rows are made once and kept in the state's memo (site.memo): a
republish makes the rows of the items it rendered and joins the others' as they were."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from ...store.files import File
from .. import sitewide
from ..memo import CHANGES, PerRepository
from .collect import Collected


class Sitemap:
    name = "sitemaps"
    pages = True
    remembered = False
    #: forked in a full build, the costliest first: every page's URL (about 2.5 s at 100k)
    apart = 1

    def files(self, plan, context) -> Iterator[File]:
        site, state = context.site, context.state
        urlset = sitewide.UrlSet(site)
        redirects, contents = _rows_of(state.memo, urlset)
        landing = [urlset.row(site.site_url)]  # a urlset is never empty
        made = Collected()
        limit = sitewide.SITEMAP_LIMIT
        changes = state.memo.get(CHANGES)
        published = redirects.joined(state.published, changes)
        sitewide.write_sitemap(urlset, "sitemap.xml", published or landing, made, limit)
        rows = landing + contents.joined(state.item_files, changes)
        sitewide.write_sitemap(urlset, sitewide.CONTENT_SITEMAP, rows, made, limit)
        yield from made.files


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
