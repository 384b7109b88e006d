"""``catalog/``: the mkdocs catalog of the Archives (``catalog: true``), made again whole
by a full build and by an update in which an item changed."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

from ...store.files import Tree


class Catalog:
    name = "catalog"
    pages = False
    remembered = False

    def files(self, plan, context) -> Iterator[Tree]:
        if context.config.catalog and (plan.full or plan.changed):
            yield Tree("catalog", partial(_build, context))


def _build(context, folder: Path) -> None:
    from ...catalog.publish import build_catalog  # mkdocs is loaded only for a catalog

    context.log(f"catalog: {build_catalog(context.config, folder, context.loaded)} pages")


OUTPUT = Catalog()
