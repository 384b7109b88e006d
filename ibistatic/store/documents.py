"""The copies of the documents a site publishes itself, named by their SHA-256.

An Archive without a server of its own has its ``doc/`` files published inside the site,
at the paths a URLib Archive serves them (``col/<IBI>/doc/<file>``: site/outputs/
documents.py).  Each document is copied once into this folder (beside the build state,
never served), under its SHA-256; every generation of the site then holds a hard link to
that copy.  So:

- a build costs a link per document, not a copy: generations share the bytes, and equal
  documents (a copy of an item in two Archives, a file deposited twice) are stored once;
- an edit of a document in the Archive (even in place, the same inode) never changes a
  published generation: the site serves the bytes of the build that published them;
- a copy whose bytes differ from the sum it is named after is never made: the name is
  the sum of the bytes copied.

Copies no generation links any more are removed by :func:`prune` after a build.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .files import DIGEST_SIZE, Linked

__all__ = ["Documents", "prune"]

#: open a document without following a link (the crawl refuses links out of the root)
_READ_NO_LINK = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


class Documents:
    """The copies in `folder`; `sums(path)` gives a file's (size, SHA-256 hex) as the
    build already knows it (archive.filesums: read once per file identity)."""

    def __init__(self, folder: Path, sums) -> None:
        self.folder = folder
        self.sums = sums

    def take(self, path: str) -> Linked | None:
        """The copy of the document at `path`, made if it is not there yet; None when
        `path` is no regular file that can be read (the crawl reports why)."""
        _, sha = self.sums(path)
        if sha is None:
            return None
        copy = self._path(sha)
        if not os.path.exists(copy):
            sha = self._copy(path)
            if sha is None:
                return None
            copy = self._path(sha)
        return Linked(copy, bytes.fromhex(sha)[:DIGEST_SIZE])

    def _path(self, sha: str) -> str:
        return f"{self.folder}/{sha[:2]}/{sha}"

    def _copy(self, path: str) -> str | None:
        """Copy `path` in, named by the SHA-256 of the bytes copied; that sum."""
        try:
            source = os.open(path, _READ_NO_LINK)
        except OSError:
            return None
        temporary = f"{self.folder}/.{os.getpid()}-{id(self)}.tmp"
        os.makedirs(self.folder, exist_ok=True)
        sha256 = hashlib.sha256()
        try:
            if not stat.S_ISREG(os.fstat(source).st_mode):
                return None
            with open(temporary, "wb") as target:
                while chunk := os.read(source, _CHUNK):
                    sha256.update(chunk)
                    target.write(chunk)
            sha = sha256.hexdigest()
            os.makedirs(f"{self.folder}/{sha[:2]}", exist_ok=True)
            os.chmod(temporary, 0o444)  # a copy is never written again: linked as it is
            os.replace(temporary, self._path(sha))
            return sha
        finally:
            os.close(source)
            if os.path.exists(temporary):
                os.unlink(temporary)


def prune(folder: Path) -> int:
    """Remove the copies that no published generation links any more (a link count of
    1: only this folder holds them); how many.  On a file system where copies were made
    instead of links, every copy has a count of 1 and is kept only as long as a build
    takes it again (it is then copied again on its next use)."""
    removed = 0
    try:
        groups = list(os.scandir(folder))
    except OSError:
        return 0
    for group in groups:
        if not group.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(group.path):
            try:
                if entry.stat(follow_symlinks=False).st_nlink == 1:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed
