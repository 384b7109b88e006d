"""Watch mode with real file events: deposits, edits, deletions, broken descriptors."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibistatic.config import load_config
from ibistatic.deposit import deposit
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from ibistatic.watch import Watcher
from test_publish import make_project, snapshot


def wait_for(condition, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except Exception:  # the site may be mid-update: ask again
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Watching:
    def __init__(self, config, polling=False):
        self.messages: list[str] = []
        self.watcher = Watcher(
            config, polling=polling, debounce=0.1, rescan=3600, log=self.messages.append
        )
        ready = threading.Event()
        self.thread = threading.Thread(target=self.watcher.run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(30)

    def settle(self, since: int, timeout=20.0):
        wait_for(
            lambda: self.watcher.republished > since and not self.watcher.events.paths,
            timeout,
            "a republish",
        )

    def stop(self):
        self.watcher.stop()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture
def served(tmp_path):
    config = load_config(make_project(tmp_path))
    watching = Watching(config)
    handler = partial(SimpleHTTPRequestHandler, directory=str(config.output))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield config, watching, server
    finally:
        server.shutdown()
        server.server_close()
        watching.stop()


def status(server, path: str) -> int:
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_watch_republishes_every_kind_of_change(served, tmp_path):
    config, watching, server = served
    archive = tmp_path / "archives" / "mtc-m16c"
    document = tmp_path / "report.txt"
    document.write_text("A new report.\n", encoding="utf-8")

    # deposit
    before = watching.watcher.republished
    new = deposit(archive, [document], host="mtc-m19.sid.inpe.br", metadata={"title": "New report"})
    page = f"/{new.repository}/index.html"
    wait_for(lambda: status(server, page) == 200, what="the deposited item's page")
    watching.settle(before)  # pages go out first, then the index
    wait_for(watching.watcher.up_to_date, what="the republish to end")
    assert Resolver(config.output).resolve(new.repository).url.endswith("/doc/report.txt")

    # edit: a new title appears on the page
    descriptor = Path(new.path) / "item.yaml"
    data = yaml.safe_load(descriptor.read_text(encoding="utf-8"))
    data["dublin-core"] = {"title": "Renamed report"}
    descriptor.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    wait_for(
        lambda: "Renamed report" in (config.output / page.lstrip("/")).read_text(encoding="utf-8"),
        what="the new title",
    )

    # a bad descriptor: reported, and the item keeps its last good state
    descriptor.write_text("state: [broken\n", encoding="utf-8")
    wait_for(
        lambda: any("malformed YAML" in m for m in watching.messages), what="the problem reported"
    )
    wait_for(watching.watcher.up_to_date, what="the republish to end")
    assert status(server, page) == 200
    assert Resolver(config.output).resolve(new.repository).url.endswith("/doc/report.txt")

    # fixed
    data["dublin-core"] = {"title": "Fixed report"}
    descriptor.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    wait_for(
        lambda: "Fixed report" in (config.output / page.lstrip("/")).read_text(encoding="utf-8"),
        what="the fixed title",
    )

    # deleted
    shutil.rmtree(new.path)
    wait_for(lambda: status(server, page) == 404, what="the page to go")
    wait_for(watching.watcher.up_to_date, what="the republish to end")
    assert Resolver(config.output).resolve(new.repository).alert == "not-found"
    assert watching.thread.is_alive()


def test_editor_rename_save_is_seen(served, tmp_path):
    config, watching, server = served
    descriptor = tmp_path / "archives/mtc-m16c/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml"
    data = yaml.safe_load(descriptor.read_text(encoding="utf-8"))
    data["dublin-core"] = {"title": "Saved by rename"}
    temporary = descriptor.with_name(".item.yaml.swp")
    temporary.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    temporary.replace(descriptor)
    page = config.output / "8JMKD3MGP8W/35MMLL8/index.html"
    wait_for(lambda: "Saved by rename" in page.read_text(encoding="utf-8"), what="the renamed save")


def test_lost_events_lead_to_a_full_rescan(tmp_path):
    import logging

    config = load_config(make_project(tmp_path))
    watching = Watching(config)
    try:
        # a change the observer does not report, then the overflow watchdog logs
        new = deposit(
            tmp_path / "archives" / "mtc-m16d", [Path(__file__)], host="mtc-m19.sid.inpe.br"
        )
        logging.getLogger("watchdog.observers.inotify_buffer").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        wait_for(
            lambda: any("events were lost" in m for m in watching.messages), what="a full rescan"
        )
        wait_for(lambda: (config.output / new.repository / "index.html").exists(), what="the page")
    finally:
        watching.stop()


def test_polling_observer(tmp_path):
    config = load_config(make_project(tmp_path))
    watching = Watching(config, polling=True)
    try:
        new = deposit(
            tmp_path / "archives" / "mtc-m16d", [Path(__file__)], host="mtc-m19.sid.inpe.br"
        )
        wait_for(
            lambda: (config.output / new.repository / "index.html").exists(),
            timeout=30,
            what="a polled change",
        )
    finally:
        watching.stop()


def test_reading_the_archives_floods_nothing(tmp_path):
    """Only changes are asked of inotify. Reads (a crawl opens every descriptor and
    folder) must not fill the kernel's event queue: at 100,000 items it overflows, and
    the full rescan that follows floods it again."""
    config = load_config(make_project(tmp_path))
    watching = Watching(config)
    seen: list[str] = []
    dispatch = watching.watcher.events.dispatch
    watching.watcher.events.dispatch = lambda event: (
        seen.append(event.event_type),
        dispatch(event),
    )
    try:
        for path in sorted((tmp_path / "archives").rglob("*")):
            if path.is_file():
                path.read_bytes()
            else:
                os.listdir(path)
        (tmp_path / "archives" / "mtc-m16d" / "touched.txt").write_text(
            "a change\n", encoding="utf-8"
        )
        wait_for(lambda: "created" in seen, what="the change's event")
        assert not {"opened", "closed_no_write"} & set(seen), seen
    finally:
        watching.stop()


def test_the_inotify_limit_is_explained(tmp_path, monkeypatch):
    """A site with more folders than inotify watches: a clear error, not a dead thread."""
    import errno

    from watchdog.observers import Observer

    from ibistatic.errors import IbistaticError

    def refuse(self):
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(Observer, "start", refuse)
    watcher = Watcher(load_config(make_project(tmp_path)), log=lambda message: None)
    with pytest.raises(IbistaticError, match=r"inotify watch limit .*max_user_watches.*--polling"):
        watcher.run()


def test_ctrl_c_stops_cleanly(tmp_path):
    config_path = make_project(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "ibistatic", "watch", "--config", str(config_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: (tmp_path / "site" / "index.html").exists(), what="the initial build")
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "initial build" in err and "watch stopped" in err and "Traceback" not in err


# --- property: the watched site equals a fresh full build ---------------------------------

OPERATIONS = st.lists(
    st.sampled_from(["deposit", "edit", "delete", "broken-then-fixed", "half-write"]),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS)
def test_watched_site_equals_a_full_build(tmp_path_factory, operations):
    root = tmp_path_factory.mktemp("watched")
    config = load_config(make_project(root))
    archive = root / "archives" / "mtc-m16c"
    watching = Watching(config)
    deposited: list[Path] = []
    try:
        for number, operation in enumerate(operations):
            document = root / f"document-{number}.txt"
            document.write_text(f"Document {number}.\n", encoding="utf-8")
            if operation == "deposit" or not deposited:
                deposited.append(
                    Path(
                        deposit(
                            archive, [document], host="mtc-m19.sid.inpe.br", granularity="0.01"
                        ).path
                    )
                )
                continue
            descriptor = deposited[-1] / "item.yaml"
            text = descriptor.read_text(encoding="utf-8")
            if operation == "edit":
                descriptor.write_text(
                    text + f"language: {'pt' if number % 2 else 'en'}\n", encoding="utf-8"
                )
            elif operation == "delete":
                shutil.rmtree(deposited.pop())
            elif operation == "broken-then-fixed":
                descriptor.write_text("state: [", encoding="utf-8")
                time.sleep(0.3)
                descriptor.write_text(text, encoding="utf-8")
            elif operation == "half-write":
                with open(descriptor, "w", encoding="utf-8") as handle:
                    handle.write(text[: len(text) // 2])
                    handle.flush()
                    time.sleep(0.05)
                    handle.write(text[len(text) // 2 :])
        time.sleep(0.3)  # let the last events arrive
        wait_for(watching.watcher.up_to_date, what="a republish after the last change")
    finally:
        watching.stop()
    watched = snapshot(config.output)
    messages = list(watching.messages)
    build_site(config, full=True)
    full = snapshot(config.output)
    assert watched["index/manifest.json"] == full["index/manifest.json"], messages
    assert sorted(watched) == sorted(full)
    assert [path for path in full if watched[path] != full[path]] == []
