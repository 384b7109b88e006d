"""Replacing a published tree atomically.

The site's output is a link to a generation (store/layout.py): :func:`point` turns it to
another one with one ``rename`` of a new link over the old, so at every instant the
output path is either the whole previous site or the whole new one.  The first build
over a plain folder (a site of an older version) exchanges the folder and the link with
one ``renameat2(RENAME_EXCHANGE)`` call; elsewhere (or on file systems without it) two
renames are used, leaving a window of microseconds with no output.  :func:`publish_tree`
does the same for a folder that is not a link (the catalog inside a generation).

Generations share the bytes of unchanged files: :func:`clone_tree` and
:func:`sync_paths` make files by hard links, and no published file is ever written in
place (a new file is written beside it and renamed over it), so a file shared by two
generations never changes under either.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import time
from pathlib import Path

__all__ = [
    "exchange",
    "publish_tree",
    "staging_path",
    "point",
    "clone_tree",
    "sync_paths",
    "remove_file",
    "clean_folder",
    "discard",
    "link_over",
]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = None


def _renameat2():
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        except OSError:
            _libc = False
    return getattr(_libc, "renameat2", None) if _libc else None


def exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths; False when the system cannot."""
    function = _renameat2()
    if function is None:
        return False
    result = function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0


def staging_path(output: Path, purpose: str = "staging") -> Path:
    return output.parent / f".{output.name}.{purpose}-{os.getpid()}"


def publish_tree(staging: Path, output: Path) -> None:
    """Make `staging` the published `output`; the previous tree is removed afterwards,
    in the background (deleting a large tree can take longer than building it)."""
    if output.exists() and exchange(staging, output):
        discard(_set_aside(staging, output))  # it now holds the previous site
    elif output.exists():
        previous = _set_aside(output, output)
        os.rename(staging, output)
        discard(previous)
    else:
        os.rename(staging, output)


def point(output: Path, target: str) -> Path | None:
    """Make `output` a link to `target` (relative to its folder) in one rename; returns
    the plain folder it replaced, set aside for :func:`discard`, or None."""
    link = output.parent / f".{output.name}.link-{os.getpid()}"
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    if output.is_symlink() or not os.path.lexists(output):
        os.replace(link, output)  # atomic: the old link is replaced, never missing
        return None
    if exchange(link, output):  # a plain folder: the link takes its place at once
        return _set_aside(link, output)
    previous = _set_aside(output, output)
    os.replace(link, output)
    return previous


def clone_tree(source: Path, destination: Path) -> int:
    """A copy of `source` at `destination` (new) whose files are hard links to its
    files; returns how many files."""
    source, destination = str(source), str(destination)
    os.mkdir(destination)
    count = 0
    for folder, subfolders, files in os.walk(source):
        target = destination + folder[len(source) :]
        for name in subfolders:
            os.mkdir(os.path.join(target, name))
        for name in files:
            os.link(os.path.join(folder, name), os.path.join(target, name), follow_symlinks=False)
        count += len(files)
    return count


def sync_paths(source: Path, destination: Path, paths) -> None:
    """Make each of `paths` (relative, '/'-separated) in `destination` what it is in
    `source`: a hard link to the same file, a folder cloned whole, or nothing."""
    for relative in sorted(paths):
        parts = relative.split("/")
        origin, target = os.path.join(source, *parts), os.path.join(destination, *parts)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        if os.path.isdir(origin):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            clone_tree(Path(origin), Path(target))
        elif os.path.lexists(origin):
            link_over(origin, target)
        else:
            remove_file(destination, relative)


def link_over(origin: str, target: str) -> None:
    """`target` becomes a hard link to `origin` (a new name renamed over the old)."""
    temporary = f"{target}.{os.getpid()}.tmp"
    if os.path.lexists(temporary):
        os.unlink(temporary)
    try:
        os.link(origin, temporary, follow_symlinks=False)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.link(origin, temporary, follow_symlinks=False)
    os.replace(temporary, target)


def remove_file(root: Path, relative: str) -> None:
    """Remove a file and the folders it leaves empty (a persistent URL's folder)."""
    path = os.path.join(root, *relative.split("/"))
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    directory = os.path.dirname(path)
    while directory != str(root):
        try:
            os.rmdir(directory)
        except OSError:
            break
        directory = os.path.dirname(directory)


def clean_folder(folder: Path, keep: set[str]) -> None:
    """Discard every entry of `folder` but `keep` and those named after a running
    process ('...-<pid>': a build at work, or a tree it set aside and is deleting)."""
    try:
        entries = [entry.name for entry in os.scandir(folder)]
    except FileNotFoundError:
        return
    for name in entries:
        pid = name.rsplit("-", 1)[-1]
        if name in keep or (pid.isdigit() and _busy(name, int(pid))):
            continue
        aside = folder / f"old{time.monotonic_ns()}-{os.getpid()}"
        try:
            os.rename(folder / name, aside)
        except OSError:
            continue  # another build took it first
        discard(aside)


def _busy(name: str, pid: int) -> bool:
    """Whether the entry `name` of process `pid` is still that process's: another live
    build's, or one this process set aside ('old...') and whose deletion runs.  Watch
    cleans its generations folder at each republish: trees of 100,000 pages still being
    deleted were handed to a new `rm` each time (24 at once after 7 deposits)."""
    if pid == os.getpid():
        return name.startswith("old")
    return _alive(pid)


def _set_aside(path: Path, output: Path) -> Path:
    """Rename `path` beside `output` under a fresh name of this process, for deletion
    (trees set aside earlier may still be being deleted)."""
    moved = staging_path(output, f"old{time.monotonic_ns()}")
    os.rename(path, moved)
    return moved


def discard(path: Path) -> None:
    """Remove `path` in a detached process, without waiting (deleting a large tree can
    take longer than building it). The process is spawned (fork and exec at once), never
    a bare fork: watch's observer threads may hold locks a forked copy would inherit."""
    remover = shutil.which("rm")
    if remover is None:  # no rm here: remove it now
        _remove_any(path)
        return
    try:
        subprocess.Popen(
            [remover, "-rf", "--", os.fspath(path)],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        _remove_any(path)


def _remove_any(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def remove_stale(output: Path) -> None:
    """Remove what builds killed midway left beside the output (never the output), in
    the background: a half-written staging tree of a large site has as many files as
    the site."""
    for leftover in output.parent.glob(f".{output.name}.*-*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            try:
                discard(_set_aside(leftover, output))  # named after this process while it runs
            except OSError:
                continue  # another build took it first


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
