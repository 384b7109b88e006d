"""The resolver network under attack (issue 37): a persistent URL cannot be moved, stalled
or counted falsely.  Every peer is a real HTTP server on loopback: the honest Archive is
`ibistatic serve --join` over the sample's mtc-m16c, the hostile ones are asyncio servers
(tests/hostile_peers.py) that claim every IBI, hang, drip, stream a gigabyte, answer
garbage, impersonate, chain and loop.  The resolvers are real `ibistatic resolver`
processes; the memory test drives the resolver's ASGI app in process."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time

import pytest

import hostile_peers as hp
from federation_helpers import (
    A_SERVICE,
    SAMPLE,
    build_site,
    get,
    start_archive,
    start_resolver,
    write_keys,
)

pytestmark = pytest.mark.slow

A_URL = (
    "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/"
    "CCSDS%20650.0-B-1.pdf"
)
HELD = "/8JMKD3MGP8W/35MMLL8"  # the Original of §8.1, at the honest Archive
DELETED = "/sid.inpe.br/mtc-m19/2011/05.10.18.31"  # deleted at the honest Archive
LATER = "/8JMKD3MGP8W/35MME4E"  # held by the honest Archive, first asked after its restart
NOBODY = "/8JMKD3MGP8W/3333333"  # an IBI no honest Archive holds
SERVICES = {
    "a": A_SERVICE,
    "evil": "evil.example.org/service/2020/01.01.00.00",
    "hung": "hung.example.org/service/2020/01.01.00.00",
    "drip": "drip.example.org/service/2020/01.01.00.00",
    "huge": "huge.example.org/service/2020/01.01.00.00",
    "garbage": "garbage.example.org/service/2020/01.01.00.00",
    "impostor": "impostor.example.org/service/2020/01.01.00.00",
    "offtopic": "offtopic.example.org/service/2020/01.01.00.00",
    "chain": "chain.example.org/service/2020/01.01.00.00",
    "loop": "loop.example.org/service/2020/01.01.00.00",
    "slow": "slow.example.org/service/2020/01.01.00.00",
    "mirror": "mirror.example.org/service/2020/01.01.00.00",
}
KEYS = {service: f"{number + 1:010d}" for number, service in enumerate(SERVICES.values())}
TIMEOUT = "1"


def key(name: str) -> str:
    return KEYS[SERVICES[name]]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    shutil.copytree(SAMPLE / "mtc-m16c", root / "tree")
    site = build_site(root / "tree", root / "site")
    keys = write_keys(root / "keys.yaml", KEYS)
    peers = {
        "evil": hp.Peer(SERVICES["evil"], hp.archive(hp.claims_everything)),
        "hung": hp.Peer(SERVICES["hung"], lambda peer, query: hp.hang()),
        "drip": hp.Peer(SERVICES["drip"], lambda peer, query: hp.drip(peer)),
        "huge": hp.Peer(SERVICES["huge"], lambda peer, query: hp.stream(peer)),
        "garbage": hp.Peer(SERVICES["garbage"], hp.archive(hp.garbage)),
        "impostor": hp.Peer(SERVICES["impostor"], hp.archive(hp.impersonator(A_SERVICE))),
        "offtopic": hp.Peer(SERVICES["offtopic"], hp.archive(hp.off_topic)),
        "chain": hp.Peer(SERVICES["chain"], hp.archive(hp.endless_chain("chain.example.org/c"))),
        "loop": hp.Peer(
            SERVICES["loop"],
            hp.archive(
                hp.loop_between(
                    "loop.example.org/l/2020/01.01.00.00", "loop.example.org/l/2020/01.01.00.01"
                )
            ),
        ),
        "slow": hp.Peer(
            SERVICES["slow"],
            hp.archive(hp.slowly(hp.endless_chain("slow.example.org/s"), 0.2)),
        ),
    }
    processes = []
    world = {"root": root, "site": site, "keys": keys, "peers": peers, "processes": processes}
    try:
        yield world
    finally:
        for process in processes:
            process.stop()
        for peer in peers.values():
            peer.close()


def resolver(world, *extra: str):
    process, port = start_resolver(world["keys"], "--timeout", TIMEOUT, *extra)
    world["processes"].append(process)
    return process, port


def honest(world, port: int, *extra: str):
    process, archive_port = start_archive(world["site"], port, key("a"), *extra)
    world["processes"].append(process)
    return process, archive_port


def location(port: int, target: str, **kwargs) -> tuple[int, str | None]:
    status, headers, _ = get(port, target, **kwargs)
    return status, headers.get("location")


def no_traceback(process) -> None:
    text = "\n".join(process.lines)
    assert "Traceback" not in text, text[-3000:]


# --- takeover


def test_a_holder_keeps_its_ibis_before_and_after_it_restarts(world):
    """An Archive that claims every IBI joins after the honest one.  It answers faster,
    yet the honest answers win; the honest Archive restarts (leaves, comes back at
    another port), the resolver restarts: the honest Archive keeps its IBIs all along."""
    state = world["root"] / "takeover.json"
    process, port = resolver(world, "--state", str(state), "--cache-seconds", "0")
    archive, _ = honest(world, port)
    assert "successful" in hp.join(port, world["peers"]["evil"], key("evil"))
    assert location(port, HELD) == (302, A_URL)
    assert location(port, DELETED)[0] == 410
    assert location(port, NOBODY)[1].startswith("http://evil.example.org/")  # only it claims

    archive.stop()  # SIGTERM: exclusionRequest; evil is now the only Archive included
    for target in (HELD, DELETED):
        status, headers, body = get(port, target)
        assert (status, headers.get("location")) == (404, None)
        assert b"is not included now" in body
    assert location(port, LATER)[1].startswith("http://evil.example.org/")  # not remembered

    archive, _ = honest(world, port)  # back, at another port, joining after evil
    _, _, about = get(port, "/")
    assert f"Archives included: {A_SERVICE}, {SERVICES['evil']}" in about.decode()
    assert location(port, HELD) == (302, A_URL)
    assert location(port, DELETED)[0] == 410
    assert location(port, LATER)[1].startswith("http://mtc-m16c.sid.inpe.br/")

    process.stop()
    no_traceback(process)
    reported = [line for line in process.lines if "also claimed by" in line]
    assert any(SERVICES["evil"] in line for line in reported), process.lines
    again, port = resolver(
        world, "--state", str(state), "--cache-seconds", "0", "--port", str(port)
    )
    assert location(port, HELD) == (302, A_URL)
    assert location(port, LATER)[1].startswith("http://mtc-m16c.sid.inpe.br/")
    no_traceback(again)


def test_an_ibi_claimed_while_its_archive_was_down_goes_back_to_it(world):
    """The honest Archive is killed (no exclusionRequest: a crash, or an attacker who
    made it fail) and rests; an IBI of it never asked before gets the claimer's answer,
    but only provisionally: once the honest Archive is back, it is its own again."""
    import signal

    _, port = resolver(world, "--cache-seconds", "0")
    archive, _ = honest(world, port)
    assert "successful" in hp.join(port, world["peers"]["evil"], key("evil"))
    assert location(port, HELD) == (302, A_URL)
    archive.stop(signal.SIGKILL)
    for _ in range(3):  # refused connections: it rests
        assert location(port, HELD) == (404, None)
    assert location(port, LATER)[1].startswith("http://evil.example.org/")
    honest(world, port)  # back (joining from another port)
    assert location(port, LATER)[1].startswith("http://mtc-m16c.sid.inpe.br/")
    assert location(port, LATER)[1].startswith("http://mtc-m16c.sid.inpe.br/")
    assert location(port, HELD) == (302, A_URL)


# --- peers that hang, drip, flood, lie or babble


def _rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status", encoding="ascii"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _hammer(port: int, targets: list[str], stop: threading.Event, statuses: list) -> None:
    """An attacker: asks `targets` in turn until `stop`, recording each status."""
    number = 0
    while not stop.is_set() and number < 5000:  # bounded in count and in time
        try:
            statuses.append(get(port, targets[number % len(targets)], timeout=10)[0])
        except OSError as error:
            statuses.append(repr(error))
        number += 1


def _latencies(port: int, count: int) -> list[float]:
    """Seconds each of `count` resolutions of the honest Archive's IBIs took."""
    spent = []
    for number in range(count):
        target = (HELD, LATER + "+(pt)", DELETED)[number % 3]
        started = time.perf_counter()
        status, _ = location(port, target)
        spent.append(time.perf_counter() - started)
        assert status in (302, 410), (target, status)
    return spent


