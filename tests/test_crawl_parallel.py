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
        parallel.archives[0].items == plain.archives[0].items and len(plain.archives[0].items) == 38
    )
    assert parallel.problems == plain.problems and len(plain.problems) == 2
    assert parallel_cache.entries == plain_cache.entries  # the workers' parses come back
    assert (parallel_cache.misses, sum(advanced)) == (plain_cache.misses, 39)
