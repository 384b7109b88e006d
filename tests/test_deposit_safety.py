"""Deposits and minting that fail, lie about the date or die midway: the distributor's
memory moves only for a label handed out, the future is bounded, and a killed deposit
leaves nothing behind (docs/cli/deposit.md, docs/cli/mint.md)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from archive_factory import write_archive, write_item
from ibistatic import deposit as deposit_module
from ibistatic.archive.load import load_archives
from ibistatic.cli import main
from ibistatic.core.identifiers import parse_repository_name
from ibistatic.core.minting import suffix_seconds
from ibistatic.deposit import DepositError, Subsystem, deposit, remove_abandoned, state_path
from ibistatic.distributor import FUTURE_LIMIT, DistributorStateError, TemporalDistributor
from ibistatic.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
SITE = "https://ibi.example.org/"
SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
EN = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
HOST = "mtc-m18.sid.inpe.br"
IP = "150.163.34.243"
AT = "1287587646"  # 2010-10-20T15:14:06Z
NEXT = "sid.inpe.br/mtc-m18/2010/10.20.15.14.07"  # what a deposit at AT gives after the first


@pytest.fixture
def archive(tmp_path) -> Path:
    root = write_archive(tmp_path / "mtc-m16c", "mtc-m16c.sid.inpe.br", SERVICE, service_item=False)
    write_item(
        root,
        EN,
        {"report.pdf": "%PDF report"},
        state="Original",
        language="en",
        timestamp="2009-07-21T13:23:45Z",
        next_edition=SERVICE,
    )
    write_item(root, SERVICE, state="Original", transferable=False)  # the Archive's service
    return root


@pytest.fixture
def file(tmp_path) -> Path:
    path = tmp_path / "a.txt"
    path.write_text("first\n")
    return path


def _state(archive: Path) -> Path:
    return state_path(archive, Subsystem(HOST, None, None, Fraction(1)))


def _first(archive: Path, file: Path) -> bytes:
    """One deposit, so that the memory exists; returns the state file's bytes."""
    deposit(archive, [file], host=HOST, now=AT)
    return _state(archive).read_bytes()


def _repositories(archive: Path) -> list[str]:
    return sorted(
        "/".join(p.relative_to(archive).parts[:-1]) for p in archive.glob("[!.]*/*/*/*/item.yaml")
    )


def _leftovers(archive: Path) -> list[str]:
    """Anything a deposit must not leave: workspaces, temporary files."""
    incoming = archive / ".ibistatic" / "incoming"
    found = [str(p) for p in incoming.iterdir()] if incoming.exists() else []
    return found + [str(p) for p in archive.rglob("*.tmp")]


# --- a refused request leaves the memory byte for byte ------------------------------------


def _file_in_the_way(archive: Path) -> str:
    (archive / "sid.inpe.br" / "mtc-m18" / "2011").write_text("not a folder")
    return (
        "cannot deposit sid.inpe.br/mtc-m18/2011/03.13.07.06 into {archive}: [Errno 17] File exists: "
        "'{archive}/sid.inpe.br/mtc-m18/2011'"
    )


def _next_label_taken(archive: Path) -> str:
    archive.joinpath(*NEXT.split("/")).mkdir(parents=True)
    return "{archive}/" + NEXT + " already exists; it was left untouched and nothing was deposited"