@pytest.fixture(scope="module")
def attacked(world):
    """A resolver (no cache) joined by the honest Archive first, then a hung, a dripping,
    a flooding, a babbling, an impersonating and an off-topic one."""
    process, port = resolver(world, "--cache-seconds", "0")
    honest(world, port)
    for name in ("hung", "drip", "huge", "garbage", "impostor", "offtopic"):
        assert "status.archive included" in hp.join(port, world["peers"][name], key(name))
    return process, port


def test_hostile_peers_cost_their_own_answer_only(world, attacked):
    process, port = attacked
    peers = world["peers"]
    rss_before = _rss_kib(process.process.pid)
    unheld = [NOBODY, NOBODY + "!", "/8JMKD3MGP8W/3333334!:(oai_dc)", "/LK47B6W/362SFKH+"]
    stop, statuses = threading.Event(), []
    attackers = [threading.Thread(target=_hammer, args=(port, unheld, stop, statuses))]
    attackers.append(threading.Thread(target=_hammer, args=(port, unheld[::-1], stop, statuses)))
    for thread in attackers:
        thread.start()
    try:
        time.sleep(0.5)
        spent = sorted(_latencies(port, 300))
    finally:
        stop.set()
        for thread in attackers:
            thread.join(30)
    p99 = spent[int(len(spent) * 0.99) - 1]
    assert p99 < 0.1, f"p99 {p99 * 1000:.1f} ms, p50 {spent[len(spent) // 2] * 1000:.1f} ms"
    assert statuses and set(statuses) <= {404}, set(statuses)  # never a 500, never theirs
    assert peers["huge"].urlrequests() and peers["drip"].urlrequests()
    assert peers["huge"].sent < 256 * 1024 * 1024  # of the gigabyte asked each time
    assert _rss_kib(process.process.pid) - rss_before < 64 * 1024
    no_traceback(process)


