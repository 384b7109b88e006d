"""The published tree against each chosen host's documented limits: files, bytes, and
the size of one file (docs/hosting.md).  Checked after the build, over the tree as
published: the pages, the index, the assets and the catalog all count."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TreeLimits", "TreeSize", "measure", "tree_warnings"]

#: warn from this share of a limit on: a site grows, and the next deposits may pass it
NEAR = 0.9


@dataclass(frozen=True)
class TreeLimits:
    """What one host accepts of a published tree; None where it sets no limit."""

    host: str
    files: int | None = None
    bytes: int | None = None
    file_bytes: int | None = None  # the largest one file may be
    source: str = ""  # where the host documents them, for the message


@dataclass(frozen=True)
class TreeSize:
    files: int
    bytes: int
    largest: tuple[int, str]  # (bytes, path relative to the tree)


def measure(root: Path) -> TreeSize:
    """How many files the tree at `root` holds, their bytes, and its largest file."""
    files = total = 0
    largest = (0, "")
    root = os.path.realpath(root)
    for directory, subdirectories, names in os.walk(root):
        subdirectories.sort()
        for name in names:
            path = os.path.join(directory, name)
            size = os.lstat(path).st_size
            files += 1
            total += size
            if size > largest[0]:
                largest = (size, os.path.relpath(path, root))
    return TreeSize(files, total, largest)


def tree_warnings(limits: list[TreeLimits], size: TreeSize) -> list[str]:
    """One warning per limit the tree passes, or comes near (NEAR), for each host."""
    warnings = []
    for limit in limits:
        for what, count, most in (
            ("files", size.files, limit.files),
            ("bytes", size.bytes, limit.bytes),
        ):
            if most is not None and count >= most * NEAR:
                warnings.append(_warning(limit, what, count, most))
        if limit.file_bytes is not None and size.largest[0] > limit.file_bytes:
            largest, path = size.largest
            warnings.append(
                f"{limit.host}: {path} is {largest:,} bytes; the host takes files of at most "
                f"{limit.file_bytes:,} bytes ({limit.source})"
            )
    return warnings


def _warning(limit: TreeLimits, what: str, count: int, most: int) -> str:
    verdict = "more than" if count > most else f"{count / most:.0%} of"
    return (
        f"{limit.host}: the site has {count:,} {what}, {verdict} the {most:,} the host "
        f"accepts ({limit.source})"
    )
