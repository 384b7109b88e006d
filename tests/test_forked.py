"""ibistatic.forked: shares of a job in forked processes, results back through files."""

from __future__ import annotations

import tempfile

import pytest

from ibistatic import forked

pytestmark = pytest.mark.skipif(not forked.available(), reason="needs fork")


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where run_shares makes its folder
    return tmp_path


def test_results_come_back_in_share_order_and_leave_no_files(scratch):
    def work(share, counter):
        forked.count(counter, 1)
        return {"share": share, "data": b"x" * 100_000 * (share + 1)}

    results = forked.run_shares(work)
    assert list(scratch.iterdir()) != []  # read lazily: the files wait for the reader
    assert [(r["share"], len(r["data"])) for r in results] == [
        (n, 100_000 * (n + 1)) for n in range(forked.workers())
    ]
    assert list(scratch.iterdir()) == []


def test_a_failing_share_raises_and_leaves_no_files(scratch):
    def work(share, counter):
        if share == 1:
            raise ValueError("share 1 failed")
        return share

    with pytest.raises(ValueError, match="share 1 failed"):
        list(forked.run_shares(work))
    assert list(scratch.iterdir()) == []
