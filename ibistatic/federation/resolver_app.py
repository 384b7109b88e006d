"""``ibistatic resolver``: the resolver of the live resolution system, as an ASGI app.

- ``/<service IBI>?servicesubject=inclusionRequest|exclusionRequest&...`` (§5.2): the
  registration key is checked against the keys file; an inclusion is confirmed by an
  ``inclusionConfirmationRequest`` sent back to the advertised address.
- Any other path is a persistent URL: asked of every included Archive at once and of
  each local index, selected (§6.2), followed (§8.2), acknowledged (Table 6.11), and
  answered with the redirect or alert page that :func:`~ibistatic.core.http.http_answer`
  decides (the one rule of every ibistatic answer).
- Answers may be kept ``cache_seconds`` (0: never), at most :attr:`CACHE_SIZE` of them.
  A cached answer asks no Archive, so none issues a key and none is acknowledged.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from http import HTTPStatus

from ..core.http import http_answer
from ..core.identifiers import ibi_key
from ..core.pairlists import decode_query, parse_pairs, wire_text
from ..errors import IbistaticError
from ..web.app import target_problem
from .network import Client, LocalArchive, RemoteArchive, acknowledgment, resolve_over
from .registry import Registry
from .wire import (
    DEFAULT_SERVICE_IBI,
    confirmation_pairs,
    excluded,
    included,
    parse_registration,
    refused,
    request_url,
)

__all__ = ["ResolverApp"]

log = logging.getLogger("ibistatic.resolver")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<title>{title}</title></head>
<body><h1>{title}</h1><p>{message}</p><p><code>{url}</code></p></body></html>
"""
_TEXT = "text/plain; charset=us-ascii"
_HTML = "text/html; charset=utf-8"


