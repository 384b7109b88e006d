"""Invariants over random faulty trees (hypothesis), and the cases that need a real process:
a descriptor that would segfault libyaml, a worker that dies, the bundled sample under --strict."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archive_factory import write_service_item
from ibistatic import forked
from ibistatic.archive.load import load_archives
from ibistatic.cli import main
from tests.hostile.cases import ARCHIVE_A

ROOT = Path(__file__).resolve().parent.parent
SERVICE_A = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"  # ARCHIVE_A's service-ibi
SITE_URL = "https://ibi.example.org/"

#: faults a depositor can make to one repository: (name, how)
FAULTS = {
    "impossible-date": lambda d: (d / "item.yaml").write_text(
        "state: Original\ntimestamp: 2009-02-30T00:00:00Z\n"
    ),
    "deep-nesting": lambda d: (d / "item.yaml").write_text("[" * 50_000),
    "billion-laughs": lambda d: (d / "item.yaml").write_text(
        "a: &a [x, x]\nb: &b [*a, *a, *a]\nstate: *b\n"
    ),
    "python-tag": lambda d: (d / "item.yaml").write_text(
        "state: !!python/object/apply:os.system [id]\n"
    ),
    "duplicate-key": lambda d: (d / "item.yaml").write_text("state: Original\nstate: Copy\n"),
    "not-utf-8": lambda d: (d / "item.yaml").write_bytes(b"state: Orig\xe9nal\n"),
    "fifo": lambda d: ((d / "item.yaml").unlink(), os.mkfifo(d / "item.yaml")),
    "link-out": lambda d: (
        (d / "item.yaml").unlink(),
        os.symlink("/etc/hostname", d / "item.yaml"),
    ),
    "bad-state": lambda d: (d / "item.yaml").write_text("state: Orignal\n"),
    "huge-number": lambda d: (d / "item.yaml").write_text(
        "state: Original\nibip: " + "7" * 5000 + "\n"
    ),
    "empty-doc": lambda d: (d / "doc" / "report.txt").unlink(),
    "directory-descriptor": lambda d: ((d / "item.yaml").unlink(), (d / "item.yaml").mkdir()),
}


def _repository(number: int) -> str:
    return f"sid.inpe.br/mtc-m18@80/2009/07.21.13.{number:02d}"


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    faults=st.lists(st.sampled_from(sorted(FAULTS)), min_size=1, max_size=6),
    innocent=st.integers(1, 5),
    random=st.randoms(use_true_random=False),
)
def test_innocent_items_always_publish_and_problems_name_the_faulty_only(
    tmp_path_factory, faults, innocent, random
):
    root = tmp_path_factory.mktemp("case") / "mtc-m16c"
    root.mkdir()
    (root / "archive.yaml").write_text(ARCHIVE_A)
    write_service_item(root, SERVICE_A)
    numbers = random.sample(range(60), len(faults) + innocent)
    faulty = {_repository(n): fault for n, fault in zip(numbers, faults)}
    good = {_repository(n) for n in numbers[len(faults) :]}
    for name in [*faulty, *good]:
        directory = root.joinpath(*name.split("/"))
        (directory / "doc").mkdir(parents=True)
        (directory / "item.yaml").write_text("state: Original\ntimestamp: 2009-07-21T13:23:45Z\n")
        (directory / "doc" / "report.txt").write_text(name)
    for name, fault in faulty.items():
        FAULTS[fault](root.joinpath(*name.split("/")))
    loaded = load_archives([root], SITE_URL)
    published = {item.repository.text for item in loaded.holdings.all_items()}
    assert good <= published
    assert not published & set(faulty)
    named = {problem.path.split("/item.yaml")[0] for problem in loaded.problems}
    assert named == set(faulty)
    assert all("\n" not in str(problem) for problem in loaded.problems)


def _run(code: str, tmp_path: Path, timeout: int = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _site(tmp_path: Path, descriptor: bytes) -> None:
    root = tmp_path / "mtc-m16c"
    for number, text in ((1, b"state: Original\n"), (2, descriptor)):
        directory = root.joinpath(*_repository(number).split("/"))
        (directory / "doc").mkdir(parents=True)
        (directory / "item.yaml").write_bytes(text)
        (directory / "doc" / "report.txt").write_text("x")
    (root / "archive.yaml").write_text(ARCHIVE_A)
    write_service_item(root, SERVICE_A)
    (tmp_path / "ibistatic.yaml").write_text(
        "site-url: https://ibi.example.org/\narchives: [mtc-m16c]\n"
    )


def test_a_descriptor_that_segfaults_libyaml_is_one_error_in_a_real_process(tmp_path):
    _site(tmp_path, b"[" * 60_000 + b"]" * 60_000)
    done = _run("import sys; from ibistatic.cli import main; sys.exit(main(['build']))", tmp_path)
    assert done.returncode == 1, done.stderr
    assert (
        f"error: mtc-m16c: {_repository(2)}/item.yaml: lists or mappings nested over 32 deep at line 1, column 33"
        in done.stderr
    )
    assert (tmp_path / "site" / _repository(1) / "index.html").is_file()


@pytest.mark.skipif(not forked.available(), reason="needs fork")
def test_a_crawl_worker_that_segfaults_ends_the_build_with_a_clear_error_not_a_hang(tmp_path):
    _site(tmp_path, b"state: Original\n")
    done = _run(
        """
        import ctypes, os, sys
        from ibistatic.archive import crawl
        crawl.PARALLEL_REPOSITORIES = 1  # read in forked workers
        real = crawl.read_repository
        def read(root, archive, relative, *args):
            if relative.endswith('13.02') and os.getpid() != PARENT:
                ctypes.string_at(0)  # a segfault, as libyaml's composer gave
            return real(root, archive, relative, *args)
        PARENT = os.getpid()
        crawl.read_repository = read
        from ibistatic.cli import main
        sys.exit(main(['build']))
    """,
        tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert (
        # 3: the two items and the Archive's service, one chunk
        "ibistatic build: reading the 3 repositories of Archive mtc-m16c: a worker process died of "
        "SIGSEGV (chunk 1 of 1); "
        "nothing was published, the previous output is unchanged" in done.stderr
    )
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.skipif(not forked.available(), reason="needs fork")
@pytest.mark.parametrize(
    "how, words",
    [
        (signal.SIGKILL, "died of SIGKILL (perhaps killed for lack of memory)"),
        (signal.SIGSEGV, "died of SIGSEGV"),
    ],
)
def test_a_worker_death_is_named(how, words):
    def work(number):
        if number == 1:
            faulthandler.disable()  # pytest's would print the worker's stack
            os.kill(os.getpid(), how)
        return number

    with forked.using_jobs(2), pytest.raises(forked.WorkerDied) as raised:
        list(forked.each(work, 2, "testing"))
    assert (
        str(raised.value)
        == f"testing: a worker process {words} (chunk 2 of 2); nothing was published, the previous output is unchanged"
    )


def test_a_worker_that_exits_without_a_result_is_named():
    def work(number):
        if number == 0:
            os._exit(3)
        return number

    with (
        forked.using_jobs(2),
        pytest.raises(
            forked.WorkerDied,
            match=r"^testing: a worker process ended with exit status 3 and no result \(chunk 1 of 2\)",
        ),
    ):
        list(forked.each(work, 2, "testing"))


def test_build_strict_passes_on_the_bundled_sample(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--strict"]) == 0
    out, err = capsys.readouterr()
    assert " 0 errors, " in out
    assert not [line for line in err.splitlines() if line.startswith(("error:", "warning: mtc-"))]


def test_exit_codes_and_counts_tell_the_truth(tmp_path, monkeypatch, capsys):
    from ibistatic.summary import counted

    _site(tmp_path, b"state: Original\nk: 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["build"]) == 0  # a warning only
    assert main(["build", "--strict"]) == 1
    (tmp_path / "mtc-m16c" / _repository(2).replace("/", os.sep) / "item.yaml").write_text(
        "state: Orignal\n"
    )
    capsys.readouterr()  # only the last run's lines below
    assert main(["build"]) == 1  # an error was reported
    out, err = capsys.readouterr()
    printed = [line for line in err.splitlines() if line.startswith(("error:", "warning:"))]
    errors = sum(line.startswith("error:") for line in printed)
    warnings = len(printed) - errors
    assert (
        errors == 1 and warnings >= 1
    )  # the bad state; the unknown key (no host chosen: no host warning)
    assert (
        f" {counted(errors, 'error')}, {counted(warnings, 'warning')} " in out.splitlines()[-1]
    )  # the summary counts what was printed


def test_alike_warnings_are_capped_with_a_count(tmp_path, monkeypatch, capsys):
    _site(tmp_path, b"state: Original\n")
    root = tmp_path / "mtc-m16c"
    for number in range(3, 28):
        directory = root.joinpath(*_repository(number).split("/"))
        directory.mkdir(parents=True)  # 25 4th-level folders without item.yaml
    monkeypatch.chdir(tmp_path)
    assert main(["build"]) == 0
    out, err = capsys.readouterr()
    alike = [line for line in err.splitlines() if "a 4th-level directory without item.yaml" in line]
    assert len(alike) == 21
    assert (
        alike[-1]
        == "warning: mtc-m16c: ... and 5 more warnings like this (a 4th-level directory without item.yaml)"
    )
    assert " 0 errors, 25 warnings " in out  # 25 folders (no host chosen: no host warning)


def test_the_errors_of_one_file_are_capped_with_a_count():
    """A descriptor with 50,000 bad keys is 21 lines, not 50,000; other files' errors all
    show."""
    from ibistatic.commands.build import problem_lines
    from ibistatic.errors import Problem

    path = "sid.inpe.br/x/2020/01.01.00.00/item.yaml"
    problems = [
        Problem("a", path, f"translations.k{n}", "'x'", "a language tag") for n in range(50_000)
    ]
    problems.append(Problem("a", "other/item.yaml", "state", "'Orignal'", "Original"))
    lines = problem_lines(problems)
    assert len(lines) == 22
    assert lines[:20] == [str(problem) for problem in problems[:20]]
    assert lines[20] == str(problems[-1])
    assert lines[21] == f"error: a: {path}: ... and 49,980 more errors in this file"
