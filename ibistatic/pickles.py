"""Caches and build state: large dicts saved as a series of pickles, in files sealed
with an HMAC so that only this user's own builds can have written them.

Chunks: one ``pickle.dump`` of a whole dict keeps a memo entry for every object it writes
until it is done: for the state of a large site that is more memory than the objects
themselves.  Each chunk here is a pickle of its own, so the memo never holds
more than a chunk.  (Objects shared between chunks are written once per chunk.)

Sealing: unpickling runs code named in the file, and the cache folder sits beside the
output, where others may be able to write.  So every file starts with an HMAC-SHA256 of
its kind and its bytes, under a key only this user can read (``cache-key``, mode 0600,
in ``$XDG_STATE_HOME/ibistatic/`` or ``~/.local/state/ibistatic/``, made on first use).
Nothing is unpickled before the whole file verifies, read through the same open file,
which must be this user's and writable by no one else (so it cannot change in between).
A file that fails raises :class:`Untrusted`: callers rebuild what it held, with a warning.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from . import forked

__all__ = [
    "dump_mapping",
    "load_mapping",
    "CHUNK",
    "save_sealed",
    "load_sealed",
    "Untrusted",
    "Unsaved",
    "key_path",
]

CHUNK = 5000
MAGIC = b"ibistatic sealed pickles 1\n"
_MAC_SIZE = hashlib.sha256().digest_size
_BLOCK = 1 << 20
#: what unpickling a verified file may still raise (a file of an older version)
_STALE = (
    pickle.UnpicklingError,
    EOFError,
    AttributeError,
    ImportError,
    ValueError,
    TypeError,
    IndexError,
)


class Untrusted(Exception):
    """A sealed file that must not be unpickled; the message says why."""


class Unsaved(Exception):
    """A sealed file not written: a forked worker pickling its chunks died (the message
    says which work and how).  Like a full disk, it costs only what the file saves."""


def dump_mapping(handle: IO[bytes], mapping: Mapping, chunk: int | None = None) -> None:
    """Write `mapping` as lists of at most `chunk` (default CHUNK) (key, value) pairs,
    ended by None."""
    chunk = chunk or CHUNK
    entries = list(mapping.items())
    for start in range(0, len(entries), chunk):
        pickle.dump(entries[start : start + chunk], handle, protocol=pickle.HIGHEST_PROTOCOL)
    pickle.dump(None, handle, protocol=pickle.HIGHEST_PROTOCOL)


def load_mapping(handle: IO[bytes]) -> dict:
    """The dict dump_mapping wrote at the handle's position."""
    mapping: dict = {}
    while (entries := pickle.load(handle)) is not None:
        mapping.update(entries)
    return mapping


def key_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "ibistatic" / "cache-key"


def _key() -> bytes:
    """This user's key: made on first use, readable by this user only."""
    path = key_path()
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return _new_key(path)
    except OSError as error:
        raise Untrusted(f"the key {path} cannot be read ({error.strerror})") from None
    with os.fdopen(handle, "rb") as file:
        status = os.fstat(file.fileno())
        if status.st_uid != os.getuid() or status.st_mode & 0o077:
            raise Untrusted(f"the key {path} is not this user's alone (expected mode 0600)")
        key = file.read()
    if len(key) < 32:
        raise Untrusted(f"the key {path} is damaged (expected 32 bytes)")
    return key


def _new_key(path: Path) -> bytes:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(handle, "wb") as file:
        file.write(key)
    try:
        os.link(temporary, path)  # never over a key another build made meanwhile
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
    return _key()


class _Sealing:
    """A file handle that feeds what is written to an HMAC too."""

    def __init__(self, handle: IO[bytes], mac) -> None:
        self.handle, self.mac = handle, mac

    def write(self, data) -> int:
        self.mac.update(data)
        return self.handle.write(data)


def _mac(key: bytes, kind: str):
    return hmac.new(key, kind.encode("utf-8") + b"\0", hashlib.sha256)


