"""Acknowledgments in batches (docs/protocol.md, "Batches of acknowledgments"): the
resolver's queue and its requests, the Archive's reading of a batch, in process."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibistatic.core.pairlists import decode_query, encode_query, match_query
from ibistatic.errors import IbistaticError
from ibistatic.federation.acks import AckLog, ResolverKeys
from ibistatic.federation.archive_side import CountingService
from ibistatic.federation.network import RemoteArchive, ResolverLimits, Thanks
from ibistatic.federation.wire import (
    ACK_BATCH_BYTES,
    ACK_BATCH_LINES,
    ack_batches,
    batch_answer,
    batch_counts,
    takes_batches,
)
from ibistatic.index.reader import Index

SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
BASE = "http://127.0.0.1:9/" + SERVICE
URL = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"


def _thanks(key: str = "1426387214-9164566186556927") -> Thanks:
    forms = ("rep", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43", "ibip", "8JMKD3MGP8W/35MMLL8")
    return Thanks(None, "Data", forms, "Original", URL, key)


class FakeClient:
    """An Archive's HTTP side: records each request, answers as told."""

    def __init__(self, post_status: int = 200) -> None:
        self.post_status = post_status
        self.posts: list[list[str]] = []
        self.gets: list[str] = []

    async def post(self, url: str, body: bytes):
        assert url == BASE + "?servicesubject=acknowledgment"
        lines = body.decode("ascii").split("\n")
        self.posts.append(lines)
        if self.post_status != 200:
            return self.post_status, "method POST not allowed\n"
        return 200, "acknowledgment.counted %d\r\nacknowledgment.refused 0" % len(lines)

    async def get(self, url: str, timeout=None):
        self.gets.append(url.split("?", 1)[1])
        return 200, "notice {acknowledgment received}"


def _acknowledge(peer: RemoteArchive, count: int, pause_every: int = 0) -> list[str]:
    """Offer `count` acknowledgments (distinct persistent URLs), drain; the queries sent."""
    thanks = _thanks()
    expected = []

    async def run():
        for number in range(count):
            url = f"http://r.example/8JMKD3MGP8W/35MMLL8?n={number}"
            assert peer.acknowledge(thanks, "10.0.0.1", url)
            expected.append(thanks.query("10.0.0.1", url))
            if pause_every and number % pause_every == 0:
                await asyncio.sleep(0)  # the server's loop runs between requests
        await peer.close()

    asyncio.run(run())
    return expected


def test_acknowledgments_go_in_batches_each_once_in_order():
    client = FakeClient()
    peer = RemoteArchive(SERVICE, BASE, client, ResolverLimits(ack_interval=0.01), SERVICE)
    expected = _acknowledge(peer, 1000, pause_every=7)
    sent = [line for batch in client.posts for line in batch]
    assert sent == expected  # every one, once, in order
    assert len(client.posts) <= 1000 // 256 + 10  # batches, not a request each
    assert max(len(batch) for batch in client.posts) <= 256
    assert client.gets == [] and peer.acks.dropped == 0


def test_an_archive_that_takes_no_batch_gets_single_acknowledgments():
    """An ibistatic Archive older than batches answers the POST 405: that batch and all
    later ones go one by one; a URLib Archive is never sent a batch."""
    older = FakeClient(post_status=405)
    peer = RemoteArchive(SERVICE, BASE, older, ResolverLimits(ack_interval=0.01), SERVICE)
    expected = _acknowledge(peer, 300, pause_every=50)
    assert older.gets == expected and len(older.posts) == 1 and not peer.batches

    urlib = FakeClient()
    peer = RemoteArchive(SERVICE, BASE, urlib, ResolverLimits(), SERVICE, batches=False)
    assert _acknowledge(peer, 20) == urlib.gets and urlib.posts == []
    assert takes_batches("ibistatic-0.1.0") and not takes_batches("URLib-2.1")


def test_a_full_queue_drops_and_counts_and_never_waits():
    """An Archive that does not keep up: what does not fit in the queue is dropped and
    counted, the redirect goes on at once, and memory stays within the bound."""
    client = FakeClient()
    limits = ResolverLimits(ack_queue_bytes=20_000, ack_interval=0.01)
    peer = RemoteArchive(SERVICE, BASE, client, limits, SERVICE)
    thanks, accepted = _thanks(), 0

    async def run():
        nonlocal accepted
        for number in range(1000):  # no pause: the sender never runs meanwhile
            accepted += peer.acknowledge(thanks, "10.0.0.1", f"http://r/X/Y?n={number}")
            assert peer.acks._bytes <= limits.ack_queue_bytes
        await peer.close()

    asyncio.run(run())
    sent = sum(len(batch) for batch in client.posts)
    assert 0 < accepted < 1000
    assert sent == accepted and peer.acks.dropped == 1000 - accepted


