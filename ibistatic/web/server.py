"""The built-in server: uvicorn (httptools; uvloop when installed) running the ASGI app.

uvicorn drops an idle keep-alive connection, but it has no limit on the time a client
takes to send a request's head: a client that connects and says nothing, or sends a
byte now and then (slowloris), would hold its connection forever.  :class:`GuardedProtocol`
adds what is missing, per connection, so a stalled client costs the others nothing:

- a deadline for each request head (from the connection, or from its first byte, to the
  end of its headers): past it the connection is closed;
- limits on the request line, the bytes of a head and the number of header fields: past
  them the client gets ``414``/``431`` (``text/plain``, a message) and the connection closes;
- a limit on the connections one client address holds at once (an IPv6 client: its /64,
  which one subscriber may fill with addresses at will): past it a new connection gets
  ``503`` and is closed, so that one client's thousands of idle connections never fill
  the server's own limit (``max_connections``) and lock everyone else out;
- a deadline for an answer that a client does not read (a full send buffer that does
  not drain): past it the connection is dropped, and with it the answer it held.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import sys
from collections.abc import Callable

from uvicorn import Config, Server
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from .limits import Limits, client_key

__all__ = [
    "Limits",
    "run_server",
    "bind_socket",
    "GuardedProtocol",
    "ServerHandle",
    "CollectorPacing",
    "client_key",
]


#: the interpreter's switch interval in a serving process (sys.setswitchinterval)
LOCK_SWITCH_SECONDS = 0.001


class _Rejected(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with deadlines and size limits on request heads, a
    deadline on unread answers, and a limit on each client's connections."""

    limits = Limits()
    #: client address -> connections it holds now (one table per server, per process)
    clients: dict[str, int] = {}

    def connection_made(self, transport) -> None:
        self._head_bytes = 0
        self._tail = b""  # the last bytes received: a head's blank line may span two reads
        self._head_timer = None
        self._send_timer = None
        self._client_key: str | None = None
        self._rejection: _Rejected | None = None
        super().connection_made(transport)
        limit = self.limits.max_client_connections
        key = client_key(transport.get_extra_info("peername"))
        if limit is not None and key is not None:
            held = self.clients.get(key, 0)
            if held >= limit:
                self._reject(_Rejected(503, f"more than {limit} connections at once from {key}"))
                return
            self.clients[key] = held + 1
            self._client_key = key
        self._arm_head_timer()

    def connection_lost(self, exc) -> None:
        self._cancel_head_timer()
        self._cancel_send_timer()
        key, self._client_key = self._client_key, None
        if key is not None:
            held = self.clients.get(key, 1) - 1
            if held > 0:
                self.clients[key] = held
            else:
                self.clients.pop(key, None)
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self.limits.send_timeout, self._send_too_slow)

    def resume_writing(self) -> None:
        self._cancel_send_timer()
        super().resume_writing()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is not None:  # a head is coming: counted before it is parsed
            self._head_bytes += self._head_part(data)
            if self._head_bytes > self.limits.max_head_bytes:
                limit = self.limits.max_head_bytes
                self._reject(_Rejected(431, f"request head larger than {limit} bytes"))
                return
        self._tail = data[-3:] if len(data) >= 3 else (self._tail + data)[-3:]
        super().data_received(data)

    def _head_part(self, data: bytes) -> int:
        """How much of `data` belongs to the head in progress: up to the blank line that
        ends it.  What follows is pipelined requests, each head counted from its own
        first full chunk (so a head may take one read more than the limit in memory)."""
        end = (self._tail + data[:3]).find(b"\r\n\r\n")
        if end >= 0:
            return max(0, end + 4 - len(self._tail))
        end = data.find(b"\r\n\r\n")
        return len(data) if end < 0 else end + 4

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_count = 0
        if self._head_timer is None:
            self._arm_head_timer()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > self.limits.max_request_line:
            limit = self.limits.max_request_line
            raise _Rejected(414, f"request target longer than {limit} bytes")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            raise _Rejected(431, f"more than {self.limits.max_headers} header fields")
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._cancel_head_timer()
        self._head_bytes = 0
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request httptools cannot parse: ours names the reason
        (the parser's own words) or the limit a callback raised."""
        cause, reason = _parser_failure()
        if cause is not None:
            self._reject(cause)
            return
        self._reject(_Rejected(400, f"malformed request: {reason or msg.rstrip('.')}"))

    def _reject(self, rejection: _Rejected) -> None:
        self._cancel_head_timer()
        if self.transport.is_closing():
            return
        body = (str(rejection) + "\n").encode("ascii", "replace")
        self.transport.write(
            b"".join(
                [
                    STATUS_LINE[rejection.status],
                    b"content-type: text/plain; charset=utf-8\r\n",
                    b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                    b"connection: close\r\n\r\n",
                    body,
                ]
            )
        )
        self.transport.close()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.limits.head_timeout, self._head_too_slow)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()  # no answer: the client is not listening anyway

    def _cancel_send_timer(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_too_slow(self) -> None:
        # Dropped, not closed: close() would wait for the unread answer to drain first.
        self._send_timer = None
        self.transport.abort()


def _parser_failure() -> tuple[_Rejected | None, str]:
    """The limit a parser callback raised (httptools wraps it), or the parser's message
    on the error being handled."""
    error = sys.exc_info()[1]
    reason = str(error).strip().rstrip(".") if error is not None else ""
    while error is not None:
        if isinstance(error, _Rejected):
            return error, ""
        error = error.__cause__ or error.__context__
    return None, reason


def guarded_protocol(limits: Limits) -> type[GuardedProtocol]:
    return type("GuardedProtocol", (GuardedProtocol,), {"limits": limits, "clients": {}})


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host`:`port` (0: a free port), IPv6 when `host` is."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class _Server(Server):
    """uvicorn's server that says when it listens and lets a hook run before it stops,
    and that exits with 0 on SIGTERM/SIGINT (uvicorn re-raises the signal)."""

    def __init__(self, config, on_started, on_stopping, address) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._on_stopping = on_stopping
        self._address = address
        self._pacing: CollectorPacing | None = None

    async def startup(self, sockets=None) -> None:
        # What was made before serving (modules, the app) lives as long as the server:
        # out of the garbage collector's passes, which then walk only what requests make.
        gc.freeze()
        # While the thread that reads long request targets (web/asgi.py) runs, the event
        # loop waits this long at most for the interpreter's lock before each step of the
        # other answers (Python's default is 5 ms, and an answer takes several steps).
        # With one thread alone nothing changes: the lock is never contended.
        sys.setswitchinterval(LOCK_SWITCH_SECONDS)
        self._pacing = CollectorPacing(asyncio.get_running_loop())
        self._pacing.start()
        await super().startup(sockets)
        if not self.should_exit and self._on_started is not None:
            self._on_started(*self._address)

    async def shutdown(self, sockets=None) -> None:
        if self._pacing is not None:
            self._pacing.stop()
        if self._on_stopping is not None:
            # In a thread: the loop goes on answering (a resolver may call back) meanwhile.
            await asyncio.get_running_loop().run_in_executor(None, self._on_stopping)
        await super().shutdown(sockets)

    def handle_exit(self, sig, frame) -> None:
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True


class CollectorPacing:
    """Keeps the garbage collector's full passes out of the answers.

    The caches hold a few hundred thousand small objects (items, resolutions); a full
    collection walks them all, and the interpreter starts one whenever a quarter more
    objects have survived since the last: every few seconds under load, each pause
    delaying every request in flight (the slowest answers, wrk's p99, several times
    slower).  So every `freeze_every` seconds what has survived is frozen
    (``gc.freeze``: out of every pass; freed by reference counting when evicted, since
    cached values hold no cycles), and every `full_every` seconds it is all given back
    to one full collection, which frees any cyclic garbage frozen meanwhile (a closed
    connection's objects): one pause per `full_every`, memory bounded."""

    def __init__(self, loop, freeze_every: float = 1.0, full_every: float = 600.0) -> None:
        self.loop = loop
        self.freeze_every = freeze_every
        self.full_every = full_every
        self._next_full = loop.time() + full_every
        self._handle = None

    def start(self) -> None:
        self._handle = self.loop.call_later(self.freeze_every, self._tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        if self.loop.time() >= self._next_full:
            gc.unfreeze()
            gc.collect()
            self._next_full = self.loop.time() + self.full_every
        gc.freeze()
        self.start()


class ServerHandle:
    """A server made but not yet running: its address, and a way to run and stop it."""

    def __init__(self, app, sock: socket.socket, server: _Server) -> None:
        self.app = app
        self.socket = sock
        self.server = server
        self.server_address = sock.getsockname()[:2]

    def serve_forever(self) -> None:
        self.server.run(sockets=[self.socket])

    def shutdown(self) -> None:
        self.server.should_exit = True

    def server_close(self) -> None:
        self.socket.close()


def make_server_handle(
    app,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    on_started: Callable[[str, int], None] | None = None,
    on_stopping: Callable[[], None] | None = None,
    limits: Limits = Limits(),
    access_log: bool = False,
) -> ServerHandle:
    """A server for `app` (an :class:`ArchiveApp`) listening on `host`:`port` now."""
    sock = bind_socket(host, port)
    address = sock.getsockname()[:2]
    server = _Server(server_config(app, limits, access_log), on_started, on_stopping, address)
    return ServerHandle(app, sock, server)


def server_config(app, limits: Limits, access_log: bool) -> Config:
    """uvicorn's settings for `app`: the guarded protocol and the limits."""
    from .asgi import AsgiApp

    return Config(
        AsgiApp(app) if hasattr(app, "respond") else app,  # or an ASGI app (the resolver)
        http=guarded_protocol(limits),
        loop="auto",
        # the resolver sends what it has queued (acknowledgments) once its requests end
        lifespan="off" if hasattr(app, "respond") else "on",
        access_log=access_log,
        log_level="info" if access_log else "warning",
        timeout_keep_alive=limits.keep_alive,
        limit_concurrency=limits.max_connections,
        server_header=False,
        date_header=True,
        timeout_graceful_shutdown=5,
    )


def run_server(
    app,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    on_started: Callable[[str, int], None] | None = None,
    on_stopping: Callable[[], None] | None = None,
    limits: Limits = Limits(),
    access_log: bool = False,
    workers: int = 1,
) -> None:
    """Serve `app` on `host`:`port` (0: a free port) until SIGTERM or SIGINT.

    `on_started(host, port)` runs once the server listens (with the real port);
    `on_stopping()` runs on SIGTERM/SIGINT, while the server still answers, before it
    shuts down (what a joined Archive sends its exclusionRequest from).  `workers` > 1
    forks that many processes answering on the one socket (web/workers.py)."""
    if workers > 1:
        from .workers import run_workers

        sock = bind_socket(host, port)
        try:
            run_workers(
                lambda: _Server(server_config(app, limits, access_log), None, None, None),
                sock,
                workers,
                on_started=on_started,
                on_stopping=on_stopping,
            )
        finally:
            sock.close()
        return
    handle = make_server_handle(
        app,
        host,
        port,
        on_started=on_started,
        on_stopping=on_stopping,
        limits=limits,
        access_log=access_log,
    )
    try:
        handle.serve_forever()
    finally:
        handle.server_close()
