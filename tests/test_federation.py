"""The live resolution system on loopback: Archives built from separate trees, each
served by `ibistatic serve --join`, and one `ibistatic resolver`, as real processes.

Inclusion order is a, b, liar: the first non-empty answer of a plain request is a's.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from federation_helpers import (
    A_SERVICE,
    B_SERVICE,
    DOWN_SERVICE,
    HUNG_SERVICE,
    KEYS,
    LEAVER_ITEM,
    LEAVER_SERVICE,
    LIAR_SERVICE,
    SERVICE,
    SHARED,
    Process,
    build_site,
    environment,
    get,
    make_trees,
    start_archive,
    start_resolver,
    write_keys,
)
from ibistatic.federation.network import ResolverLimits
from ibistatic.federation.wire import Registration, registration_pairs, request_url

pytestmark = pytest.mark.slow

A_URL = "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf"
NEXT_OAI_DC = "http://mtc-m20.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc"
PT_URL = "http://mtc-m20.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf"
TIMEOUT = 1.0


class Network:
    def __init__(self, root) -> None:
        self.root = root
        trees = make_trees(root)
        self.sites = {name: build_site(tree, root / "sites" / name) for name, tree in trees.items()}
        self.keys = write_keys(root / "keys.yaml")
        self.state = root / "state.json"
        self.logs = {name: root / f"{name}.acks.jsonl" for name in trees}
        self.archives: dict[str, tuple[Process, int]] = {}
        self.start_resolver()
        for name in ("a", "b", "liar"):
            self.join(name)

    def start_resolver(self, port: int = 0) -> None:
        extra = ("--port", str(port)) if port else ()
        self.resolver, self.port = start_resolver(
            self.keys,
            "--state",
            str(self.state),
            "--timeout",
            str(TIMEOUT),
            "--cache-seconds",
            "0",
            *extra,
        )

    def join(self, name: str, key: str | None = None) -> Process:
        service = {"a": A_SERVICE, "b": B_SERVICE, "liar": LIAR_SERVICE, "leaver": LEAVER_SERVICE}
        process, port = start_archive(
            self.sites[name],
            self.port,
            key or KEYS[service[name]],
            "--ack-log",
            str(self.logs[name]),
        )
        self.archives[name] = (process, port)
        return process

    def get(self, target: str, **headers):
        return get(self.port, target, {k.replace("_", "-"): v for k, v in headers.items()})

    def close(self) -> None:
        for process, _ in self.archives.values():
            process.stop()
        self.resolver.stop()


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    network = Network(tmp_path_factory.mktemp("network"))
    try:
        yield network
    finally:
        network.close()


def _acks(path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _wait_for_acks(path, count: int, timeout: float = 5.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = _acks(path)
        if len(records) >= count:
            return records
        time.sleep(0.02)
    return _acks(path)


def _settled(path, timeout: float = 5.0) -> int:
    """How many acknowledgments `path` holds once none has come for three of the
    resolver's batch intervals: it sends them in batches, at most one interval after a
    redirect, so what earlier tests' redirects queued has arrived by then."""
    quiet = 3 * ResolverLimits.ack_interval
    deadline, count, since = time.monotonic() + timeout, len(_acks(path)), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.02)
        now = len(_acks(path))
        if now != count:
            count, since = now, time.monotonic()
    return count


def _registration(service: str, address: str, key: str) -> Registration:
    return Registration(address, service, "127.0.0.1", "ibistatic-test", "admin@example.org", key)


def _send(network, registration: Registration, subject: str):
    base = f"http://127.0.0.1:{network.port}/{SERVICE}"
    try:
        with urllib.request.urlopen(
            request_url(base, registration_pairs(registration, subject)), timeout=10
        ) as response:
            return response.status, response.read().decode("ascii")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("ascii")


# --- joining


def test_each_archive_joined_with_a_confirmation(network):
    for name in ("a", "b", "liar"):
        process, _ = network.archives[name]
        assert any(
            "included by the resolver (confirmation successful)" in line for line in process.lines
        ), process.lines
    status, _, body = network.get("/")
    assert status == 200
    assert f"Archives included: {A_SERVICE}, {B_SERVICE}, {LIAR_SERVICE}" in body.decode()


# --- resolution walkthroughs (§8.1, §8.2)


def test_section_8_1_over_http(network):
    status, headers, _ = network.get("/8JMKD3MGP8W/35MMLL8")
    assert (status, headers["location"]) == (302, A_URL)


