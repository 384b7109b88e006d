"""The Archive server as an ASGI application (uvicorn, hypercorn, gunicorn's uvicorn worker).

>>> from ibistatic.web.asgi import asgi_app
>>> application = asgi_app("site")          # a built site

or, with the site named by ``IBISTATIC_SITE``, for a server's command line::

    IBISTATIC_SITE=/srv/site uvicorn --factory ibistatic.web.asgi:from_environment

Only carries bytes: every answer is :meth:`ArchiveApp.respond`'s.  An answer is
quick, and is given on the event loop; a request with a long target (more than
:data:`INLINE_TARGET_BYTES`) is answered on a thread instead (:class:`TakingTurns`),
because reading a persistent URL costs time in proportion to its length (linear, but at
the 8 KiB a request line may hold, many answers' worth), which the other connections do
not wait for.  A ``POST`` to the Archive service (a batch of acknowledgments from a resolver,
docs/protocol.md) is read up to :data:`~ibistatic.web.service.ACK_BATCH_BYTES`
within :data:`BODY_SECONDS` and answered on that thread too (it counts up to a thousand
acknowledgments); any other ``POST`` is answered ``405`` unread.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from pathlib import Path
from urllib.parse import quote

from .app import ArchiveApp
from .limits import client_key
from .messages import text_response
from .service import ACK_BATCH_BYTES
from .static import FileBody

__all__ = ["AsgiApp", "asgi_app", "from_environment"]

#: what a path keeps unescaped when a server gives no raw_path (the persistent URL marks)
_PATH_SAFE = "/!$&'()*+,;=:@~"
#: request targets (path and query, bytes) up to this long are answered on the event loop
INLINE_TARGET_BYTES = 512
#: the most seconds a client may take to send the body of a POST
BODY_SECONDS = 10.0


class AsgiApp:
    def __init__(self, app: ArchiveApp) -> None:
        self.app = app
        self.long_targets = TakingTurns()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # websockets: nothing here speaks them
        body = await _service_body(scope, receive) if scope["method"] == "POST" else None
        if isinstance(body, tuple):
            response = text_response(*body)
        elif body is not None or _target_bytes(scope) > INLINE_TARGET_BYTES:
            client = scope.get("client")
            key = client_key(tuple(client)) if client else None
            response = await self.long_targets.run(key, self.respond, scope, body)
        else:
            response = self.respond(scope)
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [
                    (name.encode("latin-1"), value.encode("latin-1"))
                    for name, value in response.headers
                ],
            }
        )
        if isinstance(response.body, FileBody):
            for chunk in response.body.chunks():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        else:
            await send({"type": "http.response.body", "body": response.body})

    def respond(self, scope, body: bytes | None = None):
        try:
            target = request_target(scope)
        except UnicodeDecodeError as error:
            return text_response(
                400, f"bad request: byte {error.object[error.start]:#04x} in the request target\n"
            )
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        client = scope.get("client")
        ip = client[0] if client else None
        return self.app.respond(scope["method"], target, headers, ip, body)


async def _service_body(scope, receive) -> bytes | tuple[int, str] | None:
    """The body of a POST to an Archive service (None for any other POST: not read), or
    (status, message) when it is too long or too slow to come."""
    if b"servicesubject=" not in scope.get("query_string", b""):
        return None
    chunks, size = [], 0
    try:
        async with asyncio.timeout(BODY_SECONDS):
            while True:
                message = await receive()
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > ACK_BATCH_BYTES:
                    return 413, f"a body over {ACK_BATCH_BYTES} bytes\n"
                chunks.append(chunk)
                if message["type"] != "http.request" or not message.get("more_body"):
                    break
    except TimeoutError:
        return 408, f"the body did not come within {BODY_SECONDS:g} s\n"
    return b"".join(chunks)


class TakingTurns:
    """One thread that runs calls for the event loop, taking their clients in turn: a
    client that sends many long requests waits behind its own, and every other client
    behind at most one of them.

    One thread, not a pool: the calls share a core with the event loop, and each more
    thread is one more that the loop waits behind for the interpreter's lock (with two,
    the answers on the loop were slower under a flood of long targets)."""

    def __init__(self) -> None:
        self._queues: dict[object, deque] = {}  # client -> its calls; in turn order
        self._ready = threading.Condition()
        self._pid = 0  # of the process whose thread runs: threads do not survive a fork

    def run(self, client, call, *args) -> asyncio.Future:
        """`call(*args)` on the thread, in `client`'s turn; its result, awaitable."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._ready:
            if self._pid != os.getpid():
                self._pid, self._queues = os.getpid(), {}
                threading.Thread(target=self._work, name="ibistatic-turns", daemon=True).start()
            self._queues.setdefault(client, deque()).append((loop, future, call, args))
            self._ready.notify()
        return future

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queues:
                    self._ready.wait()
                client = next(iter(self._queues))
                queue = self._queues.pop(client)
                loop, future, call, args = queue.popleft()
                if queue:
                    self._queues[client] = queue  # to the back of the line
            if future.cancelled():  # the client hung up meanwhile
                continue
            try:
                outcome = (future.set_result, call(*args))
            except BaseException as error:  # given to the request, as on the loop
                outcome = (future.set_exception, error)
            loop.call_soon_threadsafe(_settle, future, *outcome)


def _settle(future: asyncio.Future, setter, value) -> None:
    if not future.cancelled():
        setter(value)


def _target_bytes(scope) -> int:
    path = scope.get("raw_path")
    return len(path if path is not None else scope["path"]) + len(scope.get("query_string", b""))


def request_target(scope) -> str:
    """The request target as the client sent it (the raw path and the query)."""
    raw = scope.get("raw_path")
    root = scope.get("root_path", "")
    if raw is not None:
        path = raw.decode("ascii")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
    else:
        path = quote(scope["path"], safe=_PATH_SAFE)
    query = scope.get("query_string", b"")
    return path + ("?" + query.decode("ascii") if query else "")


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def asgi_app(site: Path | str, **options) -> AsgiApp:
    """An ASGI application answering from the built `site` (options: ArchiveApp's)."""
    return AsgiApp(ArchiveApp(site, **options))


def from_environment() -> AsgiApp:
    """The application for the site named by ``IBISTATIC_SITE`` (for ``--factory``)."""
    return asgi_app(site_from_environment())


def site_from_environment() -> str:
    site = os.environ.get("IBISTATIC_SITE")
    if not site:
        from ..errors import IbistaticError

        raise IbistaticError(
            "IBISTATIC_SITE is not set: name the built site to serve, e.g. IBISTATIC_SITE=/srv/site"
        )
    return site
