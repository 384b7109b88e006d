"""Every pair list the resolution report prints, byte for byte, from ``ibistatic serve``.

Each file of tests/golden/service/ holds, after ``#`` comments saying where in
resolution-system-pt.txt it comes from, the request line (``GET <path?query>``, the
request printed in the report, sent as is), optional settings (``unfiltered``: the
server does not filter; ``charset C``: the Archive's pair-list-charset, to write the
answer read back the same way),
a blank line, and the listing as printed, one pair a line.  The expected answer is those
lines joined by CRLF with nothing after the last (Table 4.2); the server runs over the
built sample on a loopback port with the listing's urlkey as its key source.  The bytes
are then read back with the strict Table 4.2 reader.
"""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from ibistatic.core.pairlists import in_charset, parse_pairs, wire_text
from ibistatic.errors import IbiSyntaxError
from ibistatic.serve import make_server

GOLDEN = Path(__file__).parent / "golden" / "service"
M16C_SERVICE = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"


@dataclass(frozen=True)
class Listing:
    request: str
    unfiltered: bool
    lines: tuple[str, ...]
    charset: str = "utf-8"

    @property
    def expected(self) -> bytes:
        return "\r\n".join(self.lines).encode("ascii")

    @property
    def urlkey(self) -> str:
        return next(
            (line.split(" ", 1)[1] for line in self.lines if line.startswith("urlkey ")),
            "1111111111",
        )


def read_listing(path: Path) -> Listing:
    head, _, body = path.read_text(encoding="utf-8").partition("\n\n")
    settings = [line for line in head.splitlines() if not line.startswith("#")]
    request = next(line[4:] for line in settings if line.startswith("GET "))
    charset = next(
        (line.split(" ", 1)[1] for line in settings if line.startswith("charset ")), "utf-8"
    )
    return Listing(request, "unfiltered" in settings, tuple(body.splitlines()), charset)


class KeySource:
    """The urlkey the servers give next (the listing's own, so that bytes compare)."""

    value = "1111111111"

    def __call__(self) -> str:
        return self.value


@pytest.fixture(scope="module")
def servers(sample_index):
    """Two servers over the sample: filtering (the default) and not (Example 7.2)."""
    keys = KeySource()
    started = {
        filtered: make_server(sample_index, port=0, urlkey=keys, filtered=filtered)
        for filtered in (True, False)
    }
    for server in started.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield keys, started
    for server in started.values():
        server.shutdown()
        server.server_close()


def fetch(server, target: str) -> tuple[int, str | None, bytes]:
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=5)
    try:
        connection.request("GET", target)  # sent as printed: no quoting of our own
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


@pytest.fixture
def answer(servers):
    keys, started = servers

    def ask(listing: Listing) -> tuple[int, str | None, bytes]:
        keys.value = listing.urlkey
        return fetch(started[not listing.unfiltered], listing.request)

    return ask


LISTINGS = sorted(GOLDEN.glob("*.txt"))


def test_every_listing_of_the_report_is_here():
    names = {path.stem for path in LISTINGS}
    assert names == {
        "example_4_2",
        "example_7_2",
        "example_7_3",
        "section_8_1",
        "section_8_2_first",
        "section_8_2_second",
    }


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: p.stem)
def test_listing_byte_for_byte(answer, path):
    listing = read_listing(path)
    status, content_type, body = answer(listing)
    assert (status, content_type) == (200, "text/plain; charset=us-ascii")
    assert body == listing.expected
    pairs = parse_pairs(body.decode("ascii"), strict=True)
    assert len(pairs) == len(listing.lines)
    assert wire_text(in_charset(pairs, listing.charset)).encode("ascii") == body


def test_section_8_2_first_answer_has_no_urlkey(answer):
    listing = read_listing(GOLDEN / "section_8_2_first.txt")
    names = [name for name, _ in parse_pairs(answer(listing)[2].decode("ascii"), strict=True)]
    assert "urlkey" not in names and "ibi.nextedition" in names


@pytest.mark.parametrize(
    "text, position, expected",
    [
        ("a b\nc d", 3, "one SP or CRLF, or end of pair list"),
        ("a b\r\n", 5, "a pair after the separator (nothing may follow the last pair)"),
        ("a b\r\n\r\nc d", 5, "a pair name"),
        ("a b \r\nc d", 4, "a pair name"),
    ],
)
def test_strict_reader_refuses_what_table_4_2_does_not_allow(text, position, expected):
    with pytest.raises(IbiSyntaxError) as caught:
        parse_pairs(text, strict=True)
    assert caught.value.position == position
    assert expected in str(caught.value)


# ---------------------------------------------------------------------------------------
# What is not a listing of the report: the empty answer and bad requests


