"""The store: one build's files in, one published generation out.

    with Store.full(output) as store:         # or Store.update(output, live, digests)
        for part in store.render(keys, work, progress): ...   # forked when many
        store.put(file); store.add_tree(tree)
        publication = store.commit()

How files are compared, packed and written is :mod:`.files`; which tree they go to and
how it is published is :mod:`.generations`.  A failure to write anywhere in the block is a
PublishError and the published site is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from .. import forked
from .files import File, Files, Tree
from .generations import NewGeneration, Publication, SpareGeneration, publishing

__all__ = ["Store", "PARALLEL_ITEMS"]

#: items from which a full build renders them in forked processes (ibistatic.forked)
PARALLEL_ITEMS = 5000

Result = TypeVar("Result")


def _nothing() -> None:
    """A forked chunk's tick: its keys are counted when it comes back."""


class Store:
    """Where one build writes its files (see the module's docstring)."""

    def __init__(
        self,
        output: Path,
        generation: NewGeneration | SpareGeneration,
        digests: dict[str, bytes],
        early: bool = False,
    ) -> None:
        self.generation = generation
        self.files = Files(digests, generation.direct)
        self.trees: list[Tree] = []
        self._publishing = publishing(output, generation.work)
        #: serve the items' new files as soon as they are made (publish_new)
        self.early = early

    @classmethod
    def full(cls, output: Path) -> Store:
        """Every file into a new generation, written as it comes."""
        return cls(output, NewGeneration(output), {})

    @classmethod
    def update(
        cls, output: Path, live: Publication, digests: dict[str, bytes], early: bool = False
    ) -> Store:
        """Into the spare generation, only the files whose bytes differ from `digests`;
        `early` (watch): the items' files at new paths served before the rest is made
        (publish_new)."""
        return cls(output, SpareGeneration(output, live), digests, early)

    def __enter__(self) -> Store:
        self._publishing.__enter__()
        try:
            self.generation.prepare()
        except BaseException as error:
            self._publishing.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        return self._publishing.__exit__(kind, error, traceback)

    def put(self, file: File) -> bool:
        """Take `file`; False when its path was taken already (the first one wins)."""
        return self.files.put(file)

    def add_tree(self, tree: Tree) -> None:
        """A folder made whole when the build is committed."""
        self.trees.append(tree)

    def carry(self, digests: dict[str, bytes], dropped: Iterable[str] | None = None) -> None:
        """The digests of the files not made again (unchanged since the last build);
        `dropped`: the last build's paths left out of them (Files.carry)."""
        self.files.carry(digests, dropped)

    @property
    def digests(self) -> dict[str, bytes]:
        return self.files.digests

    @property
    def written(self) -> int:
        """Files written so far (every file of a full build)."""
        return self.files.written

    def render(
        self,
        keys: list[str],
        work: Callable[[list[str], Files, Callable[[], None]], Iterable[Result]],
        progress,
        chunk: int,
    ) -> Iterator[Result]:
        """`work(keys, files, tick)` over `keys`, which yields its results part by part:
        in forked processes, `chunk` keys at a time, when there are many keys and the
        files go straight to disk, else here; `tick()` once per key done.  Yields each
        part as it comes back (the parent merges them while the workers go on), so their
        order is not the keys'."""
        direct = self.generation.direct
        if not self.forks(len(keys)):
            yield from work(keys, self.files, progress.advance)
            if self.early:
                self.publish_new()
            self.flush()
            return

        def rendered(number: int) -> tuple[list, dict, int]:
            files = Files({}, direct)
            results = list(work(keys[number * chunk : (number + 1) * chunk], files, _nothing))
            return results, files.digests, files.written

        chunks = -(-len(keys) // chunk)
        for number, (results, digests, written) in forked.each(rendered, chunks, "rendering"):
            self.files.absorb(digests, written)
            progress.advance(len(keys[number * chunk : (number + 1) * chunk]))
            yield from results

    def render_apart(
        self, parts: list, work: Callable[[object, Files], Result], items: int
    ) -> Iterator[Result] | None:
        """`work(part, files)` for each of `parts`, spread over forked processes, writing
        straight to disk (the files put so far keep their paths: the first file of a
        path still wins); None when they must run here (an update, a site of fewer than
        PARALLEL_ITEMS `items`, or no fork).  Each worker takes the next part not taken
        when it is done with one (give the costliest first).  Yields the results in the
        order of `parts`."""
        if not self.forks(items) or len(parts) < 2:
            return None
        return self._apart(parts, work, self.generation.direct)

    def forks(self, items: int) -> bool:
        """Whether work over `items` items is shared among forked processes: a full build
        (its files go straight into the new tree) of PARALLEL_ITEMS items or more, where
        this process may fork."""
        return self.generation.direct is not None and items >= PARALLEL_ITEMS and forked.available()

    def _apart(self, parts: list, work, direct) -> Iterator[Result]:
        def made(number: int) -> tuple:
            files = Files({}, direct, taken=self.files.digests)
            return work(parts[number], files), files.digests, files.written

        done = forked.ordered(made, len(parts), "writing the site-wide files")
        for _, digests, written in done:
            self.absorb_apart(digests, written)
        yield from (result for result, _, _ in done)

    def absorb_apart(self, digests: dict[str, bytes], written: int) -> None:
        """What a forked process wrote straight into the new tree (`digests`: its files)."""
        twice = digests.keys() & self.files.digests.keys()
        if twice:  # two outputs of one path: a bug of ibistatic, never of the input
            raise RuntimeError(f"two site outputs made {sorted(twice)[:3]}")
        self.files.absorb(digests, written)

    def publish_new(self) -> Publication | None:
        """Serve now, in a generation of their own, the files made so far at paths the
        live tree has not (a deposit's pages): the live tree with them added, nothing in
        it changed or removed.  The rest of the update goes on in the tree that one
        replaced.  None when there are none (an edit changes only existing paths)."""
        made = self.files.files
        paths = [path for path in made if path not in self.files.old]
        if not paths:
            return None
        publication = self.generation.publish_early({path: made.pop(path) for path in paths})
        self._publishing.served_early = True  # a later failure leaves these served
        return publication

    def flush(self) -> None:
        """The files kept in memory (an update's) into the tree: out of memory."""
        self.generation.write(self.files.files)
        self.files.files.clear()

    def commit(self) -> tuple[Publication, int]:
        """Write what is left, remove the last build's files this one has not, make the
        trees, publish; returns the publication and how many files were removed."""
        self.flush()
        removed = self.files.removed()
        self.generation.remove(removed)
        for tree in self.trees:
            self.generation.make_tree(tree)
        publication = self.generation.publish()
        return publication, len(removed)

    def finish(self, publication: Publication) -> None:
        """After the block: what the publication left behind, in the background."""
        self.generation.finish(publication)
