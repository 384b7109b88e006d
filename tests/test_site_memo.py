"""What the site outputs keep between the builds of one state (ibistatic.site.memo): a
republish (watch) makes again only what the change reached, and gives what a full
build gives, byte for byte."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conftest import SAMPLE
from ibistatic.config import load_config
from ibistatic.site import sitewide
from ibistatic.site.build import Publisher, build_site
from ibistatic.site.hostfiles import HostRule, first_by_path
from ibistatic.site.memo import Changes, FirstByPath, PerRepository
from ibistatic.site.outputs import host_files
from ibistatic.site.pages import Site
from test_publish import _edit, make_project, snapshot


@given(
    st.lists(
        st.tuples(st.sampled_from(["put", "drop", "same"]), st.sampled_from("abcdefghij")),
        max_size=60,
    ),
    st.integers(0, 3),
    st.sampled_from([None, 64, 1]),
    st.integers(1, 3),
)
def test_per_repository_joins_what_a_fresh_join_gives_after_any_changes(
    changes, batch, logged, every
):
    """Keys come, go and get new entries (a batch of changes per build); a call after
    every `every` builds gives the rows of every entry in key order, and makes the
    rows of the entries that are new objects since the last call, of no other: told
    the keys of each build (Changes, which keeps `logged` builds), or looking at each
    entry (None)."""
    made = []

    def rows_of(entry) -> list:
        return [f"{entry[0]}{n}" for n in range(entry[1])]  # 0 to 2 rows

    rows = PerRepository(lambda entry: made.append(entry) or rows_of(entry))
    log = Changes(logged) if logged else None
    table: dict = {}
    last: list = []
    built: set = set()  # the keys of this build's changes
    for number, (change, key) in enumerate(changes):
        if change == "put":
            table[key] = (key, number % 3)  # a new object, even when equal
            built.add(key)
        elif change == "drop":
            table.pop(key, None)
            built.add(key)
        if number % (batch + 1) != 0:
            continue
        if log is not None:
            log.add(built)
        built = set()
        if log is None or log.builds % every == 0 or log.builds == 1:
            made.clear()
            joined = rows.joined(table, log)
            assert joined == [r for k in sorted(table) for r in rows_of(table[k])]
            new = [entry for entry in table.values() if not any(entry is e for e in last)]
            assert sorted(map(id, made)) == sorted(map(id, new))
            last = list(table.values())


def test_per_repository_told_the_keys_looks_at_theirs_only_unless_it_missed_some():
    """With a log of the keys each build changed, a call makes again the rows of those
    keys only; one that comes after more builds than the log keeps looks at every entry."""
    made = []
    rows = PerRepository(lambda entry: made.append(entry[0]) or [entry[0]])
    log = Changes(logged=2)
    table = {f"k{n}": (f"r{n}",) for n in range(10)}
    log.add(table)
    assert rows.joined(table, log) == [f"r{n}" for n in range(10)]
    table["k3"], table["k10"] = ("s3",), ("r10",)
    del table["k5"]
    log.add({"k3", "k5", "k10"})
    made.clear()
    expected = ["r0", "r1", "r10", "r2", "s3", "r4", "r6", "r7", "r8", "r9"]
    assert rows.joined(table, log) == expected and sorted(made) == ["r10", "s3"]
    table["k1"] = ("s1",)  # changed, and not told: not looked at while the log is whole
    log.add(set())
    assert rows.joined(table, log) == expected
    for n in (5, 7, 9):  # three builds, one more than the log keeps: all entries looked at
        table[f"k{n}"] = (f"s{n}",)  # k5 back
        log.add({f"k{n}"})
    made.clear()
    joined = rows.joined(table, log)
    assert joined == ["r0", "s1", "r10", "r2", "s3", "r4", "s5", "r6", "s7", "r8", "s9"]
    assert sorted(made) == ["s1", "s5", "s7", "s9"]


def test_a_build_that_changed_every_key_is_logged_as_such_not_listed():
    """A full build logs None (every key; its state is new, a set of all its keys
    would tell nobody anything): a join made before it looks at every entry again."""
    made = []
    rows = PerRepository(lambda entry: made.append(entry[0]) or [entry[0]])
    log = Changes()
    table = {"k1": ("r1",), "k2": ("r2",)}
    log.add(None)
    assert log.since(0) is None and rows.joined(table, log) == ["r1", "r2"]
    log.add({"k2"})
    assert log.since(1) == {"k2"} and log.since(0) is None
    table["k1"], table["k2"] = ("s1",), ("s2",)
    log.add(None)  # k1 changed too: only an "every key" says so
    made.clear()
    assert rows.joined(table, log) == ["s1", "s2"] and sorted(made) == ["s1", "s2"]


def test_per_repository_past_many_changes_joins_again():
    rows = PerRepository(lambda entry: [entry[0]])
    table = {f"k{n:05}": (f"r{n}",) for n in range(3000)}
    assert rows.joined(table) == [f"r{n}" for n in range(3000)]
    for n in range(0, 3000, 2):
        del table[f"k{n:05}"]
        table[f"j{n:05}"] = (f"s{n}",)
    expected = [f"s{n}" for n in range(0, 3000, 2)] + [f"r{n}" for n in range(1, 3000, 2)]
    assert rows.joined(table) == expected


def _rules_of(entry) -> list[HostRule]:
    """An entry's rules: a few paths of a small set, so that keys share paths (the first
    wins) and one key may name a path twice; some are 410s (no line)."""
    return [HostRule(path, 410 if url is None else 302, url) for path, url in entry[1]]


def _rule_text(rule: HostRule) -> str:
    return "" if rule.url is None else f"{rule.path} {rule.url}\n"


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["put", "drop", "same"]),
            st.sampled_from("abcdefgh"),
            st.lists(
                st.tuples(
                    st.sampled_from(["p", "q", "r", "s", "t"]), st.sampled_from([None, "u", "v"])
                ),
                max_size=3,
            ),
        ),
        max_size=50,
    ),
    st.integers(0, 3),
)
def test_first_by_path_is_first_by_path_of_the_joined_rows_after_any_changes(changes, batch):
    """Rules come, go and change under keys that share paths: after each call, the first
    rule of each path in the joined order, sorted by path, and the text of each, as
    made from scratch."""
    rows = PerRepository(_rules_of)
    by_path = FirstByPath(lambda rule: rule.path, _rule_text)
    table: dict = {}
    for number, (change, key, rules) in enumerate(changes):
        if change == "put":
            table[key] = (key, tuple(rules))  # a new object, even when equal
        elif change == "drop":
            table.pop(key, None)
        if number % (batch + 1) == 0:
            assert rows.joined(table) == _joined(table)
            expected = first_by_path(_joined(table))
            assert by_path.update(rows) == expected
            assert by_path.texts == [_rule_text(rule) for rule in expected]


def _joined(table) -> list[HostRule]:
    return [rule for key in sorted(table) for rule in _rules_of(table[key])]


def test_first_by_path_starts_again_when_it_missed_a_join():
    """Two joins with one update between them: the second's changes alone would leave it
    wrong, so it makes everything again."""
    rows = PerRepository(_rules_of)
    by_path = FirstByPath(lambda rule: rule.path, _rule_text)
    table = {"a": ("a", (("p", "u"),)), "b": ("b", (("q", "u"),))}
    rows.joined(table)
    by_path.update(rows)
    table["a"] = ("a", (("r", "v"),))
    rows.joined(table)  # not followed by an update
    table["b"] = ("b", (("s", "v"),))
    rows.joined(table)
    assert [rule.path for rule in by_path.update(rows)] == ["r", "s"]


def test_first_by_path_after_many_changes_at_once():
    """Past PerRepository's limit of changes, it joins everything again and says no
    changes (None): the rules sorted by path are made again too."""
    rows = PerRepository(_rules_of)
    by_path = FirstByPath(lambda rule: rule.path, _rule_text)
    table = {f"k{n:05}": (f"k{n:05}", ((f"p{n:05}", "u"),)) for n in range(3000)}
    rows.joined(table)
    by_path.update(rows)
    for n in range(0, 3000, 2):
        del table[f"k{n:05}"]
        table[f"j{n:05}"] = (f"j{n:05}", ((f"q{n:05}", "v"),))
    rows.joined(table)
    assert rows.changes is None
    assert by_path.update(rows) == first_by_path(_joined(table))


def _full_build_beside(config, tmp_path: Path, name: str) -> dict[str, bytes]:
    other = replace(config, output=tmp_path / name, cache=tmp_path / f"{name}-cache")
    build_site(other, full=True)
    return snapshot(other.output)


@pytest.mark.parametrize("hosts", [(), ("netlify", "s3"), ("cloudflare-pages",)])
def test_one_publishers_updates_equal_full_builds(tmp_path, monkeypatch, hosts):
    """Every republish of one Publisher (what watch does), sitemaps cut into parts,
    against a full build of the same archives into another folder; for the portable
    output and for the hosts whose files list every rule (kept sorted: FirstByPath)."""
    monkeypatch.setattr(sitewide, "SITEMAP_LIMIT", 7)
    config = replace(load_config(make_project(tmp_path)), hosts=hosts)
    publisher = Publisher(config, keep_last_good=False)  # as the full builds beside it
    publisher.persist = False  # as watch: the state stays in memory, and its memo
    lines = []  # the portable _redirects' lines made (its rules kept sorted: FirstByPath)
    original_line = host_files.portable_line
    monkeypatch.setattr(
        host_files,
        "portable_line",
        lambda rule, base: lines.append(rule) or original_line(rule, base),
    )
    assert publisher.build().mode == "full"
    assert len(lines) > 50 if not hosts else lines == []  # each line made once, then kept
    # a spare generation made now, level with the live one: no update clones the site
    assert publisher.state.spare and publisher.state.behind == frozenset()
    assert publisher.state.memo.keys() >= {"index", "sitemaps"}  # filled here, not in forks
    from ibistatic.store import generations

    def no_clone(source, destination):
        raise AssertionError("an update cloned the whole site")

    monkeypatch.setattr(generations, "clone_tree", no_clone)
    m16c = tmp_path / "archives" / "mtc-m16c"
    item = m16c / "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/item.yaml"
    new = m16c / "sid.inpe.br/mtc-m19/2020/01.02.03.04"

    def deposit() -> None:
        (new / "doc").mkdir(parents=True)
        (new / "doc" / "new.txt").write_text("new\n", encoding="utf-8")
        (new / "item.yaml").write_text(
            'state: Original\ntimestamp: "2020-01-02T03:04:00Z"\nibip: 8JMKD3MGP8W/3FAAAAA\n',
            encoding="utf-8",
        )

    plain = m16c / "sid.inpe.br/mtc-m19/2011/05.10.18.31/item.yaml"
    changes = [
        (lambda: _edit(item, **{"dublin-core": {"title": "A new title"}}), item),
        (lambda: _edit(plain, ibip="8JMKD3MGP8W/3FBBBBB"), plain),  # its URLs change
        (lambda: _edit(item, ibip="8JMKD3MGP8W/3FCCCCC"), item),
        (deposit, new),
        (lambda: shutil.rmtree(new), new),
        (lambda: _edit(item, state="Orignal"), item),
        (lambda: _edit(item, state="Original"), item),
    ]
    made = []
    original = sitewide.UrlSet.row
    monkeypatch.setattr(
        sitewide.UrlSet, "row", lambda self, url: made.append(url) or original(self, url)
    )
    for number, (change, where) in enumerate(changes):
        change()
        made.clear()
        lines.clear()
        report = publisher.build(changed_paths={str(where)})
        assert report.mode.startswith("update"), report.mode
        # the rows and lines of the items the change reached, not of the other 30
        assert len(made) < 20, (number, made)
        assert len(lines) < 13, (number, lines)  # an item's: 2 IBIs x 5 modifiers at most
        full = _full_build_beside(config, tmp_path, f"full-{number}")
        updated = snapshot(config.output)
        assert sorted(updated) == sorted(full), number
        assert [path for path in full if updated[path] != full[path]] == [], number
        assert (config.output / "sitemaps" / "sitemap-pages-2.xml").is_file()


def test_the_sitemap_rows_come_from_the_template_whatever_its_markup(tmp_path):
    """A site's own sitemap.xml: a plain loop (other markup) is still written without
    Jinja, row by row; one that does more (numbers its rows) is rendered by Jinja."""
    urls = ["https://ibi.example.org/a&b", "https://ibi.example.org/c"]
    plain = (
        "<?xml version='1.0'?>\n<urlset>{% for url in urls %}\n"
        " <url> <loc>{{ url }}</loc> </url>{% endfor %}\n</urlset>\n"
    )
    numbered = (
        "<urlset>{% for url in urls %}<!-- {{ loop.index }} -->"
        "<url><loc>{{ url }}</loc></url>{% endfor %}</urlset>"
    )
    for template, fast in ((plain, True), (numbered, False)):
        own = tmp_path / ("plain" if fast else "numbered")
        own.mkdir()
        (own / "sitemap.xml").write_text(template, encoding="utf-8")
        config = load_config(_config_with_templates(tmp_path, own))
        site = Site(config)
        urlset = sitewide.UrlSet(site)
        assert (urlset.parts is not None) == fast
        rows = [urlset.row(url) for url in urls]
        for count in range(3):
            assert urlset.text(rows[:count]) == site.render("sitemap.xml", urls=urls[:count])
        assert "a&amp;b" in urlset.text(rows)


def _config_with_templates(tmp_path: Path, templates: Path) -> Path:
    path = tmp_path / f"{templates.name}.yaml"
    config = {
        "site-url": "https://ibi.example.org/",
        "archives": [str(SAMPLE / "mtc-m16c")],
        "output": str(tmp_path / f"{templates.name}-site"),
        "templates": str(templates),
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_spare_that_cannot_be_made_leaves_nothing_behind(tmp_path, monkeypatch):
    """A full disk while the spare is cloned: no partial tree stays, and the next
    update clones as it always could."""
    from ibistatic.store import generations
    from ibistatic.store.layout import generations as folder_of

    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    publisher = Publisher(config)
    live = publisher._read_state().publication()

    def full_disk(source, destination):
        destination.mkdir()
        (destination / "half").write_text("x")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(generations, "clone_tree", full_disk)
    assert generations.spare_ahead(config.output, live) == live
    left = sorted(p.name for p in folder_of(config.output).iterdir())
    assert live.generation in left and not any(name.startswith("work-") for name in left)
    assert [name for name in left if name != live.generation and not name.startswith("old")] == []


def test_watch_on_a_published_site_fills_its_memo_and_writes_nothing(tmp_path):
    """watch started on a site a build published: its first build reads the saved state
    (no memo) and runs the site outputs once, so the first deposit costs its own."""
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    before = snapshot(config.output)
    live = (config.output).resolve()
    publisher = Publisher(config)
    publisher.persist = False
    report = publisher.build()
    assert report.mode.startswith("update") and (report.written, report.removed) == (0, 0)
    assert publisher.state.memo.keys() >= {"index", "sitemaps"}
    assert config.output.resolve() == live and snapshot(config.output) == before
    again = publisher.build()  # now warm: a rebuild with nothing to do does nothing
    assert again.written == 0 and publisher.state.memo


def test_a_forked_site_output_lets_its_memo_go():
    """In a full build's forked worker, an output's memo serves no republish: it is let
    go before the worker's next output (at 100k the search's 270 MiB stayed under the
    sitemaps). Made here (watch), it stays for the next republish."""
    from types import SimpleNamespace

    from ibistatic.site import site_phase

    class Remembering:
        name = "remembering"

        def files(self, plan, context):
            context.state.memo[self.name] = ["what a republish would reuse"]
            return iter(())

    context = SimpleNamespace(state=SimpleNamespace(memo={"other": 1}))
    site_phase._made_apart(None, context, Remembering(), None)
    assert context.state.memo == {"other": 1}
    site_phase._made_by(None, context, Remembering(), None)
    assert context.state.memo["remembering"] == ["what a republish would reuse"]
