"""One item's failure costs only that item, whatever the exception and wherever it is
raised; what is published is what is on disk, whatever the caches say.

The schema's readers check every value against what its later uses take (the hostile
corpus, tests/hostile/cases.py, and the property tests); these tests make the line
behind them fail on purpose: an exception while reading, resolving or rendering one item
is that item's error, its last good publication stays, and every other item is
published byte for byte as without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ibistatic.archive import crawl
from ibistatic.cli import main
from ibistatic.config import load_config
from ibistatic.site import pages
from ibistatic.site.build import Publisher
from tests.hostile.cases import BAD, GOOD_A, GOOD_B
from tests.test_hostile import make_site

ROOT = Path(__file__).resolve().parent.parent


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _own(tree: dict[str, bytes], repository: str) -> dict[str, bytes]:
    """The files of the site that are one repository's own pages."""
    return {path: data for path, data in tree.items() if repository in path}


def _build(config: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["build", "--config", str(config), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def breaking(monkeypatch):
    """Make rendering BAD's pages raise whatever `breaking(error)` is given."""
    real = pages.item_pages
    wanted: list[BaseException] = []

    def item_pages(site, made, item, *args, **kwargs):
        if wanted and item.repository.text == BAD:
            raise wanted[0]
        return real(site, made, item, *args, **kwargs)

    monkeypatch.setattr(pages, "item_pages", item_pages)
    return wanted.append


@pytest.mark.parametrize(
    "error",
    [TypeError("boom"), KeyError("x"), RecursionError(), OSError(36, "File name too long")],
    ids=["TypeError", "KeyError", "RecursionError", "ENAMETOOLONG"],
)
def test_a_rendering_failure_keeps_the_last_good_publication(tmp_path, capsys, breaking, error):
    config, _, bad = make_site(tmp_path)
    assert _build(config, capsys)[0] == 0
    before = _tree(tmp_path / "site")
    (bad / "item.yaml").write_text("state: Original\ntimestamp: 2012-01-01T00:00:00Z\n")
    breaking(error)
    code, output = _build(config, capsys)
    after = _tree(tmp_path / "site")
    assert code == 1, output
    assert "Traceback" not in output
    assert (
        f"error: mtc-m16c: {BAD}/item.yaml: an item that could not be resolved or rendered "
        f"({type(error).__name__}" in output
    )
    assert "its last good publication (timestamp 2009-07-21T13:23:45Z) kept" in output
    for repository in (GOOD_A, GOOD_B, BAD):  # BAD: its pages of the last good build
        assert _own(after, repository) == _own(before, repository), repository
    assert b"2012-01-01" not in b"".join(_own(after, BAD).values())


def test_an_item_failing_on_a_first_build_is_left_out_alone(tmp_path, capsys, breaking):
    config, _, _ = make_site(tmp_path)
    breaking(ValueError("no"))
    code, output = _build(config, capsys)
    assert code == 1 and "Traceback" not in output
    assert f"error: mtc-m16c: {BAD}/item.yaml: an item that could not be resolved" in output
    site = tmp_path / "site"
    assert (site / GOOD_A / "index.html").is_file() and (site / GOOD_B / "index.html").is_file()
    assert not (site / BAD / "index.html").exists()


def test_a_failure_while_reading_one_repository_is_its_own(tmp_path, capsys, monkeypatch):
    config, _, _ = make_site(tmp_path)
    real = crawl.read_item

    def read_item(archive, repository, *args, **kwargs):
        if repository == BAD:
            raise OverflowError("date value out of range")
        return real(archive, repository, *args, **kwargs)

    monkeypatch.setattr(crawl, "read_item", read_item)
    code, output = _build(config, capsys)
    assert code == 1 and "Traceback" not in output
    assert (
        f"error: mtc-m16c: {BAD}/item.yaml: a value this version cannot read (OverflowError: "
        "date value out of range)" in output
    )
    assert (tmp_path / "site" / GOOD_A / "index.html").is_file()


def test_an_unexpected_error_is_one_line_without_a_traceback(tmp_path, monkeypatch):
    config, _, _ = make_site(tmp_path)
    code = (
        "import sys\n"
        "from ibistatic.site import build\n"
        "def broken(*args, **kwargs):\n"
        "    raise AttributeError('a bug')\n"
        "build.build_site = broken\n"
        "from ibistatic.commands import build as command\n"
        "command.build_site = broken\n"
        "from ibistatic.cli import main\n"
        f"sys.exit(main(['build', '--config', {str(config)!r}]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("IBISTATIC_TRACEBACK", None)
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.strip() == (
        "ibistatic build: unexpected error: AttributeError: a bug (a bug of ibistatic: please "
        "report it; IBISTATIC_TRACEBACK=1 shows where)"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "IBISTATIC_TRACEBACK": "1"},
        timeout=60,
    )
    assert "Traceback" in shown.stderr and "AttributeError: a bug" in shown.stderr


# --- what is published is what is on disk ---------------------------------------------------


def _same_size_and_time(path: Path, data: bytes) -> None:
    """Rewrite `path` with `data` (of its size), its modification time set back."""
    status = path.stat()
    assert len(data) == status.st_size
    path.write_bytes(data)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert path.stat().st_mtime_ns == status.st_mtime_ns


def _sum_on_page(site: Path, repository: str) -> bytes:
    return (site / "files" / repository / "index.html").read_bytes()


@pytest.mark.parametrize("full", [False, True], ids=["build", "build --full"])
def test_an_edit_that_keeps_size_and_mtime_is_published(tmp_path, capsys, full):
    config, _, bad = make_site(tmp_path)
    assert _build(config, capsys)[0] == 0
    site = tmp_path / "site"
    document = bad / "doc" / "report.txt"
    old = document.read_bytes()
    new = old.upper()
    _same_size_and_time(document, new)
    descriptor = bad / "item.yaml"
    _same_size_and_time(descriptor, descriptor.read_bytes().replace(b"Original", b"Copy\n   "))
    code, output = _build(config, capsys, *(["--full"] if full else []))
    assert code == 0, output
    import hashlib

    page = _sum_on_page(site, BAD)
    assert hashlib.sha256(new).hexdigest().encode() in page
    assert hashlib.sha256(old).hexdigest().encode() not in page
    assert b"Copy" in (site / "record" / BAD / "index.html").read_bytes()


def test_build_full_reads_every_descriptor_and_file_whatever_the_caches_say(tmp_path):
    """Caches that lie (as after an edit no file time shows: a restored backup, a clock
    set back) mislead an update, never `build --full`."""
    config_path, _, bad = make_site(tmp_path)
    config = load_config(config_path)
    publisher = Publisher(config)
    publisher.build()
    site = tmp_path / "site"
    good = _tree(site)
    # every known sum and parsed descriptor replaced by a wrong one, as if stale
    for identity in publisher.file_sums.known:
        publisher.file_sums.known[identity] = bytes(32)
    entries = publisher.cache.entries
    other = next(value for path, value in entries.items() if GOOD_A in path)
    for path, (identity, _) in list(entries.items()):
        if BAD in path:
            entries[path] = (identity, other)
    publisher.build(full=True)
    assert _tree(site) == good
    assert b"0" * 64 not in b"".join(_tree(site).values())


def test_watch_publishes_an_edit_that_keeps_size_and_mtime(tmp_path):
    from tests.test_watch import Watching, wait_for

    config_path, _, bad = make_site(tmp_path)
    config = load_config(config_path)
    watching = Watching(config)
    try:
        wait_for(watching.watcher.up_to_date, what="the first build")
        document = bad / "doc" / "report.txt"
        import hashlib

        new = document.read_bytes().upper()
        before = watching.watcher.republished
        _same_size_and_time(document, new)
        watching.settle(before)
        wait_for(
            lambda: hashlib.sha256(new).hexdigest().encode() in _sum_on_page(config.output, BAD),
            what="the new sum on the file list",
        )
    finally:
        watching.stop()
    time.sleep(0)  # nothing left running
