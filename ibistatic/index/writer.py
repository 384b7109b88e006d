"""Writing the JSON index (format: docs/index-format.md).

Deterministic: the same input gives the same bytes (sorted keys, no timestamps of the
run, compact separators).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..archive.load import LoadedArchives
from ..core.facts import has_open_translation
from ..core.properties import item_urls
from .records import FORMAT, VERSION, archive_record, item_record
from .sharding import shard_name

__all__ = [
    "write_index",
    "index_files",
    "encoded_record",
    "precomputed_answers",
    "dumps",
    "KEYS_PER_SHARD",
]

KEYS_PER_SHARD = 256


def dumps(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def shard_digits(keys: int) -> int:
    """Hex digits of the shard names: the nearest power of 16 to KEYS_PER_SHARD keys per
    shard (so between about 64 and 1,024), at least 16 shards."""
    return (
        max(1, round(math.log(max(keys, 1) / KEYS_PER_SHARD, 16)))
        if keys > KEYS_PER_SHARD * 16
        else 1
    )


def record_of(view, item) -> dict:
    """An item's index record: its descriptor and every URL its Archive gives for it."""
    return item_record(item) | {"urls": item_urls(view, item)}


def encoded_record(view, item) -> tuple[str, bytes]:
    """(archive, the JSON bytes of record_of): how index_files takes records."""
    return item.archive, dumps(record_of(view, item))


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
    from ..core.identifiers import ibi_key
    from ..core.outcome import row_of

    answers: dict[str, dict[str, list]] = {}
    for target in targets:
        if has_open_translation(target.modifier):
            continue  # the answer depends on the browser's languages
        answers.setdefault(ibi_key(target.ibi), {})[target.modifier] = row_of(target.resolution)
    return answers


def group_by_shard(by_key: dict, digits: int) -> dict[str, dict]:
    """shard name -> {key: value}, keys sorted (deterministic bytes)."""
    groups: dict[str, dict] = {}
    names = _SHARD_OF.setdefault(digits, {})
    for key in sorted(by_key):
        name = names.get(key)
        if name is None:
            name = names[key] = shard_name(key, digits)
        groups.setdefault(name, {})[key] = by_key[key]
    return groups


#: digits -> key -> its shard, for every key a build of this process has grouped: FNV-1a
#: in Python costs 3 µs a key, and shard_name's LRU (sized for the resolver's lookups)
#: holds fewer keys than a 100k-item site has; watch groups the same keys at each
#: republish (about 40 MB at 270,000 keys)
_SHARD_OF: dict[int, dict[str, str]] = {}


def index_files(
    loaded: LoadedArchives,
    records: Mapping[str, Sequence[tuple[str, bytes]]],
    answers: Mapping[str, bytes],
    digits: int,
    unchanged: Callable[[str], str | None] = lambda relative: None,
    unpack: Callable[[bytes], bytes] = lambda data: data,
) -> Iterator[tuple[str, bytes | None, str]]:
    """Every file of the index, one at a time: (path inside the index folder, bytes, sha256).

    `records`: key -> its (archive, encoded record) in the Archives' order; `answers`:
    key -> its encoded precomputed answers ({modifier: row}).  Values arrive encoded
    (``dumps``) so that a large build keeps bytes, not trees of dicts; a shard is their
    join, byte for byte what ``dumps`` gives for the whole shard.  A shard for which
    `unchanged(path)` gives a digest is not made again (its bytes are None): an update
    rewrites only the shards it touched.  `unpack` turns each value as given into its
    JSON bytes (the publisher keeps them compressed).
    """
    checksums: dict[str, dict] = {"shards": {}, "answers": {}}
    shard_count = 0

    def record_list(rows) -> bytes:
        return b"[" + b",".join(unpack(record) for _, record in rows) + b"]"

    for kind, by_key, encode in (("shards", records, record_list), ("answers", answers, unpack)):
        groups = group_by_shard(by_key, digits)
        if kind == "shards":
            shard_count = len(groups)
        for name, group in sorted(groups.items()):
            relative = f"{kind}/{name}.json"
            digest = unchanged(relative)
            data = (
                None
                if digest
                else _object_bytes((key, encode(value)) for key, value in group.items())
            )
            digest = digest or hashlib.sha256(data).hexdigest()
            yield relative, data, digest
            checksums[kind][name] = {"keys": len(group), "sha256": digest}
    for relative, value in (
        ("checksums.json", checksums),
        ("manifest.json", manifest_of(loaded, digits, len(records), shard_count)),
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
    manifest = b""
    for relative, data, _ in index_files(loaded, records, answers, shard_digits(len(records))):
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        _write(directory / relative, data)
        manifest = data
    return json.loads(manifest)


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
        "archives": [
            archive_record(info, views[info.name].relations()) for info in loaded.holdings.archives
        ],
        "conflicts": sorted(loaded.holdings.conflicts),
        "orphans": sorted(loaded.holdings.orphans),
    }
