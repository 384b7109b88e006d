"""The progress bar draws on a terminal only, and ends its line."""

import io

from ibistatic.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_draws_on_a_terminal():
    stream = Terminal()
    progress = Progress(stream)
    progress.phase("rendering", 4)
    progress.update(2)
    progress.finish()
    text = stream.getvalue()
    assert "rendering" in text and "[" + "#" * 15 + "." * 15 + "] 2/4" in text
    assert text.endswith("\n")


def test_silent_in_a_pipe():
    stream = io.StringIO()
    progress = Progress(stream)
    progress.phase("rendering", 4)
    progress.advance(3)
    progress.finish()
    assert stream.getvalue() == ""


def test_build_command_draws_its_phases(tmp_path, monkeypatch):
    import sys

    from ibistatic.cli import main

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["build", "--output", str(tmp_path / "site")]) == 0
    text = terminal.getvalue()
    assert "crawling archives" in text and "resolving and rendering" in text and "[" in text
