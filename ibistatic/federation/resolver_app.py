"""``ibistatic resolver``: the resolver of the live resolution system, as an ASGI app.

- ``/<service IBI>?servicesubject=inclusionRequest|exclusionRequest&...`` (§5.2): the
  registration key is checked against the keys file; an inclusion is confirmed by an
  ``inclusionConfirmationRequest`` sent back to the advertised address.
- Any other path is a persistent URL: put to the Archives by the holder rule
  (:mod:`.rounds`: the holder alone for an IBI it holds, every Archive at once for a new
  one, the first acceptable answer taken), followed (§8.2) within the resolution's
  limits (:class:`~.network.ResolverLimits`), acknowledged (Table 6.11), and answered
  with the redirect or alert page that :func:`~ibistatic.core.http.http_answer` decides.
- Answers may be kept ``cache_seconds`` (0: never) in a cache bounded by bytes
  (:mod:`.answer_cache`).  Every redirect is acknowledged, a cached one too (with the
  key its Archive gave when it was resolved), so the Archives' counts are exact; the
  acknowledgments are queued, never waited for, and sent in batches (:mod:`.ack_queue`).
- Nothing an Archive sends makes a 500: its answer is dropped, and any failure no check
  foresaw ends that one request with ``502`` and one line in the log.
"""

from __future__ import annotations

import asyncio
import html
import logging
import secrets
from http import HTTPStatus

