"""The package tree has no import cycles, and Prefect stays in ``flows/`` (issue 25).

Imports are read with ``ast`` (nothing is imported). An edge M -> X is any ``import`` or
``from ... import`` in M, at module level or inside a function (a lazy import that closes a
loop is still a loop: it works only while nobody calls the function during the other
module's loading, and it hides which module is the lower layer). The one exemption is an
import under ``if TYPE_CHECKING:``, which never runs.

Importing ``a.b.c`` loads ``a`` and ``a.b`` first, so the edge also goes to those packages,
except to a package that contains M itself (it is already loading when M loads).
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


def _imports(tree: ast.Module, module: str, is_package: bool) -> list[str]:
    """Dotted names imported anywhere in the module but under ``if TYPE_CHECKING:``."""
    package = module if is_package else module.rpartition(".")[0]
    skipped = {id(n) for node in ast.walk(tree)
               if isinstance(node, ast.If) and _is_type_checking(node)
               for stmt in node.body for n in ast.walk(stmt)}
    out: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            out.append(base)
            out.extend(f"{base}.{a.name}" for a in node.names)
    return out


def import_graph() -> dict[str, set[str]]:
    """``{module: {modules it imports directly}}`` over rotbench/ and flows/."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for target in _imports(tree, name, path.name == "__init__.py"):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                    edges.add(prefix)
        graph[name] = edges
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


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_only_flows_and_the_cli_import_prefect() -> None:
    offenders = []
    for name, path in _modules().items():
        if name.startswith(("flows", "rotbench.cli")):
            continue
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
