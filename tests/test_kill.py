"""SIGKILL at random moments of real `ibistatic build` runs, full builds and updates:
the served tree is always the site before or the new one, never a mix, and the next
build recovers to what a full build gives."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ibistatic.config import load_config
from ibistatic.site.build import build_site
from test_safe_output import ROOT, snapshot, state_home  # noqa: F401 (state_home: an autouse fixture)

ITEMS = 150  # a full build takes about a second here
EDITED = 40  # items whose title differs between the two inputs
KILLS = 20  # of each kind


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for relative, data in sorted(snapshot(root).items()):
        digest.update(relative.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


class Inputs:
    """Two versions of the project's input, X and Y, switched by rewriting EDITED items."""

    def __init__(self, project: Path) -> None:
        descriptors = sorted((project / "archive-a").rglob("item.yaml"))[:EDITED]
        self.texts = {}
        for path in descriptors:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            changed = {
                **data,
                "dublin-core": {
                    **(data.get("dublin-core") or {}),
                    "title": f"Edited {path.parent.name}",
                },
            }
            self.texts[path] = (
                path.read_text(encoding="utf-8"),
                yaml.safe_dump(changed, allow_unicode=True),
            )
        self.current = 0

    def switch(self) -> int:
        self.current = 1 - self.current
        for path, texts in self.texts.items():
            path.write_text(texts[self.current], encoding="utf-8")
            status = path.stat()
            os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 2_000_000_000))
        return self.current


def _kill_at(command: list[str], delay: float) -> bool:
    """Run `command`, SIGKILL it after `delay` s; True when it was still running."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    running = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait()
    return running


def _timed(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(
        command, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True
    )
    return time.monotonic() - started


@pytest.mark.slow
def test_sigkill_at_random_moments_leaves_the_old_or_the_new_site(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_archive import make_project as make_synthetic

    project = make_synthetic(tmp_path / "project", ITEMS)
    config_path = project / "ibistatic.yaml"
    inputs = Inputs(project)
    expected = {}
    for version in (1, 0):  # the reference of each input: a full build elsewhere
        inputs.switch()
        reference = load_config(config_path, output=tmp_path / f"reference-{version}")
        build_site(reference, full=True)
        expected[version] = tree_hash(reference.output)
    assert expected[0] != expected[1]
    config = load_config(config_path)
    build_site(config)
    random_ = random.Random(20240611)
    build = [sys.executable, "-m", "ibistatic", "build", "--quiet", "--config", str(config_path)]
    verdicts = {"full": [], "update": []}
    for kind, command in (("full", build + ["--full"]), ("update", build)):
        inputs.switch()
        duration = _timed(command)  # how long one takes: the kills land inside it
        for _ in range(KILLS):
            before = inputs.current
            after = inputs.switch()
            running = _kill_at(command, random_.uniform(0.0, duration))
            served = tree_hash(config.output)
            assert served in (expected[before], expected[after]), (
                f"{kind}: a mixed tree after a kill"
            )
            verdicts[kind].append(
                ("before" if served == expected[before] else "new") if running else "done"
            )
            build_site(config)  # the next build recovers ...
            assert tree_hash(config.output) == expected[after]  # ... to what a full build gives
    for kind, seen in verdicts.items():
        assert seen.count("before") >= 5, (kind, seen)  # most kills landed mid-build
    print(
        {
            kind: {v: seen.count(v) for v in ("before", "new", "done")}
            for kind, seen in verdicts.items()
        }
    )