def test_unknown_ibi_is_zero_bytes(answer):
    listing = Listing(
        M16C_SERVICE + "?servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/3333333", False, ()
    )
    assert answer(listing) == (200, "text/plain; charset=us-ascii", b"")


@pytest.mark.parametrize(
    "query",
    [
        "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1",
        "servicesubject=urlRequest&parsedibiurl.ibi=",
        "servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/35MMEIE",
        "servicesubject=urlRequest&parsedibiurl.ibi=not-an-ibi",
    ],
)
def test_url_request_without_a_parsable_ibi_is_the_empty_answer(answer, query):
    assert answer(Listing(M16C_SERVICE + "?" + query, False, ())) == (
        200,
        "text/plain; charset=us-ascii",
        b"",
    )


@pytest.mark.parametrize(
    "query, message",
    [
        (
            "servicesubject=urlRequest&parsedibiurl.ibi=%zz",
            "expected '%' followed by two hexadecimal digits at character 44",
        ),
        ("servicesubject=urlRequest&parsedibiurl.ibi", "expected '='"),
        ("servicesubject=urlRequest&&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8", "expected a pair name"),
        (
            "servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8&parsedibiurl.verblist=GetNothing",
            "verb",
        ),
        (
            "servicesubject=x",
            "servicesubject 'x': expected inclusionConfirmationRequest, urlRequest or acknowledgment",
        ),
    ],
)
def test_malformed_service_request_is_400_with_a_message(answer, query, message):
    status, content_type, body = answer(Listing(M16C_SERVICE + "?" + query, False, ()))
    assert (status, content_type) == (400, "text/plain; charset=us-ascii")
    text = body.decode("ascii")
    assert text.startswith("bad service request: ") and text.endswith("\r\n")
    assert message in text


def test_other_subjects_end_without_a_line_break(answer):
    for query, expected in (
        ("servicesubject=inclusionConfirmationRequest", b"confirmation yes"),
        ("servicesubject=acknowledgment&ibi=x", b"notice {acknowledgment received}"),
    ):
        assert answer(Listing(M16C_SERVICE + "?" + query, False, ()))[2] == expected


@pytest.mark.parametrize(
    "filepath, url",
    [
        (
            "/reference.bib",
            "http://mtc-m16d.sid.inpe.br/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib",
        ),
        ("//reference.bib", None),  # not a path-absolute file of the item: as the resolver reads it
    ],
)
def test_file_path_of_a_url_request(answer, filepath, url):
    query = f"servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH&parsedibiurl.filepath={filepath}"
    body = answer(Listing("/sid.inpe.br/mtc-m19@80/2009/08.21.17.02?" + query, False, ()))[2]
    assert dict(parse_pairs(body.decode("ascii"), strict=True)).get("url") == url


def test_a_real_serve_process_answers_example_7_2_unfiltered(sample_index):
    """`python -m ibistatic serve --no-filter` as users start it: Example 7.2 byte for
    byte, the fresh urlkey aside."""
    import os
    import re
    import subprocess
    import sys

    listing = read_listing(GOLDEN / "example_7_2.txt")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ibistatic",
            "serve",
            "--index",
            str(sample_index),
            "--port",
            "0",
            "--no-filter",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", process.stderr.readline()).group(1))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        connection.request("GET", listing.request)
        body = connection.getresponse().read()
        connection.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    fresh = re.compile(rb"urlkey [0-9]{10,}-[0-9]{10,}$")
    assert fresh.sub(b"urlkey K", body) == fresh.sub(b"urlkey K", listing.expected)
    assert len(parse_pairs(body.decode("ascii"), strict=True)) == len(listing.lines)


@pytest.mark.parametrize(
    "verbs, name, url",
    [
        # departure from CRIARPARURL's letter: a verb list without GetFileList keeps the path
        (
            "GetLastEdition",
            "url.lastedition",
            "http://mtc-m16d.sid.inpe.br/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib",
        ),
        # "deve prevalecer a segunda (parsedibiurl.verblist)": GetFileList wins over the path
        (
            "GetFileList",
            "url",
            "https://ibi.example.org/files/iconet.com.br/banon/2009/09.09.22.01/",
        ),
    ],
)
def test_file_path_with_a_verb_list(answer, verbs, name, url):
    query = (
        "servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH"
        f"&parsedibiurl.filepath=/reference.bib&parsedibiurl.verblist={verbs}"
    )
    body = answer(Listing("/sid.inpe.br/mtc-m19@80/2009/08.21.17.02?" + query, False, ()))[2]
    assert dict(parse_pairs(body.decode("ascii"), strict=True))[name] == url
