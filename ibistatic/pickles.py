"""Large dicts saved as a series of pickles of a few thousand entries each.

One ``pickle.dump`` of a whole dict keeps a memo entry for every object it writes until
it is done: for the state of a 100,000-item site that is hundreds of MiB on top of the
objects themselves.  Each chunk here is a pickle of its own, so the memo never holds
more than a chunk.  (Objects shared between chunks are written once per chunk.)
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import IO

__all__ = ["dump_mapping", "load_mapping", "CHUNK"]

CHUNK = 5000


def dump_mapping(handle: IO[bytes], mapping: Mapping, chunk: int = CHUNK) -> None:
    """Write `mapping` as lists of at most `chunk` (key, value) pairs, ended by None."""
    entries = list(mapping.items())
    for start in range(0, len(entries), chunk):
        pickle.dump(entries[start:start + chunk], handle, protocol=pickle.HIGHEST_PROTOCOL)
    pickle.dump(None, handle, protocol=pickle.HIGHEST_PROTOCOL)


def load_mapping(handle: IO[bytes]) -> dict:
    """The dict dump_mapping wrote at the handle's position."""
    mapping: dict = {}
    while (entries := pickle.load(handle)) is not None:
        mapping.update(entries)
    return mapping