def test_a_hung_archive_rests_and_delays_no_one(world, attacked):
    """Once the hung and dripping Archives failed a few times they are left alone: a
    question every Archive must answer (an IBI no one holds) no longer waits for them."""
    _, port = attacked
    hung = world["peers"]["hung"]
    for _ in range(4):
        location(port, NOBODY)
    asked = len(hung.asked)
    started = time.perf_counter()
    for _ in range(20):
        assert location(port, NOBODY)[0] == 404
    assert time.perf_counter() - started < 2.0
    assert len(hung.asked) <= asked + 1  # at most one probe


def test_impostors_and_garbage_are_never_followed(world, attacked):
    _, port = attacked
    for target in (NOBODY, NOBODY + "!", NOBODY + "!:(oai_dc)", "/8JMKD3MGP8W/3333335:"):
        for _ in range(len(hp.GARBAGE) + 2):  # each kind of garbage in turn
            status, headers, body = get(port, target)
            assert (status, headers.get("location")) == (404, None), body
    assert location(port, HELD) == (302, A_URL)  # the impostor claims it in A's name: ignored
    assert world["peers"]["impostor"].urlrequests()


def test_clientinformation_keeps_the_proxies_after_the_client(world, attacked):
    """Table 6.10 and §8.1: the client first, then its proxies, each an IP address; a
    forwarded list that is not one is not passed on."""
    _, port = attacked
    garbage = world["peers"]["garbage"]
    cases = [
        ("172.16.44.200, 150.163.68.1", "172.16.44.200 150.163.68.1"),  # §8.1
        ("10.1.2.3", "10.1.2.3"),
        ("<script>, 1.2.3.4", "1.2.3.4"),  # what the server vouches for, alone
        (", ".join(f"10.0.0.{n}" for n in range(20)), "10.0.0.19"),  # too many to be real
        ("1.2.3.4, <script>", "0.0.0.0"),  # the trusted proxy named no address
    ]
    for forwarded, expected in cases:
        before = len(garbage.urlrequests())
        get(port, NOBODY, {"X-Forwarded-For": forwarded})
        sent = garbage.urlrequests()[before]["clientinformation.ipaddress"]
        assert sent == expected, (forwarded, sent)


# --- chains and loops


def test_chains_loops_and_slow_chains_are_bounded(world):
    process, port = resolver(world, "--cache-seconds", "0", "--deadline", "1.5")
    honest(world, port)
    for name in ("chain", "loop", "slow"):
        assert "successful" in hp.join(port, world["peers"][name], key(name))
    chain = world["peers"]["chain"]
    started = time.perf_counter()
    status, headers, body = get(port, "/chain.example.org/c/2020/01.01.00.00!")
    assert (status, headers.get("location")) == (404, None)
    assert b"follows more IBIs than a resolution may (15)" in body
    assert time.perf_counter() - started < 1.5
    assert len(chain.urlrequests()) == 16  # one per round, never the 64 rounds of before

    status, _, body = get(port, "/loop.example.org/l/2020/01.01.00.00!")
    assert status == 409 and b"loop" in body

    started = time.perf_counter()
    status, _, body = get(port, "/slow.example.org/s/2020/01.01.00.00!")
    elapsed = time.perf_counter() - started
    assert status == 404 and b"longer than a resolution may (1.5 s)" in body
    assert elapsed < 2.5, elapsed  # the deadline, not 16 rounds of 0.2 s
    assert location(port, HELD) == (302, A_URL)
    no_traceback(process)


