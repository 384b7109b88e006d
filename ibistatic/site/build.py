"""``ibistatic build``: crawl, check, publish the index and the site (see .publish)."""

from __future__ import annotations

from ..config import SiteConfig
from .publish import BuildReport, Publisher

__all__ = ["BuildReport", "build_site"]


def build_site(config: SiteConfig, *, log=None, full: bool = False, progress=None) -> BuildReport:
    """Publish `config`: in place when only some items changed since the last build of
    this output, else a whole new tree swapped in atomically (always with `full`).
    `progress`: an ibistatic.progress.Progress (default: none drawn)."""
    return Publisher(config, log, progress=progress).build(full=full)
