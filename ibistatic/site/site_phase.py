"""The site-wide phase of a build: each site output once, after the items (site.build).

In a full build of a large site, the outputs marked ``apart`` (the index, sitemaps,
search and host files: the costly ones) run in forked workers side by side
(Store.render_apart), the others here; what they made is merged in the outputs' order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial

from ..store.files import File, Notice, Tree
from ..store.store import Store
from . import outputs, pages
from .outputs import SiteContext
from .plan import Plan

__all__ = ["SiteMade", "render_site", "put_checked"]


def put_checked(files, file: File) -> bool:
    """`files.put(file)`, once the path is known to stay inside the site."""
    pages.check_relative(file.path)  # never a path out of the site, whatever an archive holds
    return files.put(file)


@dataclass
class SiteMade:
    """What the site outputs made, for the state and the report."""

    pages: int = 0
    site_files: list[str] = field(default_factory=list)  # what an update makes again whole
    checksums: dict[str, str] = field(default_factory=dict)  # index file -> its sha256
    notices: list[str] = field(default_factory=list)
    trees: list[Tree] = field(default_factory=list)  # made whole when the store commits

    def add(self, other: SiteMade) -> None:
        self.pages += other.pages
        self.site_files += other.site_files
        self.checksums.update(other.checksums)
        self.notices += other.notices
        self.trees += other.trees


def render_site(
    plan: Plan,
    context: SiteContext,
    store: Store,
    keep: bool = False,
) -> SiteMade:
    """The site outputs' files: the costly ones (`apart`) each in a forked process of a
    full build, beside the others here; merged in the outputs' order either way.  With
    `keep` (watch), all of them here: what they keep in the state's memo (site.memo)
    stays for the next republish, which then costs what it changes."""
    left = list(outputs.SITE_OUTPUTS)
    apart = sorted(  # the costliest first: the workers take the next one left
        (output for output in left if getattr(output, "apart", 0)),
        key=lambda output: -output.apart,
    )
    here = [output for output in left if output not in apart]
    made_apart = (
        None
        if keep
        else store.render_apart(
            apart, partial(_made_apart, plan, context), len(context.state.items)
        )
    )
    if made_apart is None:  # an update, a small site, or no fork: all of them here
        here, made = left, {}
    else:  # the forked ones first: their workers see nothing the parent puts after
        made = dict(zip(apart, made_apart))
    for output in here:
        made[output] = _made_by(plan, context, output, store)
    total = SiteMade()
    for output in outputs.SITE_OUTPUTS:
        total.add(made[output])
    for tree in total.trees:
        store.add_tree(tree)
    return total


def _made_apart(plan: Plan, context: SiteContext, output, files) -> SiteMade:
    """_made_by in a forked worker, which then lets go of what the output kept in the
    state's memo: that serves the next republish of one process (watch), and the worker's
    next output would be made on top of it (the search's memory under the sitemaps was
    the build's peak)."""
    made = _made_by(plan, context, output, files)
    context.state.memo.pop(output.name, None)
    return made


def _made_by(plan: Plan, context: SiteContext, output, files) -> SiteMade:
    """One site output's files, put into `files` (the store, or a forked worker's)."""
    return _put_all(output.files(plan, context), output, files)


def _put_all(things: Iterable, output, files) -> SiteMade:
    """What `output` yielded (files, trees, notices), put into `files`."""
    made = SiteMade()
    for thing in things:
        if isinstance(thing, Notice):
            made.notices.append(thing.text)
        elif isinstance(thing, Tree):
            made.trees.append(thing)
        elif put_checked(files, thing):
            made.pages += output.pages
            made.site_files.append(thing.path)
            if thing.checksum is not None:
                made.checksums[thing.path] = thing.checksum
    return made
