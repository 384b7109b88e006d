"""What an output hands the store, and how the store keeps it.

A :class:`File` is one file of the site: bytes, text, or the lines of a large text file
(streamed to disk, never whole in memory).  A :class:`Tree` is a folder made whole by a
function (the catalog, the assets).  A :class:`Notice` is a warning for the build's report.
:class:`Files` takes files one at a time and keeps the last build's *digests* (16 bytes of
sha256 per file: a 100,000-item site keeps 700,000 of them) to write only what changed.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import zlib
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "File",
    "Linked",
    "Tree",
    "Notice",
    "Files",
    "digest",
    "pack",
    "unpack",
    "write_new",
    "place",
    "batched",
    "DIGEST_SIZE",
]

DIGEST_SIZE = 16


@dataclass(frozen=True, slots=True)
class Linked:
    """A file's bytes as a file already on disk (a document in the store's copies,
    store/documents.py): hard-linked where it goes, copied where no link can be made."""

    source: str
    digest: bytes  # its bytes' digest (digest()), known without reading them


@dataclass(frozen=True, slots=True)
class File:
    """One file of the site, at `path` (relative, '/'-separated)."""

    path: str
    #: None: `lines`, or the last build's bytes (`kept`)
    data: bytes | str | Linked | None = None
    lines: Iterable[str] | None = None  # a large text file, one line (no newline) at a time
    owner: str | None = None  # the repository key of the item this page is of; None: site-wide
    #: the sha256 the index's checksums.json lists for it (kept for the next update)
    checksum: str | None = None
    kept: bool = False  # unchanged since the last build: not made again, its digest carries over


@dataclass(frozen=True, slots=True)
class Tree:
    """A folder of the site at `path`, made whole by `make(folder)` (a new folder)."""

    path: str
    make: Callable[[Path], None]


@dataclass(frozen=True, slots=True)
class Notice:
    """A warning for the build's report (a host's limits exceeded, ...)."""

    text: str


def digest(data: bytes) -> bytes:
    return _kept(hashlib.sha256(data))


def _kept(sha256) -> bytes:
    """What tells a file's bytes from the last build's: 16 bytes of their sha256 (hex
    strings, for every file of a large site, would take several times more)."""
    return sha256.digest()[:DIGEST_SIZE]


def pack(data: bytes) -> bytes:
    """An index record or answer as a build's state keeps it: compressed (in a large
    build they would otherwise be most of its memory).

    The window is as large as the data, no larger: the same bytes out as with zlib's
    32 KB window, but zlib takes longer to set up a 32 KB window than to compress a
    record of a few hundred bytes (unpack reads any window size)."""
    return zlib.compress(data, 1, max(9, min(15, len(data).bit_length())))


unpack = zlib.decompress


class Files:
    """Takes the files of a build; keeps only those whose bytes differ from `old`
    (the last build's digests), the first of each path.

    With `direct`, a differing file is written there at once instead of being kept in
    memory (a full build into its new tree: memory stays flat however large the site).
    """

    def __init__(
        self, old: dict[str, bytes], direct: Path | None = None, taken: Container[str] = ()
    ) -> None:
        self.old = old
        self.direct = str(direct) if direct is not None else None
        self._prefix = os.path.join(self.direct, "") if direct is not None else ""
        self.taken = taken  # paths another Files took first (a forked worker's parent's)
        self.files: dict[str, bytes | Linked] = {}  # made, not yet written (no `direct`)
        self.digests: dict[str, bytes] = {}  # every file of the site so far
        self.written = 0
        self._made: set[str] = set()
        self._dropped: list[str] | None = None  # carry(): the old paths not carried

    def put(self, file: File) -> bool:
        """Take `file`; False when its path was taken already (the first one wins)."""
        if file.path in self.digests or file.path in self.taken:
            return False
        if file.kept:
            self.digests[file.path] = self.old[file.path]
        elif file.lines is not None:
            self._put_lines(file.path, file.lines)
        else:
            self._put_data(file.path, file.data)
        return True

    def absorb(self, digests: dict[str, bytes], written: int) -> None:
        """What a forked worker wrote straight to disk."""
        self.digests.update(digests)
        self.written += written

    def carry(self, digests: dict[str, bytes], dropped: Iterable[str] | None = None) -> None:
        """The digests of files not made again (unchanged), under those made so far.
        `dropped`: every path of `old` that `digests` leaves out (None: not known)."""
        digests.update(self.digests)
        self.digests = digests
        self._dropped = None if dropped is None else list(dropped)

    def removed(self) -> list[str]:
        """The last build's files this one has not: when what was carried is known, of
        those it left out only (not a look at each path of the site per watch republish)."""
        if self._dropped is None:
            return [path for path in self.old if path not in self.digests]
        return [
            path
            for path in dict.fromkeys(self._dropped)
            if path in self.old and path not in self.digests
        ]

    def _put_data(self, relative: str, data: bytes | str | Linked) -> None:
        if isinstance(data, Linked):
            self.digests[relative] = data.digest
        else:
            data = data.encode("utf-8") if isinstance(data, str) else data
            self.digests[relative] = digest(data)
        if self.old.get(relative) == self.digests[relative]:
            return
        self.written += 1
        if self.direct is None:
            self.files[relative] = data
            return
        place(self._path(relative), data)

    def _put_lines(self, relative: str, lines: Iterable[str]) -> None:
        """Straight to disk a batch of lines at a time, else as _put_data()."""
        if self.direct is None:  # an update: compared with the last digest first
            listed = list(lines)  # joined in C: 350,000 lines of a watch's _redirects
            listed.append("")  # each line ended, and no lines no bytes
            self._put_data(relative, "\n".join(listed))
            return
        sha256 = hashlib.sha256()
        with open(self._path(relative), "wb") as handle:
            for batch in batched(lines, 10000):
                data = "".join(line + "\n" for line in batch).encode("utf-8")
                sha256.update(data)
                handle.write(data)
        self.digests[relative] = _kept(sha256)
        self.written += 1

    def _path(self, relative: str) -> str:
        # a plain join: `relative` has no empty, '.' or '..' segment and no backslash
        # (pages.check_relative), and os.path.join and dirname cost a build seconds
        path = self._prefix + relative
        directory = path.rpartition("/")[0]
        if directory not in self._made:
            _make_directory(directory)
            self._made.add(directory)
        return path


def batched(iterable: Iterable, size: int) -> Iterator[tuple]:
    """`iterable` in tuples of `size` (the last one shorter); none when it is empty
    (itertools.batched, from Python 3.12)."""
    iterator = iter(iterable)
    while batch := tuple(itertools.islice(iterator, size)):
        yield batch


def _make_directory(directory: str) -> None:
    """mkdir, and its parents only when it fails: most pages' parents exist already, and
    makedirs would stat each of them first (the disk is most of a build's time)."""
    try:
        os.mkdir(directory)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
    except FileExistsError:
        pass


def place(path: str, data: bytes | Linked) -> None:
    """Make the new file `path` of `data`: written, or linked to its source."""
    if not isinstance(data, Linked):
        write_new(path, data)
        return
    try:
        os.link(data.source, path)
    except OSError:  # another file system, or one without hard links: a copy
        import shutil

        try:
            shutil.copyfile(data.source, path)
        except OSError as error:
            raise OSError(error.errno, error.strerror, path) from None


def write_new(path: str, data: bytes) -> None:
    """Write a file with the fewest system calls (no buffered file object)."""
    handle = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666
    )  # as open() does, less the umask
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]
    except OSError as error:  # os.write names no file: name it for the message
        raise OSError(error.errno, error.strerror, path) from None
    finally:
        os.close(handle)
