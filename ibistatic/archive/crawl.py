"""Reading Archive trees from disk: the only module here that walks directories.

An Archive is a directory with ``archive.yaml`` and uniform repositories four levels
below it (archive-format.md).  Directories are walked in sorted order so output is
reproducible; symbolic links are never followed out of the archive root.  Parsed
descriptors are kept in a :class:`CrawlCache` keyed by file identity and modification
time, so a later crawl re-parses only what changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .. import forked
from ..core.model import ArchiveInfo, Item
from ..errors import Problem, failure
from ..pickles import Unsaved, Untrusted, load_sealed, save_sealed
from .descriptors import read_archive_info, read_item
from .safe_yaml import DescriptorError, file_kind, parse_descriptor, read_regular_file

__all__ = [
    "Archive",
    "CrawlResult",
    "CrawlCache",
    "crawl",
    "crawl_archive",
    "read_repository",
    "load_yaml",
]

# The crawl cache's format. 3: Item and IBIs are slotted dataclasses; 4: saved in chunks,
# items only, pickled as calls; 5: sealed (ibistatic.pickles); 6: Item.reason;
# 7: Item.files_stamp, and the stamp instead of the newest mtime in each entry's identity;
# 8: change times (ctime) in identities and stamps: an edit that keeps size and mtime
CACHE_VERSION = 8


@dataclass
class Archive:
    """One crawled Archive: where it is, its validated archive.yaml and its items."""

    root: Path
    name: str
    info: ArchiveInfo | None
    items: list[Item] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class CrawlResult:
    archives: list[Archive]

    @property
    def problems(self) -> list[Problem]:
        return [p for a in self.archives for p in a.problems]

    def items(self) -> Iterable[Item]:
        for archive in self.archives:
            yield from archive.items


class CrawlCache:
    """Parsed descriptors keyed by path, with the (inode, size, mtime) they were read at."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._entries: dict[str, tuple[tuple[int, int, int], Any]] | None = None
        self.hits = 0
        self.misses = 0
        self._saved_misses = 0  # misses when it was last loaded or saved: nothing new since
        #: entries put since it was set (a forked reader sends them back)
        self.fresh: dict[str, tuple] | None = None
        #: why a saved cache was not used, or could not be saved (the build prints it)
        self.warnings: list[str] = []
        #: entries answer get(); False: every descriptor is read again (and put)
        self.trusted = True

    @property
    def entries(self) -> dict[str, tuple[tuple[int, int, int], Any]]:
        """Read from its file on first use (a rebuild answered by site.unchanged never
        needs it)."""
        if self._entries is None:
            self._entries = self._load()
        return self._entries

    def _load(self) -> dict:
        if self.path is None:
            return {}
        try:
            loaded = load_sealed(self.path, "crawl cache", CACHE_VERSION, 1)
        except Untrusted as why:  # a damaged or foreign cache only costs a full re-read
            self.warnings.append(
                f"crawl cache {self.path} not used: {why}; every descriptor is read again"
            )
            return {}
        return {} if loaded is None else loaded[1][0]

    def get(self, path: str, identity: tuple) -> Any:
        """The value stored for `path` at `identity`; hits and misses count descriptors
        (archive.yaml: its parsed YAML; item.yaml, keyed 'item:': its validated item).
        Nothing while not `trusted` (``build --full``: every descriptor is read)."""
        entry = self.entries.get(path) if self.trusted else None
        if entry is not None and entry[0] == identity:
            self.hits += 1
            return entry[1]
        self.misses += 1
        return _MISSING

    def put(self, path: str, identity: tuple[int, int, int], value: Any) -> None:
        self.entries[path] = (identity, value)
        if self.fresh is not None:
            self.fresh[path] = (identity, value)

    def release(self) -> None:
        """Let the entries go from memory once they are saved (read again on first use):
        a build keeps them through its other phases for nothing."""
        if self.path is not None and self.misses == self._saved_misses and self.path.exists():
            self._entries = None

    def save(self) -> None:
        """Into its file, unless nothing was put since (every put follows a miss): a
        rebuild that read nothing new writes nothing."""
        if self._saved_already():
            return
        self._settle(self._write(), self.misses)

    @contextmanager
    def saved(self) -> Iterator[None]:
        """save() and release() for the block that follows."""
        self.save()
        self.release()
        yield

    def _saved_already(self) -> bool:
        return self.path is None or (self.misses == self._saved_misses and self.path.exists())

    def _write(self) -> str | None:
        """The entries into the file; why not, if they could not be."""
        try:  # in chunks: one pickle's memo would double the peak
            save_sealed(self.path, "crawl cache", (CACHE_VERSION, None), [self.entries])
        except (Untrusted, Unsaved, OSError) as why:
            return f"crawl cache {self.path} not saved: {why}"
        return None

    def _settle(self, unsaved: str | None, misses: int) -> None:
        if unsaved is None:
            self._saved_misses = misses
        else:
            self.warnings.append(unsaved)


