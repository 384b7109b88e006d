"""The static search's files, from its documents (docs/site.md, "Search").

``index.json`` names the token files: each holds the posting lists of a run of tokens
in sorted order, so the script finds a token's file by a binary search over their
first tokens, and a prefix's files as a short range.  ``d/<n>.json`` holds what the
results show of documents ``32n`` to ``32n+31``.  A query therefore reads the small
``index.json``, one to three token files and one document file per result shown, at
every size of site.

A posting list is the numbers of the documents holding the token, written as the gaps
between them; a token held by more than half of the documents is written as the
documents *not* holding it (flag ``1``), so no list is longer than half the site.
Token files are cut where a token's hash says so (content-defined, as rsync and backup
tools cut), so a deposit changes the files of its own tokens, not every file after
them.  Pure: no I/O; the output is deterministic.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import operator
import zlib
from collections.abc import Iterable, Iterator, Mapping

from ..core.model import Item
from .documents import Document, DocumentCache

__all__ = [
    "FORMAT",
    "VERSION",
    "INDEX_FILE",
    "DOCUMENTS_PER_FILE",
    "SearchIndex",
    "search_files",
]

FORMAT = "ibistatic-search"
VERSION = 1
INDEX_FILE = "index.json"
DOCUMENTS_PER_FILE = 32
#: the size a token file aims at, and the most it holds but for one very long list
TARGET_BYTES = 16_000
MAX_BYTES = 4 * TARGET_BYTES


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _script_order(token: str) -> bytes:
    """Sorting as JavaScript compares strings: by UTF-16 code units."""
    return token.encode("utf-16-be")


def _entry(token: str, numbers: list[int], negated: bool, total: int) -> str:
    """``[token, gaps]``, or ``[token, gaps, 1]`` for the documents without it."""
    if negated:
        held = set(numbers)
        numbers = [n for n in range(total) if n not in held]
    gaps = ",".join(map(str, map(operator.sub, numbers, itertools.chain((0,), numbers))))
    return f"[{_dumps(token)},[{gaps}]{',1' if negated else ''}]"


def _chunks(entries: list[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    """*entries* (token, JSON) cut where a token's hash is 0 modulo a spacing chosen
    for TARGET_BYTES, or where a file would pass MAX_BYTES."""
    size = sum(len(text) for _, text in entries)
    spacing = max(1, round(TARGET_BYTES * len(entries) / max(size, 1)))
    spacing = 1 << max(0, spacing.bit_length() - 1)  # a power of two: it changes seldom
    chunk: list[tuple[str, str]] = []
    chunk_bytes = 0
    for token, text in entries:
        if chunk and chunk_bytes + len(text) > MAX_BYTES:
            yield chunk
            chunk, chunk_bytes = [], 0
        chunk.append((token, text))
        chunk_bytes += len(text) + 1
        if zlib.crc32(token.encode()) % spacing == 0:
            yield chunk
            chunk, chunk_bytes = [], 0
    if chunk:
        yield chunk


def _chunk_name(first: str) -> str:
    return hashlib.sha256(first.encode("utf-8")).hexdigest()[:16]


class SearchIndex:
    """Makes the search files of a site, and keeps what it made: the next call (an
    update, watch) redoes the documents, lists and files that changed, and when the
    only change is new items (the newest, as a deposit is) adds them to the lists."""

    def __init__(self, link: str) -> None:
        self.link = link  # where a result links, "{}" for its key ("record/{}/")
        self._cache = DocumentCache()
        self._docs: list[Document] = []
        self._postings: dict[str, list[int]] = {}
        self._order: list[str] = []  # the tokens in the script's order
        #: token -> (length of its list, negated, documents, its JSON): lists only grow
        #: between calls that keep them, so an equal length is an unchanged list
        self._entries: dict[str, tuple[int, bool, int, str]] = {}
        self._doc_files: dict[int, tuple[list[Document], str]] = {}

    @property
    def documents(self) -> list[Document]:
        """The documents of the last call, oldest first."""
        return self._docs

    def files(self, holdings: Mapping[str, Iterable[Item]]) -> dict[str, str]:
        """Every file of the search: ``{path relative to the search folder: text}``."""
        docs = self._cache.documents(holdings)
        self._index(docs)
        files: dict[str, str] = {}
        chunks = []
        for chunk in _chunks(self._entry_texts(len(docs))):
            name = _chunk_name(chunk[0][0])
            files[f"t/{name}.json"] = "[" + ",".join(text for _, text in chunk) + "]\n"
            chunks.append([chunk[0][0], name])
        files.update(self._document_files(docs))
        head = {"format": FORMAT, "version": VERSION, "documents": len(docs)}
        head.update({"per-file": DOCUMENTS_PER_FILE, "link": self.link, "chunks": chunks})
        files[INDEX_FILE] = _dumps(head) + "\n"
        return files

    def _index(self, docs: list[Document]) -> None:
        """The posting lists of *docs*: those of the last call extended when *docs*
        only adds documents at its end, else made again."""
        old = self._docs
        appended = len(docs) >= len(old) and all(a is b for a, b in zip(old, docs))
        if not appended:
            old, self._postings, self._entries = [], {}, {}
        new_tokens = []
        for number in range(len(old), len(docs)):
            for token in docs[number].tokens:
                numbers = self._postings.get(token)
                if numbers is None:
                    numbers = self._postings[token] = []
                    new_tokens.append(token)
                numbers.append(number)
        if not appended or len(new_tokens) > 1000:
            self._order = sorted(self._postings, key=_script_order)
        else:
            for token in new_tokens:
                bisect.insort(self._order, token, key=_script_order)
        self._docs = list(docs)

    def _entry_texts(self, total: int) -> list[tuple[str, str]]:
        """(token, its JSON) in order; an unchanged list keeps its text."""
        made = []
        entries: dict[str, tuple[int, bool, int, str]] = {}
        for token in self._order:
            numbers = self._postings[token]
            negated = 2 * len(numbers) > total
            last = self._entries.get(token)
            if (
                last is None
                or last[:2] != (len(numbers), negated)
                or (negated and last[2] != total)
            ):
                last = (len(numbers), negated, total, _entry(token, numbers, negated, total))
            entries[token] = last
            made.append((token, entries[token][3]))
        self._entries = entries
        return made

    def _document_files(self, docs: list[Document]) -> dict[str, str]:
        files = {}
        made = {}
        for number, start in enumerate(range(0, len(docs), DOCUMENTS_PER_FILE)):
            part = docs[start : start + DOCUMENTS_PER_FILE]
            last = self._doc_files.get(number)
            if (
                last is None
                or len(last[0]) != len(part)
                or any(a is not b for a, b in zip(last[0], part))
            ):
                last = (part, _dumps([doc.shown() for doc in part]) + "\n")
            made[number] = last
            files[f"d/{number}.json"] = last[1]
        self._doc_files = made
        return files


def search_files(holdings: Mapping[str, Iterable[Item]], link: str) -> dict[str, str]:
    """Every file of the search of *holdings* (repository key -> its items in the
    Archives' order), made afresh; *link* is where a result links, ``{}`` standing for
    its repository key (``record/{}/``), relative to the page's ``links`` base."""
    return SearchIndex(link).files(holdings)
