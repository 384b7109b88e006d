"""The pure core (ibistatic/core/) type-checks with mypy: its types say what the code
does, so a change that breaks them is caught before it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_core_is_mypy_clean():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "ibistatic/core"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout
