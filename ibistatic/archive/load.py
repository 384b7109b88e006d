"""Crawl the configured Archives and check them: the input of every build and lookup."""

from __future__ import annotations

import bisect
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..core.identifiers import RepositoryName
from ..core.model import ArchiveInfo, Item
from ..core.properties import MemoryArchiveView
from ..core.storage import Holdings, Published, holdings_of, patch_holdings, storage_problems
from ..errors import Problem
from .crawl import Archive, CrawlCache, CrawlResult, crawl, read_repository

__all__ = ["LoadedArchives", "load_archives", "reload_repositories"]


@dataclass
class LoadedArchives:
    crawl: CrawlResult
    holdings: Holdings
    #: the storage-model problems; checking references costs a pass over every item, so
    #: a watch update computes them only when asked (after the changed pages are out)
    storage: list[Problem] | Callable[[], list[Problem]]
    site_url: str
    #: repository keys whose items may differ from the previous load (watch mode's
    #: targeted re-read); None after a whole crawl
    touched: frozenset[str] | None = field(default=None)
    #: the Archives whose archive.yaml broke, published as the last build did
    kept: frozenset[str] = field(default=frozenset())

    @cached_property
    def problems(self) -> list[Problem]:
        storage = self.storage() if callable(self.storage) else self.storage
        return self.crawl.problems + storage

    @property
    def infos(self) -> list[ArchiveInfo]:
        return self.holdings.archives

    @property
    def state_counts(self) -> dict[str, Counter]:
        """Archive name -> how many of its items are Original, Copy, Deleted: what the
        manifest and the landing page both say (core.census: patched in watch)."""
        states = self.holdings.counted().states
        return {info.name: states.get(info.name) or Counter() for info in self.holdings.archives}

    def view(self, name: str) -> MemoryArchiveView:
        return self._views[name]

    def views(self) -> list[MemoryArchiveView]:
        return list(self._views.values())

    @cached_property
    def _views(self) -> dict[str, MemoryArchiveView]:
        # one view per Archive and load: a view memoizes its relation set
        languages = self.holdings.counted().languages  # for the default relations
        return {
            info.name: MemoryArchiveView(
                info,
                self.holdings.by_archive[info.name],
                self.site_url,
                languages=frozenset(languages.get(info.name, ())),
            )
            for info in self.holdings.archives
        }

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def _invalid_repository(problem: Problem) -> RepositoryName | None:
    """The repository of an error in an item.yaml (the item is left out), else None."""
    from ..core.identifiers import parse_repository_name
    from ..errors import IbiSyntaxError

    if problem.severity != "error" or not problem.path.endswith("/item.yaml"):
        return None
    try:
        return parse_repository_name(problem.path[: -len("/item.yaml")])
    except IbiSyntaxError:
        return None  # the path itself breaks the grammar: no IBI to speak of


def _left_out(problems: list[Problem]) -> dict[str, str]:
    """Keys of the repositories whose item.yaml had errors, with their Archive."""
    return {name.key: p.archive for p in problems if (name := _invalid_repository(p)) is not None}


def _keep_last_good(
    archive: Archive,
    problems: list[Problem],
    last_good: Callable[[str, str], Item | None],
    present: Callable[[str], bool],
) -> tuple[list[Item], list[Problem]]:
    """The last good items of the repositories whose item.yaml has errors in `problems`
    (but not where `present(repository path)`: a valid item is there), and `problems`
    with a note after those of each repository so kept.

    `last_good(archive, repository key)` is what the last build published; it stands in
    only for the very folder it came from, never for a folder that differs in case.
    """
    kept: dict[str, Item] = {}
    for problem in problems:
        name = _invalid_repository(problem)
        if name is None or name.text in kept or present(name.text):
            continue  # one item.yaml may have several errors
        previous = last_good(archive.name, name.key)
        if previous is not None and previous.repository.text == name.text:
            kept[name.text] = previous
    return list(kept.values()), _noted(problems, kept)


def _noted(problems: list[Problem], kept: dict[str, Item]) -> list[Problem]:
    """`problems` with, after the last of each repository in `kept`, the note that its
    last good publication stays."""
    if not kept:
        return problems
    last = {problem.path: n for n, problem in enumerate(problems)}
    noted = []
    for n, problem in enumerate(problems):
        noted.append(problem)
        item = kept.get(problem.path[: -len("/item.yaml")])
        if item is not None and last[problem.path] == n:
            found = f"its last good publication (timestamp {item.timestamp}) kept published despite the errors"
            expected = "a valid item.yaml (fix it to publish the item again; remove the repository to withdraw it)"
            noted.append(Problem(problem.archive, problem.path, "", found, expected, "warning"))
    return noted


#: what the last build published of an Archive: its archive.yaml and its items
LastArchive = Callable[[str], "tuple[ArchiveInfo, list[Item]] | None"]


