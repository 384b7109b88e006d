"""The SHA-256 of the file lists, kept between builds (archive.filesums): a full build
reads no document the last one read, unless that file changed, even with its old mtime;
forked workers send their sums back; a damaged file of sums costs only a re-read."""

from __future__ import annotations

import hashlib
import os
import re
from types import SimpleNamespace

import pytest

from ibistatic import forked
from ibistatic.archive import filesums
from ibistatic.archive.filesums import FileSums
from ibistatic.config import load_config
from ibistatic.site.build import build_site
from test_publish import make_project

#: a file list's rows: the file's name, then its checksum four cells on
ROW = re.compile(r'<tr><td><a href="[^"]*">([^<]+)</a>.*?<td class="checksum">([0-9a-f]{64})</td>')
DOCUMENT = "archives/mtc-m16d/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib"


@pytest.fixture
def reads(tmp_path, monkeypatch):
    """Counts the documents read for a checksum, in this process and in forked workers
    (a line each, appended to a file)."""
    log = tmp_path / "reads.log"
    log.touch()
    digest = filesums._digest

    def counted(descriptor, size):
        with open(log, "a", encoding="ascii") as out:
            out.write("read\n")
        return digest(descriptor, size)

    monkeypatch.setattr(filesums, "_digest", counted)
    return lambda: len(log.read_text(encoding="ascii").splitlines())


@pytest.fixture
def settled(monkeypatch):
    """Files just copied count as settled (else a sum is kept only 2 s after a change)."""
    monkeypatch.setattr(filesums, "RACY_SECONDS", -60.0)


def _sums(site) -> dict[str, str]:
    """file-list page -> its rows' (name, sha256), for every file list of the site."""
    return {
        str(page.relative_to(site)): ROW.findall(page.read_text("utf-8"))
        for page in (site / "files").rglob("index.html")
    }


def _full_plan(config):
    """A full build that the user did not ask for with --full (the last build's state is
    gone, as after a change of settings): it trusts the sums; `build --full` does not."""
    (config.cache_dir / "site-state.pickle").unlink(missing_ok=True)
    report = build_site(config)
    assert report.mode == "full"
    return report


def test_a_full_build_reads_each_document_once(tmp_path, reads, settled):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    first, listed = reads(), _sums(config.output)
    assert len(FileSums(config.cache_dir / "file-sums.pickle").known) == first > 5
    assert sum(len(rows) for rows in listed.values()) > 5
    _full_plan(config)
    assert reads() == first  # none read again
    assert _sums(config.output) == listed


def test_build_full_reads_every_document_again(tmp_path, reads, settled):
    """`build --full` trusts no cache (issue 36: what is published is what is on disk)."""
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    first, listed = reads(), _sums(config.output)
    build_site(config, full=True)
    assert reads() == 2 * first and _sums(config.output) == listed


def test_a_rewritten_file_is_read_again_even_with_its_old_mtime(tmp_path, reads, settled):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    document = tmp_path / DOCUMENT
    status = document.stat()
    text = document.read_bytes()
    document.write_bytes(text.replace(b"@", b"%", 1))  # same size, other bytes
    os.utime(document, ns=(status.st_atime_ns, status.st_mtime_ns))  # the mtime put back
    before = reads()
    _full_plan(config)
    assert reads() == before + 1
    page = config.output / "files/iconet.com.br/banon/2009/09.09.22.01/index.html"
    rows = dict(ROW.findall(page.read_text("utf-8")))
    assert rows["reference.bib"] == hashlib.sha256(document.read_bytes()).hexdigest()
    assert rows["reference.bib"] != hashlib.sha256(text).hexdigest()


def test_a_file_changed_just_now_is_not_kept(tmp_path, reads):
    config = load_config(make_project(tmp_path))  # every file copied a moment ago
    build_site(config, full=True)
    first = reads()
    build_site(config, full=True)
    assert reads() == 2 * first
    assert FileSums(config.cache_dir / "file-sums.pickle").known == {}


def test_a_full_build_forgets_the_files_gone(tmp_path, settled):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    before = len(FileSums(config.cache_dir / "file-sums.pickle").known)
    (tmp_path / DOCUMENT).unlink()
    build_site(config, full=True)
    assert len(FileSums(config.cache_dir / "file-sums.pickle").known) == before - 1


def test_an_update_lists_a_rewritten_document_and_keeps_the_other_sums(tmp_path, reads, settled):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    first = reads()
    document = tmp_path / DOCUMENT
    document.write_bytes(document.read_bytes() + b"\n")  # its name, and item.yaml, as they were
    assert build_site(config).mode.startswith("update of 1 changed")
    page = config.output / "files/iconet.com.br/banon/2009/09.09.22.01/index.html"
    rows = dict(ROW.findall(page.read_text("utf-8")))
    assert rows["reference.bib"] == hashlib.sha256(document.read_bytes()).hexdigest()
    changed = reads() - first
    assert 1 <= changed < first / 2  # the changed item's files only
    _full_plan(config)
    assert reads() == first + changed  # the others were kept through the update


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_forked_workers_send_their_sums_back(tmp_path, reads, settled, monkeypatch):
    monkeypatch.setattr("ibistatic.store.store.PARALLEL_ITEMS", 1)  # fork for a small site
    config = load_config(make_project(tmp_path))
    config = type(config)(**{**config.__dict__, "jobs": 3})
    build_site(config, full=True)
    first, listed = reads(), _sums(config.output)
    assert first > 5 and len(FileSums(config.cache_dir / "file-sums.pickle").known) == first
    _full_plan(config)
    assert reads() == first and _sums(config.output) == listed


