"""``ibistatic build``: crawl, check, write the index and the site, swap it in atomically."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..archive.crawl import CrawlCache
from ..archive.load import LoadedArchives, load_archives
from ..config import SiteConfig
from ..errors import Problem
from ..index.writer import write_index
from .swap import publish_tree, remove_stale, staging_path

__all__ = ["BuildReport", "build_site"]


@dataclass
class BuildReport:
    output: Path
    items: int
    keys: int
    pages: int
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        errors = sum(1 for p in self.problems if p.severity == "error")
        warnings = len(self.problems) - errors
        return (
            f"published {self.output}: {self.items} items, {self.keys} IBIs, {self.pages} pages, "
            f"{errors} errors, {warnings} warnings in {self.seconds:.2f} s"
        )


def build_site(config: SiteConfig, *, log=None) -> BuildReport:
    """Build the whole site into a staging tree, then publish it atomically."""
    started = time.perf_counter()
    log = log or (lambda message: None)
    output = config.output
    output.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(output)
    cache = CrawlCache(config.cache_dir / "crawl.pickle")
    loaded = load_archives(config.archives, config.site_url, cache)
    log(f"crawled {len(config.archives)} archives: {sum(1 for _ in loaded.holdings.all_items())} items")
    staging = staging_path(output)
    staging.mkdir()
    manifest = write_index(loaded, staging / "index")
    pages = _render(loaded, config, staging, log)
    publish_tree(staging, output)
    cache.save()
    return BuildReport(
        output=output,
        items=manifest["counts"]["items"],
        keys=manifest["counts"]["keys"],
        pages=pages,
        problems=loaded.problems,
        seconds=time.perf_counter() - started,
    )


def _render(loaded: LoadedArchives, config: SiteConfig, staging: Path, log) -> int:
    """The site's pages.  The redirect pages, 404 resolver and host redirect files are
    not published yet: this build writes the index, which resolve and serve read."""
    return 0
