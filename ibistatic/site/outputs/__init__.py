"""The outputs of a build: each one module behind :class:`Output`, listed once below.

An output says which files of the site it makes from the build's plan and a context; the
store (ibistatic.store) decides whether and how they are written.  *Item outputs* make the
pages of the items a build renders (in forked workers for a large site; their context
holds those items' resolved persistent URLs); *site outputs* make the files of the whole
site afterwards (their context holds what the state knows of every item).  Adding an
output kind is one new module and one line here (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from ...archive.load import LoadedArchives
from ...config import SiteConfig
from ...core.model import Item
from ...store.files import File, Notice, Tree
from ..pages import Site
from ..plan import Plan
from ..sitewide import published_in_order
from ..state import State
from . import (
    assets,
    catalog,
    documents,
    host_files,
    index_files,
    item_pages,
    record_pages,
    redirect_pages,
    search,
    site_pages,
    sitemap,
)

__all__ = [
    "Output",
    "ItemContext",
    "SiteContext",
    "ITEM_OUTPUTS",
    "SITE_OUTPUTS",
    "File",
    "Tree",
    "Notice",
]


@dataclass(frozen=True)
class ItemContext:
    """What an item output renders from: a share of the plan's rendered items."""

    config: SiteConfig
    site: Site
    loaded: LoadedArchives
    keys: list[str]  # the repositories of this share, sorted
    targets: dict[str, list]  # repository key -> its PageTargets (ibistatic.targets), in order
    urls: Callable[[Item], dict]  # an item's item_urls, made once (site.record.ItemUrls)


@dataclass(frozen=True)
class SiteContext:
    """What a site output renders from: the whole site as the state now knows it."""

    config: SiteConfig
    site: Site
    loaded: LoadedArchives
    state: State  # its tables already those of this build (site.facts.fold_facts)
    touched: frozenset[str]  # the index keys whose records or answers may have changed
    log: Callable[[str], None]
    #: the outputs run where what they keep (state.memo) serves the next republish
    #: (watch): worth keeping more than a single build needs
    kept: bool = False

    @cached_property
    def published(self) -> list:
        """Every PublishedUrl, by repository key: made when an output first asks (the
        bundled ones read state.published by key; the list is a cost of each watch
        republish that the others need not pay)."""
        return list(published_in_order(self.state.published))


class Output(Protocol):
    #: what it makes, for people (docs, errors)
    name: str
    #: its files are pages (counted in the build's report)
    pages: bool
    #: the state remembers which files of each item it made (an update re-makes or
    #: removes them); the persistent-URL pages are known from the published URLs instead
    remembered: bool

    #: optional, `apart = N` (its cost, 1 the least): in a full build it runs in a forked
    #: process beside the other such outputs, the costliest taken first (it must yield
    #: no Tree: a Tree's maker is not sent back)

    def files(self, plan: Plan, context) -> Iterable[File | Tree | Notice]:
        """The files, trees and notices of this output, one at a time."""
        ...


#: rendered for each item of the plan, in this order (the first file of a path wins)
ITEM_OUTPUTS: tuple[Output, ...] = (
    redirect_pages.OUTPUT,
    item_pages.OUTPUT,
    record_pages.OUTPUT,
    documents.OUTPUT,
)
#: rendered once for the whole site, after the items, in this order
SITE_OUTPUTS: tuple[Output, ...] = (
    index_files.OUTPUT,
    site_pages.OUTPUT,
    sitemap.OUTPUT,
    search.OUTPUT,
    host_files.OUTPUT,
    assets.OUTPUT,
    catalog.OUTPUT,
)