def test_an_archive_registered_at_the_resolvers_own_address_is_no_loop(world):
    """Each request the resolver sends names it (Via): one that comes back is refused at
    once, so an Archive registered at the resolver's own address costs one answer."""
    process, port = resolver(world, "--cache-seconds", "0")
    honest(world, port)
    hp.join_as(port, f"127.0.0.1:{port}", SERVICES["mirror"], key("mirror"))
    started = time.perf_counter()
    assert location(port, NOBODY)[0] == 404
    assert location(port, HELD) == (302, A_URL)
    assert time.perf_counter() - started < 1.0
    assert any("HTTP 508" in line for line in process.lines), process.lines[-5:]
    no_traceback(process)


# --- access statistics


def _ack_pairs(key_text: str, state: bool = True) -> list:
    pairs = [
        ("servicesubject", "acknowledgment"),
        ("clientinformation.ipaddress", "150.163.2.175"),
        ("contenttype", "Data"),
        ("ibi", ("rep", "sid.inpe.br/mtc-m18@80/2009/07.21.14.43")),
        ("state", "Original"),
        ("url", A_URL),
        ("url.persistent", "http://urlib.net:80/8JMKD3MGP8W/35MMLL8"),
        ("urlkey", key_text),
    ]
    return [pair for pair in pairs if state or pair[0] != "state"]


def _urlkey(archive_port: int, source: str) -> str:
    from ibistatic.federation.wire import request_url

    asked = [
        ("servicesubject", "urlRequest"),
        ("clientinformation.ipaddress", "150.163.2.175"),
        ("parsedibiurl.ibi", "8JMKD3MGP8W/35MMLL8"),
    ]
    _, _, body = get(archive_port, request_url("/" + A_SERVICE, asked), source=source)
    return re.search(r"^urlkey (\S+)", body.decode("ascii"), re.M).group(1)


def _records(path, count: int, timeout: float = 10.0) -> list[dict]:
    """The records of `path` once it holds `count`, and once no more has come for three
    of the resolver's batch intervals: a late extra one is seen."""
    from ibistatic.federation.network import ResolverLimits

    deadline = time.monotonic() + timeout
    lines, since = [], time.monotonic()
    while time.monotonic() < deadline:
        now = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if len(now) != len(lines):
            lines, since = now, time.monotonic()
        if len(lines) >= count and time.monotonic() - since > 3 * ResolverLimits.ack_interval:
            break
        time.sleep(0.05)
    return [json.loads(line) for line in lines]


