"""Several processes answering on one listening socket (``ibistatic serve --workers N``).

One process answers on one core.  The parent binds the socket, forks `count` workers
that each run the server on it (the kernel spreads the connections), and then only
waits: for SIGTERM or SIGINT, on which it runs `on_stopping` while the workers still
answer, then stops them (each finishes the answers in progress) and returns; and for a
worker that died, which it replaces (at most one a second, so a worker that cannot start
does not make it spin).  Linux and other systems with ``fork`` only.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable

__all__ = ["run_workers"]

_STOP = {signal.SIGTERM, signal.SIGINT}
_WATCHED = _STOP | {signal.SIGCHLD}


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
    try:
        for _ in range(count):
            workers.add(_fork(make_server, sock))
        if on_started is not None:
            on_started(*sock.getsockname()[:2])
        _supervise(make_server, sock, workers)
        if on_stopping is not None:
            on_stopping()
    finally:
        for pid in workers:
            _signal(pid, signal.SIGTERM)
        for pid in workers:
            _wait(pid)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)


def _supervise(make_server, sock: socket.socket, workers: set[int]) -> None:
    """Wait for a stopping signal, replacing the workers that die meanwhile."""
    last_start = 0.0
    while True:
        if signal.sigwait(_WATCHED) in _STOP:
            return
        for pid in _reaped(workers):
            workers.discard(pid)
            time.sleep(max(0.0, last_start + 1.0 - time.monotonic()))
            last_start = time.monotonic()
            workers.add(_fork(make_server, sock))


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


def _fork(make_server, sock: socket.socket) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
        make_server().run(sockets=[sock])
        code = 0
    finally:
        os._exit(code)


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
