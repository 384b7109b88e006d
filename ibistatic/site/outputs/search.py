"""``search/``: the static search over every item (ibistatic.search), its page, and the
list of every item (oldest first) in pages of :data:`LIST_SIZE`, readable without
JavaScript, in the site's language.  Results and list rows link to the items' record pages
(``record/<repository key>/``)."""

from __future__ import annotations

from collections.abc import Iterator

from ...search.documents import Document
from ...search.index import SearchIndex
from ...store.files import File
from ..pages import script_json
from ..script_words import search_words
from ..signposting import record_path

FOLDER = "search/"
#: where a result links, relative to the site ("{}": the repository key)
RECORD_LINK = record_path("{}")  # the record pages (outputs/record_pages.py)
#: items per page of the list
LIST_SIZE = 1000


class Search:
    name = "search"
    pages = False
    remembered = False
    #: the costliest of the forked site outputs
    apart = 4

    def files(self, plan, context) -> Iterator[File]:
        # the search index and the list pages (number -> (documents, pages, text)) kept
        # in the state's memo (site.memo): a republish (watch) redoes what changed
        made = context.state.memo.get(self.name)
        if made is None:
            made = context.state.memo[self.name] = (SearchIndex(RECORD_LINK), {})
        index, list_pages = made
        for relative, text in index.files(context.state.items, _items).items():
            yield File(FOLDER + relative, text)
        yield File(FOLDER + "index.html", search_page(context.site, len(index.documents)))
        yield from _list_pages(context.site, index.documents, list_pages)


def _items(held: tuple) -> tuple:
    """The items of a repository as the state holds them: ((item, files), ...)."""
    return tuple(item for item, _ in held)


def search_page(site, count: int) -> str:
    words = search_words(site.language)  # what search.js writes, in the site's language
    config = script_json({"index": f"{site.base}{FOLDER}", "links": site.base, "words": words})
    return site.render(
        "search.html",
        config=config,
        documents=count,
        list_link=_list_link(site, 1),
        action=f"{site.base}{FOLDER}",
    )


def _list_link(site, number: int) -> str:
    return f"{site.base}{FOLDER}list/{number}/"


def _list_pages(site, docs: list[Document], made: dict) -> Iterator[File]:
    """The list, oldest first: a deposit (the newest item) changes its last page only,
    and a page whose items are the same objects as last time is not rendered again."""
    count = max(1, -(-len(docs) // LIST_SIZE))
    for number in range(1, count + 1):
        start = (number - 1) * LIST_SIZE
        shown = docs[start : start + LIST_SIZE]
        last = made.get(number)
        if last is None or last[1] != count or not _same(last[0], shown):
            text = site.render(
                "search_list.html",
                docs=shown,
                number=number,
                count=count,
                first=start + 1 if shown else 0,
                last=start + len(shown),
                documents=len(docs),
                link=lambda doc: RECORD_LINK.format(doc.path_key),
            )
            last = made[number] = (shown, count, text)
        yield File(f"{FOLDER}list/{number}/index.html", last[2])
    for number in [n for n in made if n > count]:
        del made[number]


def _same(these: list, those: list) -> bool:
    return len(these) == len(those) and all(a is b for a, b in zip(these, those))


OUTPUT = Search()
