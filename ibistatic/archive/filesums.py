"""The size and SHA-256 of the Archives' files, kept between builds.

A file-list page shows the SHA-256 of every file of its item.  Reading every document
again at each full build costs what the Archives weigh (INPE's PDFs: gigabytes), so a
sum is kept with what ``fstat`` says of the file it was read from: device, inode, size,
and modification and change times in nanoseconds.  Writing a file changes its mtime
and ctime, even when the writer sets the mtime back; replacing it gives another inode.
A file changed less than :data:`RACY_SECONDS` before it was read is not kept: a second
write within one tick of a coarse clock would leave its times as they were.

The sums are keyed by that identity, not by path: a file renamed keeps its sum only
while its ctime is unchanged (Linux sets it on rename), and a hard link shares it.
A build's forked workers send back what they found (:meth:`FileSums.take_seen`), and
the parent keeps it (:meth:`FileSums.keep`): after a full build only the sums of the
files it listed, so that the file does not grow with deleted documents.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import time
from pathlib import Path

from ..pickles import Unsaved, Untrusted, load_sealed, save_sealed
from .observe import RACY_SECONDS

__all__ = ["FileSums"]

#: bumped when the file's layout changes (an older file is then ignored)
VERSION = 1
#: device, inode, size, mtime_ns and ctime_ns, each taken modulo 2**64: a file system may
#: use all 64 bits of an inode, a file may be dated before 1970, and ext4 dates files up to
#: the year 2446, whose nanoseconds do not fit 64 bits (an identity needs no more)
_IDENTITY = struct.Struct("<QQQQQ")
_WORD = (1 << 64) - 1


class FileSums:
    """Sums by file identity, read from `path` on first use and written by save()."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._known: dict[bytes, bytes] | None = None
        self._changed = False
        #: sums found or computed in this process since the last take_seen()
        self.seen: dict[bytes, bytes] = {}
        self.warnings: list[str] = []
        #: settle() saves them and lets them go (a command's build; watch keeps them)
        self.save_early = False
        #: known sums are used; False: every file is read again (``build --full``)
        self.trusted = True

    @property
    def known(self) -> dict[bytes, bytes]:
        if self._known is None:
            self._known = self._load()
        return self._known

    def size_and_sum(self, path: str | Path) -> tuple[int | None, str | None]:
        """The size and SHA-256 (hex) of the regular file `path`, never through a symbolic
        link; (None, None) for anything else or a file that cannot be read."""
        try:
            descriptor = os.open(path, _READ_NO_LINK)
        except OSError:
            return None, None
        try:  # the descriptor alone: a file object costs more than a known sum's lookup
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                return None, None
            identity = _identity(status)
            # a sum this build made is fresh even when the kept ones are not trusted
            # (build --full): the file list and the documents' copies read a file once
            digest = self.seen.get(identity)
            if digest is None and self.trusted:
                digest = self.known.get(identity)
            if digest is None:
                digest = _digest(descriptor, status.st_size)
                if digest is None:
                    return None, None
            if _settled(status):
                self.seen[identity] = digest
            return status.st_size, digest.hex()
        finally:
            os.close(descriptor)

    def take_seen(self) -> dict[bytes, bytes]:
        """The sums seen since the last call (a forked worker returns them)."""
        seen, self.seen = self.seen, {}
        return seen

    def keep(self, seen: dict[bytes, bytes], whole: bool) -> None:
        """Keep `seen` for the next build (taken, not copied: the caller lets go of it);
        `whole`: they are every file the site lists (a full build), so the others are
        dropped."""
        if whole:
            if seen != self.known:
                self._known, self._changed = seen, True
            return
        known = self.known  # an update: as much work as it saw, not as the Archives hold
        fresh = {identity: s for identity, s in seen.items() if known.get(identity) != s}
        if fresh:
            known.update(fresh)
            self._changed = True

    def settle(self) -> None:
        """Once the file lists are made: with `save_early`, saved and let go from memory
        (read again on use), so that the rest of the build and its workers do without."""
        if self.save_early:
            self.save()
            if not self._changed:
                self._known = None

    def save(self) -> None:
        """Into its file, when keep() changed anything since it was read."""
        if self.path is None or not self._changed:
            return
        try:
            save_sealed(self.path, "file sums", (VERSION, None), [self.known])
            self._changed = False
        except (Untrusted, Unsaved, OSError) as why:
            self.warnings.append(f"file sums {self.path} not saved: {why}")

    def _load(self) -> dict[bytes, bytes]:
        if self.path is None:
            return {}
        try:
            loaded = load_sealed(self.path, "file sums", VERSION, 1)
        except Untrusted as why:  # only costs reading the files again
            self.warnings.append(f"file sums {self.path} not used: {why}; the files are read again")
            return {}
        return {} if loaded is None else loaded[1][0]


_READ_NO_LINK = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)


#: what one read of a large file takes
_CHUNK = 1 << 18


def _digest(descriptor: int, size: int) -> bytes | None:
    """The SHA-256 of the open file `descriptor` (left open), read to its end; None when
    it cannot be read.  `size` (its fstat's) lets a small file come whole in one read,
    with no file object: faster than ``hashlib.file_digest`` for the few-KB documents
    that most items hold (benchmarks/filesums_bench.py)."""
    sha256 = hashlib.sha256()
    want = min(size, _CHUNK) + 1  # one byte more: a file that grew is still read to its end
    try:
        while chunk := os.read(descriptor, want):
            sha256.update(chunk)
            want = _CHUNK
    except OSError:
        return None
    return sha256.digest()


def _identity(status: os.stat_result) -> bytes:
    numbers = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    return _IDENTITY.pack(*[number & _WORD for number in numbers])


def _settled(status: os.stat_result) -> bool:
    """Last changed long enough ago that a later write would show in its times."""
    newest = max(status.st_mtime_ns, status.st_ctime_ns)
    return newest < time.time_ns() - int(RACY_SECONDS * 1e9)
