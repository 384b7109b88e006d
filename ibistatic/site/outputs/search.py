"""``search/``: the static search over every item (ibistatic.search), its page, and the
list of every item in pages of :data:`LIST_SIZE`, readable without JavaScript.  Results
and list rows link to the items' record pages (``record/<repository key>/``)."""

from __future__ import annotations

from collections.abc import Iterator

from ...search.documents import Document, documents
from ...search.index import search_files
from ...store.files import File
from ..pages import script_json

FOLDER = "search/"
#: where a result links, relative to the site ("{}": the repository key)
RECORD_LINK = "record/{}/"
#: items per page of the list
LIST_SIZE = 1000


class Search:
    name = "search"
    pages = False
    remembered = False

    def files(self, plan, context) -> Iterator[File]:
        holdings = {key: [item for item, _ in rows] for key, rows in context.state.items.items()}
        docs = documents(holdings)
        for relative, text in search_files(docs, RECORD_LINK).items():
            yield File(FOLDER + relative, text)
        yield File(FOLDER + "index.html", search_page(context.site, len(docs)))
        yield from _list_pages(context.site, docs)


def search_page(site, count: int) -> str:
    config = script_json({"index": f"{site.base}{FOLDER}", "links": site.base})
    return _render(
        site,
        "search.html",
        config=config,
        documents=count,
        list_link=_list_link(site, 1),
        action=f"{site.base}{FOLDER}",
    )


def _list_link(site, number: int) -> str:
    return f"{site.base}{FOLDER}list/{number}/"


def _list_pages(site, docs: list[Document]) -> Iterator[File]:
    newest = docs[::-1]
    count = max(1, -(-len(newest) // LIST_SIZE))
    for number in range(1, count + 1):
        start = (number - 1) * LIST_SIZE
        shown = newest[start : start + LIST_SIZE]
        text = _render(
            site,
            "search_list.html",
            docs=shown,
            number=number,
            count=count,
            first=start + 1 if shown else 0,
            last=start + len(shown),
            documents=len(newest),
            link=lambda doc: RECORD_LINK.format(doc.path_key),
        )
        yield File(f"{FOLDER}list/{number}/index.html", text)


def _render(site, name: str, **context) -> str:
    return site.env.get_template(name).render(base=site.base, site_url=site.site_url, **context)


OUTPUT = Search()
