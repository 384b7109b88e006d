"""Watch serves a deposit's pages before the republish's site-wide files (Store.publish_new):
the live tree with the new pages added, nothing in it changed or removed; the site-wide
files follow in a second publication, and the end is the full build's tree."""

from __future__ import annotations

import errno
from dataclasses import replace
from pathlib import Path

import pytest

from ibistatic.config import load_config
from ibistatic.errors import PublishError
from ibistatic.site import build
from ibistatic.site.build import Publisher, build_site
from test_publish import _edit, make_project, snapshot

NEW = "sid.inpe.br/mtc-m19/2020/01.02.03.04"  # the deposit's repository
NEW_IBIP = "8JMKD3MGP8W/3FAAAAA"
EDITED = "sid.inpe.br/mtc-m18@80/2009/07.21.14.43"  # an Original of mtc-m16c with pages


def _deposit(archive: Path) -> Path:
    folder = archive / NEW
    (folder / "doc").mkdir(parents=True)
    (folder / "doc" / "new.txt").write_text("new\n", encoding="utf-8")
    (folder / "item.yaml").write_text(
        f'state: Original\ntimestamp: "2020-01-02T03:04:00Z"\nibip: {NEW_IBIP}\n',
        encoding="utf-8",
    )
    return folder


def _watching(tmp_path: Path, hosts=()) -> tuple[Publisher, dict[str, bytes]]:
    """A Publisher as watch has it (state in memory), after its initial build; the
    served tree then."""
    config = replace(load_config(make_project(tmp_path)), hosts=hosts)
    publisher = Publisher(config, keep_last_good=False)
    publisher.persist = False
    assert publisher.build().mode == "full"
    return publisher, snapshot(config.output)


def _served_at_site_phase(monkeypatch, output: Path) -> list[dict[str, bytes]]:
    """The served tree each time a build begins its site-wide files."""
    seen = []
    original = build.render_site

    def render_site(*args, **kwargs):
        seen.append(snapshot(output))
        return original(*args, **kwargs)

    monkeypatch.setattr(build, "render_site", render_site)
    return seen


def _full_build(config, tmp_path: Path) -> dict[str, bytes]:
    other = replace(config, output=tmp_path / "full", cache=tmp_path / "full-cache")
    build_site(other, full=True)
    return snapshot(other.output)


@pytest.mark.parametrize("hosts", [(), ("nginx",)])
def test_a_deposits_pages_are_served_before_the_site_wide_files(tmp_path, monkeypatch, hosts):
    publisher, before = _watching(tmp_path, hosts)
    output = publisher.config.output
    seen = _served_at_site_phase(monkeypatch, output)
    new = _deposit(tmp_path / "archives" / "mtc-m16c")
    assert publisher.build(changed_paths={str(new)}).mode.startswith("update")
    (early,) = seen
    after = snapshot(output)
    assert after == _full_build(publisher.config, tmp_path)
    # nothing the site served is changed or gone: only files are added
    assert {path: early[path] for path in before} == before
    added = early.keys() - before.keys()
    # each added file is the republish's own, at a path the site had not
    assert added and {path: after[path] for path in added} == {p: early[p] for p in added}
    assert f"record/{NEW}/index.html" in added
    if not hosts:  # the portable output has a page per persistent URL
        assert f"{NEW_IBIP}/index.html" in added
    # the site-wide files came with the second publication only
    assert all(not path.startswith(("index/", "search/", "sitemap")) for path in added)
    assert after["index/manifest.json"] != early["index/manifest.json"]
    # the next update's spare, made level with the live tree while watch waits
    assert publisher.state.behind == frozenset()
    spare = output.parent / f".{output.name}.ibistatic" / publisher.state.spare
    assert snapshot(spare) == after


def test_an_edit_is_served_whole_with_its_site_wide_files(tmp_path, monkeypatch):
    """A change to existing pages only is not published before its site-wide files: one
    publication, as an update of ibistatic build."""
    from ibistatic.store import generations

    publisher, before = _watching(tmp_path)
    seen = _served_at_site_phase(monkeypatch, publisher.config.output)
    published = []
    original = generations.publish_generation
    monkeypatch.setattr(
        generations,
        "publish_generation",
        lambda tree, output: published.append(tree) or original(tree, output),
    )
    descriptor = tmp_path / "archives" / "mtc-m16c" / EDITED / "item.yaml"
    _edit(descriptor, **{"dublin-core": {"title": "A new title"}})
    publisher.build(changed_paths={str(descriptor)})
    assert len(seen) == 1 and seen[0] == before  # nothing served before the site-wide files
    assert len(published) == 1  # one publication, as an update of ibistatic build
    assert snapshot(publisher.config.output) == _full_build(publisher.config, tmp_path)


