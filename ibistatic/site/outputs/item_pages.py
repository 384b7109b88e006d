"""File-list pages and metadata pages (inline Dublin Core: HTML and oai_dc) of each item
held, first holder first (a Deleted item has none)."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import pages
from .collect import Collected


class ItemPages:
    name = "file lists and metadata pages"
    pages = True
    remembered = True

    def files(self, plan, context) -> Iterator[File]:
        for key in context.keys:
            for item, _ in plan.items[key]:
                if item.state != "Deleted":
                    yield from _pages_of(context, key, item)


def _pages_of(context, key: str, item) -> list[File]:
    made = Collected(key)
    pages.item_pages(context.site, made, item, context.urls(item))
    return made.files


OUTPUT = ItemPages()