def _post(port: int, target: str, body: bytes, source: str) -> tuple[int, bytes]:
    """(status, body) of a POST of `body` from the loopback address `source`."""
    import http.client

    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=10, source_address=(source, 0)
    )
    try:
        connection.request("POST", target, body, {"Content-Type": "text/plain"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def counting(world):
    """A resolver with its answer cache on (3 s) and the honest Archive, logging what it
    counts."""
    log = world["root"] / "acks.jsonl"
    _, port = resolver(world)
    _, archive_port = honest(world, port, "--ack-log", str(log))
    return port, archive_port, log


def test_every_redirect_is_counted_once_cached_ones_too(world, counting):
    """Twelve resolutions in a second, eleven of them from the cache, are twelve
    acknowledgments, from the resolver, sent in batches: each counted once."""
    port, _, log = counting
    before = len(_records(log, 0))
    for _ in range(12):
        assert location(port, HELD) == (302, A_URL)
    records = _records(log, before + 12)[before:]
    assert len(records) == 12
    assert {(r["resolver"], r["clientinformation.ipaddress"]) for r in records} == {
        ("127.0.0.1", "127.0.0.1")
    }
    assert {r["url"] for r in records} == {A_URL}


def _redirects(port: int, clients: int, each: int) -> int:
    """`clients` threads, each asking HELD `each` times on one kept-alive connection; the
    redirects they got."""
    import http.client

    got = []

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            for _ in range(each):
                connection.request("GET", HELD)
                response = connection.getresponse()
                response.read()
                got.append(response.status == 302 and response.getheader("location") == A_URL)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(got)


def test_redirects_at_load_are_each_counted_once(world, counting):
    """Eight clients at once, 2,000 redirects from the cache and 400 uncached (a second
    resolver that caches nothing, its own Archive): many batches, each filled as fast
    as the clients ask, and the Archives count exactly one acknowledgment a redirect."""
    port, _, log = counting
    before = len(_records(log, 0))
    assert _redirects(port, 8, 250) == 2000
    assert len(_records(log, before + 2000)) - before == 2000

    uncached_log = world["root"] / "acks-uncached.jsonl"
    _, uncached = resolver(world, "--cache-seconds", "0")
    honest(world, uncached, "--ack-log", str(uncached_log))
    assert _redirects(uncached, 8, 50) == 400
    records = _records(uncached_log, 400)
    assert len(records) == 400
    assert {(r["resolver"], r["url"]) for r in records} == {("127.0.0.1", A_URL)}


def test_forged_and_replayed_acknowledgments_count_nothing(world, counting):
    """One by one or in a batch: a forged key, the attacker's own key, the resolver's key
    replayed from elsewhere, a key issued to another address.  A batch from an address
    that is not the resolver is refused whole; from the resolver, line by line."""
    from ibistatic.core.pairlists import encode_query
    from ibistatic.federation.wire import ACK_BATCH_BYTES, request_url

    _, archive_port, log = counting
    before = len(_records(log, 0))
    service = "/" + A_SERVICE
    own = _urlkey(archive_port, "127.0.0.2")  # anyone may ask the public service
    resolvers = _urlkey(archive_port, "127.0.0.1")  # stands for a key the resolver got
    forged = "1426387214-9164566186556927"
    attempts = [(forged, "127.0.0.2"), (own, "127.0.0.2"), (resolvers, "127.0.0.2")]
    attempts.append((own, "127.0.0.1"))
    for key_text, source in attempts:
        status, _, body = get(
            archive_port, request_url(service, _ack_pairs(key_text)), source=source
        )
        assert status == 400, body
    lines = [encode_query(_ack_pairs(key_text)) for key_text in (forged, own, resolvers)]
    batch = "\n".join(lines).encode("ascii")
    target = service + "?servicesubject=acknowledgment"
    status, body = _post(archive_port, target, batch, "127.0.0.2")  # replayed elsewhere
    assert status == 400 and b"not 127.0.0.2" in body, body
    status, body = _post(archive_port, target, batch, "127.0.0.1")  # the resolver's address
    assert (status, body) == (200, b"acknowledgment.counted 1\r\nacknowledgment.refused 2")
    records = _records(log, before + 1)[before:]
    assert len(records) == 1 and records[0]["resolver"] == "127.0.0.1"
    huge = b"x" * (ACK_BATCH_BYTES + 1)  # read no further than the bound
    assert _post(archive_port, target, huge, "127.0.0.1")[0] == 413
    assert _post(archive_port, "/" + A_SERVICE, batch, "127.0.0.1")[0] == 405  # no subject
    assert len(_records(log, before + 1)[before:]) == 1


def test_an_acknowledgment_as_example_6_9_prints_it_is_counted(world, counting):
    """URLib's acknowledgment (Example 6.9): a GET with the pairs in its order and no
    `state`, which Table 6.11 marks required: counted, its record's `state` empty."""
    from ibistatic.federation.wire import request_url

    _, archive_port, log = counting
    before = len(_records(log, 0))
    key_text = _urlkey(archive_port, "127.0.0.1")
    urlib = request_url("/" + A_SERVICE, _ack_pairs(key_text, state=False))
    assert "&state=" not in urlib and "&url=" in urlib
    status, _, body = get(archive_port, urlib)
    assert (status, body) == (200, b"notice {acknowledgment received}")
    records = _records(log, before + 1)[before:]
    assert len(records) == 1 and records[0]["state"] == ""
    assert records[0]["ibi"] == "rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43"


# --- memory


class _Posts:
    """The HTTP side of an Archive that takes every batch of acknowledgments: counts
    the lines it is sent."""

    def __init__(self) -> None:
        self.lines = 0
        self.requests = 0

    async def post(self, url: str, body: bytes):
        self.requests += 1
        self.lines += body.count(b"\n") + 1
        return 200, "acknowledgment.counted 1\r\nacknowledgment.refused 0"


def _claimer():
    """An Archive in process that claims every IBI asked (as the hostile one does); its
    acknowledgments go through the resolver's own queue and batches, to :class:`_Posts`."""
    from ibistatic.core.properties import PropertyList, RelationAnswer
    from ibistatic.core.relations import parse_relation
    from ibistatic.federation.network import RemoteArchive, ResolverLimits

    class Claimer(RemoteArchive):
        async def ask(self, pairs, steps):
            ibi = dict(pairs)["parsedibiurl.ibi"]
            url = f"http://evil.example.org/{ibi}"
            known = RelationAnswer(("rep", ibi), url, "Original", "2020-01-01T00:00:00Z", "Data")
            relations = {(): known, parse_relation(".translation(pt)"): known}
            return PropertyList(
                "evil.example.org", ("rep", SERVICES["evil"]), (), relations, urlkey="1234567890-1"
            )

    service = SERVICES["evil"]
    base = "http://evil.example.org/" + service
    return Claimer(service, base, _Posts(), ResolverLimits(), service)


OWN = "/x.example.org/held/2020/01.01.00.00"


def _scope(number: int) -> dict:
    """The `number`th of three kinds of distinct request: a new IBI (resolved: a holder to
    remember), a translation chosen by a new Accept-Language (resolved: the cache's key
    holds the languages), one in eight each, and, the others, an IBI held already asked
    with a new Accept-Language header it does not depend on (the attack of issue 37: one
    cache entry for them all).  Each is a redirect, each acknowledged."""
    kind, second = number % 8, number // 8
    query = b""
    language = f"pt-BR,en;q=0.{number % 9 + 1},de-x{number}"
    if kind == 0:
        day, hour, minute = second // 86400 % 28 + 1, second // 3600 % 24, second // 60 % 60
        path = f"/x.example.org/a/2020/01.{day:02d}.{hour:02d}.{minute:02d}.{second % 60:02d}"
    elif kind == 1:
        path, query = OWN + "+", f"n={number}".encode()
    else:
        path = OWN
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "headers": [(b"accept-language", language.encode()), (b"host", b"r.example.org")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }


def test_memory_stays_flat_over_100000_distinct_requests():
    """The resolver's ASGI app in process, 100,000 distinct requests: the answer cache
    stays within its bytes, what the resolver learns goes to disk, and the heap
    (allocated blocks; tracemalloc over the last requests) does not grow with them."""
    import asyncio
    import logging
    import sys
    import tracemalloc

    from ibistatic.federation.network import ResolverLimits
    from ibistatic.federation.registry import Registry
    from ibistatic.federation.resolver_app import ResolverApp

    logging.getLogger("ibistatic.resolver").setLevel(logging.ERROR)  # claims, by design
    limits = ResolverLimits(cache_bytes=1 << 20)
    app = ResolverApp(Registry({}), limits=limits, cache_seconds=3600)
    claimer = _claimer()
    app._remotes = lambda: [claimer]
    statuses: dict[int, int] = {}

    async def run(first: int, last: int) -> None:
        for number in range(first, last):
            status = (await app.answer(_scope(number)))[0]
            statuses[status] = statuses.get(status, 0) + 1
            await asyncio.sleep(0)  # as a server's loop does between requests
        await claimer.close()  # sends what is queued (each run has its own loop)

    started = time.perf_counter()
    asyncio.run(run(0, 20_000))
    blocks = sys.getallocatedblocks()
    asyncio.run(run(20_000, 98_000))
    tracemalloc.start()
    asyncio.run(run(98_000, 100_000))
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    grown = sys.getallocatedblocks() - blocks
    spent = time.perf_counter() - started
    assert statuses == {302: 100_000}, statuses
    assert app.cache.bytes <= limits.cache_bytes
    assert grown < 20_000, grown  # blocks: 80,000 requests later
    assert traced < 2 * limits.cache_bytes, traced  # the last 2,000: the cache's turnover
    # every redirect acknowledged, cached or not, in batches, none dropped
    assert (claimer.client.lines, claimer.acks.dropped) == (100_000, 0)
    assert claimer.client.requests < 100_000 / 16
    assert len(app.holders) == 12_500 + 1  # the new IBIs and the held one, on disk
    assert len(app.cache) < 10_000  # the byte bound, not the number of requests
    print(
        f"100,000 requests in {spent:.1f} s; blocks +{grown}; traced {traced} B; "
        f"acknowledgments in {claimer.client.requests} requests"
    )
