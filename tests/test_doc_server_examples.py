"""Every ``$ ibistatic`` example of the docs that starts or asks a server runs as written.

The pages whose examples run ``acks``, ``build``, ``check-deployment``, ``linkcheck``,
``resolver`` or ``serve`` (the others are run by ``test_doc_examples.py``) run every console
step in order, in one folder set up as there (the sample built into ``site``, copies of its
Archives, ``ibistatic/``), with ``ibistatic`` on the PATH:

- a ``$ cat FILE`` line writes FILE with the lines shown after it;
- a line ending in ``&`` starts a background process; the lines shown after it are the
  first ones it prints (waited for, up to 20 s), and it is stopped (SIGTERM) when the
  page's steps end;
- ``$ curl ...`` lines run curl (the test is skipped where curl is not installed).

The ports the pages name (8080, 8001, 8002, 8003 after ``127.0.0.1:`` or ``--port``) may be
taken on the machine running the test: each is replaced by a free port, the same one in
every command and every shown line of the page.  No process reaches the network: every
ibistatic process runs with a ``sitecustomize`` whose ``socket.getaddrinfo`` knows no host
name (numeric addresses only), which is what linkcheck's "machine with no network" sees.

The printed lines (stdout then stderr) must be the shown ones; where they hold the clock,
a duration or a fresh key (an ISO time, ``in 3.50 s``, ``urlkey ...``) only those digits
may differ, and where the page abridges the output with a ``...`` line, the shown lines
must be printed in that order, others between them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serve_process import free_port, stop
from test_doc_examples import _sandbox, page_steps, run

ROOT = Path(__file__).resolve().parent.parent
#: the commands whose examples run here: each starts or asks a server, or reads its log
SERVER = ("acks", "build", "check-deployment", "linkcheck", "resolver", "serve")
#: a port a page names, where it is one: in an address or after --port
PORT = re.compile(r"(?:(?<=127\.0\.0\.1:)|(?<=--port ))(8080|800[1-3])\b")
#: what varies by run in a printed line: compared without its digits
VARIES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|in \d+\.\d+ s$|^urlkey \S+")
#: no host name resolves: numeric addresses are looked up as usual
NO_DNS = """import ipaddress, socket
_getaddrinfo = socket.getaddrinfo
def getaddrinfo(host, *args, **kwargs):
    try:
        ipaddress.ip_address(host.decode() if isinstance(host, bytes) else str(host))
    except ValueError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
    return _getaddrinfo(host, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("doc-site")
    run("ibistatic build --output site", folder)
    return folder / "site"


def server_pages() -> list[tuple[Path, list[tuple[str, list[str]]]]]:
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        steps = page_steps(page)
        if any(c.split()[:2] in (["ibistatic", name] for name in SERVER) for c, _ in steps):
            found.append((page.relative_to(ROOT), steps))
    return found


def _environment(folder: Path) -> dict[str, str]:
    shims = folder / "shims"
    shims.mkdir(exist_ok=True)
    (shims / "sitecustomize.py").write_text(NO_DNS, encoding="utf-8")
    command = shims / "ibistatic"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ibistatic "$@"\n')
    command.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": f"{shims}{os.pathsep}{ROOT}",
        "PYTHONUNBUFFERED": "1",  # a background process's lines reach its log at once
        "XDG_STATE_HOME": str(folder / "state"),
    }


def _start(command: str, folder: Path, env: dict, want: int) -> tuple[subprocess.Popen, list]:
    """Start `command` in the background; its first `want` lines (fewer if it ends)."""
    log = folder / f"background-{time.monotonic_ns()}.log"
    with log.open("w") as out:
        # exec: SIGTERM reaches ibistatic itself (serve --join then leaves its resolver)
        process = subprocess.Popen(
            "exec " + command, shell=True, cwd=folder, env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = log.read_text(encoding="utf-8").splitlines()
        if len(lines) >= want or process.poll() is not None:
            break
        time.sleep(0.05)
    return process, log.read_text(encoding="utf-8").splitlines()


def _masked(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return [VARIES.sub(lambda m: re.sub(r"\d+", "0", m.group()), line) for line in lines]


def assert_shows(printed: list[str], shown: list[str], where: str) -> None:
    printed, shown = _masked(printed), _masked(shown)
    if "..." not in shown:
        assert printed == shown, where
        return
    left = iter(printed)  # each shown line after the one before it
    missing = [line for line in shown if line != "..." and line not in left]
    assert not missing, f"{where}: not printed in this order: {missing}\n" + "\n".join(printed)


@pytest.mark.parametrize("page, steps", [pytest.param(p, s, id=str(p)) for p, s in server_pages()])
def test_the_server_examples_of_a_page_print_what_it_shows(page, steps, built_site, tmp_path):
    if any(c.startswith("curl ") for c, _ in steps) and not shutil.which("curl"):
        pytest.skip("curl is not installed: the page's curl lines cannot run")
    _sandbox(tmp_path, built_site)
    env = _environment(tmp_path)
    ports: dict[str, str] = {}

    def ported(text: str) -> str:
        return PORT.sub(
            lambda m: ports.get(m.group()) or ports.setdefault(m.group(), _port(ports)), text
        )

    background: list[subprocess.Popen] = []
    try:
        for command, shown in steps:
            command, shown = ported(command), [ported(line) for line in shown]
            where = f"{page}: $ {command}"
            if command.startswith("cat "):
                (tmp_path / command[4:].strip()).write_text("\n".join(shown) + "\n")
                continue
            assert command.split()[0] in ("ibistatic", "curl"), f"{where}: no rule to run it"
            if command.endswith("&"):
                process, printed = _start(command[:-1], tmp_path, env, len(shown))
                background.append(process)
                assert_shows(printed, shown, where)
                continue
            # acks reads a log the running Archives append to a moment after each redirect
            # (the resolver batches its acknowledgments): it may be read again for 5 s
            deadline = time.monotonic() + (5 if command.startswith("ibistatic acks ") else 0)
            while True:
                printed = _run(command, tmp_path, env)
                if time.monotonic() > deadline or _masked(printed) == _masked(shown):
                    break
                time.sleep(0.2)
            assert_shows(printed, shown, where)
    finally:
        # the last started first: the Archives leave their resolver before it stops
        for process in reversed(background):
            stop(process)


def _port(taken: dict[str, str]) -> str:
    """A free port, none of those already given to the page."""
    while (port := str(free_port())) in taken.values():
        pass
    return port


def _run(command: str, folder: Path, env: dict) -> list[str]:
    done = subprocess.run(
        command, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    return (done.stdout + done.stderr).splitlines()