_MISSING = object()


class _YamlProblem(Exception):
    def __init__(self, found: str, expected: str | None = None) -> None:
        super().__init__(found)
        self.found = found
        self.expected = expected


def load_yaml(path: Path, cache: CrawlCache | None = None) -> Any:
    """Parse a YAML file (cached by identity); raises _YamlProblem with a located message."""
    st = os.stat(path)
    identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    key = str(path)
    value = cache.get(key, identity) if cache is not None else _MISSING
    if value is _MISSING:
        value = _parse_yaml(path)
        if cache is not None:
            cache.put(key, identity, value)
    if isinstance(value, _YamlError):  # errors are cached too: raise them on every read
        raise _YamlProblem(value.found, value.expected)
    return value


def _parse_yaml(path: str | os.PathLike) -> Any:
    """The YAML value of a descriptor, or a _YamlError saying why there is none."""
    try:
        return parse_descriptor(read_regular_file(path))
    except DescriptorError as error:
        return _YamlError(error.found, error.expected)


@dataclass(frozen=True)
class _YamlError:
    found: str
    expected: str | None = None  # None: the descriptor's usual "a YAML mapping (...)"


def _utc(mtime: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(mtime)))  # 0.9 us, datetime's 2.2


def _inside(root_real: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


OUT_OF_ROOT = "a symbolic link out of the archive root"
LEADS_NOWHERE = "a symbolic link that leads nowhere (dangling, or a loop)"
#: characters a published file name cannot hold: controls, and bytes that were not UTF-8
#: (Python hands those over as lone surrogates)
_BAD_NAME = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _subdirectories(
    directory: str, root_real: str, problems: list[Problem], archive: str, root: str
):
    """Sorted (name, path) of the directories in `directory`, links out of the root refused."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as error:
        problems.append(
            Problem(
                archive,
                os.path.relpath(directory, root),
                "",
                f"an unreadable directory ({error.strerror})",
                "a readable directory",
            )
        )
        return []
    found = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            where = os.path.relpath(entry.path, root)
            if not _inside(root_real, entry.path):
                problems.append(
                    Problem(
                        archive,
                        where,
                        "",
                        OUT_OF_ROOT,
                        "a directory inside the archive (the link is not followed)",
                        "warning",
                    )
                )
                continue
            if not os.path.exists(entry.path):
                problems.append(
                    Problem(
                        archive,
                        where,
                        "",
                        LEADS_NOWHERE,
                        "a directory inside the archive",
                        "warning",
                    )
                )
                continue
        if entry.is_dir():
            found.append((entry.name, entry.path, entry.is_symlink()))
    return found


def _bad_name(name: str) -> str | None:
    """Why a file name under doc/ cannot be published, or None."""
    bad = _BAD_NAME.search(name)
    if bad is None:
        return None
    if "\ud800" <= bad.group() <= "\udfff":
        return "a file name that is not UTF-8"
    return "a file name with a control character"


def _doc_files(
    doc: str, root_real: str, problems: list[Problem], archive: str, root: str, plain: bool
) -> tuple[tuple[str, ...], float, str]:
    """Every regular file under doc/ (relative POSIX paths, sorted), the newest mtime and
    a digest of each file's name, size, mtime and ctime (Item.files_stamp): an edit
    changes the ctime even when it keeps the size and sets the mtime back.

    Walked in name order, depth first, so that warnings come out sorted too; without
    recursion (any depth), entering no folder twice on one path (link loops).  Links out
    of the root, special files (FIFOs, devices) and unpublishable names are reported and
    left out; no file is opened.
    """
    files: list[str] = []
    newest = 0.0
    stamp = hashlib.blake2b(digest_size=16)

    def report(path: str, found: str, expected: str) -> None:
        problems.append(
            Problem(archive, os.path.relpath(path, root), "", found, expected, "warning")
        )

    try:
        top = os.lstat(doc)
    except OSError:
        return (), 0.0, ""  # no doc/: the item says whether it needs one
    if not plain or stat.S_ISLNK(top.st_mode):
        if not _inside(root_real, doc):
            report(doc, OUT_OF_ROOT, "a doc/ folder inside the archive (the link is not followed)")
            return (), 0.0, ""
        try:
            top = os.stat(doc)
        except OSError:
            report(doc, LEADS_NOWHERE, "a doc/ folder inside the archive")
            return (), 0.0, ""
    stack = [("", _sorted_entries(doc, report), frozenset({(top.st_dev, top.st_ino)}))]
    while stack:
        prefix, entries, above = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        found = _doc_entry(entry, root_real, report, above)
        if isinstance(found, os.stat_result):  # a file
            name = prefix + entry.name
            files.append(name)
            newest = max(newest, found.st_mtime)
            said = f"{name}\0{found.st_size}\0{found.st_mtime_ns}\0{found.st_ctime_ns}\n"
            stamp.update(said.encode("utf-8", "surrogateescape"))
        elif found is not None:  # a folder: walk it before the next entry
            stack.append(
                (prefix + entry.name + "/", _sorted_entries(entry.path, report), above | {found})
            )
    return tuple(files), newest, stamp.hexdigest()


def _sorted_entries(directory: str, report) -> Iterator[os.DirEntry]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as error:
        report(directory, f"an unreadable directory ({error.strerror})", "a readable directory")
        return iter(())
    return (
        entry for entry in entries if not entry.name.startswith(".")
    )  # .DS_Store, editors' files


def _doc_entry(
    entry: os.DirEntry, root_real: str, report, above: frozenset
) -> tuple[int, int] | os.stat_result | None:
    """One entry under doc/: a folder's identity, a regular file's status, or None (left out)."""
    if entry.is_symlink() and not _inside(root_real, entry.path):
        report(entry.path, OUT_OF_ROOT, "a file inside the archive (the link is not followed)")
        return None
    try:
        st = entry.stat()
    except OSError:
        report(entry.path, LEADS_NOWHERE, "a file inside the archive")
        return None
    why = _bad_name(entry.name)
    if why is not None:
        report(entry.path, why, "a name of printable UTF-8 characters (it is left out)")
        return None
    if stat.S_ISDIR(st.st_mode):
        identity = (st.st_dev, st.st_ino)
        if identity in above:
            report(
                entry.path,
                "a symbolic link loop (a folder inside itself)",
                "a folder that does not hold itself (it is not walked again)",
            )
            return None
        return identity
    if not stat.S_ISREG(st.st_mode):
        report(entry.path, file_kind(st.st_mode), "a regular file (it is left out, never opened)")
        return None
    return st


def read_repository(
    root: Path,
    archive: str,
    relative: str,
    cache: CrawlCache | None = None,
    root_real: str | None = None,
    plain: bool = False,
) -> tuple[Item | None, list[Problem]]:
    """Read one uniform repository (``relative`` = its four directory names joined by /).
    `plain`: no folder from the root to it is a symbolic link (the crawl's walk saw
    them), so only a link at item.yaml or doc/ can lead out of the root.

    Whatever goes wrong while reading it is its own error: the schema's readers check
    every value, and this is the line behind them for what they did not foresee."""
    try:
        return _read_repository(root, archive, relative, cache, root_real, plain)
    except Exception as error:  # noqa: BLE001 - one repository's failure is its own
        return None, [
            Problem(
                archive,
                f"{relative}/item.yaml",
                "",
                f"a value this version cannot read ({failure(error)})",
                "a descriptor and files within archive-format.md's limits (please report "
                "this message: it is a gap in ibistatic's checks)",
            )
        ]


def _read_repository(root, archive, relative, cache, root_real, plain):
    root_real = root_real or os.path.realpath(root)
    directory = os.path.join(root, *relative.split("/"))
    problems: list[Problem] = []
    descriptor = _descriptor(root, relative)  # its cache key: _ITEM + descriptor
    try:
        st = os.lstat(descriptor)
        if not plain or stat.S_ISLNK(st.st_mode):
            if not _inside(root_real, descriptor):  # realpath: an lstat per folder above
                return None, [
                    Problem(
                        archive,
                        f"{relative}/item.yaml",
                        "",
                        OUT_OF_ROOT,
                        "an item.yaml inside the archive (the link is not followed)",
                    )
                ]
            st = os.stat(descriptor)
    except OSError as error:
        return None, [_unreadable(archive, relative, error)]
    if not stat.S_ISREG(st.st_mode):
        return None, [
            Problem(
                archive,
                f"{relative}/item.yaml",
                "",
                f"{file_kind(st.st_mode)}, not a regular file",
                "a regular file item.yaml",
            )
        ]
    files, newest, stamp = _doc_files(
        os.path.join(directory, "doc"), root_real, problems, archive, str(root), plain
    )
    # parsing and validating cost more than walking: the outcome is kept while the
    # descriptor and doc/ stay as they were (no parsed YAML is kept: only the item)
    identity = ((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), files, stamp, archive)
    validated = cache.get(_ITEM + descriptor, identity) if cache is not None else _MISSING
    if validated is _MISSING:
        try:
            validated = _validated(archive, relative, descriptor, st, files, newest, stamp)
        except OSError as error:
            return None, [_unreadable(archive, relative, error)]
        if cache is not None:
            cache.put(_ITEM + descriptor, identity, validated)
    item, item_problems = validated
    return item, problems + item_problems


def _validated(
    archive: str,
    relative: str,
    descriptor: str,
    st: os.stat_result,
    files: tuple,
    newest: float,
    stamp: str,
) -> tuple[Item | None, list[Problem]]:
    """read_item of the descriptor, or the problem of its YAML."""
    raw = _parse_yaml(descriptor)  # a str: a Path and its str() again were 1.6% of a build
    if isinstance(raw, _YamlError):
        return None, [
            Problem(
                archive,
                f"{relative}/item.yaml",
                "",
                raw.found,
                raw.expected or "a YAML mapping (archive-format.md, item.yaml)",
            )
        ]
    if (isinstance(raw, dict) and raw.get("state") == "Deleted") or not files:
        newest = st.st_mtime  # a removal is dated by its descriptor
    return read_item(archive, relative, raw, files, _utc(newest), stamp)


def _unreadable(archive: str, relative: str, error: OSError) -> Problem:
    return Problem(
        archive,
        f"{relative}/item.yaml",
        "",
        f"an unreadable file ({error.strerror})",
        "a readable item.yaml",
    )


def crawl_archive(
    root: Path | str,
    cache: CrawlCache | None = None,
    progress: Callable[[int], None] | None = None,
    expect: Callable[[int], None] | None = None,
) -> Archive:
    """Read one Archive tree: archive.yaml and every repository, in sorted order.
    `expect(n)`: told how many repositories are to be read, once they are listed;
    `progress(1)` after each is read."""
    root = Path(root)
    name = root.name
    archive = Archive(root=root, name=name, info=None)
    if not root.is_dir():
        archive.problems.append(
            Problem(
                name, str(root), "", "no such directory", "an Archive directory with archive.yaml"
            )
        )
        return archive
    archive.info, problems = _archive_info(root, name, cache)
    archive.problems += problems
    if archive.info is None:
        return archive  # without its address no answer of this Archive can be built
    walk_problems: list[Problem] = []
    found = []  # (relative path, how many walk problems came before it)
    linked = set()  # the relative paths reached through a symbolic link
    for relative, link in _repository_paths(root, walk_problems, name):
        found.append((relative, len(walk_problems)))
        if link:
            linked.add(relative)
    relatives = [relative for relative, _ in found]
    if expect is not None:
        expect(len(relatives))
    done = 0
    for (relative, before), (item, problems) in zip(
        found, _read_repositories(root, name, relatives, cache, progress, linked)
    ):
        archive.problems += walk_problems[done:before]  # in the order a plain walk gives
        done = before
        archive.problems += problems
        if item is not None:
            archive.items.append(item)
    archive.problems += walk_problems[done:]
    return archive


def _archive_info(
    root: Path, name: str, cache: CrawlCache | None
) -> tuple[ArchiveInfo | None, list[Problem]]:
    """The validated archive.yaml of `root`, or the problems that leave the Archive out."""
    path = root / "archive.yaml"
    if os.path.lexists(path) and not _inside(os.path.realpath(root), str(path)):
        return None, [
            Problem(
                name,
                "archive.yaml",
                "",
                OUT_OF_ROOT,
                "an archive.yaml inside the archive (the link is not followed)",
            )
        ]
    try:
        return read_archive_info(name, load_yaml(path, cache))
    except FileNotFoundError:
        return None, [
            Problem(
                name, "archive.yaml", "", "no archive.yaml", "an archive.yaml at the Archive root"
            )
        ]
    except OSError as error:
        return None, [
            Problem(
                name,
                "archive.yaml",
                "",
                f"an unreadable file ({error.strerror})",
                "a readable archive.yaml",
            )
        ]
    except _YamlProblem as problem:
        return None, [
            Problem(
                name,
                "archive.yaml",
                "",
                problem.found,
                problem.expected or "a YAML mapping (archive-format.md, archive.yaml)",
            )
        ]
    except Exception as error:  # noqa: BLE001 - as read_repository: the Archive's own error
        return None, [
            Problem(
                name,
                "archive.yaml",
                "",
                f"a value this version cannot read ({failure(error)})",
                "an archive.yaml within archive-format.md's limits (please report this "
                "message: it is a gap in ibistatic's checks)",
            )
        ]


#: from how many repositories an Archive is read by forked processes (ibistatic.forked)
PARALLEL_REPOSITORIES = 5000


def _read_repositories(
    root: Path,
    name: str,
    relatives: list[str],
    cache: CrawlCache | None,
    progress,
    linked: frozenset[str] | set[str] = frozenset(),
) -> list[tuple]:
    """read_repository of each of `relatives`, in order: parsing and validating YAML is
    most of a cold crawl, and the system calls of the walk most of a warm one, so large
    Archives are read over the cores."""
    root_real = os.path.realpath(root)
    if len(relatives) < PARALLEL_REPOSITORIES or not forked.available():
        results = []
        for relative in relatives:
            plain = relative not in linked
            results.append(read_repository(root, name, relative, cache, root_real, plain))
            if progress is not None:
                progress(1)
        return results
    if cache is not None:
        cache.entries  # read once, before the workers fork, not once in each  # noqa: B018

    def chunk(number: int) -> tuple[list, dict, int, int]:
        mine = relatives[number * CHUNK_REPOSITORIES : (number + 1) * CHUNK_REPOSITORIES]
        return _read_chunk(mine, root, name, cache, root_real, linked)

    doing = f"reading the {len(relatives):,} repositories of Archive {name}"
    chunks = -(-len(relatives) // CHUNK_REPOSITORIES)
    results: list = [None] * len(relatives)
    for number, (read, fresh, hits, misses) in forked.each(chunk, chunks, doing):
        if cache is not None:
            read = [_from_cache(cache, result) for result in read]
            cache.entries.update(fresh)  # what the worker parsed, as received
            cache.hits += hits
            cache.misses += misses
        start = number * CHUNK_REPOSITORIES
        results[start : start + len(read)] = read
        if progress is not None:
            progress(len(read))
    return results


#: the repositories a forked worker reads at a time, then hands back to the parent
CHUNK_REPOSITORIES = 500

_ITEM = "item:"  # the crawl cache's keys of validated items: this, then item.yaml's path


def _descriptor(root: Path | str, relative: str) -> str:
    """The path of a repository's item.yaml."""
    return os.path.join(root, *relative.split("/"), "item.yaml")


class _Cached(NamedTuple):
    """What a worker sends of an item the cache gave it: the parent's cache holds the
    same item (the worker's cache is its copy), so only the key and the walk's problems
    travel (a warm crawl sends one of these per item instead of the items)."""

    key: str
    problems: list


def _from_cache(cache: CrawlCache, result: tuple) -> tuple:
    if type(result) is not _Cached:
        return result
    return cache.entries[result.key][1][0], result.problems  # the parent's own item


def _read_chunk(
    relatives: list[str],
    root: Path,
    name: str,
    cache: CrawlCache | None,
    root_real: str,
    linked: frozenset[str] | set[str],
) -> tuple[list, dict, int, int]:
    """In a forked worker: the repositories `relatives` (those the cache gave as _Cached),
    and what the cache learnt meanwhile (the parent's copy of the cache does not see it)."""
    if cache is not None:
        cache.fresh, cache.hits, cache.misses = {}, 0, 0
    read: list = []
    for relative in relatives:
        plain = relative not in linked
        hits = cache.hits if cache is not None else 0
        item, problems = read_repository(root, name, relative, cache, root_real, plain)
        if cache is not None and cache.hits > hits:  # its one question, the item, answered
            read.append(_Cached(_ITEM + _descriptor(root, relative), problems))
        else:
            read.append((item, problems))
    if cache is None:
        return read, {}, 0, 0
    return read, cache.fresh, cache.hits, cache.misses


def _repository_paths(
    root: Path, problems: list[Problem], archive: str
) -> Iterable[tuple[str, bool]]:
    """The relative paths of the directories four levels down that hold item.yaml, each
    with whether the way there passed a symbolic link."""
    root_s, root_real = str(root), os.path.realpath(root)

    def walk(directory: str, parts: tuple[str, ...], linked: bool):
        for name, path, link in _subdirectories(directory, root_real, problems, archive, root_s):
            here = parts + (name,)
            if len(here) < 4:
                yield from walk(path, here, linked or link)
            elif os.path.lexists(
                os.path.join(path, "item.yaml")
            ):  # read_repository says what is wrong with it
                yield "/".join(here), linked or link
            else:
                problems.append(
                    Problem(
                        archive,
                        "/".join(here),
                        "item.yaml",
                        "a 4th-level directory without item.yaml",
                        "a uniform repository holding item.yaml",
                        "warning",
                    )
                )

    yield from walk(root_s, (), False)


def crawl(
    roots: Iterable[Path | str],
    cache: CrawlCache | None = None,
    progress: Callable[[int], None] | None = None,
    expect: Callable[[int], None] | None = None,
) -> CrawlResult:
    """Crawl every Archive, in the order given (the resolution order)."""
    return CrawlResult([crawl_archive(root, cache, progress, expect) for root in roots])
