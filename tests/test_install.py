"""An install as users install: a wheel built from the checkout, installed into a fresh
venv, run from a folder outside the checkout (templates and the sample come from the
installed package, nowhere else)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _run(command: list, cwd: Path, timeout: int = 300) -> str:
    # no PYTHONPATH: nothing of the checkout may leak into the installed tool
    environment = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")
    }
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _source_copy(destination: Path) -> Path:
    """The tracked files of the checkout (so the build writes nothing into it)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for name in listed.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
    return destination


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list the source files")
    source = _source_copy(tmp_path_factory.mktemp("source"))
    wheels = tmp_path_factory.mktemp("wheels")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", wheels, source],
        cwd=wheels,
        timeout=600,
    )
    (built,) = wheels.glob("ibistatic-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel; the dependencies come from this Python's own
    site-packages (offline), ibistatic itself only from the wheel."""
    home = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", "--system-site-packages", home], cwd=home.parent)
    _run(
        [
            home / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            wheel,
        ],
        cwd=home.parent,
    )
    return home


def test_the_wheel_holds_the_templates_and_the_sample(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {
        "ibistatic/site_src/404.html",
        "ibistatic/site_src/redirect.html",
        "ibistatic/py.typed",
    } <= set(names)
    assert "ibistatic/sample_archive/ibistatic.yaml" in names
    assert "ibistatic/sample_archive/mtc-m16c/archive.yaml" in names
    assert "ibistatic/templates/github-pages.yml" in names  # init --github
    assert not any(n.startswith(("tests/", "docs/", "site_src/", "sample_archive/")) for n in names)


def test_the_installed_tool_builds_and_resolves_the_bundled_sample(venv, tmp_path):
    python, tool = venv / "bin" / "python", venv / "bin" / "ibistatic"
    where = _run(
        [python, "-c", "import ibistatic, sys; print(ibistatic.__file__)"], cwd=tmp_path
    ).strip()
    assert Path(where).is_relative_to(venv), f"ibistatic imported from {where}, not from the venv"
    assert _run([tool, "--version"], cwd=tmp_path).strip() == "ibistatic 0.1.0"

    _run([tool, "build"], cwd=tmp_path)
    site = tmp_path / "site"
    for page in ("8JMKD3MGP8W/35MMLL8/index.html", "404.html", "index/manifest.json", "index.html"):
        assert (site / page).is_file(), page
    assert (
        "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"
        in (site / "8JMKD3MGP8W/35MMLL8/index.html").read_text()
    )
    manifest = json.loads((site / "index" / "manifest.json").read_text())
    assert manifest

    answer = json.loads(
        _run([tool, "resolve", "8JMKD3MGP8W/35MMLL8", "--index", site, "--json"], cwd=tmp_path)
    )
    assert answer["alert"] is None and answer["url"].startswith("http://mtc-m16c.sid.inpe.br/col/")
    assert (
        _run(
            [tool, "resolve", "http://urlib.net/8JMKD3MGP8W/35MMLL8", "--index", site], cwd=tmp_path
        ).strip()
        == answer["url"]
    )


def test_the_installed_tool_starts_a_project_that_takes_a_deposit(venv, tmp_path):
    """init --github (its workflow template from the installed package), then deposit,
    build and resolve in the new folder."""
    tool = venv / "bin" / "ibistatic"
    _run([tool, "init", "library", "--github"], cwd=tmp_path)
    project = tmp_path / "library"
    assert "actions/deploy-pages" in (project / ".github/workflows/ibistatic.yml").read_text()
    (project / "thesis.pdf").write_bytes(b"%PDF-1.4\n")
    deposited = _run(
        [tool, "deposit", "thesis.pdf", "--archive", "archives/archive", "--json"], cwd=project
    )
    repository = json.loads(deposited)["repository"]
    _run([tool, "build", "--strict"], cwd=project)
    url = _run([tool, "resolve", "--index", "site", repository], cwd=project).strip()
    assert url == f"https://ibi.example.org/col/{repository}/doc/thesis.pdf"


def test_pip_install_of_the_source_folder(wheel, tmp_path):
    """`pip install .` (not editable) gives the same working tool."""
    source = _source_copy(tmp_path / "source")
    home = tmp_path / "env"
    _run([sys.executable, "-m", "venv", "--system-site-packages", home], cwd=tmp_path)
    _run(
        [home / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "."],
        cwd=source,
        timeout=600,
    )
    shutil.rmtree(source)  # nothing may refer back to the source
    work = tmp_path / "work"
    work.mkdir()
    _run([home / "bin" / "ibistatic", "build", "--output", work / "out"], cwd=work)
    assert (work / "out" / "8JMKD3MGP8W/35MMLL8/index.html").is_file()


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_installed_tool_deposit_build_serve_and_curl_reach_each_document(venv, tmp_path):
    """A new user's first links (issue 38): init, a report, its translation and a new
    edition, build, serve; curl follows each persistent URL to the deposited bytes."""
    from serve_process import free_port, running

    tool = venv / "bin" / "ibistatic"
    port = free_port()
    site_url = f"http://localhost:{port}/"
    _run([tool, "init", "library", "--site-url", site_url, "--host", "ibi.example.org"],
         cwd=tmp_path)  # fmt: skip
    project = tmp_path / "library"
    deposits = [  # HTML, so that Chromium's page shows whose bytes it reached
        ("report.html", _document("the report"), ["--language", "en"]),
        ("relatorio.html", _document("o relatorio"), ["--language", "pt", "--translation-of"]),
        ("report-2.html", _document("the second edition"), ["--edition-of"]),
    ]
    repositories = {}
    first = None
    for name, data, options in deposits:
        (project / name).write_bytes(data)
        if options[-1].endswith("-of"):
            options = [*options, first]
        deposited = _run([tool, "deposit", name, "--archive", "archives/archive", "--title",
                          name, "--json", *options], cwd=project)  # fmt: skip
        repository = json.loads(deposited)["repository"]
        first = first or repository
        repositories[repository] = data
    _run([tool, "build", "--strict"], cwd=project)
    serve = [str(tool), "serve", str(project / "site"), "--port", str(port)]
    with running(serve, port, env={"PYTHONPATH": ""}):  # the venv's ibistatic, not the checkout
        for repository, data in repositories.items():
            assert _curl_follows(site_url, repository, port) == data, repository
    _through_nginx(tool, project, site_url, repositories)
    _through_wrangler(tool, project, site_url, repositories)
    _in_chromium(tool, project, repositories)


def _document(text: str) -> bytes:
    return f'<!DOCTYPE html><title>{text}</title><p id="doc">{text}</p>\n'.encode()


def _curl_follows(site_url: str, repository: str, port: int) -> bytes:
    """What `curl -L` ends on for the persistent URL, the site's host and port reaching
    the engine on `port` (--connect-to: every redirect to the site goes there too)."""
    host = urlsplit(site_url)
    got = subprocess.run(
        ["curl", "-sSL", "--max-redirs", "3", "--connect-to",
         f"{host.hostname}:{host.port}:127.0.0.1:{port}", f"{site_url}{repository}"],
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    return got.stdout


def _through_nginx(tool: Path, project: Path, site_url: str, repositories: dict) -> None:
    """The site behind nginx, its virtual host written by the installed tool, serve
    answering what nginx's maps do not."""
    from serve_process import free_port, running
    from test_real_servers import NGINX, start_nginx, stop

    if NGINX is None:
        pytest.skip("nginx is not installed (scripts/test.sh installs it); serve passed")
    work = Path(tempfile.mkdtemp(prefix="ibistatic-install-nginx-"))
    try:  # readable by nginx's unprivileged workers (tmp_path is 0700 under root)
        work.chmod(0o755)
        site = work / "site"
        shutil.copytree(project / "site", site)  # through the link: the tree
        for folder in [site, *site.rglob("*")]:
            folder.chmod(0o755 if folder.is_dir() else 0o644)
        resolver, listen = free_port(), free_port()
        _run([tool, "server-config", "nginx", "--site", site, "--listen", f"127.0.0.1:{listen}",
              "--resolver-url", f"http://127.0.0.1:{resolver}", "--output", work / "ibi.conf"],
             cwd=work)  # fmt: skip
        serve = [str(tool), "serve", str(site), "--port", str(resolver)]
        with running(serve, resolver, env={"PYTHONPATH": ""}):
            nginx = start_nginx(work / "nginx", [work / "ibi.conf"], listen)
            try:
                for repository, data in repositories.items():
                    assert _curl_follows(site_url, repository, listen) == data, repository
            finally:
                stop(nginx)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _through_wrangler(tool: Path, project: Path, site_url: str, repositories: dict) -> None:
    """The site built for Cloudflare Pages by the installed tool, in workerd."""
    from host_engines import WRANGLER, Wrangler, missing

    if missing(WRANGLER):
        pytest.skip(f"{missing(WRANGLER)}; serve and nginx passed")
    _run([tool, "build", "--host", "cloudflare-pages", "--output", "site-cloudflare"],
         cwd=project)  # fmt: skip
    (project / "wrangler").mkdir()
    with Wrangler(
        (project / "site-cloudflare").resolve(), project / "wrangler"
    ).running() as engine:
        for repository, data in repositories.items():
            assert _curl_follows(site_url, repository, engine.port) == data, repository


def _in_chromium(tool: Path, project: Path, repositories: dict) -> None:
    """The project built by the installed tool for a plain static host (GitHub
    Pages-like: files, then 404.html) and for Netlify (its own redirect engine, as
    `netlify dev` serves), each link opened in headless Chromium: the page it ends on
    is the deposited document."""
    from host_engines import NETLIFY_ENGINE, missing, netlify_server
    from site_helpers import CHROMIUM, SITE_HOST, LandingServer, SiteServer, chromium_dom

    if CHROMIUM is None or missing(NETLIFY_ENGINE):
        pytest.skip(f"{missing(NETLIFY_ENGINE) or 'chromium is not installed'}; curl passed")
    profiles = ("github-pages", "netlify")
    for profile in profiles:
        (project / f"{profile}.yaml").write_text(
            f"site-url: http://{SITE_HOST}/\narchives: [archives/archive]\n"
            f"output: site-{profile}\nhosts: [{profile}]\n",
            encoding="utf-8",
        )
        _run([tool, "build", "--config", f"{profile}.yaml"], cwd=project)
    with LandingServer().running() as landing:
        for profile in profiles:
            site = (project / f"site-{profile}").resolve()
            with contextlib.ExitStack() as stack:
                if profile == "netlify":
                    port = stack.enter_context(netlify_server(site))
                else:
                    port = stack.enter_context(SiteServer(site).running()).port
                for repository, data in repositories.items():
                    dom = chromium_dom(f"http://{SITE_HOST}/{repository}", port, landing.port)
                    shown = data.decode().split("<p")[1].split(">", 1)[1].split("<")[0]
                    assert f'<p id="doc">{shown}</p>' in dom, (profile, repository, dom[-800:])
