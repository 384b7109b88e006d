"""`ibistatic resolver` as attackers and careless clients meet it: header injection,
slowloris, malformed and oversized requests, requests that are not the service's."""

from __future__ import annotations

import socket
import time

import pytest

from federation_helpers import SERVICE, get, start_resolver, write_keys

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def resolver(tmp_path_factory, sample_index):
    root = tmp_path_factory.mktemp("hardening")
    keys = write_keys(root / "keys.yaml", {"sid.inpe.br/mtc-m21/2012/06.05.15.34.39": "1234567890"})
    process, port = start_resolver(keys, "--index", str(sample_index), "--cache-seconds", "0")
    try:
        yield port
    finally:
        process.stop()


def _raw(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(data)
        chunks = []
        while True:
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def test_a_local_index_answers_with_no_archive_included(resolver):
    status, headers, _ = get(resolver, "/8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    assert (status, headers["location"]) == (
        303,
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc",
    )


def test_crlf_in_a_target_never_reaches_a_header(resolver):
    answer = _raw(
        resolver,
        b"GET /8JMKD3MGP8W/35MMLL8/%0d%0aSet-Cookie:%20stolen=1 HTTP/1.1\r\nHost: x\r\n"
        b"Connection: close\r\n\r\n",
    )
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert b"set-cookie" not in head
    assert head.startswith(b"http/1.1 400 ")  # a control character names no file
    assert b"Not a persistent URL" in answer
    for line in head.split(b"\r\n")[1:]:
        assert b"\r" not in line and b"\n" not in line


def test_a_raw_crlf_in_the_request_line_is_a_400(resolver):
    answer = _raw(
        resolver, b"GET /8JMKD3MGP8W/35MMLL8\rSet-Cookie: a=1 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b"set-cookie: a" not in answer.lower()


@pytest.mark.parametrize(
    ("target", "status", "message"),
    [
        ("/8JMKD3MGP8W/35MMLL8%zz", 400, b"bad request: bad percent-encoding '%zz' at position 20"),
        ("/8JMKD3MGP8W/35MMLL8?a=%zz", 400, b"Not a persistent URL"),
        ("/not-an-ibi", 400, b"Not a persistent URL"),
        (
            f"/{SERVICE}?servicesubject=urlRequest&parsedibiurl.ibi=x",
            400,
            b"servicesubject 'urlRequest'",
        ),
        (f"/{SERVICE}?servicesubject", 400, b"bad service request: invalid query string"),
        (f"/{SERVICE.lower()}?servicesubject=x", 400, b"servicesubject 'x': expected inclusion"),
        (
            f"/{SERVICE}?servicesubject=inclusionRequest&archiveaddress=x",
            400,
            b"bad service request: archiveserviceibi is missing",
        ),
    ],
)
def test_malformed_requests_get_400_with_a_message(resolver, target, status, message):
    got, headers, body = get(resolver, target)
    assert got == status
    assert message in body
    assert headers["content-type"].startswith(("text/plain", "text/html"))


def test_other_methods_get_405(resolver):
    answer = _raw(
        resolver,
        b"POST /8JMKD3MGP8W/35MMLL8 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 405 ")


def test_oversized_requests_are_refused(resolver):
    long_target = "/8JMKD3MGP8W/35MMLL8/" + "a" * 20000
    answer = _raw(resolver, f"GET {long_target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 414 ")
    many = "".join(f"X-H{n}: {n}\r\n" for n in range(300))
    answer = _raw(resolver, f"GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 431 ")


def test_slowloris_clients_cost_others_nothing(resolver):
    stalled = []
    try:
        for _ in range(8):
            connection = socket.create_connection(("127.0.0.1", resolver), timeout=5)
            connection.sendall(b"GET /8JMKD3MGP8W/35MMLL8 HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            stalled.append(connection)
        for _ in range(3):
            time.sleep(0.2)
            for connection in stalled:
                connection.sendall(b"a")  # a byte now and then
            started = time.monotonic()
            status, _, _ = get(resolver, "/8JMKD3MGP8W/35MMLL8", timeout=2)
            assert status == 302
            assert time.monotonic() - started < 0.5
    finally:
        for connection in stalled:
            connection.close()


def test_acknowledgments_count_only_from_the_resolver_across_the_workers_of_serve(
    sample_index, tmp_path
):
    """serve --workers 2 --ack-from 127.0.0.1, real processes.  A client at 127.0.0.2
    asks a urlRequest and acknowledges its key eight times: every worker refuses (it is
    no resolver), and the resolver's address cannot use that key either.  The resolver's
    own key counts each time it acknowledges (one redirect each, cached ones too),
    whichever worker the connection reaches.  (This test replaced one that had any
    client acknowledge once: that let anyone inflate the counts, issue 37.)"""
    import re

    from federation_helpers import Process
    from ibistatic.federation.wire import request_url

    log = tmp_path / "acks.jsonl"
    process = Process(
        "serve", "--index", str(sample_index), "--port", "0", "--workers", "2",
        "--ack-log", str(log), "--ack-from", "127.0.0.1",
    )  # fmt: skip
    service = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17"  # mtc-m16c's archive service

    def key_for(port: int, source: str) -> str:
        asked = [
            ("servicesubject", "urlRequest"),
            ("clientinformation.ipaddress", "10.0.0.1"),
            ("parsedibiurl.ibi", "8JMKD3MGP8W/35MMLL8"),
        ]
        status, _, body = get(port, request_url(service, asked), source=source)
        assert status == 200
        return re.search(r"^urlkey (\S+)", body.decode("ascii"), re.M).group(1)

    def ack(port: int, key: str, source: str) -> int:
        pairs = [
            ("servicesubject", "acknowledgment"),
            ("clientinformation.ipaddress", "10.0.0.1 192.0.2.7"),  # a client and its proxy
            ("contenttype", "Data"),
            ("url", "http://mtc-m16c.sid.inpe.br/col/x/doc/a.pdf"),
            ("url.persistent", "https://ibi.example.org/8JMKD3MGP8W/35MMLL8"),
            ("urlkey", key),
        ]  # no state pair: Example 6.9 (URLib) sends none
        return get(port, request_url(service, pairs), source=source)[0]

    try:
        port = int(process.wait_for(r"http://127\.0\.0\.1:(\d+)/").group(1))
        stranger = key_for(port, "127.0.0.2")
        refused = [ack(port, stranger, "127.0.0.2") for _ in range(8)]
        refused.append(ack(port, stranger, "127.0.0.1"))
        own = key_for(port, "127.0.0.1")
        counted = [ack(port, own, "127.0.0.1") for _ in range(6)]
    finally:
        process.stop()
    assert refused == [400] * 9
    assert counted == [200] * 6
    assert len(log.read_text(encoding="utf-8").splitlines()) == 6