def _rename_fails(archive: Path, monkeypatch) -> str:
    def refuse(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(deposit_module, "_move", refuse)
    return "cannot deposit sid.inpe.br/mtc-m18/2010/10.20.15.14.07 into {archive}: [Errno 28] No space left on device"


def _linked_already(archive: Path) -> str:
    return f"--edition-of {EN}: {EN} already has a next edition, {SERVICE}"


REFUSALS = {
    "a file where a folder must go": (_file_in_the_way, {"now": "1300000000"}),
    "the next label exists already": (_next_label_taken, {}),
    "the rename into place fails": (_rename_fails, {}),
    "the linked item has an edition": (_linked_already, {"edition_of": EN}),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_refused_deposit_leaves_the_memory_byte_for_byte(archive, file, monkeypatch, case):
    before = _first(archive, file)
    repositories = _repositories(archive)
    make, options = REFUSALS[case]
    message = make(archive, monkeypatch) if make is _rename_fails else make(archive)
    with pytest.raises((DepositError, UsageError)) as refused:
        deposit(archive, [file], host=HOST, **{"now": AT, **options})
    assert message.format(archive=archive) in str(refused.value)
    assert _state(archive).read_bytes() == before
    assert _repositories(archive) == repositories
    assert _leftovers(archive) == []


CLI_REFUSALS = [
    # options, exit code, message (after "ibistatic deposit: ")
    (["--port", "x"], 2, "--port 'x': expected an integer from 1 to 65535"),
    (["--at", "soon"], 2, "--at must be POSIX seconds as a decimal number, not 'soon'"),
    (["--at", "99999999999"], 2, "--at 99999999999 is "),
    (["--target", "b.txt"], 2, "--target 'b.txt' is not one of the files: a.txt"),
    (["--language", "xx"], 2, "--language: invalid language tag 'xx'"),
    (["--ip", "0.1.2.3"], 2, "--ip: 0.1.2.3 cannot be coded in an IBIp"),
    (
        ["--translation-of", EN, "--language", "en"],
        2,
        f"--translation-of {EN}: {EN} is itself in en",
    ),
]


@pytest.mark.parametrize("options, code, message", CLI_REFUSALS)
def test_cli_refusals_leave_the_memory_byte_for_byte(archive, file, capsys, options, code, message):
    before = _first(archive, file)
    argv = ["deposit", str(file), "--archive", str(archive), "--host", HOST, *map(str, options)]
    assert main(argv) == code
    assert capsys.readouterr().err.startswith("ibistatic deposit: " + message)
    assert _state(archive).read_bytes() == before
    assert _leftovers(archive) == []


def test_a_missing_file_leaves_the_memory_byte_for_byte(archive, file, capsys, tmp_path):
    before = _first(archive, file)
    assert (
        main(["deposit", str(tmp_path / "gone.pdf"), "--archive", str(archive), "--host", HOST])
        == 2
    )
    assert (
        capsys.readouterr().err
        == f"ibistatic deposit: FILE '{tmp_path / 'gone.pdf'}': not a regular file\n"
    )
    assert _state(archive).read_bytes() == before


# --- the future is bounded ----------------------------------------------------------------


def _future(seconds_ahead: int) -> str:
    return str(int(time.time()) + seconds_ahead)


@pytest.mark.parametrize("command", ["deposit", "mint"])
def test_an_at_far_in_the_future_is_refused(archive, file, capsys, tmp_path, command):
    state = tmp_path / "mint.json"
    if command == "deposit":
        before = _first(archive, file)
        argv = ["deposit", str(file), "--archive", str(archive), "--host", HOST]
    else:
        assert main(["mint", "--host", HOST, "--at", AT, "--state", str(state)]) == 0
        before = state.read_bytes()
        argv = ["mint", "--host", HOST, "--state", str(state)]
    capsys.readouterr()
    at = _future(3600)
    assert main([*argv, "--at", at]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"ibistatic {command}: --at {at} is 3"
    )  # 3599 or 3600 s, as the clock ticks
    assert err.endswith(
        f"s ahead of the clock; at most {FUTURE_LIMIT} s ahead is accepted (a date in the future "
        "makes every later request of the subsystem wait until then)\n"
    )
    assert (_state(archive) if command == "deposit" else state).read_bytes() == before


def test_an_at_a_little_ahead_is_accepted(tmp_path):
    distributor = TemporalDistributor(tmp_path / "state.json")
    at = _future(FUTURE_LIMIT - 5)
    assert distributor.next_date(at, wait=False) == int(at)


def test_a_memory_far_ahead_of_the_clock_is_refused_not_waited_for(tmp_path):
    state = tmp_path / "state.json"
    ahead = _future(3600)
    state.write_text(json.dumps({"last-date-for-suffix": ahead}))
    before = state.read_bytes()
    began = time.monotonic()
    with pytest.raises(DistributorStateError) as refused:
        TemporalDistributor(state).next_date()
    assert time.monotonic() - began < 5
    assert str(refused.value).startswith(f"{state}: last-date-for-suffix is 36")
    assert str(refused.value).endswith(
        "s ahead of the clock (more than 60 s): was the clock set back? Refusing to wait that long; "
        "minting resumes by itself once the clock passes that date"
    )
    assert state.read_bytes() == before


def test_a_failure_after_commit_restores_the_memory(tmp_path):
    state = tmp_path / "state.json"
    distributor = TemporalDistributor(state)
    distributor.next_date(AT, wait=False)
    before = state.read_bytes()
    with pytest.raises(RuntimeError):
        with distributor.reserved(AT) as reservation:
            reservation.commit()
            assert state.read_bytes() != before  # written, while the lock is held
            raise RuntimeError("the work after the label failed")
    assert state.read_bytes() == before
    fresh = TemporalDistributor(tmp_path / "new.json")
    with pytest.raises(RuntimeError):
        with fresh.reserved(AT) as reservation:
            reservation.commit()
            raise RuntimeError("failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "new.json.lock",
        "state.json",
        "state.json.lock",
    ]


def test_temporary_state_files_of_killed_writers_are_removed(tmp_path):
    state = tmp_path / "state.json"
    (tmp_path / ".state.json.abc123.tmp").write_text("{half")
    TemporalDistributor(state).next_date(AT, wait=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.lock"]


# --- abandoned workspaces -----------------------------------------------------------------


def test_only_workspaces_of_dead_deposits_are_removed(tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    of_dead = incoming / f"{dead.stdout.strip()}-dead"
    young_alive = incoming / f"{os.getpid()}-young"  # just made: its maker may lock it next
    old_unlocked = incoming / f"{os.getpid()}-old"
    held = incoming / "1-held"
    for folder in (of_dead, young_alive, old_unlocked, held):
        (folder / "repository" / "doc").mkdir(parents=True)
    os.utime(old_unlocked, (time.time() - 3600,) * 2)
    os.utime(held, (time.time() - 3600,) * 2)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
            str(held),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        # in the order of the names, which depends on the two PIDs
        assert remove_abandoned(incoming) == sorted([old_unlocked, of_dead])
        assert sorted(p.name for p in incoming.iterdir()) == ["1-held", f"{os.getpid()}-young"]
    finally:
        holder.communicate("")
    assert remove_abandoned(incoming) == [held]


def _deposit_command(archive: Path, files: list[Path]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ibistatic",
        "deposit",
        *map(str, files),
        "--archive",
        str(archive),
        "--host",
        HOST,
        "--ip",
        IP,
        "--granularity",
        "0.001",
        "--target",
        files[0].name,
    ]


@pytest.mark.slow
def test_deposits_killed_at_random_moments_leave_nothing_behind(archive, tmp_path):
    """SIGKILL while the files are copied (and on either side of it): the Archive holds
    complete repositories only, the memory is never behind a repository, and the next
    deposit removes the dead ones' workspaces."""
    big = []
    for number in range(3):
        big.append(tmp_path / f"part-{number}.bin")
        big[-1].write_bytes(os.urandom(16 << 20))
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    subprocess.run(_deposit_command(archive, big), check=True, env=environment, capture_output=True)
    duration = time.monotonic() - began
    rng = random.Random(20261123)
    kills = midway = 0
    for _ in range(20):
        process = subprocess.Popen(
            _deposit_command(archive, big),
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.1, duration * 1.1))
        process.kill()
        kills += process.wait() == -9
        midway += any((archive / ".ibistatic" / "incoming").iterdir())
        _assert_complete_and_remembered(archive, big)
    assert kills >= 10 and midway >= 5  # most died before finishing, many while copying
    done = subprocess.run(
        _deposit_command(archive, big[:1]), env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert _leftovers(archive) == []
    loaded = load_archives([archive], SITE)
    assert [str(p) for p in loaded.problems if p.severity == "error"] == []


def _assert_complete_and_remembered(archive: Path, big: list[Path]) -> None:
    memory = Fraction(json.loads(_state_of_ip_run(archive).read_text())["last-date-for-suffix"])
    for repository in _repositories(archive):
        if repository in (EN, SERVICE):
            continue
        folder = archive.joinpath(*repository.split("/"))
        raw = yaml.safe_load((folder / "item.yaml").read_text())
        names = sorted(p.name for p in (folder / "doc").iterdir())
        assert names == sorted(p.name for p in big[: len(names)]) and raw["target"] == big[0].name
        for name in names:
            assert (folder / "doc" / name).stat().st_size == 16 << 20
        assert suffix_seconds(parse_repository_name(repository).suffix) <= memory


def _state_of_ip_run(archive: Path) -> Path:
    return state_path(archive, Subsystem(HOST, IP, None, Fraction(1, 1000)))