def _keep_last_archive(archive: Archive, last_archive: LastArchive) -> bool:
    """Publish `archive`, whose archive.yaml broke, as the last build did (its ArchiveInfo
    and items, not what its folders hold now), with a note after its problems.  False
    when it is not so kept: the archive.yaml is fine, the folder is gone, or the last
    build did not publish it."""
    if archive.info is not None or not any(p.path == "archive.yaml" for p in archive.problems):
        return False
    last = last_archive(archive.name)
    if last is None:
        return False
    archive.info, items = last
    archive.items = sorted(items, key=lambda item: item.repository.parts)
    count = f"{len(items):,} item{'s' if len(items) != 1 else ''}"
    archive.problems.append(
        Problem(
            archive.name,
            "archive.yaml",
            "",
            f"the Archive's last good publication ({count}, address {archive.info.address}) kept "
            "published despite the errors",
            "a valid archive.yaml (fix it to publish the Archive again; remove the Archive from "
            "the configuration to withdraw it)",
            "warning",
        )
    )
    return True


def load_archives(
    roots: Sequence[Path | str],
    site_url: str,
    cache: CrawlCache | None = None,
    progress: Callable[[int], None] | None = None,
    last_good: Callable[[str, str], Item | None] | None = None,
    published: Published | None = None,
    last_archive: LastArchive | None = None,
    expect: Callable[[int], None] | None = None,
    failed: Mapping[str, str] | None = None,
) -> LoadedArchives:
    """Crawl `roots` (in resolution order), then apply the storage-model checks.
    `failed`: repository key -> why an earlier try could not render it; such an item is
    an error, like an invalid item.yaml (its last good publication stands in for it).

    What the last build of the same output published, when given: `last_good(archive,
    repository key)` supplies the last valid state of an item whose descriptor is now
    invalid (it is published instead), `last_archive(name)` that of an Archive whose
    archive.yaml is now invalid, and `published` the holders of its IBIs (a newcomer
    never takes one of them: ibistatic.core.storage).  `progress` and `expect`: see
    ibistatic.archive.crawl.crawl_archive.
    """
    result = crawl(roots, cache, progress, expect)
    if failed:
        _withdraw(result, failed)
    _check_file_urls(result, site_url)
    kept_archives = set()
    for archive in result.archives:
        if last_archive is not None and _keep_last_archive(archive, last_archive):
            kept_archives.add(archive.name)
        elif last_good is not None:
            present = {item.repository.text for item in archive.items}
            kept, archive.problems = _keep_last_good(
                archive, archive.problems, last_good, present.__contains__
            )
            if kept:
                archive.items += kept
                archive.items.sort(key=lambda item: item.repository.parts)
    return _checked(result, site_url, published, frozenset(kept_archives), last_good)


def _keep_taken_ibips(
    result: CrawlResult,
    taken: list[tuple[Item, Problem]],
    last_good: Callable[[str, str], Item | None],
) -> bool:
    """Put back the last good publication of each item that now claims an IBIp another
    repository held in the last build (its own IBIp would otherwise be gone: a published
    identifier is kept, whichever way its descriptor broke).  True when one was put back."""
    archives = {archive.name: archive for archive in result.archives}
    kept = False
    for item, problem in taken:
        previous = last_good(item.archive, item.key)
        if (
            previous is None
            or previous.repository.text != item.repository.text
            or previous.ibip is None
        ):
            continue  # no IBIp of its own to lose: it stays published without the one claimed
        archive = archives[item.archive]
        archive.items = [previous if other is item else other for other in archive.items]
        archive.problems += _noted([problem], {item.repository.text: previous})
        kept = True
    return kept


def _check_file_urls(result: CrawlResult, site_url: str) -> None:
    """A warning for each Archive whose file-url names files nothing serves (a link
    that would lead back to itself: core.properties.file_url_problem)."""
    from ..core.properties import file_url_problem

    for archive in result.archives:
        why = archive.info and file_url_problem(archive.info, site_url)
        if why:
            archive.problems.append(
                Problem(
                    archive.name,
                    "archive.yaml",
                    "file-url",
                    f"{archive.info.file_url!r}, which gives {why}",
                    "{site}col/{repository}/doc/{path} (the site publishes the documents) "
                    "or the address of the Archive's own server",
                    "warning",
                )
            )


def _withdraw(result: CrawlResult, failed: Mapping[str, str]) -> None:
    """The items of `failed` taken out of `result`, each with its error."""
    for archive in result.archives:
        items = []
        for item in archive.items:
            if item.key not in failed:
                items.append(item)
                continue
            archive.problems.append(
                Problem(
                    archive.name,
                    f"{item.repository.text}/item.yaml",
                    "",
                    f"an item that could not be resolved or rendered ({failed[item.key]})",
                    "an item within archive-format.md's limits (please report this message: "
                    "it is a gap in ibistatic's checks)",
                )
            )
        archive.items = items


def _checked(
    result: CrawlResult,
    site_url: str,
    published: Published | None = None,
    kept: frozenset[str] = frozenset(),
    last_good: Callable[[str, str], Item | None] | None = None,
) -> LoadedArchives:
    infos = [a.info for a in result.archives if a.info is not None]
    holdings = holdings_of(infos, result.items(), published)
    if last_good is not None and _keep_taken_ibips(result, holdings.taken, last_good):
        holdings = holdings_of(infos, result.items(), published)
    left_out = _left_out(result.problems)
    return LoadedArchives(
        result, holdings, lambda: storage_problems(holdings, left_out), site_url, kept=kept
    )


