"""What one connection may take of the built-in server (``web/server.py``).

Apart from the server so that the command line can show the defaults without loading
uvicorn.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """What one connection may take of the server."""

    head_timeout: float = 10.0  # seconds to send a whole request head
    keep_alive: float = 5.0  # seconds an idle keep-alive connection is kept
    max_request_line: int = 8192  # bytes of the request target
    max_head_bytes: int = 65536  # bytes of a whole request head
    max_headers: int = 100  # header fields of one request
    max_connections: int | None = 4096  # beyond it, new requests get 503
