"""``ibistatic linkcheck`` against loopback servers that answer 200, 404, 500, time out,
redirect in a loop, redirect without end, refuse HEAD, and are not there at all."""

import csv
import io
import threading
import time
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ibistatic.cli import main
from ibistatic.linkcheck import (
    USER_AGENT,
    HostPacer,
    Settings,
    Target,
    check_targets,
    check_url,
    published_targets,
)

TIMEOUT = 0.5  # what the checker waits; the slow page answers after SLOW seconds
SLOW = 3.0
#: the servers here are on loopback, which the checker reaches only when told to
LOOPBACK = ("127.0.0.0/8",)


class Handler(BaseHTTPRequestHandler):
    """Answers by the file name at the end of the path (the doc/ file of an item)."""

    protocol_version = "HTTP/1.1"

    def do_HEAD(self):
        self._answer(body=False)

    def do_GET(self):
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        self.server.seen.append(
            (time.monotonic(), self.command, self.path, self.headers["User-Agent"])
        )
        name = self.path.rsplit("/", 1)[-1]
        base, _, query = name.partition("?")
        if base == "slow.pdf":
            time.sleep(SLOW)
            return self._send(200, body)
        if base == "nohead.pdf" and self.command == "HEAD":
            return self._send(405, body)
        if base == "loop.pdf":
            return self._send(302, body, "loop2.pdf")
        if base == "loop2.pdf":
            return self._send(302, body, "loop.pdf")
        if base == "grow.pdf":  # a new URL every time: no loop, but no end either
            step = int(query.partition("=")[2] or 0)
            return self._send(302, body, f"grow.pdf?n={step + 1}")
        if base == "moved.pdf":
            return self._send(301, body, self.path.replace("moved.pdf", "ok.pdf"))
        status = {"ok.pdf": 200, "nohead.pdf": 200, "missing.pdf": 404, "error.pdf": 500}
        return self._send(status.get(base, 404), body)

    def _send(self, status: int, body: bool, location: str | None = None) -> None:
        content = f"answer {status}\n".encode() * 100
        try:
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)
        except OSError:
            pass  # the checker hung up (it timed out, or read only the first bytes)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def base_url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


FILES = ["ok.pdf", "missing.pdf", "error.pdf", "slow.pdf", "loop.pdf", "moved.pdf", "nohead.pdf"]


def make_site(tmp_path: Path, server, files=FILES) -> Path:
    """An Archive whose items' targets are the loopback server's pages, built."""
    archive = tmp_path / "loop"
    archive.mkdir()
    (archive / "archive.yaml").write_text(
        "address: 127.0.0.1\n"
        "service-ibi: example.org/ibi/2019/01.01.00.00\n"
        f"file-url: {base_url(server)}/col/{{repository}}/doc/{{path}}\n"
    )
    for number, name in enumerate(files):
        item = archive / "example.org" / "ibi" / "2020" / f"01.01.00.{number:02d}"
        (item / "doc").mkdir(parents=True)
        (item / "doc" / name).write_text("x")
        (item / "item.yaml").write_text("state: Original\ntimestamp: 2020-01-01T00:00:00Z\n")
    (tmp_path / "ibistatic.yaml").write_text(
        "site-url: https://ibi.example.org/\narchives: [loop]\noutput: site\n"
    )
    assert main(["build", "--quiet", "--config", str(tmp_path / "ibistatic.yaml")]) == 0
    return tmp_path / "site"


def target_url(server, number: int, name: str) -> str:
    return f"{base_url(server)}/col/example.org/ibi/2020/01.01.00.{number:02d}/doc/{name}"


