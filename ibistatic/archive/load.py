"""Crawl the configured Archives and check them: the input of every build and lookup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.model import ArchiveInfo, Item
from ..core.properties import MemoryArchiveView
from ..core.storage import Holdings, check_storage_model
from ..errors import Problem
from .crawl import CrawlCache, CrawlResult, crawl

__all__ = ["LoadedArchives", "load_archives"]


@dataclass
class LoadedArchives:
    crawl: CrawlResult
    holdings: Holdings
    problems: list[Problem]
    site_url: str

    @property
    def infos(self) -> list[ArchiveInfo]:
        return self.holdings.archives

    def view(self, name: str) -> MemoryArchiveView:
        info = next(i for i in self.holdings.archives if i.name == name)
        return MemoryArchiveView(info, self.holdings.by_archive[name], self.site_url)

    def views(self) -> list[MemoryArchiveView]:
        return [self.view(info.name) for info in self.holdings.archives]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def _invalid_repository(problem: Problem) -> str | None:
    """The repository key of an error in an item.yaml (the item is left out), else None."""
    from ..core.identifiers import parse_repository_name
    from ..errors import IbiSyntaxError

    if problem.severity != "error" or not problem.path.endswith("/item.yaml"):
        return None
    try:
        return parse_repository_name(problem.path[: -len("/item.yaml")]).key
    except IbiSyntaxError:
        return None  # the path itself breaks the grammar: no IBI to speak of


def _left_out(problems: list[Problem]) -> dict[str, str]:
    """Keys of the repositories whose item.yaml had errors, with their Archive."""
    return {key: p.archive for p in problems if (key := _invalid_repository(p)) is not None}


def _keep_last_good(result: CrawlResult, last_good: Callable[[str, str], Item | None]) -> None:
    for archive in result.archives:
        present = {item.key for item in archive.items}
        for problem in archive.problems:
            key = _invalid_repository(problem)
            if key is None:
                continue
            previous = last_good(archive.name, key) if key not in present else None
            if previous is not None:
                archive.items.append(previous)
                present.add(key)
        archive.items.sort(key=lambda item: item.repository.parts)


def load_archives(
    roots: Sequence[Path | str],
    site_url: str,
    cache: CrawlCache | None = None,
    progress: Callable[[int], None] | None = None,
    last_good: Callable[[str, str], Item | None] | None = None,
) -> LoadedArchives:
    """Crawl `roots` (in resolution order), then apply the storage-model checks.

    `last_good(archive, repository key)`, when given, supplies the last valid state of
    an item whose descriptor is now invalid; it is published instead (watch mode).
    """
    result = crawl(roots, cache, progress)
    if last_good is not None:
        _keep_last_good(result, last_good)
    infos = [a.info for a in result.archives if a.info is not None]
    holdings, storage_problems = check_storage_model(infos, result.items(), _left_out(result.problems))
    return LoadedArchives(result, holdings, result.problems + storage_problems, site_url)


def reload_repositories(
    previous: LoadedArchives,
    paths: set[str],
    cache: CrawlCache | None = None,
    last_good: Callable[[str, str], Item | None] | None = None,
) -> LoadedArchives | None:
    """`previous` with the repositories under `paths` read again (watch mode).

    A path inside a repository re-reads that repository; a folder above the repository
    level re-reads every repository it held or holds now.  None when a whole crawl is
    needed: a path outside every archive, or an archive.yaml.
    """
    import os
    from dataclasses import replace as _replace

    from .crawl import Archive, read_repository

    archives = {str(archive.root): archive for archive in previous.crawl.archives}
    wanted: dict[str, set[str]] = {}
    for path in paths:
        root = next((r for r in sorted(archives, key=len, reverse=True) if path == r or path.startswith(r + os.sep)), None)
        if root is None or archives[root].info is None:
            return None
        parts = os.path.relpath(path, root).split(os.sep)
        if parts == ["."] or parts[0].startswith("."):
            continue  # the root itself, or ibistatic's own .ibistatic/ folder
        if parts == ["archive.yaml"]:
            return None
        wanted.setdefault(root, set()).update(_repositories_under(archives[root], root, parts))
    rebuilt = []
    for archive in previous.crawl.archives:
        again = wanted.get(str(archive.root), set())
        if not again:
            rebuilt.append(archive)
            continue
        items = [i for i in archive.items if "/".join(i.repository.parts) not in again]
        problems = [p for p in archive.problems if not any(p.path == r or p.path.startswith(r + "/") for r in again)]
        root_real = os.path.realpath(archive.root)
        for relative in sorted(again):
            directory = os.path.join(archive.root, *relative.split("/"))
            if os.path.isfile(os.path.join(directory, "item.yaml")):
                item, found = read_repository(archive.root, archive.name, relative, cache, root_real)
                problems += found
                if item is not None:
                    items.append(item)
            elif os.path.isdir(directory):
                problems.append(Problem(archive.name, relative, "item.yaml", "a 4th-level directory without item.yaml", "a uniform repository holding item.yaml", "warning"))
        items.sort(key=lambda item: item.repository.parts)
        rebuilt.append(Archive(archive.root, archive.name, archive.info, items, problems))
    result = CrawlResult(rebuilt)
    if last_good is not None:
        _keep_last_good(result, last_good)
    infos = [a.info for a in result.archives if a.info is not None]
    holdings, storage_problems = check_storage_model(infos, result.items(), _left_out(result.problems))
    return LoadedArchives(result, holdings, result.problems + storage_problems, previous.site_url)


def _repositories_under(archive, root: str, parts: list[str]) -> set[str]:
    """The repository paths (four folder names) a changed path can concern."""
    import os

    if len(parts) >= 4:
        return {"/".join(parts[:4])}
    prefix = "/".join(parts) + "/"
    found = {"/".join(i.repository.parts) for i in archive.items if "/".join(i.repository.parts).startswith(prefix)}
    base = os.path.join(root, *parts)
    for directory, subdirectories, _ in os.walk(base):  # what the folder holds now
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        depth = len(parts) + os.path.relpath(directory, base).count(os.sep) + (0 if directory == base else 1)
        if depth == 3:
            found.update("/".join(parts + os.path.relpath(os.path.join(directory, d), base).split(os.sep)) for d in subdirectories)
            subdirectories[:] = []
    return found