def test_a_failure_after_the_pages_says_so_and_the_next_change_converges(tmp_path, monkeypatch):
    publisher, before = _watching(tmp_path)
    output = publisher.config.output

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(output / "index"))

    monkeypatch.setattr(build, "render_site", full_disk)
    new = _deposit(tmp_path / "archives" / "mtc-m16c")
    with pytest.raises(PublishError, match="has this update's new pages only"):
        publisher.build(changed_paths={str(new)})
    served = snapshot(output)
    assert {path: served[path] for path in before} == before
    assert f"record/{NEW}/index.html" in served.keys() - before.keys()
    monkeypatch.undo()
    _edit(new / "item.yaml", **{"dublin-core": {"title": "Deposited"}})
    publisher.build(changed_paths={str(new / "item.yaml")})
    assert snapshot(output) == _full_build(publisher.config, tmp_path)


def test_a_failure_while_the_pages_are_written_leaves_the_site_unchanged(tmp_path, monkeypatch):
    from ibistatic.store import generations

    publisher, before = _watching(tmp_path)

    def full_disk(root, files):
        raise OSError(errno.ENOSPC, "No space left on device", str(root))

    monkeypatch.setattr(generations, "replace_files", full_disk)
    new = _deposit(tmp_path / "archives" / "mtc-m16c")
    with pytest.raises(PublishError, match="the published site is unchanged"):
        publisher.build(changed_paths={str(new)})
    assert snapshot(publisher.config.output) == before


def test_a_spare_that_cannot_be_levelled_costs_the_next_update_a_clone(tmp_path, monkeypatch):
    """Watch levels its spare after each republish (spare_ahead); a full disk then
    leaves no partial tree, and the next update clones the live one instead."""
    from ibistatic.store import generations

    publisher, _ = _watching(tmp_path)
    output = publisher.config.output
    ahead = []  # set while spare_ahead runs
    original_ahead, original_sync = build.spare_ahead, generations.sync_paths

    def spare_ahead(*args):
        ahead.append(True)
        try:
            return original_ahead(*args)
        finally:
            ahead.clear()

    def full_disk(source, destination, paths):
        if ahead and paths:
            raise OSError(errno.ENOSPC, "No space left on device", str(destination))
        return original_sync(source, destination, paths)

    monkeypatch.setattr(build, "spare_ahead", spare_ahead)
    monkeypatch.setattr(generations, "sync_paths", full_disk)
    new = _deposit(tmp_path / "archives" / "mtc-m16c")
    publisher.build(changed_paths={str(new)})  # published; its spare could not be levelled
    folder = output.parent / f".{output.name}.ibistatic"
    assert not any(path.name.startswith("work-") for path in folder.iterdir())
    assert not (folder / publisher.state.spare).exists()
    monkeypatch.undo()
    descriptor = tmp_path / "archives" / "mtc-m16c" / EDITED / "item.yaml"
    _edit(descriptor, **{"dublin-core": {"title": "A new title"}})
    publisher.build(changed_paths={str(descriptor)})
    assert snapshot(output) == _full_build(publisher.config, tmp_path)


def test_a_tree_being_deleted_is_handed_to_one_remover_only(tmp_path, monkeypatch):
    """Each republish cleans the generations folder (three times for a deposit): a tree
    this process set aside, whose deletion runs, is left to it; a stale tree and a dead
    build's work folder are discarded once."""
    import os

    from ibistatic.store import swap

    dead = 2**22 + 1  # above Linux's default pid_max: no such process
    names = ["live", f"old123-{os.getpid()}", "g18eaf", f"work-{dead}"]
    for name in names:
        (tmp_path / name).mkdir()
    discarded = []
    monkeypatch.setattr(swap, "discard", discarded.append)
    swap.clean_folder(tmp_path, {"live"})
    swap.clean_folder(tmp_path, {"live"})
    assert len(discarded) == 2  # g18eaf and the dead build's work folder, once each
    left = sorted(path.name for path in tmp_path.iterdir())
    assert "live" in left and f"old123-{os.getpid()}" in left
    assert len([name for name in left if name.startswith("old")]) == 3
