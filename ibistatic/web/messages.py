"""What the Archive server's parts say to each other: a request target checked, a
response built, with no I/O and nothing of ibistatic but this.

:class:`Response` is what every part of the server answers with (``web/app.py``,
``web/static.py``), and what the adapters (``web/asgi.py``, ``web/wsgi.py``) send;
:func:`target_problem` is the one reading of a request target, for the Archive server
and for the resolver (``federation/resolver_app.py``) alike.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

__all__ = ["Response", "content_headers", "page", "target_problem", "text_response"]


class Response(NamedTuple):
    status: int
    headers: tuple[tuple[str, str], ...]
    #: bytes, or a file's body that the adapters send in chunks (web/static.py's FileBody)
    body: bytes


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<title>{title}</title></head>
<body><h1>{title}</h1><p>{message}</p><p><code>{url}</code></p></body></html>
"""
# What an origin-form request target may hold: visible ASCII (RFC 9112 §3.2, RFC 3986).
_TARGET = re.compile(r"/[\x21-\x7e]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_TEXT = "text/plain; charset=utf-8"


def target_problem(target: str) -> str | None:
    """What makes `target` no request target this server answers, or None."""
    if not _TARGET.fullmatch(target):
        if not target.startswith("/"):
            return f"the request target {target[:80]!r} does not start with '/'"
        position = next(i for i, c in enumerate(target) if not "\x21" <= c <= "\x7e")
        return (
            f"character {target[position]!r} at position {position} of the request target: "
            "expected visible ASCII (percent-encode the rest)"
        )
    if "%" not in target:
        return None
    path = target.partition("?")[0]
    bad = _BAD_ESCAPE.search(path)
    if bad:
        return (
            f"bad percent-encoding {path[bad.start() : bad.start() + 3]!r} at position "
            f"{bad.start()} of the path: expected '%' and two hexadecimal digits"
        )
    return None


def content_headers(content_type: str, data, extra=()) -> tuple[tuple[str, str], ...]:
    """`extra`, then the ``Content-Type`` and ``Content-Length`` of `data`."""
    return tuple(extra) + (("Content-Type", content_type), ("Content-Length", str(len(data))))


def text_response(status: int, text: str, extra=()) -> Response:
    data = text.encode("utf-8")
    return Response(int(status), content_headers(_TEXT, data, extra), data)


def page(status: int, title: str, message: str, url: str, extra=()) -> Response:
    """A small HTML page (alerts, requests that are no persistent URL)."""
    body = _PAGE.format(
        title=html.escape(title), message=html.escape(message), url=html.escape(url)
    ).encode("utf-8")
    return Response(int(status), content_headers("text/html; charset=utf-8", body, extra), body)
