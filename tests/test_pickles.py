"""ibistatic.pickles: large dicts saved in chunks, each a pickle of its own."""

from __future__ import annotations

import io
import os
import pickle

import pytest

from ibistatic import forked
from ibistatic.pickles import dump_mapping, load_mapping


@pytest.mark.parametrize("size", [0, 1, 4, 5, 6, 17])
def test_a_mapping_comes_back_whole_and_in_order(size):
    mapping = {f"key-{n}": (n, "value" * n, b"\x00" * n) for n in range(size)}
    handle = io.BytesIO()
    dump_mapping(handle, mapping, chunk=5)
    dump_mapping(handle, {"after": 1}, chunk=5)  # several mappings follow one another
    handle.seek(0)
    loaded = load_mapping(handle)
    assert loaded == mapping and list(loaded) == list(mapping)
    assert load_mapping(handle) == {"after": 1}


def test_each_chunk_is_a_pickle_of_its_own():
    handle = io.BytesIO()
    dump_mapping(handle, {n: str(n) for n in range(12)}, chunk=5)
    handle.seek(0)
    chunks = []
    while (chunk := pickle.load(handle)) is not None:
        chunks.append(chunk)
    assert [len(chunk) for chunk in chunks] == [5, 5, 2]


def test_a_truncated_file_is_an_error_not_a_shorter_mapping():
    handle = io.BytesIO()
    dump_mapping(handle, {n: str(n) for n in range(12)}, chunk=5)
    truncated = io.BytesIO(handle.getvalue()[: len(handle.getvalue()) // 2])
    with pytest.raises((EOFError, pickle.UnpicklingError)):
        load_mapping(truncated)


@pytest.mark.parametrize("make", [os.mkdir, os.mkfifo], ids=["folder", "fifo"])
def test_a_folder_or_fifo_where_the_file_was_is_untrusted_not_read(tmp_path, make):
    """Neither raises an OSError past the caller's Untrusted, nor blocks on open."""
    from ibistatic.pickles import Untrusted, load_sealed

    path = tmp_path / "cache.pickle"
    make(path, 0o700)
    with pytest.raises(Untrusted, match="not a regular file"):
        load_sealed(path, "crawl cache", 1, 1)


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_a_file_saved_by_forked_workers_is_the_file_saved_here(tmp_path, monkeypatch):
    """Shared among forked workers (each pickling every third chunk), the chunks are
    written back in order: the sealed file has the same bytes as one saved in this
    process, and reads back the same mappings, an empty one included."""
    from ibistatic import pickles
    from ibistatic.pickles import load_sealed, save_sealed

    monkeypatch.setattr(pickles, "CHUNK", 7)
    monkeypatch.setattr(pickles, "PARALLEL_CHUNKS", 4)
    forks = []
    run_shares = forked.run_shares
    monkeypatch.setattr(
        forked, "run_shares", lambda *a, **k: forks.append(1) or run_shares(*a, **k)
    )
    mappings = [
        {f"key{n}": ("item", n, [n] * (n % 5)) for n in range(100)},
        {},
        {n: bytes([n % 256]) * n for n in range(45)},
    ]
    with forked.using_jobs(3):
        save_sealed(tmp_path / "apart", "test", (1, "head"), mappings)
    with forked.using_jobs(1):
        save_sealed(tmp_path / "here", "test", (1, "head"), mappings)
    assert forks == [1]  # the first was shared out, the second was not
    assert (tmp_path / "apart").read_bytes() == (tmp_path / "here").read_bytes()
    assert load_sealed(tmp_path / "apart", "test", 1, 3) == ("head", mappings)
