"""Replacing a published directory atomically.

A build writes a complete new tree beside the output, then swaps it in.  On Linux the
swap is one ``renameat2(RENAME_EXCHANGE)`` call: at every instant the output path is
either the whole previous site or the whole new one.  Elsewhere (or on file systems
without it) two renames are used, leaving a window of microseconds with no output.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import time
from pathlib import Path

__all__ = ["exchange", "publish_tree", "staging_path"]

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


def _set_aside(path: Path, output: Path) -> Path:
    """Rename `path` beside `output` under a fresh name of this process, for deletion
    (trees set aside earlier may still be being deleted)."""
    moved = staging_path(output, f"old{time.monotonic_ns()}")
    os.rename(path, moved)
    return moved


def discard(path: Path) -> None:
    """Remove `path` in a detached process (double fork: no zombie, no waiting)."""
    try:
        child = os.fork()
    except (AttributeError, OSError):  # no fork here: remove it now
        shutil.rmtree(path, ignore_errors=True)
        return
    if child == 0:
        try:
            if os.fork() == 0:
                os.setsid()
                shutil.rmtree(path, ignore_errors=True)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def remove_stale(output: Path) -> None:
    """Remove what builds killed midway left beside the output (never the output), in
    the background: a half-written staging tree of a large site has 700,000 files."""
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
