"""``ibistatic init``: a new project that takes a deposit, builds and resolves at once."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ibistatic import __version__
from ibistatic.archive.descriptors import read_archive_info
from ibistatic.cli import main
from ibistatic.config import load_config
from ibistatic.core.identifiers import parse_ibi

ROOT = Path(__file__).resolve().parent.parent


def ibistatic(*argv, cwd: Path) -> subprocess.CompletedProcess:
    """The command line, as a user runs it (this checkout's code first on the path)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "ibistatic", *map(str, argv)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_init_then_deposit_build_resolve_as_a_user(tmp_path):
    done = ibistatic("init", "library", "--site-url", "https://ibi.example.org", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    project = tmp_path / "library"
    assert done.stdout.splitlines()[-1] == "next: see library/README.md"
    (project / "report.pdf").write_bytes(b"%PDF-1.4\n")

    deposited = ibistatic(
        "deposit", "report.pdf", "--archive", "archives/archive", "--title", "A report", "--json",
        cwd=project,
    )  # fmt: skip
    assert deposited.returncode == 0, deposited.stderr
    repository = json.loads(deposited.stdout)["repository"]
    assert repository.startswith("example.org/ibi/")  # minted for the site URL's host

    built = ibistatic("build", cwd=project)
    assert built.returncode == 0, built.stderr
    assert ", 0 errors, 0 warnings in " in built.stdout  # https file URLs: no host-file advice
    answer = ibistatic("resolve", "--index", "site", "--json", repository, cwd=project)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["url"] == (
        f"https://ibi.example.org/col/{repository}/doc/report.pdf"
    )
    persistent = ibistatic("resolve", f"https://ibi.example.org/{repository}", cwd=project)
    assert persistent.stdout.strip() == f"https://ibi.example.org/col/{repository}/doc/report.pdf"


def test_the_files_of_a_new_project(tmp_path, capsys):
    assert main(["init", str(tmp_path / "p"), "--name", "theses", "--host", "bib.example.edu",
                 "--ip", "150.163.34.243", "--site-url", "https://ibi.example.edu/"]) == 0  # fmt: skip
    project = tmp_path / "p"
    written = sorted(
        str(path.relative_to(project)) for path in project.rglob("*") if path.is_file()
    )
    raw = yaml.safe_load((project / "archives/theses/archive.yaml").read_text())
    service_item = f"archives/theses/{raw['service-ibi']}"  # the Archive holds its service
    assert [name for name in written if ".ibistatic" not in name] == [
        ".gitignore",
        "README.md",
        "archives/theses/archive.yaml",
        f"{service_item}/doc/index.html",
        f"{service_item}/item.yaml",
        "ibistatic.yaml",
    ]
    config = load_config(project / "ibistatic.yaml")
    assert config.site_url == "https://ibi.example.edu/"
    assert config.archives == ((project / "archives" / "theses").resolve(),)
    assert config.output == project / "site"
    raw = yaml.safe_load((project / "archives/theses/archive.yaml").read_text())
    info, problems = read_archive_info("theses", raw)
    assert problems == [] and info.address == "ibi.example.edu"
    assert raw["deposit-host"] == "bib.example.edu" and raw["deposit-ip"] == "150.163.34.243"
    assert raw["file-url"] == "{site}col/{repository}/doc/{path}"  # the site publishes them
    service = parse_ibi(raw["service-ibi"])
    assert service.form == "repository" and raw["service-ibi"].startswith("example.edu/bib/")
    readme = (project / "README.md").read_text()
    assert "ibistatic deposit report.pdf --archive archives/theses" in readme
    assert "ibistatic build" in readme and "ibistatic resolve --index site" in readme
    assert "GitHub" not in readme
    assert capsys.readouterr().out.splitlines()[0] == f"wrote {project / 'ibistatic.yaml'}"


def test_the_service_ibi_is_never_minted_again_by_a_deposit(tmp_path):
    """init mints the service IBI with the Archive's own distributor: a deposit in the same
    second gets a later date."""
    from ibistatic.deposit import deposit
    from ibistatic.init import Project, init_project

    init_project(tmp_path / "p", Project(), now=1_700_000_000)
    archive = tmp_path / "p" / "archives" / "archive"
    service = yaml.safe_load((archive / "archive.yaml").read_text())["service-ibi"]
    assert service == "example.org/ibi/2023/11.14.22.13.20"
    (tmp_path / "a.txt").write_text("a")
    done = deposit(archive, [tmp_path / "a.txt"], now=1_700_000_000)
    assert done.repository == "example.org/ibi/2023/11.14.22.13.21"  # the next free date


def test_github_adds_the_pages_workflow(tmp_path):
    assert main(["init", str(tmp_path / "p"), "--github", "--branch", "trunk"]) == 0
    workflow_text = (tmp_path / "p" / ".github" / "workflows" / "ibistatic.yml").read_text()
    workflow = yaml.safe_load(workflow_text)
    assert workflow[True]["push"]["branches"] == ["trunk"]  # YAML 1.1 reads `on` as True
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = workflow["jobs"]["build"]["steps"], workflow["jobs"]["deploy"]["steps"]
    runs = [step.get("run") for step in build if "run" in step]
    assert runs == [f'python -m pip install "ibistatic=={__version__}"', "ibistatic build --strict"]
    upload = next(step for step in build if step.get("uses", "").startswith("actions/upload-pages"))
    assert upload == {"uses": "actions/upload-pages-artifact@v3", "with": {"path": "site"}}
    assert deploy == [{"id": "deployment", "uses": "actions/deploy-pages@v4"}]
    assert workflow["jobs"]["deploy"]["needs"] == "build"
    assert workflow["jobs"]["deploy"]["environment"]["name"] == "github-pages"
    assert "__" not in workflow_text  # every placeholder filled
    assert "GitHub Pages" in (tmp_path / "p" / "README.md").read_text()
    config = load_config(tmp_path / "p" / "ibistatic.yaml")
    assert config.hosts == ("github-pages",)  # the host profile: .nojekyll, size warnings
    assert load_config(_plain_project(tmp_path)).hosts == ()


def _plain_project(tmp_path):
    assert main(["init", str(tmp_path / "plain")]) == 0
    return tmp_path / "plain" / "ibistatic.yaml"


def test_a_folder_that_is_not_empty_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "b").mkdir()
    assert main(["init", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"ibistatic init: {tmp_path}: not empty (2 entries: b, notes.txt); expected a new or "
        "empty folder, so that init overwrites nothing\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "notes.txt"]  # nothing written
    assert main(["init", str(tmp_path / "notes.txt")]) == 2
    assert capsys.readouterr().err == (
        f"ibistatic init: {tmp_path / 'notes.txt'}: not a folder; expected a new or empty "
        "folder for the project\n"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--site-url", "ftp://x/"], "--site-url 'ftp://x/': expected an absolute http(s) URL such as "
         "https://ibi.example.org/, without query or fragment"),
        (["--name", "a/b"], "--name 'a/b': expected a folder name (no '/', not starting with '.')"),
        (["--name", ".hidden"], "--name '.hidden': expected a folder name (no '/', not starting with '.')"),
        (["--ip", "1.2.3"], "--ip '1.2.3': expected an IPv4 or IPv6 address"),
        (["--site-url", "http://127.0.0.1:8000/"], "--host '127.0.0.1': invalid host name '127.0.0.1'"),
        (["--address", "a b"], "--address 'a b': expected a host name or IP, optionally ':port'"),
        (["--github", "--branch", "a: b"], "--branch 'a: b': expected a branch name"),
    ],
)  # fmt: skip
def test_bad_options_exit_2_and_write_nothing(tmp_path, options, message, capsys):
    assert main(["init", str(tmp_path / "p"), *options]) == 2
    assert capsys.readouterr().err.startswith(f"ibistatic init: {message}")
    assert not (tmp_path / "p").exists()


def test_an_empty_folder_is_used(tmp_path):
    assert main(["init", str(tmp_path)]) == 0
    assert (tmp_path / "ibistatic.yaml").is_file()


def test_the_bundled_sample_takes_a_deposit_as_it_is(tmp_path):
    """Its archive.yaml names the subsystem (deposit-host, deposit-ip): no --host needed."""
    import shutil

    from ibistatic.config import bundled_sample_config

    sample = Path(shutil.copytree(bundled_sample_config().parent, tmp_path / "sample"))
    (tmp_path / "new.pdf").write_text("%PDF")
    argv = ["deposit", str(tmp_path / "new.pdf"), "--archive", str(sample / "mtc-m16d")]
    done = ibistatic(*argv, "--at", "1700000000", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repository"] == "sid.inpe.br/mtc-m19/2023/11.14.22.13.20"
    assert json.loads(done.stdout)["ibip"].startswith("8JMKD3MGP7W/")  # 150.163.34.242
