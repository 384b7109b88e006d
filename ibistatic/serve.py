"""``ibistatic serve``'s server, made from a built site (the pieces live in ``web/``).

- ``web/app.py``: the answers (redirects, alert pages, the Archive service, the site's files);
- ``web/server.py``: uvicorn running them, with per-connection deadlines and limits;
- ``web/asgi.py``, ``web/wsgi.py``: the same answers under another ASGI or WSGI server.

:func:`make_server` gives a server that listens at once and runs when asked
(``serve_forever``), as ``http.server`` does, for tests and benchmarks that run it in a
thread; ``ibistatic serve`` runs it with :func:`~ibistatic.web.server.run_server`.
"""

from __future__ import annotations

from .core.http import ALERT_STATUS
from .core.properties import new_urlkey
from .web.app import ArchiveApp, default_service
from .web.server import Limits, ServerHandle, make_server_handle

__all__ = ["make_server", "make_app", "ALERT_STATUS"]


def make_app(site, urlkey=new_urlkey, filtered: bool = True, service=None) -> ArchiveApp:
    """The answers of the built `site` (or its index folder).  `urlkey` makes the key of
    each urlRequest answer (fixed in tests that compare bytes); `filtered=False` answers
    urlRequest without FILTRARLISTADEURL; `service` replaces the Archive service."""
    return ArchiveApp(site, service=service or default_service(urlkey, filtered))


def make_server(
    index_dir,
    bind: str = "127.0.0.1",
    port: int = 8000,
    quiet: bool = True,
    urlkey=new_urlkey,
    filtered: bool = True,
    limits: Limits = Limits(),
) -> ServerHandle:
    """A server (listening, not yet serving) answering from the site at `index_dir`."""
    app = make_app(index_dir, urlkey, filtered)
    return make_server_handle(app, bind, port, limits=limits, access_log=not quiet)