def save_sealed(path: Path, kind: str, head: Any, mappings: Sequence[Mapping]) -> None:
    """Write `head` (one pickle) and each of `mappings` (in chunks), sealed for `kind`;
    the file is replaced whole (a new file renamed over the old)."""
    mac = _mac(_key(), kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(MAGIC + bytes(_MAC_SIZE))
            sealing = _Sealing(file, mac)
            pickle.dump(head, sealing, protocol=pickle.HIGHEST_PROTOCOL)
            _dump_mappings(sealing, mappings, f"saving the {kind}")
            file.seek(len(MAGIC))
            file.write(mac.digest())
        os.replace(temporary, path)
    except forked.WorkerDied as died:  # what the caller says of the output is its own
        os.unlink(temporary)
        raise Unsaved(died.what) from None
    except BaseException:
        os.unlink(temporary)
        raise


def load_sealed(path: Path, kind: str, version: Any, count: int) -> tuple[Any, list[dict]] | None:
    """(head's second part, the `count` dicts) of a file save_sealed wrote with
    head = (version, ...); None when there is no such file or it is of another version.
    Raises Untrusted when the file may not be unpickled or does not read back."""
    try:  # non-blocking: a FIFO put where the file was must not stop the build
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Untrusted(f"it cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(handle).st_mode):  # a folder or a FIFO where it was: read,
        os.close(handle)  # it would raise or hang
        raise Untrusted("it is not a regular file")
    with os.fdopen(handle, "rb") as file:
        _verify(file, kind)
        try:
            head = pickle.load(file)
            if not isinstance(head, tuple) or head[0] != version:
                return None  # an older format: rebuilt without a word
            return head[1], [load_mapping(file) for _ in range(count)]
        except _STALE as error:
            raise Untrusted(f"it does not read back ({type(error).__name__})") from None


def _verify(file: IO[bytes], kind: str) -> None:
    """Check the owner, the mode and the HMAC; leave `file` at the first pickle."""
    status = os.fstat(file.fileno())
    if status.st_uid != os.getuid() or status.st_mode & 0o022:
        raise Untrusted("it is not this user's own file, or others may write it")
    header = file.read(len(MAGIC) + _MAC_SIZE)
    if not header.startswith(MAGIC) or len(header) < len(MAGIC) + _MAC_SIZE:
        raise Untrusted("it was not sealed by ibistatic (no authentication code)")
    mac = _mac(_key(), kind)
    while block := file.read(_BLOCK):
        mac.update(block)
    if not hmac.compare_digest(mac.digest(), header[len(MAGIC) :]):
        raise Untrusted("its authentication code does not verify (changed by someone, or damaged)")
    file.seek(len(header))


#: chunks from which pickling is shared among forked workers (a large build's state
#: has hundreds; pickled in one process, they were seconds of its build)
PARALLEL_CHUNKS = 16
_END = pickle.dumps(None, protocol=pickle.HIGHEST_PROTOCOL)


def _dump_mappings(out: IO[bytes], mappings: Sequence[Mapping], doing: str) -> None:
    """dump_mapping of each of `mappings` in turn: the same bytes, pickled by the forked
    workers side by side when there are many chunks (each writes its own file, read
    back here in order: the chunks are never all in memory at once)."""
    count = sum(-(-len(mapping) // CHUNK) for mapping in mappings)
    if count < PARALLEL_CHUNKS or not forked.available():
        for mapping in mappings:
            dump_mapping(out, mapping)
        return
    # the keys alone, listed before forking (shared): a list of every (key, value)
    # was a tuple per entry in the parent's memory at its peak; a worker walking the
    # mappings itself would touch, and so copy, all of them
    keys = [list(mapping) for mapping in mappings]
    chunks = [
        (mapping, of, start)
        for mapping, of in zip(mappings, keys)
        for start in range(0, len(of), CHUNK)
    ]
    folder = forked.owned_folder("ibistatic-pickles-")
    workers = forked.workers()

    def share(number: int, _) -> list[int]:
        sizes = []
        with open(os.path.join(folder, str(number)), "wb") as file:
            for mapping, of, start in chunks[number::workers]:
                entries = [(key, mapping[key]) for key in of[start : start + CHUNK]]
                sizes.append(file.write(pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)))
        return sizes

    try:
        sizes = list(forked.run_shares(share, None, doing))
        files = [open(os.path.join(folder, str(number)), "rb") for number in range(workers)]
        try:
            done = 0
            for mapping in mappings:
                for _ in range(0, len(mapping), CHUNK):
                    worker, turn = done % workers, done // workers
                    out.write(files[worker].read(sizes[worker][turn]))
                    done += 1
                out.write(_END)
        finally:
            for file in files:
                file.close()
    finally:
        forked.release(folder)
