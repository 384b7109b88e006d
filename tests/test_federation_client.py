"""The resolver's HTTP client: keep-alive reuse, a server that closed a kept connection,
chunked answers, limits, timeouts and things that are not HTTP answers."""

from __future__ import annotations

import asyncio
import time

import pytest

from ibistatic.federation.http_client import HttpClient


class Server:
    """A loopback TCP server answering each request with `reply(request_number)`."""

    def __init__(self, reply) -> None:
        self.reply = reply
        self.connections = 0
        self.requests = 0

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _handle(self, reader, writer) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                answer = self.reply(self.requests, head)
                if answer is None:
                    await asyncio.sleep(10)  # never answers
                writer.write(answer)
                await writer.drain()
                if b"connection: close" in answer.lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def ok(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


def run(coroutine):
    return asyncio.run(coroutine)


def test_connections_are_kept_and_reused():
    async def main():
        async with Server(lambda n, head: ok(b"answer %d" % n)) as server:
            client = HttpClient(timeout=2)
            answers = [await client.get(f"http://127.0.0.1:{server.port}/x?a=1") for _ in range(5)]
            await client.close()
            return answers, server.connections

    answers, connections = run(main())
    assert answers == [(200, b"answer %d" % n) for n in range(1, 6)]
    assert connections == 1


def test_the_request_line_and_host():
    seen = []

    def reply(n, head):
        seen.append(head)
        return ok(b"")

    async def main():
        async with Server(reply) as server:
            await HttpClient().get(f"http://127.0.0.1:{server.port}/a/b?c=%20d")
            return server.port

    port = run(main())
    assert seen == [f"GET /a/b?c=%20d HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()]


def test_a_connection_the_server_closed_is_replaced():
    async def main():
        async with Server(lambda n, head: ok(b"x", b"Connection: close\r\n")) as server:
            client = HttpClient(timeout=2)
            first = await client.get(f"http://127.0.0.1:{server.port}/")
            second = await client.get(f"http://127.0.0.1:{server.port}/")
            return first, second, server.connections

    assert run(main()) == ((200, b"x"), (200, b"x"), 2)


def test_a_chunked_answer():
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    )

    async def main():
        async with Server(lambda n, head: chunked) as server:
            return await HttpClient().get(f"http://127.0.0.1:{server.port}/")

    assert run(main()) == (200, b"abcde")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP answer"),
        (ok(b"x" * 5000), "an answer over 1000 bytes"),
        (None, "no answer within 0.3 s"),
    ],
)
def test_failures_are_oserrors_with_a_reason(reply, message):
    async def main():
        async with Server(lambda n, head: reply) as server:
            client = HttpClient(timeout=0.3, limit=1000)
            started = time.monotonic()
            with pytest.raises(OSError) as caught:
                await client.get(f"http://127.0.0.1:{server.port}/")
            return str(caught.value), time.monotonic() - started

    text, elapsed = run(main())
    assert message in text
    assert elapsed < 1.0


def test_only_http_urls():
    with pytest.raises(OSError, match="not an http:// URL"):
        run(HttpClient().get("https://example.org/"))
