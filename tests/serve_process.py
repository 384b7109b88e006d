"""Starting servers as real processes on loopback for the tests, and talking raw HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 20.0) -> None:
    """Until `port` accepts connections; an error when `process` ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{process.args} did not listen on port {port} in {timeout:.0f} s")


@contextlib.contextmanager
def running(command: list[str], port: int | None = None, env: dict | None = None):
    """Run `command`; yield (process, port) once it listens (the port `ibistatic serve`
    prints when `port` is None), and stop it after."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**ENV, **(env or {})},
        cwd=str(ROOT),
    )
    try:
        if port is None:
            line = process.stderr.readline()
            found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if not found:
                raise RuntimeError(f"no address in {line!r}: {process.stderr.read()[-2000:]}")
            port = int(found.group(1))
        wait_for_port(port, process)
        yield process, port
    finally:
        stop(process)
        process.stderr.close()


def stop(process: subprocess.Popen) -> None:
    """Terminate `process` (killed after 10 s) and wait for it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve_command(site: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "ibistatic", "serve", str(site), "--port", "0", *options]


def raw_exchange(port: int, request: bytes, timeout: float = 5.0) -> bytes:
    """Send `request` as is; everything the server answers until it closes or pauses."""
    with socket.create_connection(("127.0.0.1", port), timeout) as sock:
        sock.sendall(request)
        return read_response(sock)


def read_response(sock: socket.socket) -> bytes:
    """One response: the head, then Content-Length bytes of body (or until close)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    want = int(length.group(1)) if length else None
    while want is None or len(body) < want:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def parse(response: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (names in lower case; a repeated name keeps its last) and body."""
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


INJECTED = "http://a.example/x\r\nSet-Cookie: session=stolen\r\nX-Evil: 1"


def tamper(site: Path) -> None:
    """Write a CR/LF URL into every precomputed answer, item record and file-URL template
    of the index (a hand-edited or forged index: the build itself refuses such URLs)."""
    index = site / "index"
    for path in [
        index / "manifest.json",
        *index.glob("answers/*.json"),
        *index.glob("shards/*.json"),
    ]:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r'"http://[^"]*"', lambda _: json.dumps(INJECTED + "/{path}"), text)
        path.write_text(text, encoding="utf-8")
