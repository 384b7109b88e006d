"""``404.html`` (with the in-browser resolver of every other form), the landing page and
``robots.txt``."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import sitewide
from .collect import Collected


class SitePages:
    name = "404, landing page and robots.txt"
    pages = True
    remembered = False

    def files(self, plan, context) -> Iterator[File]:
        made = Collected()
        sitewide.special_pages(
            context.site, context.loaded, context.state.published, context.state.key_count, made
        )
        yield from made.files


OUTPUT = SitePages()
