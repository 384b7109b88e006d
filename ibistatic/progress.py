"""Progress of long work, phase by phase: a tqdm bar on stderr when it is a terminal, and
the time each phase took (always measured, so that summaries can report it).

``phase(name, total)`` starts a phase (ending the one before), ``advance(count)`` /
``update(done)`` count its work, ``expect(count)`` adds to its total as it becomes known
(the crawl learns an Archive's size once it has listed its repositories), ``finish()`` ends
the last phase.  A phase shows its count, rate, elapsed time and, with a total, a bar and
the time left; a phase that counts nothing shows only its elapsed time, never a count
stuck at 0.  Nothing is drawn when the stream is not a terminal (CI, pipes, log files) or
with ``enabled=False`` (``--quiet``).
"""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from typing import TextIO

from tqdm import tqdm

__all__ = ["Progress", "format_times"]

#: what a phase shows while it has counted nothing and knows no total
UNCOUNTED = "{desc} [{elapsed}]"
#: a phase without a total: its count and rate
COUNTED = "{desc}: {n_fmt} {unit} [{elapsed}, {rate_fmt}]"
#: with a total: the bar, the count, elapsed < left and the rate (tqdm's own layout)
WITH_TOTAL = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"
)


class Progress:
    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.name = ""
        self.total: int | None = None
        self.done = 0
        #: seconds each finished phase took, in the order they ran
        self.times: dict[str, float] = {}
        self._started = 0.0
        self._bar: tqdm | None = None

    def phase(self, name: str, total: int | None = None, unit: str = "items") -> None:
        self._end_phase()
        self.name, self.total, self.done = name, total, 0
        self._started = time.monotonic()
        if self.enabled:
            self._bar = tqdm(
                total=total,
                desc=name,
                unit=unit,
                file=self.stream,
                mininterval=0.1,
                dynamic_ncols=True,
                bar_format=self._format(),
            )

    def expect(self, count: int) -> None:
        """`count` more units of work in this phase than its total said (None: 0)."""
        self.total = (self.total or 0) + count
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.bar_format = self._format()
            self._bar.refresh()

    def update(self, done: int) -> None:
        self.advance(done - self.done)

    def advance(self, count: int = 1) -> None:
        first = self.done == 0 and count > 0
        self.done += count
        if self._bar is not None:
            if first:
                self._bar.bar_format = self._format()
            self._bar.update(count)

    def finish(self) -> None:
        self._end_phase()

    def hidden(self):
        """A context in which to print lines of text to the stream: the bar is cleared
        first and drawn again below them, so a line never runs into it."""
        if self._bar is None:
            return nullcontext()
        return tqdm.external_write_mode(file=self.stream)

    def _format(self) -> str:
        if self.total:
            return WITH_TOTAL
        return COUNTED if self.done else UNCOUNTED

    def _end_phase(self) -> None:
        if not self.name:
            return
        self.times[self.name] = self.times.get(self.name, 0.0) + time.monotonic() - self._started
        if self._bar is not None:
            self._bar.bar_format = self._format()
            self._bar.close()  # draws the final state and ends the line
            self._bar = None
        self.name = ""


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def format_times(times: dict[str, float]) -> str:
    """``crawling archives 0.12 s, resolving and rendering 1.30 s`` (the order they ran)."""
    return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in times.items())
