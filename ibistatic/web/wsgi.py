"""The Archive server as a WSGI application (gunicorn, waitress, mod_wsgi, uWSGI).

>>> from ibistatic.web.wsgi import wsgi_app
>>> application = wsgi_app("site")          # a built site

or, with the site named by ``IBISTATIC_SITE``::

    IBISTATIC_SITE=/srv/site gunicorn 'ibistatic.web.wsgi:from_environment()'
    IBISTATIC_SITE=/srv/site waitress-serve --call ibistatic.web.wsgi:from_environment

Only carries bytes: every answer is :meth:`ArchiveApp.respond`'s.
"""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from urllib.parse import quote

from .app import ArchiveApp
from .asgi import _PATH_SAFE, site_from_environment
from .messages import text_response
from .static import FileBody

__all__ = ["WsgiApp", "wsgi_app", "from_environment"]


class WsgiApp:
    def __init__(self, app: ArchiveApp) -> None:
        self.app = app

    def __call__(self, environ, start_response):
        response = self.respond(environ)
        status = HTTPStatus(response.status)
        start_response(f"{status.value} {status.phrase}", list(response.headers))
        if isinstance(response.body, FileBody):
            return response.body.chunks()
        return [response.body]

    def respond(self, environ):
        try:
            target = request_target(environ)
        except UnicodeError:
            return text_response(400, "bad request: a non-ASCII byte in the request target\n")
        headers = {
            key[5:].replace("_", "-").lower(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        method = environ.get("REQUEST_METHOD", "GET")
        return self.app.respond(method, target, headers, environ.get("REMOTE_ADDR"))


def request_target(environ) -> str:
    """The request target as the client sent it: the server's raw URI when it gives one
    (gunicorn ``RAW_URI``, mod_wsgi and waitress ``REQUEST_URI``), else rebuilt from
    ``SCRIPT_NAME``/``PATH_INFO`` (decoded, latin-1 per PEP 3333) and ``QUERY_STRING``."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    script = environ.get("SCRIPT_NAME", "")
    if raw:
        raw.encode("ascii")
        if script and raw.startswith(script):
            raw = raw[len(script) :] or "/"
        return raw
    path = environ.get("PATH_INFO", "").encode("latin-1")
    query = environ.get("QUERY_STRING", "")
    query.encode("ascii")
    return quote(path, safe=_PATH_SAFE) + ("?" + query if query else "")


def wsgi_app(site: Path | str, **options) -> WsgiApp:
    """A WSGI application answering from the built `site` (options: ArchiveApp's)."""
    return WsgiApp(ArchiveApp(site, **options))


def from_environment() -> WsgiApp:
    """The application for the site named by ``IBISTATIC_SITE``."""
    return wsgi_app(site_from_environment())
