"""The temporal distributor with its memory on disk: shared, atomic, locked."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
from fractions import Fraction
from pathlib import Path

import pytest

from ibistatic import distributor as module
from ibistatic.core.identifiers import parse_repository_name
from ibistatic.core.minting import repository_suffix, suffix_seconds
from ibistatic.distributor import (
    DistributorStateError,
    TemporalDistributor,
    default_state_path,
    mint_ibip,
    mint_repository_name,
)

F = Fraction

TABLE_6_2 = [  # request, t(i), delay
    ("1287587646.394023", 1287587646, 0),
    ("1287588012.2930", 1287588000, 0),
    ("1287588115.186234", 1287588060, 0),
    ("1287588115.3462", 1287588115, 0),
    ("1287588115.99623", 1287588116, F("0.00377")),
    ("1287588116.72", 1287588117, F("0.28")),
    ("1287588539.788342", 1287588480, 0),
]


def _state(path: Path) -> dict:
    return json.loads(path.read_text())


def test_table_6_2_through_the_state_file(tmp_path):
    state = tmp_path / "sub" / "state.json"  # the folder is made on first use
    for request, date, delay in TABLE_6_2:
        # a new distributor each time: the memory is the file, not the object
        answer = TemporalDistributor(state, 1).distribute(request, wait=False)
        assert (answer.date_for_suffix, answer.delay) == (date, delay)
        assert _state(state) == {
            "format": "ibistatic-temporal-distributor/1",
            "last-date-for-suffix": str(date),
        }
    assert sorted(p.name for p in state.parent.iterdir()) == ["state.json", "state.json.lock"]


def test_the_memory_keeps_fractions_exactly(tmp_path):
    state = tmp_path / "state.json"
    distributor = TemporalDistributor(state, "0.001")
    assert distributor.read() is None
    assert distributor.next_date("1287587646.394023", wait=False) == F("1287587646.394")
    assert _state(state)["last-date-for-suffix"] == "1287587646.394"
    assert distributor.read() == F("1287587646.394")
    assert distributor.next_date("1287587646.394023", wait=False) == F("1287587646.395")


def test_waiting_happens_after_the_memory_is_written_and_the_lock_released(tmp_path, monkeypatch):
    state = tmp_path / "state.json"
    distributor = TemporalDistributor(state, 1)
    distributor.next_date("1287588115.3462", wait=False)
    slept = []

    def sleep(seconds):
        assert _state(state)["last-date-for-suffix"] == "1287588116"
        fd = os.open(distributor.lock_path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if still held
        finally:
            os.close(fd)
        slept.append(seconds)

    monkeypatch.setattr(module.time, "sleep", sleep)
    assert distributor.next_date("1287588115.99623") == 1287588116
    assert slept == [pytest.approx(0.00377)]
    assert distributor.next_date("1287588116.72", wait=False) == 1287588117
    assert len(slept) == 1


def test_the_clock_is_read_under_the_lock(tmp_path):
    distributor = TemporalDistributor(tmp_path / "state.json", "0.001")
    first = distributor.next_date()
    second = distributor.next_date()
    assert first < second


def test_a_failed_write_keeps_the_old_memory(tmp_path, monkeypatch):
    state = tmp_path / "state.json"
    distributor = TemporalDistributor(state, 1)
    distributor.next_date(1287587646, wait=False)
    before = state.read_text()

    def crash(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module.os, "replace", crash)
    with pytest.raises(DistributorStateError) as caught:
        distributor.next_date(1287587700, wait=False)
    assert (
        str(caught.value) == f"cannot write the distributor state {state}: No space left on device"
    )
    assert state.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "state.json.lock"]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{",
        "[]",
        '{"last-date-for-suffix": 1287587646}',
        '{"last-date-for-suffix": "soon"}',
        "{}",
    ],
)
def test_a_damaged_memory_stops_minting(tmp_path, content):
    state = tmp_path / "state.json"
    state.write_text(content)
    with pytest.raises(DistributorStateError) as caught:
        TemporalDistributor(state, 1).next_date(1287587646, wait=False)
    assert str(caught.value) == (
        f"{state}: expected a JSON object with 'last-date-for-suffix' holding POSIX seconds "
        "as a decimal string; refusing to mint without the memory"
    )
    assert caught.value.exit_code == 1
    assert state.read_text() == content


def test_a_state_folder_that_cannot_exist(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    state = blocker / "state.json"
    with pytest.raises(DistributorStateError) as caught:
        TemporalDistributor(state).next_date(1287587646, wait=False)
    assert str(caught.value).startswith(f"cannot lock the distributor state {state}: ")


def test_mint_repository_name(tmp_path):
    state = tmp_path / "state.json"
    assert mint_repository_name(
        "mtc-m18.sid.inpe.br", None, state_path=state, now="1287587646.394023"
    ) == (
        "sid.inpe.br/mtc-m18/2010/10.20.15.14.06",
        F(1287587646),
    )
    assert mint_repository_name(
        "mtc-m18.sid.inpe.br", 80, state_path=state, now="1287587646.394023"
    ) == (
        "sid.inpe.br/mtc-m18/2010/10.20.15.14.07",
        F(1287587647),
    )
    assert _state(state)["subsystem"] == "sid.inpe.br/mtc-m18"


def test_mint_ibip(tmp_path):
    state = tmp_path / "state.json"
    assert mint_ibip("150.163.34.243", 800, state_path=state, now=1234806360) == (
        "8JMKD3MGP8W/34PGRBS",
        F(1234806360),
    )
    label, date = mint_ibip(
        "150.163.34.243", None, state_path=state, now=1234806360, granularity="0.1"
    )
    assert (label, date) == ("8JMKD3MGP8W/34PGRBSW3", F("1234806360.1"))


def test_a_bad_host_leaves_the_memory_alone(tmp_path):
    state = tmp_path / "state.json"
    with pytest.raises(Exception):
        mint_repository_name("localhost", None, state_path=state, now=1287587646)
    assert not state.exists()


def test_default_state_path(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert (
        default_state_path("mtc-m18.sid.inpe.br", None)
        == tmp_path / "xdg/ibistatic/sid.inpe.br_mtc-m18.json"
    )
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert (
        default_state_path("150.163.34.243", None)
        == tmp_path / ".local/state/ibistatic/8JMKD3MGP8W.json"
    )


# --- many processes, one subsystem ----------------------------------------------------

PROCESSES, LABELS = 8, 200


def _mint_many(state: str) -> list[tuple[str, str]]:
    out = []
    for _ in range(LABELS):
        label, date = mint_repository_name(
            "mtc-m18.sid.inpe.br", None, state_path=state, granularity="0.001"
        )
        out.append((label, str(date.numerator) + "/" + str(date.denominator)))
    return out


@pytest.mark.slow
def test_concurrent_processes_never_share_a_label(tmp_path):
    state = str(tmp_path / "state.json")
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        results = pool.map(_mint_many, [state] * PROCESSES)
    labels = [label for result in results for label, _ in result]
    assert len(labels) == PROCESSES * LABELS
    assert len(set(labels)) == len(labels)
    latest = Fraction(0)
    for result in results:
        dates = [Fraction(date) for _, date in result]
        assert all(a < b for a, b in zip(dates, dates[1:]))  # each process: strictly later
        for label, date in zip((label for label, _ in result), dates):
            value = parse_repository_name(label)
            assert value.suffix == repository_suffix(date)
            assert suffix_seconds(value.suffix) == date
        latest = max(latest, dates[-1])
    assert TemporalDistributor(state).read() == latest


def test_the_state_file_keeps_its_mode(tmp_path):
    state = tmp_path / "state.json"
    distributor = TemporalDistributor(state, 1)
    distributor.next_date(1287587646, wait=False)
    assert state.stat().st_mode & 0o777 == 0o644
    state.chmod(0o664)  # shared by a group of minting users
    distributor.next_date(1287587700, wait=False)
    assert state.stat().st_mode & 0o777 == 0o664
