"""Every cache the server keeps is bounded: a public server is asked for ever new URLs."""

from __future__ import annotations

import pytest

from ibistatic.index.reader import Index
from ibistatic.lru import LruCache
from ibistatic.resolver import Resolver


def test_lru_keeps_the_most_recently_used_entries():
    cache = LruCache(3)
    for key in "abc":
        cache.put(key, key.upper())
    assert cache.get("a") == "A"  # now the most recent
    cache.put("d", "D")
    assert [key for key in "abcd" if key in cache] == ["a", "c", "d"]
    assert (len(cache), cache.get("b"), cache.get("b", "none")) == (3, None, "none")


def test_lru_bounds_bytes_and_skips_what_is_larger_than_the_whole():
    cache = LruCache(100, max_bytes=10, cost=lambda key, value: len(value))
    cache.put("a", "xxxx")
    cache.put("b", "yyyy")
    cache.put("c", "zzzz")  # 12 bytes: 'a' goes
    assert ("a" in cache, cache.bytes) == (False, 8)
    cache.put("huge", "h" * 11)
    assert ("huge" in cache, "b" in cache, cache.bytes) == (False, True, 8)
    cache.put("b", "y")  # replacing an entry counts its new size only
    assert cache.bytes == 5
    cache.clear()
    assert (len(cache), cache.bytes) == (0, 0)


def test_lru_refuses_a_bound_below_one():
    with pytest.raises(ValueError, match="max_entries must be at least 1, not 0"):
        LruCache(0)


def test_the_resolver_memo_is_bounded_in_entries(sample_index):
    resolver = Resolver(sample_index, memo_entries=10)
    for n in range(50):  # file paths: not precomputed, so resolved and memoized
        resolver.resolve(f"8JMKD3MGP8W/35MMLL8/file{n}.pdf")
    assert len(resolver._memo) == 10
    assert ("8JMKD3MGP8W/35MMLL8/file49.pdf", None) in resolver._memo
    assert ("8JMKD3MGP8W/35MMLL8/file0.pdf", None) not in resolver._memo


def test_the_resolver_memo_is_bounded_in_bytes(sample_index):
    """Long distinct URLs (the attack of the issue: 60 KB each, without bound)."""
    resolver = Resolver(sample_index, memo_bytes=100_000)
    for n in range(200):
        resolver.resolve(f"8JMKD3MGP8W/35MMLL8/{'x' * 4000}{n}.pdf")
    assert 0 < resolver._memo.bytes <= 100_000
    assert 15 <= len(resolver._memo) <= 25  # about 4.6 KB each: the URL, the answer


def test_the_memo_still_answers_right(sample_index):
    resolver = Resolver(sample_index, memo_entries=2)
    first = resolver.resolve("8JMKD3MGP8W/35MMLL8/CCSDS%20650.0-B-1.pdf")
    for n in range(5):
        resolver.resolve(f"8JMKD3MGP8W/35MMLL8/file{n}.pdf")
    again = resolver.resolve("8JMKD3MGP8W/35MMLL8/CCSDS%20650.0-B-1.pdf")
    assert again == first and again.url.endswith("/doc/CCSDS%20650.0-B-1.pdf")


def test_the_shard_cache_is_bounded_in_bytes(sample_index):
    shards = sorted((sample_index / "shards").glob("*.json"))
    largest = max(path.stat().st_size for path in shards)
    index = Index(sample_index, shard_bytes=largest + 10)
    answers = {}
    for path in shards:
        answers[path.stem] = index.shard(path.stem)
        assert index._shards.bytes <= largest + 10
    assert len(index._shards) < len(shards)
    fresh = Index(sample_index)
    for name, shard in answers.items():  # what was dropped is read again, the same
        assert index.shard(name) == shard == fresh.shard(name)


def test_the_item_cache_of_a_view_is_bounded(sample_index, monkeypatch):
    monkeypatch.setattr(Index, "ITEM_ENTRIES", 3)
    view = Index(sample_index).views()[0]
    for n in range(20):
        assert view.item(f"example.org/none/2020/01.01.00.{n:02d}") is None
    assert len(view._items) == 3


def test_an_entry_read_from_the_shard_bytes_is_the_parsed_one(sample_index):
    """Every key of every shard: the entry found in the bytes equals the whole parse."""
    index, whole = Index(sample_index), Index(sample_index)
    checked = 0
    for kind, lookup in (("shards", index.records), ("answers", index.answers)):
        for path in sorted((sample_index / kind).glob("*.json")):
            for key, value in whole.shard(path.stem, kind).items():
                assert lookup(key) == value, (kind, key)
                checked += 1
    assert checked > 30
    assert (index.records("example.org/none/2020/01.01.00.00"), index.answers("x/y")) == ([], {})


def test_a_shard_that_looks_unusual_is_parsed_whole(tmp_path, sample_index):
    """A nested key spelled as a top-level one, before it: the whole parse decides."""
    import json
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(sample_index, copy)
    whole = Index(copy)
    path = sorted((copy / "shards").glob("*.json"))[0]
    shard = json.loads(path.read_bytes())
    key = sorted(shard)[-1]
    decoy = {"0000": {"nested": {key: "not the records"}}}
    path.write_text(json.dumps({**decoy, **shard}, sort_keys=True, separators=(",", ":")))
    assert path.read_text().index(json.dumps(key)) < path.read_text().rindex(json.dumps(key))
    index = Index(copy)
    assert index.records(key) == whole.shard(path.stem)[key] == shard[key]
