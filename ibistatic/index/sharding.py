"""Which shard holds a key: FNV-1a (32 bit) of the key's UTF-8 bytes modulo 16**digits,
in lower-case hex.  Simple enough for the site's 404 page to compute in the browser;
imports nothing, so a cold lookup stays cheap."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["FORMAT", "VERSION", "fnv1a", "shard_name", "canonical_key"]

FORMAT = "ibistatic-index"
VERSION = 1


def fnv1a(text: str) -> int:
    """FNV-1a, 32 bit, over the UTF-8 bytes of `text`."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


@lru_cache(maxsize=65536)
def shard_name(key: str, digits: int) -> str:
    return format(fnv1a(key) % (16**digits), f"0{digits}x")


def canonical_key(text: str) -> str:
    """The index key of an IBI already known to be well formed: a repository name (four
    '/'-separated parts) in lower case, an IBIp (two parts) in upper case."""
    return text.lower() if text.count("/") >= 3 else text.upper()
