"""A large Archive is read over two forked processes; the result must not show it."""

from __future__ import annotations

import ibistatic.archive.crawl as crawl_module
from archive_factory import write_archive, write_item
from ibistatic.archive.crawl import CrawlCache, crawl


def test_a_parallel_crawl_equals_a_plain_one(tmp_path, monkeypatch):
    root = write_archive(tmp_path / "a", "a.example.org", "example.org/arch/2020/01.01.00.00")
    for number in range(1, 40):
        write_item(
            root,
            f"example.org/arch/2020/01.01.{number:02d}.00",
            state="Original",
            target="document.txt",
        )
    (root / "example.org/arch/2020/01.01.07.00/item.yaml").write_text(
        "state: [broken\n", encoding="utf-8"
    )
    (root / "example.org/arch/2020/01.01.20.30").mkdir()  # no item.yaml: a walk problem
    plain_cache, parallel_cache = CrawlCache(), CrawlCache()
    plain = crawl([root], plain_cache)
    monkeypatch.setattr(crawl_module, "PARALLEL_REPOSITORIES", 2)
    advanced = []
    parallel = crawl([root], parallel_cache, advanced.append)
    assert (
        parallel.archives[0].items == plain.archives[0].items and len(plain.archives[0].items) == 39
    )
    assert parallel.problems == plain.problems and len(plain.problems) == 2
    assert parallel_cache.entries == plain_cache.entries  # the workers' parses come back
    assert (parallel_cache.misses, sum(advanced)) == (plain_cache.misses, 40)


def test_a_warm_parallel_crawl_takes_the_items_of_its_own_cache(tmp_path, monkeypatch):
    """A crawl whose cache knows every repository is read over the cores too (its walk's
    system calls are most of its time), and the workers send back the cache's key of
    each item, not the item: the parent's items are those of its own cache."""
    root = write_archive(tmp_path / "a", "a.example.org", "example.org/arch/2020/01.01.00.00")
    for number in range(1, 30):
        write_item(root, f"example.org/arch/2020/01.01.{number:02d}.00", state="Original")
    (root / "example.org/arch/2020/01.01.20.30").mkdir()  # no item.yaml: a walk problem
    (root / "example.org/arch/2020/01.01.07.00/doc/bad\x01name").write_text("x")
    cache = CrawlCache()
    plain = crawl([root], cache)
    assert len(plain.problems) == 2  # the bare folder, the control character
    monkeypatch.setattr(crawl_module, "PARALLEL_REPOSITORIES", 2)
    warm = crawl([root], cache)
    assert warm.archives[0].items == plain.archives[0].items
    assert warm.problems == plain.problems
    assert cache.hits == cache.misses == 31  # 29 items, the service item, archive.yaml
    cached = {value[0].key: value[0] for key, (_, value) in cache.entries.items() if "item:" in key}
    assert all(item is cached[item.key] for item in warm.archives[0].items)
