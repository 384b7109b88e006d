"""What an Archive answers about an IBI: Algorithm 2 (MONTARLISTADEURL), the
FILTRARLISTADEURL routine and Algorithm 1 (MONTARRESPOSTA) of resolution-system §7.

Pure: an :class:`ArchiveView` supplies the Archive's items by key; nothing here reads
files.  The answers are the ones a faithful live Archive would give (resolution-system §7).

How relations are read from descriptors (archive-format.md, last section):

- ``.lastedition``: the item itself when it has no ``next-edition``; otherwise unknown
  (the answer carries ``ibi.nextedition`` instead and the resolver follows it).
- ``.translation(L)``: the item itself when its language is L, else ``translations[L]``;
  a tag L matches L-CC and vice versa when no exact match exists.  After
  ``.metadata(oai_dc)`` the format is kept: the item itself gives the same oai_dc
  file, another item its own ``formats.oai_dc`` file (no URL when it has none).
- ``.translation``: the item itself when its language is not given.
- ``.metadata`` / ``.metadata(oai_dc)``: the ``metadata`` item's target / ``oai_dc``
  format file; with inline ``dublin-core`` instead, the pages ibistatic publishes, with
  no ``ibi`` pair (such metadata has no IBI).

An Archive knows ``ibi<r>`` when its descriptors name the related item, and ``url<r>``,
``state<r>``, ``timestamp<r>``, ``contenttype<r>`` only when that item is stored in it.
The IBI of a related item is written with the forms its reference gives (the requested
item itself with every form it has; an item reached through its own language by its
repository name, as Example 7.2 shows for ``.translation(en)``).
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from ..errors import IbiSyntaxError, UsageError
from .facts import ARCHIVE_FILES, DOC_FOLDER, FORMATS
from .identifiers import Ibi, ibi_key
from .model import (
    DEFAULT_METADATA_URL,
    DEFAULT_OAI_DC_URL,
    ArchiveInfo,
    Item,
    ibi_forms_of,
    quote_path,
    split_query,
)
from .pairlists import Pair, in_charset
from .relations import Relation, Step, VerbList, compositions, parse_verb_list, relation_text

__all__ = [
    "ArchiveView",
    "MemoryArchiveView",
    "Related",
    "RelationAnswer",
    "PropertyList",
    "follow",
    "related_url",
    "item_urls",
    "translation_target",
    "open_relations",
    "property_list",
    "filter_property_list",
    "property_pairs",
    "archive_response",
    "new_urlkey",
    "default_relations",
]


class ArchiveView(Protocol):
    """One Archive as MONTARLISTADEURL sees it."""

    info: ArchiveInfo
    site_url: str

    def item(self, key: str) -> Item | None: ...

    def relations(self) -> tuple[Relation, ...]: ...


@dataclass
class MemoryArchiveView:
    """An ArchiveView over items already in memory (a crawl)."""

    info: ArchiveInfo
    items: Mapping[str, Item]  # every key of every item (both IBI forms)
    site_url: str = ""
    #: the languages its items carry, when counted already (core.census): the default
    #: relations are then made without a look at every item
    languages: frozenset[str] | None = None
    _relations: tuple[Relation, ...] | None = None

    @classmethod
    def of(
        cls, info: ArchiveInfo, items: Iterable[Item], site_url: str = ""
    ) -> "MemoryArchiveView":
        by_key: dict[str, Item] = {}
        for item in items:
            for key in item.keys():
                by_key.setdefault(key, item)
        return cls(info, by_key, site_url)

    def item(self, key: str) -> Item | None:
        return self.items.get(key)

    def relations(self) -> tuple[Relation, ...]:
        if self.info.relations is not None:
            return self.info.relations
        if self._relations is None and self.languages is not None:
            self._relations = _compositions(tuple(sorted(self.languages)))
        if self._relations is None:
            self._relations = default_relations({id(i): i for i in self.items.values()}.values())
        return self._relations


def default_relations(items: Iterable[Item]) -> tuple[Relation, ...]:
    """Every relation of the Table 7.5 grammar over the languages the items carry.

    The default of archive-format.md is "every relation its items can answer"; a
    relation no item answers contributes no pair to any answer, so enumerating the
    grammar over the Archive's own languages gives the same answers.
    """
    languages: set[str] = set()
    for item in items:
        if item.language:
            languages.add(item.language)
        if item.translations:
            languages.update(tag for tag, _ in item.translations)
    return _compositions(tuple(sorted(languages)))


@lru_cache(maxsize=16)
def _compositions(languages: tuple[str, ...]) -> tuple[Relation, ...]:
    """The grammar's relations over `languages` (their parse is most of the cost: each
    watch republish asks again, nearly always for the same languages)."""
    return tuple(compositions(languages, FORMATS))


@dataclass(frozen=True)
class Related:
    """The item a relation leads to, as far as one Archive knows it."""

    forms: tuple[str, ...] | None  # the ibi<r> value; None when it has no IBI
    item: Item | None  # stored in this Archive: its URL, state, timestamp are known
    file: str | None = None  # the file of `item` the relation points at (may carry ?query)
    inline: str | None = None  # 'metadata' | 'oai_dc': ibistatic's page of `owner`'s dublin-core
    owner: Item | None = None
    #: the metadata format reached (`.metadata(oai_dc)`): later steps keep it
    format: str | None = None


def _tag_language(tag: str) -> str:
    return tag.split("-", 1)[0].lower()


def translation_target(item: Item, language: str) -> tuple[str, Ibi | None] | None:
    """Which item is `item`'s translation in `language`: ('self', None), ('ref', IBI) or None.

    An exact tag wins; otherwise a tag L matches L-CC and vice versa.  (A scan of the
    item's tags: for one lookup, cheaper than the table _Tags makes for many.)
    """
    wanted = language.lower()
    candidates: list[tuple[str, Ibi | None]] = []
    if item.language:
        candidates.append((item.language, None))
    candidates += list(item.translations)
    for exact in (True, False):
        for tag, ibi in candidates:
            tag_l = tag.lower()
            if (
                tag_l == wanted
                if exact
                else (tag_l == _tag_language(wanted) or _tag_language(tag_l) == wanted)
            ):
                return ("self", None) if ibi is None else ("ref", ibi)
    return None


class _Tags:
    """An item's language tags, its own (the item itself) first, then its translations',
    looked up by tag: translation_target's answers without a scan each.  The first tag
    (in that order) equal to the wanted one (ignoring case) wins; else the first that is
    the wanted one's language (``pt`` for ``pt-BR``) or whose language the wanted one is
    (``pt-BR`` for ``pt``).  Made once for all the languages asked of one item
    (open_relations), so that asking them all costs as many steps as it has tags."""

    __slots__ = ("tags", "ibis", "exact", "by_language")

    def __init__(self, item: Item) -> None:
        candidates: list[tuple[str, Ibi | None]] = []
        if item.language:
            candidates.append((item.language, None))
        candidates += item.translations
        self.tags = [tag for tag, _ in candidates]
        self.ibis = [ibi for _, ibi in candidates]
        self.exact: dict[str, int] = {}
        self.by_language: dict[str, int] = {}
        for index, tag in enumerate(self.tags):
            tag_l = tag.lower()
            self.exact.setdefault(tag_l, index)
            self.by_language.setdefault(_tag_language(tag_l), index)

    def target(self, language: str) -> tuple[str, Ibi | None] | None:
        wanted = language.lower()
        index = self.exact.get(wanted)
        if index is None:
            near = (self.exact.get(_tag_language(wanted)), self.by_language.get(wanted))
            index = min((i for i in near if i is not None), default=None)
            if index is None:
                return None
        ibi = self.ibis[index]
        return ("self", None) if ibi is None else ("ref", ibi)


def _reference(view: ArchiveView, ibi: Ibi, format: str | None = None) -> Related:
    """The item `ibi` names: its target, or its file of `format` (None if it has none)."""
    target = view.item(ibi.key)
    if target is None:
        return Related(ibi_forms_of(ibi), None, format=format)
    file = target.target if format is None else target.format_file(format)
    return Related(ibi_forms_of(ibi), target, file, format=format)


def _self_by_language(current: Related) -> Related:
    """The item itself reached through its own language: the same file (a metadata
    format reached before is kept), named by its repository name (Example 7.2)."""
    item = current.item
    assert item is not None  # only a held item's language is known
    return Related(ibi_forms_of(item.repository), item, current.file, format=current.format)


def _step(view: ArchiveView, current: Related, step: Step) -> Related | None:
    item = current.item
    if current.inline is not None:
        # Inline metadata has no language and no editions: only `.translation` (itself).
        return current if step.kind == "translation" and step.param is None else None
    if item is None or item.state == "Deleted":
        return None  # the Archive does not hold it: it cannot know what it relates to
    if step.kind == "lastedition":
        return current if item.next_edition is None else None
    if step.kind == "translation":
        if step.param is None:
            return _self_by_language(current) if item.language is None else None
        return _translated(view, current, translation_target(item, step.param))
    if step.kind == "metadata":
        if item.metadata is not None:
            return _reference(view, item.metadata, step.param)
        if item.dublin_core:
            return Related(None, None, inline=step.param or "metadata", owner=item)
        return None
    raise ValueError(f"unknown relation step {step!r}")  # the relation grammar rules this out


def _translated(
    view: ArchiveView, current: Related, found: tuple[str, Ibi | None] | None
) -> Related | None:
    """Where a translation step from `current` leads, its target found (translation_target)."""
    if found is None:
        return None
    # another item in that language: its record of the same format, if it has one
    kind, other = found
    if kind == "self" or other is None:
        return _self_by_language(current)
    return _reference(view, other, current.format)


def follow(view: ArchiveView, item: Item, relation: Relation) -> Related | None:
    """The item `relation` leads to from `item` (requested with every form it has)."""
    current = Related(item.forms(), item, item.target)
    for step in relation:
        after = _step(view, current, step)
        if after is None:
            return None
        current = after
    return current


def open_relations(
    view: ArchiveView, item: Item, steps: Relation
) -> list[tuple[Relation, Related | None]]:
    """The relations a request for `steps` with a translation step without a language
    needs of `item`, on an Archive with the default relation set (every relation of the
    grammar over its languages), each with where it leads (follow): the prefixes of
    `steps` before that step, and each relation of the set the longer prefixes name,
    with a language for each such step, that `item` can follow to the end.

    The relations of the set the longer prefixes name and `item` cannot follow have no
    answer, so the property list is the one of all of them.  They are found by following
    the languages of the items reached, not by trying each relation of the set: the set
    grows with the square of the Archive's languages, and this with the item's own."""
    first = next(
        n for n, step in enumerate(steps) if step.kind == "translation" and step.param is None
    )
    found = [(steps[:n], follow(view, item, steps[:n])) for n in range(first + 1)]
    languages = _set_languages(view)
    if not all(_in_set(step, languages) for step in steps[:first]):
        return found  # the set has no relation with these steps
    last_relation, last = found[-1]
    level: list[tuple[Relation, Related]] = [(last_relation, last)] if last is not None else []
    for step in steps[first:]:
        if not _in_set(step, languages):
            break
        reached: list[tuple[Relation, Related]] = []
        for relation, current in level:
            after = _step(view, current, step)
            if after is not None:
                reached.append(((*relation, step), after))
            if step.kind == "translation" and step.param is None:
                for tag, target in _translations(current, languages):
                    after = _translated(view, current, target)
                    if after is not None:
                        reached.append(((*relation, Step(step.kind, tag)), after))
        found.extend(reached)
        level = reached
    return found


class _SetLanguages:
    """The parameters of an Archive's relation set: its languages, by their lower-case
    form and by their language part, and its metadata formats."""

    __slots__ = ("tags", "formats", "by_lower", "by_language")

    def __init__(self, relations: Iterable[Relation]) -> None:
        self.tags: set[str] = set()
        self.formats: set[str] = set()
        for relation in relations:
            if len(relation) == 1 and relation[0].param is not None:
                (self.tags if relation[0].kind == "translation" else self.formats).add(
                    relation[0].param
                )
        self.by_lower: dict[str, list[str]] = {}
        self.by_language: dict[str, list[str]] = {}
        for tag in sorted(self.tags):
            self.by_lower.setdefault(tag.lower(), []).append(tag)
            self.by_language.setdefault(_tag_language(tag), []).append(tag)


def _set_languages(view: ArchiveView) -> _SetLanguages:
    """Memoized on the view, as its relation set does not change."""
    found = view.__dict__.get("_set_languages")
    if found is None:
        found = view.__dict__["_set_languages"] = _SetLanguages(view.relations())
    return found


def _in_set(step: Step, languages: _SetLanguages) -> bool:
    """Whether the default relation set has relations with `step` (a language or
    format it does not hold gives none)."""
    if step.param is None or step.kind == "lastedition":
        return True
    return step.param in (languages.tags if step.kind == "translation" else languages.formats)


def _translations(current: Related, languages: _SetLanguages):
    """(language, translation_target) for each language of the set in which `current`
    has a translation (_step's answer to ``.translation(language)`` from it)."""
    item = current.item
    if current.inline is not None or item is None or item.state == "Deleted":
        return []
    tags = _Tags(item)
    found: set[str] = set()
    for tag in tags.tags:
        tag_l = tag.lower()
        found.update(languages.by_lower.get(tag_l, ()))  # the same tag
        found.update(languages.by_lower.get(_tag_language(tag_l), ()))  # its language
        found.update(languages.by_language.get(tag_l, ()))  # a tag of its language
    return [(language, tags.target(language)) for language in sorted(found)]


#: the schemes a published target may have: any other (javascript:, data:, vbscript:,
#: file:) would run or read something in the reader's browser (archive-format.md, URLs)
TARGET_SCHEMES = ("http", "https")
_UNSAFE_CHARACTERS = re.compile(r"[\x00-\x20\x7f-\x9f\\]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: an http(s) URL whose host urlsplit takes as it is (ASCII, no '[' of an IPv6 address,
#: no user): group 1 is the path urlsplit gives (a template's usual URL)
_PLAIN_HTTP = re.compile(
    r"[hH][tT][tT][pP][sS]?://[A-Za-z0-9.\-_~%!$&'()*+,;=:]+(/[^?#]*)?(?:[?#].*)?\Z", re.S
)
#: a '.' or '..' segment of a path (they would climb out of where the URL points)
_DOT_SEGMENT = re.compile(r"(?:\A|/)\.\.?(?:/|\Z)")


@lru_cache(maxsize=1 << 16)  # a pure function, asked again for each modifier of an item
def unsafe_url(url: str) -> str | None:
    """Why `url` may not be published as a target, or None: a target is an http(s) URL
    or a relative reference (not '//host'), with no '.' or '..' segment (it may not climb
    out of where it points) and no space, control character or backslash (browsers
    drop or reinterpret those: 'java\\tscript:', '/\\\\evil.example')."""
    file_part = url.partition("?")[0]
    if _UNSAFE_CHARACTERS.search(file_part) or _CONTROL.search(url):
        return "a space, control character or backslash"
    plain = _PLAIN_HTTP.match(url)
    if plain is not None:  # what urlsplit finds in it, without its cost
        return _dot_segment(plain.group(1) or "")
    parts = urlsplit(url)
    if parts.scheme:
        if parts.scheme.lower() not in TARGET_SCHEMES:
            return f"the scheme {parts.scheme}: (only http: and https: are published)"
        if not parts.netloc:
            return "no host after the scheme"
    elif url.startswith("//"):
        return "a protocol-relative URL ('//host': it leaves the site for any host)"
    return _dot_segment(parts.path)


def _dot_segment(path: str) -> str | None:
    return "a '.' or '..' segment" if _DOT_SEGMENT.search(unquote(path)) else None


def _format_url(
    template: str, info: ArchiveInfo, item: Item, path: str, site_url: str
) -> str | None:
    """The URL `template` gives for a file of `item`; None when it is not safe to publish
    (archive.yaml's templates are checked when read, so this is the last line only)."""
    file, query = split_query(path)
    url = (
        template.format(
            address=info.address,
            repository=item.repository.text,
            ibip=item.ibip.text if item.ibip else "",
            path=quote_path(file),
            site=site_url,
        )
        + query
    )
    return None if unsafe_url(url) else url


def documents_folder(repository: str) -> str:
    """Where an Archive's files of `repository` are, on its server or in the site that
    publishes them (site/outputs/documents.py): ``col/<repository>/doc/``."""
    return f"{ARCHIVE_FILES}{repository}{DOC_FOLDER}/"


def file_url_problem(info: ArchiveInfo, site_url: str) -> str | None:
    """Why the files `info.file_url` names would be links to nothing, or None: a URL on
    the site's own host but not where the site publishes an Archive's documents (its
    ``col/<repository>/doc/<file>``: site/outputs/documents.py).  Nothing serves such a
    URL, so the site's not-found page resolves it, to itself: a link that loops."""
    sample = "example.org/x/2020/01.01.00.00"
    url = info.file_url.format(
        address=info.address, repository=sample, ibip="", path="file.pdf", site=site_url
    )
    if url.startswith(site_url + documents_folder(sample)):
        return None  # published by the site
    own = urlsplit(site_url)
    there = urlsplit(url)
    if (there.hostname or "").lower() != (own.hostname or "").lower() or there.port != own.port:
        return None  # another host's: the Archive's own server
    return f"{url} for a file, on the site's own host outside its documents"


def related_url(
    view: ArchiveView, related: Related, filepath: str = "", file_list: bool = False
) -> str | None:
    """CRIARPARURL's value: the related item's URL, that of one of its files, or its file list."""
    info, site = view.info, view.site_url
    if related.inline is not None:
        if file_list or filepath:
            return None
        template = DEFAULT_OAI_DC_URL if related.inline == "oai_dc" else DEFAULT_METADATA_URL
        assert related.owner is not None  # inline metadata is always of an item
        return _format_url(template, info, related.owner, "", site)
    item = related.item
    if item is None or item.state == "Deleted":
        return None
    if file_list:  # the verb list wins over the path
        return _format_url(info.file_list_url, info, item, "", site)
    if filepath:
        return (
            _format_url(info.file_url, info, item, filepath, site)
            if filepath in item.files
            else None
        )
    if related.file is None:
        return None
    return _format_url(info.file_url, info, item, related.file, site)


def item_urls(view: ArchiveView, item: Item) -> dict:
    """Every URL the Archive gives for `item`: its target, each file, its file list and
    (inline dublin-core) its metadata pages.  The index stores these so that the site's
    404 page redirects only to URLs present in the index."""
    if item.state == "Deleted":
        return {}
    own = Related(item.forms(), item, item.target)
    urls = {
        "target": related_url(view, own),
        "list": related_url(view, own, file_list=True),
        "files": {path: related_url(view, own, filepath=path) for path in item.files},
    }
    if item.dublin_core:
        urls["metadata"] = related_url(view, Related(None, None, inline="metadata", owner=item))
        urls["oai_dc"] = related_url(view, Related(None, None, inline="oai_dc", owner=item))
    return {key: value for key, value in urls.items() if value}


def new_urlkey() -> str:
    """A fresh key per answer (grammar ``10*DIGIT ["-" 10*DIGIT]``, Table 5.1)."""
    return f"{int(time.time()):010d}-{secrets.randbelow(10**16):016d}"


@dataclass(frozen=True, slots=True)
class RelationAnswer:
    """What one Archive knows of one relation of an item: the related item's IBI forms
    (``ibi<r>``; None when it has none) and, when the Archive stores it, its ``url<r>``,
    ``state<r>``, ``timestamp<r>`` and ``contenttype<r>`` (None where unknown)."""

    ibi: tuple[str, ...] | None
    url: str | None = None
    state: str | None = None
    timestamp: str | None = None
    content_type: str | None = None

    def only_ibi(self) -> "RelationAnswer":
        return RelationAnswer(self.ibi)


@dataclass(frozen=True, slots=True)
class PropertyList:
    """Algorithm 2's answer, typed: the identifying properties and, per relation, what
    the Archive knows.  The relation ``()`` is the item itself (the pairs ``ibi``,
    ``url``, ``state`` ...; a Deleted item has only its ``ibi``, ``state`` and
    ``timestamp``).  Pair names (Table 4.2) are made only on the wire:
    :func:`property_pairs`."""

    archiveaddress: str
    services: tuple[str, ...]  # ibi.archiveservice
    platform: tuple[str, ...]  # ibi.platformsoftware; () when not identified
    relations: Mapping[Relation, RelationAnswer]
    nextedition: tuple[str, ...] | None = None
    urlkey: str | None = None
    #: offered_languages, by prefix, found when first asked: a language-less `+` is
    #: chosen once per language of the client's preferences (the build: once for each
    #: language of the item) from the same answer
    _offered: dict[Relation, list[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def item(self) -> RelationAnswer | None:
        """The answer about the item itself (relation ``()``)."""
        return self.relations.get(())

    @property
    def ibi(self) -> tuple[str, ...] | None:
        item = self.item
        return item.ibi if item is not None else None

    @property
    def state(self) -> str | None:
        item = self.item
        return item.state if item is not None else None

    def answer(self, relation: Relation) -> RelationAnswer | None:
        return self.relations.get(relation)

    def offered_languages(self, prefix: Relation) -> list[str]:
        """The languages of the translations this answer names or gives the URL of
        right after `prefix`, sorted: what a language-less ``+`` there chooses from."""
        found = self._offered.get(prefix)
        if found is None:
            at = len(prefix)
            tags = {
                relation[at].param
                for relation, known in self.relations.items()
                if len(relation) > at
                and relation[:at] == prefix
                and relation[at].kind == "translation"
                and known is not None
                and (known.ibi is not None or known.url is not None)
            }
            found = self._offered[prefix] = sorted(tag for tag in tags if tag is not None)
        return found


def property_pairs(answer: PropertyList | None) -> list[Pair]:
    """Algorithm 2's answer as the pairs of Table 4.2, names sorted: ``archiveaddress``,
    ``ibi.archiveservice``, ``ibi.platformsoftware``, ``ibi.nextedition``, ``urlkey``,
    and for each relation ``<r>`` the ``ibi<r>``, ``url<r>``, ``contenttype<r>``,
    ``state<r>``, ``timestamp<r>`` the Archive knows.  None (the Archive does not hold
    the IBI) is the empty answer.  The one place where property names are spelled."""
    if answer is None:
        return []
    pairs: list[Pair] = [
        ("archiveaddress", answer.archiveaddress),
        ("ibi.archiveservice", answer.services),
        ("ibi.platformsoftware", answer.platform),
    ]
    if answer.nextedition is not None:
        pairs.append(("ibi.nextedition", answer.nextedition))
    if answer.urlkey is not None:
        pairs.append(("urlkey", answer.urlkey))
    for relation, known in answer.relations.items():
        suffix = relation_text(relation)
        for name, value in (
            ("ibi", known.ibi),
            ("url", known.url),
            ("contenttype", known.content_type),
            ("state", known.state),
            ("timestamp", known.timestamp),
        ):
            if value is not None:
                pairs.append((name + suffix, value))
    return sorted(pairs, key=lambda pair: pair[0])


def _relation_answer(
    view: ArchiveView, related: Related | None, filepath: str, file_list: bool
) -> RelationAnswer | None:
    """What the Archive answers of the relation that leads to `related` (follow)."""
    if related is None:
        return None
    url = related_url(view, related, filepath, file_list)
    if url is None:
        return RelationAnswer(related.forms) if related.forms is not None else None
    described = related.owner if related.inline is not None else related.item
    assert described is not None  # a URL is given only of a held item or its inline metadata
    content_type = "Metadata" if related.inline is not None else described.content_type
    return RelationAnswer(related.forms, url, described.state, described.timestamp, content_type)


def property_list(
    view: ArchiveView,
    key: str,
    *,
    filepath: str = "",
    verbs: VerbList | None = None,
    relations: Iterable[Relation] | Callable[[ArchiveView, Item], Iterable] | None = None,
    urlkey: Callable[[], str] = new_urlkey,
) -> PropertyList | None:
    """Algorithm 2 (MONTARLISTADEURL): every property of IBI `key` known to the Archive.

    None (the empty answer) when the Archive does not hold the IBI.  `relations` narrows
    the loop of line 21 (the resolver asks only for the relation it needs; filtering
    never changes the outcome); a callable gives them for the item, each with where it
    leads (open_relations).
    """
    item = view.item(key)
    if item is None:
        return None
    info = view.info
    identity: dict[str, Any] = dict(
        archiveaddress=info.address,
        services=info.service_forms(),
        platform=ibi_forms_of(info.platform_ibi) if info.platform_ibi else (),
    )
    if item.state == "Deleted":
        itself = RelationAnswer(item.forms(), state=item.state, timestamp=item.timestamp)
        return PropertyList(**identity, relations={(): itself})
    file_list = bool(verbs and verbs.file_list)
    if callable(relations):  # the relations depend on the item (open_relations)
        followed = relations(view, item)
    else:
        wanted = view.relations() if relations is None else relations
        followed = ((relation, follow(view, item, relation)) for relation in wanted)
    answers: dict[Relation, RelationAnswer] = {}
    for relation, related in followed:
        answer = _relation_answer(view, related, filepath, file_list)
        if answer is not None:
            answers.setdefault(relation, answer)
    nextedition = ibi_forms_of(item.next_edition) if item.next_edition is not None else None
    return PropertyList(**identity, relations=answers, nextedition=nextedition, urlkey=urlkey())


def _matches(relation: Relation, wanted: Relation) -> bool:
    """Whether a relation is the wanted one; a language-less translation step wanted
    keeps every .translation(..) at that place (Example 7.3)."""
    if len(relation) != len(wanted):
        return False
    for have, want in zip(relation, wanted):
        if have.kind != want.kind:
            return False
        if want.param is not None and have.param != want.param:
            return False
        if want.param is None and want.kind != "translation" and have.param is not None:
            return False
    return True


def filter_property_list(
    answer: PropertyList | None, verbs: VerbList | None
) -> PropertyList | None:
    """FILTRARLISTADEURL: keep the identifying properties and those of the asked relation.

    Optional in the standard, and it never changes the outcome.  The item's ``ibi`` is
    identifying and always kept; ``ibi.nextedition`` is kept when the verb list asks for
    the last edition; ``state``/``timestamp`` of a Deleted answer are kept so that the
    resolver can tell it was deleted.  ``urlkey`` is kept only when a ``url`` is: a key
    serves only the acknowledgment of a URL (the first listing of §8.2, which has no URL,
    has no urlkey; the second has both).
    """
    if answer is None:
        return None
    wanted: Relation = verbs.steps if verbs is not None else ()
    deleted = answer.state == "Deleted"
    kept: dict[Relation, RelationAnswer] = {}
    for relation, known in answer.relations.items():
        if _matches(relation, wanted) or (relation == () and deleted):
            kept[relation] = known
        elif relation == ():
            kept[relation] = known.only_ibi()
    asks_last_edition = any(step.kind == "lastedition" for step in wanted)
    has_url = any(known.url is not None for known in kept.values())
    return replace(
        answer,
        relations=kept,
        nextedition=answer.nextedition if asks_last_edition else None,
        urlkey=answer.urlkey if has_url else None,
    )


def _kept_relations(view: ArchiveView, verbs: VerbList | None) -> list[Relation]:
    """The relations of the Archive's set that FILTRARLISTADEURL keeps for `verbs`: the
    item's own (its ``ibi`` is identifying) and the asked one."""
    wanted: Relation = verbs.steps if verbs is not None else ()
    return [r for r in view.relations() if r == () or _matches(r, wanted)]


def archive_response(
    view: ArchiveView,
    query: Mapping[str, str],
    urlkey: Callable[[], str] = new_urlkey,
    filtered: bool = True,
) -> list[tuple[str, str | tuple[str, ...]]]:
    """Algorithm 1 (MONTARRESPOSTA) for the three service subjects of §7.

    `query` holds the decoded request pairs; `filtered=False` leaves out the optional
    FILTRARLISTADEURL (line 17), as Example 7.2 shows.  Raises UsageError for an unknown
    subject and IbiSyntaxError for a verb list that does not parse.  A urlRequest without
    ``parsedibiurl.ibi``, or with one that does not parse, names no IBI this Archive
    holds: its answer is the empty one (Algorithm 2, line 3), never an error list that a
    resolver taking "the first non-empty answer" would take.
    """
    subject = query.get("servicesubject")
    if subject == "inclusionConfirmationRequest":
        return [("confirmation", "yes")]
    if subject == "acknowledgment":
        return [("notice", ("acknowledgment", "received"))]
    if subject != "urlRequest":
        raise UsageError(
            f"servicesubject {subject!r}: expected inclusionConfirmationRequest, urlRequest or acknowledgment"
        )
    verbs = (
        parse_verb_list(query["parsedibiurl.verblist"])
        if query.get("parsedibiurl.verblist")
        else None
    )
    try:
        key = ibi_key(query.get("parsedibiurl.ibi", ""))
    except IbiSyntaxError:
        return []
    # parsedibiurl.filepath is path-absolute (Table 6.9); item files are relative to doc/.
    # Only its one leading '/' goes: '//x' names no file (as the resolver reads it).
    filepath = query.get("parsedibiurl.filepath", "")
    filepath = filepath[1:] if filepath.startswith("/") else filepath
    # Filtered, only the relations the filter keeps are computed (the same answer, sooner)
    relations = _kept_relations(view, verbs) if filtered else None
    answer = property_list(
        view, key, filepath=filepath, verbs=verbs, relations=relations, urlkey=urlkey
    )
    # "O uso da rotina FILTRARLISTADEURL é facultativa" (§7): unfiltered, the whole list
    pairs = property_pairs(filter_property_list(answer, verbs) if filtered else answer)
    # On the wire, in the Archive's own encoding (Table 4.2: Example 4.2's Relat%f3rio)
    return in_charset(pairs, view.info.pair_list_charset)
