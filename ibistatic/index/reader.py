"""Reading the JSON index: open once, look up many.  Only the shards asked for are read."""

from __future__ import annotations

import gc
import json
import os
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
    """An index opened for lookups.  Shards are read when first asked for and kept in a
    least-recently-used cache bounded by their JSON bytes (a shard holds several times
    its file size in memory), so a server over a large index stays within its memory."""

    #: the JSON bytes of the shards kept loaded (answers/ and shards/ together)
    SHARD_BYTES = 256 * 1024 * 1024
    #: shards kept at most, whatever their size
    SHARD_ENTRIES = 65536
    #: items each Archive view keeps decoded
    ITEM_ENTRIES = 65536

    def __init__(self, path: Path | str, *, shard_bytes: int | None = None) -> None:
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
        self._views: list[IndexArchiveView] | None = None

    def shard(self, name: str, kind: str = "shards") -> dict:
        shard = self._shards.get((kind, name))
        if shard is None:
            try:
                with open(self.path / kind / f"{name}.json", "rb") as handle:
                    data = handle.read()
            except FileNotFoundError:
                data = b"{}"  # no key hashed there
            # The collector would walk the whole (large, long-lived) heap of loaded shards
            # while json builds the new one: 4x slower loads. Nothing here makes cycles.
            gc.disable()
            try:
                shard = json.loads(data)
            finally:
                gc.enable()
            self._shards.put((kind, name), _Shard(shard, len(data)))
            return shard
        return shard.data

    def records(self, key: str) -> list[dict]:
        """The item records of `key` (canonical), one per Archive holding it."""
        return self.shard(shard_name(key, self.digits)).get(key, [])

    def answers(self, key: str) -> dict[str, list]:
        """The precomputed answers of `key`: modifier text -> answer row (core.outcome)."""
        return self.shard(shard_name(key, self.digits), "answers").get(key, {})

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
        return Index(self.path, shard_bytes=self.shard_bytes)

    def changed(self) -> bool:
        """Whether a new build replaced the index since it was opened."""
        return _identity(self.path / "manifest.json") != self.identity


class _Shard(NamedTuple):
    data: dict
    size: int  # its JSON bytes


def _shard_cost(key, shard: _Shard) -> int:
    return shard.size


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


_MISSING = object()
