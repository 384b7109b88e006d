"""``sitemap.xml``: every persistent URL that redirects (past 50,000, an index of
``sitemaps/<n>.xml``)."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import pages
from .collect import Collected


class Sitemap:
    name = "sitemap"
    pages = True
    remembered = False

    def files(self, plan, context) -> Iterator[File]:
        made = Collected()
        pages.sitemaps(context.site, context.published, made, pages.SITEMAP_LIMIT)
        yield from made.files


OUTPUT = Sitemap()
