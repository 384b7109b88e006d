"""The offline resolver's Python API: open an index once, resolve many persistent URLs.

>>> from ibistatic.resolver import Resolver
>>> resolver = Resolver("site")                      # a built site or its index/ folder
>>> resolver.resolve("https://ibi.example.org/8JMKD3MGP8W/35MMLL8!:(oai_dc)").url
'http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc'

A URL whose IBI and modifier the build precomputed (the page targets: bare, ``!``,
``:``, ``:(oai_dc)`` by default) is answered from the index's ``answers/`` shard with no
resolution at all; anything else (other modifiers, file paths, queries, ``+`` with
Accept-Language) goes through the resolution process over the item records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from .core.facts import PRECOMPUTED_PATTERN
from .core.outcome import Resolution, from_row
from .index.reader import Index
from .index.sharding import canonical_key
from .lru import LruCache

__all__ = ["Resolver", "Resolution", "resolve_url"]

_PRECOMPUTED = re.compile(PRECOMPUTED_PATTERN)


class Resolver:
    """Resolution (the resolution report §6.2 and §8) over a built JSON index, with no network."""

    #: answers kept for repeated lookups (cleared when the index is replaced): at most
    #: so many, and so many bytes (estimated: the characters they hold, see _memo_cost)
    MEMO_ENTRIES = 65536
    MEMO_BYTES = 64 * 1024 * 1024

    def __init__(
        self,
        index: Index | Path | str,
        *,
        memo_entries: int | None = None,
        memo_bytes: int | None = None,
    ) -> None:
        self.index = index if isinstance(index, Index) else Index(index)
        self._memo: LruCache[tuple[str, str | None], Resolution] = LruCache(
            memo_entries or self.MEMO_ENTRIES, memo_bytes or self.MEMO_BYTES, _memo_cost
        )

    @property
    def views(self) -> Sequence:
        return self.index.views()

    def reload_if_changed(self) -> bool:
        """Re-open the index when a build replaced it (the swap is atomic)."""
        if self.index.changed():
            self.index = self.index.reopened()
            self._memo.clear()
            return True
        return False

    def resolve(
        self, url, accept_language: str | None = None, client_ip: str | None = None
    ) -> Resolution:
        """Resolve a persistent URL, or a bare IBI with modifiers, path and query.

        `client_ip` is accepted for the standard's clientinformation.ipaddress; the URLs
        ibistatic precomputes do not depend on it.
        """
        if isinstance(url, str):
            answer = self.precomputed(url)
            if answer is not None:
                return answer
        from .core.urls import PersistentUrl, parse_persistent_url

        if isinstance(url, PersistentUrl):
            return resolve_url(self.views, url, accept_language)
        memo_key = (url, accept_language)
        result = self._memo.get(memo_key)
        if result is None:
            result = resolve_url(
                self.views, parse_persistent_url(_iri_to_uri(url)), accept_language
            )
            self._memo.put(memo_key, result)
        return result

    def precomputed(self, url: str) -> Resolution | None:
        """The build's answer for `url`, when it is one of the precomputed forms."""
        match = _PRECOMPUTED.fullmatch(url)
        if match is None:
            return None
        ibi = match["ibi"]
        modifier = match["modifier"] or ""
        row = self.index.answers(canonical_key(ibi)).get(modifier)
        return from_row(row, ibi, _modifier_steps(modifier)) if row is not None else None


#: what a kept answer costs beyond its strings (the objects that hold them)
_MEMO_OVERHEAD = 512


def _memo_cost(key: tuple[str, str | None], result: Resolution) -> int:
    """The bytes a memo entry holds, estimated from its strings (ASCII, mostly)."""
    url, language = key
    strings = (result.url, result.message, result.relation, result.ibi, *result.chain)
    return (
        _MEMO_OVERHEAD
        + len(url)
        + len(language or "")
        + sum(len(text) for text in strings if text)
        + 64 * len(result.asked)
    )


@lru_cache(maxsize=1024)
def _modifier_steps(modifier: str):
    """The steps of a precomputed answer's modifier (a handful of spellings per site)."""
    from .core.relations import parse_modifier

    return parse_modifier(modifier)


def _iri_to_uri(text: str) -> str:
    """Percent-encode spaces and non-ASCII (as UTF-8), as a browser does before sending
    a URL typed with them (RFC 3987 §3.1)."""
    if text.isascii() and " " not in text:
        return text
    from urllib.parse import quote

    return quote(text, safe="".join(chr(c) for c in range(0x21, 0x7F)))


def resolve_url(views: Sequence, parsed, accept_language: str | None = None) -> Resolution:
    from .core.languages import parse_accept_language
    from .core.resolution import resolve

    languages = (
        [tag for tag, q in parse_accept_language(accept_language) if q > 0 and tag != "*"]
        if accept_language
        else []
    )
    return resolve(
        views,
        parsed.ibi,
        parsed.verbs,
        filepath=parsed.filepath,
        required_status=parsed.required_status,
        languages=languages,
    )
