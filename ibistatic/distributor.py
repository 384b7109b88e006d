"""The temporal distributor with its memory on disk (Algorithm 4 around
:func:`ibistatic.core.minting.distribute`).

``last-date-for-suffix`` is the memory of one identification subsystem.  It lives in a
small JSON state file that every minting process of the subsystem shares::

    {"format": "ibistatic-temporal-distributor/1",
     "last-date-for-suffix": "1287588117",
     "subsystem": "sid.inpe.br/mtc-m18"}

One request: take an exclusive ``fcntl.flock`` on ``<state>.lock`` (a separate file that
is never replaced or deleted, so every process locks the same inode), read the memory,
run Algorithm 4, write the new memory to a temporary file, fsync it, rename it over the
state file, fsync the directory, release the lock; only then WAIT if the algorithm says
so.  Concurrent processes therefore never hand out one label twice, and a crash leaves
either the old or the new memory, never a half-written one.

A caller that must do more under the lock before the label counts (a deposit puts its
repository in place) uses :meth:`TemporalDistributor.reserved`: the memory is written by
``commit()`` and restored, byte for byte, when the work after it fails, so a refused
request never moves the memory.  A crash after ``commit()`` leaves the memory moved on:
a label skipped, never one handed out twice.

Dates in the future are bounded (:data:`FUTURE_LIMIT`): a request dated more than that
ahead of the clock is refused, and so is waiting that long for a memory left ahead of the
clock, because every later request of the subsystem would have to wait until then.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from .core.ibip import as_seconds, ibip_prefix, ibip_suffix, seconds_text
from .core.minting import (
    Distribution,
    as_granularity,
    distribute,
    repository_prefix,
    repository_suffix,
    subsystem_name,
)
from .errors import IbistaticError, UsageError

__all__ = [
    "STATE_FORMAT",
    "DistributorStateError",
    "FUTURE_LIMIT",
    "Reservation",
    "TemporalDistributor",
    "check_not_future",
    "default_state_path",
    "mint_repository_name",
    "mint_ibip",
]

STATE_FORMAT = "ibistatic-temporal-distributor/1"
MEMORY_KEY = "last-date-for-suffix"
#: How far ahead of the clock (seconds) a requested date, or the memory, may be.
FUTURE_LIMIT = 60


class DistributorStateError(IbistaticError):
    """The state file cannot be read or written; minting stops rather than risk
    handing out a label twice."""


def default_state_path(host_or_ip: str, port: int | None) -> Path:
    """``$XDG_STATE_HOME/ibistatic/<subsystem>.json``, by default under ``~/.local/state``."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "ibistatic" / f"{subsystem_name(host_or_ip, port)}.json"


def _now() -> Fraction:
    return Fraction(time.time_ns(), 10**9)


def check_not_future(seconds: Fraction, what: str = "the current date") -> Fraction:
    """`seconds`, refused when more than FUTURE_LIMIT seconds ahead of the clock."""
    ahead = seconds - _now()
    if ahead > FUTURE_LIMIT:
        raise UsageError(
            f"{what} {seconds_text(seconds)} is {float(ahead):.0f} s ahead of the clock; at most "
            f"{FUTURE_LIMIT} s ahead is accepted (a date in the future makes every later request "
            "of the subsystem wait until then)"
        )
    return seconds


@dataclass
class Reservation:
    """One request being served under the distributor's lock (see
    :meth:`TemporalDistributor.reserved`)."""

    distributor: TemporalDistributor
    answer: Distribution
    committed: bool = False

    @property
    def date(self) -> Fraction:
        return self.answer.date_for_suffix

    def commit(self) -> None:
        """Write the new memory: from now on the label counts as handed out."""
        self.distributor._write(self.date)
        self.committed = True

    def wait(self) -> None:
        """WAIT as Algorithm 4 says (call it once the lock is released)."""
        if self.answer.delay > 0:
            time.sleep(float(self.answer.delay))


