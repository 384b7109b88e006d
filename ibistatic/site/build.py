"""``ibistatic build``: the build as one pipeline (docs/architecture.md).

    load -> plan -> render the items -> render the site -> store

:func:`publish` reads top to bottom: the plan (site.plan, pure) says which items are
rendered again and whether the build is full or an update; each item output
(site.item_phase), then each site output (site.site_phase) makes its files; the store
(ibistatic.store) writes those whose bytes changed into a generation nobody serves and
publishes it atomically.  What the build learns (site.facts) is folded into the state
(site.state) for the next update.
:class:`Publisher` keeps the state and the crawl between builds (watch mode).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .. import collector, forked
from ..archive.crawl import CrawlCache
from ..archive.filesums import FileSums
from ..archive.load import LoadedArchives, load_archives, reload_repositories
from ..archive.observe import observing
from ..config import SiteConfig
from ..errors import Problem, need_extra
from ..progress import Progress
from ..store.documents import prune
from ..store.files import digest
from ..store.generations import spare_ahead
from ..store.layout import check_output, live_generation
from ..store.store import Store
from . import outputs, pages
from .facts import carried_digests, fold_facts
from .hosts.checks import published_tree_warnings
from .item_phase import ItemsFailed, render_items
from .outputs import SiteContext
from .outputs.documents import DOCUMENTS_FOLDER
from .plan import Plan, last_published, nothing_to_do, plan_build
from .site_phase import render_site
from .state import State, fingerprint, load_state, save_state
from .unchanged import forget_stamp, save_stamp, unchanged_report

__all__ = ["BuildReport", "Publisher", "build_site", "publish"]

#: how often a build is tried when items fail to render: without them (their last good
#: publication instead), then without those last good publications that failed too
RENDER_TRIES = 3


@dataclass
class BuildReport:
    output: Path
    items: int
    keys: int
    pages: int
    written: int = 0  # files written (all of them for a full build)
    removed: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    mode: str = "full"
    warnings: list[str] = field(default_factory=list)
    #: the crawl cache and build state were saved (else the next build reads all again)
    state_saved: bool = True


def build_site(config: SiteConfig, *, log=None, full: bool = False, progress=None) -> BuildReport:
    """Publish `config`: nothing when the Archives and settings are as the last build saw
    them (site.unchanged), in place when only some items changed since the last build
    of this output, else a whole new tree swapped in atomically (always with `full`).
    `progress`: an ibistatic.progress.Progress (default: none drawn)."""
    started = time.perf_counter()
    with collector.bulk():
        report = _build_site(config, log, full, progress)
    report.seconds = time.perf_counter() - started
    return report


def _build_site(config: SiteConfig, log, full: bool, progress) -> BuildReport:
    if config.catalog:
        need_extra(("mkdocs",), "catalog", "catalog: true (ibistatic.yaml)")
    if not full:
        with forked.using_jobs(config.jobs):  # its lstat calls are shared out
            report = unchanged_report(config, _output_names())
        if report is not None:
            return report
    forget_stamp(config)  # until this build is done, no stamp describes the live site
    with forked.using_jobs(config.jobs), observing(config.archives) as observation:
        report = Publisher(config, log, progress=progress).build(full=full)
        report.warnings.extend(published_tree_warnings(config))  # the chosen hosts' limits
        if report.state_saved:
            save_stamp(config, _output_names(), observation(), report)
    return report


# -- the pipeline -------------------------------------------------------------------------


def publish(
    config: SiteConfig,
    loaded: LoadedArchives,
    last: State | None,
    progress: Progress,
    log: Callable[[str], None],
    file_sums: FileSums | None = None,
    keep_memo: bool = False,
) -> tuple[BuildReport, State]:
    """Publish `loaded` as an update of the site `last` describes (None: a full build);
    returns the report and the state of what is now published.  `file_sums`: the
    checksums the file lists take, kept between builds (none: every file is read).
    `keep_memo` (watch): the site outputs run in this process, so that what they keep
    in the state's memo serves the next republish; a state read from disk, whose memo
    is empty, has them run once even when nothing changed (nothing is written then).
    It also has an update serve its items' pages at new paths (a deposit's) as soon as
    they are made, in a generation of their own, before the site-wide files."""
    plan = plan_build(loaded, last)
    if _already_published(plan, loaded, last, keep_memo):
        return _report(config, loaded, last, plan, 0, 0, list(last.notices)), last
    state = (
        last
        if not plan.full
        else State(fingerprint(config, loaded), {}, {}, {}, {}, {}, plan.digits)
    )
    site = pages.Site(config, file_sums)
    with _open_store(config.output, plan, state, early=keep_memo) as store:
        progress.phase("resolving and rendering", len(plan.rendered()))
        facts = render_items(config, site, loaded, plan, store, progress)
        store.carry(*carried_digests(state, plan.affected))  # the pages no change reached
        item_pages = len(store.digests)  # every file so far is an item's page
        touched = fold_facts(loaded, state, plan, facts)
        del facts  # in the state now
        progress.phase("index and site-wide files")
        context = _site_context(config, site, loaded, state, touched, log, keep_memo)
        made = render_site(plan, context, store, keep=keep_memo)
        publication, removed = store.commit()
    store.finish(publication)
    _published(state, publication, store, made, item_pages)
    return _report(config, loaded, state, plan, store.written, removed, made.notices), state


def _published(state: State, publication, store: Store, made, item_pages: int) -> None:
    """`state` made that of what `publication` now serves."""
    state.generation, state.spare, state.behind = (
        publication.generation,
        publication.spare,
        publication.behind,
    )
    state.digests, state.site_files, state.checksums = (
        store.digests,
        tuple(made.site_files),
        made.checksums,
    )
    state.pages, state.notices = item_pages + made.pages, tuple(made.notices)
    state.outputs = _output_names()


def _already_published(plan: Plan, loaded, last: State | None, keep_memo: bool) -> bool:
    """Whether `last` publishes `loaded` as is (plan.nothing_to_do), by the same outputs;
    never for watch while the state's memo is empty (read from disk): its site outputs
    run once to fill it, writing nothing."""
    if last is None or last.outputs != _output_names() or (keep_memo and not last.memo):
        return False
    return nothing_to_do(plan, loaded, last)


def _output_names() -> tuple[str, ...]:
    """The outputs a build runs: an update that would run others is never a no-op."""
    return tuple(output.name for output in (*outputs.ITEM_OUTPUTS, *outputs.SITE_OUTPUTS))


def _report(config, loaded, state: State, plan: Plan, written: int, removed: int, notices):
    return BuildReport(
        output=config.output,
        items=sum(len(v) for v in state.items.values()),
        keys=len(state.records),
        pages=state.pages,
        written=written,
        removed=removed,
        problems=loaded.problems,
        mode=plan.describe(),
        warnings=list(notices),
    )


def _open_store(output: Path, plan: Plan, state: State, early: bool) -> Store:
    """`early` (watch): an update serves its items' new pages (a deposit's) as soon as
    they are made, before the site-wide files (Store.publish_new)."""
    if plan.full:
        return Store.full(output)
    return Store.update(output, state.publication(), state.digests, early)


def _site_context(
    config, site, loaded, state: State, touched: set[str], log, kept: bool = False
) -> SiteContext:
    return SiteContext(config, site, loaded, state, frozenset(touched), log, kept)


# -- between builds -----------------------------------------------------------------------


class Publisher:
    """Publishes one configuration; keeps the last build's state for the next update."""

    def __init__(
        self,
        config: SiteConfig,
        log: Callable[[str], None] | None = None,
        keep_last_good: bool = True,
        progress=None,
    ) -> None:
        self.config = config
        self.progress = progress or Progress(enabled=False)
        #: an item whose descriptor turns invalid keeps what the last build of this
        #: output published of it (False: it is left out, as on a first build)
        self.keep_last_good = keep_last_good
        self.log = log or (lambda message: None)
        self.cache = CrawlCache(config.cache_dir / "crawl.pickle")
        self.file_sums = FileSums(config.cache_dir / "file-sums.pickle")
        self.state: State | None = None
        self._state_path = config.cache_dir / "site-state.pickle"
        self._loaded: LoadedArchives | None = None  # the last crawl, for targeted re-reads
        #: repository key -> why this build's last try could not render it, and those
        #: whose last good publication failed too (left out)
        self._failed: dict[str, str] = {}
        self._withdrawn: set[str] = set()
        #: write the state file after every build; watch keeps it in memory and saves on stop
        self.persist = True
        self._warnings: list[str] = []  # about the state file, for the next report

    def build(self, full: bool = False, changed_paths: set[str] | None = None) -> BuildReport:
        """Update in place when the last build's state matches the output, else build whole.

        `changed_paths` (watch mode): the files and folders that changed since the last
        build of this Publisher; only the repositories they name are read again.
        """
        self._failed.clear()
        with forked.using_jobs(self.config.jobs), collector.bulk():
            for _ in range(RENDER_TRIES - 1):
                try:
                    return self._build(full, changed_paths)
                except ItemsFailed as failure:  # again without them (load_archives)
                    self._withdrawn.update(self._failed.keys() & failure.failed.keys())
                    self._failed.update(failure.failed)
            return self._build(full, changed_paths)

    def _build(self, full: bool, changed_paths: set[str] | None) -> BuildReport:
        started = time.perf_counter()
        check_output(self.config)
        # a full build reads every descriptor and file again, whatever the caches say
        self.cache.trusted = self.file_sums.trusted = not full
        loaded = self._load(full, changed_paths)
        # saved now (beside the build when large), the crawl cache and file sums leave
        # memory for the rest of the build (in every worker too); watch
        # keeps both for its next republish
        with self.cache.saved() if self.persist else nullcontext():
            report = self._publish(loaded, full)
        if full:  # the copies of documents no generation links (store/documents.py)
            prune(self.config.cache_dir / DOCUMENTS_FOLDER)
        self.progress.finish()
        # the crawl cache was saved after the crawl and the file sums after the file lists
        # (watch saves both on stop, save_state): a second try would only warn twice
        report.state_saved = not (self.cache.warnings or self._warnings)
        report.warnings.extend(self.cache.warnings + self.file_sums.warnings + self._warnings)
        self.cache.warnings, self.file_sums.warnings, self._warnings = [], [], []
        report.seconds = time.perf_counter() - started
        return report

    def _publish(self, loaded: LoadedArchives, full: bool) -> BuildReport:
        """publish() `loaded` over the last state, then save the new one (not watch)."""
        self.file_sums.save_early = self.persist
        try:
            last = None if full else self._usable_state(loaded)
            if last is None:  # a full build: the old state (as large as the one it makes)
                self.state = None  # is let go before building, once the crawl has used it
            before = last.generation if last is not None else None
            report, self.state = publish(
                self.config,
                loaded,
                last,
                self.progress,
                self.log,
                self.file_sums,
                keep_memo=not self.persist,  # watch: the next republish is near
            )
            # the same generation still live: nothing published, the saved state holds
            if self.persist and self.state.generation != before:
                self.progress.phase("saving the build state")  # seconds in a large build: named
                self._warn(save_state(self._state_path, self.state))
            if not self.persist:  # watch: the next republish writes into a spare made now
                ahead = spare_ahead(self.config.output, self.state.publication())
                self.state.spare, self.state.behind = ahead.spare, ahead.behind
        except BaseException:
            # the state no longer matches this crawl: the next build must read everything
            # (a targeted re-read would only see the paths changed after this failure), and
            # it may be half updated: the next build reads the saved one, or builds whole
            self._loaded = None
            self.state = None
            raise
        return report

    def _load(self, full: bool, changed_paths: set[str] | None) -> LoadedArchives:
        """The Archives: only the repositories under `changed_paths` read again when the
        last crawl is at hand, else all of them (the crawl cache skips unchanged ones)."""
        previous = self._previous_state(whole=not full)
        keep = self.keep_last_good and previous is not None
        last_good = partial(previous.last_good, self._withdrawn) if keep else None
        last_archive = previous.last_archive if keep else None
        # a newcomer never takes an IBI this output published (ibistatic.core.storage)
        published = last_published(previous.items) if previous is not None else None
        self.progress.phase("crawling archives")
        loaded = None
        if changed_paths is not None and not full and self._loaded is not None and not self._failed:
            # None when a path needs a whole crawl (an archive.yaml, a path outside every archive)
            loaded = reload_repositories(
                self._loaded, changed_paths, self.cache, last_good, published
            )
        if loaded is None:
            loaded = load_archives(
                self.config.archives,
                self.config.site_url,
                self.cache,
                progress=self.progress.advance,
                expect=self.progress.expect,
                last_good=last_good,
                published=published,
                last_archive=last_archive,
                failed=self._failed,
            )
        self._loaded = loaded
        return loaded

    def _usable_state(self, loaded: LoadedArchives) -> State | None:
        state = self.state or self._read_state()
        output = self.config.output
        if state is None or not state.generation or live_generation(output) != state.generation:
            return None  # nothing to compare with, or the live tree is not what it describes
        if state.fingerprint != fingerprint(self.config, loaded):
            return None
        manifest = output / "index" / "manifest.json"
        if not manifest.is_file() or digest(manifest.read_bytes()) != state.digests.get(
            "index/manifest.json"
        ):
            return None  # the output is not what this state published
        return state

    def save_state(self) -> None:
        """Write the crawl cache, the file sums and the last build's state (watch mode,
        on stop)."""
        self.cache.save()
        self.file_sums.save()
        if self.state is not None:
            self._warn(save_state(self._state_path, self.state))

    def _previous_state(self, whole: bool = True) -> State | None:
        """What the last build of this output published (kept in memory, else read from
        the cache folder, so it holds across restarts); None before a first build.
        Not `whole` (a full build): only its items are read, and it is not kept."""
        state = self.state
        if state is None:
            state = self._read_state(items_only=not whole)
            if whole:
                self.state = state
        if state is None or state.output != str(self.config.output):
            return None  # a state of another output
        return state

    def _read_state(self, items_only: bool = False) -> State | None:
        state, warning = load_state(self._state_path, items_only)
        self._warn(warning)
        return state

    def _warn(self, warning: str | None) -> None:
        if warning is not None:
            self._warnings.append(warning)
