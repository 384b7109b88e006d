"""What the search knows of an IBI: a :class:`Document` made from the items holding it.

One document per repository key, described by its *representative* item (the first
Original, else the first live copy, else the first holder, in the Archives' order).
Pure: no I/O.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from ..core.facts import URL_PATH_SAFE
from ..core.model import Item
from .tokens import ibi_token, words, year_of

__all__ = ["Document", "DocumentCache", "representative", "document_of", "documents"]

#: Dublin Core elements whose words are searched (the title is always)
SEARCHED_ELEMENTS = ("title", "creator", "subject")
#: creators shown with a result (the rest are searched, not shown)
SHOWN_CREATORS = 3


@dataclass(frozen=True, slots=True)
class Document:
    """One result: what is shown of it, where it links, and the tokens that find it."""

    key: str  # the repository key: documents are ordered by (timestamp, key)
    timestamp: str
    title: str
    ibi: str  # the IBI shown: the IBIp when there is one, else the repository name
    year: str
    creators: tuple[str, ...]
    state: str
    #: sorted, each token one string object shared by every document holding it: a
    #: frozenset and a copy of each word per document were much of a large build's memory
    tokens: tuple[str, ...]

    @property
    def path_key(self) -> str:
        """The repository key as a URL path writes it."""
        return quote(self.key, safe=URL_PATH_SAFE)

    def shown(self) -> list:
        """The document as the result list reads it (see search.js)."""
        return [
            self.path_key,
            self.title,
            self.ibi,
            self.year,
            list(self.creators[:SHOWN_CREATORS]),
            self.state,
        ]


def representative(items: Sequence[Item]) -> Item:
    """The item that describes an IBI held by several Archives (*items* in their order)."""
    if items[0].state == "Original":
        return items[0]  # the common case, first
    for wanted in (lambda i: i.state == "Original", lambda i: i.state != "Deleted"):
        found = next((item for item in items if wanted(item)), None)
        if found is not None:
            return found
    return items[0]


def _values(item: Item, element: str) -> list[str]:
    return [value for key, values in item.dublin_core if key == element for value in values]


def _ibi_words(item: Item) -> set[str]:
    """The IBIs whole, the IBIp's two parts, and the repository name's words but those
    of its last part (``01.02.03.04``: four numbers every item has, found whole instead)."""
    tokens = {ibi_token(item.repository.text)}
    tokens |= words(item.repository.text.split("/")[:-1])
    if item.ibip is not None:
        tokens.add(ibi_token(item.ibip.text))
        tokens |= words([item.ibip.text])
    return tokens


def document_of(key: str, items: Sequence[Item]) -> Document:
    """The document of the IBI *key* held as *items*."""
    item = representative(items)
    title = item.title() or item.repository.text
    year = item.timestamp[:4]
    searched = [text for element in SEARCHED_ELEMENTS for text in _values(item, element)]
    years = {year} | {y for y in map(year_of, _values(item, "date")) if y}
    tokens = words(searched + [title]) | _ibi_words(item) | years
    return Document(
        key=key,
        timestamp=item.timestamp,
        title=title,
        ibi=(item.ibip or item.repository).text,
        year=year,
        creators=tuple(_values(item, "creator")),
        state=item.state,
        tokens=tuple(sorted(map(sys.intern, tokens))),
    )


class DocumentCache:
    """The documents of the last call, by key with the items they were made from: a
    rebuild (watch, an update) makes again only those of the items that changed, and
    moves only those in the order."""

    def __init__(self) -> None:
        #: key -> (what `holdings` gave, its items, its document)
        self._made: dict[str, tuple[object, tuple[Item, ...], Document]] = {}
        self._sorted: list[Document] = []

    def documents(self, holdings: Mapping[str, Iterable[Item]], items_of=tuple) -> list[Document]:
        """A document per key of `holdings`, oldest first; `items_of` turns a value of
        `holdings` into its items (a tuple).  A tuple given again is known unchanged
        without a look inside (a build's state keeps the same tuple for an unchanged item)."""
        made: dict[str, tuple[object, tuple[Item, ...], Document]] = {}
        fresh: list[Document] = []
        for key, source in holdings.items():
            last = self._made.get(key)
            if last is not None and last[0] is source and isinstance(source, tuple):
                made[key] = last
                continue
            items = items_of(source)
            if last is not None and _same(last[1], items):
                made[key] = (source, items, last[2])
            else:
                made[key] = (source, items, document_of(key, items))
                fresh.append(made[key][2])
        left = [  # the documents of the keys gone or made again
            doc
            for key, (_, _, doc) in self._made.items()
            if key not in made or made[key][2] is not doc
        ]
        self._made = made
        self._sorted = _moved(self._sorted, left, fresh)
        return self._sorted


def _order(doc: Document) -> tuple[str, str]:
    return (doc.timestamp, doc.key)


def _moved(docs: list[Document], left: list[Document], fresh: list[Document]) -> list[Document]:
    """`docs` (oldest first) without `left`, with `fresh`: the same list object when
    nothing changed, else a new one, by bisection when the change is small."""
    if not left and not fresh:
        return docs
    if len(left) + len(fresh) > 1000:
        kept = {id(doc) for doc in left}
        return sorted([d for d in docs if id(d) not in kept] + fresh, key=_order)
    docs = list(docs)
    for doc in left:
        del docs[bisect.bisect_left(docs, _order(doc), key=_order)]
    for doc in fresh:
        bisect.insort(docs, doc, key=_order)
    return docs


def _same(these: tuple[Item, ...], those: tuple[Item, ...]) -> bool:
    """Equal items; a rebuild passes the very objects of the unchanged ones, which is
    quicker to tell."""
    if len(these) == len(those) and all(a is b for a, b in zip(these, those)):
        return True
    return these == those


def documents(holdings: Mapping[str, Iterable[Item]], cache: DocumentCache | None = None):
    """A document per repository key of *holdings* (key -> items in the Archives'
    order), oldest first: a deposit (the newest item) is added at the end, so the
    search files of the other items mostly keep their bytes."""
    return (cache or DocumentCache()).documents(holdings)
