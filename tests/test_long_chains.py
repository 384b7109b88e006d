"""Legal inputs answer correctly at any size (issue 36): long edition chains and an item
with many languages, built with the real command line and resolved every way a reader
can (``ibistatic resolve``, the index reader, the static page, the browser's resolver).

- An edition chain of any length answers its last edition: only a cycle is a ``loop``
  (the local resolution has no hop limit; the network resolver keeps one and says so).
- A Resolution's ``chain`` is kept whole up to ``CHAIN_KEPT`` IBIs and bounded beyond
  (core.outcome.kept_chain), so answers do not grow with the chain.
- Builds cost work linear in the chain and in an item's languages: counted here (the
  property lists made, the relations answered, the items the storage check looks up),
  timed by benchmarks/chain_bench.py (the build times here are bounded loosely only).

The 10,000-edition chain takes about half a minute (IBISTATIC_CHAIN_EDITIONS=2000 runs
a shorter one); benchmarks/chain_bench.py times it beside 100, 1,000 and 5,000.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ibistatic.cli import main
from ibistatic.core.facts import (
    CHAIN_GAP,
    CHAIN_HEAD,
    CHAIN_KEPT,
    CHAIN_TAIL,
    HOP_LIMIT_MESSAGE,
    MAX_HOPS,
)
from ibistatic.core.identifiers import parse_ibi
from ibistatic.core.outcome import kept_chain
from ibistatic.resolver import Resolver
from node_resolver import NODE, node_resolve

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from chain_bench import (  # noqa: E402 - benchmarks/ is not a package
    ADDRESS,
    chain_name,
    language_tags,
    make_chain_project,
    make_languages_project,
)

TONGUES = "example.org/tongues"
SITE_URL = "https://ibi.example.org/"


def _build(config: Path) -> tuple[Path, float]:
    """Build with the command line as a user does; the site and the seconds it took."""
    start = time.perf_counter()
    assert main(["build", "--config", str(config), "--quiet"]) == 0
    return config.parent / "site", time.perf_counter() - start


def _resolve(capsys, site: Path, url: str, *options: str) -> str:
    """What ``ibistatic resolve --index site URL`` prints (its exit status checked)."""
    capsys.readouterr()
    status = main(["resolve", "--index", str(site), url, *options])
    out = capsys.readouterr().out.strip()
    assert status == (0 if "://" in out else 1), out
    return out


def _page_target(site: Path, path: str) -> dict:
    """The answer a static page carries (its JSON block), and its no-script refresh."""
    text = (site / path / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="ibistatic-target">(.*?)</script>', text, re.S)[1])
    refresh = re.search(r'http-equiv="refresh" content="0; url=([^"]*)"', text)
    data["refresh"] = refresh[1] if refresh else None
    return data


def _document(name: str) -> str:
    return f"http://{ADDRESS}/col/{name}/doc/document.txt"


def _chain(first: int, last: int) -> list[str]:
    """The chain of IBIs asked from edition `first` to edition `last`, as kept."""
    return list(kept_chain([chain_name(k) for k in range(first, last + 1)]))


# --------------------------------------------------------------------------------------
# The kept chain


def test_a_chain_up_to_the_kept_length_is_kept_whole():
    whole = [f"ibi-{k}" for k in range(CHAIN_KEPT)]
    assert kept_chain(whole) == tuple(whole)
    assert kept_chain([]) == ()


def test_a_longer_chain_keeps_its_ends_and_counts_the_rest():
    whole = [f"ibi-{k}" for k in range(10_000)]
    kept = kept_chain(whole)
    assert len(kept) == CHAIN_KEPT
    assert kept[:CHAIN_HEAD] == tuple(whole[:CHAIN_HEAD])
    assert kept[CHAIN_HEAD] == CHAIN_GAP.format(10_000 - CHAIN_HEAD - CHAIN_TAIL)
    assert kept[CHAIN_HEAD + 1 :] == tuple(whole[-CHAIN_TAIL:])
    # one more than kept whole: two left out, as the count says
    assert kept_chain(whole[: CHAIN_KEPT + 1])[CHAIN_HEAD] == CHAIN_GAP.format(2)


# --------------------------------------------------------------------------------------
# A chain of 100 editions: past the old hop limit, and a cycle


@pytest.fixture(scope="module")
def chain_100(tmp_path_factory) -> Path:
    config = make_chain_project(tmp_path_factory.mktemp("chain-100"), 100)
    return _build(config)[0]


@pytest.mark.parametrize("k", [0, 1, 35, 36, 37, 98, 99])
def test_every_edition_of_100_answers_the_last(capsys, chain_100, k):
    last = _document(chain_name(99))
    # the command line, the index reader, the static page
    assert _resolve(capsys, chain_100, chain_name(k) + "!") == last
    result = Resolver(chain_100).resolve(chain_name(k) + "!")
    assert (result.url, result.alert, result.ibi) == (last, None, chain_name(99))
    assert list(result.chain) == _chain(k, 99)
    page = _page_target(chain_100, chain_name(k) + "!")
    assert page["url"] == page["refresh"] == last
    # a lookup the build did not precompute walks the chain the same way
    walked = Resolver(chain_100).resolve(chain_name(k) + "?ibiurl.verblist=GetLastEdition")
    assert (walked.url, walked.chain) == (last, result.chain)


def test_the_chain_field_is_as_it_was_up_to_the_kept_length(capsys, chain_100):
    """Edition 36's chain has exactly CHAIN_KEPT IBIs: whole, as before the bound; one
    more edition and it is bounded."""
    answer = json.loads(_resolve(capsys, chain_100, chain_name(100 - CHAIN_KEPT) + "!", "--json"))
    assert answer["chain"] == [chain_name(k) for k in range(100 - CHAIN_KEPT, 100)]
    longer = json.loads(_resolve(capsys, chain_100, chain_name(99 - CHAIN_KEPT) + "!", "--json"))
    assert longer["chain"][CHAIN_HEAD] == CHAIN_GAP.format(2)
    assert longer["chain"][-1] == chain_name(99)


@pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/test.sh installs it)")
def test_the_browser_resolver_follows_the_whole_chain(chain_100):
    requests = [
        chain_name(0) + "!",  # precomputed
        chain_name(0) + "?ibiurl.verblist=GetLastEdition",  # walked in the browser
        chain_name(0) + "!:",  # walked: the last edition has no metadata
    ]
    python = [Resolver(chain_100).resolve(request) for request in requests]
    for answer, expected in zip(node_resolve(chain_100, requests), python):
        assert (answer["url"], answer["alert"]) == (expected.url, expected.alert)
        assert answer["chain"] == list(expected.chain)
    assert python[1].url == _document(chain_name(99))
    assert python[2].alert == "unavailable"
    assert python[2].chain[-1] == chain_name(99)


def test_a_cycle_is_the_only_loop(capsys, tmp_path):
    """Editions 0..99 with the last naming edition 50 again: a loop for every one of
    them, its chain going once round; the build warns once."""
    config = make_chain_project(tmp_path, 100)
    last = config.parent / "archive" / chain_name(99) / "item.yaml"
    last.write_text(last.read_text() + f"next-edition: {chain_name(50)}\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["build", "--config", str(config), "--quiet"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "loops" in line]
    assert len(warnings) == 1
    site = config.parent / "site"
    resolver = Resolver(site)
    for k in (0, 49, 50, 75, 99):
        result = resolver.resolve(chain_name(k) + "!")
        assert result.alert == "loop", k
        back = 50 if k < 50 else k  # a walk comes back to where the cycle starts
        rounds = [chain_name(j) for j in range(k, 100)] + [chain_name(j) for j in range(50, back)]
        assert list(result.chain) == list(kept_chain([*rounds, chain_name(back)])), k
        assert _resolve(capsys, site, chain_name(k) + "!").startswith("loop: ")
    assert resolver.resolve(chain_name(10)).url == _document(chain_name(10))


def test_the_network_resolver_keeps_its_bound_and_says_so(chain_100):
    """The network resolver sends at most MAX_HOPS rounds of requests: past them it says
    it stopped (``unavailable``, with its own message), it does not call it a loop."""
    from ibistatic.core.properties import property_list
    from ibistatic.core.relations import parse_modifier, relation_to_verb_list
    from ibistatic.core.resolution import resolution_process, wanted_relations

    views = Resolver(chain_100).views

    def over_views(k: int):
        verbs = relation_to_verb_list(parse_modifier("!"))
        process = resolution_process(parse_ibi(chain_name(k)), verbs, "", [])
        question, rounds = next(process), 0
        while True:
            key, step_verbs, steps = question
            rounds += 1
            answers = [
                (view, answer)
                for view in views
                if (
                    answer := property_list(
                        view, key, verbs=step_verbs, relations=wanted_relations(view, steps)
                    )
                )
                is not None
            ]
            try:
                question = process.send(answers)
            except StopIteration as done:
                return done.value, rounds

    short, rounds = over_views(100 - MAX_HOPS)
    assert (short.url, rounds) == (_document(chain_name(99)), MAX_HOPS)
    long, rounds = over_views(0)
    assert (long.url, long.alert, rounds) == (None, "unavailable", MAX_HOPS)
    assert long.message == HOP_LIMIT_MESSAGE.format(MAX_HOPS)
    assert long.chain[0] == chain_name(0) and len(long.chain) == CHAIN_KEPT


# --------------------------------------------------------------------------------------
# A long chain: 10,000 editions (IBISTATIC_CHAIN_EDITIONS=2000 makes it shorter where a
# build of 10,000 items, whatever they hold, is too slow for the machine)

EDITIONS = int(os.environ.get("IBISTATIC_CHAIN_EDITIONS", "10000"))


@pytest.mark.slow
def test_a_long_chain_of_editions(capsys, tmp_path):
    n = EDITIONS
    config = make_chain_project(tmp_path, n)
    site, seconds = _build(config)
    last = _document(chain_name(n - 1))
    resolver = Resolver(site)
    for k in sorted({0, 1, n // 2, n - CHAIN_KEPT - 1, n - CHAIN_KEPT, n - 2, n - 1}):
        assert _resolve(capsys, site, chain_name(k) + "!") == last
        result = resolver.resolve(chain_name(k) + "!")
        assert (result.url, list(result.chain)) == (last, _chain(k, n - 1))
        assert _page_target(site, chain_name(k) + "!")["url"] == last
    walked = resolver.resolve(chain_name(0) + "?ibiurl.verblist=GetLastEdition")
    assert (walked.url, walked.chain) == (last, tuple(_chain(0, n - 1)))
    # the precomputed answers stay bounded: each row holds at most CHAIN_KEPT IBIs
    # (whole chains would hold n * n / 2 of them)
    answers = sum(f.stat().st_size for f in (site / "index" / "answers").glob("*.json"))
    assert answers / n < 8_000
    # cubic (the storage check) and quadratic (the resolution), 5,000 editions took
    # 470 s and more; linear, 10,000 take about half a minute on two shared cores
    assert seconds < n * 0.03, seconds


# --------------------------------------------------------------------------------------
# The work, counted: linear in the chain and in the languages, whatever the machine


def _counted_work(monkeypatch, config: Path) -> tuple[int, Counter]:
    """The page targets of the project, and what resolving them asked of the Archives
    (property lists made, relations answered) and of the storage check (items looked up)."""
    import ibistatic.core.properties as properties
    import ibistatic.core.resolution as resolution
    import ibistatic.core.storage as storage
    from ibistatic.archive.load import load_archives
    from ibistatic.config import load_config
    from ibistatic.targets import page_targets

    counts: Counter = Counter()

    def counting(name, function):
        def counted(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)

        return counted

    monkeypatch.setattr(
        resolution, "property_list", counting("property lists", resolution.property_list)
    )
    monkeypatch.setattr(
        properties, "_relation_answer", counting("relations", properties._relation_answer)
    )
    get = storage._FirstHolders.get
    monkeypatch.setattr(storage._FirstHolders, "get", counting("lookups", get))
    loaded = load_archives(list(load_config(config).archives), SITE_URL)
    loaded.problems  # the storage check
    targets = sum(1 for _ in page_targets(loaded, load_config(config).modifiers))
    return targets, counts


def test_a_chain_is_walked_once(monkeypatch, tmp_path):
    n = 1_000
    targets, counts = _counted_work(monkeypatch, make_chain_project(tmp_path, n))
    assert targets == 5 * n  # the bare URL, `!`, `:`, `:(oai_dc)`, `!:(oai_dc)`
    # each edition's bare URL and metadata ask once, its `!:(oai_dc)` once more (the last
    # edition's metadata); the `!` of the first edition walks the chain once, and every
    # other edition's `!` takes the rest from it
    assert counts["property lists"] == 4 * n + n
    assert counts["lookups"] < 10 * n  # the storage check walks each edition once too


def test_many_languages_cost_one_answer_per_page(monkeypatch, tmp_path):
    targets, counts = _counted_work(
        monkeypatch, make_languages_project(tmp_path, 100, modifiers="all")
    )
    # one property list per page (the `+` pages' answers for each language share theirs),
    # each of a few relations: those the item's own languages answer, not every
    # relation of the Archive's set (its size is the square of the languages)
    assert counts["property lists"] == targets
    assert counts["relations"] < 5 * targets


# --------------------------------------------------------------------------------------
# An item with 200 languages


def test_the_language_tags_are_distinct_and_valid():
    from ibistatic.core.languages import parse_language_tag

    tags = language_tags(200)
    assert len({tag.lower() for tag in tags}) == 200
    assert all(str(parse_language_tag(tag)) == tag for tag in tags)
    assert any("-" in tag for tag in tags) and "en" not in tags


@pytest.fixture(scope="module")
def languages_200(tmp_path_factory) -> tuple[Path, float]:
    config = make_languages_project(tmp_path_factory.mktemp("languages-200"), 200, "all")
    return _build(config)


def _translation(k: int) -> str:
    return chain_name(k, TONGUES)


@pytest.mark.slow
def test_every_translation_of_200_languages(capsys, languages_200):
    site, seconds = languages_200
    first = _translation(0)
    resolver = Resolver(site)  # warm: every language; the command line (cold): some
    for k, tag in enumerate(language_tags(200), start=1):
        target = _document(_translation(k))
        assert resolver.resolve(f"{first}+({tag})").url == target, tag
        assert resolver.resolve(f"{first}+", accept_language=tag).url == target, tag
        assert _page_target(site, f"{first}+({tag})")["url"] == target, tag
        # and back: each translation's `en` is the first item
        assert resolver.resolve(f"{_translation(k)}+(en)").url == _document(first), tag
        if k in (1, 100, 200):  # a cold lookup reads the whole manifest
            assert _resolve(capsys, site, f"{first}+({tag})") == target, tag
            assert _resolve(capsys, site, f"{first}+", "--accept-language", tag) == target, tag
    # the `+` page carries the answer for each of its languages, for the browser to choose
    negotiated = {
        entry["tag"]: entry["url"] for entry in _page_target(site, f"{first}+")["negotiation"]
    }
    assert negotiated == {
        "en": _document(first),
        **{tag: _document(_translation(k)) for k, tag in enumerate(language_tags(200), 1)},
    }
    # cubic in the languages, this took hours; linear, well under a minute
    assert seconds < 240, seconds


@pytest.mark.slow
@pytest.mark.skipif(NODE is None, reason="node is not installed (scripts/test.sh installs it)")
def test_the_browser_resolver_chooses_among_200_languages(languages_200):
    site, _ = languages_200
    first = _translation(0)
    tags = language_tags(200)
    picked = [0, 1, 57, 150, 182, 183, 199]
    cases = [(f"{first}+", [tags[k]]) for k in picked]
    cases += [(f"{first}+:", [tags[k]]) for k in picked[:2]]
    from node_resolver import node_answers

    answers = node_answers(site, cases)
    resolver = Resolver(site)
    for (request, languages), answer in zip(cases, answers):
        expected = resolver.resolve(request, accept_language=languages[0])
        assert (answer["url"], answer["alert"]) == (expected.url, expected.alert), request
    for k, answer in zip(picked, answers):
        assert answer["url"] == _document(_translation(k + 1))
