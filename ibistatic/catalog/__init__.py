"""The mkdocs catalog of the items an institution holds (docs/catalog.md).

``pages`` computes the Markdown pages from a crawl (pure); ``plugin`` is the mkdocs
plugin ``ibistatic`` that adds them to a documentation site; ``publish`` builds a
stand-alone catalog site for ``ibistatic build`` (``catalog: true``).
"""

from __future__ import annotations

from .pages import catalog_pages, item_page

__all__ = ["catalog_pages", "item_page"]
