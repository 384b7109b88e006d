"""``404.html`` (with the in-browser resolver of every other form) and the landing page."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import pages
from .collect import Collected


class SitePages:
    name = "404 and landing pages"
    pages = True
    remembered = False

    def files(self, plan, context) -> Iterator[File]:
        made = Collected()
        pages.special_pages(context.site, context.loaded, context.published, made)
        yield from made.files


OUTPUT = SitePages()
