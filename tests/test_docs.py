"""The project's documentation builds with mkdocs in strict mode (broken links fail)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mkdocs_build_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "docs")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "docs" / "index.html").exists()
    assert (tmp_path / "docs" / "api" / "index.html").exists()


def test_readme_commands_are_the_documented_ones():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python3 -m pip install -e . && ibistatic build" in readme
    assert "bash scripts/test.sh" in readme
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
