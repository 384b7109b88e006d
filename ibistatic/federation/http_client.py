"""A small HTTP/1.1 client for the resolver's fan-out: pooled keep-alive connections,
one timeout per request, answers parsed by httptools (the parser the server runs on).

Measured against aiohttp's client for the same fan-out (5 Archives, loopback): about a
third of the CPU per request, which is most of the resolver's own work.  It does only
what the protocol needs: ``GET`` of ``http://`` URLs (and the ``POST`` of a batch of
acknowledgments), a bounded answer, no redirects.

A peer may be hostile: the answer read is bounded as a whole (head and body: httptools
would otherwise gather an endless header line in memory), and the timeout covers the
whole exchange, so a peer that drips a byte at a time costs at most the timeout.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httptools

__all__ = ["HttpClient"]


#: the most bytes of an answer's head (status line and headers) read from a peer
HEAD_LIMIT = 16 * 1024


class _Connection(asyncio.Protocol):
    """One kept-alive connection: one request at a time."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future | None = None
        self.body: list[bytes] = []
        self.size = 0
        self.received = 0
        self.closed = False
        self.reusable = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        self.closed = True
        self._fail(OSError("the connection was closed before the answer ended"))

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        if self.received > self.limit + HEAD_LIMIT:
            self._fail(OSError(f"an answer over {self.limit} bytes"))
            self.transport.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(OSError(f"not an HTTP answer ({error})"))
            self.transport.close()

    # httptools callbacks
    def on_body(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            self._fail(OSError(f"an answer over {self.limit} bytes"))
            self.transport.close()
            return
        self.body.append(data)

    def on_message_complete(self) -> None:
        self.reusable = self.parser.should_keep_alive()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((self.parser.get_status_code(), b"".join(self.body)))

    def _fail(self, error: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(error)

    def send(self, request: bytes) -> asyncio.Future:
        self.body, self.size, self.received, self.reusable = [], 0, 0, False
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.waiter


class HttpClient:
    """Requests with a per-request `timeout` (seconds), connections kept per host."""

    def __init__(
        self, timeout: float = 2.0, limit: int = 1 << 20, idle: int = 64, via: str = ""
    ) -> None:
        self.timeout, self.limit, self.idle = timeout, limit, idle
        # a Via header (RFC 9110 §7.6.3) names the sender: a request that comes back is a loop
        self._via = f"Via: 1.1 {via}\r\n" if via else ""
        self._pools: dict[tuple[str, int], list[_Connection]] = {}

    async def get(self, url: str, timeout: float | None = None) -> tuple[int, bytes]:
        """(status, body); raises OSError (also for a timeout: `timeout` seconds, or the
        client's when None)."""
        return await self.request("GET", url, None, timeout)

    async def request(
        self, method: str, url: str, body: bytes | None = None, timeout: float | None = None
    ) -> tuple[int, bytes]:
        """(status, body) of `method` `url` with `body` (``text/plain``, when given)."""
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise OSError(f"not an http:// URL: {url[:100]!r}")
        host, port = parts.hostname, parts.port or 80
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        head = f"{method} {target} HTTP/1.1\r\nHost: {parts.netloc}\r\n{self._via}"
        if body is not None:
            head += f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
        request = (head + "\r\n").encode("latin-1") + (body or b"")
        seconds = self.timeout if timeout is None else min(timeout, self.timeout)
        try:
            async with asyncio.timeout(seconds):
                return await self._exchange((host, port), request)
        except TimeoutError:
            raise OSError(f"no answer within {seconds:g} s") from None

    async def _exchange(self, key: tuple[str, int], request: bytes) -> tuple[int, bytes]:
        pool = self._pools.setdefault(key, [])
        while pool:  # a kept connection, unless the server closed it meanwhile
            connection = pool.pop()
            if connection.closed:
                continue
            try:
                return await self._send(connection, pool, request)
            except OSError:
                if connection.received:  # it had begun to answer: a real failure
                    raise
        connection = await self._connect(key)
        return await self._send(connection, pool, request)

    async def _send(self, connection: _Connection, pool: list, request: bytes):
        try:
            answer = await connection.send(request)
        except BaseException:
            connection.transport.close()
            raise
        if connection.reusable and not connection.closed and len(pool) < self.idle:
            pool.append(connection)
        else:
            connection.transport.close()
        return answer

    async def _connect(self, key: tuple[str, int]) -> _Connection:
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(lambda: _Connection(self.limit), *key)
        return connection

    async def close(self) -> None:
        for pool in self._pools.values():
            for connection in pool:
                connection.transport.close()
        self._pools.clear()
