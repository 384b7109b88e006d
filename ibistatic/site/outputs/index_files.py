"""The JSON index under ``index/`` (docs/index-format.md): item records and precomputed
answers in shards, ``checksums.json`` and ``manifest.json``.  A shard no change touched is
not made again: its digest and checksum carry over from the last build."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from ...index.writer import index_files
from ...store.files import File, unpack

PREFIX = "index/"


class IndexFiles:
    name = "index"
    pages = False
    remembered = False
    apart = True  # costly at scale: a full build makes it in a forked process of its own

    def files(self, plan, context) -> Iterator[File]:
        state = context.state
        answers = {key: value for by_key in state.answers.values() for key, value in by_key.items()}

        def unchanged(relative: str) -> str | None:
            if PurePosixPath(relative).stem in context.touched:
                return None
            if PREFIX + relative not in state.digests:
                return None
            return state.checksums.get(PREFIX + relative)

        made = index_files(context.loaded, state.records, answers, state.digits, unchanged, unpack)
        for relative, data, checksum in made:
            yield File(PREFIX + relative, data, checksum=checksum, kept=data is None)


OUTPUT = IndexFiles()
