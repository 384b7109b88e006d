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


def _left_out(problems: list[Problem]) -> dict[str, str]:
    """Keys of the repositories whose item.yaml had errors, with their Archive."""
    from ..core.identifiers import parse_repository_name
    from ..errors import IbiSyntaxError

    keys = {}
    for problem in problems:
        if problem.severity == "error" and problem.path.endswith("/item.yaml"):
            try:
                keys[parse_repository_name(problem.path[: -len("/item.yaml")]).key] = problem.archive
            except IbiSyntaxError:
                continue
    return keys


def _keep_last_good(result: CrawlResult, last_good: Callable[[str, str], Item | None]) -> None:
    from ..core.identifiers import parse_repository_name
    from ..errors import IbiSyntaxError

    for archive in result.archives:
        present = {item.key for item in archive.items}
        for problem in archive.problems:
            if problem.severity != "error" or not problem.path.endswith("/item.yaml"):
                continue
            try:
                key = parse_repository_name(problem.path[: -len("/item.yaml")]).key
            except IbiSyntaxError:
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
