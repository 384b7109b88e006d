"""Walking Archive trees: sorted order, the crawl cache, symbolic links, default timestamps."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import pytest

from ibistatic.archive import crawl as crawl_module
from ibistatic.archive.crawl import CrawlCache, crawl, crawl_archive

ARCHIVE_YAML = (
    "address: mtc-m16c.sid.inpe.br\nservice-ibi: sid.inpe.br/mtc-m18@80/2008/03.17.15.17\n"
)
REPO = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
OTHER = "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"


def _archive(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "archive.yaml").write_text(ARCHIVE_YAML, encoding="utf-8")
    return root


def _repository(
    root: Path,
    repository: str,
    descriptor: str = "state: Original\n",
    files: dict[str, str] | None = None,
) -> Path:
    directory = root.joinpath(*repository.split("/"))
    (directory / "doc").mkdir(parents=True, exist_ok=True)
    (directory / "item.yaml").write_text(descriptor, encoding="utf-8")
    for name, text in (
        files if files is not None else {"report.txt": f"The report {repository}.\n"}
    ).items():
        (directory / "doc" / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / "doc" / name).write_text(text, encoding="utf-8")
    return directory


def _names(archive) -> list[str]:
    return [item.repository.text for item in archive.items]


def _lines(archive) -> list[str]:
    return [str(problem) for problem in archive.problems]


# --- sorted order -----------------------------------------------------------------------

# Sorted level by level (directory names), not as joined strings: 'mtc-m18' comes before
# 'mtc-m18.8080' although '/' sorts after '.'.
IN_SORTED_ORDER = [
    "dpi.inpe.br/banon/1998/08.02.08.56",
    "iconet.com.br/banon/2009/09.09.22.01",
    "sid.inpe.br/mtc-m18/2012/07.12.18.08",
    "sid.inpe.br/mtc-m18/2012/07.12.18.08.49",
    "sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06",
    "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
    "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
    "sid.inpe.br/mtc-m19/2013/09.04.12.27.57.5",
]


def test_items_come_in_sorted_order_whatever_the_creation_order(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    for repository in reversed(IN_SORTED_ORDER):
        _repository(root, repository)
    archive = crawl_archive(root)
    assert _lines(archive) == []
    assert _names(archive) == IN_SORTED_ORDER


def test_problems_come_in_sorted_order(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    for repository in reversed(IN_SORTED_ORDER[:3]):
        _repository(root, repository, "state: Orignal\n")
    assert _lines(crawl_archive(root)) == [
        f"error: mtc-m16c: {repository}/item.yaml: state: 'Orignal'; expected one of Original, Copy, Deleted"
        for repository in IN_SORTED_ORDER[:3]
    ]


def test_doc_files_are_sorted_relative_posix_paths(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    _repository(
        root,
        REPO,
        "state: Original\ntarget: b.txt\n",
        {"b.txt": "b\n", "a/z.txt": "z\n", "a/b/c.txt": "c\n", "Relatório.txt": "r\n"},
    )
    (item,) = crawl_archive(root).items
    assert item.files == ("Relatório.txt", "a/b/c.txt", "a/z.txt", "b.txt")


def test_hidden_files_in_doc_are_not_the_items(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    _repository(
        root,
        REPO,
        "state: Original\n",
        {
            "report.txt": "r\n",
            ".DS_Store": "\x00",
            "._report.txt": "x\n",
            ".git/HEAD": "h\n",
            "sub/.#b.txt": "x\n",
        },
    )
    archive = crawl_archive(root)
    assert _lines(archive) == []
    assert [(item.files, item.target) for item in archive.items] == [
        (("report.txt",), "report.txt")
    ]


def test_doc_links_out_of_the_root_are_reported_in_sorted_order(tmp_path):
    (tmp_path / "secret.txt").write_text("not in any archive\n", encoding="utf-8")
    root = _archive(tmp_path / "mtc-m16c")
    doc = (
        _repository(
            root, REPO, "state: Original\n", {"report.txt": "r\n", "a/.keep": "", "b/.keep": ""}
        )
        / "doc"
    )
    for link in ("z.txt", "b/y.txt", "a/x.txt"):
        os.symlink(tmp_path / "secret.txt", doc / link)
    assert _lines(crawl_archive(root)) == [
        f"warning: mtc-m16c: {REPO}/doc/{link}: a symbolic link out of the archive root; "
        "expected a file inside the archive (the link is not followed)"
        for link in ("a/x.txt", "b/y.txt", "z.txt")
    ]


def test_archives_keep_the_order_given(tmp_path):
    first, second = _archive(tmp_path / "z-first"), _archive(tmp_path / "a-second")
    _repository(first, REPO)
    _repository(second, REPO, "state: Copy\n")
    result = crawl([first, second])
    assert [archive.name for archive in result.archives] == ["z-first", "a-second"]
    assert [(item.archive, item.state) for item in result.items()] == [
        ("z-first", "Original"),
        ("a-second", "Copy"),
    ]


def test_hidden_directories_and_stray_files_are_ignored(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    _repository(root, REPO)
    (root / ".git" / "objects" / "ab" / "cd").mkdir(parents=True)
    (root / "sid.inpe.br" / "README.txt").write_text("not a repository\n", encoding="utf-8")
    archive = crawl_archive(root)
    assert (_names(archive), _lines(archive)) == ([REPO], [])


# --- the crawl cache --------------------------------------------------------------------


@pytest.fixture
def parsed(monkeypatch):
    """The paths YAML was actually parsed from, in order."""
    paths: list[str] = []
    real_parse = crawl_module._parse_yaml

    def counting_parse(path):
        paths.append(str(path))
        return real_parse(path)

    monkeypatch.setattr(crawl_module, "_parse_yaml", counting_parse)
    return paths


@pytest.fixture
def three_items(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    for repository in (REPO, OTHER, "sid.inpe.br/mtc-m19/2013/09.04.12.27.57"):
        _repository(root, repository, "state: Original\ntimestamp: 2009-07-21T13:23:45Z\n")
    return root


def test_second_crawl_reparses_nothing(three_items, parsed):
    cache = CrawlCache()
    first = crawl_archive(three_items, cache)
    assert (cache.hits, cache.misses, len(parsed)) == (0, 4, 4)  # archive.yaml + 3 item.yaml
    second = crawl_archive(three_items, cache)
    assert (cache.hits, cache.misses, len(parsed)) == (4, 4, 4)
    assert second.items == first.items and second.info == first.info


def test_touching_one_descriptor_reparses_only_that_one(three_items, parsed):
    cache = CrawlCache()
    crawl_archive(three_items, cache)
    descriptor = three_items.joinpath(*OTHER.split("/"), "item.yaml")
    st = descriptor.stat()
    os.utime(descriptor, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    parsed.clear()
    crawl_archive(three_items, cache)
    assert parsed == [str(descriptor)]
    assert (cache.hits, cache.misses) == (3, 5)


def test_an_edited_descriptor_is_read_again(three_items):
    cache = CrawlCache()
    crawl_archive(three_items, cache)
    descriptor = three_items.joinpath(*OTHER.split("/"), "item.yaml")
    st = descriptor.stat()
    descriptor.write_text("state: Copy\ntimestamp: 2009-07-21T13:23:45Z\n", encoding="utf-8")
    os.utime(descriptor, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    states = {item.repository.text: item.state for item in crawl_archive(three_items, cache).items}
    assert states[OTHER] == "Copy" and states[REPO] == "Original"


def test_a_cached_yaml_error_is_still_reported(tmp_path, parsed):
    root = _archive(tmp_path / "mtc-m16c")
    _repository(root, REPO, "state: Original\n\ttarget: report.txt\n")
    cache = CrawlCache()
    first = _lines(crawl_archive(root, cache))
    parsed.clear()
    assert _lines(crawl_archive(root, cache)) == first
    assert parsed == [] and len(first) == 1 and "malformed YAML at line 2, column 1" in first[0]


def test_a_cached_encoding_error_is_still_reported(tmp_path, parsed):
    root = _archive(tmp_path / "mtc-m16c")
    directory = _repository(root, REPO)
    (directory / "item.yaml").write_bytes(b"state: Original\ntarget: Relat\xf3rio.txt\n")
    cache = CrawlCache()
    lines = [_lines(crawl_archive(root, cache)) for _ in range(2)]
    assert (
        lines[0]
        == lines[1]
        == [
            f"error: mtc-m16c: {REPO}/item.yaml: bytes that are not UTF-8 at byte 30; "
            "expected a YAML mapping (archive-format.md, item.yaml)"
        ]
    )
    assert len(parsed) == 2  # archive.yaml and item.yaml, each parsed once


def test_saved_cache_serves_a_later_run(three_items, tmp_path, parsed):
    path = tmp_path / "cache" / "crawl.pickle"
    cache = CrawlCache(path)
    crawl_archive(three_items, cache)
    cache.save()
    parsed.clear()
    reloaded = CrawlCache(path)
    crawl_archive(three_items, reloaded)
    assert (reloaded.hits, reloaded.misses, parsed) == (4, 0, [])


def test_damaged_cache_file_costs_only_a_full_read(three_items, tmp_path):
    path = tmp_path / "crawl.pickle"
    path.write_bytes(b"not a pickle")
    cache = CrawlCache(path)
    assert cache.entries == {}
    assert len(crawl_archive(three_items, cache).items) == 3


# --- symbolic links ---------------------------------------------------------------------


def test_links_inside_the_root_are_followed(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    # the real repository lives in a hidden directory (not crawled itself) inside the root
    stored = _repository(root / ".store", "x.br/y/2000/01.01.00.00", "state: Original\n")
    link = root.joinpath(*REPO.split("/"))
    link.parent.mkdir(parents=True)
    os.symlink(os.path.relpath(stored, link.parent), link)
    doc = _repository(root, OTHER, "state: Original\ntarget: alias.txt\n") / "doc"
    os.symlink("report.txt", doc / "alias.txt")
    archive = crawl_archive(root)
    assert _lines(archive) == []
    assert _names(archive) == [REPO, OTHER]
    assert archive.items[1].files == ("alias.txt", "report.txt")


def test_a_link_that_leaves_and_reenters_the_root_is_inside(tmp_path):
    root = _archive(tmp_path / "mtc-m16c")
    doc = _repository(root, REPO, "state: Original\ntarget: report.txt\n") / "doc"
    os.symlink(f"../../../../../../mtc-m16c/{REPO}/doc/report.txt", doc / "again.txt")
    archive = crawl_archive(root)
    assert _lines(archive) == []
    assert archive.items[0].files == ("again.txt", "report.txt")


def test_links_out_of_the_root_are_not_followed(tmp_path):
    outside = _archive(tmp_path / "elsewhere")
    _repository(outside, "evil.br/mtc-m18/2009/07.21.13.23")
    (tmp_path / "secret.txt").write_text("not in any archive\n", encoding="utf-8")
    root = _archive(tmp_path / "mtc-m16c")
    doc = _repository(root, REPO) / "doc"
    os.symlink(tmp_path / "secret.txt", doc / "secret.txt")  # absolute
    os.symlink("../elsewhere/evil.br", root / "evil.br")  # relative, a whole subtree
    archive = crawl_archive(root)
    assert _names(archive) == [REPO]
    assert archive.items[0].files == ("report.txt",)
    assert _lines(archive) == [
        "warning: mtc-m16c: evil.br: a symbolic link out of the archive root; "
        "expected a directory inside the archive (the link is not followed)",
        f"warning: mtc-m16c: {REPO}/doc/secret.txt: a symbolic link out of the archive root; "
        "expected a file inside the archive (the link is not followed)",
    ]


def test_a_repository_linked_from_outside_is_not_followed(tmp_path):
    outside = _repository(tmp_path / "elsewhere", "x.br/y/2000/01.01.00.00")
    root = _archive(tmp_path / "mtc-m16c")
    link = root.joinpath(*REPO.split("/"))
    link.parent.mkdir(parents=True)
    os.symlink(outside, link)
    archive = crawl_archive(root)
    assert _names(archive) == []
    assert _lines(archive) == [
        f"warning: mtc-m16c: {REPO}: a symbolic link out of the archive root; "
        "expected a directory inside the archive (the link is not followed)",
    ]


def test_an_archive_root_reached_through_a_link_is_crawled(tmp_path):
    real = _archive(tmp_path / "disks" / "mtc-m16c")
    _repository(real, REPO)
    os.symlink(real, tmp_path / "mtc-m16c")
    archive = crawl_archive(tmp_path / "mtc-m16c")
    assert (_names(archive), _lines(archive)) == ([REPO], [])


# --- the default timestamp --------------------------------------------------------------


def _utc(seconds: int) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _set_mtimes(directory: Path, descriptor_time: int, file_times: dict[str, int]) -> None:
    for name, seconds in file_times.items():
        os.utime(directory / "doc" / name, (seconds, seconds))
    os.utime(directory / "item.yaml", (descriptor_time, descriptor_time))


T_OLD, T_NEW, T_DESCRIPTOR = 1_248_182_625, 1_397_000_000, 1_500_000_000  # 2009, 2014, 2017


@pytest.mark.parametrize(
    "descriptor, files, expected",
    [
        # newest file under doc/, at any depth; item.yaml's own time does not count
        ("state: Original\ntarget: a.txt\n", {"a.txt": T_OLD, "sub/b.txt": T_NEW}, _utc(T_NEW)),
        ("state: Copy\n", {"a.txt": T_OLD}, _utc(T_OLD)),
        # a removal is dated by its descriptor, whatever doc/ still holds
        ("state: Deleted\n", {"a.txt": T_OLD}, _utc(T_DESCRIPTOR)),
        ("state: Deleted\n", {}, _utc(T_DESCRIPTOR)),
        # a timestamp in item.yaml wins
        (
            "state: Original\ntimestamp: 2009-07-21T13:23:45Z\n",
            {"a.txt": T_NEW},
            "2009-07-21T13:23:45Z",
        ),
    ],
    ids=["newest-in-doc", "only-file", "deleted-with-files", "deleted-without-doc", "explicit"],
)
def test_default_timestamp(tmp_path, descriptor, files, expected):
    root = _archive(tmp_path / "mtc-m16c")
    directory = _repository(root, REPO, descriptor, {name: "text\n" for name in files})
    _set_mtimes(directory, T_DESCRIPTOR, files)
    archive = crawl_archive(root)
    assert _lines(archive) == []
    assert archive.items[0].timestamp == expected


def test_a_saved_crawl_cache_lets_its_entries_go_and_reads_them_again(tmp_path):
    cache = CrawlCache(tmp_path / "crawl.pickle")
    cache.misses += 1  # a put follows a miss
    cache.put("item:x", (1, 2, 3), "value")
    cache.release()  # not saved yet: kept
    assert cache.get("item:x", (1, 2, 3)) == "value"
    cache.save()
    cache.release()
    assert cache._entries is None
    assert cache.get("item:x", (1, 2, 3)) == "value"  # read again from its file


def test_a_cache_saved_for_a_block_is_let_go_and_written_once(tmp_path, monkeypatch):
    """CrawlCache.saved(): the cache is saved and its entries let go before the block
    (read again from the file on first use); a cache with nothing new is not written."""
    writes = []
    save_sealed = crawl_module.save_sealed
    monkeypatch.setattr(
        crawl_module, "save_sealed", lambda *a, **k: writes.append(1) or save_sealed(*a, **k)
    )
    cache = CrawlCache(tmp_path / "crawl.pickle")
    for number in range(3):
        cache.misses += 1  # a put follows a miss
        cache.put(f"item:{number}", (1, 2, number), f"value {number}")
    with cache.saved():
        assert cache._entries is None
    assert writes == [1] and cache.warnings == []
    again = CrawlCache(tmp_path / "crawl.pickle")
    assert [again.get(f"item:{n}", (1, 2, n)) for n in range(3)] == [f"value {n}" for n in range(3)]
    with cache.saved():  # nothing new since: not written again
        pass
    assert writes == [1]


def test_a_cache_that_cannot_be_saved_says_why_once(tmp_path):
    (tmp_path / "crawl.pickle").mkdir()  # a folder where the file goes
    cache = CrawlCache(tmp_path / "crawl.pickle")
    for number in range(3):
        cache.misses += 1
        cache.put(f"item:{number}", (1, 2, number), f"value {number}")
    with cache.saved():
        pass
    unsaved = [warning for warning in cache.warnings if "not saved" in warning]
    assert len(unsaved) == 1
    assert unsaved[0].startswith(f"crawl cache {tmp_path / 'crawl.pickle'} not saved: ")
