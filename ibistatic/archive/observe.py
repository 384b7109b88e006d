"""What the Archives' trees look like to ``lstat``: enough to tell, without reading a
file, that nothing a crawl would see has changed since the last build.

An :class:`Observation` lists every entry under the Archive roots (files and folders,
dotfiles too) and keeps a digest of their lstat results: mode, inode, size, mtime and
ctime.  Checking it again (:meth:`Observation.holds`) is one ``lstat`` per entry and no
``open``: a file written, replaced, renamed or chmod-ed changes its ctime; an entry
added or removed under a folder changes the folder's mtime.

It is conservative where the crawl is subtle: a tree with a symbolic link anywhere
(the crawl follows some, inside the root), or a folder it cannot list, is not observed
at all (:func:`observe` returns None), and the next build reads the Archives as usual.

Racy entries: a file changed twice within one tick of the file system's clock keeps
the same times.  So an observation with an entry changed less than
:data:`RACY_SECONDS` before it began is not kept: the next build crawls, and
observes a tree that has settled (git's "racily clean" entries, same cure).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Observation", "observe", "RACY_SECONDS"]

#: entries changed this recently when an observation begins make it unusable (a coarse
#: file-system clock, 1 s on some network file systems, could hide a second change)
RACY_SECONDS = 2.0


@dataclass(frozen=True)
class Observation:
    """Every entry under `roots` (NUL-joined absolute paths) and the digest of their lstat."""

    roots: tuple[str, ...]  # each Archive root's real path, in the configuration's order
    #: the entries, NUL-separated (a NUL is the one byte no name holds), zlib-compressed:
    #: held through the whole build (and by every forked worker), 42 MB at 100k, 2.8 packed
    packed: bytes
    digest: bytes

    @property
    def paths(self) -> bytes:
        return zlib.decompress(self.packed)

    @property
    def entries(self) -> int:
        paths = self.paths
        return paths.count(b"\0") + 1 if paths else 0

    def holds(self, roots: Iterable[Path | str]) -> bool:
        """Whether `roots` are still these folders with these entries, unchanged."""
        if tuple(os.path.realpath(root) for root in roots) != self.roots:
            return False
        # lstat takes the bytes as they are: no decoded copy of every path
        joined = self.paths
        paths = joined.split(b"\0") if joined else []
        try:
            return _digest(map(os.lstat, paths)) == self.digest
        except OSError:  # an entry gone
            return False


def observe(roots: Iterable[Path | str]) -> Observation | None:
    """Every entry under `roots`; None when the tree cannot be trusted to lstat alone
    (a symbolic link, an unlistable folder, a root missing, an entry changed just now)."""
    began = time.time_ns()
    real = tuple(os.path.realpath(root) for root in roots)
    # digested as walked: keeping every stat result (about 1 KB each) took 491 MiB at 100k
    digest = hashlib.blake2b(digest_size=32)
    paths: list[bytes] = []
    newest = 0
    for root in real:
        try:
            for path, result in _walk(root):
                paths.append(os.fsencode(path))
                _add(digest, result)
                newest = max(newest, result.st_mtime_ns, result.st_ctime_ns)
        except (OSError, _Untrustworthy):
            return None
    if newest >= began - int(RACY_SECONDS * 1e9):
        return None
    return Observation(real, zlib.compress(b"\0".join(paths), 1), digest.digest())


class _Untrustworthy(Exception):
    """A tree lstat alone cannot vouch for."""


def _walk(root: str):
    """(path, lstat) of `root` and everything under it, folders before their entries."""
    top = os.lstat(root)
    if not stat.S_ISDIR(top.st_mode):
        raise _Untrustworthy(root)
    yield root, top
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as listing:
            for entry in listing:
                result = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(result.st_mode):
                    raise _Untrustworthy(entry.path)
                yield entry.path, result
                if stat.S_ISDIR(result.st_mode):
                    folders.append(entry.path)


def _digest(results: Iterable[os.stat_result]) -> bytes:
    """One digest of every result's mode, device, inode, size, mtime and ctime, in order."""
    digest = hashlib.blake2b(digest_size=32)
    for result in results:
        _add(digest, result)
    return digest.digest()


def _add(digest, r: os.stat_result) -> None:
    digest.update(
        b"%d %d %d %d %d %d\n"
        % (r.st_mode, r.st_dev, r.st_ino, r.st_size, r.st_mtime_ns, r.st_ctime_ns)
    )
