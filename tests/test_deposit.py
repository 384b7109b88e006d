"""``ibistatic deposit``: minting with the Archive's distributor, atomic repositories,
edition and translation links, concurrency (docs/cli/deposit.md)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from archive_factory import write_archive, write_item
from ibistatic.archive.crawl import read_repository
from ibistatic.archive.descriptors import read_item
from ibistatic.archive.load import load_archives
from ibistatic.cli import main
from ibistatic.core.ibip import DecodedIbip, decode_ibip
from ibistatic.core.identifiers import parse_repository_name
from ibistatic.core.minting import suffix_seconds
from ibistatic.deposit import DepositError, deposit, resolve_subsystem, state_path
from ibistatic.errors import UsageError

SITE = "https://ibi.example.org/"
SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
EN = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"  # an English report with an IBIp
EN_IBIP = "8JMKD3MGP8W/35MME4E"
PLAIN = "sid.inpe.br/mtc-m18@80/2010/01.05.10.00"  # no language
HOST = "mtc-m18.sid.inpe.br"
IP = "150.163.34.243"


# --- fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = write_archive(
        tmp_path_factory.mktemp("template") / "mtc-m16c", "mtc-m16c.sid.inpe.br", SERVICE
    )
    write_item(
        root,
        EN,
        {"report.pdf": "%PDF report"},
        state="Original",
        ibip=EN_IBIP,
        timestamp="2009-07-21T13:23:45Z",
        language="en",
        dublin_core={"title": "Report", "date": "2009-07-21"},
    )
    write_item(root, PLAIN, state="Original")
    return root


@pytest.fixture
def archive(template, tmp_path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "mtc-m16c"))


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    folder = tmp_path / "files"
    folder.mkdir()
    out = {}
    for name, text in {
        "a.txt": "first\n",
        "b.pdf": "%PDF second",
        "ação.txt": "não ASCII\n",
    }.items():
        out[name] = folder / name
        out[name].write_text(text, encoding="utf-8")
    return out


def _raw(path: Path) -> dict:
    return yaml.safe_load((path / "item.yaml").read_text(encoding="utf-8"))


def _item_file(archive: Path, repository: str) -> Path:
    return archive.joinpath(*repository.split("/"), "item.yaml")


def _assert_valid(archive: Path, done) -> None:
    """The new repository validates with read_item, and the whole Archive loads clean."""
    files = tuple(sorted(p.name for p in (done.path / "doc").iterdir()))
    item, problems = read_item(
        archive.name, done.repository, _raw(done.path), files, "2000-01-01T00:00:00Z"
    )
    assert problems == [] and item is not None
    loaded = load_archives([archive], SITE)
    assert loaded.problems == []


# --- the standard's vectors, through the Archive's distributor -------------------------

# Table 6.2 of the standard: consecutive requests to one subsystem (granularity 1).
TABLE_6_2 = [
    ("1287587646.394023", "sid.inpe.br/mtc-m18/2010/10.20.15.14.06", "2010-10-20T15:14:06Z"),
    ("1287588012.2930", "sid.inpe.br/mtc-m18/2010/10.20.15.20", "2010-10-20T15:20:00Z"),
    ("1287588115.186234", "sid.inpe.br/mtc-m18/2010/10.20.15.21", "2010-10-20T15:21:00Z"),
    ("1287588115.3462", "sid.inpe.br/mtc-m18/2010/10.20.15.21.55", "2010-10-20T15:21:55Z"),
]


def test_table_6_2_in_sequence(archive, files):
    for now, repository, timestamp in TABLE_6_2:
        done = deposit(archive, [files["a.txt"]], host=HOST, now=now)
        assert (done.repository, done.ibip, done.timestamp) == (repository, None, timestamp)
        assert done.path == archive.joinpath(*repository.split("/"))
    assert len(load_archives([archive], SITE).crawl.archives[0].items) == 3 + len(
        TABLE_6_2
    )  # 3: with the service item


# (host, ip, port, granularity, now) -> (repository, ibip)
BOTH_FORMS = [
    # Example 2 of the standard: one instant, both forms
    (
        (HOST, IP, None, None, "1234806360"),
        ("sid.inpe.br/mtc-m18/2009/02.16.17.46", "8JMKD3MGP8W/34PGRBS"),
    ),
    ((HOST, IP, None, "1", "1287587646"), ("sid.inpe.br/mtc-m18/2010/10.20.15.14.06", None)),
    (
        (HOST, IP, None, "0.001", "1287587646.394023"),
        ("sid.inpe.br/mtc-m18/2010/10.20.15.14.06.394", None),
    ),
    (
        (HOST, IP, 8080, "0.1", "1287587646.394023"),
        ("sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06.3", None),
    ),
]


@pytest.mark.parametrize("given, expected", BOTH_FORMS)
def test_both_forms_name_the_same_instant(archive, files, given, expected):
    host, ip, port, granularity, now = given
    done = deposit(
        archive, [files["a.txt"]], host=host, ip=ip, port=port, granularity=granularity, now=now
    )
    assert done.repository == expected[0]
    if expected[1] is not None:
        assert done.ibip == expected[1]
    decoded = decode_ibip(done.ibip)
    assert (decoded.ip, decoded.port) == (IP, 800 if port is None else port)
    suffix = parse_repository_name(done.repository).suffix
    assert decoded.seconds == suffix_seconds(suffix) == done.seconds
    assert _raw(done.path)["ibip"] == done.ibip
    _assert_valid(archive, done)


def test_two_deposits_in_one_second_get_a_fraction_in_both_forms(archive, files):
    first = deposit(
        archive, [files["a.txt"]], host=HOST, ip=IP, granularity="0.001", now="1287587646.5"
    )
    second = deposit(
        archive, [files["a.txt"]], host=HOST, ip=IP, granularity="0.001", now="1287587646.5"
    )
    assert first.repository == "sid.inpe.br/mtc-m18/2010/10.20.15.14.06.5"
    assert second.repository == "sid.inpe.br/mtc-m18/2010/10.20.15.14.06.501"
    assert decode_ibip(second.ibip).seconds == Fraction("1287587646.501") == second.seconds
    assert _raw(second.path)["timestamp"] == "2010-10-20T15:14:06.501Z"
    _assert_valid(archive, second)


# --- the repository made ---------------------------------------------------------------


def test_a_deposit_makes_a_complete_valid_repository(archive, files):
    done = deposit(
        archive,
        [files["a.txt"], files["b.pdf"], files["ação.txt"]],
        target="b.pdf",
        language="pt-BR",
        metadata={"title": "Relatório", "creator": ["Ana", "Bruno"], "date": 2010},
        host=HOST,
        ip=IP,
        now="1287587646",
    )
    text = (done.path / "item.yaml").read_text(encoding="utf-8")
    assert text == (
        "state: Original\n"
        "ibip: 8JMKD3MGP8W/38ERDLB\n"
        "timestamp: '2010-10-20T15:14:06Z'\n"
        "target: b.pdf\n"
        "language: pt-BR\n"
        "dublin-core:\n"
        "  title: Relatório\n"
        "  creator:\n"
        "  - Ana\n"
        "  - Bruno\n"
        "  date: '2010'\n"
    )
    assert sorted(p.name for p in (done.path / "doc").iterdir()) == ["a.txt", "ação.txt", "b.pdf"]
    assert (done.path / "doc" / "ação.txt").read_text(encoding="utf-8") == "não ASCII\n"
    assert list((archive / ".ibistatic" / "incoming").iterdir()) == []
    _assert_valid(archive, done)
    loaded = load_archives([archive], SITE)
    item = next(i for i in loaded.crawl.archives[0].items if i.key == done.repository)
    assert (item.target, item.language, item.ibip.text) == ("b.pdf", "pt-BR", done.ibip)


def test_the_state_file_is_kept_with_the_archive_and_hidden_from_the_crawler(archive, files):
    deposit(archive, [files["a.txt"]], host=HOST, now="1287587646")
    state = archive / ".ibistatic" / "distributor" / "sid.inpe.br_mtc-m18.json"
    assert json.loads(state.read_text())["last-date-for-suffix"] == "1287587646"
    subsystem = resolve_subsystem(archive, {}, host=HOST)
    assert state_path(archive, subsystem) == state
    assert load_archives([archive], SITE).problems == []


def test_the_subsystem_comes_from_archive_yaml(archive, files):
    raw = yaml.safe_load((archive / "archive.yaml").read_text())
    raw.update(
        {"deposit-host": HOST, "deposit-ip": IP, "deposit-port": 8080, "deposit-granularity": 0.01}
    )
    (archive / "archive.yaml").write_text(yaml.safe_dump(raw))
    done = deposit(archive, [files["a.txt"]], now="1287587646.394023")
    assert done.repository == "sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06.39"
    assert decode_ibip(done.ibip).port == 8080
    assert (archive / ".ibistatic/distributor/sid.inpe.br_mtc-m18.8080.json").is_file()
    _assert_valid(archive, done)
    # options win, key by key: another host and port, the archive's IP still recorded
    done = deposit(
        archive,
        [files["a.txt"]],
        host="mtc-m19.sid.inpe.br",
        port=80,
        granularity=1,
        now="1287590000",
    )
    assert (done.repository, done.ibip) == (
        "sid.inpe.br/mtc-m19/2010/10.20.15.53.20",
        "8JMKD3MGP8W4U/38ERGSG",
    )
    assert decode_ibip(done.ibip) == DecodedIbip(IP, 80, Fraction(1287590000))


def test_an_existing_path_is_never_touched(archive, files):
    taken = archive.joinpath(*"sid.inpe.br/mtc-m18/2010/10.20.15.14.06".split("/"))
    taken.mkdir(parents=True)
    with pytest.raises(DepositError) as error:
        deposit(archive, [files["a.txt"]], host=HOST, now="1287587646")
    assert str(error.value) == (
        f"{taken} already exists; it was left untouched and nothing was deposited "
        "(was it made by hand, or by another distributor for this subsystem?)"
    )
    assert list(taken.iterdir()) == []
    assert list((archive / ".ibistatic" / "incoming").iterdir()) == []


# --- bad input: exact messages, and the distributor's memory does not move ---------------


def _with_archive_keys(archive: Path, **keys) -> Path:
    raw = yaml.safe_load((archive / "archive.yaml").read_text())
    raw.update({k.replace("_", "-"): v for k, v in keys.items()})
    (archive / "archive.yaml").write_text(yaml.safe_dump(raw))
    return archive / "archive.yaml"


REFUSED = [
    # (archive.yaml keys, deposit keyword arguments, message with {yaml} and {archive})
    (
        {},
        {},
        "no subsystem to mint for: give --host NAME (and --ip ADDR for an IBIp too), or set "
        "deposit-host (and deposit-ip) in {yaml}",
    ),
    (
        {},
        {"ip": IP},
        "--ip 150.163.34.243 alone cannot name a uniform repository: give --host NAME too, or set "
        "deposit-host in {yaml} (the IBIp is then recorded as the item's ibip)",
    ),
    (
        {"deposit_ip": IP},
        {},
        "{yaml}: deposit-ip 150.163.34.243 alone cannot name a uniform repository: give --host "
        "NAME too, or set deposit-host in {yaml} (the IBIp is then recorded as the item's ibip)",
    ),
    (
        {"deposit_host": HOST, "deposit_granularity": 0.5},
        {},
        "{yaml}: deposit-granularity: found 0.5; expected 60, 1, 0.1, 0.01, ... seconds",
    ),
    (
        {"deposit_host": HOST, "deposit_port": "http"},
        {},
        "{yaml}: deposit-port: found 'http'; expected an integer port from 1 to 65535",
    ),
    (
        {"deposit_host": IP},
        {},
        "{yaml}: deposit-host: found '150.163.34.243'; expected a host name, not an IP address (an "
        "IP address goes to --ip / deposit-ip)",
    ),
    (
        {"deposit_host": HOST, "deposit_ip": "mtc-m18"},
        {},
        "{yaml}: deposit-ip: found 'mtc-m18'; expected an IPv4 or IPv6 address such as 150.163.34.243",
    ),
    ({}, {"host": HOST, "port": 0}, "--port: found 0; expected an integer port from 1 to 65535"),
    (
        {},
        {"host": HOST, "granularity": "2"},
        "--granularity: found '2'; expected 60, 1, 0.1, 0.01, ... seconds",
    ),
    (
        {"deposit_granularity": "bad"},
        {"host": HOST, "granularity": "0.1"},
        None,
    ),  # an overridden key is not read
    (
        {},
        {"host": "localhost"},
        "--host: invalid host name 'localhost': expected a letter, a digit, '-' or '.' at "
        "character 10, found end of input\n    localhost\n             ^",
    ),
    (
        {},
        {"host": HOST, "ip": "0.1.2.3"},
        "--ip: 0.1.2.3 cannot be coded in an IBIp: its leading digit 0 would be lost",
    ),
    (
        {},
        {"host": HOST, "target": "c.txt"},
        "--target 'c.txt' is not one of the files: a.txt, b.pdf",
    ),
    (
        {},
        {"host": HOST, "target": None},
        "--target is needed with 2 files: name the default file, one of a.txt, b.pdf",
    ),
    (
        {},
        {"host": HOST, "target": "a.txt", "language": "xx"},
        "--language: invalid language tag 'xx': expected an ISO 639-1 language code (Table A.1) at "
        "character 1, found 'x'\n    xx\n    ^",
    ),
    (
        {},
        {"host": HOST, "target": "a.txt", "metadata": {"titel": "x"}},
        "Dublin Core element 'titel' unknown; expected one of title, creator, subject, "
        "description, publisher, contributor, date, type, format, identifier, source, language, "
        "relation, coverage, rights",
    ),
    (
        {},
        {"host": HOST, "target": "a.txt", "metadata": {"date": 2010.5}},
        "Dublin Core date: found 2010.5; expected text (quote it in YAML) or a list of texts",
    ),
    (
        {},
        {"host": HOST, "target": "a.txt", "translation_of": EN},
        f"--translation-of {EN} needs --language: the language of the translation",
    ),
    (
        {},
        {"host": HOST, "target": "a.txt", "edition_of": "sid.inpe.br/mtc-m18/1999/01.01.00.00"},
        "--edition-of sid.inpe.br/mtc-m18/1999/01.01.00.00: no valid item of {archive} has this IBI",
    ),
    (
        {},
        {"host": HOST, "target": "a.txt", "edition_of": "8JMKD3MGP8W/22"},
        "--edition-of 8JMKD3MGP8W/22: no valid item of {archive} has this IBI",
    ),
    (
        {},
        {"host": HOST, "ip": IP, "target": "a.txt", "now": "1000"},
        "an IBIp cannot code a date before 1995-08-01T00:00:00Z (807235200): 1000",
    ),
]


@pytest.mark.parametrize("keys, kwargs, message", REFUSED)
def test_bad_input_is_refused_before_minting(archive, files, keys, kwargs, message):
    descriptor = _with_archive_keys(archive, **keys)
    kwargs = {"target": "a.txt", **kwargs}
    if message is None:
        assert deposit(archive, [files["a.txt"], files["b.pdf"]], **kwargs).repository
        return
    with pytest.raises(UsageError) as error:
        deposit(archive, [files["a.txt"], files["b.pdf"]], **kwargs)
    assert str(error.value) == message.format(yaml=descriptor, archive=archive)
    assert not (archive / ".ibistatic" / "distributor").exists()


def test_bad_files_are_refused(archive, files, tmp_path):
    hidden = tmp_path / ".hidden"
    hidden.write_text("x")
    other = tmp_path / "a.txt"
    other.write_text("another a")
    cases = [
        ([], "no FILE to deposit: give at least one file"),
        ([tmp_path / "missing.txt"], f"FILE {str(tmp_path / 'missing.txt')!r}: not a regular file"),
        ([tmp_path], f"FILE {str(tmp_path)!r}: not a regular file"),
        ([hidden], f"FILE {str(hidden)!r}: a name starting with '.' is hidden from the crawler"),
        (
            [files["a.txt"], other],
            f"FILE {str(other)!r}: its name 'a.txt' is already taken by {str(files['a.txt'])!r}",
        ),
    ]
    for given, message in cases:
        with pytest.raises(UsageError) as error:
            deposit(archive, given, host=HOST)
        assert str(error.value) == message


def test_a_broken_archive_yaml_is_refused(archive, files):
    (archive / "archive.yaml").write_text("address: mtc-m16c.sid.inpe.br\n")
    with pytest.raises(UsageError) as error:
        deposit(archive, [files["a.txt"]], host=HOST)
    assert str(error.value) == (
        f"{archive / 'archive.yaml'} has errors, so the Archive publishes nothing: error: mtc-m16c: "
        "archive.yaml: service-ibi: nothing; expected the repository name of the archive service (a required key)"
    )


# --- editions and translations ---------------------------------------------------------


def test_edition_of_links_both_ways_and_keeps_the_old_descriptor(archive, files):
    before = _raw(_item_file(archive, EN).parent)
    new = deposit(archive, [files["a.txt"]], host=HOST, edition_of=EN, now="1287587646")
    after = _raw(_item_file(archive, EN).parent)
    assert after == {**before, "next-edition": new.repository}
    assert isinstance(after["timestamp"], str)  # still the text written, not a YAML date
    assert "next-edition" not in _raw(new.path)
    assert new.linked == (_item_file(archive, EN),)
    _assert_valid(archive, new)
    # the IBIp form names the same item: refused, naming the next edition
    with pytest.raises(UsageError) as error:
        deposit(archive, [files["a.txt"]], host=HOST, edition_of=EN_IBIP.lower(), now="1287587700")
    assert str(error.value) == (
        f"--edition-of {EN_IBIP.lower()}: {EN} already has a next edition, sid.inpe.br/mtc-m18/2010/10.20.15.14.06"
    )
    # the new item can have its own next edition
    newer = deposit(
        archive, [files["a.txt"]], host=HOST, edition_of=new.repository, now="1287587700"
    )
    assert _raw(new.path)["next-edition"] == newer.repository
    _assert_valid(archive, newer)


def test_translation_of_links_both_ways(archive, files):
    done = deposit(
        archive,
        [files["a.txt"]],
        host=HOST,
        translation_of=EN_IBIP,
        language="pt",
        now="1287587646",
    )
    assert _raw(done.path)["translations"] == {"en": EN}
    assert _raw(done.path)["language"] == "pt"
    assert _raw(_item_file(archive, EN).parent)["translations"] == {"pt": done.repository}
    _assert_valid(archive, done)
    second = deposit(
        archive, [files["a.txt"]], host=HOST, translation_of=EN, language="es", now="1287587700"
    )
    assert _raw(_item_file(archive, EN).parent)["translations"] == {
        "pt": done.repository,
        "es": second.repository,
    }
    _assert_valid(archive, second)
    refused = [
        ("pt", f"--translation-of {EN}: {EN} already has a translation in pt, {done.repository}"),
        ("en", f"--translation-of {EN}: {EN} is itself in en"),
    ]
    for language, message in refused:
        with pytest.raises(UsageError) as error:
            deposit(
                archive,
                [files["a.txt"]],
                host=HOST,
                translation_of=EN,
                language=language,
                now="1287587800",
            )
        assert str(error.value) == message


def test_translation_of_an_item_without_language(archive, files):
    done = deposit(
        archive, [files["a.txt"]], host=HOST, translation_of=PLAIN, language="en", now="1287587646"
    )
    assert "translations" not in _raw(done.path)
    assert _raw(_item_file(archive, PLAIN).parent)["translations"] == {"en": done.repository}
    _assert_valid(archive, done)


def test_a_copy_is_not_linked_here(archive, files):
    copy = "iconet.com.br/banon/2001/02.10.22.55"
    write_item(archive, copy, state="Copy")
    with pytest.raises(UsageError) as error:
        deposit(archive, [files["a.txt"]], host=HOST, edition_of=copy)
    assert (
        str(error.value)
        == f"--edition-of {copy}: {copy} is a Copy here; link it in the Archive that holds the original"
    )


def test_a_linked_item_with_errors_is_refused(archive, files):
    _item_file(archive, PLAIN).write_text("state: Maybe\n")
    with pytest.raises(UsageError) as error:
        deposit(archive, [files["a.txt"]], host=HOST, edition_of=PLAIN)
    assert str(error.value) == (
        f"--edition-of {PLAIN}: its item.yaml has errors: error: mtc-m16c: {PLAIN}/item.yaml: "
        "state: 'Maybe'; expected one of Original, Copy, Deleted"
    )


def _in_processes(work, arguments: list[tuple]) -> list:
    """Run ``work(*args)`` in one forked process per tuple, all starting together;
    their results in the order given."""
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(len(arguments)), context.Queue()

    def child(index, args):
        start.wait()
        try:
            results.put((index, work(*args)))
        except BaseException as error:  # not every error pickles: send its text
            results.put((index, RuntimeError(f"process {index}: {error!r}")))

    processes = [context.Process(target=child, args=(i, args)) for i, args in enumerate(arguments)]
    for process in processes:
        process.start()
    answers = dict(results.get(timeout=60) for _ in processes)
    for process in processes:
        process.join()
    failed = [answer for answer in answers.values() if isinstance(answer, BaseException)]
    if failed:
        raise failed[0]
    return [answers[i] for i in range(len(arguments))]


def _translate(archive: str, file: str, language: str) -> str:
    return deposit(
        archive, [file], host=HOST, translation_of=EN, language=language, granularity="0.001"
    ).repository


def _edition(archive: str, file: str) -> str | None:
    try:
        return deposit(archive, [file], host=HOST, edition_of=PLAIN, granularity="0.001").repository
    except UsageError as error:
        assert str(error).startswith(f"--edition-of {PLAIN}: {PLAIN} already has a next edition, ")
        return None


def test_concurrent_links_to_one_item_lose_nothing(archive, files):
    languages = ["pt", "es", "fr", "de", "it", "ja"]
    made = _in_processes(
        _translate, [(str(archive), str(files["a.txt"]), lang) for lang in languages]
    )
    assert _raw(_item_file(archive, EN).parent)["translations"] == dict(zip(languages, made))
    editions = _in_processes(_edition, [(str(archive), str(files["a.txt"]))] * 4)
    winners = [e for e in editions if e is not None]
    assert len(winners) == 1
    assert _raw(_item_file(archive, PLAIN).parent)["next-edition"] == winners[0]
    loaded = load_archives([archive], SITE)
    assert (
        loaded.problems == [] and len(loaded.crawl.archives[0].items) == 3 + 6 + 1
    )  # 3: with the service item


# --- concurrency and atomicity ---------------------------------------------------------


def _deposit_many(archive: str, file: str, count: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(count):
        done = deposit(archive, [file], host=HOST, ip=IP, granularity="0.001")
        out.append((done.repository, done.ibip))
    return out


@pytest.mark.slow
def test_eight_processes_deposit_400_items_into_one_archive(archive, files):
    began = time.monotonic()
    results = _in_processes(_deposit_many, [(str(archive), str(files["a.txt"]), 50)] * 8)
    assert time.monotonic() - began < 20
    made = [pair for result in results for pair in result]
    assert len(made) == 400
    assert len({r.lower() for r, _ in made}) == 400 and len({i.upper() for _, i in made}) == 400
    for repository, ibip in made:
        assert decode_ibip(ibip).seconds == suffix_seconds(parse_repository_name(repository).suffix)
    loaded = load_archives([archive], SITE)
    assert loaded.problems == []
    assert len(loaded.crawl.archives[0].items) == 400 + 3  # 3: with the service item
    assert list((archive / ".ibistatic" / "incoming").iterdir()) == []


def _half_made(archive: Path) -> list[str]:
    """Every 4th-level directory seen without a complete item.yaml and doc/ file."""
    bad = []
    for level1 in os.scandir(archive):
        if not level1.is_dir() or level1.name.startswith("."):
            continue
        for level2 in os.scandir(level1.path):
            for level3 in os.scandir(level2.path):
                for level4 in os.scandir(level3.path):
                    try:
                        raw = yaml.safe_load(
                            Path(level4.path, "item.yaml").read_text(encoding="utf-8")
                        )
                        doc = list(os.scandir(Path(level4.path, "doc")))
                        target = Path(level4.path, "doc", raw.get("target") or doc[0].name)
                        complete = raw["state"] == "Original" and target.stat().st_size > 0
                    except (OSError, AttributeError, IndexError, KeyError, yaml.YAMLError):
                        complete = False
                    if not complete:
                        bad.append(level4.path)
    return bad


def test_the_checker_sees_a_half_made_repository(archive):
    half = archive.joinpath(*"sid.inpe.br/mtc-m18/2010/10.20.15.14.06".split("/"))
    (half / "doc").mkdir(parents=True)
    assert _half_made(archive) == [str(half)]
    (half / "item.yaml").write_text("state: Original\ntarget: a.txt\n")
    assert _half_made(archive) == [str(half)]


def test_a_reader_never_sees_a_half_made_repository(archive, files):
    context = multiprocessing.get_context("fork")
    writer = context.Process(target=_deposit_many, args=(str(archive), str(files["a.txt"]), 100))
    writer.start()
    seen, bad, rounds = set(), [], 0
    while writer.is_alive() or rounds == 0:
        bad += _half_made(archive)
        seen.update(str(p) for p in archive.glob("sid.inpe.br/mtc-m18/*/*"))
        rounds += 1
    writer.join()
    assert writer.exitcode == 0
    assert bad == []
    assert rounds > 5 and len(seen) > 10  # the reader did look while deposits ran


def test_deposits_from_threads_share_the_distributor(archive, files):
    made: list[str] = []
    errors: list[BaseException] = []

    def work():
        try:
            made.extend(r for r, _ in _deposit_many(str(archive), str(files["a.txt"]), 10))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(set(made)) == 40


# --- the command line ------------------------------------------------------------------


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_the_new_ibis_and_path(archive, files, capsys):
    code, out, err = _run(
        capsys,
        "deposit",
        files["a.txt"],
        "--archive",
        archive,
        "--host",
        HOST,
        "--ip",
        IP,
        "--at",
        "1234806360",
        "--title",
        "Título",
        "--creator",
        "Ana",
        "--creator",
        "Bruno",
        "--dc",
        "subject=a",
        "--dc",
        "subject=b",
        "--language",
        "pt",
    )
    path = archive / "sid.inpe.br/mtc-m18/2009/02.16.17.46"
    assert (code, err) == (0, "")
    assert out == (
        "repository  sid.inpe.br/mtc-m18/2009/02.16.17.46\n"
        "ibip        8JMKD3MGP8W/34PGRBS\n"
        f"path        {path}\n"
    )
    assert _raw(path)["dublin-core"] == {
        "title": "Título",
        "creator": ["Ana", "Bruno"],
        "subject": ["a", "b"],
    }


def test_cli_json(archive, files, capsys, tmp_path):
    metadata = tmp_path / "dc.yaml"
    metadata.write_text(
        "title: From the file\ndate: 2010-10-20\ncreator: [Ana]\n", encoding="utf-8"
    )
    code, out, err = _run(
        capsys,
        "deposit",
        files["a.txt"],
        files["b.pdf"],
        "--target",
        "b.pdf",
        "--archive",
        archive,
        "--host",
        HOST,
        "--granularity",
        "0.1",
        "--at",
        "1287587646.394023",
        "--metadata",
        metadata,
        "--title",
        "From the option",
        "--translation-of",
        EN,
        "--language",
        "pt",
        "--json",
    )
    assert (code, err) == (0, "")
    path = archive / "sid.inpe.br/mtc-m18/2010/10.20.15.14.06.3"
    assert json.loads(out) == {
        "repository": "sid.inpe.br/mtc-m18/2010/10.20.15.14.06.3",
        "ibip": None,
        "path": str(path),
        "seconds": 1287587646.3,
        "timestamp": "2010-10-20T15:14:06.3Z",
        "linked": [str(_item_file(archive, EN))],
    }
    assert _raw(path)["dublin-core"] == {
        "title": "From the option",
        "date": "2010-10-20",
        "creator": ["Ana"],
    }
    assert load_archives([archive], SITE).problems == []


CLI_ERRORS = [
    (
        ["--port", "eighty"],
        "ibistatic deposit: --port 'eighty': expected an integer from 1 to 65535\n",
    ),
    (
        ["--dc", "subject"],
        "ibistatic deposit: --dc 'subject': expected element=value, e.g. --dc subject=astronomy\n",
    ),
    (
        ["--granularity", "0.5"],
        "ibistatic deposit: --granularity: found '0.5'; expected 60, 1, 0.1, 0.01, ... seconds\n",
    ),
    (
        ["--at", "soon"],
        "ibistatic deposit: --at must be POSIX seconds as a decimal number, not 'soon'\n",
    ),
    (
        ["--edition-of", "sid.inpe.br/mtc m18"],
        "ibistatic deposit: --edition-of: invalid IBI 'sid.inpe.br/mtc m18': expected a letter, a "
        "digit, '-', '.', '@' or '/' at character 16, found ' '\n    sid.inpe.br/mtc m18\n         "
        "          ^\n",
    ),
]


@pytest.mark.parametrize("options, message", CLI_ERRORS)
def test_cli_bad_input_exits_2(archive, files, capsys, options, message):
    code, out, err = _run(
        capsys, "deposit", files["a.txt"], "--archive", archive, "--host", HOST, *options
    )
    assert (code, out, err) == (2, "", message)


def test_cli_missing_metadata_file_and_missing_archive(archive, files, capsys, tmp_path):
    code, _, err = _run(
        capsys,
        "deposit",
        files["a.txt"],
        "--archive",
        archive,
        "--host",
        HOST,
        "--metadata",
        tmp_path / "no.yaml",
    )
    assert code == 2 and err.startswith(
        f"ibistatic deposit: --metadata {tmp_path / 'no.yaml'}: cannot be read: "
    )
    code, _, err = _run(
        capsys, "deposit", files["a.txt"], "--archive", tmp_path / "nowhere", "--host", HOST
    )
    assert (code, err) == (
        2,
        f"ibistatic deposit: --archive {tmp_path / 'nowhere'}: no such directory\n",
    )


def test_read_repository_sees_the_cli_deposit(archive, files, capsys):
    code, out, _ = _run(
        capsys,
        "deposit",
        files["a.txt"],
        "--archive",
        archive,
        "--host",
        HOST,
        "--at",
        "1287587646",
        "--json",
    )
    assert code == 0
    repository = json.loads(out)["repository"]
    item, problems = read_repository(archive, archive.name, repository)
    assert problems == [] and item.target == "a.txt" and item.timestamp == "2010-10-20T15:14:06Z"
