"""No two modules of ibistatic import each other, nor do two of its packages.

A cycle hides which module is the lower one: neither can be read, tested or replaced
without the other.  Every import statement counts, wherever it is (inside a function,
under ``TYPE_CHECKING``): an import moved into a function still ties the two modules
together, it only postpones the error.  The graph is read from the source (``ast``),
so nothing is imported to check it.

Packages: each subpackage of ``ibistatic`` (``web``, ``federation``, ``core``, ...) and
each top-level module (``resolver``, ``serve``, ...) is one node; ``federation`` builds
on ``web`` (an Archive's side of the network extends the Archive service, the resolver
checks request targets as the server does), never the other way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ibistatic"


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of `known` that the module `name` (at `path`) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                # `from .web import app` imports the module web.app; `from .app import X`, app
                whole = f"{source}.{alias.name}"
                targets.add(whole if whole in known else source)
    return {target for target in targets if target in known and target != name}


def import_graph(known: Mapping[str, Path]) -> dict[str, set[str]]:
    return {name: imported(name, path, known) for name, path in known.items()}


def package_of(module: str) -> str:
    """``ibistatic.web.app`` -> ``ibistatic.web``; ``ibistatic.serve`` stays itself."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        mine = package_of(module)
        packages.setdefault(mine, set()).update(
            package_of(target) for target in targets if package_of(target) != mine
        )
    return packages


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def explain(component: list[str], graph: Mapping[str, set[str]]) -> str:
    members = set(component)
    edges = [
        f"  {source} -> {target}"
        for source in component
        for target in sorted(graph[source] & members)
    ]
    return " <-> ".join(component) + "\n" + "\n".join(edges)


def test_no_module_imports_itself_through_others():
    graph = import_graph(modules())
    found = cycles(graph)
    assert not found, "import cycles between modules:\n" + "\n".join(
        explain(component, graph) for component in found
    )


def test_no_package_imports_itself_through_others():
    graph = import_graph(modules())
    found = cycles(package_graph(graph))
    assert not found, "import cycles between packages:\n" + "\n".join(
        " <-> ".join(component)
        + "".join(
            f"\n  {module} -> {target}"
            for package in component
            for module, target in _edges(graph, package)
            if package_of(target) in component
        )
        for component in found
    )


def _edges(graph: Mapping[str, set[str]], package: str) -> list[tuple[str, str]]:
    """The imports of modules of `package` from modules of other packages."""
    return sorted(
        (module, target)
        for module, targets in graph.items()
        if package_of(module) == package
        for target in targets
        if package_of(target) != package
    )


def test_web_does_not_import_the_federation():
    graph = import_graph(modules())
    wrong = [
        f"{module} -> {target}"
        for module, target in _edges(graph, "ibistatic.web")
        if package_of(target) == "ibistatic.federation"
    ]
    assert not wrong, "web/ imports federation/:\n" + "\n".join(wrong)


def test_the_check_sees_a_cycle(tmp_path):
    """The reading of imports finds what it must: relative imports of every level, an
    import inside a function, ``from . import module``."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from .sub import high\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "high.py").write_text("from .. import low\n")
    (package / "sub" / "other.py").write_text("from ..low import f\nfrom .high import g\n")
    graph = import_graph(modules(package))
    assert graph["pkg.sub.other"] == {"pkg.low", "pkg.sub.high"}
    assert cycles(graph) == [["pkg.low", "pkg.sub.high"]]
    assert cycles(package_graph(graph)) == [["pkg.low", "pkg.sub"]]