def test_broken_targets_are_reported_in_csv_html_and_exit_1(tmp_path, server, capsys):
    site = make_site(tmp_path, server)
    out_csv, out_html = tmp_path / "broken.csv", tmp_path / "broken.html"
    code = main(
        ["linkcheck", "--site", str(site), "--timeout", str(TIMEOUT), "--per-host-rate", "100",
         "--allow-private", "--csv", str(out_csv), "--html", str(out_html)]
    )  # fmt: skip
    assert code == 1
    rows = list(csv.reader(io.StringIO(out_csv.read_text(encoding="utf-8"))))
    url = {name: target_url(server, number, name) for number, name in enumerate(FILES)}
    loop = f"{url['loop.pdf']} -> {url['loop.pdf'][:-8]}loop2.pdf -> {url['loop.pdf']}"
    assert rows == [
        ["ibi", "ibip", "archive", "url", "status", "error", "final-url"],
        ["example.org/ibi/2020/01.01.00.01", "", "loop", url["missing.pdf"], "404",
         "404 Not Found", url["missing.pdf"]],
        ["example.org/ibi/2020/01.01.00.02", "", "loop", url["error.pdf"], "500",
         "500 Internal Server Error", url["error.pdf"]],
        ["example.org/ibi/2020/01.01.00.03", "", "loop", url["slow.pdf"], "",
         "no answer within 0.5 s", url["slow.pdf"]],
        ["example.org/ibi/2020/01.01.00.04", "", "loop", url["loop.pdf"], "",
         f"redirect loop: {loop}", url["loop.pdf"][:-8] + "loop2.pdf"],
    ]  # fmt: skip
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"broken: {url['missing.pdf']}: 404 Not Found (example.org/ibi/2020/01.01.00.01, loop)",
        f"broken: {url['error.pdf']}: 500 Internal Server Error (example.org/ibi/2020/01.01.00.02, loop)",
        f"broken: {url['slow.pdf']}: no answer within 0.5 s (example.org/ibi/2020/01.01.00.03, loop)",
        f"broken: {url['loop.pdf']}: redirect loop: {loop} (example.org/ibi/2020/01.01.00.04, loop)",
    ]
    assert "checked 7 target URLs of 7 items on 1 host: 4 broken (the target of 4 items)" in err
    page = out_html.read_text(encoding="utf-8")
    assert page.count("<tr><td>example.org/ibi/2020/01.01.00.0") == 4
    assert f'<a href="{url["missing.pdf"]}">' in page and "404 Not Found" in page
    assert "redirect loop: " + loop.replace(">", "&gt;") in page
    assert_well_formed(page)


def test_the_checker_says_who_asks_and_falls_back_to_get(tmp_path, server):
    site = make_site(tmp_path, server, files=["nohead.pdf", "moved.pdf"])
    argv = ["linkcheck", "--site", str(site), "--quiet", "--per-host-rate", "100"]
    assert main([*argv, "--allow-private"]) == 0
    asked = [(method, path.rsplit("/", 1)[-1]) for _, method, path, _ in server.seen]
    assert sorted(asked) == [
        ("GET", "nohead.pdf"),  # HEAD refused (405): asked again with GET
        ("HEAD", "moved.pdf"),  # 301, followed
        ("HEAD", "nohead.pdf"),
        ("HEAD", "ok.pdf"),
    ]
    assert {agent for *_, agent in server.seen} == {USER_AGENT}


