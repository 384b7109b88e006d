"""Record pages: ``record/<canonical repository key>/index.html`` of every IBI held, in
every state (a deleted item's is its tombstone): the one page that shows everything the
site knows of it (site.record, docs/site.md)."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import i18n, record, signposting
from ..pages import Site, lang_attribute, script_json


class RecordPages:
    name = "record pages"
    pages = True
    remembered = True

    def files(self, plan, context) -> Iterator[File]:
        for key in context.keys:
            items = [item for item, _ in plan.items[key]]
            text = record_page(context.site, context.loaded, key, items, context.urls)
            yield File(signposting.record_path(key) + "index.html", text, owner=key)


def record_page(site: Site, loaded, key: str, items: list, urls_of=None) -> str:
    """The record page of the IBI `key` held as `items`, in the item's language
    (`urls_of`: record.ItemUrls of the build's share)."""
    item = record.representative(items)
    lang = i18n.page_language(item.language, site.language)
    values = record.record_context(site.site_url, loaded, key, items, lang, urls_of)
    return site.render(
        "record.html",
        lang,
        canonical=record.record_url(site.site_url, key),
        signposting=signposting.record_links(site.site_url, item, values["urls"]),
        item_lang=lang_attribute(item.language, lang),
        json_ld=script_json(record.json_ld(site.site_url, values)),
        citation=record.citation_meta(values),
        **values,
    )


OUTPUT = RecordPages()
