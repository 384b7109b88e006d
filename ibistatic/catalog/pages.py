"""The catalog's Markdown pages, computed from a crawl (docs/catalog.md).

Pure: :func:`catalog_pages` turns a :class:`LoadedArchives` into ``{relative path: text}``
and reads no file.  One entry per IBI (repository name): the Archives holding it are
its holders, in resolution order, and the entry is described by its *representative*:
the first Original, else the first live copy, else the first holder.

Every value read from a descriptor is escaped with :func:`escape` (Markdown and HTML
both); persistent URLs are spelled only by :func:`build_persistent_url`.  Output is
deterministic: entries, archives, years and problems are sorted.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from ..archive.load import LoadedArchives
from ..core.facts import DC_ELEMENTS
from ..core.identifiers import Ibi
from ..core.model import STATES, ArchiveInfo, Item
from ..core.properties import MemoryArchiveView, item_urls
from ..core.relations import VerbList, parse_modifier
from ..core.resolution import Resolution, resolve, shared_memo
from ..core.urls import build_persistent_url
from ..errors import Problem
from ..targets import DEFAULT_MODIFIERS

__all__ = [
    "DEFAULT_PATH",
    "Entry",
    "Catalog",
    "catalog_pages",
    "catalog_entries",
    "item_page",
    "page_prefix",
    "escape",
]

DEFAULT_PATH = "catalog"


#: Dublin Core elements in the order of the oai_dc schema; others follow, sorted.
DC_ORDER = DC_ELEMENTS

# What Python-Markdown (with tables) or HTML would read as markup in running text.  Each
# becomes a numeric character reference, which both leave as the character itself.
MARKUP_CHARACTER = re.compile(r"[\\`*_{}\[\]#|<>&\"!]")
# What may not stand unencoded inside a Markdown link destination written <...>.
DESTINATION_UNSAFE = re.compile(r"[\s<>\\`]")
WHITESPACE = re.compile(r"\s+")
# Control characters: HTML has no place for them, and Python-Markdown drops \x02 and
# \x03 (its own placeholders) silently.
CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")


def escape(text: str) -> str:
    """*text* as Markdown that renders as exactly that text, on one line.

    Runs of white space become one space (a table cell is one line); a control
    character becomes U+FFFD, visibly.
    """
    one_line = WHITESPACE.sub(" ", CONTROL_CHARACTER.sub("\ufffd", text)).strip()
    return MARKUP_CHARACTER.sub(lambda m: f"&#{ord(m.group())};", one_line)


def _destination(url: str) -> str:
    """A link destination ``<url>``; characters that would end it are percent-encoded."""
    return "<" + DESTINATION_UNSAFE.sub(lambda m: quote(m.group(), safe=""), url) + ">"


def _link(text: str, url: str) -> str:
    return f"[{escape(text)}]({_destination(url)})"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


@dataclass(frozen=True)
class Entry:
    """One IBI of the catalog: its representative item and every Archive holding it."""

    key: str
    item: Item
    holders: tuple[tuple[ArchiveInfo, Item], ...]

    @property
    def ibi(self) -> Ibi:
        """The form the catalog writes persistent URLs with: the IBIp when there is one."""
        return self.item.ibip or self.item.repository

    @property
    def title(self) -> str:
        return self.item.title() or self.item.repository.text

    @property
    def year(self) -> str:
        return self.item.timestamp[:4]

    def states(self) -> str:
        return ", ".join(f"{item.state} in {info.name}" for info, item in self.holders)


def page_prefix(path: str) -> str:
    """The folder of the pages inside docs, with a trailing ``/`` (``""`` for the root)."""
    folder = path.strip("/")
    return "" if folder in ("", ".") else folder + "/"


def item_page(key: str, path: str = DEFAULT_PATH) -> str:
    """The page of the IBI whose repository key is *key*: ``catalog/items/<key>.md``."""
    return f"{page_prefix(path)}items/{key}.md"


def _representative(holders: Sequence[tuple[ArchiveInfo, Item]]) -> Item:
    items = [item for _, item in holders]
    for wanted in (lambda i: i.state == "Original", lambda i: i.state != "Deleted"):
        found = next((i for i in items if wanted(i)), None)
        if found is not None:
            return found
    return items[0]


def catalog_entries(loaded: LoadedArchives) -> dict[str, Entry]:
    """Every IBI held by some Archive, by repository key, sorted."""
    keys = sorted({item.key for item in loaded.holdings.all_items()})
    entries = {}
    for key in keys:
        holders = tuple(loaded.holdings.holders(key))
        entries[key] = Entry(key, _representative(holders), holders)
    return entries


@dataclass(frozen=True)
class Catalog:
    """What every page needs: the entries, the Archives' views, the folder, and the
    references read backwards (computed once, so a page costs no scan of the others)."""

    loaded: LoadedArchives
    entries: Mapping[str, Entry]
    views: Mapping[str, MemoryArchiveView]
    prefix: str
    by_ibip: Mapping[str, str]  # IBIp key -> repository key
    previous: Mapping[str, tuple[str, ...]]  # key -> keys whose next edition it is
    described: Mapping[str, tuple[str, ...]]  # key -> keys whose metadata it is

    @classmethod
    def of(cls, loaded: LoadedArchives, path: str = DEFAULT_PATH) -> "Catalog":
        views = {view.info.name: view for view in loaded.views()}
        entries = catalog_entries(loaded)
        by_ibip = {e.item.ibip.key: key for key, e in entries.items() if e.item.ibip is not None}
        previous = _backwards(entries, by_ibip, lambda item: item.next_edition)
        described = _backwards(entries, by_ibip, lambda item: item.metadata)
        return cls(loaded, entries, views, page_prefix(path), by_ibip, previous, described)

    def page(self, kind: str, name: str) -> str:
        return f"{self.prefix}{kind}/{name}.md"

    def index(self) -> str:
        return f"{self.prefix}index.md"

    def relative(self, source: str, target: str) -> str:
        """A Markdown link destination from page *source* to page *target*."""
        rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
        return _destination(quote(rel, safe="/@.-_~"))

    def entry_link(self, source: str, ibi: Ibi) -> str:
        """A link to the page of *ibi*, or its text when no Archive holds it."""
        entry = self.entry_of(ibi)
        if entry is None:
            return f"{escape(ibi.text)} (no Archive holds it)"
        return f"[{escape(entry.title)}]({self.relative(source, self.page('items', entry.key))})"

    def entry_of(self, ibi: Ibi) -> Entry | None:
        return self.entries.get(self.by_ibip.get(ibi.key, ibi.key))

    def archive_link(self, source: str, name: str) -> str:
        return f"[{escape(name)}]({self.relative(source, self.page('archives', name))})"


def _backwards(
    entries: Mapping[str, Entry], by_ibip: Mapping[str, str], reference
) -> dict[str, tuple[str, ...]]:
    """For each repository key, the sorted keys of the entries whose *reference* names it."""
    found: dict[str, list[str]] = {}
    for key, entry in entries.items():
        ibi = reference(entry.item)
        if ibi is not None:
            found.setdefault(by_ibip.get(ibi.key, ibi.key), []).append(key)
    return {target: tuple(sorted(keys)) for target, keys in found.items()}


def catalog_pages(loaded: LoadedArchives, path: str = DEFAULT_PATH) -> dict[str, str]:
    """Every page of the catalog: ``{path relative to docs: Markdown}``, sorted by path."""
    catalog = Catalog.of(loaded, path)
    pages = {catalog.index(): overview_page(catalog)}
    for info in loaded.holdings.archives:
        pages[catalog.page("archives", info.name)] = archive_page(catalog, info)
    years: dict[str, list[Entry]] = {}
    for entry in catalog.entries.values():
        years.setdefault(entry.year, []).append(entry)
    for year, entries in years.items():
        pages[catalog.page("years", year)] = year_page(catalog, year, entries)
    for entry in catalog.entries.values():
        pages[catalog.page("items", entry.key)] = entry_page(catalog, entry)
    return dict(sorted(pages.items()))


# -- the overview -----------------------------------------------------------------------


def overview_page(catalog: Catalog) -> str:
    source = catalog.index()
    entries = catalog.entries.values()
    holdings = catalog.loaded.holdings
    lines = [
        "# Catalog",
        "",
        f"{len(catalog.entries)} IBIs held by {len(holdings.archives)} Archives.",
        "",
        f"[Search the catalog]({catalog.relative(source, catalog.prefix + 'search.md')}): "
        "titles, creators, subjects, years and IBIs.",
        "",
    ]
    lines += ["## Archives", ""] + _table(
        ("Archive", "address") + STATES + ("total",),
        (_archive_counts(catalog, source, info) for info in holdings.archives),
    )
    states = Counter(item.state for item in holdings.all_items())
    lines += ["## States", ""] + _table(("state", "items"), ((s, str(states[s])) for s in STATES))
    years = Counter(entry.year for entry in entries)
    year_rows = (
        (f"[{y}]({catalog.relative(source, catalog.page('years', y))})", str(n))
        for y, n in sorted(years.items())
    )
    lines += ["## Years", ""] + _table(("year", "IBIs"), year_rows)
    return "\n".join(lines + _problem_section(catalog.loaded.problems))


def _archive_items(catalog: Catalog, name: str) -> list[Item]:
    unique = {item.key: item for item in catalog.loaded.holdings.by_archive.get(name, {}).values()}
    return [unique[key] for key in sorted(unique)]


def _archive_counts(catalog: Catalog, source: str, info: ArchiveInfo) -> list[str]:
    items = _archive_items(catalog, info.name)
    states = Counter(item.state for item in items)
    counts = [str(states[state]) for state in STATES]
    return (
        [catalog.archive_link(source, info.name), escape(info.address)] + counts + [str(len(items))]
    )


def _problem_section(problems: Sequence[Problem]) -> list[str]:
    lines = ["## Problems", "", f"{len(problems)} problems found.", ""]
    lines += [f"- {escape(str(problem))}" for problem in sorted(problems)]
    return lines + ([""] if problems else [])


# -- the archive and year indexes -------------------------------------------------------


def _listing(catalog: Catalog, source: str, rows: Iterable[tuple[Entry, str]]) -> list[str]:
    return _table(
        ("title", "IBI", "state"),
        (
            [
                f"[{escape(entry.title)}]({catalog.relative(source, catalog.page('items', entry.key))})",
                escape(_forms(entry.item)),
                escape(state),
            ]
            for entry, state in rows
        ),
    )


def _forms(item: Item) -> str:
    return item.repository.text + (f" ({item.ibip.text})" if item.ibip else "")


def archive_page(catalog: Catalog, info: ArchiveInfo) -> str:
    source = catalog.page("archives", info.name)
    items = _archive_items(catalog, info.name)
    lines = [f"# Archive {escape(info.name)}", ""]
    lines += _table(
        ("property", "value"),
        (
            ("address", escape(info.address)),
            ("archive service", escape(" ".join(info.service_forms()[1::2]))),
            ("items", str(len(items))),
        ),
    )
    lines += [
        f"[Back to the catalog]({catalog.relative(source, catalog.index())})",
        "",
        "## Items",
        "",
    ]
    return "\n".join(
        lines + _listing(catalog, source, ((catalog.entries[i.key], i.state) for i in items))
    )


def year_page(catalog: Catalog, year: str, entries: Sequence[Entry]) -> str:
    source = catalog.page("years", year)
    lines = [f"# Items of {year}", "", f"{len(entries)} IBIs whose timestamp falls in {year}.", ""]
    lines += [f"[Back to the catalog]({catalog.relative(source, catalog.index())})", ""]
    return "\n".join(
        lines + _listing(catalog, source, ((entry, entry.states()) for entry in entries))
    )


# -- an item ----------------------------------------------------------------------------


def entry_page(catalog: Catalog, entry: Entry) -> str:
    source = catalog.page("items", entry.key)
    lines = [f"# {escape(entry.title)}", ""]
    lines += [f"[Back to the catalog]({catalog.relative(source, catalog.index())})", ""]
    lines += _identifiers(entry)
    lines += _dublin_core(entry.item)
    lines += _persistent_urls(catalog, entry)
    lines += _files(catalog, entry)
    lines += _editions(catalog, source, entry)
    lines += _translations(catalog, source, entry)
    lines += _metadata(catalog, source, entry)
    lines += _copies(catalog, source, entry)
    lines += _item_problems(catalog.loaded.problems, entry.key)
    return "\n".join(lines)


def _identifiers(entry: Entry) -> list[str]:
    item = entry.item
    rows = [("repository name", escape(item.repository.text))]
    if item.ibip is not None:
        rows.append(("IBIp", escape(item.ibip.text)))
    rows += [
        ("state", escape(entry.states())),
        ("timestamp", escape(item.timestamp)),
        ("content type", escape(item.content_type)),
    ]
    if item.language:
        rows.append(("language", escape(item.language)))
    return ["## Identifiers", ""] + _table(("identifier", "value"), rows)


def _dublin_core(item: Item) -> list[str]:
    lines = ["## Dublin Core", ""]
    if not item.dublin_core:
        return lines + ["The descriptor gives no Dublin Core metadata.", ""]
    order = {name: index for index, name in enumerate(DC_ORDER)}
    fields = sorted(item.dublin_core, key=lambda pair: (order.get(pair[0], len(order)), pair[0]))
    return lines + _table(
        ("element", "value"),
        ((escape(name), "<br>".join(escape(value) for value in values)) for name, values in fields),
    )


def _modifiers(item: Item) -> list[str]:
    """The rows of an item page's table: the build's default forms, then one ``+(L)`` per
    translation."""
    return list(DEFAULT_MODIFIERS) + [
        f"+({tag})" for tag in sorted({tag for tag, _ in item.translations})
    ]


def _outcome(resolution: Resolution) -> str:
    if resolution.url is not None:
        return escape(resolution.url)
    return escape(f"{resolution.alert}: {resolution.message}")


def _persistent_urls(catalog: Catalog, entry: Entry) -> list[str]:
    """The plain URL always; a modifier only when the resolver answers it with a URL."""
    views = list(catalog.views.values())
    # the entries share their walks: an edition chain is walked once, not once per entry
    memo = shared_memo(views)
    memo.answers.clear()  # those of another entry's resolutions
    site_url = catalog.loaded.site_url
    rows = []
    for modifier in _modifiers(entry.item):
        relation = parse_modifier(modifier)
        resolution = resolve(views, entry.ibi, VerbList(relation), memo=memo)
        if modifier and resolution.url is None:
            continue
        url = build_persistent_url(site_url, entry.ibi, relation)
        rows.append((escape(modifier or "(none)"), _link(url, url), _outcome(resolution)))
    return ["## Persistent URLs", ""] + _table(("modifier", "persistent URL", "leads to"), rows)


def _first_live(entry: Entry) -> tuple[ArchiveInfo, Item] | None:
    return next(((info, item) for info, item in entry.holders if item.state != "Deleted"), None)


def _files(catalog: Catalog, entry: Entry) -> list[str]:
    lines = ["## Files", ""]
    holder = _first_live(entry)
    if holder is None:
        return lines + ["No Archive holds a live copy: the item was deleted.", ""]
    info, item = holder
    urls = item_urls(catalog.views[info.name], item)
    target = (item.target or "").split("?", 1)[0]
    rows = [
        (_link(path, url) + (" (default file)" if path == target else ""), escape(info.name))
        for path, url in sorted(urls.get("files", {}).items())
    ]
    lines += _table(("file", "Archive"), rows) if rows else ["No files.", ""]
    extras = (("file list", "list"), ("metadata page", "metadata"), ("oai_dc record", "oai_dc"))
    lines += [f"- {label}: {_link(urls[key], urls[key])}" for label, key in extras if key in urls]
    return lines + [""]


def _edition_chain(catalog: Catalog, entry: Entry) -> list[Ibi]:
    """The editions, oldest first: back through the first previous edition, forward
    through ``next-edition``; a loop stops where it comes back."""
    chain: list[Ibi] = [entry.item.repository]
    seen = {entry.key}
    key = entry.key
    while catalog.previous.get(key) and catalog.previous[key][0] not in seen:
        key = catalog.previous[key][0]
        seen.add(key)
        chain.insert(0, catalog.entries[key].item.repository)
    current: Entry | None = entry
    while current is not None and current.item.next_edition is not None:
        following = current.item.next_edition
        current = catalog.entry_of(following)
        if (current.key if current else following.key) in seen:
            break
        seen.add(current.key if current else following.key)
        chain.append(following)
    return chain


def _editions(catalog: Catalog, source: str, entry: Entry) -> list[str]:
    lines = ["## Editions", ""]
    before = catalog.previous.get(entry.key, ())
    after = entry.item.next_edition
    if not before and after is None:
        return lines + ["This is the only edition.", ""]
    lines += [
        "- previous edition: "
        + (
            ", ".join(
                catalog.entry_link(source, catalog.entries[k].item.repository) for k in before
            )
            or "none"
        ),
        "- next edition: "
        + (
            catalog.entry_link(source, after)
            if after is not None
            else "none (this is the last edition)"
        ),
        "",
        "Every edition, oldest first:",
        "",
    ]
    for number, ibi in enumerate(_edition_chain(catalog, entry), 1):
        this = ibi.key == entry.key
        lines.append(
            f"{number}. "
            + (
                f"**{escape(entry.title)}** (this item)"
                if this
                else catalog.entry_link(source, ibi)
            )
        )
    return lines + [""]


def _translations(catalog: Catalog, source: str, entry: Entry) -> list[str]:
    lines = ["## Translations", ""]
    if not entry.item.translations:
        return lines + ["The descriptor names no translation.", ""]
    rows = (
        (escape(tag), catalog.entry_link(source, ibi), escape(ibi.text))
        for tag, ibi in sorted(entry.item.translations, key=lambda t: t[0])
    )
    return lines + _table(("language", "item", "IBI"), rows)


def _metadata(catalog: Catalog, source: str, entry: Entry) -> list[str]:
    described = catalog.described.get(entry.key, ())
    if entry.item.metadata is None and not described:
        return []
    lines = ["## Metadata", ""]
    if entry.item.metadata is not None:
        lines.append("- metadata item: " + catalog.entry_link(source, entry.item.metadata))
    lines += [
        "- metadata of: " + catalog.entry_link(source, catalog.entries[key].item.repository)
        for key in described
    ]
    return lines + [""]


def _copies(catalog: Catalog, source: str, entry: Entry) -> list[str]:
    rows = (
        (
            catalog.archive_link(source, info.name),
            escape(info.address),
            escape(item.state),
            escape(item.timestamp),
        )
        for info, item in entry.holders
    )
    return ["## Copies and their Archives", ""] + _table(
        ("Archive", "address", "state", "timestamp"), rows
    )


def _item_problems(problems: Sequence[Problem], key: str) -> list[str]:
    own = sorted(p for p in problems if p.path.lower().startswith(key + "/"))
    lines = ["## Problems", ""]
    if not own:
        return lines + ["No problems found.", ""]
    return lines + [f"- {escape(str(problem))}" for problem in own] + [""]
