"""The pure parts of the live resolution system: messages (§5, Tables 6.6, 6.9, 6.11),
urlkeys and the ack log, the keys file and the registry, the selection over answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ibistatic.core.pairlists import decode_query, parse_pairs, wire_text
from ibistatic.core.properties import property_pairs
from ibistatic.core.urls import parse_persistent_url, parsed_pairs
from ibistatic.errors import ConfigError, UsageError
from ibistatic.federation.acks import AckLog, ResolverKeys, UrlKeys, ack_record, summarise
from ibistatic.federation.joining import check_resolver_url, outcome_message
from ibistatic.federation.network import SourceInfo
from ibistatic.federation.registry import Registry, load_keys
from ibistatic.federation.rounds import resolve_over
from ibistatic.federation.wire import (
    REGISTRATION_KEY,
    Registration,
    acknowledgment_pairs,
    check_registration_key,
    confirmation_pairs,
    excluded,
    included,
    parse_registration,
    property_list_of,
    refused,
    registration_pairs,
    request_url,
    url_request_pairs,
)

GOLDEN = Path(__file__).parent / "golden" / "service"
RESOLVER = "http://www.urlib.net/J8LNKB5R7W/3FUQHC5"
M21 = Registration(
    address="mtc-m21.sid.inpe.br",
    service_ibi="sid.inpe.br/mtc-m21/2012/06.05.15.34.39",
    ip="150.163.34.239",
    platform_version="2014:11.09.02.16.15",
    email="banon@dpi.inpe.br",
    key="1234567890",
)
EXAMPLE_5_2 = (
    "http://www.urlib.net/J8LNKB5R7W/3FUQHC5?servicesubject=inclusionRequest"
    "&archiveaddress=mtc-m21.sid.inpe.br&archiveserviceibi=sid.inpe.br/mtc-m21/2012/06.05.15.34.39"
    "&archiveip=150.163.34.239&archiveprotocol=HTTP&archiveplatformversion=2014:11.09.02.16.15"
    "&archiveadmemailaddress=banon@dpi.inpe.br&registrationkey=1234567890"
)


def test_inclusion_request_is_example_5_2():
    assert request_url(RESOLVER, registration_pairs(M21, "inclusionRequest")) == EXAMPLE_5_2


def test_exclusion_request_is_example_5_3():
    url = request_url(RESOLVER, registration_pairs(M21, "exclusionRequest"))
    assert url == EXAMPLE_5_2.replace("inclusionRequest", "exclusionRequest")


def test_confirmation_request_is_example_5_4():
    assert request_url(M21.service_base(), confirmation_pairs()) == (
        "http://mtc-m21.sid.inpe.br/sid.inpe.br/mtc-m21/2012/06.05.15.34.39"
        "?servicesubject=inclusionConfirmationRequest"
    )


def test_registration_round_trips_through_the_query():
    query = dict(decode_query(EXAMPLE_5_2.split("?", 1)[1]))
    assert parse_registration(query) == M21


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("registrationkey", None, "registrationkey is missing: expected 10*DIGIT ['-' 10*DIGIT]"),
        ("registrationkey", "123", "registrationkey '123': expected 10*DIGIT ['-' 10*DIGIT]"),
        ("archiveprotocol", "USP", "archiveprotocol 'USP': expected HTTP"),
        ("archiveip", "host", "archiveip 'host': expected an IPv4 or IPv6 address"),
        ("archiveserviceibi", "x/y", "archiveserviceibi 'x/y': expected a repository name or IBIp"),
        (
            "archiveaddress",
            "a b:80",
            "archiveaddress 'a b:80': expected a host name or IP address and an optional :port",
        ),
    ],
)
def test_a_malformed_registration_names_the_pair(name, value, message):
    query = dict(decode_query(EXAMPLE_5_2.split("?", 1)[1]))
    if value is None:
        del query[name]
    else:
        query[name] = value
    with pytest.raises(UsageError) as caught:
        parse_registration(query)
    assert str(caught.value) == message


def test_registration_key_grammar_of_table_5_1():
    for good in ("1234567890", "1234567890-1234567890", "123456789012345"):
        assert check_registration_key(good, "x") == good
    for bad in ("123456789", "1234567890-", "1234567890-123", "abcdefghij", " 1234567890"):
        with pytest.raises(UsageError, match="expected 10 or more digits"):
            check_registration_key(bad, "--registration-key")


def test_url_request_passes_on_only_what_table_6_6_allows():
    """Example 6.8: the resolver captured five pairs; the Archives get three of them."""
    url = parse_persistent_url(
        "http://urlib.net/LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original"
        "&ibiurl.verblist=GetMetadata"
    )
    captured = parsed_pairs(url, "150.163.2.175", "pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3")
    names = [name for name, _ in captured]
    assert "parsedibiurl.requireditemstatus" in names
    assert "clientinformation.languagepreference" in names
    assert url_request_pairs(captured) == [
        ("servicesubject", "urlRequest"),
        ("clientinformation.ipaddress", "150.163.2.175"),
        ("parsedibiurl.ibi", "LK47B6W/362SFKH"),
        ("parsedibiurl.verblist", ("GetTranslation", "GetMetadata")),
    ]


def test_url_request_of_example_4_1():
    url = parse_persistent_url("http://urlib.net/8JMKD3MGP7W/3EPGUE5")
    pairs = url_request_pairs(parsed_pairs(url, "150.163.2.175"))
    base = "http://mtc-m16d.sid.inpe.br/sid.inpe.br/mtc-m19@80/2009/08.21.17.02"
    assert request_url(base, pairs) == (
        base + "?servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175"
        "&parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5"
    )


def test_acknowledgment_of_example_6_9():
    pairs = acknowledgment_pairs(
        "150.163.2.175",
        "Data",
        ("rep", "sid.inpe.br/mtc-m19/2013/09.04.12.27.57", "ibip", "8JMKD3MGP7W/3EPGUE5"),
        "Original",
        "http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Final.pdf",
        "http://mtc-m16d.sid.inpe.br:80/8JMKD3MGP7W/3EPGUE5",
        "1424636122-5331490054869684",
    )
    base = "http://mtc-m16d.sid.inpe.br/sid.inpe.br/mtc-m19@80/2009/08.21.17.02"
    assert request_url(base, pairs) == (
        base + "?servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175"
        "&contenttype=Data&ibi=rep%20sid.inpe.br/mtc-m19/2013/09.04.12.27.57%20ibip%20"
        "8JMKD3MGP7W/3EPGUE5&state=Original"
        "&url=http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Final.pdf"
        "&url.persistent=http://mtc-m16d.sid.inpe.br:80/8JMKD3MGP7W/3EPGUE5"
        "&urlkey=1424636122-5331490054869684"
    )


def test_an_acknowledged_url_with_escapes_round_trips():
    """Table 4.1: the '%' of a URL's own escapes is written %25, so the Archive reads
    back the URL it gave, byte for byte."""
    url = "http://a.example/col/x/doc/Relat%C3%B3rio%20Final.pdf?a=1&b=2"
    pairs = acknowledgment_pairs("1.2.3.4", "Data", None, "Copy", url, "http://r/X/Y", "1" * 10)
    query = dict(decode_query(request_url("http://a/b", pairs).split("?", 1)[1]))
    assert query["url"] == url
    assert "ibi" not in query


def test_status_answers_on_the_wire():
    assert wire_text(included(True)) == (
        "status.archive included\r\nstatus.confirmation successful"
    )
    assert wire_text(included(False)) == (
        "status.archive included\r\nstatus.confirmation unsuccessful"
    )
    assert wire_text(excluded()) == "status.archive excluded"
    assert wire_text(refused("wrong registration key")) == (
        "status.archive refused\r\nnotice {wrong registration key}"
    )


@pytest.mark.parametrize("name", ["example_7_2.txt", "example_7_3.txt", "section_8_2_first.txt"])
def test_an_archive_answer_reads_back_as_its_property_list(name):
    text = (GOLDEN / name).read_text(encoding="utf-8").split("\n\n", 1)[1].rstrip("\n")
    pairs = parse_pairs(text)
    assert property_pairs(property_list_of(pairs)) == sorted(pairs, key=lambda p: p[0])


def test_the_empty_answer_is_no_property_list():
    assert property_list_of([]) is None


def test_a_pair_that_is_no_property_is_refused():
    with pytest.raises(UsageError) as caught:
        property_list_of([("archiveaddress", "a"), ("colour", "blue")])
    assert str(caught.value) == "pair 'colour': not a property of MONTARLISTADEURL"
    with pytest.raises(UsageError) as caught:
        property_list_of([("url.sideways", "http://x/")])
    assert str(caught.value) == "pair 'url.sideways': '.sideways' is not a relation (Table 7.5)"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("javascript:alert(1)", "the scheme javascript: (only http: and https: are published)"),
        ("//evil.example/x", "a protocol-relative URL ('//host': it leaves the site for any host)"),
        ("/col/x/doc/a.pdf", "no http: or https: scheme"),
        ("http://a.example/../etc/passwd", "a '.' or '..' segment"),
    ],
)
def test_an_archive_cannot_send_browsers_anywhere(url, problem):
    with pytest.raises(UsageError) as caught:
        property_list_of([("archiveaddress", "a"), ("url.lastedition", url)])
    assert (
        str(caught.value) == f"pair 'url.lastedition': {url!r} is no URL to redirect to ({problem})"
    )


# --- urlkeys and acknowledgments


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_urlkeys_follow_table_5_1_and_are_unguessable():
    keys = UrlKeys()
    issued = {keys() for _ in range(2000)}
    assert len(issued) == 2000
    assert all(REGISTRATION_KEY.fullmatch(key) for key in issued)
    assert all(len(key.split("-")[1]) == 26 for key in issued)


def test_a_urlkey_is_spent_once_and_only_if_issued():
    keys = UrlKeys()
    key = keys()
    assert not keys.spend("1426387214-9164566186556927")
    forged = key[:-1] + str((int(key[-1]) + 1) % 10)  # the right shape, a wrong HMAC
    assert not keys.spend(forged)
    assert not UrlKeys().spend(key)  # another Archive's secret
    assert keys.spend(key)
    assert not keys.spend(key)


def test_workers_sharing_the_secret_accept_each_others_keys():
    secret = b"s" * 32
    one, other = UrlKeys(secret=secret), UrlKeys(secret=secret)
    assert other.spend(one())


def test_a_urlkey_expires():
    clock = Clock()
    keys = UrlKeys(seconds=60, clock=clock)
    early, late = keys(), keys()
    clock.now += 59
    assert keys.spend(early)
    clock.now += 2
    assert not keys.spend(late)


def test_a_remembered_resolver_key_still_expires_and_binds_its_address():
    """ResolverKeys remembers the keys it accepted (each a cached answer's, coming back
    with each redirect): remembered, a key is still refused once expired and from any
    other address, and what it remembers is bounded."""
    clock = Clock()
    keys = ResolverKeys(seconds=60, clock=clock)
    key = keys.issue("10.0.0.1")
    assert keys.check(key, "10.0.0.1") and keys.check(key, "10.0.0.1")  # the second remembered
    assert not keys.check(key, "10.0.0.2")
    clock.now += 61
    assert not keys.check(key, "10.0.0.1")
    fresh = [keys.issue("10.0.0.1") for _ in range(ResolverKeys.KNOWN_MAX + 10)]
    assert all(keys.check(key, "10.0.0.1") for key in fresh)
    assert 0 < len(keys._known) <= ResolverKeys.KNOWN_MAX


def test_spent_urlkeys_are_forgotten_once_expired():
    clock = Clock()
    keys = UrlKeys(seconds=60, clock=clock)
    issued = [keys() for _ in range(300)]
    assert all(keys.spend(key) for key in issued)
    assert len(keys) == 300
    clock.now += 61
    keys.spent.prune(clock())
    assert len(keys) == 0
    assert not any(keys.spend(key) for key in issued)  # expired: refused all the same


def _spend_in_a_child(keys, key, results) -> None:
    results.put(keys.spend(key))


def test_a_replayed_urlkey_is_accepted_once_by_all_forked_workers_together():
    """serve --workers N: a replay may reach any worker; the spent keys are shared."""
    import multiprocessing

    fork = multiprocessing.get_context("fork")
    keys = UrlKeys()
    key = keys()
    results = fork.Queue()
    workers = [fork.Process(target=_spend_in_a_child, args=(keys, key, results)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert sorted(results.get(timeout=5) for _ in workers) == [False, False, False, True]
    assert not keys.spend(key)  # nor by the parent
    folder = Path(keys.spent.path).parent
    keys.spent._remove()
    assert not folder.exists()  # the store goes with the server


def test_an_acknowledgment_needs_the_pairs_of_table_6_11():
    query = {"clientinformation.ipaddress": "1.2.3.4", "contenttype": "Data", "state": "Copy"}
    with pytest.raises(UsageError) as caught:
        ack_record(query, "127.0.0.1", 0)
    assert str(caught.value) == "acknowledgment without url (Table 6.11 requires it)"


def _ack(ibi: str, when: float, kind: str = "Data") -> dict:
    query = {
        "clientinformation.ipaddress": "150.163.2.175",
        "contenttype": kind,
        "ibi": ibi,
        "state": "Original",
        "url": "http://a/col/x/doc/f.pdf",
        "url.persistent": "http://r/" + ibi,
        "urlkey": "1234567890-1234567890",
    }
    return ack_record(query, "127.0.0.1", when)


def test_the_ack_log_and_its_summary(tmp_path):
    log = AckLog(tmp_path / "acks.jsonl")
    log.add(_ack("rep a/b ibip X/Y", 86400))
    log.add(_ack("rep c/d", 86400 * 3, "Metadata"))
    log.add(_ack("rep a/b ibip X/Y", 86400 * 2, "Metadata"))
    log.close()
    assert log.counts == {"rep a/b ibip X/Y": 2, "rep c/d": 1}
    lines = (tmp_path / "acks.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["time"] == "1970-01-02T00:00:00Z"
    assert json.loads(lines[0])["clientinformation.ipaddress"] == "150.163.2.175"
    items, problems = summarise(lines + ["{oops", '{"ibi": "x"}', ""], "acks.jsonl")
    assert problems == [
        "acks.jsonl:4: not an acknowledgment record (not JSON)",
        "acks.jsonl:5: not an acknowledgment record (no key 'time')",
    ]
    assert [item.as_json() for item in items] == [
        {
            "ibi": "rep a/b ibip X/Y",
            "count": 2,
            "first": "1970-01-02T00:00:00Z",
            "last": "1970-01-03T00:00:00Z",
            "contenttype": {"Data": 1, "Metadata": 1},
        },
        {
            "ibi": "rep c/d",
            "count": 1,
            "first": "1970-01-04T00:00:00Z",
            "last": "1970-01-04T00:00:00Z",
            "contenttype": {"Metadata": 1},
        },
    ]


# --- the keys file and the registry


def _keys(tmp_path, text: str) -> Path:
    path = tmp_path / "keys.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_keys_file(tmp_path):
    path = _keys(
        tmp_path,
        "- archive-service-ibi: sid.inpe.br/mtc-m21/2012/06.05.15.34.39\n"
        "  registration-key: '1234567890'\n"
        "- archive-service-ibi: 8jmkd3mgp8w/35mme4e\n"
        "  registration-key: 1234567890-0987654321\n"
        "- {archive-service-ibi: a.example.org/x/2020/01.01.00.00, registration-key: 12345678901}\n",
    )
    assert load_keys(path) == {
        "sid.inpe.br/mtc-m21/2012/06.05.15.34.39": "1234567890",
        "8JMKD3MGP8W/35MME4E": "1234567890-0987654321",
        "a.example.org/x/2020/01.01.00.00": "12345678901",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: b\n", "expected a list of {archive-service-ibi, registration-key}"),
        (
            "- archive-service-ibi: a.example.org/x/2020/01.01.00.00\n",
            "entry 1: expected exactly the keys archive-service-ibi and registration-key",
        ),
        (
            "- {archive-service-ibi: a.example.org/x/2020/01.01.00.00, registration-key: '1'}\n",
            "entry 1: registration-key '1': expected 10 or more digits",
        ),
        (
            "- {archive-service-ibi: a.example.org/x/2020/01.01.00.00, registration-key: '1234567890'}\n"
            "- {archive-service-ibi: not-an-ibi, registration-key: '1234567890'}\n",
            "entry 2: archive-service-ibi 'not-an-ibi': expected a repository name or IBIp",
        ),
        (
            "- {archive-service-ibi: 8JMKD3MGP8W/35MME4E, registration-key: '1234567890'}\n"
            "- {archive-service-ibi: 8jmkd3mgp8w/35mme4e, registration-key: '1234567891'}\n",
            "entry 2: archive-service-ibi '8JMKD3MGP8W/35MME4E' is listed twice",
        ),
        ("- [unclosed\n", "keys.yaml: "),
    ],
)
def test_a_bad_keys_file_names_the_entry(tmp_path, text, message):
    path = _keys(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_keys(path)
    assert str(caught.value).startswith(f"--keys {path}: ") and message in str(caught.value)


def test_the_registry_checks_keys_and_keeps_inclusions(tmp_path):
    keys = {
        "sid.inpe.br/mtc-m21/2012/06.05.15.34.39": "1234567890",
        "8JMKD3MGP8W/35MME4E": "9999999999",
    }
    state = tmp_path / "state.json"
    registry = Registry(keys, state)
    assert registry.check(M21) is None
    wrong = Registration(**{**M21.__dict__, "key": "1234567891"})
    assert registry.check(wrong) == (
        "wrong registration key for archive service sid.inpe.br/mtc-m21/2012/06.05.15.34.39"
    )
    stranger = Registration(**{**M21.__dict__, "service_ibi": "a.example.org/x/2020/01.01.00.00"})
    assert registry.check(stranger) == (
        "archive service a.example.org/x/2020/01.01.00.00 is not registered at this resolver"
    )
    other = Registration(
        **{**M21.__dict__, "service_ibi": "8JMKD3MGP8W/35MME4E", "key": "9999999999"}
    )
    registry.include(M21)
    registry.include(other)
    moved = Registration(**{**M21.__dict__, "address": "10.0.0.9:8080"})
    registry.include(moved)  # back from another address: keeps its place
    again = Registry(keys, state)
    assert [(a.service_ibi, a.address) for a in again.archives()] == [
        ("sid.inpe.br/mtc-m21/2012/06.05.15.34.39", "10.0.0.9:8080"),
        ("8JMKD3MGP8W/35MME4E", "mtc-m21.sid.inpe.br"),
    ]
    again.exclude(moved)
    assert [a.service_ibi for a in Registry(keys, state).archives()] == ["8JMKD3MGP8W/35MME4E"]
    assert Registry({"8JMKD3MGP8W/35MME4E": "9999999999"}, state).archives()[0].base == (
        "http://mtc-m21.sid.inpe.br/8JMKD3MGP8W/35MME4E"
    )


def test_a_broken_state_file_is_named(tmp_path):
    state = tmp_path / "state.json"
    state.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"--state {state}: not a resolver state file"):
        Registry({}, state)


# --- the Archive's view of the resolver's answers


def test_outcome_messages():
    ok = "status.archive included\r\nstatus.confirmation successful"
    assert outcome_message("inclusionRequest", 200, ok) == (
        True,
        "included by the resolver (confirmation successful)",
    )
    unconfirmed = outcome_message("inclusionRequest", 200, ok.replace("successful", "unsuccessful"))
    assert unconfirmed[0] is False and "check --advertise" in unconfirmed[1]
    assert outcome_message("exclusionRequest", 200, "status.archive excluded") == (
        True,
        "excluded by the resolver",
    )
    assert outcome_message(
        "inclusionRequest", 403, "status.archive refused\r\nnotice {wrong registration key}"
    ) == (False, "the resolver refused (403): wrong registration key")
    assert outcome_message("exclusionRequest", None, "Connection refused") == (
        False,
        "resolver unreachable (Connection refused); this Archive keeps serving",
    )


def test_the_join_url_must_be_a_service_base():
    assert check_resolver_url("http://urlib.net/J8LNKB5R7W/3FUQHC5/") == (
        "http://urlib.net/J8LNKB5R7W/3FUQHC5"
    )
    for bad in ("urlib.net/J8LNKB5R7W/3FUQHC5", "http://urlib.net/", "https://x/y?z=1"):
        with pytest.raises(UsageError, match="expected the resolver service's base URL"):
            check_resolver_url(bad)


# --- selection over answers (§6.2, §8.2), with Archives that answer from text


class Scripted:
    """An Archive that answers each parsedibiurl.ibi with a fixed pair list."""

    def __init__(self, name: str, answers: dict[str, str]) -> None:
        self.info = SourceInfo(name, name)
        self.answers = {key.upper(): text for key, text in answers.items()}
        self.asked: list[dict] = []

    async def ask(self, pairs, steps):
        query = dict(pairs)
        self.asked.append(query)
        return property_list_of(
            parse_pairs(self.answers.get(query["parsedibiurl.ibi"].upper(), ""))
        )

    def acknowledge(self, thanks, client_ip, persistent_url) -> bool:  # it can be thanked
        return True


def _item(address: str, ibi: str, state: str, url: str = "", extra: str = "") -> str:
    text = f"archiveaddress {address}\nibi {{rep {ibi}}}\nibi.archiveservice {{rep a.b/s/2000/01.01.00.00}}\n"
    text += f"ibi.platformsoftware {{}}\nstate {state}\n"
    if url:
        text += (
            f"url {url}\ncontenttype Data\ntimestamp 2020-01-01T00:00:00Z\nurlkey 1234567890-1\n"
        )
    return text + extra


OLD = "x.org/a/2009/01.01.00.00"
NEW = "x.org/a/2012/01.01.00.00"


def _run(sources, url: str, languages=()):
    parsed = parse_persistent_url(url)
    return asyncio.run(resolve_over(sources, parsed, "10.0.0.1", "pt", list(languages)))


def test_first_non_empty_answer_in_inclusion_order():
    first = Scripted("first", {OLD: _item("first", OLD, "Copy", "http://first/doc")})
    second = Scripted("second", {OLD: _item("second", OLD, "Original", "http://second/doc")})
    answered = _run([first, second], "http://r/" + OLD)
    assert answered.resolution.url == "http://first/doc"
    assert answered.source is first and answered.answer.urlkey == "1234567890-1"
    assert _run(
        [first, second], f"http://r/{OLD}?ibiurl.requireditemstatus=Original"
    ).resolution.url == ("http://second/doc")


def test_the_requested_status_is_never_passed_on():
    first = Scripted("first", {OLD: _item("first", OLD, "Original", "http://first/doc")})
    _run([first], f"http://r/{OLD}+?ibiurl.requireditemstatus=Original")
    assert all("parsedibiurl.requireditemstatus" not in q for q in first.asked)
    assert all("clientinformation.languagepreference" not in q for q in first.asked)
    assert first.asked[0]["clientinformation.ipaddress"] == "10.0.0.1"


def test_two_claims_of_the_original_are_an_alert_only_when_it_is_asked():
    first = Scripted("first", {OLD: _item("first", OLD, "Original", "http://first/doc")})
    liar = Scripted("liar", {OLD: _item("liar", OLD, "Original", "http://liar/doc")})
    asked = _run([first, liar], f"http://r/{OLD}?ibiurl.requireditemstatus=Original")
    assert (asked.resolution.alert, asked.source) == ("conflict", None)
    assert _run([first, liar], "http://r/" + OLD).resolution.url == "http://first/doc"


def test_the_next_edition_is_followed_to_the_other_archive():
    old = _item("first", OLD, "Original", extra=f"ibi.nextedition {{rep {NEW}}}\n")
    first = Scripted("first", {OLD: old})
    second = Scripted(
        "second",
        {NEW: _item("second", NEW, "Original", extra="url.lastedition http://second/new\n")},
    )
    answered = _run([first, second], f"http://r/{OLD}!")
    assert answered.resolution.url == "http://second/new"
    assert answered.resolution.chain == (OLD, NEW)
    assert answered.source is second


def test_a_loop_of_next_editions_is_an_alert():
    first = Scripted(
        "first",
        {
            OLD: _item("first", OLD, "Original", extra=f"ibi.nextedition {{rep {NEW}}}\n"),
            NEW: _item("first", NEW, "Original", extra=f"ibi.nextedition {{rep {OLD}}}\n"),
        },
    )
    assert _run([first], f"http://r/{OLD}!").resolution.alert == "loop"


def test_deleted_and_unknown_are_not_acknowledged():
    gone = Scripted("gone", {OLD: _item("gone", OLD, "Deleted")})
    deleted = _run([gone], "http://r/" + OLD)
    assert (deleted.resolution.alert, deleted.source) == ("deleted", None)
    unknown = _run([gone], "http://r/" + NEW)
    assert (unknown.resolution.alert, unknown.source) == ("not-found", None)
