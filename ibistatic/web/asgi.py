"""The Archive server as an ASGI application (uvicorn, hypercorn, gunicorn's uvicorn worker).

>>> from ibistatic.web.asgi import asgi_app
>>> application = asgi_app("site")          # a built site

or, with the site named by ``IBISTATIC_SITE``, for a server's command line::

    IBISTATIC_SITE=/srv/site uvicorn --factory ibistatic.web.asgi:from_environment

Only carries bytes: every answer is :meth:`ArchiveApp.respond`'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from .app import ArchiveApp, text_response

__all__ = ["AsgiApp", "asgi_app", "from_environment"]

#: what a path keeps unescaped when a server gives no raw_path (the persistent URL marks)
_PATH_SAFE = "/!$&'()*+,;=:@~"


class AsgiApp:
    def __init__(self, app: ArchiveApp) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # websockets: nothing here speaks them
        response = self.respond(scope)
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [
                    (name.encode("latin-1"), value.encode("latin-1"))
                    for name, value in response.headers
                ],
            }
        )
        await send({"type": "http.response.body", "body": response.body})

    def respond(self, scope):
        try:
            target = request_target(scope)
        except UnicodeDecodeError as error:
            return text_response(
                400, f"bad request: byte {error.object[error.start]:#04x} in the request target\n"
            )
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        client = scope.get("client")
        return self.app.respond(scope["method"], target, headers, client[0] if client else None)


def request_target(scope) -> str:
    """The request target as the client sent it (the raw path and the query)."""
    raw = scope.get("raw_path")
    root = scope.get("root_path", "")
    if raw is not None:
        path = raw.decode("ascii")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
    else:
        path = quote(scope["path"], safe=_PATH_SAFE)
    query = scope.get("query_string", b"")
    return path + ("?" + query.decode("ascii") if query else "")


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def asgi_app(site: Path | str, **options) -> AsgiApp:
    """An ASGI application answering from the built `site` (options: ArchiveApp's)."""
    return AsgiApp(ArchiveApp(site, **options))


def from_environment() -> AsgiApp:
    """The application for the site named by ``IBISTATIC_SITE`` (for ``--factory``)."""
    return asgi_app(site_from_environment())


def site_from_environment() -> str:
    site = os.environ.get("IBISTATIC_SITE")
    if not site:
        from ..errors import IbistaticError

        raise IbistaticError(
            "IBISTATIC_SITE is not set: name the built site to serve, e.g. IBISTATIC_SITE=/srv/site"
        )
    return site
