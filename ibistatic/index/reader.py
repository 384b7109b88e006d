"""Reading the JSON index: open once, look up many.  Only the shards asked for are read."""

from __future__ import annotations

import gc
import json
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..errors import IbistaticError
from ..lru import LruCache
from .sharding import FORMAT, VERSION, shard_name

__all__ = ["Index", "IndexArchiveView", "IndexUnavailable", "find_index_dir"]


class IndexUnavailable(IbistaticError):
    """No index where one was expected, or one this version cannot read."""


def find_index_dir(path: Path | str) -> Path:
    """A built site (its ``index/``) or the index folder itself."""
    path = Path(path)
    for candidate in (path, path / "index"):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise IndexUnavailable(
        f"{path}: no index here (expected manifest.json in it or in its index/ folder; run 'ibistatic build' first)"
    )


class Index:
    """An index opened for lookups, within bounded memory however large it is.

    A lookup of one key maps its shard file into memory (read-only; the maps are kept
    in a least-recently-used cache bounded by count, and their pages are the operating
    system's file cache, not the process's heap) and decodes only that key's entry: the
    writer's compact JSON writes a top-level key as ``"<key>":`` and no string inside a
    value can hold that text unescaped.  The entries decoded are kept too (bounded).  A
    shard whose entry does not look as expected is parsed whole instead (:meth:`shard`,
    bounded as well).  Decoding, or reading, a whole shard per missed lookup would cost
    far more than finding one entry in its map."""

    #: shard files kept mapped (answers/ and shards/ together; a 1M-key index has 8,192)
    MAPS = 16384
    #: the JSON bytes of the shards kept parsed whole (a shard holds several times its
    #: file size in memory)
    SHARD_BYTES = 64 * 1024 * 1024
    #: shards kept at most, whatever their size
    SHARD_ENTRIES = 65536
    #: entries (one key's answers or records) kept decoded, and their JSON bytes
    ENTRY_ENTRIES = 131072
    ENTRY_BYTES = 64 * 1024 * 1024
    #: items each Archive view keeps decoded
    ITEM_ENTRIES = 65536

    def __init__(
        self, path: Path | str, *, shard_bytes: int | None = None, maps: int | None = None
    ) -> None:
        self.path = find_index_dir(path)
        manifest_path = self.path / "manifest.json"
        with open(manifest_path, "rb") as handle:
            self.manifest = json.load(handle)
        self.identity = _identity(manifest_path)
        if self.manifest.get("format") != FORMAT or self.manifest.get("version") != VERSION:
            raise IndexUnavailable(
                f"{manifest_path}: format {self.manifest.get('format')!r} version "
                f"{self.manifest.get('version')!r}; expected {FORMAT!r} version {VERSION}"
            )
        self.site_url: str = self.manifest["site-url"]
        self.digits: int = self.manifest["shard-digits"]
        self.shard_bytes = shard_bytes or self.SHARD_BYTES
        self._shards: LruCache[tuple[str, str], "_Shard"] = LruCache(
            self.SHARD_ENTRIES, self.shard_bytes, _shard_cost
        )
        self.maps = maps or self.MAPS
        self._mapped: LruCache[tuple[str, str], bytes | mmap.mmap] = LruCache(self.maps)
        self._entries: LruCache[tuple[str, str], str] = LruCache(
            self.ENTRY_ENTRIES, self.ENTRY_BYTES, _entry_cost
        )
        self._views: list[IndexArchiveView] | None = None

    def _read(self, name: str, kind: str) -> bytes | mmap.mmap:
        """The bytes of a shard file, mapped (b"{}" when no key hashed there)."""
        data = self._mapped.get((kind, name))
        if data is None:
            try:
                with open(self.path / kind / f"{name}.json", "rb") as handle:
                    size = os.fstat(handle.fileno()).st_size
                    data = _map(handle.fileno()) if size else b"{}"
            except FileNotFoundError:
                data = b"{}"
            self._mapped.put((kind, name), data)
        return data

    def shard(self, name: str, kind: str = "shards") -> dict:
        shard = self._shards.get((kind, name))
        if shard is None:
            data = self._read(name, kind)[:]
            # The collector would walk the whole (large, long-lived) heap of loaded shards
            # while json builds the new one, slowing every load. Nothing here makes cycles.
            gc.disable()
            try:
                shard = json.loads(data)
            finally:
                gc.enable()
            self._shards.put((kind, name), _Shard(shard, len(data)))
            return shard
        return shard.data

    def entries(self, kind: str = "shards") -> Iterator[tuple[str, object]]:
        """(key, value) of every key of `kind` (``shards``: the records, ``answers``: the
        precomputed answers), shard by shard in name order, keys sorted; each shard parsed
        whole.  For tools that read a whole index (server-config, check-deployment), never
        for a server's lookups."""
        with open(self.path / "checksums.json", "rb") as handle:
            names = sorted(json.load(handle)[kind])
        for name in names:
            shard = self.shard(name, kind)
            for key in sorted(shard):
                yield key, shard[key]

    def records(self, key: str) -> list[dict]:
        """The item records of `key` (canonical), one per Archive holding it."""
        return self._entry("shards", key, _are_records, [])

    def answers(self, key: str) -> dict[str, list]:
        """The precomputed answers of `key`: modifier text -> answer row (core.outcome)."""
        return self._entry("answers", key, _are_answers, {})

    def _entry(self, kind: str, key: str, expected, default):
        """The value of `key` in its shard of `kind` (`default` when absent), decoded
        from the shard's bytes alone, or from the whole shard when they look unusual.

        The cache keeps the entry's JSON text, decoded again on each hit (microseconds):
        strings are invisible to the garbage collector, while a million decoded lists
        and dicts would make each of its full passes walk them all (seconds)."""
        kept = self._entries.get((kind, key))
        if kept is not None:
            return json.loads(kept) if kept else default
        name = shard_name(key, self.digits)
        found, text = _find_entry(self._read(name, kind), key)
        if found is _UNSURE or (found is not _MISSING and not expected(found)):
            found = self.shard(name, kind).get(key, _MISSING)
            text = None if found is _MISSING else json.dumps(found)
        self._entries.put((kind, key), text or "")
        return default if found is _MISSING else found

    def views(self) -> list["IndexArchiveView"]:
        if self._views is None:
            from .records import archive_from_record

            archives = [archive_from_record(r) for r in self.manifest["archives"]]
            self._views = [
                IndexArchiveView(info, self.site_url, relations, self)
                for info, relations in archives
            ]
        return self._views

    def reopened(self) -> "Index":
        """The index now at this one's path, with the same bounds."""
        return Index(self.path, shard_bytes=self.shard_bytes, maps=self.maps)

    def changed(self) -> bool:
        """Whether a new build replaced the index since it was opened."""
        return _identity(self.path / "manifest.json") != self.identity