def reload_repositories(
    previous: LoadedArchives,
    paths: set[str],
    cache: CrawlCache | None = None,
    last_good: Callable[[str, str], Item | None] | None = None,
    published: Published | None = None,
) -> LoadedArchives | None:
    """`previous` with the repositories under `paths` read again (watch mode).

    A path inside a repository re-reads that repository; a folder above the repository
    level re-reads every repository it held or holds now.  None when a whole crawl is
    needed: a path outside every archive, an archive.yaml, or a path inside an Archive
    kept as last published (its archive.yaml broke: its folders are not read).  The work is proportional
    to the repositories read, not to the archives' size, unless the change touches a
    storage-model clash (then the holdings are checked whole, with `published` as in
    :func:`load_archives`).
    """
    archives = {str(archive.root): archive for archive in previous.crawl.archives}
    wanted: dict[str, set[str]] = {}
    for path in paths:
        root = next(
            (
                r
                for r in sorted(archives, key=len, reverse=True)
                if path == r or path.startswith(r + os.sep)
            ),
            None,
        )
        if root is None or archives[root].info is None or archives[root].name in previous.kept:
            return None
        parts = os.path.relpath(path, root).split(os.sep)
        if parts == ["."] or parts[0].startswith("."):
            continue  # the root itself, or ibistatic's own .ibistatic/ folder
        if parts == ["archive.yaml"]:
            return None
        wanted.setdefault(root, set()).update(_repositories_under(archives[root], root, parts))
    rebuilt, removed, added = [], [], []
    for archive in previous.crawl.archives:
        again = wanted.get(str(archive.root), set())
        if not again:
            rebuilt.append(archive)
            continue
        archive, gone, new = _reread(archive, again, cache, last_good)
        rebuilt.append(archive)
        removed += gone
        added += new
    result = CrawlResult(rebuilt)
    holdings = patch_holdings(previous.holdings, removed, added)
    if holdings is None:
        return _checked(result, previous.site_url, published, previous.kept, last_good)
    left_out = _left_out(result.problems)
    touched = frozenset(item.key for item in (*removed, *added))
    return LoadedArchives(
        result,
        holdings,
        lambda: storage_problems(holdings, left_out),
        previous.site_url,
        touched,
        previous.kept,
    )


def _reread(
    archive: Archive, again: set[str], cache, last_good
) -> tuple[Archive, list[Item], list[Item]]:
    """`archive` with the repositories `again` (relative paths) read again: the new
    Archive, the items it no longer holds and the items it holds now."""
    items = list(archive.items)  # sorted by repository path: found by bisection
    removed = []
    for relative in sorted(again):
        parts = tuple(relative.split("/"))
        at = bisect.bisect_left(items, parts, key=lambda item: item.repository.parts)
        if at < len(items) and items[at].repository.parts == parts:
            removed.append(items.pop(at))
    problems = [
        p
        for p in archive.problems
        if not any(p.path == r or p.path.startswith(r + "/") for r in again)
    ]
    found_problems: list[Problem] = []
    added = []
    root_real = os.path.realpath(archive.root)
    for relative in sorted(again):
        directory = os.path.join(archive.root, *relative.split("/"))
        if os.path.isfile(os.path.join(directory, "item.yaml")):
            item, found = read_repository(archive.root, archive.name, relative, cache, root_real)
            found_problems += found
            if item is not None:
                added.append(item)
        elif os.path.isdir(directory):
            found_problems.append(
                Problem(
                    archive.name,
                    relative,
                    "item.yaml",
                    "a 4th-level directory without item.yaml",
                    "a uniform repository holding item.yaml",
                    "warning",
                )
            )
    if last_good is not None:
        present = {item.repository.text for item in added}
        kept, found_problems = _keep_last_good(
            archive, found_problems, last_good, present.__contains__
        )
        added += kept
    for item in sorted(added, key=lambda item: item.repository.parts):
        bisect.insort(items, item, key=lambda item: item.repository.parts)
    return (
        Archive(archive.root, archive.name, archive.info, items, problems + found_problems),
        removed,
        added,
    )


def _repositories_under(archive, root: str, parts: list[str]) -> set[str]:
    """The repository paths (four folder names) a changed path can concern."""
    if len(parts) >= 4:
        return {"/".join(parts[:4])}
    prefix = "/".join(parts) + "/"
    found = {
        "/".join(i.repository.parts)
        for i in archive.items
        if "/".join(i.repository.parts).startswith(prefix)
    }
    base = os.path.join(root, *parts)
    for directory, subdirectories, _ in os.walk(base):  # what the folder holds now
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        depth = (
            len(parts)
            + os.path.relpath(directory, base).count(os.sep)
            + (0 if directory == base else 1)
        )
        if depth == 3:
            found.update(
                "/".join(parts + os.path.relpath(os.path.join(directory, d), base).split(os.sep))
                for d in subdirectories
            )
            subdirectories[:] = []
    return found
