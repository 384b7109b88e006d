"""A progress bar for long work, drawn on stderr only when it is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``phase(name, total)``, then ``update(done)`` as work goes; ``finish()`` at the end.

    Draws at most ten times a second; silent when the stream is not a terminal (CI,
    pipes, log files), so output stays clean there.
    """

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.name = ""
        self.total: int | None = None
        self.done = 0
        self._drawn = 0.0

    def phase(self, name: str, total: int | None = None) -> None:
        self._end_line()
        self.name, self.total, self.done = name, total, 0
        self._draw(force=True)

    def update(self, done: int) -> None:
        self.done = done
        self._draw()

    def advance(self, count: int = 1) -> None:
        self.update(self.done + count)

    def finish(self) -> None:
        self._draw(force=True)
        self._end_line()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled or not self.name:
            return
        now = time.monotonic()
        if not force and now - self._drawn < 0.1:
            return
        self._drawn = now
        if self.total:
            filled = int(self.WIDTH * min(self.done, self.total) / self.total)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            text = f"\r{self.name:<24} [{bar}] {self.done:,}/{self.total:,}"
        else:
            text = f"\r{self.name:<24} {self.done:,}"
        self.stream.write(text)
        self.stream.flush()

    def _end_line(self) -> None:
        if self.enabled and self.name:
            self.stream.write("\n")
            self.stream.flush()
            self.name = ""