def test_no_broken_target_exits_0_and_says_so(tmp_path, server, capsys):
    site = make_site(tmp_path, server, files=["ok.pdf", "moved.pdf"])
    out_html, out_csv = tmp_path / "report.html", tmp_path / "report.csv"
    argv = ["linkcheck", "--site", str(site), "--html", str(out_html), "--csv", str(out_csv)]
    assert main([*argv, "--allow-private"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "checked 2 target URLs of 2 items on 1 host: 0 broken (the target of 0 items)" in err
    assert "<p>No broken target.</p>" in out_html.read_text(encoding="utf-8")
    assert out_csv.read_bytes() == b"ibi,ibip,archive,url,status,error,final-url\r\n"


def test_redirects_without_end_stop_at_the_limit(server):
    settings = Settings(max_redirects=5, per_host_rate=1000, allow_private=LOOPBACK)
    outcome = check_url(f"{base_url(server)}/grow.pdf", settings, HostPacer(1000))
    assert outcome.broken and outcome.status is None
    assert outcome.reason == "more than 5 redirects"
    assert outcome.final_url.endswith("/grow.pdf?n=5")


def test_a_closed_port_is_refused_and_an_unknown_host_named(server):
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(timeout=2, allow_private=LOOPBACK)
    closed = check_url(f"http://127.0.0.1:{port}/x", settings, HostPacer(100))
    assert (closed.status, closed.reason) == (None, "connection refused")
    unknown = check_url("http://no-such-host.invalid/x", settings, HostPacer(100))
    assert (unknown.status, unknown.reason) == (None, "unknown host no-such-host.invalid")


def test_requests_to_one_host_are_paced(server):
    """--per-host-rate 10: requests to the one host at least 0.1 s apart, whatever the
    concurrency; a URL that is the target of two items is asked once."""
    urls = [f"{base_url(server)}/{i}/ok.pdf" for i in range(6)]
    targets = [
        Target(url, f"example.org/ibi/2020/01.01.00.{i:02d}", None, "a")
        for i, url in enumerate(urls)
    ]
    targets.append(Target(urls[0], "example.org/ibi/2020/01.01.00.99", None, "b"))
    report = check_targets(
        targets, Settings(concurrency=6, per_host_rate=10, allow_private=LOOPBACK)
    )
    times = sorted(moment for moment, *_ in server.seen)
    assert len(times) == 6
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    # paced when sent: what the server sees varies by how fast each connection is made
    assert times[-1] - times[0] >= 0.45 and min(gaps) >= 0.05, gaps
    assert report.broken() == [] and len(report.outcomes) == 6


def test_published_targets_are_read_from_the_index(tmp_path, server):
    site = make_site(tmp_path, server, files=["ok.pdf", "missing.pdf"])
    assert published_targets(site / "index") == [
        Target(target_url(server, 0, "ok.pdf"), "example.org/ibi/2020/01.01.00.00", None, "loop"),
        Target(
            target_url(server, 1, "missing.pdf"), "example.org/ibi/2020/01.01.00.01", None, "loop"
        ),
    ]


def test_the_sample_targets_every_item_but_the_deleted(tmp_path):
    assert main(["build", "--quiet", "--output", str(tmp_path / "site")]) == 0
    targets = published_targets(tmp_path / "site" / "index")
    assert len(targets) == 16  # 17 records, one of them a Deleted item (no target)
    assert all(t.url.startswith("http://mtc-m16") for t in targets)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--concurrency", "0"], "argument --concurrency: '0': expected a whole number of requests, 1 or more"),
        (["--per-host-rate", "-1"], "argument --per-host-rate: '-1': expected requests a second, more than 0"),
        (["--timeout", "nan"], "argument --timeout: 'nan': expected seconds, more than 0"),
    ],
)  # fmt: skip
def test_bad_options_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["linkcheck", "--site", ".", *argv])
    assert exit.value.code == 2
    assert message in capsys.readouterr().err


def test_no_built_site_exits_2(tmp_path, monkeypatch, capsys):
    assert main(["linkcheck", "--site", str(tmp_path)]) == 2
    assert f"ibistatic linkcheck: {tmp_path}: no index here" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)  # no ibistatic.yaml: where `build` publishes the sample
    assert main(["linkcheck"]) == 2
    assert f"ibistatic linkcheck: {tmp_path / 'site'}: no index here" in capsys.readouterr().err


def test_an_unwritable_report_exits_2(tmp_path, server, capsys):
    site = make_site(tmp_path, server, files=["ok.pdf"])
    report = tmp_path / "no-such-folder" / "r.csv"
    assert main(["linkcheck", "--site", str(site), "--allow-private", "--csv", str(report)]) == 2
    assert (
        f"{report}: cannot write the report (No such file or directory)" in capsys.readouterr().err
    )


class _Nesting(HTMLParser):
    VOID = {"meta", "br", "link"}

    def __init__(self):
        super().__init__()
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (self.open, tag)
        self.open.pop()


def assert_well_formed(page: str) -> None:
    parser = _Nesting()
    parser.feed(page)
    parser.close()
    assert parser.open == []
