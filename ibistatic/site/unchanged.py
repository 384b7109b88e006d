"""A rebuild with nothing new, answered by ``lstat`` alone (the build's *stamp*).

After a build from the command line, the stamp keeps what it published it from: the
settings, an :class:`~ibistatic.archive.observe.Observation` of the Archives taken
before the crawl, the live generation and its manifest's digest, and the report.  The
next build first checks the stamp: same settings and outputs, every entry of the
Archives unchanged to ``lstat``, the same generation live with the same manifest: then
the site is what that build would publish again, and its report is the stamp's.  No
crawl cache, no state and no descriptor is read: the check costs one ``lstat`` per
entry of the Archives (about 2 s for 100,000 items, benchmarks/README.md).

Anything else goes the usual way (site.build.publish), which still makes a no-op of an
update that changes nothing, after crawling.  The stamp is removed before any such
build, so an interrupted build never leaves one that describes another site.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from ..archive.observe import Observation
from ..config import SiteConfig
from ..pickles import Untrusted, load_sealed, save_sealed
from ..store.files import digest
from ..store.layout import live_generation
from .state import STATE_VERSION, settings_fingerprint

__all__ = ["Stamp", "stamp_path", "unchanged_report", "save_stamp", "forget_stamp"]

_KIND = "build stamp"


@dataclass(frozen=True)
class Stamp:
    settings: tuple  # state.settings_fingerprint: all but the Archives' contents
    outputs: tuple[str, ...]  # the outputs that made the site (site.build)
    observation: Observation  # the Archives, seen before the crawl
    generation: str  # the live generation it published
    manifest: bytes | None  # the digest of its index/manifest.json
    report: object  # its BuildReport (mode, counts, problems, warnings)


def stamp_path(config: SiteConfig) -> Path:
    return config.cache_dir / "build-stamp.pickle"


def unchanged_report(config: SiteConfig, outputs: tuple[str, ...]):
    """The last build's report when the site it published is still what a build would
    publish (a copy, nothing written or removed); else None."""
    try:
        loaded = load_sealed(stamp_path(config), _KIND, STATE_VERSION, 0)
    except Untrusted:
        return None  # the build says so when it reads the state; this costs only time
    if loaded is None:
        return None
    stamp = loaded[0]
    if not isinstance(stamp, Stamp) or not _holds(stamp, config, outputs):
        return None
    return replace(stamp.report, written=0, removed=0, seconds=0.0)


def _holds(stamp: Stamp, config: SiteConfig, outputs: tuple[str, ...]) -> bool:
    return (
        stamp.outputs == outputs
        and stamp.generation == live_generation(config.output)
        and stamp.manifest == _manifest_digest(config.output)
        and stamp.settings == settings_fingerprint(config)
        and stamp.observation.holds(config.archives)  # the costly one, last
    )


def save_stamp(config: SiteConfig, outputs: tuple[str, ...], observation, report) -> None:
    """Keep `report`'s build as the stamp; nothing when the Archives were not observed
    (observe() returned None) or nothing is live.  A failure to write only costs the
    next no-op its speed."""
    generation = live_generation(config.output)
    if observation is None or generation is None:
        return
    stamp = Stamp(
        settings_fingerprint(config),
        outputs,
        observation,
        generation,
        _manifest_digest(config.output),
        replace(report, mode="update of 0 changed, 0 affected items"),
    )
    try:
        save_sealed(stamp_path(config), _KIND, (STATE_VERSION, stamp), [])
    except (Untrusted, OSError):
        forget_stamp(config)


def forget_stamp(config: SiteConfig) -> None:
    try:
        os.unlink(stamp_path(config))
    except OSError:  # none, or a read-only cache: a stamp left names the generation it
        pass  # saw, and any build that publishes makes another live, so it cannot hold


def _manifest_digest(output: Path) -> bytes | None:
    try:
        return digest((output / "index" / "manifest.json").read_bytes())
    except OSError:
        return None
