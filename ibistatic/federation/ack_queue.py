"""A bounded queue of acknowledgments to one Archive, sent by a few tasks.

Every redirect the resolver gives is acknowledged (Table 6.11), cached ones too, so at
full speed the acknowledgments outrun what an Archive answers.  They wait in a queue of
bounded size; when it is full a redirect waits for room (the client is slowed, not the
count) up to the time an Archive may take to answer, and past that wait the
acknowledgment is dropped and counted in :attr:`AckQueue.dropped` (memory never grows
with the backlog).  A fixed number of tasks send them over kept-alive connections.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

__all__ = ["AckQueue"]

log = logging.getLogger("ibistatic.resolver")


class AckQueue:
    """Acknowledgments waiting for one Archive: at most `size`, sent `senders` at a time
    by `send(pairs)` (which reports its own failures)."""

    def __init__(
        self, send: Callable[[list], Awaitable[None]], size: int, senders: int, wait: float
    ) -> None:
        self.send, self.size, self.senders, self.wait = send, size, senders, wait
        self.dropped = 0
        self._queue: asyncio.Queue | None = None
        self._tasks: list[asyncio.Task] = []

    async def offer(self, pairs: list) -> bool:
        """Queue `pairs`; False when the queue stayed full for `wait` seconds."""
        queue = self._started()
        try:
            queue.put_nowait(pairs)
            return True
        except asyncio.QueueFull:
            pass
        try:
            await asyncio.wait_for(queue.put(pairs), self.wait)
            return True
        except TimeoutError:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.warning("acknowledgments dropped for a full queue: %d", self.dropped)
            return False

    def _started(self) -> asyncio.Queue:
        if self._queue is None:  # made in the loop that uses it
            self._queue = asyncio.Queue(self.size)
            self._tasks = [asyncio.ensure_future(self._sender()) for _ in range(self.senders)]
        return self._queue

    async def _sender(self) -> None:
        queue = self._queue
        while True:
            pairs = await queue.get()
            try:
                await self.send(pairs)
            except Exception as error:  # one acknowledgment's failure is its own
                log.warning("acknowledgment not sent: %s", error)
            finally:
                queue.task_done()

    @property
    def waiting(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    async def drain(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the queued acknowledgments to be sent."""
        if self._queue is not None:
            try:
                await asyncio.wait_for(self._queue.join(), timeout)
            except TimeoutError:
                pass

    async def close(self, timeout: float = 1.0) -> None:
        await self.drain(timeout)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks, self._queue = [], None
