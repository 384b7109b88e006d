"""Shared fixtures: the bundled sample, small archives written on the fly, built indexes."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "ibistatic" / "sample_archive"
SITE_URL = "https://ibi.example.org/"


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def sample_loaded():
    from ibistatic.archive.load import load_archives

    return load_archives([SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"], SITE_URL)


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory, sample_loaded) -> Path:
    from ibistatic.index.writer import write_index

    directory = tmp_path_factory.mktemp("sample-index")
    write_index(sample_loaded, directory)
    return directory
