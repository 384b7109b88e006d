"""The documents live with the links (issue 38): an Archive without a server of its own
has its doc/ files published inside the site, at col/<IBI>/doc/<file>, so a new
project's first persistent link leads to the deposited bytes, not back to itself."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ibistatic.archive.descriptors import read_archive_info
from ibistatic.config import load_config
from ibistatic.core.properties import file_url_problem
from ibistatic.site.build import build_site
from serve_process import free_port, running
from test_init import ibistatic

SITE = "https://ibi.example.org/"


def deposit(project: Path, name: str, data: bytes, *options: str) -> str:
    (project / name).write_bytes(data)
    done = ibistatic("deposit", name, "--archive", "archives/archive", "--json", *options,
                     cwd=project)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["repository"]


def new_project(tmp_path: Path, site_url: str = SITE) -> Path:
    done = ibistatic("init", "library", "--site-url", site_url, "--host", "ibi.example.org",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tmp_path / "library"


def published(project: Path, repository: str, name: str) -> Path:
    return project / "site" / "col" / repository / "doc" / name


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_init_three_deposits_build_serve_and_curl_follows_each_link_to_its_bytes(tmp_path):
    port = free_port()
    project = new_project(tmp_path, f"http://localhost:{port}/")
    report = deposit(project, "report.pdf", b"%PDF-1.4 the report\n", "--title", "A report",
                     "--language", "en")  # fmt: skip
    translation = deposit(project, "relatorio.pdf", "%PDF-1.4 o relatório\n".encode(),
                          "--title", "Um relatório", "--language", "pt",
                          "--translation-of", report)  # fmt: skip
    edition = deposit(project, "report-2.pdf", b"%PDF-1.4 the second edition\n", "--title",
                      "A report, 2nd edition", "--edition-of", report)  # fmt: skip
    built = ibistatic("build", cwd=project)
    assert built.returncode == 0 and ", 0 errors, 0 warnings in " in built.stdout, built.stderr
    expected = {
        report: b"%PDF-1.4 the report\n",
        translation: "%PDF-1.4 o relatório\n".encode(),
        edition: b"%PDF-1.4 the second edition\n",
    }
    serve = [sys.executable, "-m", "ibistatic", "serve", str(project / "site"), "--port", str(port)]
    with running(serve, port):
        for repository, data in expected.items():
            got = subprocess.run(
                ["curl", "-sSL", "--max-redirs", "5", "-w", "\n%{http_code} %{num_redirects}",
                 f"http://localhost:{port}/{repository}"],
                capture_output=True, timeout=30,
            )  # fmt: skip
            body, _, status = got.stdout.rpartition(b"\n")
            assert (body, status) == (data, b"200 1"), (repository, got)
        last = subprocess.run(
            ["curl", "-sSL", "--max-redirs", "5", f"http://localhost:{port}/{report}!"],
            capture_output=True, timeout=30,
        )  # fmt: skip
        assert last.stdout == b"%PDF-1.4 the second edition\n"  # `!`: the last edition


def test_documents_are_links_to_one_copy_and_a_later_edit_waits_for_the_build(tmp_path):
    project = new_project(tmp_path)
    repository = deposit(project, "report.pdf", b"%PDF first\n")
    assert ibistatic("build", cwd=project).returncode == 0
    page = published(project, repository, "report.pdf")
    assert page.read_bytes() == b"%PDF first\n"
    assert page.stat().st_nlink == 2  # the generation's and the one copy's
    assert not os.access(page, os.W_OK) or os.geteuid() == 0  # the copy is read-only
    source = project / "archives" / "archive" / repository / "doc" / "report.pdf"
    with open(source, "r+b") as handle:  # edited in place: the same inode
        handle.write(b"%PDF EDIT!\n")
    assert page.read_bytes() == b"%PDF first\n"  # the published bytes wait for a build
    assert ibistatic("build", cwd=project).returncode == 0
    assert published(project, repository, "report.pdf").read_bytes() == b"%PDF EDIT!\n"
    assert ibistatic("build", "--full", cwd=project).returncode == 0
    copies = [
        p for p in (project / ".site.ibistatic-cache" / "documents").rglob("*") if p.is_file()
    ]
    contents = sorted(p.read_bytes() for p in copies)
    assert contents[0] == b"%PDF EDIT!\n" and len(contents) == 2  # the old copy pruned
    assert contents[1].startswith(b"<!DOCTYPE html>")  # and the Archive's service page


def test_an_item_removed_takes_its_documents_with_it(tmp_path):
    project = new_project(tmp_path)
    kept = deposit(project, "a.pdf", b"%PDF a\n")
    gone = deposit(project, "b.pdf", b"%PDF b\n")
    assert ibistatic("build", cwd=project).returncode == 0
    assert published(project, gone, "b.pdf").exists()
    shutil.rmtree(project / "archives" / "archive" / gone)
    built = ibistatic("build", cwd=project)
    assert built.returncode == 0 and "update of" in built.stdout, built.stdout
    assert not published(project, gone, "b.pdf").exists()
    assert published(project, kept, "a.pdf").read_bytes() == b"%PDF a\n"


def test_equal_documents_are_stored_once(tmp_path):
    project = new_project(tmp_path)
    first = deposit(project, "a.pdf", b"%PDF same\n")
    second = deposit(project, "a.pdf", b"%PDF same\n")
    assert ibistatic("build", cwd=project).returncode == 0
    one, two = published(project, first, "a.pdf"), published(project, second, "a.pdf")
    assert one.stat().st_ino == two.stat().st_ino and one.stat().st_nlink == 3


def test_the_sample_archives_with_servers_of_their_own_publish_no_documents(tmp_path):
    from test_publish import make_project

    config = load_config(make_project(tmp_path))
    report = build_site(config)
    assert not (config.output / "col").exists()
    assert not any(p.key == "file-url" for p in report.problems)


@pytest.mark.parametrize(
    "file_url, problem",
    [
        ("{site}col/{repository}/doc/{path}", False),
        ("https://{address}/col/{repository}/doc/{path}", False),  # the site's host, at col/
        ("http://{address}/col/{repository}/doc/{path}", True),  # http: not the site's URL
        ("{site}docs/{path}", True),  # inside the site, where nothing is published
        ("https://{address}:8443/col/{repository}/doc/{path}", False),  # another server
        ("https://files.example.org/{repository}/{path}", False),  # another host
    ],
)
def test_a_file_url_on_the_sites_host_that_nothing_publishes_is_a_warning(file_url, problem):
    raw = {"address": "ibi.example.org", "service-ibi": "example.org/ibi/2020/01.01.00.00",
           "file-url": file_url}  # fmt: skip
    info, problems = read_archive_info("archive", raw)
    assert problems == []
    assert (file_url_problem(info, SITE) is not None) == problem


def test_the_build_warns_of_a_file_url_that_would_loop(tmp_path):
    project = new_project(tmp_path)
    deposit(project, "a.pdf", b"%PDF a\n")
    path = project / "archives" / "archive" / "archive.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["file-url"] = "http://{address}/col/{repository}/doc/{path}"
    path.write_text(yaml.safe_dump(raw))
    built = ibistatic("build", cwd=project)
    assert built.returncode == 0
    assert (
        "warning: archive: archive.yaml: file-url: 'http://{address}/col/{repository}/doc/{path}', "
        "which gives http://ibi.example.org/col/example.org/x/2020/01.01.00.00/doc/file.pdf for "
        "a file, on the site's own host outside its documents" in built.stderr
    )
    assert not (project / "site" / "col").exists()


def _hosted_project(tmp_path: Path, host: str) -> tuple[Path, str]:
    """An init project with one deposit, built for `host`: (site, repository)."""
    project = new_project(tmp_path)
    repository = deposit(project, "report.pdf", b"%PDF-1.4 hosted\n", "--title", "Hosted")
    config = project / "ibistatic.yaml"
    config.write_text(config.read_text() + f"hosts: [{host}]\n")
    built = ibistatic("build", cwd=project)
    assert built.returncode == 0, built.stderr
    return project / "site", repository


def test_netlifys_engine_redirects_the_link_and_serves_the_document(tmp_path):
    from host_engines import NETLIFY_ENGINE, missing, netlify_answers

    if missing(NETLIFY_ENGINE):
        pytest.skip(missing(NETLIFY_ENGINE))
    site, repository = _hosted_project(tmp_path, "netlify")
    document = f"/col/{repository}/doc/report.pdf"
    link, file = netlify_answers(site.resolve(), [f"/{repository}", document])
    assert link["status"] == 302 and link["location"] == SITE[:-1] + document, link
    assert file["page"] and not (file["matched"] and file["force"]), file  # the file itself


def test_cloudflares_workerd_redirects_the_link_and_serves_the_document(tmp_path):
    from host_engines import WRANGLER, Wrangler, ask, missing

    if missing(WRANGLER):
        pytest.skip(missing(WRANGLER))
    site, repository = _hosted_project(tmp_path, "cloudflare-pages")
    document = f"/col/{repository}/doc/report.pdf"
    (tmp_path / "wrangler").mkdir()
    with Wrangler(site.resolve(), tmp_path / "wrangler").running() as engine:
        status, location, _ = ask(engine.port, f"/{repository}")
        assert status == 302 and location == SITE[:-1] + document
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", engine.port, timeout=30)
        connection.request("GET", document)
        response = connection.getresponse()
        assert (response.status, response.read()) == (200, b"%PDF-1.4 hosted\n")
        # an HTML document, the Archive's service page: Pages' asset server would drop
        # "index.html" with a 308 and the worker resolved the path back to itself, a loop
        service = yaml.safe_load((site.parent / "archives/archive/archive.yaml").read_text())
        connection.request("GET", f"/col/{service['service-ibi']}/doc/index.html")
        response = connection.getresponse()
        assert response.status == 200 and b"Archive service" in response.read()
        connection.close()


def test_chromium_on_a_plain_static_host_follows_the_link_to_the_document_once(tmp_path):
    """GitHub Pages-like: files as they are, 404.html for the rest.  Before, the link's
    page led to col/... which 404.html resolved to itself: 76 reloads in 6 s."""
    from site_helpers import (
        CHROMIUM,
        SITE_HOST,
        LandingServer,
        SiteServer,
        chromium_dom,
        foreign,
    )

    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    project = new_project(tmp_path, f"http://{SITE_HOST}/")
    repository = deposit(
        project, "report.html", b'<!DOCTYPE html><p id="doc">the deposited report</p>\n'
    )
    config = project / "ibistatic.yaml"
    config.write_text(config.read_text() + "hosts: [github-pages]\n")
    assert ibistatic("build", cwd=project).returncode == 0
    site, landing = SiteServer((project / "site").resolve()), LandingServer()
    with site.running(), landing.running():
        dom = chromium_dom(f"http://{SITE_HOST}/{repository}", site.port, landing.port)
    assert '<p id="doc">the deposited report</p>' in dom, dom[-2000:]
    document = f"/col/{repository}/doc/report.html"
    asked = [request.path for request in site.log.snapshot()]
    assert asked.count(document) == 1, asked  # reached once, and no loop
    assert foreign(landing.log.snapshot()) == []  # nothing off the site


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_serve_streams_a_large_document(tmp_path):
    """A document of 80 MiB (over what serve reads whole) arrives whole, in chunks."""
    port = free_port()
    project = new_project(tmp_path, f"http://localhost:{port}/")
    data = os.urandom(1 << 20) * 80
    repository = deposit(project, "scan.tif", data)
    assert ibistatic("build", cwd=project).returncode == 0
    serve = [sys.executable, "-m", "ibistatic", "serve", str(project / "site"), "--port", str(port)]
    with running(serve, port):
        got = subprocess.run(
            ["curl", "-sSL", "-o", str(tmp_path / "got"), "-w", "%{http_code} %{size_download}",
             f"http://localhost:{port}/{repository}"],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
        assert got.stdout == f"200 {len(data)}".encode()
        assert (tmp_path / "got").read_bytes() == data
        head = subprocess.run(
            ["curl", "-sSI", f"http://localhost:{port}/col/{repository}/doc/scan.tif"],
            capture_output=True, timeout=30, check=True,
        )  # fmt: skip
        assert f"content-length: {len(data)}".encode() in head.stdout.lower()