class ResolverApp:
    """The resolver as an ASGI application (run it with ``web.server.run_server``)."""

    CACHE_SIZE = 100_000

    def __init__(
        self,
        registry: Registry,
        *,
        service_ibi: str = DEFAULT_SERVICE_IBI,
        views=(),
        timeout: float = 2.0,
        cache_seconds: float = 3.0,
    ) -> None:
        self.registry = registry
        self.service_ibi = service_ibi
        self.service_key = ibi_key(service_ibi)
        self.locals = [LocalArchive(view) for view in views]
        self.client = Client(timeout)
        self.cache_seconds = cache_seconds
        self._cache: dict[tuple[str, str | None], tuple[float, tuple]] = {}
        self._tasks: set[asyncio.Task] = set()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        status, headers, body = await self.answer(scope)
        if scope["method"] == "HEAD":
            body = b""
        await send({"type": "http.response.start", "status": int(status), "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.client.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def close(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.client.close()

    async def answer(self, scope) -> tuple[int, list, bytes]:
        """(status, headers, body) for one request."""
        if scope["method"] not in ("GET", "HEAD"):
            return _text(HTTPStatus.METHOD_NOT_ALLOWED, "only GET and HEAD are answered\r\n")
        path = scope.get("raw_path") or scope["path"].encode("utf-8")
        path = path.decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        target = path + ("?" + query if query else "")
        problem = target_problem(target)
        if problem:
            return _text(HTTPStatus.BAD_REQUEST, f"bad request: {problem}\r\n")
        if path == "/":
            return _text(HTTPStatus.OK, self._about())
        if path.strip("/").casefold() == self.service_key.casefold():  # case never matters
            return await self._service(query)
        return await self._resolution(scope, target)

    def _about(self) -> str:
        names = ", ".join(a.service_ibi for a in self.registry.archives()) or "none yet"
        return f"ibistatic resolver: service at /{self.service_ibi}; Archives included: {names}\r\n"

    # --- the resolver service (§5.2)

    async def _service(self, query: str) -> tuple[int, list, bytes]:
        try:
            pairs = dict(decode_query(query))
            subject = pairs.get("servicesubject")
            if subject not in ("inclusionRequest", "exclusionRequest"):
                return _text(
                    HTTPStatus.BAD_REQUEST,
                    f"bad service request: servicesubject {subject!r}: expected "
                    "inclusionRequest or exclusionRequest\r\n",
                )
            registration = parse_registration(pairs)
        except IbistaticError as error:
            message = str(error).splitlines()[0]
            return _text(HTTPStatus.BAD_REQUEST, "bad service request: " + message + "\r\n")
        reason = self.registry.check(registration)
        if reason is not None:
            log.warning("%s refused: %s", subject, reason)
            return _text(HTTPStatus.FORBIDDEN, wire_text(refused(reason)))
        if subject == "exclusionRequest":
            self.registry.exclude(registration)
            self._cache.clear()
            return _text(HTTPStatus.OK, wire_text(excluded()))
        confirmed = await self._confirm(registration.service_base())
        self.registry.include(registration)
        self._cache.clear()
        return _text(HTTPStatus.OK, wire_text(included(confirmed)))

    async def _confirm(self, base: str) -> bool:
        """Whether the Archive answers ``confirmation yes`` at its advertised address."""
        try:
            status, text = await self.client.get(request_url(base, confirmation_pairs()))
            return status == 200 and parse_pairs(text) == [("confirmation", "yes")]
        except (OSError, IbistaticError) as error:
            log.warning("inclusionConfirmationRequest to %s: %s", base, error or "timeout")
            return False

    # --- resolution (§6.2, §8)

    async def _resolution(self, scope, target: str) -> tuple[int, list, bytes]:
        accept_language = _header(scope, b"accept-language")
        cache_key = (target, accept_language)
        now = time.monotonic()
        cached = self._cache.get(cache_key)
        if cached is not None and cached[0] > now:
            return cached[1]
        response = await self._resolve(scope, target, accept_language)
        if self.cache_seconds > 0:
            if len(self._cache) >= self.CACHE_SIZE:
                self._cache.clear()  # bounded and simple: a burst refills it
            self._cache[cache_key] = (now + self.cache_seconds, response)
        return response

    async def _resolve(self, scope, target: str, accept_language: str | None):
        from ..core.urls import parse_persistent_url
        from ..resolver import _iri_to_uri

        client_ip = (scope.get("client") or ("127.0.0.1",))[0]
        try:
            parsed = parse_persistent_url(_iri_to_uri(target.lstrip("/")))
            languages = _languages(accept_language)
        except IbistaticError as error:
            return _page(HTTPStatus.BAD_REQUEST, "Not a persistent URL", str(error), target)
        sources = self.locals + [
            RemoteArchive(archive.service_ibi, archive.base, self.client)
            for archive in self.registry.archives()
        ]
        answered = await resolve_over(sources, parsed, client_ip, accept_language, languages)
        result = answered.resolution
        answer = http_answer(result, result.asked)
        if answer.location is None:
            return _page(answer.status, result.alert, result.message, target, answer.headers)
        ack = acknowledgment(answered, client_ip, _persistent_url(scope, target))
        if ack is not None:
            task = asyncio.ensure_future(answered.source.acknowledge(ack))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        headers = [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in answer.headers]
        return answer.status, headers + [(b"content-length", b"0")], b""


def _languages(accept_language: str | None) -> list[str]:
    """The preferred language tags, most preferred first (as ``Resolver.resolve`` reads them)."""
    from ..core.languages import parse_accept_language

    if not accept_language:
        return []
    return [tag for tag, q in parse_accept_language(accept_language) if q > 0 and tag != "*"]


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _persistent_url(scope, target: str) -> str:
    host = _header(scope, b"host") or "{}:{}".format(*scope.get("server") or ("localhost", 80))
    return f"http://{host}{target}"


def _text(status, text: str) -> tuple[int, list, bytes]:
    data = text.encode("ascii", "replace")
    return int(status), [(b"content-type", _TEXT.encode()), _length(data)], data


def _page(status, title: str, message: str, url: str, headers=()) -> tuple[int, list, bytes]:
    page = _PAGE.format(
        title=html.escape(title),
        message=html.escape(message.splitlines()[0] if message else ""),
        url=html.escape(url),
    )
    data = page.encode("utf-8")
    extra = [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in headers]
    return int(status), [(b"content-type", _HTML.encode()), _length(data)] + extra, data


def _length(data: bytes) -> tuple[bytes, bytes]:
    return b"content-length", str(len(data)).encode()
