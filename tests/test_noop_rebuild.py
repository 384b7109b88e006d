"""A rebuild with nothing new costs the crawl's stat calls: no generation, no state or
cache written, the site as it was; anything that changes a site file is still seen."""

from __future__ import annotations

import json
import os

from ibistatic.config import load_config
from ibistatic.site import outputs
from ibistatic.site.build import build_site
from ibistatic.store.layout import live_generation
from test_pipeline import CaddyRedirects
from test_publish import make_project, snapshot


def _mtimes(folder) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()}


def test_a_rebuild_with_nothing_new_writes_nothing(tmp_path):
    config = load_config(make_project(tmp_path))
    first = build_site(config, full=True)
    generation, before = live_generation(config.output), snapshot(config.output)
    saved = _mtimes(config.cache_dir)
    assert set(saved) >= {"crawl.pickle", "site-state.pickle"}
    again = build_site(config)
    assert (again.mode, again.written, again.removed) == (
        "update of 0 changed, 0 affected items",
        0,
        0,
    )
    assert (again.items, again.keys, again.pages) == (first.items, first.keys, first.pages)
    assert live_generation(config.output) == generation  # no new generation published
    assert snapshot(config.output) == before
    assert _mtimes(config.cache_dir) == saved  # neither the state nor the crawl cache rewritten
    item = tmp_path / "archives/mtc-m16d/sid.inpe.br/mtc-m19/2014/01.02.17.23.57/item.yaml"
    item.write_text(item.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # new mtime only
    os.utime(item, ns=(item.stat().st_atime_ns, item.stat().st_mtime_ns + 10**9))
    read_again = build_site(config)
    assert read_again.written == 0 and live_generation(config.output) == generation
    assert _mtimes(config.cache_dir)["crawl.pickle"] != saved["crawl.pickle"]  # it learnt the mtime


def test_a_new_problem_alone_still_updates_the_manifest(tmp_path):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    manifest = config.output / "index" / "manifest.json"
    problems = json.loads(manifest.read_bytes())["counts"]["problems"]
    (tmp_path / "archives/mtc-m16d/sid.inpe.br/mtc-m19/2014/01.02.17.23.58").mkdir()  # no item.yaml
    report = build_site(config)
    assert report.written >= 1 and len(report.problems) == problems + 1
    assert json.loads(manifest.read_bytes())["counts"]["problems"] == problems + 1


def test_a_new_output_makes_a_rebuild_no_no_op(tmp_path, monkeypatch):
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    monkeypatch.setattr(outputs, "SITE_OUTPUTS", (*outputs.SITE_OUTPUTS, CaddyRedirects()))
    report = build_site(config)
    assert report.written == 1 and (config.output / "_ibistatic" / "Caddyfile").is_file()


def test_choosing_a_host_makes_a_rebuild_no_no_op(tmp_path):
    from dataclasses import replace

    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    assert not (config.output / "_worker.js").exists()
    report = build_site(replace(config, hosts=("cloudflare-pages",)))
    assert report.written > 0
    assert (config.output / "_worker.js").is_file()  # the host's own file, written at once


def test_turning_the_catalog_on_makes_a_rebuild_no_no_op(tmp_path):
    from dataclasses import replace

    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    assert not (config.output / "catalog").exists()
    build_site(replace(config, catalog=True))
    assert (config.output / "catalog" / "index.html").is_file()