def test_a_damaged_file_of_sums_costs_a_reread_and_a_warning(tmp_path, reads, settled):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    first, listed = reads(), _sums(config.output)
    (config.cache_dir / "file-sums.pickle").write_bytes(b"not a pickle at all")
    report = build_site(config, full=True)
    assert reads() == 2 * first and _sums(config.output) == listed
    assert any(w.startswith(f"file sums {config.cache_dir}") for w in report.warnings)
    assert len(FileSums(config.cache_dir / "file-sums.pickle").known) == first  # written anew


def test_watch_keeps_the_sums_in_memory_and_saves_them_on_stop(tmp_path, reads, settled):
    """A republish never writes the file (at 100k items it is megabytes): watch's
    Publisher (persist off) writes it with the state, on stop."""
    from ibistatic.site.build import Publisher

    config = load_config(make_project(tmp_path))
    publisher = Publisher(config)
    publisher.persist = False
    publisher.build(full=True)
    first = reads()
    publisher.state = None  # a full build again, not one asked with --full
    assert publisher.build().mode == "full"
    assert reads() == first  # kept in memory between republishes
    saved = config.cache_dir / "file-sums.pickle"
    assert not saved.exists()
    publisher.save_state()
    assert len(FileSums(saved).known) == first


def test_any_identity_a_file_system_gives_is_kept(tmp_path):
    """Inodes past 2**63 (some network and overlay file systems) and times before 1970."""
    document = tmp_path / "old.txt"
    document.write_bytes(b"old")
    os.utime(document, ns=(-86_400 * 10**9, -86_400 * 10**9))  # 1969-12-31
    status = os.stat(document)
    assert status.st_mtime_ns < 0
    huge = SimpleNamespace(
        st_dev=2**64 - 1, st_ino=2**64 - 2, st_size=3, st_mtime_ns=-1, st_ctime_ns=-1
    )
    assert len(filesums._identity(huge)) == 40
    sums = FileSums()
    assert sums.size_and_sum(document) == (3, hashlib.sha256(b"old").hexdigest())


def test_settle_saves_the_sums_and_lets_them_go_only_when_told(tmp_path, settled):
    document = tmp_path / "a.txt"
    document.write_bytes(b"a")
    for early in (False, True):
        path = tmp_path / f"sums-{early}.pickle"
        sums = FileSums(path)
        sums.save_early = early
        sums.keep({**sums.known, **_seen(sums, document)}, whole=True)
        sums.settle()
        assert path.exists() is early
        assert (sums._known is None) is early  # let go, and read again on use
        assert len(sums.known) == 1


def _seen(sums: FileSums, path) -> dict:
    sums.size_and_sum(path)
    return sums.take_seen()


def test_a_cache_that_cannot_be_saved_is_said_once(tmp_path, settled):
    """The crawl cache and the sums are saved once a build has them (not again at its
    end): a folder where each file should be costs one warning each, and the site."""
    config = load_config(make_project(tmp_path))
    for name in ("crawl.pickle", "file-sums.pickle"):
        (config.cache_dir / name).mkdir(parents=True)
    report = build_site(config, full=True)
    assert (config.output / "index.html").is_file()
    for kind in ("crawl cache", "file sums"):
        said = [w for w in report.warnings if w.startswith(kind) and "not saved" in w]
        assert len(said) == 1, report.warnings


@pytest.mark.parametrize(
    "size",
    [
        0,
        1,
        4095,
        filesums._CHUNK - 1,
        filesums._CHUNK,
        filesums._CHUNK + 1,
        3 * filesums._CHUNK + 7,
    ],
)
def test_a_sum_is_the_sha256_of_the_whole_file(tmp_path, size):
    """Small files come in one read, large ones a chunk at a time: either way the sum
    is hashlib's of every byte, and the size the file's."""
    data = os.urandom(size)
    path = tmp_path / "document.bin"
    path.write_bytes(data)
    assert FileSums().size_and_sum(path) == (size, hashlib.sha256(data).hexdigest())


def test_a_file_that_grows_after_its_fstat_is_read_to_its_end(tmp_path):
    path = tmp_path / "growing.txt"
    path.write_bytes(b"a" * 100)
    descriptor = os.open(path, os.O_RDONLY)
    try:
        with open(path, "ab") as more:
            more.write(b"b" * 50)
        assert filesums._digest(descriptor, 100) == hashlib.sha256(b"a" * 100 + b"b" * 50).digest()
    finally:
        os.close(descriptor)
