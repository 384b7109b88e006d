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

import hashlib
import json
from collections.abc import Iterator, Sequence

from ..index.sharding import fnv1a
from .documents import Document

__all__ = ["FORMAT", "VERSION", "INDEX_FILE", "DOCUMENTS_PER_FILE", "search_files"]

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


def _postings(docs: Sequence[Document]) -> dict[str, list[int]]:
    postings: dict[str, list[int]] = {}
    for number, doc in enumerate(docs):
        for token in doc.tokens:
            postings.setdefault(token, []).append(number)
    return postings


def _entry(token: str, numbers: list[int], total: int) -> str:
    """``[token, gaps]``, or ``[token, gaps, 1]`` for the documents without it."""
    negated = 2 * len(numbers) > total
    if negated:
        held = set(numbers)
        numbers = [n for n in range(total) if n not in held]
    gaps = [b - a for a, b in zip([0] + numbers, numbers)] if numbers else []
    return _dumps([token, gaps, 1] if negated else [token, gaps])


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
        if fnv1a(token) % spacing == 0:
            yield chunk
            chunk, chunk_bytes = [], 0
    if chunk:
        yield chunk


def _chunk_name(first: str) -> str:
    return hashlib.sha256(first.encode("utf-8")).hexdigest()[:16]


def search_files(docs: Sequence[Document], link: str) -> dict[str, str]:
    """Every file of the search: ``{path relative to the search folder: text}``.

    *link* is where a result links, ``{}`` standing for its repository key
    (``record/{}/``), relative to the page's ``links`` base."""
    total = len(docs)
    postings = _postings(docs)
    entries = [
        (token, _entry(token, postings[token], total))
        for token in sorted(postings, key=_script_order)
    ]
    files: dict[str, str] = {}
    chunks = []
    for chunk in _chunks(entries):
        name = _chunk_name(chunk[0][0])
        files[f"t/{name}.json"] = "[" + ",".join(text for _, text in chunk) + "]\n"
        chunks.append([chunk[0][0], name])
    for start in range(0, total, DOCUMENTS_PER_FILE):
        shown = [doc.shown() for doc in docs[start : start + DOCUMENTS_PER_FILE]]
        files[f"d/{start // DOCUMENTS_PER_FILE}.json"] = _dumps(shown) + "\n"
    files[INDEX_FILE] = (
        _dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "documents": total,
                "per-file": DOCUMENTS_PER_FILE,
                "link": link,
                "chunks": chunks,
            }
        )
        + "\n"
    )
    return files
