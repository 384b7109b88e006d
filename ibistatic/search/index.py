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


def _is_cut(token: str, spacing: int) -> bool:
    """Whether a token file ends after `token` (its hash is 0 modulo `spacing`)."""
    return zlib.crc32(token.encode()) % spacing == 0


def _spacing(tokens: int, size: int) -> int:
    """Tokens between cuts, on average, for files of TARGET_BYTES: a power of two, so
    that it changes seldom."""
    spacing = max(1, round(TARGET_BYTES * tokens / max(size, 1)))
    return 1 << max(0, spacing.bit_length() - 1)


def _chunks(tokens: Iterable[str], texts: Mapping[str, str], spacing: int) -> Iterator[list[str]]:
    """*tokens* (in order) cut where a token's hash is 0 modulo *spacing*, or where a
    file would pass MAX_BYTES; from the first token as from any cut, the same tokens
    give the same files."""
    chunk: list[str] = []
    chunk_bytes = 0
    for token in tokens:
        text = texts[token]
        if chunk and chunk_bytes + len(text) > MAX_BYTES:
            yield chunk
            chunk, chunk_bytes = [], 0
        chunk.append(token)
        chunk_bytes += len(text) + 1
        if _is_cut(token, spacing):
            yield chunk
            chunk, chunk_bytes = [], 0
    if chunk:
        yield chunk


def _chunk_name(first: str) -> str:
    return hashlib.sha256(first.encode("utf-8")).hexdigest()[:16]


class _Chunk:
    """One token file: its tokens in order, its name and its text."""

    __slots__ = ("tokens", "name", "text")

    def __init__(self, tokens: list[str], texts: Mapping[str, str]) -> None:
        self.tokens = tokens
        self.name = _chunk_name(tokens[0])
        self.text = "[" + ",".join(texts[token] for token in tokens) + "]\n"


