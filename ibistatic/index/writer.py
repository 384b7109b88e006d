"""Writing the JSON index (format: docs/index-format.md).

Deterministic: the same input gives the same bytes (sorted keys, no timestamps of the
run, compact separators).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from pathlib import Path

from ..archive.load import LoadedArchives
from ..core.properties import item_urls
from .records import FORMAT, VERSION, archive_record, item_record
from .sharding import shard_name

__all__ = ["write_index", "dumps", "KEYS_PER_SHARD"]

KEYS_PER_SHARD = 256
OPEN_TRANSLATION = re.compile(r"\+(?!\()")  # a '+' without a language


def dumps(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def shard_digits(keys: int) -> int:
    """Hex digits of the shard names: the nearest power of 16 to KEYS_PER_SHARD keys per
    shard (so between about 64 and 1,024), at least 16 shards."""
    return max(1, round(math.log(max(keys, 1) / KEYS_PER_SHARD, 16))) if keys > KEYS_PER_SHARD * 16 else 1


def record_of(view, item) -> dict:
    """An item's index record: its descriptor and every URL its Archive gives for it."""
    return item_record(item) | {"urls": item_urls(view, item)}


def _records_by_key(loaded: LoadedArchives) -> dict[str, list[dict]]:
    by_key: dict[str, list[dict]] = {}
    for view in loaded.views():
        records: dict[int, dict] = {}  # an item answers to two keys: one record
        for key, item in view.items.items():
            record = records.get(id(item))
            if record is None:
                record = records[id(item)] = record_of(view, item)
            by_key.setdefault(key, []).append(record)
    return by_key


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def precomputed_answers(targets) -> dict[str, dict[str, list]]:
    """key -> {modifier: answer row} from the site's page targets (those that need no
    browser language), so that common lookups need no resolution at all."""
    from ..core.identifiers import ibi_key
    from ..core.outcome import row_of

    answers: dict[str, dict[str, list]] = {}
    for target in targets:
        if OPEN_TRANSLATION.search(target.modifier):
            continue  # the answer depends on the browser's languages
        answers.setdefault(ibi_key(target.ibi), {})[target.modifier] = row_of(target.resolution)
    return answers


def _write_shards(directory: Path, by_key: dict, digits: int) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    shards: dict[str, dict] = {}
    for key in sorted(by_key):
        shards.setdefault(shard_name(key, digits), {})[key] = by_key[key]
    checksums = {}
    for name in sorted(shards):
        data = dumps(shards[name])
        _write(directory / f"{name}.json", data)
        checksums[name] = {"keys": len(shards[name]), "sha256": hashlib.sha256(data).hexdigest()}
    return checksums


def write_index(loaded: LoadedArchives, directory: Path | str, targets=None) -> dict:
    """Write manifest.json, checksums.json, shards/*.json (item records) and
    answers/*.json (precomputed answers of the page targets; computed here when the
    caller has none) into `directory`."""
    directory = Path(directory)
    by_key = _records_by_key(loaded)
    digits = shard_digits(len(by_key))
    if targets is None:
        from ..site.targets import page_targets

        targets = page_targets(loaded)
    checksums = _write_shards(directory / "shards", by_key, digits)
    answer_checksums = _write_shards(directory / "answers", precomputed_answers(targets), digits)
    checksums = {"shards": checksums, "answers": answer_checksums}
    shards = checksums["shards"]
    manifest = manifest_of(loaded, digits, len(by_key), len(shards))
    _write(directory / "checksums.json", dumps(checksums))
    _write(directory / "manifest.json", dumps(manifest))
    return manifest


def manifest_of(loaded: LoadedArchives, digits: int, keys: int, shard_count: int) -> dict:
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
