"""Progress: a tqdm bar per phase on a terminal only (rate, elapsed, time left), the time
of every phase measured anyway, and build summaries that count what was printed."""

import io
import re
import sys
import time

import pytest

from ibistatic.cli import main
from ibistatic.progress import Progress, format_times


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _last_draw(text: str) -> str:
    """What the terminal shows of the last line drawn (tqdm redraws after a '\\r')."""
    return text.rstrip("\n").split("\r")[-1]


def test_a_phase_with_a_total_shows_bar_count_elapsed_left_and_rate():
    stream = Terminal()
    progress = Progress(stream)
    progress.phase("rendering", 4)
    progress.update(2)
    progress.finish()
    shown = _last_draw(stream.getvalue())
    assert shown.startswith("rendering:  50%|")
    assert re.search(r"\| 2/4 \[00:00<00:00, [\d.]+items/s\]$", shown), shown
    assert stream.getvalue().endswith("\n")


def test_a_phase_without_a_total_shows_its_count_and_rate():
    stream = Terminal()
    progress = Progress(stream)
    progress.phase("reading", unit="files")
    progress.advance(3)
    progress.finish()
    assert re.fullmatch(r"reading: 3 files \[00:00, [\d.]+files/s\]", _last_draw(stream.getvalue()))


def test_a_phase_that_counts_nothing_shows_its_elapsed_time_not_a_zero():
    stream = Terminal()
    progress = Progress(stream)
    progress.phase("index and site-wide files")
    progress.finish()
    text = stream.getvalue()
    assert _last_draw(text) == "index and site-wide files [00:00]"
    assert "0 items" not in text and "0/" not in text


def test_expect_grows_the_total_as_it_becomes_known():
    stream = Terminal()
    progress = Progress(stream)
    progress.phase("crawling archives")
    progress.expect(9)  # the first Archive is listed
    progress.advance(9)
    progress.expect(8)  # the second
    assert "9/17" in _last_draw(stream.getvalue())
    progress.advance(8)
    progress.finish()
    assert _last_draw(stream.getvalue()).startswith("crawling archives: 100%|")
    assert " 17/17 [" in _last_draw(stream.getvalue())


@pytest.mark.parametrize("stream, enabled", [(io.StringIO(), None), (Terminal(), False)])
def test_silent_in_a_pipe_or_when_quiet_but_phases_are_timed(stream, enabled):
    progress = Progress(stream, enabled=enabled)
    progress.phase("crawling", 4)
    progress.advance(3)
    time.sleep(0.05)
    progress.phase("rendering")
    progress.finish()
    assert stream.getvalue() == ""
    assert list(progress.times) == ["crawling", "rendering"]
    assert progress.times["crawling"] >= 0.05 and progress.times["rendering"] < 0.05


def test_lines_printed_while_a_bar_is_drawn_go_above_it():
    stream = Terminal()
    progress = Progress(stream)
    progress.phase("rendering", 4)
    progress.advance(1)
    with progress.hidden():
        stream.write("warning: something\n")
    progress.advance(1)
    progress.finish()
    lines = stream.getvalue().split("\n")
    printed = next(line for line in lines if "warning: something" in line)
    assert printed.split("\r")[-1] == "warning: something"  # the bar was cleared before it
    assert "2/4" in lines[-2]  # and drawn again below it


def test_format_times():
    assert format_times({"crawling": 0.123, "rendering": 2}) == "crawling 0.12 s, rendering 2.00 s"
    assert format_times({}) == ""


def test_build_command_draws_its_phases_with_the_crawl_total(tmp_path, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["build", "--output", str(tmp_path / "site")]) == 0
    text = terminal.getvalue()
    # the bundled sample: 8 + 9 repositories, the total known once each Archive is listed
    assert " 0/8 [" in text and " 8/17 [" in text
    assert "crawling archives: 100%" in text and " 17/17 [" in text
    assert "resolving and rendering: 100%" in text and "items/s" in text
    assert "index and site-wide files [" in text


def test_build_quiet_draws_nothing_on_a_terminal(tmp_path, monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["build", "--quiet", "--output", str(tmp_path / "site")]) == 0
    assert "crawling" not in terminal.getvalue()
    assert capsys.readouterr().out == ""


PHASES = re.compile(
    r" in \d+\.\d\d s \(crawling archives \d+\.\d\d s, resolving and rendering \d+\.\d\d s, "
    r"index and site-wide files \d+\.\d\d s, saving the build state \d+\.\d\d s\)$"
)


def test_build_summary_has_per_phase_times_and_counts_what_it_printed(tmp_path, capsys):
    site = str(tmp_path / "site")
    assert main(["build", "--output", site, "--host", "cloudflare-pages"]) == 0
    out, err = capsys.readouterr()
    summary = out.splitlines()[-1]
    assert PHASES.search(summary), summary
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1  # the sample's host-file advice (http:// targets on Cloudflare)
    assert ", 0 errors, 1 warning in " in summary


#: a build in which libraries log warnings (as mkdocs does for the catalog), run as a user
#: runs it: no logging configured, so Python's last-resort handler would print them
LOGGING_BUILD = """
import logging, sys
from ibistatic.cli import main
from ibistatic.site import build

real = build.build_site

def logging_build(*args, **kwargs):
    logging.getLogger("mkdocs.structure").warning("a nav entry names a missing page")
    logging.getLogger("mkdocs.plugins.ibistatic").warning("ibistatic: a repeated problem")
    return real(*args, **kwargs)

build.build_site = logging_build
sys.exit(main(["build", "--output", sys.argv[1], "--host", "cloudflare-pages"]))
"""


def test_warnings_libraries_log_during_a_build_are_printed_and_counted(tmp_path):
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", LOGGING_BUILD, str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    assert "a nav entry names a missing page" in err
    assert "ibistatic: a repeated problem" in err  # printed; the problem it repeats is counted
    # the host-file advice and mkdocs' warning
    assert ", 0 errors, 2 warnings in " in done.stdout.splitlines()[-1]


def test_a_watch_republish_logs_what_its_summary_counts_and_its_phase_times(tmp_path):
    from dataclasses import replace

    from ibistatic.config import load_config
    from ibistatic.summary import counted
    from ibistatic.watch import Watcher
    from test_publish import make_project

    messages: list[str] = []
    config = replace(load_config(make_project(tmp_path)), hosts=("cloudflare-pages",))
    watcher = Watcher(config, log=messages.append)
    phases = {
        "initial build": r"\(crawling archives [\d.]+ s, .*index and site-wide files [\d.]+ s\)",
        "a republish": r"\(update of 0 changed.* \(crawling archives [\d.]+ s\)",  # a no-op
    }
    for why, times in phases.items():
        messages.clear()
        assert watcher.publish(why) is not None
        warnings = sum(message.startswith("warning: ") for message in messages)
        errors = sum(message.startswith("error: ") for message in messages)
        assert messages[-1].startswith(f"{why}: published ")
        assert f", {counted(errors, 'error')}, {counted(warnings, 'warning')} in " in messages[-1]
        assert re.search(times, messages[-1]), messages[-1]
    assert warnings >= 1  # the host-file advice about http:// targets is shown, not only counted
