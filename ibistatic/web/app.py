"""The Archive server's answers, request in, response out, with no I/O of the network.

:class:`ArchiveApp` answers one request at a time from a built site; the ASGI and WSGI
adapters (``web/asgi.py``, ``web/wsgi.py``) and the built-in server (``web/server.py``)
only carry bytes.  What a request gets, in this order:

1. ``/<archive service IBI>?servicesubject=...``: the Archive service of resolution-system
   §7 (``text/plain``), from the `service` callable (``web/service.py`` by default);
2. a persistent URL the build precomputed (most of them): its redirect, at once; the
   item itself (no modifier) with an ``Accept`` that prefers BibTeX, RIS, CSL-JSON,
   JSON-LD or oai_dc: ``303`` to that file of its metadata (core.exports), and every
   answer to the item itself says ``Vary: Accept``;
3. a file of the built site (``/`` is ``index.html``; pages, assets, ``index/*.json``),
   as a static host serves it, with ``ETag``/``Last-Modified`` and ``304``; never a file
   outside the site (``..``, encoded slashes, symlinks leading out, hidden files);
4. anything else: resolved (:mod:`ibistatic.resolver`), then a redirect or an alert page
   with the status :func:`~ibistatic.core.http.http_answer` gives.

A request that is not one (a target with a control character, a space or a non-ASCII
byte, a bad ``%`` escape) gets ``400 text/plain`` naming what was wrong; a method other
than GET and HEAD gets ``405``.  A path whose ``%hh`` bytes are no UTF-8 is still a
request: the standard writes non-ASCII file names in ISO-8859-1 (``Relat%f3rio.pdf``),
and the resolver reads them as ``ibistatic resolve`` does.  No header value carries a
control character: every one is built by :func:`~ibistatic.core.http.header_value`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from pathlib import Path
from urllib.parse import quote

from ..core.exports import beside, negotiate
from ..core.facts import ARCHIVE_FILES, DOC_FOLDER, URL_PATH_SAFE
from ..core.http import header_value, http_answer
from ..core.properties import new_urlkey
from ..errors import IbistaticError
from ..index.reader import find_index_dir
from ..resolver import Resolver
from ..site.folders import SITE_FOLDERS
from .messages import Response, content_headers, page, target_problem, text_response
from .service import service_answer
from .static import StaticFiles

__all__ = ["ArchiveApp", "Service", "default_service"]

#: (views, target, client_ip) -> (status, text) for a service request, else None
Service = Callable[[object, str, str | None], "tuple[HTTPStatus, str] | None"]


def default_service(urlkey=new_urlkey, filtered: bool = True) -> Service:
    """The Archive service of ``web/service.py`` (keys from `urlkey`; FILTRARLISTADEURL
    applied unless `filtered` is False)."""

    def answer(views, target: str, client_ip: str | None):
        if "servicesubject=" not in target:
            return None  # the common case, without parsing the URL
        return service_answer(views, target, urlkey, filtered)

    return answer


class ArchiveApp:
    """The answers of a built site (or of its ``index/`` folder alone: then no files)."""

    #: how often (seconds) the index is checked for a rebuild: one stat, not one per request
    RELOAD_EVERY = 1.0

    def __init__(
        self,
        site: Path | str,
        *,
        service: Service | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        index_dir = find_index_dir(site)
        self.resolver = resolver or Resolver(index_dir)
        self.service = service or default_service()
        root = Path(site)
        self.static = (
            StaticFiles(root, links=self._page_links) if index_dir == root / "index" else None
        )
        self._links = None  # site.pagelinks.PageLinks of the index now open
        self._checked = time.monotonic()
        self._lock = threading.Lock()

    def respond(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        client_ip: str | None = None,
        body: bytes | None = None,
    ) -> Response:
        """The response to `method` `target` (the request target as sent: path and
        query, percent-encoded) with `headers` (names in lower case); `body`, that of a
        POST (which only the Archive service's batches of acknowledgments take)."""
        if method == "POST" and body is not None:
            return self._post(target, body, client_ip)
        response = self._answer(method, target, headers, client_ip)
        if method == "HEAD":
            return response._replace(body=b"")
        return response

    def _answer(self, method, target, headers, client_ip) -> Response:
        if method not in ("GET", "HEAD"):
            return text_response(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"method {method} not allowed: this server answers GET and HEAD\n",
                (("Allow", "GET, HEAD"),),
            )
        problem = target_problem(target)
        if problem:
            return text_response(HTTPStatus.BAD_REQUEST, f"bad request: {problem}\n")
        self._reload_if_due()
        views = self.resolver.views
        service = self.service(views, target, client_ip)
        if service is not None:
            status, text = service
            data = text.encode("ascii", "replace")
            return Response(
                int(status), content_headers("text/plain; charset=us-ascii", data), data
            )
        inflected = self._inflected(target, headers, client_ip)
        if inflected is not None:
            return inflected
        answer = self.resolver.precomputed(target[1:])
        if answer is not None:
            return self._resolved(answer, target, headers)
        if self.static is not None and _is_document(target):
            found = self.static.respond(target, headers)
            if found is not None:  # the site publishes it (site/outputs/documents.py)
                return found
        if self.static is not None and not _in_ibi_folder(target):
            found = self.static.respond(target, headers)
            if found is not None:
                return found
        elif target == "/":
            return self._home()
        return self._resolve(target, headers, client_ip)

    def _post(self, target: str, body: bytes, client_ip) -> Response:
        batch = getattr(self.service, "batch", None)
        answer = None
        if batch is not None and not target_problem(target):
            answer = batch(self.resolver.views, target, body, client_ip)
        if answer is None:
            return self._answer("POST", target, {}, client_ip)  # 405, as any other method
        data = answer[1].encode("ascii", "replace")
        return Response(int(answer[0]), content_headers("text/plain; charset=us-ascii", data), data)

    def _resolve(self, target: str, headers, client_ip) -> Response:
        try:
            result = self.resolver.resolve(target[1:], headers.get("accept-language"), client_ip)
        except IbistaticError as error:
            folder = self.static.folder_redirect(target) if self.static else None
            if folder is not None:
                return folder
            if "/" not in target.partition("?")[0][1:]:  # /favicon.ico: no IBI is one segment
                return self._not_found(target, "Not found", "No such page or persistent URL.")
            message = str(error).splitlines()[0]
            return page(HTTPStatus.BAD_REQUEST, "Not a persistent URL", message, target)
        return self._resolved(result, target, headers)

    def _resolved(self, result, target: str, headers) -> Response:
        answer = http_answer(result, result.asked)
        if answer.location is not None and not result.asked:
            return self._negotiated(result, answer, headers.get("accept"))
        if answer.location is None:  # an alert: deleted, conflict, not found, ...
            return self._not_found(
                target, result.alert, result.message, answer.headers, answer.status
            )
        return Response(answer.status, answer.headers + (("Content-Length", "0"),), b"")

    def _negotiated(self, result, answer, accept: str | None) -> Response:
        """The answer to the item itself (no modifier): its redirect, or ``303`` to the
        file of core.exports that `accept` prefers (BibTeX, RIS, CSL-JSON, JSON-LD,
        oai_dc) when the item has metadata; an item without gets its redirect, as a
        static host would give it (Accept is a preference, not a demand).  Either
        depends on Accept: ``Vary: Accept``."""
        status, headers = answer.status, answer.headers
        export = negotiate(accept)
        folder = self._metadata_folder(result) if export is not None else None
        if folder is not None:
            location = header_value(folder + export.name)
            status, headers = HTTPStatus.SEE_OTHER, (("Location", location),)
        headers += (("Vary", "Accept"), ("Content-Length", "0"))
        return Response(status, headers, b"")

    def _metadata_folder(self, result) -> str | None:
        """The URL of the folder of the answering item's oai_dc.xml, or None."""
        from ..index.sharding import canonical_key

        if not result.ibi:
            return None
        for record in self.resolver.index.records(canonical_key(result.ibi)):
            xml = (record.get("urls") or {}).get("oai_dc")
            if xml and record.get("archive") == result.archive:
                return beside(xml)
        return None

    def _inflected(self, target: str, headers, client_ip) -> Response | None:
        """The habits of neighbouring schemes: ARK's ``?info`` leads to the item's record
        page (an IBI the index does not hold: its not-found alert), URLib's ``??`` to its
        metadata (the ``:`` modifier); None for any other target."""
        if target.endswith("??"):
            return self._answer("GET", target[:-2] + ":", headers, client_ip)
        if not target.endswith("?info") or target == "/?info":
            return None
        from ..index.sharding import canonical_key
        from ..site.signposting import record_path

        ibi = target[1 : -len("?info")]
        records = self.resolver.index.records(canonical_key(ibi))
        if not records:
            return self._answer("GET", target[: -len("?info")], headers, client_ip)
        page = self.resolver.index.site_url + quote(
            record_path(canonical_key(records[0]["repository"])), safe=URL_PATH_SAFE
        )
        headers = (("Location", header_value(page)), ("Content-Length", "0"))
        return Response(HTTPStatus.SEE_OTHER, headers, b"")

    def _not_found(
        self, target: str, title: str, message: str, extra=(), status=HTTPStatus.NOT_FOUND
    ) -> Response:
        """An alert (404 by default; 410, 409, ...): the site's own 404.html (its look,
        its search; its script says which alert of the URL asked, as it does on a static
        host), or a small page without a site."""
        found = self.static.not_found_page() if self.static is not None else None
        if found is None:
            return page(status, title, message, target, extra)
        return Response(status, content_headers("text/html; charset=utf-8", found, extra), found)

    def _home(self) -> Response:
        site = self.resolver.index.site_url
        message = f"This server resolves the persistent URLs of {site}: ask for /<IBI>."
        return page(HTTPStatus.OK, "ibistatic", message, "/")

    def _page_links(self, page: str) -> str | None:
        """The Signposting ``Link`` value of a page of the site (site/pagelinks.py), from
        the index open now (a rebuild replaces it)."""
        from ..site.pagelinks import PageLinks

        links, index = self._links, self.resolver.index
        if links is None or links.index is not index:
            links = self._links = PageLinks(index)
        return links.header(page)

    def _reload_if_due(self) -> None:
        now = time.monotonic()
        if now - self._checked > self.RELOAD_EVERY:
            with self._lock:
                if now - self._checked > self.RELOAD_EVERY:
                    self._checked = now
                    self.resolver.reload_if_changed()


def _is_document(target: str) -> bool:
    """Whether `target` is the path of an Archive's file, ``/col/<IBI>/doc/<file>``: the
    site's own copy when it publishes one, else a persistent URL that is resolved."""
    return target.startswith("/" + ARCHIVE_FILES) and DOC_FOLDER + "/" in target


def _in_ibi_folder(target: str) -> bool:
    """Whether `target` names a file below a folder that may begin an IBI, not one of
    the site's own (site/folders.py): ``/<IBI>/index.html`` is the item's file
    ``index.html``, not the redirect page; ``/<IBI>/`` is still the page."""
    path = target.split("?", 1)[0]
    first, _, rest = path[1:].partition("/")
    return bool(rest) and not path.endswith("/") and first.lower() not in SITE_FOLDERS
