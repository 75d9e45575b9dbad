"""The package tree has no import cycles, and Prefect stays in ``flows/`` (issue 25).

Imports are read with ``ast`` (nothing is imported). An edge M -> X is any ``import`` or
``from ... import`` in M, at module level or inside a function (a lazy import that closes a
loop is still a loop: it works only while nobody calls the function during the other
module's loading, and it hides which module is the lower layer). The one exemption is an
import under ``if TYPE_CHECKING:``, which never runs.

Importing ``a.b.c`` loads ``a`` and ``a.b`` first, so the edge also goes to those packages,
except to a package that contains M itself when M only reaches through it to a submodule (it
is already loading when M loads). A module that imports a name from its own package
(``from rotbench.x import name`` inside ``rotbench/x/``) reads that package's ``__init__``,
which is what imports M: that edge counts (issue 41: it hid a loop of five modules).

A second test reads the same graph one floor up: packages, module-level imports only. A
package that needs another only inside a function is allowed (the lazy import is then the
one place the layering bends), but two packages that need each other at import time are one
package in two folders.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rotbench", "flows")


def _modules() -> dict[str, Path]:
    found = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module, module: str, is_package: bool, modules: set[str],
             module_level_only: bool = False) -> list[str]:
    """Dotted names imported in the module but under ``if TYPE_CHECKING:`` (anywhere, or at
    module level only). ``from p import n`` gives ``p.n`` when that is a module, else ``p``
    itself (the names come from ``p``'s ``__init__``)."""
    package = module if is_package else module.rpartition(".")[0]
    skipped = {id(n) for node in ast.walk(tree)
               if isinstance(node, ast.If) and _is_type_checking(node)
               for stmt in node.body for n in ast.walk(stmt)}
    nodes = _module_level(tree) if module_level_only else ast.walk(tree)
    out: list[str] = []
    for node in nodes:
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append(sub if sub in modules else base)
    return out


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """The statements that run when the module is imported: the body, into ``if``/``try``
    blocks, but not into functions or classes' methods."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            todo.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.ClassDef):
            todo.extend(n for n in node.body if not isinstance(n, ast.FunctionDef))
    return out


def import_graph(module_level_only: bool = False) -> dict[str, set[str]]:
    """``{module: {modules it imports directly}}`` over rotbench/ and flows/.

    An import of ``a.b.c`` is an edge to ``a.b.c`` and to the packages ``a`` and ``a.b`` that
    load first, except to a package of the importer's own (already loading); but an import of
    the importer's own package itself (``from a.b import name`` in ``a/b/m.py``) counts."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for target in _imports(tree, name, path.name == "__init__.py", set(modules),
                               module_level_only):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix not in modules or prefix == name:
                    continue
                if name.startswith(prefix + ".") and prefix != target:
                    continue
                edges.add(prefix)
        graph[name] = edges
    return graph


def package_graph() -> dict[str, set[str]]:
    """``{package: {packages its modules import at module level}}``: a module's package is
    the folder it sits in (``rotbench.perception.model._wiring`` -> ``rotbench.perception.
    model``); a package's ``__init__`` belongs to the package itself. Edges to a package's
    own ancestors are left out (importing ``a.b.c`` always loads ``a``)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph(module_level_only=True).items():
        here = _package_of(module, modules)
        edges = graph.setdefault(here, set())
        for target in targets:
            there = _package_of(target, modules)
            if there != here and not here.startswith(there + "."):
                edges.add(there)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the whole tree was read
    assert cycles(graph) == []


def test_no_package_cycle_at_module_level() -> None:
    graph = package_graph()
    assert len(graph) > 20  # every package was read
    assert cycles(graph) == []


def test_importing_the_own_package_counts() -> None:
    """The edge the old test left out: a submodule importing a name from its own package."""
    modules = {"p": Path("p/__init__.py"), "p.a": Path("p/a.py"), "p.b": Path("p/b.py")}
    tree = ast.parse("from p import thing\nfrom p import b\n")
    assert _imports(tree, "p.a", False, set(modules)) == ["p", "p.b"]
    lazy = ast.parse("def f():\n    from p import thing\n")
    assert _imports(lazy, "p.a", False, set(modules)) == ["p"]
    assert _imports(lazy, "p.a", False, set(modules), module_level_only=True) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_only_flows_and_the_cli_import_prefect() -> None:
    offenders = []
    for name, path in _modules().items():
        if name.startswith(("flows", "rotbench.cli")) or name == "rotbench.testing.stack":
            continue  # rotbench.testing.stack: test support that drives a Prefect deployment
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and
                     not node.level else [])
            offenders += [f"{name}: {n}" for n in names
                          if n.split(".")[0] in {"prefect", "prefect_dask", "flows"}]
    assert offenders == []


def _package_of(module: str, modules: dict[str, Path]) -> str:
    return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]


def private_imports_across_packages() -> list[str]:
    """``module <- source.name`` for every import of a private module or name (leading
    underscore) by a module of another package of rotbench/ or flows/ (within a package,
    private modules are how its ``__init__`` keeps a thin public surface)."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        here = _package_of(name, modules)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            source = node.module
            if source.split(".")[0] not in PACKAGES:
                continue
            owner = source if source in modules and modules[source].name == "__init__.py" \
                else source.rpartition(".")[0]
            if owner == here:
                continue
            private = [a.name for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") for part in source.split(".")) or private:
                found.append(f"{name} <- {source}{'.' + ','.join(private) if private else ''}")
    return sorted(found)


def test_no_private_name_is_used_across_packages() -> None:
    assert private_imports_across_packages() == []
