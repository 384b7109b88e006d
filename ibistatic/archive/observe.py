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
import logging
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import TypeVar

from .. import forked

T = TypeVar("T")

__all__ = ["Observation", "observe", "observing", "RACY_SECONDS"]

#: entries changed this recently when an observation begins make it unusable (a coarse
#: file-system clock, 1 s on some network file systems, could hide a second change)
RACY_SECONDS = 2.0


@dataclass(frozen=True)
class Observation:
    """Every entry under `roots` (NUL-joined absolute paths) and the digest of their lstat."""

    roots: tuple[str, ...]  # each Archive root's real path, in the configuration's order
    #: the entries, NUL-separated (a NUL is the one byte no name holds), zlib-compressed:
    #: held through the whole build (and by every forked worker), so packed
    packed: bytes
    #: one digest of the parts' digests, in order: each part digests its own entries
    digest: bytes
    #: how many entries each part has, in order (the parts are walked apart, in parallel)
    counts: tuple[int, ...]

    @property
    def paths(self) -> bytes:
        return zlib.decompress(self.packed)

    @property
    def entries(self) -> int:
        return sum(self.counts)

    def holds(self, roots: Iterable[Path | str]) -> bool:
        """Whether `roots` are still these folders with these entries, unchanged."""
        if tuple(os.path.realpath(root) for root in roots) != self.roots:
            return False
        # lstat takes the bytes as they are: no decoded copy of every path
        joined = self.paths
        paths = joined.split(b"\0") if joined else []
        starts = list(accumulate(self.counts, initial=0))

        def digest_of(number: int) -> bytes | None:  # None: an entry gone
            try:
                return _digest(map(os.lstat, paths[starts[number] : starts[number + 1]]))
            except OSError:
                return None

        # the parts side by side: after a build evicted the inode cache, an lstat per
        # entry waits on the disk, and the waits overlap
        parts = _apart(digest_of, len(self.counts), "checking the Archives are unchanged")
        return None not in parts and _joined_digest(parts) == self.digest


#: the folders whose subtrees are walked apart, at least (when the tree has them within
#: _SPLIT_DEPTH levels): many more than processes, so that a large subtree does not
#: leave the others idle; a constant, so that the observation is the same for any --jobs
SPLIT_FOLDERS = 256
_SPLIT_DEPTH = 4
#: fewer folders than this to walk are walked here (a small tree: forking costs more)
FORK_FOLDERS = 64


@contextmanager
def observing(roots: Iterable[Path | str]) -> Iterator[Callable[[], Observation | None]]:
    """The observation of `roots` as a build that begins now reads them, for the block
    that follows (the build): yields a function that gives it.  The racy rule counts
    from now, before anything is read: an entry changed after the walk saw it no longer
    matches the observation.  A walk that fails gives no observation, with a warning:
    it only costs the next build its short cut."""
    seen = _observed(lambda: observe(roots))
    yield lambda: seen


def _observed(walk: Callable[[], Observation | None]) -> Observation | None:
    """walk(); a failure (a bug, memory, its process killed) said, not raised: the build
    is published, and only the next one's short cut is lost."""
    try:
        return walk()
    except Exception as error:  # noqa: BLE001 - no stamp: the next build crawls
        died = isinstance(error, forked.WorkerDied)
        why = error.what if died else f"{type(error).__name__}: {error}"
        logging.getLogger(__name__).warning(
            "ibistatic: the Archives were not observed for the build's stamp (%s): the next "
            "build reads them all",
            why,
        )
        return None


def observe(roots: Iterable[Path | str], began: int | None = None) -> Observation | None:
    """Every entry under `roots`; None when the tree cannot be trusted to lstat alone
    (a symbolic link, an unlistable folder, a root missing, an entry changed less than
    RACY_SECONDS before `began`, time.time_ns() when the build began reading; default: now).

    The first levels are walked here, the subtrees of the folders found there (many of
    them) by the forked workers side by side when the tree is large (a walk in one
    process was seconds of a large build)."""
    began = time.time_ns() if began is None else began
    real = tuple(os.path.realpath(root) for root in roots)
    try:
        head, folders = _first_levels(real)
    except (OSError, _Untrustworthy):
        return None
    parts = [_seen(head)] + _walk_apart(folders)
    if any(part is None for part in parts):
        return None
    if max(part.newest for part in parts) >= began - int(RACY_SECONDS * 1e9):
        return None
    return Observation(
        real,
        zlib.compress(b"\0".join(b"\0".join(part.paths) for part in parts if part.paths), 1),
        _joined_digest([part.digest for part in parts]),
        tuple(len(part.paths) for part in parts),
    )


@dataclass(frozen=True)
class _Part:
    """Some entries, in order: their paths, the digest of their lstat, the newest time."""

    paths: list[bytes]
    digest: bytes
    newest: int


def _seen(entries: Iterable[tuple[str, os.stat_result]]) -> _Part:
    # digested as walked: keeping every stat result (about 1 KB each) grew with the tree
    digest = hashlib.blake2b(digest_size=32)
    paths: list[bytes] = []
    newest = 0
    for path, result in entries:
        paths.append(os.fsencode(path))
        _add(digest, result)
        newest = max(newest, result.st_mtime_ns, result.st_ctime_ns)
    return _Part(paths, digest.digest(), newest)


def _walked(folder: str) -> _Part | None:
    """The part of everything under `folder` (not itself); None if it cannot be trusted."""
    try:
        return _seen(_walk(folder))
    except (OSError, _Untrustworthy):
        return None


def _walk_apart(folders: list[str]) -> list[_Part | None]:
    """_walked of each of `folders`, in forked workers when there are many."""
    return _apart(lambda number: _walked(folders[number]), len(folders), "observing the Archives")


def _apart(work: Callable[[int], T], count: int, doing: str) -> list[T]:
    """work(n) for each n of range(count), in order; in forked workers, each taking the
    next number left, when there are FORK_FOLDERS or more."""
    if count < FORK_FOLDERS:
        return [work(number) for number in range(count)]
    return forked.ordered(work, count, doing)


def _first_levels(roots: tuple[str, ...]) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """The roots and their first levels' entries, in order, and the folders of the last
    level walked (their subtrees are left to walk): enough of them to share out, or
    _SPLIT_DEPTH levels."""
    head: list[tuple[str, os.stat_result]] = []
    folders: list[str] = []
    for root in roots:
        top = os.lstat(root)
        if not stat.S_ISDIR(top.st_mode):
            raise _Untrustworthy(root)
        head.append((root, top))
        folders.append(root)
    for _ in range(_SPLIT_DEPTH):
        if len(folders) >= SPLIT_FOLDERS or not folders:
            break
        below: list[str] = []
        for folder in folders:
            for path, result in _listed(folder):
                head.append((path, result))
                if stat.S_ISDIR(result.st_mode):
                    below.append(path)
        folders = below
    return head, folders


class _Untrustworthy(Exception):
    """A tree lstat alone cannot vouch for."""


def _listed(folder: str) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of each entry of `folder` (not below it)."""
    with os.scandir(folder) as listing:
        for entry in listing:
            result = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(result.st_mode):
                raise _Untrustworthy(entry.path)
            yield entry.path, result


def _walk(root: str) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of everything under the folder `root` (not itself), folders
    before their entries."""
    folders = [root]
    while folders:
        for path, result in _listed(folders.pop()):
            yield path, result
            if stat.S_ISDIR(result.st_mode):
                folders.append(path)


def _joined_digest(parts: list[bytes]) -> bytes:
    return hashlib.blake2b(b"".join(parts), digest_size=32).digest()


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