class _Shard(NamedTuple):
    data: dict
    size: int  # its JSON bytes


def _shard_cost(key, shard: _Shard) -> int:
    return shard.size


def _entry_cost(key, text: str) -> int:
    return 128 + len(text)


def _map(fileno: int) -> mmap.mmap:
    """A read-only map of the file, its pages brought in at once where the system can
    (one call, instead of a fault per page as the search walks it)."""
    populate = getattr(mmap, "MAP_POPULATE", 0)
    if populate and hasattr(mmap, "MAP_SHARED"):
        return mmap.mmap(fileno, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    return mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)


_MISSING = object()
_UNSURE = object()
_DECODER = json.JSONDecoder()
_FIRST_READ = 4096  # bytes decoded at first: an entry is rarely larger


def _find_entry(data: bytes | mmap.mmap, key: str) -> tuple[object, str | None]:
    """(the value of top-level `key` in the shard `data`, its JSON text): _MISSING when
    the key is not there, _UNSURE when the bytes do not look as the writer writes them."""
    pattern = json.dumps(key, ensure_ascii=False).encode("utf-8") + b":"
    at = data.find(pattern)
    if at < 0:
        return _MISSING, None
    if at == 0 or data[at - 1] not in b"{,":
        return _UNSURE, None
    start = at + len(pattern)
    size = _FIRST_READ
    while True:
        text = data[start : start + size].decode("utf-8", "replace")
        try:
            value, end = _DECODER.raw_decode(text)
            return value, text[:end]
        except json.JSONDecodeError:
            if start + size >= len(data):
                return _UNSURE, None
            size *= 4


def _are_answers(value) -> bool:
    return isinstance(value, dict) and all(isinstance(row, list) for row in value.values())


def _are_records(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(record, dict) and "archive" in record for record in value
    )


def _identity(path: Path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


@dataclass
class IndexArchiveView:
    """An ArchiveView (core.properties) over the index: items are read on demand."""

    info: object  # core.model.ArchiveInfo
    site_url: str
    _relations: tuple
    index: Index
    _items: LruCache = field(default_factory=lambda: LruCache(Index.ITEM_ENTRIES))

    def relations(self):
        return self._relations

    def item(self, key: str):
        kept = self._items.get(key, _MISSING)
        if kept is not _MISSING:
            return kept
        from .records import item_from_record

        found = None
        for record in self.index.records(key):
            if record["archive"] == self.info.name:
                found = item_from_record(record)
                break
        self._items.put(key, found)
        return found
