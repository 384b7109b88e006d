"""The offline resolver's Python API: open an index once, resolve many persistent URLs.

>>> from ibistatic.resolver import Resolver
>>> resolver = Resolver("site")                      # a built site or its index/ folder
>>> resolver.resolve("https://ibi.example.org/8JMKD3MGP8W/35MMLL8!:(oai_dc)").url
'http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .core.languages import parse_accept_language
from .core.properties import ArchiveView
from .core.resolution import Resolution, resolve
from .core.urls import PersistentUrl, parse_persistent_url
from .index.reader import Index

__all__ = ["Resolver", "Resolution", "resolve_url"]


class Resolver:
    """Resolution (ibi-spec.md §8) over a built JSON index, with no network."""

    def __init__(self, index: Index | Path | str) -> None:
        self.index = index if isinstance(index, Index) else Index(index)

    @property
    def views(self) -> Sequence[ArchiveView]:
        return self.index.views()

    def reload_if_changed(self) -> bool:
        """Re-open the index when a build replaced it (the swap is atomic)."""
        if self.index.changed():
            self.index = Index(self.index.path)
            return True
        return False

    def resolve(self, url: str | PersistentUrl, accept_language: str | None = None, client_ip: str | None = None) -> Resolution:
        """Resolve a persistent URL, or a bare IBI with modifiers, path and query.

        `client_ip` is accepted for the standard's clientinformation.ipaddress; the URLs
        ibistatic precomputes do not depend on it.
        """
        parsed = url if isinstance(url, PersistentUrl) else parse_persistent_url(url)
        return resolve_url(self.views, parsed, accept_language)


def resolve_url(views: Sequence[ArchiveView], parsed: PersistentUrl, accept_language: str | None = None) -> Resolution:
    languages = [tag for tag, q in parse_accept_language(accept_language) if q > 0 and tag != "*"] if accept_language else []
    return resolve(
        views, parsed.ibi, parsed.verbs,
        filepath=parsed.filepath, required_status=parsed.required_status, languages=languages,
    )
