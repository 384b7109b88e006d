"""What the static site publishes: one persistent URL per IBI form and emitted modifier,
each with the answer the resolver gives for it (so the site agrees with ``resolve``).
"""

from __future__ import annotations

import marshal
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from .archive.load import LoadedArchives
from .core.facts import FORMATS
from .core.identifiers import ibi_key
from .core.model import Item
from .core.properties import ArchiveView
from .core.relations import (
    METADATA,
    TABLE_6_2,
    TRANSLATION,
    Relation,
    Step,
    modifier_text,
    parse_modifier,
    relation_to_verb_list,
)
from .core.resolution import Resolution, ResolutionMemo, resolve, shared_memo

__all__ = [
    "DEFAULT_MODIFIERS",
    "PageTarget",
    "PublishedUrl",
    "PublishedUrls",
    "ListLike",
    "all_modifiers",
    "published_urls",
    "emitted_modifiers",
    "page_targets",
    "item_languages",
]

#: Emitted by default for every IBI form: the bare URL, the last edition, the two
#: metadata forms and the last edition's Dublin Core (the standard's own example);
#: everything else is answered by 404.html in the browser.
DEFAULT_MODIFIERS = ("", "!", ":", ":(oai_dc)", "!:(oai_dc)")


@dataclass(frozen=True, slots=True)
class PageTarget:
    path: str  # after the site URL, not percent-encoded: '8JMKD3MGP8W/35MMLL8!:(oai_dc)'
    ibi: str  # the IBI as written (repository path on disk, or the ibip of item.yaml)
    modifier: str  # '!:(oai_dc)'; '' for the bare URL
    item: Item  # the item as the first Archive holding it describes it
    resolution: Resolution  # without Accept-Language
    #: for modifiers with a language-less '+': language tag -> resolution when that
    #: language is the browser's preference (the browser picks; `resolution` is the fallback)
    negotiation: tuple[tuple[str, Resolution], ...] = field(default=())


class PublishedUrl(NamedTuple):
    """What the site-wide files (host redirect files, sitemap, landing page) need of a
    page target once its page is written: a plain tuple, so that a large site's build
    keeps these and not every target's item and resolution."""

    ibi: str  # as written
    modifier: str
    canonical: str  # the canonical case of `ibi` (repository name lower case, IBIp upper case)
    url: str | None  # where the persistent URL leads without Accept-Language; None for an alert
    alert: str | None

    @property
    def path(self) -> str:
        """As PageTarget.path (made when asked: one string less to keep per URL)."""
        return self.ibi + self.modifier


def form_key(item: Item, ibi: str) -> str:
    """The canonical key of `ibi`, one of `item`'s IBIs as written: the key of that form,
    parsed again only when it is neither (a parse per persistent URL was seconds of a
    large build)."""
    for form in (item.repository, item.ibip):
        if form is not None and form.text == ibi:
            return form.key
    return ibi_key(ibi)


