"""The trees a build writes, and their publication (layout in :mod:`.layout`).

A full build writes a :class:`NewGeneration` straight to disk.  An update writes the
:class:`SpareGeneration`: the live tree of the build before, first brought level with the
live one by hard links to the files the last update changed (its ``behind``).  Either is
published by pointing the output link at it (:mod:`.swap`), so the served tree is always
one whole build; :class:`publishing` turns a failure to write into a PublishError and
removes the tree nobody serves.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import PublishError
from .files import Linked, Tree, place
from .layout import generations, live_generation, write_marker
from .swap import clean_folder, clone_tree, discard, point, remove_file, remove_stale, sync_paths

__all__ = ["Publication", "NewGeneration", "SpareGeneration", "publishing", "spare_ahead"]


@dataclass(frozen=True)
class Publication:
    """What a build published: the live generation, the spare one (the tree of the build
    before; "" if none) and where the spare differs from the live one (None: unknown)."""

    generation: str
    spare: str = ""
    behind: frozenset[str] | None = None


class NewGeneration:
    """A full build's tree, written straight to disk (`direct`), then published."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.folder = generations(output)
        self.work = self.direct = self.folder / f"staging-{os.getpid()}"

    def prepare(self) -> None:
        live = live_generation(self.output)
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_stale(self.output)
        clean_folder(self.folder, {live} if live else set())
        self.work.mkdir()

    def tree(self) -> Path:
        return self.work

    def write(self, files: dict[str, bytes]) -> None:
        replace_files(self.work, files)  # none: a full build writes straight to disk

    def remove(self, paths: list[str]) -> None:
        assert not paths, "a new generation has nothing to remove"

    def make_tree(self, tree: Tree) -> None:
        tree.make(self.work / tree.path)

    def publish(self) -> Publication:
        write_marker(self.work)
        return Publication(publish_generation(self.work, self.output))

    def finish(self, publication: Publication) -> None:
        clean_folder(self.folder, {publication.generation})  # the previous ones, in the background


class SpareGeneration:
    """The generation an update writes: the spare one brought level with the live one
    (or, when there is none, a clone of the live one by hard links), made on first use."""

    direct = None  # an update compares every file with the last build's first

    def __init__(self, output: Path, live: Publication) -> None:
        self.output, self.live = output, live
        self.folder = generations(output)
        self.work = self.folder / f"work-{os.getpid()}"
        self.changed: set[str] = set()  # the paths written or removed
        self._ready = False

    def prepare(self) -> None:
        return None  # on first use: an update that changes nothing touches nothing

    def tree(self) -> Path:
        if not self._ready:
            self._level()
            self._ready = True
        return self.work

    def _level(self) -> None:
        live, spare, behind = self.live.generation, self.live.spare, self.live.behind
        reuse = bool(spare) and behind is not None and (self.folder / spare).is_dir()
        clean_folder(
            self.folder, {live, spare} if reuse else {live}
        )  # also a work tree left by a failure
        if reuse:
            os.rename(self.folder / spare, self.work)
            sync_paths(self.folder / live, self.work, behind)
        else:
            clone_tree(self.folder / live, self.work)

    def write(self, files: dict[str, bytes]) -> None:
        if files:
            replace_files(self.tree(), files)
            self.changed.update(files)

    def remove(self, paths: list[str]) -> None:
        for relative in sorted(paths, reverse=True):
            remove_file(self.tree(), relative)
            self.changed.add(relative)

    def make_tree(self, tree: Tree) -> None:
        folder = self.tree() / tree.path
        tree.make(folder)  # made again whole (it replaces the folder there)
        self.changed.add(tree.path)

    def publish(self) -> Publication:
        if not self.changed:
            return self.live  # the live tree is the new one already
        name = publish_generation(self.work, self.output)
        return Publication(name, self.live.generation, frozenset(self.changed))

    def publish_early(self, files: dict[str, bytes]) -> Publication:
        """Serve `files` (paths the live tree has not) now: the live tree with them added,
        published as a generation of its own; this then becomes the spare of that one
        (the tree it replaced), levelled with it on first use, for the rest of the update."""
        self.write(files)
        publication = self.publish()
        self.live, self.changed, self._ready = publication, set(), False
        return publication

    def finish(self, publication: Publication) -> None:
        return None


def spare_ahead(output: Path, live: Publication) -> Publication:
    """`live` with a spare generation level with it (nothing behind), made now for the
    next update to write into at once: a clone of the live one by hard links, or the
    spare there is brought level.  Watch makes it after each build, while it waits for
    the next change: otherwise the first republish clones the whole site before its
    first file, and each levels its spare (little, but before a deposit's pages are
    served).  A failure (a full disk) leaves no partial
    tree and `live` as it was."""
    if live.spare and live.behind == frozenset():
        return live  # level already
    spare = SpareGeneration(output, live)  # what an update would do first, done now
    name = f"g{time.time_ns():x}"
    try:
        os.rename(spare.tree(), spare.folder / name)
    except OSError:
        clean_folder(spare.folder, {live.generation, live.spare} - {""})  # a partial clone
        return live
    return Publication(live.generation, name, frozenset())


def replace_files(root: Path, files: dict[str, bytes | Linked]) -> None:
    """Write `files` under `root`, each as a new file renamed over the old: a file a
    generation shares with another (a hard link) is never changed in place."""
    for relative in sorted(files):
        path = os.path.join(root, *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        place(temporary, files[relative])
        os.replace(temporary, path)


def publish_generation(tree: Path, output: Path) -> str:
    """Name the complete `tree` (in the generations folder) a generation and point
    `output` at it; returns its name."""
    name = f"g{time.time_ns():x}"
    os.rename(tree, tree.parent / name)
    replaced = point(output, f"{tree.parent.name}/{name}")
    if replaced is not None:  # a plain folder published by an older version
        discard(replaced)
    return name


class publishing:
    """A failure to write (a full disk, a read-only folder) becomes a PublishError; the
    tree being written, which nobody serves, is removed."""

    def __init__(self, output: Path, work: Path) -> None:
        self.output, self.work = output, work
        self.served_early = False  # the update's new files were published first

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, traceback) -> bool:
        if error is None or not isinstance(error, OSError):
            return False
        if os.path.lexists(self.work):
            discard(self.work)
        where = f" ({error.filename})" if error.filename else ""
        served = (
            "the published site has this update's new pages only"
            if self.served_early
            else "the published site is unchanged"
        )
        raise PublishError(
            f"cannot publish {self.output}: {error.strerror or error}{where}; {served}"
        ) from None