class TemporalDistributor:
    """Algorithm 4 for one identification subsystem, its memory kept in ``state_path``."""

    def __init__(
        self,
        state_path: str | Path,
        granularity: Fraction | str | int = 1,
        *,
        subsystem: str | None = None,
    ) -> None:
        self.state_path = Path(state_path).expanduser()
        self.lock_path = self.state_path.with_name(self.state_path.name + ".lock")
        self.granularity = as_granularity(granularity)
        self.subsystem = subsystem

    def read(self) -> Fraction | None:
        """The memory ``last-date-for-suffix``, None before the first label."""
        return self._memory(self._read_bytes())

    def _read_bytes(self) -> bytes | None:
        try:
            return self.state_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise self._error("cannot read", error) from None

    def _memory(self, raw: bytes | None) -> Fraction | None:
        if raw is None:
            return None
        try:
            state = json.loads(raw)
        except ValueError:
            state = None
        value = state.get(MEMORY_KEY) if isinstance(state, dict) else None
        if isinstance(value, str):
            try:
                return as_seconds(value, MEMORY_KEY)
            except UsageError:
                pass
        raise DistributorStateError(
            f"{self.state_path}: expected a JSON object with {MEMORY_KEY!r} holding POSIX "
            "seconds as a decimal string; refusing to mint without the memory"
        )

    def distribute(
        self, now: Fraction | str | int | None = None, *, wait: bool = True
    ) -> Distribution:
        """One request: the whole of Algorithm 4, memory included.

        ``now`` is the current date (POSIX seconds); None reads the clock once the lock
        is held, so time spent waiting for the lock is not counted as delay.
        """
        with self.reserved(now) as reservation:
            reservation.commit()
        if wait:
            reservation.wait()
        return reservation.answer

    @contextmanager
    def reserved(self, now: Fraction | str | int | None = None) -> Iterator[Reservation]:
        """Algorithm 4 under the lock, the new memory written only by ``commit()``.

        When the body raises after ``commit()``, the state file gets its old bytes back
        (it is still locked: nobody saw the new memory).  Waiting, when the caller wants
        it, comes after the block (:meth:`Reservation.wait`), with the lock released.
        """
        with self._locked():
            self._remove_temporaries()
            current = _now() if now is None else check_not_future(as_seconds(now, "current date"))
            previous = self._read_bytes()
            answer = distribute(current, self._memory(previous), self.granularity)
            if now is None and answer.delay > FUTURE_LIMIT:
                raise self._ahead(answer)
            reservation = Reservation(self, answer)
            try:
                yield reservation
            except BaseException:
                if reservation.committed:
                    self._restore(previous)
                raise

    def next_date(self, now: Fraction | str | int | None = None, *, wait: bool = True) -> Fraction:
        """The date t(i) for the next label (see :meth:`distribute`)."""
        return self.distribute(now, wait=wait).date_for_suffix

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            # flock needs no write access: any process that may read the lock can take it
            fd = os.open(self.lock_path, os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError as error:
            raise self._error("cannot lock", error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _ahead(self, answer: Distribution) -> DistributorStateError:
        return DistributorStateError(
            f"{self.state_path}: {MEMORY_KEY} is {float(answer.delay):.0f} s ahead of the clock (more than "
            f"{FUTURE_LIMIT} s): was the clock set back? Refusing to wait that long; minting resumes "
            "by itself once the clock passes that date"
        )

    def _remove_temporaries(self) -> None:
        """Temporary state files of writers killed before their rename (the lock is
        held, so no writer is alive)."""
        for leftover in self.state_path.parent.glob(f".{self.state_path.name}.*.tmp"):
            leftover.unlink(missing_ok=True)

    def _restore(self, previous: bytes | None) -> None:
        """Put the memory back as it was before a request whose work failed.  If even
        that fails, the memory stays moved on: a label skipped, which is safe."""
        try:
            if previous is None:
                self.state_path.unlink(missing_ok=True)
            else:
                self._replace(previous)
        except (OSError, DistributorStateError):
            pass

    def _write(self, date: Fraction) -> None:
        state = {"format": STATE_FORMAT, MEMORY_KEY: seconds_text(date)}
        if self.subsystem:
            state["subsystem"] = self.subsystem
        self._replace((json.dumps(state, indent=1) + "\n").encode("utf-8"))

    def _replace(self, data: bytes) -> None:
        """The state file's bytes replaced atomically and durably."""
        directory = self.state_path.parent
        try:
            fd, temporary = tempfile.mkstemp(
                dir=directory, prefix=f".{self.state_path.name}.", suffix=".tmp"
            )
        except OSError as error:
            raise self._error("cannot write", error) from None
        try:
            os.fchmod(fd, self._mode())  # mkstemp makes 0600: keep the file's sharing
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.state_path)
            _fsync_directory(directory)
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            raise self._error("cannot write", error) from None

    def _mode(self) -> int:
        try:
            return stat.S_IMODE(self.state_path.stat().st_mode)
        except FileNotFoundError:
            return 0o644

    def _error(self, doing: str, error: OSError) -> DistributorStateError:
        return DistributorStateError(
            f"{doing} the distributor state {self.state_path}: {error.strerror or error}"
        )


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def mint_repository_name(
    host: str,
    port: int | None,
    *,
    state_path: str | Path,
    granularity: Fraction | str | int = 1,
    now: Fraction | str | int | None = None,
    wait: bool | None = None,
) -> tuple[str, Fraction]:
    """A new repository name for the subsystem ``host`` and ``port``, and its date t(i).

    ``wait`` None waits only when ``now`` is None (a given ``now`` is not the clock).
    """
    prefix = repository_prefix(host, port)  # a bad host fails before the memory moves
    date = _next_date(prefix, state_path, granularity, now, wait)
    return f"{prefix}/{repository_suffix(date)}", date


def mint_ibip(
    ip: str,
    port: int | None,
    *,
    state_path: str | Path,
    granularity: Fraction | str | int = 1,
    now: Fraction | str | int | None = None,
    wait: bool | None = None,
) -> tuple[str, Fraction]:
    """A new IBIp for the subsystem ``ip`` and ``port``, and its date t(i)."""
    prefix = ibip_prefix(ip, port)
    date = _next_date(prefix, state_path, granularity, now, wait)
    return f"{prefix}/{ibip_suffix(date)}", date


def _next_date(subsystem: str, state_path, granularity, now, wait: bool | None) -> Fraction:
    """The distributor's next date for `subsystem`; waits (by default) only on the clock."""
    distributor = TemporalDistributor(state_path, granularity, subsystem=subsystem)
    return distributor.next_date(now, wait=now is None if wait is None else wait)
