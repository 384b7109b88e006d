"""An Archive whose archive.yaml breaks after a good build keeps its last good
publication (its ArchiveInfo and its items as last published), reported, in build as
in watch; its IBIs stay its own against newcomers of other Archives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ibistatic.config import load_config
from ibistatic.resolver import Resolver
from ibistatic.site.build import build_site
from test_identity import HOLDER, HOLDER_IBIP, assert_same_publication, holder_files
from test_publish import make_project, snapshot

NOTE = (
    "warning: mtc-m16c: archive.yaml: the Archive's last good publication (8 items, address mtc-m16c.sid.inpe.br) "
    "kept published despite the errors; expected a valid archive.yaml (fix it to publish the Archive again; "
    "remove the Archive from the configuration to withdraw it)"
)
BREAKAGES = {
    "bad YAML": (
        lambda good: "address: [x\n",
        "error: mtc-m16c: archive.yaml: malformed YAML at line 2",
    ),
    "no address": (
        lambda good: good.replace("address:", "# address:"),
        "error: mtc-m16c: archive.yaml: address: nothing; expected the Archive's host[:port] (a required key)",
    ),
    "bad template": (
        lambda good: good + "file-url: 'http://{nope}/x'\n",
        "error: mtc-m16c: archive.yaml: file-url: field {nope} in 'http://{nope}/x'; expected only {address}",
    ),
    "removed": (
        None,
        "error: mtc-m16c: archive.yaml: no archive.yaml; expected an archive.yaml at the Archive root",
    ),
}


def break_archive(descriptor: Path, breakage: str) -> None:
    make = BREAKAGES[breakage][0]
    if make is None:
        descriptor.unlink()
    else:
        descriptor.write_text(make(descriptor.read_text(encoding="utf-8")), encoding="utf-8")


def reported(lines: list[str], message: str) -> None:
    """The archive.yaml error, then (after its other lines) the note."""
    error = next(n for n, line in enumerate(lines) if line.startswith(message))
    assert NOTE in lines[error + 1 :]


@pytest.fixture
def project(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    return config, tmp_path / "archives" / "mtc-m16c" / "archive.yaml", snapshot(config.output)


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_archive_yaml_keeps_the_archive_published(project, breakage):
    config, descriptor, before = project
    good = descriptor.read_text(encoding="utf-8")
    break_archive(descriptor, breakage)
    for full in (False, True):  # a new Publisher each time: the state comes from the cache folder
        report = build_site(config, full=full)
        assert_same_publication(before, snapshot(config.output))  # pages and index records alike
        reported([str(p) for p in report.problems], BREAKAGES[breakage][1])
    assert Resolver(config.output).resolve(HOLDER_IBIP).url.endswith("CCSDS%20650.0-M-2.pdf")
    descriptor.write_text(
        good.replace("mtc-m16c.sid.inpe.br", "mtc-m16c-new.sid.inpe.br"), encoding="utf-8"
    )
    report = build_site(config)  # fixed: published as it now is
    assert not any("mtc-m16c: archive.yaml" in str(p) for p in report.problems)
    assert (
        Resolver(config.output)
        .resolve(HOLDER_IBIP)
        .url.startswith("http://mtc-m16c-new.sid.inpe.br/")
    )


def test_a_first_build_of_a_broken_archive_leaves_it_out(tmp_path):
    config = load_config(make_project(tmp_path))
    break_archive(tmp_path / "archives" / "mtc-m16c" / "archive.yaml", "no address")
    report = build_site(config)
    assert not holder_files(snapshot(config.output))
    assert NOTE not in [str(p) for p in report.problems]


def add_claimant(archive: Path) -> str:
    """A new repository of another Archive that claims the holder's IBIp."""
    claimant = "sid.inpe.br/mtc-m19/2000/01.01.00.00"
    (archive / claimant / "doc").mkdir(parents=True)
    (archive / claimant / "doc" / "evil.pdf").write_text("not the report\n", encoding="utf-8")
    descriptor = {
        "state": "Original",
        "ibip": HOLDER_IBIP,
        "timestamp": "2000-01-01T00:00:00Z",
        "target": "evil.pdf",
    }
    (archive / claimant / "item.yaml").write_text(yaml.safe_dump(descriptor), encoding="utf-8")
    return claimant


def test_a_newcomer_of_another_archive_never_takes_the_kept_archives_ibip(project):
    config, descriptor, before = project
    break_archive(descriptor, "bad YAML")
    add_claimant(descriptor.parent.parent / "mtc-m16d")
    for full in (False, True):
        report = build_site(config, full=full)
        assert holder_files(snapshot(config.output)) == holder_files(before) != {}
        assert NOTE in [str(p) for p in report.problems]
    assert Resolver(config.output).resolve(HOLDER_IBIP).url.endswith("CCSDS%20650.0-M-2.pdf")


def test_the_cli_reports_the_kept_archive_and_exits_1(project):
    config, descriptor, before = project
    break_archive(descriptor, "no address")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ibistatic",
            "build",
            "--config",
            str(descriptor.parent.parent.parent / "ibistatic.yaml"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert run.returncode == 1, run.stderr
    assert f"{BREAKAGES['no address'][1]}\n{NOTE}\n" in run.stderr
    assert "Traceback" not in run.stderr
    assert_same_publication(before, snapshot(config.output))


def test_watch_keeps_a_broken_archive_and_ignores_its_folders_until_fixed(tmp_path):
    from test_watch import Watching, wait_for

    config = load_config(make_project(tmp_path))
    descriptor = tmp_path / "archives" / "mtc-m16c" / "archive.yaml"
    good = descriptor.read_text(encoding="utf-8")
    watching = Watching(config)
    try:
        wait_for(watching.watcher.up_to_date, what="the initial build")
        before = snapshot(config.output)
        since = len(watching.messages)
        break_archive(descriptor, "bad template")
        wait_for(lambda: NOTE in watching.messages[since:], what="the note")
        wait_for(watching.watcher.up_to_date, what="the republish to end")
        assert holder_files(snapshot(config.output)) == holder_files(before)
        # an item edited while the archive.yaml is broken stays as last published
        item = descriptor.parent / HOLDER / "item.yaml"
        since = len(watching.messages)
        item.write_text(
            item.read_text(encoding="utf-8").replace("Reference Model", "Edited Model"),
            encoding="utf-8",
        )
        wait_for(lambda: NOTE in watching.messages[since:], what="the note again")
        wait_for(watching.watcher.up_to_date, what="the republish to end")
        assert holder_files(snapshot(config.output)) == holder_files(before)
        since = len(watching.messages)
        descriptor.write_text(good, encoding="utf-8")
        wait_for(
            lambda: (
                "Edited Model"
                in (config.output / HOLDER / "index.html").read_text(encoding="utf-8")
            ),
            what="the fix",
        )
        wait_for(watching.watcher.up_to_date, what="the republish to end")
        assert NOTE not in watching.messages[since:]
    finally:
        watching.stop()
