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


def test_a_worker_that_cannot_report_says_why_in_one_line(scratch, capfd):
    """A full disk fails the work and then the worker's own report of it: the worker
    says its cause in one line on stderr, never a traceback, and the parent raises
    WorkerDied (the build's message: nothing was published)."""
    import shutil

    def work(share, counter):
        if share == 1:
            shutil.rmtree(forked._JOB[2])  # nowhere to write: as a full disk
            raise OSError(28, "No space left on device", "page.html")
        return share

    with forked.using_jobs(2), pytest.raises(forked.WorkerDied, match="no result"):
        list(forked.run_shares(work, None, "writing"))
    err = capfd.readouterr().err
    assert "share 2: OSError: [Errno 28] No space left on device: 'page.html'" in err
    assert "its report could not be written either" in err and "Traceback" not in err
