"""``sitemap.xml``: every persistent URL that redirects; ``sitemap-pages.xml``: the
pages with content (landing, record, metadata and file-list pages), which robots.txt
names.  Past 50,000 URLs each is an index of parts in ``sitemaps/``."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import sitewide
from .collect import Collected


class Sitemap:
    name = "sitemaps"
    pages = True
    remembered = False
    apart = True  # costly at scale: a full build makes it in a forked process of its own

    def files(self, plan, context) -> Iterator[File]:
        made = Collected()
        sitewide.sitemaps(context.site, context.published, made, sitewide.SITEMAP_LIMIT)
        item_files = context.state.item_files.values()
        sitewide.content_sitemap(context.site, item_files, made, sitewide.SITEMAP_LIMIT)
        yield from made.files


OUTPUT = Sitemap()
