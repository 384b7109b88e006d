"""Every ``$ ibistatic`` example of the docs that needs no server runs as written.

The examples of one page run in order in one folder (a deposit example may name the IBI
an earlier one minted), beside what the pages assume is there: the bundled sample built
into ``site``, copies of its Archives (``mtc-m16c``, ``mtc-m16d``), the checkout's
``ibistatic/`` (for ``--archive ibistatic/sample_archive/...``) and a ``report.pdf`` and
``relatorio.pdf``.  A ``$ cat FILE`` line writes FILE with the lines shown after it.
The printed lines (stdout and stderr) must be the ones the page shows; where they hold
the clock (a date minted now, seconds ahead of now) only their digits may differ.
Examples that start a server (serve, resolver) or ask one (check-deployment, linkcheck,
acks of a live log) run in ``test_doc_server_examples.py``, with this parser.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "ibistatic" / "sample_archive"
#: the commands whose examples run here: none of them starts or asks a server
RUN = ("parse-url", "inspect", "mint", "resolve", "properties", "deposit")
#: an example whose output holds the clock: compared without its digits
CLOCK = re.compile(r"ahead of the clock|^ibistatic mint --host [^ ]+ --json$")


def page_steps(page: Path) -> list[tuple[str, list[str]]]:
    """A page's console steps in order: (command, the lines shown after it)."""
    steps: list[tuple[str, list[str]]] = []
    fenced = in_step = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced, in_step = not fenced, False  # a step ends with its block
            continue
        if not fenced:
            continue
        if line.startswith("$ "):
            steps.append((line[2:], []))
            in_step = True
        elif in_step and steps[-1][0].endswith("\\"):
            command, shown = steps[-1]
            steps[-1] = (command[:-1].rstrip() + " " + line.strip(), shown)
        elif in_step:
            steps[-1][1].append(line)
    return steps


def pages_examples() -> list[tuple[Path, list[tuple[str, list[str]]]]]:
    """(page, its console steps in order: (command, the lines shown after it))."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        steps = page_steps(page)
        runs = [(c, s) for c, s in steps if c.startswith("cat ") or c.split()[:2][-1] in RUN]
        if any(c.startswith("ibistatic ") for c, _ in runs):
            found.append((page.relative_to(ROOT), runs))
    return found


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("doc-site")
    run("ibistatic build --output site", folder)
    return folder / "site"


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "XDG_STATE_HOME": str(cwd / "state"),  # mint's default state: not the user's
    }
    return subprocess.run(
        command.replace("ibistatic ", f"{sys.executable} -m ibistatic ", 1),
        shell=True,
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _sandbox(folder: Path, site: Path) -> None:
    shutil.copytree(site, folder / "site", symlinks=False)
    for archive in ("mtc-m16c", "mtc-m16d"):
        shutil.copytree(SAMPLE / archive, folder / archive)
    (folder / "ibistatic").symlink_to(ROOT / "ibistatic")
    (folder / "report.pdf").write_bytes(b"%PDF-1.4 report\n")
    (folder / "relatorio.pdf").write_bytes(b"%PDF-1.4 relatorio\n")


def _shown(lines: list[str], clock: bool) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not clock:
        return lines
    # the clock's digits, and the default state file of the user who ran it
    lines = [re.sub(r'"state": "[^"]*"', '"state": "..."', line) for line in lines]
    return [re.sub(r"\d+", "0", line) for line in lines]


@pytest.mark.parametrize(
    "page, steps", [pytest.param(p, s, id=str(p)) for p, s in pages_examples()]
)
def test_the_examples_of_a_page_print_what_it_shows(page, steps, built_site, tmp_path):
    _sandbox(tmp_path, built_site)
    for command, shown in steps:
        if command.startswith("cat "):
            (tmp_path / command[4:].strip()).write_text("\n".join(shown) + "\n", encoding="utf-8")
            continue
        done = run(command, tmp_path)
        clock = bool(CLOCK.search(command) or any(CLOCK.search(line) for line in shown))
        printed = (done.stdout + done.stderr).splitlines()
        assert _shown(printed, clock) == _shown(shown, clock), f"{page}: $ {command}"
