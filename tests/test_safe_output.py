"""Safe outputs: a build replaces only what it published, survives disk faults with the
site unchanged, and never unpickles a cache or state it did not write itself."""

from __future__ import annotations

import errno
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import SAMPLE
from ibistatic.config import load_config
from ibistatic.errors import OutputError, PublishError
from ibistatic.site.build import build_site
from ibistatic.store.layout import MARKER, MARKER_TEXT, generations, live_generation

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def state_home(tmp_path_factory, monkeypatch):
    """The per-user key of the sealed caches, in a folder of this test."""
    home = tmp_path_factory.mktemp("state-home")
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def make_project(folder: Path) -> Path:
    for name in ("mtc-m16c", "mtc-m16d"):
        shutil.copytree(SAMPLE / name, folder / "archives" / name)
    config = {
        "site-url": "https://ibi.example.org/",
        "archives": ["archives/mtc-m16c", "archives/mtc-m16d"],
        "output": "site",
    }
    (folder / "ibistatic.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder / "ibistatic.yaml"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (through the output link), with its bytes; links as links.
    The server snippets name the output folder: it reads `<output>`, to compare sites
    built into different folders."""
    found = {}
    for folder, subfolders, files in os.walk(root):
        for name in files + [d for d in subfolders if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            data = (
                b"link:" + os.fsencode(os.readlink(path))
                if path.is_symlink()
                else path.read_bytes()
            )
            found[relative] = data.replace(os.fsencode(root), b"<output>")
    return found


def ibistatic(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "ibistatic", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- point 1: refusals, through the real command line ------------------------------------


def _user_folder(project: Path) -> Path:
    folder = project / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "thesis.tex").write_text("years of work\n", encoding="utf-8")
    (folder / "sub" / "data.csv").write_text("1,2\n", encoding="utf-8")
    return folder


REFUSALS = {
    # name: (--output relative to the project, what must stay unchanged, message after the path)
    "someone else's folder": (
        "notes",
        "notes",
        "it is a folder that ibistatic did not publish (it is not empty and has no "
        "_ibistatic/ibistatic-site.txt); remove it or choose another --output",
    ),
    "a file": (
        "notes/thesis.tex",
        "notes",
        "it is a file, not a folder; expected a new folder or a site ibistatic published",
    ),
    "the configuration's folder": (
        ".",
        ".",
        "it is the folder of the configuration {project}/ibistatic.yaml",
    ),
    "a folder holding the configuration": (
        "..",
        ".",
        "it contains the folder of the configuration {project}/ibistatic.yaml",
    ),
    "an Archive": (
        "archives/mtc-m16c",
        "archives",
        "it is the Archive {project}/archives/mtc-m16c",
    ),
    "a folder holding Archives": (
        "archives",
        "archives",
        "it contains the Archive {project}/archives/mtc-m16c",
    ),
    "a folder inside an Archive": (
        "archives/mtc-m16d/site",
        "archives",
        "it is inside the Archive {project}/archives/mtc-m16d",
    ),
    "a link ibistatic did not make": (
        "published",
        "notes",
        "it is a symbolic link ibistatic did not make (to notes); expected a link into .published.ibistatic/",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
@pytest.mark.parametrize("command", ["build", "watch"])
def test_refused_outputs(tmp_path, case, command):
    project = tmp_path / "project"
    make_project(project)
    _user_folder(project)
    (project / "published").symlink_to("notes")
    output, kept, message = REFUSALS[case]
    before = snapshot(project / kept)
    run = ibistatic(command, "--config", "ibistatic.yaml", "--output", output, cwd=project)
    target = Path(os.path.abspath(project / output))
    target = target.parent.resolve() / target.name if target.name else target
    expected = f"ibistatic {command}: refusing to publish into {target}: " + message.format(
        project=project
    )
    assert (run.returncode, run.stderr.strip()) == (2, expected)
    assert "Traceback" not in run.stderr
    assert snapshot(project / kept) == before
    assert not list(project.parent.glob("**/.*.ibistatic"))  # nothing was published anywhere


def test_a_bare_build_never_replaces_someone_elses_site(tmp_path):
    """`ibistatic build` with no configuration publishes the sample into ./site: an
    mkdocs project's own site/ is left alone."""
    (tmp_path / "mkdocs.yml").write_text("site_name: mine\n", encoding="utf-8")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<h1>my docs</h1>\n", encoding="utf-8")
    run = ibistatic("build", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith(
        f"ibistatic build: refusing to publish into {tmp_path.resolve()}/site: it is a folder that "
        "ibistatic did not publish"
    )
    assert snapshot(tmp_path / "site") == {"index.html": b"<h1>my docs</h1>\n"}


def test_the_library_refuses_too(tmp_path):
    config = load_config(make_project(tmp_path), output=tmp_path / "archives")
    with pytest.raises(OutputError, match="it contains the Archive") as raised:
        build_site(config)
    assert raised.value.exit_code == 2


def test_a_new_empty_or_marked_folder_is_published(tmp_path):
    config_path = make_project(tmp_path)
    for name in ("new/deeper", "empty", "marked"):
        config = load_config(config_path, output=tmp_path / name)
        if name == "empty":
            config.output.mkdir()
        if name == "marked":  # a copy of a site: its marker came along
            (config.output / "_ibistatic").mkdir(parents=True)
            (config.output / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
            (config.output / "stale.html").write_text("old\n", encoding="utf-8")
        build_site(config)
        assert config.output.is_symlink() and (config.output / "index" / "manifest.json").is_file()
        assert not (config.output / "stale.html").exists()


def test_the_layout_leaks_no_machine_path(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    target = os.readlink(config.output)
    assert (
        target == f".site.ibistatic/{live_generation(config.output)}"
    )  # relative: copies keep working
    assert (config.output / MARKER).read_text(encoding="utf-8") == MARKER_TEXT
    published = snapshot(config.output)
    assert str(tmp_path).encode() not in published[MARKER]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".site.ibistatic",
        ".site.ibistatic-cache",
        "archives",
        "ibistatic.yaml",
        "site",
    ]


def test_a_plain_folder_site_of_an_older_version_is_migrated(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    expected = snapshot(config.output)
    # what older versions published: a plain folder, no marker, no generations
    live = generations(config.output) / live_generation(config.output)
    config.output.unlink()
    shutil.copytree(live, config.output)
    (config.output / MARKER).unlink()
    shutil.rmtree(generations(config.output))
    assert build_site(config).mode == "full"
    assert config.output.is_symlink() and snapshot(config.output) == expected
    _wait_for(
        lambda: (
            sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site."))
            == [".site.ibistatic", ".site.ibistatic-cache"]
        )
    )


def test_updates_keep_two_generations_and_share_unchanged_files(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    item = tmp_path / "archives/mtc-m16c/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml"
    for title in ("First", "Second", "Third"):
        _edit(item, title)
        report = build_site(config)
        assert report.mode.startswith("update") and report.written < 40
        assert snapshot(config.output) == _full_build(tmp_path, "full-" + title)
    folder = generations(config.output)
    _wait_for(lambda: len(list(folder.iterdir())) == 2)
    live, spare = sorted(folder.iterdir(), key=lambda p: p.name != live_generation(config.output))
    shared = live / "404.html", spare / "404.html"
    assert os.path.samefile(*shared)  # unchanged files: one inode, two names
    page = "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/index.html"  # the edited item's: in both, not shared
    assert not os.path.samefile(live / page, spare / page)


def _edit(item: Path, title: str) -> None:
    data = yaml.safe_load(item.read_text(encoding="utf-8"))
    data["dublin-core"] = {"title": title}
    item.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    status = item.stat()
    os.utime(item, ns=(status.st_atime_ns, status.st_mtime_ns + 2_000_000_000))


def _full_build(project: Path, name: str) -> dict[str, bytes]:
    config = load_config(project / "ibistatic.yaml", output=project / name)
    build_site(config, full=True)
    return snapshot(config.output)


def _wait_for(condition, seconds: float = 30) -> None:
    """Trees set aside are deleted in the background."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# --- point 3: disk faults -----------------------------------------------------------------


class _FailingWrites:
    """os.write fails with ENOSPC from its `calls`-th call on, inside the block."""

    def __init__(self, calls: int) -> None:
        self.calls, self.count, self.real = calls, 0, os.write

    def write(self, handle, data):
        self.count += 1
        if self.count >= self.calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.real(handle, data)

    def __enter__(self):
        os.write = self.write

    def __exit__(self, *exception):
        os.write = self.real


@pytest.mark.parametrize("calls", [1, 37, 100])
def test_a_full_disk_during_a_full_build(tmp_path, calls):
    config = load_config(make_project(tmp_path))
    build_site(config)
    before = snapshot(config.output)
    with _FailingWrites(calls), pytest.raises(PublishError) as raised:
        build_site(config, full=True)
    assert str(raised.value).startswith(
        f"cannot publish {config.output}: No space left on device ("
    )
    assert str(raised.value).endswith("); the published site is unchanged")
    assert raised.value.exit_code == 1
    assert snapshot(config.output) == before
    _wait_for(
        lambda: len(list(generations(config.output).iterdir())) == 1
    )  # the half-written tree is gone
    assert build_site(config, full=True).mode == "full"
    assert snapshot(config.output) == before


@pytest.mark.parametrize("calls", [1, 3])
def test_a_full_disk_during_an_update(tmp_path, calls):
    project = tmp_path
    config = load_config(make_project(project))
    build_site(config)
    before = snapshot(config.output)
    _edit(
        project / "archives/mtc-m16c/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml", "Changed"
    )
    with _FailingWrites(calls), pytest.raises(PublishError, match="No space left on device"):
        build_site(config)
    assert snapshot(config.output) == before
    assert build_site(config).mode.startswith("update")
    assert snapshot(config.output) == _full_build(project, "reference")


def test_a_full_disk_for_real(tmp_path):
    """ENOSPC from the kernel: the output on a 3 MiB tmpfs (needs root)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
        ).returncode
    ):
        pytest.skip("mounting a tmpfs needs root")
    try:
        config_path = make_project(tmp_path)
        config = load_config(config_path, output=mount / "site")
        build_site(config)
        before = snapshot(config.output)
        (mount / "ballast").write_bytes(
            b"x" * (int(2.6 * 2**20) - _used(mount))
        )  # what a build needs, less a bit
        run = ibistatic(
            "build",
            "--full",
            "--config",
            str(config_path),
            "--output",
            str(config.output),
            cwd=tmp_path,
        )
        assert run.returncode == 1 and "Traceback" not in run.stderr
        assert (
            "No space left on device" in run.stderr
            and "the published site is unchanged" in run.stderr
        )
        assert snapshot(config.output) == before
        (mount / "ballast").unlink()
        _wait_for(lambda: len(list(generations(config.output).iterdir())) == 1)
        assert (
            ibistatic(
                "build",
                "--full",
                "--config",
                str(config_path),
                "--output",
                str(config.output),
                cwd=tmp_path,
            ).returncode
            == 0
        )
        assert snapshot(config.output) == before
        # a read-only output: EROFS, the site as it was, and fine again once writable
        _edit(
            tmp_path / "archives/mtc-m16c/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml",
            "Read-only",
        )
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        run = ibistatic(
            "build", "--config", str(config_path), "--output", str(config.output), cwd=tmp_path
        )
        assert (
            run.returncode,
            "Read-only file system" in run.stderr,
            "Traceback" in run.stderr,
        ) == (1, True, False)
        assert snapshot(config.output) == before
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        assert (
            ibistatic(
                "build", "--config", str(config_path), "--output", str(config.output), cwd=tmp_path
            ).returncode
            == 0
        )
        assert snapshot(config.output) == _full_build(tmp_path, "reference")
    finally:
        time.sleep(0.5)  # background deletions
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _used(mount: Path) -> int:
    status = os.statvfs(mount)
    return (status.f_blocks - status.f_bfree) * status.f_frsize


# --- point 4: caches and state are sealed -------------------------------------------------


class _Planted:
    """What an attacker plants: unpickling it creates a file."""

    def __init__(self, proof: Path) -> None:
        self.proof = proof

    def __reduce__(self):
        return (os.mkdir, (str(self.proof),))


def _cache_files(config) -> list[Path]:
    return [config.cache_dir / "crawl.pickle", config.cache_dir / "site-state.pickle"]


@pytest.mark.parametrize(
    "form, why",
    [
        ("plain pickle", "it was not sealed by ibistatic (no authentication code)"),
        ("forged seal", "its authentication code does not verify (changed by someone, or damaged)"),
    ],
)
def test_a_planted_pickle_never_runs(tmp_path, form, why):
    from ibistatic.pickles import MAGIC

    config_path = make_project(tmp_path)
    config = load_config(config_path)
    build_site(config)
    expected = snapshot(config.output)
    proof = tmp_path / "pwned"
    payload = pickle.dumps((7, _Planted(proof)))
    for path in _cache_files(config):
        path.write_bytes(payload if form == "plain pickle" else MAGIC + bytes(32) + payload)
        path.chmod(0o600)
    run = ibistatic("build", "--config", str(config_path), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert not proof.exists()
    assert (
        f"warning: crawl cache {config.cache_dir}/crawl.pickle not used: {why}; every descriptor is read again"
        in run.stderr.splitlines()
    )
    assert (
        f"warning: build state {config.cache_dir}/site-state.pickle not used: {why}; this build is a full one"
        in run.stderr.splitlines()
    )
    assert "(full)" in run.stdout and snapshot(config.output) == expected
    # rebuilt and sealed again: the next build uses both
    run = ibistatic("build", "--config", str(config_path), cwd=tmp_path)
    assert ("warning: crawl" in run.stderr, "(update" in run.stdout) == (False, True)


def test_a_cache_others_may_write_is_not_used(tmp_path, state_home):
    config = load_config(make_project(tmp_path))
    build_site(config)
    state = config.cache_dir / "site-state.pickle"
    assert state.stat().st_mode & 0o777 == 0o600
    assert (state_home / "ibistatic" / "cache-key").stat().st_mode & 0o777 == 0o600
    state.chmod(0o666)
    report = build_site(config)
    assert report.mode == "full"
    assert report.warnings[-1] == (
        f"build state {state} not used: it is not this user's own file, or others may write it; "
        "this build is a full one"
    )


def test_a_key_others_may_read_is_not_used(tmp_path, state_home):
    config = load_config(make_project(tmp_path))
    build_site(config)
    key = state_home / "ibistatic" / "cache-key"
    key.chmod(0o644)
    report = build_site(config)
    assert report.mode == "full"
    assert (
        f"crawl cache {config.cache_dir}/crawl.pickle not used: the key {key} is not this user's "
        "alone (expected mode 0600); every descriptor is read again" in report.warnings
    )


def test_a_truncated_cache_is_rebuilt_with_a_warning(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config)
    crawl = config.cache_dir / "crawl.pickle"
    crawl.write_bytes(crawl.read_bytes()[:-100])
    report = build_site(config)
    assert report.mode.startswith("update")  # the state was fine
    assert (
        f"crawl cache {crawl} not used: its authentication code does not verify (changed by "
        "someone, or damaged); every descriptor is read again" in report.warnings
    )
