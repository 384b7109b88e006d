"""Hash every file of a built site, to tell whether two builds made the same bytes.

    python scripts/site_hash.py SITE [--list]

SITE is the output path (a link to its live generation is followed). Prints one line,
``<sha256> <files> files``: the sha256 of the sorted lines ``<relative path> <sha256 of
the file>`` of every file under SITE; with ``--list``, those lines first (to diff two
trees). Symbolic links inside the tree are hashed as links (their target text).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path


def file_lines(root: Path) -> list[str]:
    """'<relative path> <sha256>' of every file under `root`, sorted by path."""
    root = Path(os.path.realpath(root))
    lines = []
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            lines.append(f"{relative} {_file_digest(path)}")
    return sorted(lines)


def _file_digest(path: str) -> str:
    if os.path.islink(path):
        return "link:" + hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def tree_hash(root: Path) -> tuple[str, int]:
    lines = file_lines(root)
    return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest(), len(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built site (its output path)")
    parser.add_argument("--list", action="store_true", help="print each file's hash first")
    arguments = parser.parse_args(argv)
    if not arguments.site.is_dir():
        print(f"site_hash: {arguments.site} is not a folder", file=sys.stderr)
        return 2
    if arguments.list:
        print("\n".join(file_lines(arguments.site)))
    digest, count = tree_hash(arguments.site)
    print(f"{digest} {count} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