def test_a_resting_archive_is_not_queued_for():
    client = FakeClient()
    peer = RemoteArchive(SERVICE, BASE, client, ResolverLimits(), SERVICE)
    for _ in range(3):
        peer.health.failed()
    assert not peer.acknowledge(_thanks(), "10.0.0.1", "http://r/X/Y")
    assert peer.acks.dropped == 1 and peer.acks.waiting == 0


def test_a_query_made_from_the_template_is_the_whole_encoding():
    thanks = _thanks()
    for ip, url in [
        ("10.0.0.1", "http://r/X/Y"),
        ("172.16.44.200 150.163.68.1", "http://r/X/Y!:(oai_dc)?a=1&b=%20é#"),
    ]:
        assert thanks.query(ip, url) == encode_query(thanks.pairs(ip, url))
    odd = Thanks(None, "Data", None, "Original", "http://a/\x00", "1" * 10)
    assert odd.query("1.2.3.4", "http://r/X") == encode_query(odd.pairs("1.2.3.4", "http://r/X"))


def test_batches_are_split_within_the_archives_limits():
    lines = ["x" * 3000] * 700 + ["y"] * 2000
    bodies = ack_batches(lines)
    assert b"\n".join(bodies).split(b"\n") == [line.encode() for line in lines]
    assert all(len(body) <= ACK_BATCH_BYTES for body in bodies)
    assert all(body.count(b"\n") < ACK_BATCH_LINES for body in bodies)
    assert batch_counts("acknowledgment.counted 3\r\nacknowledgment.refused 1") == (3, 1)
    assert batch_counts("notice {acknowledgment received}") is None
    assert batch_counts("<html>") is None


# --- the Archive's side


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from federation_helpers import SAMPLE, build_site

    site = build_site(SAMPLE / "mtc-m16c", tmp_path_factory.mktemp("batches"))
    return Index(site).views()


def _service(tmp_path, resolvers=("127.0.0.1",)):
    log = AckLog(tmp_path / "acks.jsonl")
    return CountingService(ResolverKeys(), log, True, resolvers), log


def test_an_archive_counts_each_line_of_a_batch_from_its_resolver(served, tmp_path):
    service, log = _service(tmp_path)
    own = service.keys.issue("127.0.0.1")
    other = service.keys.issue("127.0.0.2")  # a key someone else asked for
    good = _thanks(own).query("150.163.2.175", "http://r/8JMKD3MGP8W/35MMLL8")
    lines = [
        good,
        good,  # a second redirect from the same cached answer: counted too
        _thanks("1426387214-9164566186556927").query("1.2.3.4", "http://r/X"),  # forged
        _thanks(other).query("1.2.3.4", "http://r/X"),  # issued to another address
        "servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8",  # not an ack
        "%zz",
    ]
    body = "\r\n".join(lines).encode("ascii")
    target = f"/{SERVICE}?servicesubject=acknowledgment"
    status, text = service.batch(served, target, body, "127.0.0.1")
    assert (status, text) == (200, "acknowledgment.counted 2\r\nacknowledgment.refused 4")
    assert log.counts == {"rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8": 2}
    lines_logged = (tmp_path / "acks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines_logged) == 2

    # from an address that is not its resolver: refused whole, nothing counted
    status, text = service.batch(served, target, body, "127.0.0.2")
    assert status == 400 and "not 127.0.0.2" in text
    assert (
        service.batch(served, "/" + SERVICE + "?servicesubject=urlRequest", body, "127.0.0.1")
        is None
    )
    elsewhere = "/x.org/other/2020/01.01.00.00?servicesubject=acknowledgment"
    assert service.batch(served, elsewhere, body, "127.0.0.1") is None
    too_many = b"\n".join([good.encode()] * (ACK_BATCH_LINES + 1))
    assert service.batch(served, target, too_many, "127.0.0.1")[0] == 400
    assert sum(log.counts.values()) == 2


def test_a_batch_logs_each_line_as_its_get_would(served, tmp_path):
    """The records a batch writes are those of ack_record, as AckLog.add writes them (JSON,
    sorted keys, no ASCII escapes), whatever the lines share."""
    import json

    from ibistatic.federation.acks import ack_record

    service, log = _service(tmp_path)
    own = service.keys.issue("127.0.0.1")
    urls = ["http://r/8JMKD3MGP8W/35MMLL8", "http://r/8JMKD3MGP8W/35MMLL8?é", 'http://r/"\\']
    lines = [_thanks(own).query(ip, url) for url in urls for ip in ("1.2.3.4", "::1 10.0.0.1")]
    lines.append(_thanks(own).query("1.2.3.4", urls[0]))  # the same redirect again: counted
    target = f"/{SERVICE}?servicesubject=acknowledgment"
    body = "\n".join(lines).encode("ascii")
    assert service.batch(served, target, body, "127.0.0.1")[1].startswith(
        "acknowledgment.counted 7"
    )
    written = (tmp_path / "acks.jsonl").read_text(encoding="utf-8").splitlines()
    when = json.loads(written[0])["time"]
    expected = []
    for line in lines:
        record = ack_record(dict(decode_query(line)), "127.0.0.1", 0) | {"time": when}
        expected.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
    assert written == expected
    assert log.counts == {" ".join(_thanks().forms): 7}


def test_an_archive_with_no_resolver_counts_no_batch(served, tmp_path):
    service, log = _service(tmp_path, resolvers=())
    line = _thanks(service.keys.issue("127.0.0.1")).query("1.2.3.4", "http://r/X")
    status, text = service.batch(
        served, f"/{SERVICE}?servicesubject=acknowledgment", line.encode(), "127.0.0.1"
    )
    assert status == 400 and "none: see --join, --ack-from" in text
    assert log.counts == {}


def test_the_batch_answer_is_a_pair_list():
    assert batch_answer(3, 0) == [("acknowledgment.counted", "3"), ("acknowledgment.refused", "0")]


# --- the query decoding an Archive does for each line


_PIECES = list("ab=&%#+ ~é") + ["%20", "%C3%A9", "%f3", "%E2%82", "%c3", "%ZZ", "%2", "%80"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_decode_query_reads_as_match_query_does(text):
    """decode_query reads a well-formed escaped query with the standard library: the
    same pairs as the character-by-character reader, and the same refusals."""

    def read(function):
        try:
            return function(text)
        except IbistaticError:
            return "refused"

    slow = read(lambda t: [(p.name, p.value) for p in match_query(t)] if t else [])
    assert read(decode_query) == slow


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES + ["&"]), max_size=16).map("".join))
def test_a_batch_reads_each_line_as_decode_query_does(line):
    """A batch decodes a line pair by pair (each distinct pair once per batch): the
    same pairs as decode_query reads in the whole line, and the same refusals."""
    from ibistatic.federation.archive_side import _Batch

    try:
        whole = dict(decode_query(line))
    except IbistaticError:
        whole = None
    batch = _Batch(ResolverKeys(), "127.0.0.1", "127.0.0.1")
    assert batch._query(line) == whole
    assert batch._query(line) == whole  # again, from what the batch remembers


