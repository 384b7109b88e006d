"""Redirect pages and alert pages: ``<path>/index.html`` of every persistent URL an item
publishes (a redirect page when the resolver answers with a URL, else an alert page)."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import pages


class RedirectPages:
    name = "redirect and alert pages"
    pages = True
    remembered = False  # the state's published URLs name them

    def files(self, plan, context) -> Iterator[File]:
        for key, targets in context.targets.items():
            for target in targets:
                yield File(
                    target.path + "/index.html",
                    pages.target_page(context.site, target, context.loaded),
                    owner=key,
                )


OUTPUT = RedirectPages()
