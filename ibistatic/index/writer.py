"""Writing the JSON index (format: docs/index-format.md).

Deterministic: the same input gives the same bytes (sorted keys, no timestamps of the
run, compact separators).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter
from pathlib import Path

from ..archive.load import LoadedArchives
from ..core.properties import item_urls
from .records import FORMAT, VERSION, archive_record, item_record, shard_name

__all__ = ["write_index", "dumps", "KEYS_PER_SHARD"]

KEYS_PER_SHARD = 256


def dumps(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def shard_digits(keys: int) -> int:
    """Hex digits of the shard names: about KEYS_PER_SHARD keys per shard, at least 16 shards."""
    return max(1, math.ceil(math.log(max(keys, 1) / KEYS_PER_SHARD, 16))) if keys > KEYS_PER_SHARD * 16 else 1


def _records_by_key(loaded: LoadedArchives) -> dict[str, list[dict]]:
    by_key: dict[str, list[dict]] = {}
    for view in loaded.views():
        records: dict[int, dict] = {}  # an item answers to two keys: one record
        for key, item in view.items.items():
            record = records.get(id(item))
            if record is None:
                record = records[id(item)] = item_record(item) | {"urls": item_urls(view, item)}
            by_key.setdefault(key, []).append(record)
    return by_key


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def write_index(loaded: LoadedArchives, directory: Path | str) -> dict:
    """Write manifest.json, checksums.json and shards/*.json into `directory`."""
    directory = Path(directory)
    (directory / "shards").mkdir(parents=True, exist_ok=True)
    by_key = _records_by_key(loaded)
    digits = shard_digits(len(by_key))
    shards: dict[str, dict[str, list[dict]]] = {}
    for key in sorted(by_key):
        shards.setdefault(shard_name(key, digits), {})[key] = by_key[key]
    checksums = {}
    for name in sorted(shards):
        data = dumps(shards[name])
        _write(directory / "shards" / f"{name}.json", data)
        checksums[name] = {"keys": len(shards[name]), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = _manifest(loaded, digits, len(by_key), len(shards))
    _write(directory / "checksums.json", dumps(checksums))
    _write(directory / "manifest.json", dumps(manifest))
    return manifest


def _manifest(loaded: LoadedArchives, digits: int, keys: int, shard_count: int) -> dict:
    views = {view.info.name: view for view in loaded.views()}
    states: dict[str, Counter] = {}
    for item in loaded.holdings.all_items():
        states.setdefault(item.archive, Counter())[item.state] += 1
    return {
        "format": FORMAT,
        "version": VERSION,
        "site-url": loaded.site_url,
        "hash": "fnv1a-32",
        "shard-digits": digits,
        "counts": {
            "keys": keys,
            "shards": shard_count,
            "items": sum(sum(c.values()) for c in states.values()),
            "archives": {name: dict(sorted(c.items())) for name, c in sorted(states.items())},
            "problems": len(loaded.problems),
        },
        "archives": [archive_record(info, views[info.name].relations()) for info in loaded.holdings.archives],
        "conflicts": sorted(loaded.holdings.conflicts),
        "orphans": sorted(loaded.holdings.orphans),
    }
