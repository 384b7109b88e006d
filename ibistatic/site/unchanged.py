"""A rebuild with nothing new, answered by ``lstat`` alone (the build's *stamp*).

After a build from the command line, the stamp keeps what it published it from: the
ibistatic that built it (its files' sizes and times), the settings, an
:class:`~ibistatic.archive.observe.Observation` of the Archives taken before the crawl,
the live generation and its manifest's digest, and the report.  The next build first
checks the stamp: the same ibistatic, settings and outputs, every entry of the Archives
unchanged to ``lstat``, the same generation live with the same manifest: then the site
is what that build would publish again, and its report is the stamp's.  No crawl cache,
no state and no descriptor is read: the check costs one ``lstat`` per entry of the
Archives (benchmarks/README.md has its figures).

Anything else goes the usual way (site.build.publish), which still makes a no-op of an
update that changes nothing, after crawling.  The stamp is removed before any such
build, so an interrupted build never leaves one that describes another site.
"""

from __future__ import annotations

import hashlib
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
#: the shape of a Stamp; with the state's version, what a stamp file must have been
#: written with to be read (an older shape is left alone, as if there were none)
#: 3: the observation's paths zlib-compressed; 4: walked in parts (Observation.counts)
STAMP_VERSION = 4


@dataclass(frozen=True)
class Stamp:
    code: bytes  # code_fingerprint(): another ibistatic may publish other bytes
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
        loaded = load_sealed(stamp_path(config), _KIND, (STATE_VERSION, STAMP_VERSION), 0)
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
        stamp.code == code_fingerprint()
        and stamp.outputs == outputs
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
        code_fingerprint(),
        settings_fingerprint(config),
        outputs,
        observation,
        generation,
        _manifest_digest(config.output),
        replace(report, mode="update of 0 changed, 0 affected items"),
    )
    try:
        save_sealed(stamp_path(config), _KIND, ((STATE_VERSION, STAMP_VERSION), stamp), [])
    except (Untrusted, OSError):
        forget_stamp(config)


def code_fingerprint() -> bytes:
    """A digest of the name, size and mtime of every file of the installed package
    (a few hundred): an upgrade, or a developer's edit, is never answered by the
    stamp of a build that another ibistatic made (the build state only knows its
    STATE_VERSION)."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(package.rglob("*")):
        if "__pycache__" not in path.parts and path.is_file():
            status = path.stat()
            name = path.relative_to(package).as_posix()
            digest.update(f"{name}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return digest.digest()


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
