"""The hostile corpus (tests/hostile/cases.py): one bad input costs only itself.

Each case builds a two-Archive site in-process with ``ibistatic.cli.main`` and checks the
exit code, the message line, that no traceback escaped, that nothing read out of the
archive root is shown, and that the innocent items are still published.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ibistatic.cli import main
from tests.hostile.cases import (
    ARCHIVE_A,
    ARCHIVE_B,
    BAD,
    CASES,
    GOOD_A,
    GOOD_B,
    GOOD_CONFIG,
    GOOD_ITEM,
    Case,
)


def _repository(root: Path, name: str, descriptor: str) -> Path:
    directory = root.joinpath(*name.split("/"))
    (directory / "doc").mkdir(parents=True)
    (directory / "item.yaml").write_text(descriptor, encoding="utf-8")
    (directory / "doc" / "report.txt").write_text(f"The report {name}.\n", encoding="utf-8")
    return directory


def make_site(tmp: Path) -> tuple[Path, Path, Path]:
    """The innocent site: A (GOOD_A, BAD) and B (GOOD_B); returns (config, A, BAD's folder)."""
    a, b = tmp / "mtc-m16c", tmp / "mtc-m16d"
    for root, text in ((a, ARCHIVE_A), (b, ARCHIVE_B)):
        root.mkdir()
        (root / "archive.yaml").write_text(text, encoding="utf-8")
    _repository(a, GOOD_A, GOOD_ITEM)
    bad = _repository(a, BAD, GOOD_ITEM)
    _repository(b, GOOD_B, GOOD_ITEM)
    config = tmp / "ibistatic.yaml"
    config.write_text(GOOD_CONFIG, encoding="utf-8")
    return config, a, bad


@pytest.fixture
def unreadable(monkeypatch):
    """Paths ending in .unreadable refuse to open, for root too (chmod would not)."""
    real_open, real_scandir = os.open, os.scandir

    def refuse(path):
        if isinstance(path, (str, bytes, os.PathLike)) and os.fsdecode(
            os.path.realpath(path)
        ).endswith(".unreadable"):
            raise PermissionError(13, "Permission denied", str(path))

    def guarded_open(path, *args, **kwargs):
        refuse(path)
        return real_open(path, *args, **kwargs)

    def guarded_scandir(path="."):
        refuse(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "open", guarded_open)
    monkeypatch.setattr(os, "scandir", guarded_scandir)


def run_cli(argv: list[str], capsys) -> tuple[int, list[str]]:
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own usage errors
        code = exit.code
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def prepare(case: Case, tmp: Path) -> tuple[list[str], dict[str, str]]:
    config, a, bad = make_site(tmp)
    (tmp / "site").mkdir()  # the output is made fresh by the build
    os.rmdir(tmp / "site")
    if case.item is not None:
        (bad / "item.yaml").write_bytes(case.item)
    if case.archive is not None:
        (a / "archive.yaml").write_bytes(case.archive)
    if case.config is not None:
        config.write_bytes(case.config)
    if case.tree is not None:
        case.tree(a, bad, tmp)
    os.mkfifo(tmp / "pipe.yaml")
    words = {"{tmp}": str(tmp), "{config}": str(config)}
    if case.argv is not None:
        argv = [_filled(word, words) for word in case.argv]
    else:
        argv = ["build", "--config", str(config)]  # the configuration's output: tmp/site
    return argv, words


def _filled(text: str, words: dict[str, str]) -> str:
    for word, value in words.items():
        text = text.replace(word, value)
    return text


def _published(tmp: Path, repository: str) -> bool:
    return (tmp / "site" / repository / "index.html").is_file()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_one_bad_input_costs_only_itself(case: Case, tmp_path, capsys, unreadable):
    argv, words = prepare(case, tmp_path)
    code, lines = run_cli(argv, capsys)
    output = "\n".join(lines)
    expected = _filled(case.message, words)
    assert "Traceback" not in output
    assert any(line.startswith(expected) for line in lines), (
        f"no line starts with {expected!r}:\n{output}"
    )
    assert code == case.exit, output
    for secret in case.absent:
        assert secret not in output
    if case.argv is not None or case.exit == 2:
        return  # no build ran
    assert _published(tmp_path, GOOD_B), output
    assert _published(tmp_path, GOOD_A) != case.archive_out, output
    if case.name.startswith("accepted-"):
        assert _published(tmp_path, BAD), output


def test_the_corpus_is_large_and_covers_every_class():
    prefixes = {case.name.split("-")[0] for case in CASES}
    assert len(CASES) >= 300
    assert {
        "item",
        "yaml",
        "bytes",
        "limit",
        "archive",
        "tree",
        "config",
        "cli",
        "accepted",
    } <= prefixes


def test_printing_never_raises_on_an_ascii_stream(tmp_path, capsys, monkeypatch):
    # a non-UTF-8 file name (a lone surrogate) and non-ASCII text on a stream that takes ASCII only
    import io
    import sys

    case = next(case for case in CASES if case.name == "tree-doc-name-not-utf-8")
    argv, _ = prepare(case, tmp_path)
    (tmp_path / "mtc-m16c" / "colour: café").write_text("x")
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stderr", stream)
    assert main(argv) == 0
    stream.seek(0)
    assert "doc/caf\\udce9.txt: a file name that is not UTF-8" in stream.read()
