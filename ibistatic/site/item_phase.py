"""The items' phase of a build: resolve the rendered items and make their outputs' files
(site.build).

From ``store.PARALLEL_ITEMS`` items on, the items are shared among forked workers
(Store.render) ``CHUNK_KEYS`` repositories at a time, each writing its files straight
into the new generation and sending back its chunk's facts (site.facts): a worker holds
the resolutions and URLs of one chunk, not of all its items.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from functools import partial

from ..errors import PublishError, failure
from ..store.files import Files
from ..store.store import Store
from ..targets import page_targets
from . import outputs
from .facts import Facts, PagePaths, facts_of
from .outputs import ItemContext
from .plan import Plan
from .record import ItemUrls
from .site_phase import put_checked

__all__ = ["CHUNK_KEYS", "ItemsFailed", "render_items"]


class ItemsFailed(PublishError):
    """Items whose resolving or rendering failed (repository key -> why): the build is
    done again without them (site.build.Publisher), so they cost only themselves."""

    def __init__(self, failed: dict[str, str]) -> None:
        shown = ", ".join(sorted(failed)[:5]) + (" ..." if len(failed) > 5 else "")
        super().__init__(f"{len(failed):,} item(s) could not be rendered: {shown}")
        self.failed = failed


def render_items(config, site, loaded, plan: Plan, store: Store, progress) -> Facts:
    """The item outputs of the plan's rendered items (in forked workers when many)."""
    facts = Facts()
    site.file_sums.known  # read before forking: every worker shares one copy,
    loaded.views()  # and the views (each counts its Archive's languages, over every item)
    work = partial(_render_share, config, site, loaded, plan)
    for part in store.render(plan.rendered(), work, progress, CHUNK_KEYS):
        facts.merge(part)
        del part  # before the next is read: one part at a time in memory
    if facts.failed:
        raise ItemsFailed(facts.failed)
    site.file_sums.keep(facts.file_sums, whole=plan.full)
    facts.file_sums = {}  # kept there (or saved and let go): not held to the build's end
    site.file_sums.settle()
    return facts


#: the items resolved and rendered together: a forked worker's chunk (Store.render)
CHUNK_KEYS = 1000


def _render_share(
    config, site, loaded, plan: Plan, keys: list[str], files: Files, tick
) -> Iterator[Facts]:
    """Resolve the items `keys`, put their outputs' files into `files`; yields their
    facts a chunk at a time (a forked worker sends each to the parent and lets go of it)."""
    for start in range(0, len(keys), CHUNK_KEYS):
        chunk = keys[start : start + CHUNK_KEYS]
        try:
            facts = _render_chunk(config, site, loaded, plan, chunk, files, tick)
        except Exception as error:  # noqa: BLE001 - found again item by item
            if not _items_own(error):
                raise
            facts = _render_one_by_one(config, site, loaded, plan, chunk, files)
        facts.file_sums = site.file_sums.take_seen()  # a forked worker's go with its facts
        yield facts


def _render_one_by_one(config, site, loaded, plan: Plan, keys: list[str], files: Files) -> Facts:
    """The facts of `keys` rendered one at a time, with the failures named: the build
    (site.build.Publisher) then publishes those items as their last good publication,
    or leaves them out.  Only a chunk that failed comes here."""
    facts = Facts()
    for key in keys:
        try:
            facts.merge(_render_chunk(config, site, loaded, plan, [key], files, lambda: None))
        except Exception as error:  # noqa: BLE001 - one item's failure is its own
            if not _items_own(error):
                raise
            facts.failed[key] = failure(error)
    return facts


#: what writing a file can fail with because of the name an item gave it
_NAME_ERRORS = frozenset({errno.ENAMETOOLONG, errno.EINVAL, errno.EILSEQ})


def _items_own(error: Exception) -> bool:
    """Whether `error` may be an item's own failure: anything but a failure of the output
    (a full disk, a read-only folder), which is the build's."""
    return not isinstance(error, OSError) or error.errno in _NAME_ERRORS


def _render_chunk(config, site, loaded, plan: Plan, keys: list[str], files: Files, tick) -> Facts:
    targets = _resolved(config, loaded, plan, keys, tick)
    urls_of = ItemUrls(loaded)  # the index records, file lists and record pages share them
    context = ItemContext(config, site, loaded, keys, targets, urls_of)
    facts = facts_of(loaded, plan, targets, urls_of)
    remembered: dict[str, list[str]] = {}
    for output in outputs.ITEM_OUTPUTS:
        for file in output.files(plan, context):
            if put_checked(files, file) and output.remembered:
                remembered.setdefault(file.owner, []).append(file.path)
    facts.item_files = {key: PagePaths.of(key, paths) for key, paths in remembered.items()}
    return facts


def _resolved(config, loaded, plan: Plan, keys: list[str], tick) -> dict[str, list]:
    """repository key -> its PageTargets (its persistent URLs, resolved), in order."""
    targets: dict[str, list] = {}
    first_holders = [plan.items[key][0][0] for key in keys]
    for target in page_targets(
        loaded, config.modifiers, loaded.views(), first_holders=first_holders
    ):
        key = target.item.key
        if key not in targets:
            tick()
            targets[key] = []
        targets[key].append(target)
    return targets