def test_the_resolver_sends_what_is_queued_when_it_stops():
    """The server runs the resolver's lifespan (uvicorn sends its shutdown once the
    requests have ended): every acknowledgment still queued is sent then."""
    import logging

    from ibistatic.federation.registry import Registry
    from ibistatic.federation.resolver_app import ResolverApp
    from ibistatic.web.server import Limits, server_config
    from test_federation_hostile import _claimer

    logging.getLogger("ibistatic.resolver").setLevel(logging.ERROR)
    app = ResolverApp(Registry({}), cache_seconds=3600)
    claimer = _claimer()
    app._remotes = lambda: [claimer]
    app._peers[claimer.holder_id] = claimer  # as _remotes keeps the included Archives
    path = "/x.example.org/a/2020/01.01.00.00"
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode()}
    scope |= {"query_string": b"", "headers": [], "client": ("127.0.0.1", 1)}

    async def run():
        for _ in range(10):  # never yielding: the sender has not run
            assert (await app.answer(scope))[0] == 302
        assert claimer.client.lines == 0
        messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

        async def receive():
            return next(messages)

        async def send(message):
            pass

        await app({"type": "lifespan"}, receive, send)

    asyncio.run(run())
    assert (claimer.client.lines, claimer.acks.dropped) == (10, 0)
    assert server_config(app, Limits(), False).lifespan == "on"


def test_an_archive_that_refused_a_batch_is_kept_with_its_health():
    """After a 405 the Archive is sent single acknowledgments, and stays the same peer
    (its health, its queue) from request to request until it joins again otherwise."""
    from ibistatic.federation.registry import Registry
    from ibistatic.federation.resolver_app import ResolverApp
    from ibistatic.federation.wire import Registration

    registry = Registry({SERVICE: "1234567890"})
    registry.include(
        Registration("127.0.0.1:9", SERVICE, "127.0.0.1", "ibistatic-0.1.0", "a@b.c", "1234567890")
    )
    app = ResolverApp(registry)

    async def run():  # as the server calls it: in its loop
        peer = app._remotes()[0]
        assert peer.batches
        peer.batches = False  # as a 405 leaves it
        assert app._remotes()[0] is peer
        registry.include(
            Registration("127.0.0.1:9", SERVICE, "127.0.0.1", "URLib-2", "a@b.c", "1234567890")
        )
        again = app._remotes()[0]
        assert again is not peer and not again.batches
        await app.close()

    asyncio.run(run())
