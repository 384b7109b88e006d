"""What a build remembers for the next one (the *state*), saved in the cache folder.

The state describes the live generation: every item published, the pages each one has,
the index records and precomputed answers (packed: ibistatic.store.files.pack), the
digest of every file.  An update compares with it; when it does not describe the live
tree (another output, other templates, a tree changed behind its back) the build is full.
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..archive.load import LoadedArchives
from ..config import SiteConfig
from ..pickles import Unsaved, Untrusted, load_sealed, save_sealed
from ..store.generations import Publication
from ..targets import PublishedUrls
from . import pages

__all__ = [
    "State",
    "STATE_VERSION",
    "fingerprint",
    "settings_fingerprint",
    "load_state",
    "save_state",
]

#: 16: each holding is (item, (files, files_stamp)), so a rewritten document changes it;
#: 17: item_files holds site.facts.PagePaths, published targets.PublishedUrls;
#: 18: an item with metadata has core.exports' files too (a site of 17 lacks them)
STATE_VERSION = 18


@dataclass
class State:
    """What the last build published, to compare the next one with."""

    fingerprint: tuple
    items: dict[str, tuple]  # repository key -> ((item, files), ...) over the Archives, in order
    published: dict[str, PublishedUrls]  # repository key -> the pages it has
    #: index key -> [(archive, packed item record)] in the Archives' order
    records: dict[str, list]
    answers: dict[str, dict]  # repository key -> {index key -> packed precomputed answers}
    digests: dict[str, bytes]  # relative path -> digest of the file's bytes (store.files)
    digits: int = 1
    item_files: dict[str, Sequence[str]] = field(
        default_factory=dict
    )  # repository key -> its file-list/metadata pages (site.facts.PagePaths)
    #: index key named by a reference (next-edition, metadata, translations) -> the
    #: repository keys of the items naming it: who must be rendered again when it changes
    reverse: dict[str, frozenset[str]] = field(default_factory=dict)
    key_count: int = 0  # distinct index keys of `items`
    #: index file (its path in the site) -> the sha256 checksums.json lists for it
    checksums: dict[str, str] = field(default_factory=dict)
    #: the files not of one item (index, 404, landing page, sitemaps, host files)
    site_files: tuple[str, ...] = ()
    generation: str = ""  # the generation (store/layout.py) this state describes: the live one
    spare: str = ""  # the other generation, the tree of the build before; "" if none
    #: the paths where the spare differs from the live generation (None: not known)
    behind: frozenset[str] | None = None
    #: what the site outputs noticed (host limits), for a rebuild that makes nothing again
    notices: tuple[str, ...] = ()
    pages: int = 0  # pages of the site (the report's count)
    outputs: tuple[str, ...] = ()  # the outputs that made it (site.outputs), by name
    #: what the site outputs keep between the builds of this state (site.memo); never saved
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def output(self) -> str:
        """The output this state was published to (part of the fingerprint)."""
        return self.fingerprint[2]

    @property
    def infos(self) -> tuple:
        """The Archives it published (their validated archive.yaml, part of the
        fingerprint): what is kept of an Archive whose archive.yaml breaks later."""
        return self.fingerprint[4]

    def last_archive(self, name: str):
        """The ArchiveInfo and items this build published of Archive `name`, or None."""
        info = next((info for info in self.infos if info.name == name), None)
        if info is None:
            return None
        held = self.items.values()
        return info, [item for holding in held for item, _ in holding if item.archive == name]

    def last_good(self, withdrawn: set[str], archive: str, key: str):
        """The item this build published for repository `key` of `archive`, or None (also
        for the keys `withdrawn`: their last good publication failed to render too)."""
        if key in withdrawn:
            return None
        return next((item for item, _ in self.items.get(key, ()) if item.archive == archive), None)

    def publication(self) -> Publication:
        return Publication(self.generation, self.spare, self.behind)


#: the State fields saved in chunks (ibistatic.pickles)
_LARGE_FIELDS = ("items", "published", "records", "answers", "digests", "item_files", "reverse")


def fingerprint(config: SiteConfig, loaded: LoadedArchives) -> tuple:
    """What must be the same for an update to give what a full build gives."""
    head, rest = _settings(config)
    return (*head, tuple(loaded.infos), *rest)


def settings_fingerprint(config: SiteConfig) -> tuple:
    """The fingerprint but for the Archives' archive.yaml (site.unchanged: known
    unchanged when no file of the Archives is)."""
    head, rest = _settings(config)
    return (*head, *rest)


def _settings(config: SiteConfig) -> tuple[tuple, tuple]:
    """What the fingerprint holds before the Archives' infos, and after them."""
    templates = sorted(
        (str(folder), str(p.relative_to(folder)), p.stat().st_mtime_ns)
        for folder in pages.template_folders(config)  # the site's own templates too
        for p in folder.rglob("*")
        if p.is_file()
    )
    head = (STATE_VERSION, config.site_url, str(config.output), config.modifiers)
    rest = (
        marshal.version,  # of PublishedUrls' packed bytes
        tuple(templates),
        # after the fields read by position (output, infos): every other setting, so
        # that a setting added later is in by default (hosts and catalog were once
        # left out, and a no-op update then never wrote their site-wide files)
        tuple(
            (f.name, getattr(config, f.name))
            for f in fields(config)
            if f.name not in _NOT_PUBLISHED
        ),
    )
    return head, rest


#: the settings that change nothing a build publishes: where the configuration was read
#: from, where the cache lives, how many processes share the work
_NOT_PUBLISHED = ("path", "cache", "jobs")


def save_state(path: Path, state: State) -> str | None:
    """The state as sealed pickles (ibistatic.pickles): the small fields, then each large
    one in chunks; returns a warning when it cannot be saved (the next build is full)."""
    small = {
        f.name: getattr(state, f.name)
        for f in fields(state)
        if f.name not in _LARGE_FIELDS and f.name != "memo"
    }
    try:
        save_sealed(
            path,
            "build state",
            (STATE_VERSION, small),
            [getattr(state, name) for name in _LARGE_FIELDS],
        )
    except (Untrusted, Unsaved, OSError) as why:  # saved once published: a warning
        return f"build state {path} not saved: {why}; the next build is a full one"
    return None


def load_state(path: Path, items_only: bool = False) -> tuple[State | None, str | None]:
    """The saved state (None: none, or an older one) and a warning when it is not used.

    `items_only`: the other large fields are left unread (empty), for a full build, which
    needs only what the last build published (a third of the time to read the whole);
    such a state must never be updated or saved."""
    count = 1 if items_only else len(_LARGE_FIELDS)  # "items" comes first in the file
    try:
        loaded = load_sealed(path, "build state", STATE_VERSION, count)
    except Untrusted as why:
        return None, f"build state {path} not used: {why}; this build is a full one"
    if loaded is None:
        return None, None
    small, large = loaded
    unread = {name: {} for name in _LARGE_FIELDS[count:]}
    return State(**small, **dict(zip(_LARGE_FIELDS, large)), **unread), None