class SearchIndex:
    """Makes the search files of a site, and keeps what it made: the next call (an
    update, watch) redoes the documents, posting lists, entries and token files that
    changed.  New items at the end of the list (a deposit) and items changed in place
    (an edit that keeps the timestamp) cost their own tokens; a change that moves
    documents (a deletion, a new timestamp) numbers them again, and costs the site."""

    def __init__(self, link: str) -> None:
        self.link = link  # where a result links, "{}" for its key ("record/{}/")
        self._cache = DocumentCache()
        self._docs: list[Document] = []
        self._postings: dict[str, list[int]] = {}
        self._order: list[str] = []  # the tokens in the script's order
        self._texts: dict[str, str] = {}  # token -> its entry's JSON
        self._size = 0  # of every entry's JSON
        self._dirty: set[str] = set()  # tokens whose list changed since their entry was made
        #: tokens that hold, or may soon hold, more than half of the documents: their
        #: entries list the documents without them, which a new total changes
        self._heavy: set[str] = set()
        self._heavy_total = 0  # the total when _heavy was last made whole
        self._chunks: list[_Chunk] = []
        self._spacing = 0
        self._doc_files: dict[int, tuple[list[Document], str]] = {}

    @property
    def documents(self) -> list[Document]:
        """The documents of the last call, oldest first."""
        return self._docs

    def files(self, holdings: Mapping[str, Iterable[Item]], items_of=tuple) -> dict[str, str]:
        """Every file of the search: ``{path relative to the search folder: text}``;
        `items_of` turns a value of `holdings` into its items (a tuple)."""
        docs = self._cache.documents(holdings, items_of)
        total_before = len(self._docs)
        gone = self._index(docs)
        self._entries(len(docs), total_before)
        self._cut(gone)
        files = {f"t/{chunk.name}.json": chunk.text for chunk in self._chunks}
        files.update(self._document_files(docs))
        chunks = [[chunk.tokens[0], chunk.name] for chunk in self._chunks]
        head = {"format": FORMAT, "version": VERSION, "documents": len(docs)}
        head.update({"per-file": DOCUMENTS_PER_FILE, "link": self.link, "chunks": chunks})
        files[INDEX_FILE] = _dumps(head) + "\n"
        return files

    # -- posting lists -------------------------------------------------------------

    def _index(self, docs: list[Document]) -> set[str]:
        """The posting lists of *docs*, from those of the last call when the documents
        kept their numbers; returns the tokens no document holds any longer."""
        old = self._docs
        moved = len(docs) < len(old)
        changed = [] if moved else list(_differing(old, docs))
        if moved or len(changed) > _AGAIN or not old:
            self._start_again()
            old, changed = [], []
        gone: set[str] = set()
        for number in changed:
            before, after = old[number].tokens, docs[number].tokens
            for token in set(before).difference(after):
                self._drop(token, number, gone)
            for token in set(after).difference(before):
                self._add(token, number, gone)
        fresh: list[str] = []  # tokens new to the lists: put in order once, at the end
        for number in range(len(old), len(docs)):
            self._append(number, docs[number].tokens, gone, fresh)
        if len(fresh) > _AGAIN:  # a whole index: one sort, not 200,000 insertions
            self._order = sorted(self._postings, key=_script_order)
        else:
            for token in fresh:
                bisect.insort(self._order, token, key=_script_order)
        self._docs = list(docs)
        return gone

    def _start_again(self) -> None:
        self._postings, self._order, self._texts, self._size = {}, [], {}, 0
        self._dirty, self._heavy, self._heavy_total, self._chunks = set(), set(), 0, []

    def _add(self, token: str, number: int, gone: set[str]) -> None:
        """`number` into the list of `token` (a document changed in place)."""
        numbers = self._postings.get(token)
        if numbers is None:
            numbers = self._postings[token] = []
            bisect.insort(self._order, token, key=_script_order)
            gone.discard(token)  # gone from one document, back with another
        bisect.insort(numbers, number)
        self._dirty.add(token)

    def _append(self, number: int, tokens: tuple[str, ...], gone: set[str], fresh: list) -> None:
        """A document after every other: its number ends each list it joins; a token
        new to the lists goes into `fresh`, for the caller to place in the order."""
        postings = self._postings
        self._dirty.update(tokens)
        for token in tokens:
            numbers = postings.get(token)
            if numbers is None:
                numbers = postings[token] = []
                fresh.append(token)
                gone.discard(token)
            numbers.append(number)

    def _drop(self, token: str, number: int, gone: set[str]) -> None:
        numbers = self._postings[token]
        del numbers[bisect.bisect_left(numbers, number)]
        self._dirty.add(token)
        if not numbers:
            del self._postings[token]
            gone.add(token)
            at = bisect.bisect_left(self._order, _script_order(token), key=_script_order)
            del self._order[at]

    # -- entries -------------------------------------------------------------------

    def _entries(self, total: int, total_before: int) -> None:
        """The JSON entry of each token whose list changed, and of each heavy one when
        the number of documents changed."""
        if not self._heavy_total or abs(total - self._heavy_total) * 8 > self._heavy_total:
            self._heavy = {t for t, numbers in self._postings.items() if 4 * len(numbers) >= total}
            self._heavy_total = max(total, 1)
            self._dirty |= self._heavy
        elif total != total_before:
            self._dirty |= self._heavy
        for token in self._dirty:
            self._size -= len(self._texts.pop(token, ""))
            numbers = self._postings.get(token)
            if numbers is None:
                continue  # gone
            if 4 * len(numbers) >= self._heavy_total:
                self._heavy.add(token)
            text = self._texts[token] = _entry(token, numbers, 2 * len(numbers) > total, total)
            self._size += len(text)

    # -- token files ---------------------------------------------------------------

    def _cut(self, gone: set[str]) -> None:
        """The token files, made again from the first changed one until the cuts fall
        where they fell before."""
        spacing = _spacing(len(self._order), self._size)
        changed = self._dirty | gone
        self._dirty = set()
        if spacing != self._spacing or not self._chunks:
            self._spacing = spacing
            self._chunks = [
                _Chunk(c, self._texts) for c in _chunks(self._order, self._texts, spacing)
            ]
            return
        firsts = [_script_order(chunk.tokens[0]) for chunk in self._chunks]
        reached = sorted(
            {max(0, bisect.bisect_right(firsts, _script_order(t)) - 1) for t in changed}
        )
        made: list[_Chunk] = []
        done = 0  # the old chunks before this one are in `made` or made again
        for number in reached:
            if number < done:
                continue
            made += self._chunks[done:number]
            done = self._redo(number, made)
        self._chunks = made + self._chunks[done:]

    def _redo(self, number: int, made: list[_Chunk]) -> int:
        """The token files from old chunk `number` on, into `made`, until a cut falls
        where an old chunk begins; returns that chunk's number (from a cut on, the same
        tokens give the same files: if a change reached that chunk, it is redone next)."""
        starts = {chunk.tokens[0]: n for n, chunk in enumerate(self._chunks) if n > number}
        first = self._chunks[number].tokens[0]
        at = bisect.bisect_left(self._order, _script_order(first), key=_script_order)
        if number == 0:
            at = 0
        for tokens in _chunks(itertools.islice(self._order, at, None), self._texts, self._spacing):
            made.append(_Chunk(tokens, self._texts))
            at += len(tokens)
            old = starts.get(self._order[at]) if at < len(self._order) else len(self._chunks)
            if old is not None:
                return old
        return len(self._chunks)

    # -- document files ------------------------------------------------------------

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


#: past this many documents changed in place (or tokens new), the posting lists (the
#: token order) are made again whole
_AGAIN = 1000


def _differing(old: list[Document], new: list[Document]) -> Iterator[int]:
    """The numbers whose document is another object in `new` (C loops: 100,000 a call)."""
    return itertools.compress(itertools.count(), map(operator.is_not, old, new))


def search_files(holdings: Mapping[str, Iterable[Item]], link: str) -> dict[str, str]:
    """Every file of the search of *holdings* (repository key -> its items in the
    Archives' order), made afresh; *link* is where a result links, ``{}`` standing for
    its repository key (``record/{}/``), relative to the page's ``links`` base."""
    return SearchIndex(link).files(holdings)
