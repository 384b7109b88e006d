"""The build as a pipeline: the plan, the output registry, the store, the layering."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
import yaml

from ibistatic.archive.load import load_archives
from ibistatic.config import load_config
from ibistatic.errors import ConfigError, IbistaticError
from ibistatic.site import outputs
from ibistatic.site.build import Publisher, build_site
from ibistatic.site.plan import plan_build
from ibistatic.store.files import DIGEST_SIZE, File, Files, digest
from test_publish import make_project, snapshot

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ibistatic"


# -- a new output kind: one module, one registration line -----------------------------------


class CaddyRedirects:
    """The example of docs/architecture.md: a Caddyfile of the redirecting URLs."""

    name = "Caddy redirects"
    pages = False
    remembered = False

    def files(self, plan, context):
        lines = (
            f"redir /{url.path} {url.url} 302" for url in context.published if url.url is not None
        )
        yield File("_ibistatic/Caddyfile", lines=lines)


def test_a_registered_output_is_built_and_updated(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "SITE_OUTPUTS", (*outputs.SITE_OUTPUTS, CaddyRedirects()))
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    caddy = config.output / "_ibistatic" / "Caddyfile"
    lines = caddy.read_text(encoding="utf-8").splitlines()
    assert (
        "redir /8JMKD3MGP8W/35MMLL8 "
        "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf 302"
        in lines
    )
    assert len(lines) == (config.output / "sitemap.xml").read_text(encoding="utf-8").count(
        "<loc>"
    )  # every redirect
    assert build_site(config).written == 0  # same bytes: not written again
    archive = tmp_path / "archives" / "mtc-m16d"
    withdrawn = next(
        p
        for p in sorted(archive.rglob("item.yaml"))
        if "state: Original" in p.read_text(encoding="utf-8")
    )
    gone = withdrawn.parent.relative_to(archive).as_posix()
    assert any(line.startswith(f"redir /{gone} ") for line in lines)
    withdrawn.write_text(
        withdrawn.read_text(encoding="utf-8").replace("state: Original", "state: Deleted"),
        encoding="utf-8",
    )
    report = build_site(config)
    assert report.mode.startswith("update of 1 changed")
    updated = snapshot(config.output)
    assert not any(
        line.startswith(f"redir /{gone} ")
        for line in updated["_ibistatic/Caddyfile"].decode().splitlines()
    )
    build_site(config, full=True)
    assert snapshot(config.output) == updated


def test_an_unregistered_output_is_removed_by_the_next_update(tmp_path, monkeypatch):
    config = load_config(make_project(tmp_path))
    with monkeypatch.context() as patch:
        patch.setattr(outputs, "SITE_OUTPUTS", (*outputs.SITE_OUTPUTS, CaddyRedirects()))
        build_site(config, full=True)
    assert (config.output / "_ibistatic" / "Caddyfile").is_file()
    report = build_site(config)
    assert (report.mode, report.removed) == ("update of 0 changed, 0 affected items", 1)
    assert not (config.output / "_ibistatic" / "Caddyfile").exists()


# -- the plan ---------------------------------------------------------------------------------


def test_the_plan_of_a_first_build_renders_every_item(tmp_path):
    config = load_config(make_project(tmp_path))
    plan = plan_build(load_archives(config.archives, config.site_url), None)
    assert plan.full and plan.describe() == "full"
    assert plan.changed == plan.affected == frozenset(plan.items) and len(plan.items) == 15
    assert list(plan.rendered()) == sorted(plan.items)


def test_the_plan_of_an_update_renders_the_changed_item_and_those_reaching_it(tmp_path):
    config = load_config(make_project(tmp_path))
    publisher = Publisher(config)
    publisher.persist = False
    publisher.build()
    state = publisher.state
    named = sorted(key for key in state.reverse if key in state.items)[0]  # an item others refer to
    item = state.items[named][0][0]
    path = tmp_path / "archives" / item.archive / item.repository.text / "item.yaml"
    descriptor = yaml.safe_load(path.read_text(encoding="utf-8"))
    descriptor["timestamp"] = "2030-01-01T00:00:00Z"
    path.write_text(yaml.safe_dump(descriptor, allow_unicode=True), encoding="utf-8")
    plan = plan_build(load_archives(config.archives, config.site_url), state)
    assert not plan.full
    assert plan.changed == {named}
    assert state.reverse[named] <= plan.affected and named in plan.affected
    assert plan.affected < frozenset(plan.items)  # not every item: an update
    assert plan.describe() == f"update of 1 changed, {len(plan.affected)} affected items"


# -- the store --------------------------------------------------------------------------------


def test_files_write_only_what_changed_and_the_first_of_each_path(tmp_path):
    old = {
        "same.html": digest(b"same"),
        "changed.html": digest(b"before"),
        "shard.json": digest(b"{}"),
    }
    files = Files(old)
    assert files.put(File("same.html", "same"))
    assert files.put(File("changed.html", "after"))
    assert not files.put(File("changed.html", "a second writer loses"))
    assert files.put(File("shard.json", kept=True))
    assert files.put(File("big.txt", lines=iter(["a", "b"])))
    assert files.files == {"changed.html": b"after", "big.txt": b"a\nb\n"}
    assert files.written == 2
    assert (
        files.digests["shard.json"] == old["shard.json"]
        and len(files.digests["big.txt"]) == DIGEST_SIZE
    )
    assert files.removed() == []


def test_files_go_straight_to_disk_when_direct(tmp_path):
    files = Files({}, tmp_path)
    files.put(File("a/b/index.html", "page"))
    files.put(File("host.txt", lines=(str(n) for n in range(25000))))
    assert files.files == {} and files.written == 2
    assert (tmp_path / "a" / "b" / "index.html").read_text() == "page"
    text = (tmp_path / "host.txt").read_bytes()
    assert text.count(b"\n") == 25000 and files.digests["host.txt"] == digest(text)


def test_a_path_out_of_the_site_is_refused_whatever_the_output(tmp_path, monkeypatch):
    class Escaping:
        name, pages, remembered = "escaping", False, False

        def files(self, plan, context):
            yield File("../outside.txt", "x")

    monkeypatch.setattr(outputs, "SITE_OUTPUTS", (Escaping(),))
    config = load_config(make_project(tmp_path))
    with pytest.raises(IbistaticError) as error:
        build_site(config, full=True)
    assert "refusing to write '../outside.txt': expected a path inside the site" in str(error.value)
    assert not (tmp_path / "outside.txt").exists() and not config.output.exists()


# -- the layering -----------------------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    """The ibistatic packages (first name under ibistatic) a module imports."""
    module = path.relative_to(ROOT).with_suffix("").parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = module[: len(module) - node.level]
            parts = (*base, *(node.module or "").split(".")) if node.module else base
            names = [parts] if node.module else [(*base, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ibistatic"):
            names = [tuple(node.module.split("."))]
        elif isinstance(node, ast.Import):
            names = [
                tuple(alias.name.split("."))
                for alias in node.names
                if alias.name.startswith("ibistatic.")
            ]
        else:
            continue
        found.update(name[1] for name in names if len(name) > 1)
    return found


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        package = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        graph.setdefault(package, set()).update(_imports(path) - {package})
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, frontier = set(), [start]
    while frontier:
        for following in graph.get(frontier.pop(), ()):
            if following == goal:
                return True
            if following not in seen:
                seen.add(following)
                frontier.append(following)
    return False


@pytest.mark.parametrize("package", ["site", "catalog", "index", "store", "targets"])
def test_the_build_packages_import_in_one_direction(package):
    graph = _package_graph()
    assert "store" in graph["catalog"] and "targets" in graph["index"]  # the graph is read
    assert not _reaches(graph, package, package), (
        f"{package} imports itself through {sorted(graph[package])}"
    )


def test_the_store_knows_no_page_index_or_catalog():
    assert _package_graph()["store"] <= {"config", "errors", "forked"}


def test_the_pipeline_modules_stay_small():
    """Modules of the build pipeline (its outputs included) under 400 lines, functions
    under 50."""
    paths = [*(PACKAGE / "site").rglob("*.py"), *(PACKAGE / "store").rglob("*.py")]
    long_modules = [p.name for p in paths if len(p.read_text().splitlines()) > 400]
    long_functions = [
        f"{p.name}:{node.name}"
        for p in paths
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > 50
    ]
    assert (long_modules, long_functions) == ([], [])


# -- scripts/site_hash.py ---------------------------------------------------------------------


def _site_hash():
    spec = importlib.util.spec_from_file_location("site_hash", ROOT / "scripts" / "site_hash.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_site_hash_follows_the_output_link_and_sees_every_byte(tmp_path, capsys):
    site_hash = _site_hash()
    config = load_config(make_project(tmp_path))
    build_site(config, full=True)
    assert config.output.is_symlink()
    digest_before, count = site_hash.tree_hash(config.output)
    assert count == len(snapshot(config.output)) > 100
    build_site(config, full=True)  # another generation, the same bytes
    assert site_hash.tree_hash(config.output) == (digest_before, count)
    page = config.output / "index.html"
    page.write_bytes(page.read_bytes() + b" ")
    assert site_hash.tree_hash(config.output)[0] != digest_before
    assert site_hash.main([str(config.output)]) == 0
    assert capsys.readouterr().out.endswith(f" {count} files\n")
    assert site_hash.main([str(tmp_path / "missing")]) == 2


# -- configuration ------------------------------------------------------------------------------


def test_redirect_files_is_an_unknown_key_again(tmp_path):
    path = make_project(tmp_path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    path.write_text(yaml.safe_dump({**raw, "redirect-files": ["netlify"]}), encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"redirect-files: an unknown key; expected one of site-url, "
    ):
        load_config(path)  # the key was accepted and never used; now named as unknown
