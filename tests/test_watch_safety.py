"""Watch survives hostile input, failed republishes, deleted Archives and SIGKILL
(docs/cli/watch.md): whatever happens, it reports, goes on, and converges to a full build."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from ibistatic import forked
from ibistatic.config import load_config
from ibistatic.deposit import deposit
from ibistatic.site.build import build_site
from test_publish import SAMPLE, make_project
from test_watch import Watching, wait_for

ROOT = Path(__file__).resolve().parent.parent
ITEM = (
    "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"  # an Original of mtc-m16c, IBIp 8JMKD3MGP8W/35MMLL8
)
HOST = "mtc-m19.sid.inpe.br"


# --- what a published tree is ----------------------------------------------------------------


def tree_digests(output: Path) -> dict[str, str]:
    """relative path -> sha256 of every file the output serves (through the output's
    symbolic link if it is one), with the output's own path written as <OUTPUT> (the
    nginx and Apache files name it), so that builds elsewhere compare."""
    served = output.resolve()
    names = sorted({str(output).encode(), str(served).encode()}, key=len, reverse=True)
    digests = {}
    for path in sorted(served.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            for name in names:
                data = data.replace(name, b"<OUTPUT>")
            digests[path.relative_to(served).as_posix()] = hashlib.sha256(data).hexdigest()
    return digests


def full_build_elsewhere(config, where: Path) -> dict[str, str]:
    """The tree a full build of the same input gives, built into `where`."""
    elsewhere = dataclasses.replace(config, output=where / "site", cache=where / "cache")
    build_site(elsewhere, full=True)
    return tree_digests(elsewhere.output)


def _differences(got: dict[str, str], expected: dict[str, str]) -> list[str]:
    return sorted(
        path for path in got.keys() | expected.keys() if got.get(path) != expected.get(path)
    )


# --- hostile input: reported, watch goes on, innocent items publish ------------------------------


def _item(archive: Path) -> Path:
    return archive.joinpath(*ITEM.split("/"))


def _yaml_chokes(archive: Path) -> str:
    (_item(archive) / "item.yaml").write_bytes(
        b"state: Original\nx: !!python/object:os.system x\n\xff\xfe"
    )
    return f"{ITEM}/item.yaml"


def _impossible_date(archive: Path) -> str:
    (_item(archive) / "item.yaml").write_text("state: Original\ntimestamp: 2023-02-30T00:00:00Z\n")
    return f"{ITEM}/item.yaml"


def _deeply_nested(archive: Path) -> str:
    (_item(archive) / "item.yaml").write_text(
        "state: Original\ntranslations: " + "[" * 10000 + "]" * 10000 + "\n"
    )
    return f"{ITEM}/item.yaml"


def _symlink_out(archive: Path) -> str:
    os.symlink("/etc", _item(archive).with_name("07.21.14.44"))
    return "sid.inpe.br/mtc-m18@80/2009/07.21.14.44"


def _fifo_in_doc(archive: Path) -> str:
    os.mkfifo(_item(archive) / "doc" / "pipe")
    return f"{ITEM}/doc/pipe"


def _fifo_descriptor(archive: Path) -> str:
    (_item(archive) / "item.yaml").unlink()
    os.mkfifo(_item(archive) / "item.yaml")
    return ITEM


def _archive_yaml_breaks(archive: Path) -> str:
    (archive / "archive.yaml").write_text("address: [\n")
    return "archive.yaml"


def _archive_yaml_impossible_date(archive: Path) -> str:
    (archive / "archive.yaml").write_text(
        "address: mtc-m16c.sid.inpe.br\nservice-ibi: 2023-02-30\n"
    )
    return "archive.yaml"


def _archive_deleted(archive: Path) -> str:
    shutil.rmtree(archive)
    return f"{archive}: no such directory"


HOSTILE = {
    "descriptor PyYAML chokes on": _yaml_chokes,
    "impossible date": _impossible_date,
    "deeply nested descriptor": _deeply_nested,
    "symbolic link out of the archive": _symlink_out,
    "FIFO in doc": _fifo_in_doc,
    "FIFO as item.yaml": _fifo_descriptor,
    "archive.yaml breaks": _archive_yaml_breaks,
    "archive.yaml with an impossible date": _archive_yaml_impossible_date,
    "archive folder deleted": _archive_deleted,
}


def _undo(archive: Path) -> None:
    """The archive as the sample has it again (any FIFO opened first, so that a reader
    blocked on it gets end of file)."""
    for fifo in (_item(archive) / "item.yaml", _item(archive) / "doc" / "pipe"):
        if fifo.is_fifo():
            handle = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            fifo.unlink()
            os.close(handle)
    link = _item(archive).with_name("07.21.14.44")
    if link.is_symlink():
        link.unlink()
    shutil.copytree(SAMPLE / archive.name, archive, dirs_exist_ok=True)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_input_is_reported_and_watch_goes_on(tmp_path, case):
    config = load_config(make_project(tmp_path))
    archive, other = tmp_path / "archives" / "mtc-m16c", tmp_path / "archives" / "mtc-m16d"
    watching = Watching(config)
    document = tmp_path / "innocent.txt"
    document.write_text("An innocent item.\n")
    try:
        named = HOSTILE[case](archive)
        wait_for(
            lambda: any(named in message for message in watching.messages),
            30,
            f"a message naming {named}",
        )
        innocent = deposit(other, [document], host=HOST)
        wait_for(
            lambda: (config.output / innocent.repository / "index.html").is_file(),
            30,
            "the innocent item published",
        )
        assert watching.thread.is_alive()
        _undo(archive)
        time.sleep(0.3)
        wait_for(watching.watcher.up_to_date, 30, "a republish after the undo")
        expected = full_build_elsewhere(config, tmp_path / "expected")
        wait_for(
            lambda: tree_digests(config.output) == expected,
            30,
            "the watched site to equal a full build",
        )
        assert "Traceback" not in "\n".join(watching.messages)
    finally:
        _undo(archive) if archive.exists() else None
        watching.stop()


def test_a_failed_republish_is_logged_and_the_next_change_republishes(tmp_path, monkeypatch):
    config = load_config(make_project(tmp_path))
    watching = Watching(config)
    other = tmp_path / "archives" / "mtc-m16d"
    build = watching.watcher.publisher.build
    failing = threading.Event()
    failing.set()

    def flaky(*args, **kwargs):
        if failing.is_set():
            raise KeyError("something no one foresaw")
        return build(*args, **kwargs)

    monkeypatch.setattr(watching.watcher.publisher, "build", flaky)
    document = tmp_path / "first.txt"
    document.write_text("first\n")
    try:
        first = deposit(other, [document], host=HOST)
        wait_for(lambda: watching.watcher.failed > 0, 30, "a failed republish")
        failure = next(m for m in watching.messages if m.startswith("republish failed"))
        assert (
            "KeyError: 'something no one foresaw'; the next change republishes everything"
            in failure
        )
        assert str(other / first.repository.split("/")[0]) in failure  # the changed paths are named
        failing.clear()
        second = deposit(other, [document], host=HOST)
        for done in (first, second):  # the first, which the failed republish missed, too
            wait_for(
                lambda: (config.output / done.repository / "index.html").is_file(),
                30,
                done.repository,
            )
        assert watching.thread.is_alive()
    finally:
        watching.stop()


def test_a_deleted_archive_folder_made_anew_is_watched_again(tmp_path):
    config = load_config(make_project(tmp_path))
    archive = tmp_path / "archives" / "mtc-m16c"
    watching = Watching(config)
    try:
        shutil.rmtree(archive)
        wait_for(
            lambda: any(m.endswith("the Archive folder is gone") for m in watching.messages),
            30,
            "the loss noticed",
        )
        shutil.copytree(SAMPLE / "mtc-m16c", archive)
        wait_for(
            lambda: any("made anew: watching it again" in m for m in watching.messages),
            30,
            "the new folder watched",
        )
        descriptor = _item(archive) / "item.yaml"
        data = yaml.safe_load(descriptor.read_text())
        data["dublin-core"] = {"title": "Seen in the new folder"}
        time.sleep(0.3)
        descriptor.write_text(yaml.safe_dump(data))
        page = config.output / "8JMKD3MGP8W/35MMLL8/index.html"
        wait_for(
            lambda: "Seen in the new folder" in page.read_text(),
            30,
            "an edit in the new folder published",
        )
    finally:
        watching.stop()


def test_watch_starts_by_removing_workspaces_of_dead_deposits(tmp_path):
    config = load_config(make_project(tmp_path))
    incoming = tmp_path / "archives" / "mtc-m16d" / ".ibistatic" / "incoming"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    leftover = incoming / f"{dead.stdout.strip()}-abc123"
    (leftover / "repository" / "doc").mkdir(parents=True)
    (leftover / "repository" / "doc" / "half.pdf").write_bytes(b"%PDF half")
    watching = Watching(config)
    watching.stop()
    assert list(incoming.iterdir()) == []
    assert f"removed {leftover}: the workspace of a deposit that died" in watching.messages


def test_watch_never_forks_while_its_threads_run(tmp_path, monkeypatch):
    seen = []
    available = forked.available

    def spy():
        seen.append((threading.active_count(), available()))
        return available()

    monkeypatch.setattr(forked, "available", spy)
    monkeypatch.setattr("ibistatic.store.store.PARALLEL_ITEMS", 1)  # forking would be worth it
    monkeypatch.setattr("ibistatic.archive.crawl.PARALLEL_REPOSITORIES", 1)
    config = load_config(make_project(tmp_path))
    watching = Watching(config)
    try:
        shutil.rmtree(
            tmp_path / "archives" / "mtc-m16d" / "sid.inpe.br"
        )  # a change read by a full crawl
        wait_for(lambda: len(seen) >= 3, 30, "the republish")
        # the initial build and the republish asked, and never got workers (watch runs in a thread here)
        assert [answer for _, answer in seen] == [False] * len(seen)
    finally:
        watching.stop()
    assert forked.available() is True  # allowed again once watch is over


# --- SIGKILL of watch while items are deposited --------------------------------------------------

AT = 1287587646  # deposits are dated, so that their IBIs are known before they are made
ROUNDS = 22


def _document(folder: Path, number: int) -> Path:
    path = folder / f"document-{number}.txt"
    path.write_text(f"Document {number}.\n")
    return path


def _expected_trees(tmp_path: Path, rounds: int) -> list[dict[str, str]]:
    """Full builds, elsewhere, of the project after 0, 1, ..., `rounds` deposits."""
    config = load_config(make_project(tmp_path))
    archive = tmp_path / "archives" / "mtc-m16d"
    trees = [full_build_elsewhere(config, tmp_path / "build-0")]
    for number in range(rounds):
        deposit(archive, [_document(tmp_path, number)], host=HOST, now=AT + 10 * number)
        trees.append(full_build_elsewhere(config, tmp_path / f"build-{number + 1}"))
    return trees


def _start_watch(config_path: Path, log) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ibistatic",
            "watch",
            "--config",
            str(config_path),
            "--debounce",
            "0.05",
        ],
        cwd=config_path.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=log,
    )


def _which(tree: dict[str, str], trees: list[dict[str, str]]) -> float | None:
    """k when `tree` is the full build of k deposits; k + 0.5 when it is that build with
    files of the next one added at paths it has not (watch serves a deposit's new pages
    before its site-wide files), none of its own changed or gone; else None."""
    for number, expected in enumerate(trees):
        if tree == expected:
            return number
    for number, (expected, following) in enumerate(zip(trees, trees[1:])):
        added = tree.keys() - expected.keys()
        kept = all(tree.get(path) == digest for path, digest in expected.items())
        if added and kept and all(following.get(path) == tree[path] for path in added):
            return number + 0.5
    return None


@pytest.mark.slow
def test_watch_killed_at_random_moments_serves_whole_trees_and_converges(tmp_path):
    trees = _expected_trees(tmp_path / "expected", ROUNDS)
    project = tmp_path / "project"
    config_path = make_project(project)
    config = load_config(config_path)
    rng = random.Random(1123)
    published = 0  # the deposits the served tree is known to hold
    outcomes = []  # per kill: 1 the new build was served, 0 the one before, less: older
    with open(tmp_path / "watch.log", "w") as log:
        watch = _start_watch(config_path, log)
        wait_for(lambda: _which(tree_digests(config.output), trees) == 0, 60, "the initial build")
        for number in range(ROUNDS):
            if rng.random() < 0.7:  # else the kill may land in the restarted watch's first build
                wait_for(
                    lambda: _which(tree_digests(config.output), trees) == number,
                    60,
                    "the restarted watch",
                )
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "ibistatic",
                    "deposit",
                    str(_document(project, number)),
                    "--archive",
                    str(project / "archives" / "mtc-m16d"),
                    "--host",
                    HOST,
                    "--at",
                    str(AT + 10 * number),
                ],
                check=True,
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            time.sleep(
                rng.uniform(0.0, 0.3)
            )  # the republish starts after 0.05 s and takes about 0.1 s
            watch.send_signal(signal.SIGKILL)
            watch.wait()
            tree = tree_digests(config.output)
            served = _which(tree, trees)
            assert served is not None and published <= served <= number + 1, (
                f"round {number}: the served tree is no full build of {published}..{number + 1} deposits "
                f"(nor one with the next one's new pages only); "
                f"it differs from the one before in {_differences(tree, trees[number])[:6]} "
                f"and from the one after in {_differences(tree, trees[number + 1])[:6]}"
            )
            outcomes.append(served - number)  # 0.5: the deposit's pages without the rest
            published = served
            watch = _start_watch(config_path, log)  # restarts on what the killed one left
        try:
            wait_for(
                lambda: _which(tree_digests(config.output), trees) == ROUNDS,
                60,
                "convergence to the full build",
            )
        finally:
            watch.send_signal(signal.SIGTERM)
            watch.wait(30)
    assert "Traceback" not in (tmp_path / "watch.log").read_text()
    assert (
        outcomes.count(1) >= 3 and outcomes.count(0) >= 3
    )  # kills landed before and after republishes