class ListLike(Sequence):
    """A compact sequence that compares and prints as the list of its elements (equal to
    any sequence but a string of the same elements; unhashable, as a list)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class PublishedUrls(ListLike, Sequence[PublishedUrl]):
    """One item's PublishedUrls, packed (marshal): the state holds one per repository
    and a build holds them all, where a tuple of PublishedUrl tuples per item made
    them the largest of the state's tables.  They
    are unpacked as read: all of them by the sitemap and host files of a full build
    (forked), those of the items that changed by a republish (site.memo)."""

    __slots__ = ("_packed", "_count")

    def __init__(self, urls: Iterable[PublishedUrl]) -> None:
        # the modifiers interned: unpacked, each is one string over the site
        # (marshal takes exact tuples only, not the PublishedUrl subclass)
        rows = tuple((u.ibi, sys.intern(u.modifier), u.canonical, u.url, u.alert) for u in urls)
        self._packed = marshal.dumps(rows)  # equal strings of the item packed once
        self._count = len(rows)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[PublishedUrl]:
        return map(PublishedUrl._make, marshal.loads(self._packed))

    def __getitem__(self, index):  # an int, or a slice (Sequence)
        return tuple(self)[index]

    def __reduce__(self):
        return _packed_urls, (self._packed, self._count)


def _packed_urls(packed: bytes, count: int) -> PublishedUrls:
    """A PublishedUrls as pickled (its packed bytes, trusted: the state is sealed)."""
    urls = PublishedUrls.__new__(PublishedUrls)
    urls._packed, urls._count = packed, count
    return urls


def published_urls(targets: Sequence[PageTarget]) -> PublishedUrls:
    """The PublishedUrls of one item's `targets`, its equal URLs as one string: a large
    site keeps millions of these, and an item's bare URL and its ``!`` lead to one URL.
    (Its IBI's canonical form is its key, the same string when written canonically.)"""
    urls: dict[str | None, str | None] = {}
    published = []
    for target in targets:
        url, alert = target.resolution.url, target.resolution.alert
        canonical = form_key(target.item, target.ibi)
        published.append(
            PublishedUrl(target.ibi, target.modifier, canonical, urls.setdefault(url, url), alert)
        )
    return PublishedUrls(published)


def item_languages(item: Item) -> list[str]:
    tags = {tag for tag, _ in item.translations}
    if item.language:
        tags.add(item.language)
    return sorted(tags)


#: The shapes of `modifiers: all`: the bare URL, then Table 6.2 in its order.
_SHAPES = [()] + [tuple(step.kind for step in parse_modifier(text)) for text, _ in TABLE_6_2]


def all_modifiers(languages: Sequence[str]) -> list[Relation]:
    """`modifiers: all` for an item in `languages`: every shape of Table 6.2, its
    metadata bare or ``(oai_dc)``, its translations either all bare (the browser's
    language, negotiated in the page) or all in one of `languages`.

    So the pages of an item grow linearly with its languages, 25 + 19 per language
    (the shapes with two translations, ``!+:+``, ``+:+``, ``+!:+``, would give
    (languages + 1)² pages each if every pair were emitted); a modifier that mixes two
    languages, such as ``+(pt):+(en)``, is answered by 404.html in the browser.
    """
    result: list[Relation] = []
    for shape in _SHAPES:
        tongues = (None, *languages) if TRANSLATION in shape else (None,)
        formats = (None, *FORMATS) if METADATA in shape else (None,)
        for tongue in tongues:
            for form in formats:
                params = {TRANSLATION: tongue, METADATA: form}
                result.append(tuple(Step(kind, params.get(kind)) for kind in shape))
    return result


def emitted_modifiers(setting, item: Item) -> list[Relation]:
    """The modifiers emitted for `item`: 'default', 'all' (see all_modifiers) or an
    explicit list."""
    if setting == "all":
        return all_modifiers(item_languages(item))
    return list(_parsed(DEFAULT_MODIFIERS if setting == "default" else tuple(setting)))


@lru_cache(maxsize=16)
def _parsed(texts: tuple[str, ...]) -> tuple[Relation, ...]:
    """The modifiers `texts` parsed once per build, not once per item."""
    return tuple(parse_modifier(text) for text in texts)


@lru_cache(maxsize=1024)
def _verbs(relation: Relation):
    """The verb list of `relation` (checked once, then shared by every item)."""
    return relation_to_verb_list(relation)


def _has_open_translation(relation: Relation) -> bool:
    return any(step.kind == "translation" and step.param is None for step in relation)


def _negotiate(
    views: Sequence[ArchiveView],
    item: Item,
    relation: Relation,
    languages: list[str],
    memo: ResolutionMemo,
):
    """The resolution of `relation` for each of `languages` as the browser's preference:
    the Archives' answers are those of one resolution (the memo's), only the choice of
    language differs."""
    verbs = _verbs(relation)
    return tuple(
        (tag, resolve(views, item.repository, verbs, languages=[tag], memo=memo))
        for tag in languages
    )


def page_targets(
    loaded: LoadedArchives,
    setting="default",
    views: Sequence[ArchiveView] | None = None,
    first_holders: Sequence[Item] | None = None,
) -> Iterator[PageTarget]:
    """Every emitted persistent URL, in a stable order (by repository key, form, modifier);
    with `first_holders`, those of these items only (each as the first Archive holding
    it has it)."""
    views = views if views is not None else loaded.views()
    # the resolutions of the build share their walks: item k of an edition chain
    # reuses item k+1's, so that a chain costs one walk along it, not one per edition
    memo = shared_memo(views)
    if first_holders is None:
        first_holder: dict[str, Item] = {}
        for item in loaded.holdings.all_items():
            first_holder.setdefault(item.key, item)
    else:
        first_holder = {item.key: item for item in first_holders}
    for key in sorted(first_holder):
        item = first_holder[key]
        forms = [item.repository.text] + ([item.ibip.text] if item.ibip else [])
        for relation in emitted_modifiers(setting, item):
            verbs = _verbs(relation)
            resolution = resolve(views, item.repository, verbs, memo=memo)
            negotiation = (
                _negotiate(views, item, relation, item_languages(item), memo)
                if _has_open_translation(relation)
                else ()
            )
            modifier = sys.intern(modifier_text(relation))  # one string per site, not per URL
            for ibi in forms:
                yield PageTarget(ibi + modifier, ibi, modifier, item, resolution, negotiation)
        memo.answers.clear()  # the answers are shared by one item's resolutions only
