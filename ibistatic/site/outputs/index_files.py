"""The JSON index under ``index/`` (docs/index-format.md): item records and precomputed
answers in shards, ``checksums.json`` and ``manifest.json``.  A shard no change touched is
not made again: its digest and checksum carry over from the last build.

The keys of each shard are kept in the state's memo (site.memo) between builds: a
republish moves the keys the change touched, not every key of the site into its shard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from ...index.writer import group_by_shard, index_files, shard_of
from ...store.files import File, unpack

PREFIX = "index/"


class IndexFiles:
    name = "index"
    pages = False
    remembered = False
    #: forked in a full build, the costliest first: every record of the JSON index
    apart = 3

    def files(self, plan, context) -> Iterator[File]:
        state = context.state
        shards = _shards_of(state, plan, context.touched)
        touched = {shard_of(key, state.digits) for key in context.touched}

        def unchanged(relative: str) -> str | None:
            if PurePosixPath(relative).stem in touched:
                return None
            if PREFIX + relative not in state.digests:
                return None
            return state.checksums.get(PREFIX + relative)

        made = index_files(
            context.loaded, shards.records, shards.answers, state.digits, unchanged, unpack
        )
        for relative, data, checksum in made:
            yield File(PREFIX + relative, data, checksum=checksum, kept=data is None)


class Shards:
    """The state's records and answers grouped by shard (shard -> {index key: value}),
    with the answers' table each repository gave them from."""

    def __init__(self, state) -> None:
        self.digits = state.digits
        self.records = group_by_shard(state.records, state.digits)
        self.from_repository = dict(state.answers)
        flat = (pair for by_key in state.answers.values() for pair in by_key.items())
        self.answers = group_by_shard(flat, state.digits)  # never a table of every answer

    def update(self, state, affected, touched) -> None:
        """Moved to the state's tables of now: the records of the `touched` index keys,
        the answers of the `affected` repositories."""
        for key in touched:
            _place(self.records, shard_of(key, self.digits), key, state.records.get(key))
        fresh = {}
        for repository in affected:
            for key in self.from_repository.pop(repository, {}):
                _place(self.answers, shard_of(key, self.digits), key, None)
            if repository in state.answers:
                fresh[repository] = self.from_repository[repository] = state.answers[repository]
        for by_key in fresh.values():  # after every removal: a key may change repository
            for key, value in by_key.items():
                _place(self.answers, shard_of(key, self.digits), key, value)


def _place(groups: dict[str, dict], shard: str, key: str, value) -> None:
    """`key` in its shard's group with `value`, or out of it when `value` is None."""
    if value is not None:
        groups.setdefault(shard, {})[key] = value
        return
    group = groups.get(shard)
    if group is not None:
        group.pop(key, None)
        if not group:
            del groups[shard]


def _shards_of(state, plan, touched) -> Shards:
    """The grouping kept in the state's memo, moved to this build's tables; made whole
    the first time (a full build groups in a forked worker whose memo is not kept)."""
    shards = state.memo.get(IndexFiles.name)
    if shards is None or shards.digits != state.digits:
        shards = state.memo[IndexFiles.name] = Shards(state)
    else:
        shards.update(state, plan.affected, touched)
    return shards


OUTPUT = IndexFiles()
