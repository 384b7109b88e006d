"""Writing the JSON index (format: docs/index-format.md).

Deterministic: the same input gives the same bytes (sorted keys, no timestamps of the
run, compact separators).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..archive.load import LoadedArchives
from ..core.facts import has_open_translation
from ..core.outcome import row_of
from ..core.properties import item_urls
from ..targets import form_key
from .records import FORMAT, VERSION, archive_record, item_record
from .sharding import shard_name

__all__ = [
    "write_index",
    "index_files",
    "group_by_shard",
    "shard_of",
    "encoded_record",
    "precomputed_answers",
    "dumps",
    "KEYS_PER_SHARD",
]

KEYS_PER_SHARD = 256


#: one encoder for every record (json.dumps with options makes one per call)
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dumps(value) -> bytes:
    return _ENCODER.encode(value).encode("utf-8")


def shard_digits(keys: int) -> int:
    """Hex digits of the shard names: the nearest power of 16 to KEYS_PER_SHARD keys per
    shard (so between about 64 and 1,024), at least 16 shards."""
    return (
        max(1, round(math.log(max(keys, 1) / KEYS_PER_SHARD, 16)))
        if keys > KEYS_PER_SHARD * 16
        else 1
    )


def record_of(view, item, urls: dict | None = None) -> dict:
    """An item's index record: its descriptor and every URL its Archive gives for it
    (`urls`: its item_urls, when at hand)."""
    return item_record(item) | {"urls": item_urls(view, item) if urls is None else urls}


def encoded_record(view, item, urls: dict | None = None) -> tuple[str, bytes]:
    """(archive, the JSON bytes of record_of): how index_files takes records."""
    return item.archive, dumps(record_of(view, item, urls))


def _records_by_key(loaded: LoadedArchives) -> dict[str, list[tuple[str, bytes]]]:
    by_key: dict[str, list] = {}
    for view in loaded.views():
        records: dict[int, tuple] = {}  # an item answers to two keys: one record
        for key, item in view.items.items():
            record = records.get(id(item))
            if record is None:
                record = records[id(item)] = encoded_record(view, item)
            by_key.setdefault(key, []).append(record)
    return by_key


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def precomputed_answers(targets) -> dict[str, dict[str, list]]:
    """key -> {modifier: answer row} from the site's page targets (those that need no
    browser language), so that common lookups need no resolution at all."""
    answers: dict[str, dict[str, list]] = {}
    for target in targets:
        if has_open_translation(target.modifier):
            continue  # the answer depends on the browser's languages
        key = form_key(target.item, target.ibi)
        answers.setdefault(key, {})[target.modifier] = row_of(target.resolution)
    return answers


def group_by_shard(by_key: Mapping | Iterable[tuple[str, Any]], digits: int) -> dict[str, dict]:
    """shard name -> {key: value} of every key of `by_key` (a mapping, or its pairs)."""
    groups: dict[str, dict] = {}
    pairs = by_key.items() if isinstance(by_key, Mapping) else by_key
    for key, value in pairs:
        groups.setdefault(shard_of(key, digits), {})[key] = value
    return groups


def shard_of(key: str, digits: int) -> str:
    """shard_name, remembered for every key a build of this process has placed: FNV-1a
    in Python is slow per key, and shard_name's LRU (sized for the resolver's lookups)
    holds fewer keys than a large site has."""
    names = _SHARD_OF.setdefault(digits, {})
    name = names.get(key)
    if name is None:
        name = shard_name(key, digits)  # one string per shard, not one per key
        name = names[key] = _SHARD_NAMES.setdefault(name, name)
    return name


_SHARD_OF: dict[int, dict[str, str]] = {}
_SHARD_NAMES: dict[str, str] = {}


def index_files(
    loaded: LoadedArchives,
    records: Mapping[str, Mapping[str, Sequence[tuple[str, bytes]]]],
    answers: Mapping[str, Mapping[str, bytes]],
    digits: int,
    unchanged: Callable[[str], str | None] = lambda relative: None,
    unpack: Callable[[bytes], bytes] = lambda data: data,
) -> Iterator[tuple[str, bytes | None, str]]:
    """Every file of the index, one at a time: (path inside the index folder, bytes, sha256).

    `records`: shard -> {key -> its (archive, encoded record) in the Archives' order};
    `answers`: shard -> {key -> its encoded precomputed answers ({modifier: row})}
    (group_by_shard).  Values arrive encoded (``dumps``) so that a large build keeps
    bytes, not trees of dicts; a shard is their join in key order, byte for byte what
    ``dumps`` gives for the whole shard.  A shard for which `unchanged(path)` gives a
    digest is not made again (its bytes are None): an update rewrites only the shards it
    touched.  `unpack` turns each value as given into its JSON bytes (the publisher
    keeps them compressed).
    """
    checksums: dict[str, dict] = {"shards": {}, "answers": {}}

    def record_list(rows) -> bytes:
        return b"[" + b",".join(unpack(record) for _, record in rows) + b"]"

    for kind, groups, encode in (("shards", records, record_list), ("answers", answers, unpack)):
        for name in sorted(groups):
            group = groups[name]
            relative = f"{kind}/{name}.json"
            digest = unchanged(relative)
            data = (
                None
                if digest
                else _object_bytes((key, encode(group[key])) for key in sorted(group))
            )
            digest = digest or hashlib.sha256(data).hexdigest()
            yield relative, data, digest
            checksums[kind][name] = {"keys": len(group), "sha256": digest}
    keys = sum(len(group) for group in records.values())
    for relative, value in (
        ("checksums.json", checksums),
        ("manifest.json", manifest_of(loaded, digits, keys, len(records))),
    ):
        data = dumps(value)
        yield relative, data, hashlib.sha256(data).hexdigest()


def _object_bytes(members: Iterable[tuple[str, bytes]]) -> bytes:
    """A JSON object from (key, encoded value) in order: ``dumps`` of the dict, when the
    keys come sorted."""
    return b"{" + b",".join(dumps(key) + b":" + value for key, value in members) + b"}"


def write_index(loaded: LoadedArchives, directory: Path | str, targets=None) -> dict:
    """Write manifest.json, checksums.json, shards/*.json (item records) and
    answers/*.json (precomputed answers of the page targets; computed here when the
    caller has none) into `directory`."""
    directory = Path(directory)
    records = _records_by_key(loaded)
    if targets is None:
        from ..targets import page_targets

        targets = page_targets(loaded)
    answers = {key: dumps(value) for key, value in precomputed_answers(targets).items()}
    digits = shard_digits(len(records))
    grouped = (group_by_shard(records, digits), group_by_shard(answers, digits))
    manifest = b""
    for relative, data, _ in index_files(loaded, *grouped, digits):
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        _write(directory / relative, data)
        manifest = data
    return json.loads(manifest)


def manifest_of(loaded: LoadedArchives, digits: int, keys: int, shard_count: int) -> dict:
    views = {view.info.name: view for view in loaded.views()}
    states = {name: counts for name, counts in loaded.state_counts.items() if counts}
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
        "archives": [
            archive_record(info, views[info.name].relations()) for info in loaded.holdings.archives
        ],
        "conflicts": sorted(loaded.holdings.conflicts),
        "orphans": sorted(loaded.holdings.orphans),
    }
