"""The built site's files, served as a static host serves them.

``/`` and every folder asked with its ``/`` are their ``index.html``; a folder asked
without it is a persistent URL first (``/<IBI>`` and ``/<IBI>/`` differ: a redirect, and
its page), and gets a ``301`` to ``.../`` only when it is none.  Content types follow the file's
suffix; ``ETag`` and ``Last-Modified`` let clients ask again with ``If-None-Match`` or
``If-Modified-Since`` and get ``304``.  A page that carries Signposting links (a record,
metadata or file-list page) has them as a ``Link`` header too, on a ``304`` as well (the
`links` callable: site/pagelinks.py).  Nothing outside the site is ever read: a path
with ``..``, a ``.`` segment, a hidden name, an encoded ``/`` or ``\\``, a NUL, or a
symlink whose target lies outside the site is no file here (the request goes on to the
resolver, which answers it as a URL).
"""

from __future__ import annotations

import mimetypes
import os
import time
from collections.abc import Callable, Mapping
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from urllib.parse import unquote_to_bytes

from ..core.exports import EXPORTS
from ..core.http import header_value
from .messages import Response

__all__ = ["StaticFiles", "content_type"]

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".conf": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}
_NAMED = {
    "_redirects": "text/plain; charset=utf-8",
    "_headers": "text/plain; charset=utf-8",
    # the metadata's files for reference managers (core.exports), by name: .bib, .ris
    # and .jsonld are in no Python mimetypes table, and csl.json is more than JSON
    **{export.name: export.content_type for export in EXPORTS},
}
#: files up to this size are read whole into the answer; a larger one (a document the
#: site publishes) is sent a chunk at a time (FileBody), so memory stays bounded
WHOLE_FILE_BYTES = 1 << 20
#: the chunks a FileBody is sent in
CHUNK_BYTES = 256 << 10


class FileBody:
    """A large file's body: sent `CHUNK_BYTES` at a time by the ASGI and WSGI adapters,
    from the file opened when the answer was made (a later build swapping the site
    changes nothing of an answer under way)."""

    def __init__(self, path: Path, size: int) -> None:
        self.handle = open(path, "rb")  # noqa: SIM115 - closed by chunks() or __del__
        self.size = size

    def chunks(self):
        try:
            while chunk := self.handle.read(CHUNK_BYTES):
                yield chunk
        finally:
            self.handle.close()

    def __len__(self) -> int:
        return self.size

    def __del__(self) -> None:
        self.handle.close()


def content_type(name: str) -> str:
    """The Content-Type of a file of the site, from its name."""
    if name in _NAMED:
        return _NAMED[name]
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _TYPES:
        return _TYPES[suffix]
    guessed, _ = mimetypes.guess_type(name)
    return guessed or "application/octet-stream"


class StaticFiles:
    def __init__(self, root: Path | str, links: Callable[[str], str | None] | None = None) -> None:
        # Not resolved once: a built site is a link that each build points at a new
        # generation (store/swap.py), so it is followed again (at most once a second).
        self.root = Path(root).absolute()
        self._real_root = str(self.root)
        self._root_checked: float | None = None
        #: a page's path in the site ('record/x/index.html') -> its Link value, or None
        self.links = links

    def respond(self, target: str, headers: Mapping[str, str]):
        """The response for `target` when it names a file or folder of the site, else None."""

        path = target.partition("?")[0]
        found = self.find(path)
        if found is None:
            return None
        if found.is_dir():
            if not path.endswith("/"):
                return None  # a persistent URL first (the page at .../ is its stand-in)
            found = found / "index.html"
            if not found.is_file():
                return None
        return self._file(found, headers, self._link(found))

    def _link(self, page: Path) -> tuple[tuple[str, str], ...]:
        """The ``Link`` header of `page` (a file of the site), if it carries links: only
        pages do (HTML), and only they are looked up."""
        if self.links is None or page.suffix != ".html":
            return ()
        root = self._real_root
        text = str(page)
        if not text.startswith(root + os.sep):
            return ()
        value = self.links(text[len(root) + 1 :].replace(os.sep, "/"))
        return (("Link", header_value(value)),) if value else ()

    def not_found_page(self) -> bytes | None:
        """The site's 404.html, or None without one (an index served alone)."""
        try:
            return (Path(self._generation()) / "404.html").read_bytes()
        except OSError:
            return None

    def folder_redirect(self, target: str):
        """A ``301`` to ``target/`` when `target` names a folder of the site without its
        ``/`` (its page's relative links need it), else None.  The ``Location`` is always
        a path on this host: one ``/``, then no ``/`` or ``\\``."""
        path = target.partition("?")[0]
        if path.endswith("/"):
            return None
        found = self.find(path)
        if found is None or not found.is_dir():
            return None
        # Repeated slashes merged: "//sid.inpe.br/" (a folder of the site) is a
        # network-path reference, which a browser follows to the host sid.inpe.br.
        # (find() has refused every backslash, raw or encoded, and every encoded slash.)
        folder = "/" + "/".join(part for part in path.split("/") if part)
        location = header_value(folder.rstrip("/") + "/" + target[len(path) :])
        return Response(301, (("Location", location), ("Content-Length", "0")), b"")

    def find(self, path: str) -> Path | None:
        """The file or folder that `path` (percent-encoded) names inside the site, or None."""
        raw = unquote_to_bytes(path)
        if b"\0" in raw or b"\\" in raw or "%2f" in path.lower():
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        parts = [part for part in text.split("/") if part]
        if any(part.startswith(".") for part in parts):
            return None  # '..', '.', and hidden files alike
        root = self._generation()
        candidate = os.path.join(root, *parts)
        try:
            os.stat(candidate)  # one system call for the many requests that name no file
            real = os.path.realpath(candidate, strict=True)
        except (OSError, ValueError):  # missing, a name too long, a symlink loop
            return None
        if real != root and not real.startswith(root + os.sep):
            return None  # a symlink that leaves the site
        return Path(real)

    def _generation(self) -> str:
        """The tree the site link points at now (looked up at most once a second)."""
        now = time.monotonic()
        if self._root_checked is None or now - self._root_checked > 1.0:
            self._real_root = os.path.realpath(self.root)
            self._root_checked = now
        return self._real_root

    def _file(self, path: Path, headers: Mapping[str, str], extra=()):
        stat = path.stat()
        etag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"'
        modified = formatdate(stat.st_mtime, usegmt=True)
        common = (("ETag", etag), ("Last-Modified", modified), *extra)
        if _not_modified(headers, etag, stat.st_mtime):
            return Response(304, common, b"")
        data = (
            path.read_bytes() if stat.st_size <= WHOLE_FILE_BYTES else FileBody(path, stat.st_size)
        )
        return Response(
            200,
            common
            + (("Content-Type", content_type(path.name)), ("Content-Length", str(len(data)))),
            data,
        )


def _not_modified(headers: Mapping[str, str], etag: str, mtime: float) -> bool:
    match = headers.get("if-none-match")
    if match is not None:
        return match.strip() == "*" or etag in [tag.strip() for tag in match.split(",")]
    since = headers.get("if-modified-since")
    if since is None:
        return False
    try:
        return int(mtime) <= parsedate_to_datetime(since).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
