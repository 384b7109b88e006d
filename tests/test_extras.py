"""A build-only install: the server (`serve` extra) and mkdocs (`catalog` extra) are not
dependencies; without them the build works and the commands that need them say which
extra to install (exit 2), never a traceback."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRA_MODULES = ("uvicorn", "httptools", "uvloop", "mkdocs")

# the CLI in a process where the extras' modules cannot be imported, as in an install
# without them (sys.modules[name] = None makes both import and find_spec fail)
RUN_WITHOUT_EXTRAS = f"""
import sys
for name in {EXTRA_MODULES!r}:
    sys.modules[name] = None
from ibistatic.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _without_extras(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_EXTRAS, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )


def test_the_servers_and_mkdocs_are_extras_not_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = " ".join(project["dependencies"])
    assert not any(module in required for module in EXTRA_MODULES)
    extras = project["optional-dependencies"]
    assert {name.split(">")[0] for name in extras["serve"]} >= {"uvicorn", "httptools"}
    assert [name.split(">")[0] for name in extras["catalog"]] == ["mkdocs"]


def test_a_build_only_install_builds_and_resolves(tmp_path):
    built = _without_extras(tmp_path, "build")
    assert built.returncode == 0, built.stderr
    assert "Traceback" not in built.stderr
    resolved = _without_extras(tmp_path, "resolve", "--index", "site", "8JMKD3MGP8W/35MMLL8")
    assert resolved.returncode == 0 and "http://" in resolved.stdout, resolved.stderr


def test_the_commands_that_need_an_extra_name_it(tmp_path):
    for command, extra in (("serve", "serve"), ("resolver", "serve")):
        args = [command] + (["--keys", str(tmp_path / "keys")] if command == "resolver" else [])
        done = _without_extras(tmp_path, *args)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert f"python3 -m pip install 'ibistatic[{extra}]'" in done.stderr
        assert "Traceback" not in done.stderr
    (tmp_path / "ibistatic.yaml").write_text(
        f"site-url: https://ibi.example.org/\narchives: [{ROOT}/ibistatic/sample_archive/mtc-m16c]\n"
        "catalog: true\n",
        encoding="utf-8",
    )
    done = _without_extras(tmp_path, "build")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "catalog: true (ibistatic.yaml) needs mkdocs" in done.stderr
    assert "'ibistatic[catalog]'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "site").exists()  # stopped before it started
