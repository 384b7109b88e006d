"""A loopback HTTP resolver over a built index.

- A persistent URL gets the answer :func:`~ibistatic.core.http.http_answer` decides,
  the one every host file gives too: a real redirect, ``302 Found``, or ``303 See
  Other`` when the URL asks for metadata about the item (a ``:`` in its modifier).
  ``Accept-Language`` chooses ``+`` translations (and such answers say ``Vary``).
- An alert gets a small HTML page with the status the same function gives: ``404``
  (not-found, unavailable), ``409`` (conflict, loop, no-original) or ``410`` (deleted).
- ``/<archive service IBI>?servicesubject=...`` gets the ``text/plain`` answers of
  resolution-system §7 (MONTARRESPOSTA), so ibistatic can stand in as an Archive of a URLib
  resolver network: a pair list as Table 4.2 writes it (CRLF between pairs, nothing
  after the last; zero bytes for an IBI the Archive does not hold).  A query that does
  not parse (``%zz``, a pair without ``=``, ``&&``), an unknown ``servicesubject`` or a
  verb list that does not parse gets ``400`` with a ``text/plain`` message instead.
- When a build replaces the index, the next request re-opens it (the swap is atomic).
"""

from __future__ import annotations

import html
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer

from .core.http import ALERT_STATUS, http_answer
from .core.properties import new_urlkey
from .errors import IbistaticError
from .resolver import Resolver
from .web.service import service_answer

__all__ = ["make_server", "ALERT_STATUS"]

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<title>{title}</title></head>
<body><h1>{title}</h1><p>{message}</p><p><code>{url}</code></p></body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    server_version = "ibistatic"
    resolver: Resolver
    lock: threading.Lock
    quiet = True
    timeout = 5  # a client that stalls is dropped, so it cannot hold the server
    checked = 0.0  # when the index was last checked for a rebuild
    urlkey = staticmethod(new_urlkey)  # a fresh key per urlRequest answer
    filtered = True  # FILTRARLISTADEURL is optional (§7); off, urlRequest gets the whole list

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's name
        if not self.quiet:
            super().log_message(format, *args)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self.do_GET(body=False)

    def do_GET(self, body: bool = True) -> None:  # noqa: N802
        now = time.monotonic()
        if now - type(self).checked > 1.0:  # one stat a second, not one per request
            with self.lock:
                type(self).checked = now
                self.resolver.reload_if_changed()
        resolver = self.resolver
        target = self.path
        service = service_answer(resolver.views, target, self.urlkey, self.filtered)
        if service is not None:
            status, text = service
            self._send(
                status, "text/plain; charset=us-ascii", text.encode("ascii", "replace"), body
            )
            return
        try:
            result = resolver.resolve(target.lstrip("/"), self.headers.get("Accept-Language"))
        except IbistaticError as error:
            self._page(
                HTTPStatus.BAD_REQUEST,
                "Not a persistent URL",
                str(error).splitlines()[0],
                target,
                body,
            )
            return
        answer = http_answer(result, result.asked)
        if answer.location is None:
            self._page(
                HTTPStatus(answer.status),
                result.alert,
                result.message,
                target,
                body,
                answer.headers,
            )
            return
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _page(
        self, status: HTTPStatus, title: str, message: str, url: str, body: bool, headers=()
    ) -> None:
        page = _PAGE.format(
            title=html.escape(title), message=html.escape(message), url=html.escape(url)
        )
        self._send(status, "text/html; charset=utf-8", page.encode("utf-8"), body, headers)

    def _send(
        self, status: HTTPStatus, content_type: str, data: bytes, body: bool, headers=()
    ) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)


class _Server(HTTPServer):
    """One thread: answers are computed in microseconds, and thread start-up per request
    cost more than the answers (measured: 3x fewer requests per second)."""

    request_queue_size = 128

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client went away (load generators close mid-answer)
        super().handle_error(request, client_address)


def make_server(
    index_dir,
    bind: str = "127.0.0.1",
    port: int = 8000,
    quiet: bool = True,
    urlkey=new_urlkey,
    filtered: bool = True,
) -> HTTPServer:
    """A server (not yet serving) answering from the index at `index_dir`.  `urlkey`
    makes the key of each urlRequest answer (fixed in tests that compare bytes);
    `filtered=False` answers urlRequest without FILTRARLISTADEURL."""
    attributes = {
        "resolver": Resolver(index_dir),
        "lock": threading.Lock(),
        "quiet": quiet,
        "urlkey": staticmethod(urlkey),
        "filtered": filtered,
    }
    handler = type("Handler", (_Handler,), attributes)
    return _Server((bind, port), handler)
