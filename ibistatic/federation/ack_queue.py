"""Acknowledgments to one Archive, gathered into batches sent by one task.

Every redirect the resolver gives is acknowledged (Table 6.11), cached ones too, so an
acknowledgment per HTTP request would cost more than the redirect itself, at both ends.
A redirect only queues its acknowledgment, one line already as it is sent
(:meth:`AckBatches.offer`, never awaited: the client is not slowed; nothing else is
made per redirect); one task per Archive sends what is queued as one
request per batch, once :attr:`AckBatches.batch` are waiting or :attr:`AckBatches.interval`
seconds after the first of them, one batch at a time.  The queue is bounded by bytes:
when an Archive does not keep up, what does not fit is dropped and counted in
:attr:`AckBatches.dropped` (logged now and then), and memory never grows with the
backlog.  :meth:`AckBatches.drain` sends what is waiting without waiting for a batch to
fill (at shutdown, and for tests that read the counts).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

__all__ = ["AckBatches"]

log = logging.getLogger("ibistatic.resolver")

#: what a line costs the queue besides its characters (the str object, its deque slot)
LINE_BYTES = 64


class AckBatches:
    """Lines waiting for one Archive, at most `size` bytes (each its length and
    :data:`LINE_BYTES`), given to `deliver(lines)` at most `batch` at a time, `interval`
    seconds after the first."""

    def __init__(
        self,
        deliver: Callable[[list], Awaitable[None]],
        *,
        size: int,
        batch: int,
        interval: float,
        name: str = "",
    ) -> None:
        self.deliver, self.size, self.batch, self.interval = deliver, size, batch, interval
        self.name = name
        self.dropped = 0  # lines that did not fit, or whose batch was lost
        self._pending: deque[str] = deque()
        self._bytes = 0
        self._wake: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._hurry = False

    def offer(self, line: str) -> bool:
        """Queue `line`; False when it does not fit (then it is dropped)."""
        size = len(line) + LINE_BYTES
        if self._bytes + size > self.size:
            self.lost(1, "the queue is full")
            return False
        if self._task is None:
            self._start()
        pending = self._pending
        pending.append(line)
        self._bytes += size
        if len(pending) == 1 or len(pending) == self.batch:  # the sender waits for these
            self._idle.clear()
            self._wake.set()
        return True

    def lost(self, count: int, why: str) -> None:
        """Count `count` acknowledgments that will not be sent; log now and then."""
        before, self.dropped = self.dropped, self.dropped + count
        if before == 0 or before // 1000 != self.dropped // 1000:
            log.warning(
                "Archive %s: %d acknowledgments dropped so far (%s)", self.name, self.dropped, why
            )

    @property
    def waiting(self) -> int:
        return len(self._pending)

    def _start(self) -> None:
        """The sender's task and events, made in the loop that uses them (once)."""
        self._wake, self._idle = asyncio.Event(), asyncio.Event()
        self._task = asyncio.ensure_future(self._send_forever())

    async def _send_forever(self) -> None:
        while True:
            if not self._pending:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
            if len(self._pending) < self.batch and not self._hurry:
                await self._more(self.interval)
            await self._send(self._take())

    async def _more(self, seconds: float) -> None:
        """Wait until a batch is full (or a drain asks), at most `seconds`."""
        self._wake.clear()
        try:
            await asyncio.wait_for(self._wake.wait(), seconds)
        except TimeoutError:
            pass

    def _take(self) -> list[str]:
        lines = [self._pending.popleft() for _ in range(min(self.batch, len(self._pending)))]
        self._bytes -= sum(map(len, lines)) + LINE_BYTES * len(lines)
        return lines

    async def _send(self, lines: list[str]) -> None:
        try:
            await self.deliver(lines)
        except Exception as error:  # a batch's failure is its own
            self.lost(len(lines), f"not sent: {error!r}"[:200])

    async def drain(self, timeout: float) -> None:
        """Send what is waiting now, without waiting for full batches; give up after
        `timeout` seconds."""
        if self._task is None:
            return
        self._hurry = True
        self._wake.set()
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            self._hurry = False

    async def close(self, timeout: float = 1.0) -> None:
        await self.drain(timeout)
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._pending:
            self.lost(len(self._pending), "the resolver stopped")
        self._task, self._pending, self._bytes = None, deque(), 0
