"""Publishing the site: a full build swapped in atomically, or an incremental update that
rewrites only the files whose bytes change.

Both run the same generation: the files of a set of *affected* items (their persistent-URL
pages, file-list and metadata pages, their index records and precomputed answers), then
the site-wide files (shards touched, manifest, 404 page, landing page, sitemap, host
redirect files).  The output is a link to one of two generations of the site (layout in
:mod:`.outputs`).  A full build generates everything into a new generation and points the
link at it (:mod:`.swap`).  An update generates the affected items only, compares every
file with the digest the last build recorded, and writes the changed files into the
*spare* generation, then points the link at it: the spare is the live tree of the build
before, so it is first brought level with the live one by hard links to the files the
last update changed (the state's ``behind``).  Each update costs what changed, and the
served tree is always one whole build.  The rule, checked by the tests, is that an
update gives the same tree as a full build of the same input.

Which items are affected by a change: the changed items themselves and every item that
reaches one of them through references (next-edition, metadata, translations), because
resolution only ever consults items reachable that way.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path

from .. import forked
from ..archive.crawl import CrawlCache
from ..archive.load import LoadedArchives, load_archives
from ..core.storage import LastPublished
from ..config import SiteConfig
from ..errors import Problem, PublishError
from ..pickles import Untrusted, load_sealed, save_sealed
from ..index.writer import dumps, encoded_record, index_files, precomputed_answers, shard_digits
from ..index.sharding import shard_name
from .outputs import check_output, generations, live_generation, write_marker
from .swap import clean_folder, clone_tree, discard, point, remove_file, remove_stale, sync_paths

__all__ = ["Publisher", "BuildReport", "STATE_VERSION"]

STATE_VERSION = 7
#: items from which a full build resolves and renders in forked processes (ibistatic.forked)
PARALLEL_ITEMS = 5000
DIGEST_SIZE = 16
#: in the state's `behind`: the catalog folder, made again whole by an update
CATALOG = "catalog"


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

    def summary(self) -> str:
        errors = sum(1 for p in self.problems if p.severity == "error")
        warnings = len(self.problems) - errors + len(self.warnings)  # host-file warnings are printed too
        return (
            f"published {self.output} ({self.mode}): {self.items} items, {self.keys} IBIs, "
            f"{self.pages} pages, {self.written} files written, {self.removed} removed, "
            f"{errors} errors, {warnings} warnings in {self.seconds:.2f} s"
        )


@dataclass
class _State:
    """What the last build published, to compare the next one with."""

    fingerprint: tuple
    items: dict[str, tuple]  # repository key -> ((item, files), ...) over the Archives, in order
    published: dict[str, tuple]  # repository key -> its PublishedUrls (the pages it has)
    #: index key -> [(archive, packed item record)] in the Archives' order
    records: dict[str, list]
    answers: dict[str, dict]  # repository key -> {index key -> packed precomputed answers}
    digests: dict[str, bytes]  # relative path -> _digest of the file's bytes
    digits: int = 1
    item_files: dict[str, list] = field(default_factory=dict)  # repository key -> its file-list/metadata pages
    #: index key named by a reference (next-edition, metadata, translations) -> the
    #: repository keys of the items naming it: who must be rendered again when it changes
    reverse: dict[str, frozenset[str]] = field(default_factory=dict)
    key_count: int = 0  # distinct index keys of `items`
    #: index file (path inside index/) -> the sha256 checksums.json lists for it
    checksums: dict[str, str] = field(default_factory=dict)
    #: the files not of one item (index, 404, landing page, sitemaps, host files)
    site_files: tuple[str, ...] = ()
    generation: str = ""  # the generation (outputs.py) this state describes: the live one
    spare: str = ""  # the other generation, the tree of the build before; "" if none
    #: the paths where the spare differs from the live generation (None: not known)
    behind: frozenset[str] | None = None
    #: the Archives published (archive.yaml validated): kept when one breaks
    infos: tuple = ()


#: the _State fields saved in chunks (ibistatic.pickles)
_LARGE_FIELDS = ("items", "published", "records", "answers", "digests", "item_files", "reverse")


@dataclass
class _Rendered:
    """What rendering a set of items gives back (from a forked worker: pickled, so
    plain tuples, strings and bytes rather than targets, items or resolutions)."""

    published: dict[str, tuple] = field(default_factory=dict)  # repository key -> PublishedUrls
    answers: dict[str, dict] = field(default_factory=dict)  # repository key -> {index key -> packed answers}
    records: dict[str, list] = field(default_factory=dict)  # repository key -> [(index key, archive, packed record)]
    item_files: dict[str, list] = field(default_factory=dict)  # repository key -> its file-list/metadata pages
    digests: dict[str, bytes] = field(default_factory=dict)
    written: int = 0
    files: dict[str, bytes] = field(default_factory=dict)  # when not written straight to disk


def _digest(data: bytes) -> bytes:
    return _kept(hashlib.sha256(data))


def _kept(sha256) -> bytes:
    """What tells a file's bytes from the last build's: 16 bytes of their sha256 (a
    100,000-item site keeps 700,000 of these; hex strings would take 44 MiB more)."""
    return sha256.digest()[:DIGEST_SIZE]


def _fingerprint(config: SiteConfig, loaded: LoadedArchives) -> tuple:
    from ..site import pages

    templates = sorted((str(p.relative_to(pages.SITE_SRC)), p.stat().st_mtime_ns) for p in pages.SITE_SRC.rglob("*") if p.is_file())
    return (STATE_VERSION, config.site_url, str(config.output), config.modifiers, tuple(loaded.infos), tuple(templates))


def _holdings_by_key(loaded: LoadedArchives) -> dict[str, tuple]:
    found: dict[str, list] = {}
    for item in loaded.holdings.all_items():
        found.setdefault(item.key, []).append((item, item.files))
    return {key: tuple(value) for key, value in found.items()}


def _held(loaded: LoadedArchives, key: str) -> tuple:
    """((item, files), ...) of the repository `key` over the Archives, in order."""
    holdings = loaded.holdings
    return tuple(
        (item, item.files) for info in holdings.archives
        if (item := holdings.by_archive[info.name].get(key)) is not None and item.key == key
    )


def _patched_items(loaded: LoadedArchives, items: dict[str, tuple]) -> dict[str, tuple]:
    """`items` (the last build's) with the repositories `loaded.touched` read again."""
    patched = dict(items)
    for key in loaded.touched:
        held = _held(loaded, key)
        if held:
            patched[key] = held
        else:
            patched.pop(key, None)
    return patched


def _last_published(items: dict[str, tuple]) -> LastPublished:
    """Who held each IBI in the build that published `items` (read only on a clash)."""
    return LastPublished(lambda: (item for held in items.values() for item, _ in held))


def _same_holdings(held: tuple | None, other: tuple | None) -> bool:
    """Equal items, spelled alike on disk: a repository name's equality ignores case, but
    its pages and file URLs do not (a case variant that takes over a withdrawn holder's
    IBI changes them)."""
    return held == other and [item.repository.text for item, _ in held or ()] == [item.repository.text for item, _ in other or ()]


def _index_keys(held: tuple) -> set[str]:
    return {k for item, _ in held for k in item.keys()}


def _named(held: tuple) -> set[str]:
    """The index keys the items of one repository refer to."""
    named = set()
    for item, _ in held:
        for ibi in (item.next_edition, item.metadata, *(ibi for _, ibi in item.translations)):
            if ibi is not None:
                named.add(ibi.key)
    return named


def _references(items: dict[str, tuple]) -> dict[str, frozenset[str]]:
    """index key -> repository keys of the items naming it."""
    reverse: dict[str, set[str]] = {}
    for key, held in items.items():
        for named in _named(held):
            reverse.setdefault(named, set()).add(key)
    return {named: frozenset(keys) for named, keys in reverse.items()}


def _patched_references(reverse: dict[str, frozenset[str]], old: dict[str, tuple], new: dict[str, tuple], keys: Iterable[str]) -> dict[str, frozenset[str]]:
    """`reverse` (of `old`) made that of `new`, where only the repositories `keys` differ."""
    patched = dict(reverse)
    for key in keys:
        before, after = _named(old.get(key, ())), _named(new.get(key, ()))
        for named in before - after:
            patched[named] = patched[named] - {key}
            if not patched[named]:
                del patched[named]
        for named in after - before:
            patched[named] = patched.get(named, frozenset()) | {key}
    return patched


def _affected(changed: set[str], reverse: dict[str, frozenset[str]], index_keys: Callable[[str], set[str]]) -> set[str]:
    """`changed` and every repository that reaches one of them through references
    (`index_keys(repository key)`: the keys a repository is named by, before or after)."""
    affected = set(changed)
    frontier = list(changed)
    while frontier:
        for named in index_keys(frontier.pop()):
            for referrer in reverse.get(named, ()):
                if referrer not in affected:
                    affected.add(referrer)
                    frontier.append(referrer)
    return affected


class _Output:
    """Collects generated files; keeps only those whose bytes differ from `digests`.

    With `direct`, a differing file is written there at once instead of being kept in
    memory (a full build into its staging tree: memory stays flat however large the site).
    """

    def __init__(self, digests: dict[str, bytes], direct: Path | None = None) -> None:
        self.old = digests
        self.direct = str(direct) if direct is not None else None
        self.files: dict[str, bytes] = {}
        self.digests: dict[str, bytes] = {}
        self.written = 0
        self._made: set[str] = set()
        #: the files put since site_wide_phase(): those of no single item
        self.site_wide: list[str] | None = None

    def site_wide_phase(self) -> None:
        self.site_wide = []

    def keep(self, relative: str, digest: bytes) -> None:
        """An unchanged file, not made again: its digest carries over."""
        self.digests[relative] = digest
        if self.site_wide is not None:
            self.site_wide.append(relative)

    def put(self, relative: str, data: bytes | str) -> None:
        data = data.encode("utf-8") if isinstance(data, str) else data
        self.digests[relative] = _digest(data)
        if self.site_wide is not None:
            self.site_wide.append(relative)
        if self.old.get(relative) == self.digests[relative]:
            return
        self.written += 1
        if self.direct is None:
            self.files[relative] = data
            return
        path = os.path.join(self.direct, *relative.split("/"))
        directory = os.path.dirname(path)
        if directory not in self._made:
            _make_directory(directory)
            self._made.add(directory)
        _write_new(path, data)

    def put_lines(self, relative: str, lines: Iterable[str]) -> None:
        """A large text file, one line after another; straight into the staging tree a
        batch of lines at a time (never whole in memory), else as put()."""
        if self.direct is None:  # an update: compared with the last digest first
            self.put(relative, "".join(line + "\n" for line in lines))
            return
        digest = hashlib.sha256()
        path = os.path.join(self.direct, *relative.split("/"))
        _make_directory(os.path.dirname(path))
        with open(path, "wb") as handle:
            for batch in _batched(lines, 10000):
                data = "".join(line + "\n" for line in batch).encode("utf-8")
                digest.update(data)
                handle.write(data)
        self.keep(relative, _kept(digest))
        self.written += 1


def _batched(iterable: Iterable, size: int) -> Iterator[tuple]:
    iterator = iter(iterable)
    while batch := tuple(itertools.islice(iterator, size)):
        yield batch


def _make_directory(directory: str) -> None:
    """mkdir, and its parents only when it fails: most pages' parents exist already, and
    makedirs would stat each of them first (the disk is most of a build's time)."""
    try:
        os.mkdir(directory)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
    except FileExistsError:
        pass


def _write_new(path: str, data: bytes) -> None:
    """Write a file in the staging tree with the fewest system calls (no buffered file object)."""
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # as open() does, less the umask
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
    except OSError as error:  # os.write names no file: name it for the message
        raise OSError(error.errno, error.strerror, path) from None
    finally:
        os.close(handle)


class _PagesWriter:
    """The writer interface of site.pages, into an _Output (first write of a path wins)."""

    def __init__(self, output: _Output) -> None:
        self.output = output
        self.written: set[str] = set()
        self.order: list[str] = []  # what this writer wrote, in order

    def write(self, relative: str, text: str) -> bool:
        if relative in self.written:
            return False
        from .pages import _check_relative

        _check_relative(relative)  # never a path out of the site, whatever an archive holds
        self.written.add(relative)
        self.order.append(relative)
        self.output.put(relative, text)
        return True


class Publisher:
    """Publishes one configuration; keeps the last build's state for the next update."""

    def __init__(self, config: SiteConfig, log: Callable[[str], None] | None = None, keep_last_good: bool = True, progress=None) -> None:
        from ..progress import Progress

        self.config = config
        self.progress = progress or Progress(enabled=False)
        #: an item whose descriptor turns invalid keeps what the last build of this
        #: output published of it (False: it is left out, as on a first build)
        self.keep_last_good = keep_last_good
        self.log = log or (lambda message: None)
        self.cache = CrawlCache(config.cache_dir / "crawl.pickle")
        self.state: _State | None = None
        self._state_path = config.cache_dir / "site-state.pickle"
        self._loaded: LoadedArchives | None = None  # the last crawl, for targeted re-reads
        #: write the state file after every build; watch keeps it in memory and saves on stop
        self.persist = True
        self._warnings: list[str] = []  # about the state file, for the next report


    # -- entry points ------------------------------------------------------------------

    def build(self, full: bool = False, changed_paths: set[str] | None = None) -> BuildReport:
        """Update in place when the last build's state matches the output, else build whole.

        `changed_paths` (watch mode): the files and folders that changed since the last
        build of this Publisher; only the repositories they name are read again.
        """
        started = time.perf_counter()
        check_output(self.config)
        previous = self._previous_state()
        last_good = self._last_good if self.keep_last_good and previous is not None else None
        last_archive = self._last_archive if last_good is not None else None
        # a newcomer never takes an IBI this output published (ibistatic.core.storage)
        published = _last_published(previous.items) if previous is not None else None
        self.progress.phase("crawling archives")
        loaded = None
        if changed_paths is not None and not full and self._loaded is not None:
            loaded = self._reload(changed_paths, last_good, published)
        if loaded is None:
            loaded = load_archives(
                self.config.archives, self.config.site_url, self.cache, progress=self.progress.advance,
                last_good=last_good, published=published, last_archive=last_archive,
            )
        self._loaded = loaded
        try:
            state = None if full else self._usable_state(loaded)
            report = self._update(loaded, state) if state is not None else self._full(loaded)
        except BaseException:
            # the state no longer matches this crawl: the next build must read everything
            # (a targeted re-read would only see the paths changed after this failure), and
            # it may be half updated: the next build reads the saved one, or builds whole
            self._loaded = None
            self.state = None
            raise
        self.progress.finish()
        if self.persist:
            self.cache.save()
        report.warnings.extend(self.cache.warnings + self._warnings)
        self.cache.warnings, self._warnings = [], []
        report.seconds = time.perf_counter() - started
        return report

    # -- full build --------------------------------------------------------------------

    def _full(self, loaded: LoadedArchives) -> BuildReport:
        output = self.config.output
        folder = generations(output)
        live = live_generation(output)
        items = _holdings_by_key(loaded)
        key_count = _key_count(items)
        state = _State(_fingerprint(self.config, loaded), {}, {}, {}, {}, {}, shard_digits(key_count), key_count=key_count)
        state.reverse = _references(items)
        staging = folder / f"staging-{os.getpid()}"
        with _publishing(output, staging):
            folder.mkdir(parents=True, exist_ok=True)
            remove_stale(output)
            clean_folder(folder, {live} if live else set())
            staging.mkdir()
            generated = self._generate(loaded, state, items, set(items), set(items), direct=staging)
            _copy_assets(staging)
            write_marker(staging)
            self._catalog(staging / CATALOG)
            state.generation = _publish_generation(staging, output)
        clean_folder(folder, {state.generation})  # the previous generations, in the background
        self._remember(state, items, generated)
        return self._report(loaded, state, "full", generated.written, 0, generated)

    # -- incremental update ----------------------------------------------------------------

    def _usable_state(self, loaded: LoadedArchives) -> _State | None:
        state = self.state or self._load_state()
        output = self.config.output
        if state is None or not state.generation or live_generation(output) != state.generation:
            return None  # nothing to compare with, or the live tree is not what it describes
        if state.fingerprint != _fingerprint(self.config, loaded):
            return None
        manifest = output / "index" / "manifest.json"
        if not manifest.is_file() or _digest(manifest.read_bytes()) != state.digests.get("index/manifest.json"):
            return None  # the output is not what this state published
        return state

    def _update(self, loaded: LoadedArchives, state: _State) -> BuildReport:
        old = state.items
        if loaded.touched is not None:  # watch: only these repositories were read again
            items = _patched_items(loaded, old)
            candidates = loaded.touched
            key_count = state.key_count + sum(len(_index_keys(items.get(k, ()))) - len(_index_keys(old.get(k, ()))) for k in candidates)
        else:
            items = _holdings_by_key(loaded)
            candidates = items.keys() | old.keys()
            key_count = _key_count(items)
        if shard_digits(key_count) != state.digits:
            return self._full(loaded)  # the shard layout changes: rewrite everything
        changed = {k for k in candidates if not _same_holdings(items.get(k), old.get(k))}
        reverse = _patched_references(state.reverse, old, items, changed)
        affected = _affected(changed, reverse, lambda key: _index_keys(items.get(key, ())) | _index_keys(old.get(key, ())))
        spare = _Spare(self.config.output, state)
        with _publishing(self.config.output, spare.work):
            generated = self._generate(loaded, state, items, affected, changed, spare=spare)
            removed = [path for path in state.digests if path not in generated.digests]
            spare.write(generated.files)
            spare.remove(removed)
            if changed and self.config.catalog:
                self._catalog(spare.tree() / CATALOG)  # swapped in whole by build_catalog
                spare.changed.add(CATALOG)
            if spare.changed:  # else the live tree is the new one already
                state.generation, state.spare, state.behind = spare.publish(), state.generation, frozenset(spare.changed)
        state.reverse, state.key_count = reverse, key_count
        self._remember(state, items, generated)
        mode = f"update of {len(changed)} changed, {len(affected)} affected items"
        return self._report(loaded, state, mode, generated.written, len(removed), generated)

    def _reload(self, paths: set[str], last_good, published) -> LoadedArchives | None:
        """The last crawl with the repositories under `paths` read again; None when a
        path needs a whole crawl (an archive.yaml, or a path outside every archive)."""
        from ..archive.load import reload_repositories

        return reload_repositories(self._loaded, paths, self.cache, last_good, published)

    def save_state(self) -> None:
        """Write the crawl cache and the last build's state (watch mode, on stop)."""
        self.cache.save()
        if self.state is not None:
            self._save_state(self.state)

    def _previous_state(self) -> _State | None:
        """What the last build of this output published (kept in memory, else read from
        the cache folder, so it holds across restarts); None before a first build."""
        if self.state is None:
            self.state = self._load_state()
        if self.state is None or self.state.fingerprint[2] != str(self.config.output):
            return None  # fingerprint[2]: the output it was published to
        return self.state

    def _last_archive(self, name: str):
        """The ArchiveInfo and items the last build published of Archive `name`, or None."""
        info = next((info for info in self.state.infos if info.name == name), None)
        if info is None:
            return None
        return info, [item for held in self.state.items.values() for item, _ in held if item.archive == name]

    def _last_good(self, archive: str, key: str):
        for item, _ in self.state.items.get(key, ()):
            if item.archive == archive:
                return item
        return None

    def _catalog(self, directory: Path) -> None:
        """The mkdocs catalog of the archives, when the configuration asks for it."""
        if self.config.catalog:
            from ..catalog.publish import build_catalog

            self.log(f"catalog: {build_catalog(self.config, directory)} pages")

    # -- generation (shared by both) -----------------------------------------------------

    def _generate(self, loaded, state: _State, items: dict, affected: set[str], changed: set[str], direct: Path | None = None, spare: _Spare | None = None) -> _Output:
        from . import pages

        output = _Output(state.digests, direct)
        site = pages.Site(self.config)
        # the affected items' pages: resolution and rendering, over the cores
        rendered = _Rendered()
        for part in self._render_shares(loaded, items, sorted(key for key in affected if key in items), changed, state.digests, direct):
            _absorb(output, part)
            _merge(rendered, part)
            del part  # before the next is read: one worker's result at a time in memory
        if spare is not None:  # an update: the changed items' pages leave memory
            spare.write(output.files)
            output.files.clear()
        # the other items' pages are unchanged: their digests carry over
        carried = _carried(state, affected)
        carried.update(output.digests)
        output.digests = carried
        writer = _PagesWriter(output)
        writer.written.update(output.digests)
        for key in affected:
            for table in (state.published, state.item_files):
                table.pop(key, None)
        state.published.update(rendered.published)
        state.item_files.update(rendered.item_files)
        # index records and answers of the changed / affected keys
        self.progress.phase("index and site-wide files")
        output.site_wide_phase()
        touched_shards: set[str] = set()
        self._refresh_records(loaded, state, changed, rendered.records, touched_shards)
        self._refresh_answers(state, affected, rendered.answers, touched_shards)
        del rendered
        self._index_files(loaded, state, touched_shards, output)
        self._site_wide(loaded, state, site, writer, output)
        self.pages = len(writer.written)
        return output

    def _site_wide(self, loaded, state: _State, site, writer: _PagesWriter, output: _Output) -> None:
        """404.html, the landing page, the sitemap(s) and the host redirect files, from
        every published URL."""
        from . import pages
        from .hostfiles import host_files, host_rules, limit_warnings

        published = [url for key in sorted(state.published) for url in state.published[key]]
        pages.site_wide_pages(site, loaded, published, writer)
        rules = host_rules(published)
        del published
        for relative, lines in host_files(self.config, rules):
            output.put_lines(relative, lines)
        self.warnings = limit_warnings(rules)

    def _render_shares(self, loaded, items: dict, keys: list[str], changed: set[str], old: dict[str, str], direct: Path | None) -> Iterable[_Rendered]:
        """What rendering `keys` gives: in forked processes when there are many and the
        pages go straight to disk, else here."""
        self.progress.phase("resolving and rendering", len(keys))
        if direct is None or len(keys) < PARALLEL_ITEMS or not forked.available():
            return [self._render_items(loaded, items, keys, changed, _Output(old, direct))]

        def share_of(share: int, done) -> _Rendered:
            return self._render_items(loaded, items, keys[share::forked.WORKERS], changed, _Output({}, direct), done)

        return forked.run_shares(share_of, self.progress.update)

    def _render_items(self, loaded, items: dict, keys: list[str], changed: set[str], output: _Output, done=None) -> _Rendered:
        """Resolve and render the pages of the items `keys` into `output`, with their
        answers, and the index records of those in `changed`; `done` is a shared
        counter of items finished (forked workers), else the progress bar."""
        from . import pages
        from .targets import page_targets, published_url

        site = pages.Site(self.config)
        rendered = _Rendered()
        targets_of: dict[str, list] = {}
        writer = _PagesWriter(output)
        first_holders = [items[key][0][0] for key in keys]
        for target in page_targets(loaded, self.config.modifiers, loaded.views(), first_holders=first_holders):
            key = target.item.key
            if key not in targets_of:
                self._item_done(done)
            targets_of.setdefault(key, []).append(target)
            writer.write(target.path + "/index.html", pages.target_page(site, target))
        for key, targets in targets_of.items():
            rendered.published[key] = tuple(published_url(target) for target in targets)
            answers = precomputed_answers(targets)
            if answers:
                rendered.answers[key] = {index_key: _pack(dumps(value)) for index_key, value in answers.items()}
        rendered.item_files = self._item_pages(site, loaded, {key: items[key] for key in keys}, writer)
        for key in keys:
            if key in changed:
                rendered.records[key] = _records_of(loaded, items[key])
        rendered.digests, rendered.written, rendered.files = output.digests, output.written, output.files
        return rendered

    def _item_done(self, done) -> None:
        if done is not None:
            forked.count(done, 1)
        else:
            self.progress.advance()

    def _item_pages(self, site, loaded, items: dict, writer) -> dict[str, list[str]]:
        """File-list and metadata pages of `items`; returns the pages each one has."""
        from ..core.properties import item_urls
        from . import pages

        written: dict[str, list[str]] = {}
        for key in sorted(items):
            for item, _ in items[key]:
                if item.state == "Deleted":
                    continue
                urls = item_urls(loaded.view(item.archive), item)
                first = len(writer.order)
                pages.item_pages(site, writer, item, urls)
                written.setdefault(key, []).extend(sorted(writer.order[first:]))
        return written

    def _refresh_records(self, loaded, state: _State, changed: set[str], fresh: dict[str, list], touched: set[str]) -> None:
        """state.records with those of the `changed` repositories replaced by `fresh`
        (repository key -> [(index key, archive, encoded record)])."""
        old_keys = {k for key in changed for item, _ in state.items.get(key, ()) for k in item.keys()}
        new_keys = {index_key for key in changed for index_key, _, _ in fresh.get(key, ())}
        for key in old_keys | new_keys:
            state.records.pop(key, None)
            touched.add(shard_name(key, state.digits))
        for key in sorted(changed):
            for index_key, archive, record in fresh.get(key, ()):
                state.records.setdefault(index_key, []).append((archive, record))
        order = {info.name: n for n, info in enumerate(loaded.infos)}
        for key in new_keys:  # keep the Archives' order, whatever order changes came in
            if len(state.records[key]) > 1:
                state.records[key].sort(key=lambda row: order[row[0]])

    def _refresh_answers(self, state: _State, affected: set[str], fresh: dict[str, dict], touched: set[str]) -> None:
        """state.answers with those of the `affected` repositories replaced by `fresh`."""
        for key in affected:
            for index_key in state.answers.pop(key, {}):
                touched.add(shard_name(index_key, state.digits))
        for key, answers in fresh.items():
            state.answers[key] = answers
            touched.update(shard_name(index_key, state.digits) for index_key in answers)

    def _index_files(self, loaded, state: _State, touched: set[str], output: _Output) -> None:
        answers = {key: value for by_key in state.answers.values() for key, value in by_key.items()}

        def unchanged(relative: str) -> str | None:
            if Path(relative).stem in touched or "index/" + relative not in state.digests:
                return None
            return state.checksums.get(relative)

        checksums = {}
        for relative, data, checksum in index_files(loaded, state.records, answers, state.digits, unchanged, zlib.decompress):
            checksums[relative] = checksum
            if data is None:
                output.keep("index/" + relative, state.digests["index/" + relative])
            else:
                output.put("index/" + relative, data)
        state.checksums = checksums

    # -- bookkeeping -------------------------------------------------------------------

    def _remember(self, state: _State, items: dict, generated: _Output) -> None:
        state.items = items
        state.infos = tuple(self._loaded.infos)
        state.digests = generated.digests
        state.site_files = tuple(generated.site_wide or ())
        self.state = state
        if self.persist:
            self._save_state(state)

    def _save_state(self, state: _State) -> None:
        """The state as sealed pickles (ibistatic.pickles): the small fields, then each
        large one in chunks; when it cannot be saved the next build is a full one."""
        small = {f.name: getattr(state, f.name) for f in fields(state) if f.name not in _LARGE_FIELDS}
        try:
            save_sealed(self._state_path, "build state", (STATE_VERSION, small), [getattr(state, name) for name in _LARGE_FIELDS])
        except (Untrusted, OSError) as why:
            self._warnings.append(f"build state {self._state_path} not saved: {why}; the next build is a full one")

    def _load_state(self) -> _State | None:
        try:
            loaded = load_sealed(self._state_path, "build state", STATE_VERSION, len(_LARGE_FIELDS))
        except Untrusted as why:
            self._warnings.append(f"build state {self._state_path} not used: {why}; this build is a full one")
            return None
        if loaded is None:
            return None  # no state, or an older one: the next build is full
        small, large = loaded
        return _State(**small, **dict(zip(_LARGE_FIELDS, large)))

    def _report(self, loaded, state: _State, mode: str, written: int, removed: int, generated) -> BuildReport:
        return BuildReport(
            output=self.config.output, items=sum(len(v) for v in state.items.values()), keys=len(state.records),
            pages=self.pages, written=written, removed=removed, problems=loaded.problems, mode=mode,
            warnings=list(self.warnings),
        )


def _merge(into: _Rendered, part: _Rendered) -> None:
    """What the state keeps of `part` (its files and digests go to the _Output)."""
    for name in ("published", "answers", "records", "item_files"):
        getattr(into, name).update(getattr(part, name))


def _records_of(loaded, held: tuple) -> list[tuple[str, str, bytes]]:
    """(index key, archive, packed record) of each item of one repository, for the
    keys under which its Archive holds it (a key another repository won is left out)."""
    rows = []
    for item, _ in held:
        record = None
        for index_key in item.keys():
            if loaded.holdings.by_archive[item.archive].get(index_key) is item:
                if record is None:
                    archive, data = encoded_record(loaded.view(item.archive), item)
                    record = (archive, _pack(data))
                rows.append((index_key, *record))
    return rows


def _pack(data: bytes) -> bytes:
    """An index record or answer as the state keeps it: compressed (2-4 times smaller;
    at 100,000 items they would otherwise be most of a build's memory)."""
    return zlib.compress(data, 1)


def _absorb(output: _Output, part: _Rendered) -> None:
    """The files and digests of `part` into `output`."""
    output.digests.update(part.digests)
    output.files.update(part.files)
    output.written += part.written


def _carried(state: _State, affected: set[str]) -> dict[str, bytes]:
    """The last build's digests of the files an update does not make again: every page
    but the affected items' (those of the other items are unchanged, by the definition
    of affected). One copy of the dict, not a look at each of 700,000 pages; made after
    the changed pages are out (a dict with deletions copies slowly: 0.1 s at 100k items)."""
    digests = dict(state.digests)
    for key in affected:
        for relative in _pages_of(state, key):
            digests.pop(relative, None)
    for relative in state.site_files:
        digests.pop(relative, None)
    return digests


def _pages_of(state: _State, key: str) -> list[str]:
    """The pages the last build wrote for the repository `key`."""
    return [url.path + "/index.html" for url in state.published.get(key, ())] + state.item_files.get(key, [])


def _key_count(items: dict[str, tuple]) -> int:
    return len({k for held in items.values() for item, _ in held for k in item.keys()})


def _replace_files(root: Path, files: dict[str, bytes]) -> None:
    """Write `files` under `root`, each as a new file renamed over the old: a file a
    generation shares with another (a hard link) is never changed in place."""
    for relative in sorted(files):
        path = os.path.join(root, *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        _write_new(temporary, files[relative])
        os.replace(temporary, path)


class _Spare:
    """The generation an update writes: the spare one brought level with the live one
    (or, when there is none, a clone of the live one by hard links), made on first use."""

    def __init__(self, output: Path, state: _State) -> None:
        self.output, self.state = output, state
        self.folder = generations(output)
        self.work = self.folder / f"work-{os.getpid()}"
        self.changed: set[str] = set()  # the paths written or removed
        self._ready = False

    def tree(self) -> Path:
        if not self._ready:
            self._prepare()
            self._ready = True
        return self.work

    def _prepare(self) -> None:
        live, spare, behind = self.state.generation, self.state.spare, self.state.behind
        reuse = bool(spare) and behind is not None and (self.folder / spare).is_dir()
        clean_folder(self.folder, {live, spare} if reuse else {live})  # also a work tree left by a failure
        if reuse:
            os.rename(self.folder / spare, self.work)
            self.state.spare = ""  # changed from now on: no longer the last build's tree
            sync_paths(self.folder / live, self.work, behind)
        else:
            clone_tree(self.folder / live, self.work)

    def write(self, files: dict[str, bytes]) -> None:
        if files:
            _replace_files(self.tree(), files)
            self.changed.update(files)

    def remove(self, paths: list[str]) -> None:
        for relative in sorted(paths, reverse=True):
            remove_file(self.tree(), relative)
            self.changed.add(relative)

    def publish(self) -> str:
        return _publish_generation(self.work, self.output)


def _publish_generation(tree: Path, output: Path) -> str:
    """Name the complete `tree` (in the generations folder) a generation and point
    `output` at it; returns its name."""
    name = f"g{time.time_ns():x}"
    os.rename(tree, tree.parent / name)
    replaced = point(output, f"{tree.parent.name}/{name}")
    if replaced is not None:  # a plain folder published by an older version
        discard(replaced)
    return name


class _publishing:
    """A failure to write (a full disk, a read-only folder) becomes a PublishError; the
    tree being written, which nobody serves, is removed."""

    def __init__(self, output: Path, work: Path) -> None:
        self.output, self.work = output, work

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, traceback) -> bool:
        if error is None or not isinstance(error, OSError):
            return False
        if os.path.lexists(self.work):
            discard(self.work)
        where = f" ({error.filename})" if error.filename else ""
        raise PublishError(f"cannot publish {self.output}: {error.strerror or error}{where}; "
                           "the published site is unchanged") from None


def _copy_assets(out: Path) -> None:
    from . import pages

    pages.copy_assets(out)
