"""The corpus of broken archives (tests/corpus/): exact problem lines, and what is still published.

Each case is a directory holding one or more Archive trees and:

- ``expected.txt``: the exact ``str(problem)`` lines ``load_archives`` reports, in order;
  ``{case}`` stands for the directory the case was copied to;
- ``published.txt``: the repository names ``loaded.holdings.all_items()`` yields, one
  per held item (a name held by two Archives is listed twice);
- ``archives.txt`` (optional): the Archive directories in resolution order; default:
  the sorted subdirectories;
- ``symlinks.txt`` (optional): ``link -> target`` lines, made in the temporary copy
  (symbolic links are not committed);
- ``xfail.txt`` (optional): why the code's message is not the one in expected.txt yet.
  Only the problem lines are marked; what is published must hold today.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ibistatic.archive.load import load_archives

CORPUS = Path(__file__).resolve().parent / "corpus"
SITE_URL = "https://ibi.example.org/"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _xfail_reason(case: str) -> str | None:
    reason = _lines(CORPUS / case / "xfail.txt")
    return " ".join(reason) if reason else None


def _problem_params():
    for case in CASES:
        reason = _xfail_reason(case)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        yield pytest.param(case, id=case, marks=marks)


def _load(case: str, tmp_path: Path):
    """Copy the case to tmp_path, make its symbolic links, and load its Archives."""
    directory = tmp_path / case
    shutil.copytree(CORPUS / case, directory)
    for line in _lines(directory / "symlinks.txt"):
        link, target = (part.strip() for part in line.split(" -> "))
        os.symlink(target, directory / link)
    names = _lines(directory / "archives.txt") or sorted(
        p.name for p in directory.iterdir() if p.is_dir()
    )
    return directory, load_archives([directory / name for name in names], SITE_URL)


def test_corpus_has_the_cases_the_format_names():
    # a case silently renamed or deleted must not shrink the corpus unnoticed
    assert len(CASES) >= 40
    for case in CASES:
        assert (CORPUS / case / "expected.txt").is_file(), case
        assert (CORPUS / case / "published.txt").is_file(), case


@pytest.mark.parametrize("case", _problem_params())
def test_problem_lines(case, tmp_path):
    directory, loaded = _load(case, tmp_path)
    expected = [
        line.replace("{case}", str(directory)) for line in _lines(CORPUS / case / "expected.txt")
    ]
    assert [str(problem) for problem in loaded.problems] == expected


@pytest.mark.parametrize("case", CASES)
def test_good_items_still_published(case, tmp_path):
    _, loaded = _load(case, tmp_path)
    published = [item.repository.text for item in loaded.holdings.all_items()]
    assert Counter(published) == Counter(_lines(CORPUS / case / "published.txt"))


def test_a_ds_store_in_doc_is_not_one_of_the_items_files(tmp_path):
    # a global gitignore often drops .DS_Store: without it the case would prove nothing
    case = "ds-store-beside-single-file"
    doc = CORPUS / case / "mtc-m16c/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc"
    assert sorted(p.name for p in doc.iterdir()) == [".DS_Store", "report.txt"]
    _, loaded = _load(case, tmp_path)
    (item,) = loaded.holdings.all_items()
    # the case's Archive holds no service item: that warning is the only problem
    assert (item.files, item.target) == (("report.txt",), "report.txt")
    assert [problem.key for problem in loaded.problems] == ["service-ibi"]


@pytest.mark.parametrize("case", CASES)
def test_problems_are_one_line_each(case, tmp_path):
    # the CLI prints one problem per line; a newline inside one breaks that (and grep)
    _, loaded = _load(case, tmp_path)
    multi_line = [str(p) for p in loaded.problems if "\n" in str(p)]
    if _xfail_reason(case) and multi_line:
        pytest.xfail(_xfail_reason(case))
    assert multi_line == []
