"""Several processes answering on one listening socket (``ibistatic serve --workers N``).

One process answers on one core.  The parent binds the socket, forks `count` workers
that each run the server on it (the kernel spreads the connections), and then only
waits: for SIGTERM or SIGINT, on which it runs `on_stopping` while the workers still
answer, then stops them (each finishes the answers in progress) and returns; and for a
worker that died, which it replaces (at most one a second, so a worker that cannot start
does not make it spin).  Linux and other systems with ``fork`` only.

A parent that dies without a word (SIGKILL, the OOM killer) takes its workers with it:
each worker holds the read end of a pipe whose write end only the parent holds, and a
thread of the worker that reads it meets the end of the file when the parent is gone,
however it went.  The worker then stops as on SIGTERM (the answers in progress are
finished), or is ended :data:`ORPHAN_GRACE` seconds later.  Without this, orphaned
workers would go on answering from a stale index and hold the port, so that the next
``serve`` could not listen on it.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable

__all__ = ["run_workers"]

_STOP = {signal.SIGTERM, signal.SIGINT}
_WATCHED = _STOP | {signal.SIGCHLD}
#: seconds an orphaned worker has to stop by itself (uvicorn gives answers in progress 5)
ORPHAN_GRACE = 8.0


def run_workers(
    make_server: Callable[[], object],
    sock: socket.socket,
    count: int,
    *,
    on_started: Callable[[str, int], None] | None = None,
    on_stopping: Callable[[], None] | None = None,
) -> None:
    """Run `count` workers, each serving ``make_server()`` on `sock`, until a signal."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    workers: set[int] = set()
    lifeline = os.pipe()  # (read, write): the workers see the end of it when we are gone
    try:
        for _ in range(count):
            workers.add(_fork(make_server, sock, lifeline))
        if on_started is not None:
            on_started(*sock.getsockname()[:2])
        _supervise(make_server, sock, workers, lifeline)
        if on_stopping is not None:
            on_stopping()
    finally:
        for pid in workers:
            _signal(pid, signal.SIGTERM)
        for pid in workers:
            _wait(pid)
        for end in lifeline:
            os.close(end)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)


def _supervise(make_server, sock: socket.socket, workers: set[int], lifeline) -> None:
    """Wait for a stopping signal, replacing the workers that die meanwhile."""
    last_start = 0.0
    while True:
        if signal.sigwait(_WATCHED) in _STOP:
            return
        for pid in _reaped(workers):
            workers.discard(pid)
            time.sleep(max(0.0, last_start + 1.0 - time.monotonic()))
            last_start = time.monotonic()
            workers.add(_fork(make_server, sock, lifeline))


def _reaped(workers: set[int]) -> list[int]:
    gone = []
    for pid in list(workers):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            gone.append(pid)
    return gone


def _fork(make_server, sock: socket.socket, lifeline: tuple[int, int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.close(lifeline[1])  # only the parent may hold the write end
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
        threading.Thread(
            target=_stop_when_orphaned, args=(lifeline[0],), name="lifeline", daemon=True
        ).start()
        make_server().run(sockets=[sock])
        code = 0
    finally:
        os._exit(code)


def _stop_when_orphaned(read_end: int) -> None:
    """In a worker: wait for the parent to be gone, then stop the worker."""
    try:
        while os.read(read_end, 1):
            pass  # nothing is ever written; only the end of the file matters
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)  # the server's own graceful stop
    time.sleep(ORPHAN_GRACE)
    os._exit(1)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _wait(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