from ..core.http import depends_on_languages, http_answer
from ..core.identifiers import ibi_key, parse_ibi
from ..core.pairlists import decode_query, parse_pairs, wire_text
from ..errors import IbistaticError
from ..web.messages import target_problem
from .answer_cache import BY_LANGUAGE, AnswerCache, language_key
from .holders import Holders
from .network import Client, LocalArchive, RemoteArchive, ResolverLimits, thanks_for
from .registry import Registry
from .rounds import run_process
from .wire import (
    DEFAULT_SERVICE_IBI,
    confirmation_pairs,
    excluded,
    included,
    ip_list,
    parse_registration,
    refused,
    request_url,
    takes_batches,
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


#: the longest a redirect is served from the cache: its acknowledgments reuse the urlkey
#: its Archive gave, which the Archive accepts only for a while (ibistatic: 10 minutes)
KEY_REUSE_SECONDS = 60.0


class ResolverApp:
    """The resolver as an ASGI application (run it with ``web.server.run_server``)."""

    def __init__(
        self,
        registry: Registry,
        *,
        service_ibi: str = DEFAULT_SERVICE_IBI,
        views=(),
        timeout: float = 2.0,
        cache_seconds: float = 3.0,
        limits: ResolverLimits | None = None,
        holders: Holders | None = None,
    ) -> None:
        self.registry = registry
        self.service_ibi = service_ibi
        self.service_key = ibi_key(service_ibi)
        self.locals = [LocalArchive(view) for view in views]
        self.limits = limits or ResolverLimits(timeout=timeout)
        # each request this resolver sends says so: one that comes back is a loop
        self.via = "ibistatic-" + secrets.token_hex(6)
        self.client = Client(self.limits.timeout, self.limits.answer_bytes, self.via)
        self.cache_seconds = cache_seconds
        self.cache = AnswerCache(self.limits.cache_bytes)
        self.holders = holders if holders is not None else Holders()
        self._peers: dict[str, RemoteArchive] = {}
        self._closing: set[asyncio.Task] = set()
        self._keys: dict[str, str] = {}

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
        """Send what is queued (each Archive at most a timeout), then stop."""
        await asyncio.gather(*(peer.close() for peer in self._peers.values()), *self._closing)
        await self.client.close()

    async def answer(self, scope) -> tuple[int, list, bytes]:
        """(status, headers, body) for one request."""
        try:
            return await self._answer(scope)
        except Exception as error:  # a failure no check foresaw costs this request only
            log.warning("request %r: %r", scope.get("path", "")[:200], error)
            return _text(HTTPStatus.BAD_GATEWAY, "bad gateway: an answer could not be used\r\n")

    async def _answer(self, scope) -> tuple[int, list, bytes]:
        if self.via in (_header(scope, b"via") or ""):
            return _text(HTTPStatus.LOOP_DETECTED, "loop: this resolver asked itself\r\n")
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
            self.cache.clear()
            return _text(HTTPStatus.OK, wire_text(excluded()))
        confirmed = await self._confirm(registration.service_base())
        self.registry.include(registration)
        self.cache.clear()
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
        entry = self._cached(target, accept_language)
        clients = client_addresses(scope)
        if entry is None:
            entry = await self._resolve(target, accept_language, clients)
        response, thanks = entry
        if thanks is not None:
            thanks.source.acknowledge(thanks, clients, _persistent_url(scope, target))
        return response

    def _cached(self, target: str, accept_language: str | None):
        if self.cache_seconds <= 0:
            return None
        found = self.cache.get((target, None))
        if found is BY_LANGUAGE:
            found = self.cache.get((target, language_key(accept_language)))
        return found

    async def _resolve(self, target: str, accept_language: str | None, clients: str):
        from ..core.urls import parse_persistent_url
        from ..resolver import _iri_to_uri

        try:
            parsed = parse_persistent_url(_iri_to_uri(target.lstrip("/")))
        except IbistaticError as error:
            page = _page(HTTPStatus.BAD_REQUEST, "Not a persistent URL", str(error), target)
            return page, None
        languages = language_key(accept_language) if self._by_language(parsed) else None
        answered = await run_process(
            self.locals + self._remotes(),
            parsed,
            clients,
            list(languages or ()),
            self.holders,
            self.limits,
            self._ranked(),
        )
        result = answered.resolution
        answer = http_answer(result, result.asked)
        if answer.location is None:
            page = _page(answer.status, result.alert, result.message, target, answer.headers)
            entry = (page, None)
        else:
            headers = [
                (n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in answer.headers
            ]
            entry = (
                (answer.status, headers + [(b"content-length", b"0")], b""),
                thanks_for(answered),
            )
        if answered.complete:  # an Archive that failed may answer next time
            self._keep(target, languages, entry)
        return entry

    @staticmethod
    def _by_language(parsed) -> bool:
        return depends_on_languages(parsed.verbs.steps)

    def _keep(self, target: str, languages, entry) -> None:
        (_, headers, body), thanks = entry
        seconds = self.cache_seconds
        size = 2 * len(target) + len(body) + sum(len(n) + len(v) for n, v in headers)
        if thanks is not None:
            seconds = min(seconds, KEY_REUSE_SECONDS)
            size += 2 * len(thanks.url) + len(thanks.urlkey) + 200
        if languages is None:
            self.cache.put((target, None), entry, size, seconds)
            return
        self.cache.put((target, None), BY_LANGUAGE, len(target), seconds)
        self.cache.put((target, languages), entry, size + 8 * len(languages), seconds)

    def _remotes(self) -> list[RemoteArchive]:
        """The included Archives by rank, as peers kept across requests (their health)."""
        peers = []
        for archive in self.registry.archives():
            key = self._service_key(archive.service_ibi)
            peer = self._peers.get(key)
            batches = takes_batches(archive.platform_version)
            if peer is None or (peer.base, peer.announced) != (archive.base, batches):
                if peer is not None:  # back from elsewhere: what it had queued is sent first
                    self._closing.add(asyncio.ensure_future(peer.close()))
                    self._closing = {task for task in self._closing if not task.done()}
                peer = RemoteArchive(
                    archive.service_ibi, archive.base, self.client, self.limits, key, batches
                )
                self._peers[key] = peer
            peers.append(peer)
        return peers

    def _ranked(self) -> list[str]:
        return [source.holder_id for source in self.locals] + list(self.registry.ranks)

    def _service_key(self, text: str) -> str:
        key = self._keys.get(text)
        if key is None:
            key = self._keys[text] = parse_ibi(text).key
        return key


def client_addresses(scope) -> str:
    """``clientinformation.ipaddress`` (Table 6.10, §8.1): the client first, then its
    successive proxies, from ``X-Forwarded-For`` and the address the server saw.

    The server (uvicorn) takes the client from ``X-Forwarded-For`` when the peer is a
    proxy it trusts: the entries up to that one are the client's own address and its
    proxies.  Otherwise the peer is the client's last proxy and follows the entries.  A
    header with anything but IP addresses, or more than IP_LIST_MAX of them, is not
    passed on: the address the server saw is (``0.0.0.0`` when a trusted proxy named
    something else than an address as the client)."""
    client = (scope.get("client") or ("127.0.0.1",))[0]
    forwarded = ",".join(
        value.decode("latin-1")
        for name, value in scope.get("headers", ())
        if name == b"x-forwarded-for"
    )
    if not forwarded:
        return client  # the peer's own address, as the socket gave it
    if ip_list(client) is None:
        return "0.0.0.0"
    entries = [entry.strip() for entry in forwarded[:1024].split(",")]
    if client in entries:
        chain = entries[: len(entries) - entries[::-1].index(client)]
    else:
        chain = entries + [client]
    addresses = ip_list(" ".join(chain))
    return " ".join(addresses) if addresses is not None else client


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