def test_section_8_2_follows_the_next_edition_to_the_other_archive(network):
    status, headers, _ = network.get("/8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    assert (status, headers["location"]) == (303, NEXT_OAI_DC)


def test_a_translation_only_the_other_archive_holds(network):
    status, headers, _ = network.get("/8JMKD3MGP8W/35MME4E+", accept_language="pt-BR,pt;q=0.9")
    assert (status, headers["location"], headers["vary"]) == (302, PT_URL, "Accept-Language")
    status, headers, _ = network.get("/8JMKD3MGP8W/35MME4E+(pt)")
    assert (status, headers["location"]) == (302, PT_URL)


def test_the_original_at_the_second_archive_and_a_copy_at_the_first(network):
    copy = "http://mtc-m16c.sid.inpe.br/col/" + SHARED + "/doc/shared.pdf"
    original = "http://mtc-m20.sid.inpe.br/col/" + SHARED + "/doc/shared.pdf"
    assert network.get("/" + SHARED)[1]["location"] == copy
    status, headers, _ = network.get(f"/{SHARED}?ibiurl.requireditemstatus=Original")
    assert (status, headers["location"]) == (302, original)


def test_an_archive_claiming_an_original_it_does_not_hold(network):
    status, headers, body = network.get("/8JMKD3MGP8W/35MMLL8?ibiurl.requireditemstatus=Original")
    assert status == 409 and "location" not in headers
    assert b"conflict" in body
    # a plain request takes the first answer (a's), as §6.2 says
    assert network.get("/8JMKD3MGP8W/35MMLL8")[1]["location"] == A_URL


def test_unknown_and_deleted_items_are_alerts(network):
    assert network.get("/8JMKD3MGP8W/99999")[0] == 404
    assert network.get("/sid.inpe.br/mtc-m19/2011/05.10.18.31")[0] == 410


# --- acknowledgments


def test_the_acknowledgment_reaches_the_archive_that_gave_the_url(network):
    before = {name: _settled(network.logs[name]) for name in ("a", "b", "liar")}
    network.get("/8JMKD3MGP8W/35MMLL8!:(oai_dc)")  # b gave the URL
    network.get("/8JMKD3MGP8W/35MMLL8/", x_ignored="1")  # a gave the URL
    b_records = _wait_for_acks(network.logs["b"], before["b"] + 1)
    a_records = _wait_for_acks(network.logs["a"], before["a"] + 1)
    record = b_records[-1]
    assert record["url"] == NEXT_OAI_DC
    assert record["ibi"] == "rep sid.inpe.br/mtc-m18/2012/07.12.18.08.49"
    assert record["contenttype"] == "Metadata" and record["state"] == "Original"
    assert (
        record["url.persistent"] == f"http://127.0.0.1:{network.port}/8JMKD3MGP8W/35MMLL8!:(oai_dc)"
    )
    assert record["clientinformation.ipaddress"] == "127.0.0.1"
    assert a_records[-1]["url"] == A_URL
    assert len(_acks(network.logs["liar"])) == before["liar"]  # never thanked


def test_alerts_are_not_acknowledged(network):
    before = _settled(network.logs["a"])
    network.get("/8JMKD3MGP8W/35MMLL8")
    count = len(_wait_for_acks(network.logs["a"], before + 1))
    network.get("/sid.inpe.br/mtc-m19/2011/05.10.18.31")  # deleted at a
    network.get("/8JMKD3MGP8W/35MMLL8?ibiurl.requireditemstatus=Original")  # conflict
    time.sleep(0.5)
    assert len(_acks(network.logs["a"])) == count


def test_the_ack_summary_counts_per_item(network):
    before = _settled(network.logs["b"])
    for _ in range(3):
        network.get("/8JMKD3MGP8W/35MME4E+(pt)")
    records = _wait_for_acks(network.logs["b"], before + 3)
    assert len(records) == before + 3 == _settled(network.logs["b"])  # each once
    result = subprocess.run(
        [sys.executable, "-m", "ibistatic", "acks", str(network.logs["b"]), "--json"],
        capture_output=True,
        text=True,
        env=environment(),
    )
    assert result.returncode == 0, result.stderr
    summary = {item["ibi"]: item["count"] for item in json.loads(result.stdout)}
    expected = {}
    for record in records:
        expected[record["ibi"]] = expected.get(record["ibi"], 0) + 1
    assert summary == expected
    assert summary["rep sid.inpe.br/mtc-m18@80/2009/08.25.19.43"] >= 3


def test_an_archive_refuses_an_acknowledgment_it_did_not_issue(network):
    _, port = network.archives["a"]
    count = _settled(network.logs["a"])
    forged = [
        ("servicesubject", "acknowledgment"),
        ("clientinformation.ipaddress", "10.0.0.1"),
        ("contenttype", "Data"),
        ("state", "Original"),
        ("url", A_URL),
        ("url.persistent", "http://x/8JMKD3MGP8W/35MMLL8"),
        ("urlkey", "1426387214-9164566186556927"),
    ]
    status, _, body = get(port, request_url("/" + A_SERVICE, forged))
    assert status == 400
    assert body.decode() == (
        "bad service request: urlkey '1426387214-9164566186556927' was not issued by this "
        "Archive to 127.0.0.1, or has expired\r\n"
    )
    assert len(_acks(network.logs["a"])) == count


# --- keys, leaving, Archives down or hung


def test_a_wrong_registration_key_is_refused(network, tmp_path):
    process = Process(
        "serve",
        "--index",
        str(network.sites["leaver"]),
        "--port",
        "0",
        "--join",
        f"http://127.0.0.1:{network.port}/{SERVICE}",
        "--registration-key",
        "9999999999",
    )
    try:
        port = int(process.wait_for(r"http://127\.0\.0\.1:(\d+)/").group(1))
        line = process.wait_for(r"resolver refused").string
        assert line.endswith(
            f"the resolver refused (403): wrong registration key for archive service {LEAVER_SERVICE}"
        )
        assert get(port, "/" + LEAVER_ITEM)[0] == 302  # it keeps serving
        assert network.get("/" + LEAVER_ITEM)[0] == 404  # but is not asked
    finally:
        assert process.stop() == 0


def test_an_archive_that_leaves_is_excluded(network):
    process = network.join("leaver")
    assert network.get("/" + LEAVER_ITEM)[0] == 302
    assert process.stop() == 0
    assert any(line.endswith("excluded by the resolver") for line in process.lines), process.lines
    del network.archives["leaver"]
    assert network.get("/" + LEAVER_ITEM)[0] == 404
    state = json.loads(network.state.read_text(encoding="utf-8"))
    assert LEAVER_SERVICE not in [entry["service_ibi"] for entry in state["included"]]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_archive_that_is_down_costs_nothing(network):
    down = _registration(DOWN_SERVICE, f"127.0.0.1:{_free_port()}", KEYS[DOWN_SERVICE])
    status, text = _send(network, down, "inclusionRequest")
    assert (status, text) == (200, "status.archive included\r\nstatus.confirmation unsuccessful")
    try:
        started = time.monotonic()
        status, headers, _ = network.get("/8JMKD3MGP8W/35MMLL8")
        assert (status, headers["location"]) == (302, A_URL)
        assert time.monotonic() - started < TIMEOUT / 2  # refused at once, not waited for
    finally:
        assert _send(network, down, "exclusionRequest") == (200, "status.archive excluded")


class Hung:
    """Accepts connections and never answers."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port = self.socket.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        self.socket.close()
        for connection in self.held:
            connection.close()


def test_an_archive_that_never_answers_costs_at_most_the_timeout(network):
    hung = Hung()
    registration = _registration(HUNG_SERVICE, f"127.0.0.1:{hung.port}", KEYS[HUNG_SERVICE])
    try:
        started = time.monotonic()
        assert _send(network, registration, "inclusionRequest")[1].endswith("unsuccessful")
        assert TIMEOUT * 0.9 <= time.monotonic() - started < TIMEOUT + 1.5
        started = time.monotonic()
        status, headers, _ = network.get("/8JMKD3MGP8W/35MMLL8!:(oai_dc)")  # two rounds
        elapsed = time.monotonic() - started
        assert (status, headers["location"]) == (303, NEXT_OAI_DC)
        assert elapsed < 2 * TIMEOUT + 1.0, elapsed
        assert hung.held  # it was asked
    finally:
        _send(network, registration, "exclusionRequest")
        hung.close()


# --- the resolver restarted


def test_registrations_survive_a_resolver_restart(network):
    port = network.port
    assert network.resolver.stop() == 0
    network.start_resolver(port)
    status, _, body = network.get("/")
    assert f"Archives included: {A_SERVICE}, {B_SERVICE}, {LIAR_SERVICE}" in body.decode()
    status, headers, _ = network.get("/8JMKD3MGP8W/35MMLL8!:(oai_dc)")
    assert (status, headers["location"]) == (303, NEXT_OAI_DC)
