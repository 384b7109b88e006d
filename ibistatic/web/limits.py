"""What one connection, and one client, may take of the built-in server (``web/server.py``).

Apart from the server so that the command line can show the defaults without loading
uvicorn.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = ["Limits", "client_key"]


@dataclass(frozen=True)
class Limits:
    """What one connection, and one client, may take of the server."""

    head_timeout: float = 10.0  # seconds to send a whole request head
    keep_alive: float = 5.0  # seconds an idle keep-alive connection is kept
    send_timeout: float = 10.0  # seconds an answer may wait for a client that reads nothing
    max_request_line: int = 8192  # bytes of the request target
    max_head_bytes: int = 65536  # bytes of a whole request head
    max_headers: int = 100  # header fields of one request
    max_connections: int | None = 4096  # beyond it, new requests get 503
    #: connections one client address (an IPv6 client: its /64) holds at once, in one
    #: process; beyond it a new connection gets 503 and is closed.  None: no limit
    max_client_connections: int | None = 128


def client_key(peer) -> str | None:
    """What a connection from `peer` (a socket address) counts against: its IPv4 address,
    or the /64 of an IPv6 address (an IPv4-mapped one: the IPv4 address); None for a
    peer with no address (a Unix socket)."""
    if not isinstance(peer, tuple) or not peer or not isinstance(peer[0], str):
        return None
    host = peer[0]
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((int(address) >> 64 << 64, 64)))
