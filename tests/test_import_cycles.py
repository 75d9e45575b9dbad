"""The package tree has no import cycles, its rooms stand on floors, and Prefect stays in
``flows/``.

Imports are read with ``ast`` (nothing is imported). An edge M -> X is any ``import`` or
``from ... import`` in M, at module level or inside a function (a lazy import that closes a
loop is still a loop: it works only while nobody calls the function during the other
module's loading, and it hides which module is the lower layer). The one exemption is an
import under ``if TYPE_CHECKING:``, which never runs.

Importing ``a.b.c`` loads ``a`` and ``a.b`` first, so the edge also goes to those packages,
except to a package that contains M itself when M only reaches through it to a submodule (it
is already loading when M loads). A module that imports a name from its own package
(``from rotbench.x import name`` inside ``rotbench/x/``) reads that package's ``__init__``,
which is what imports M: that edge counts.

One floor up, every module belongs to its room: the top-level folder or module under
``rotbench/`` (``rotbench.engines.adapters.mem0.engine`` is in ``rotbench.engines``), or
``flows``. The rooms' module-level imports must form no cycle: two rooms that need each other
at import time are one room in two folders. Those imports put the rooms on floors; an import
from a room to a room above it (one that needs it, directly or not) runs back up. At most
``MAX_BACK_UP`` may, and only under ``if TYPE_CHECKING:``; a lazy import never does (none is
listed in ``LAZY_BACK_UP``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rotbench", "flows")
SHARED_PRIVATE = "rotbench._util"
"""rotbench's private helpers: any module of rotbench/ or flows/ may import them."""
MAX_BACK_UP = 4
"""Most imports that may run back up between rooms (each type-only)."""
LAZY_BACK_UP: set[str] = set()
"""The lazy imports (inside a function) known to run back up between rooms, as
``module -> imported module``. A new one fails the test; a fixed one must leave the list."""


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


def room_of(module: str) -> str:
    """The room a module belongs to: ``flows``, ``rotbench`` (the package module itself) or
    ``rotbench.<top-level folder or module>``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "rotbench" else parts[0]


def import_edges(kinds: frozenset[str] = frozenset({"module", "lazy"})
                 ) -> list[tuple[str, str, str]]:
    """Every direct import over rotbench/ and flows/ as ``(module, imported module, kind)``,
    kind 'module' (runs when the module loads), 'lazy' (inside a function) or 'type' (under
    ``if TYPE_CHECKING:``); only the kinds in ``kinds``. The imported module is the one the
    statement names (its parent packages are left out: they are in the importer's room or
    the importer's room needs them anyway)."""
    modules = _modules()
    out: list[tuple[str, str, str]] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        typed = {id(n) for node in ast.walk(tree)
                 if isinstance(node, ast.If) and _is_type_checking(node)
                 for stmt in node.body for n in ast.walk(stmt)}
        loading = {id(n) for n in _module_level(tree)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            kind = "type" if id(node) in typed else "module" if id(node) in loading else "lazy"
            if kind not in kinds:
                continue
            one = ast.Module(body=[node], type_ignores=[])
            out.extend((name, target, kind) for target in dict.fromkeys(
                _imports(one, name, path.name == "__init__.py", set(modules)))
                if target in modules)
    return out


def room_graph(edges: list[tuple[str, str, str]]) -> dict[str, dict[str, list[str]]]:
    """``{room: {room it imports: ['module -> imported module', ...]}}``; imports within a
    room and of the ``rotbench`` package module (which imports nothing) are left out."""
    graph: dict[str, dict[str, list[str]]] = {}
    for module, target, _kind in edges:
        here, there = room_of(module), room_of(target)
        graph.setdefault(here, {})
        if there not in (here, "rotbench"):
            graph[here].setdefault(there, []).append(f"{module} -> {target}")
    return graph


def _above(graph: dict[str, dict[str, list[str]]], room: str) -> set[str]:
    """The rooms that need ``room`` (import it, directly or through other rooms)."""
    needs: dict[str, set[str]] = {}
    for here, theirs in graph.items():
        for there in theirs:
            needs.setdefault(there, set()).add(here)
    seen: set[str] = set()
    todo = [room]
    while todo:
        for up in needs.get(todo.pop(), ()):
            if up not in seen:
                seen.add(up)
                todo.append(up)
    return seen


def back_up(edges: list[tuple[str, str, str]],
            floors: dict[str, dict[str, list[str]]]) -> list[tuple[str, str, str]]:
    """The imports in ``edges`` that run from a room to a room above it on ``floors`` (a
    room graph of module-level imports)."""
    return [(m, x, k) for m, x, k in edges
            if room_of(x) not in (room_of(m), "rotbench") and room_of(x) in _above(floors,
                                                                                room_of(m))]


def floor_count(graph: dict[str, dict[str, list[str]]]) -> int:
    """How many floors an acyclic room graph stands on (its longest chain of rooms)."""
    memo: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in memo:
            memo[room] = 1 + max((floor(r) for r in graph.get(room, {})), default=0)
        return memo[room]

    return max(floor(room) for room in graph)


def _cycle_report(graph: dict[str, dict[str, list[str]]]) -> str:
    """Each cycle of ``graph`` with the imports that make it, one per line."""
    lines = []
    for group in cycles({k: set(v) for k, v in graph.items()}):
        lines.append("cycle: " + ", ".join(group))
        lines += [f"  {edge}" for here in group for there, found in graph[here].items()
                  if there in group for edge in found]
    return "\n".join(lines)


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
    found = cycles(graph)
    report = "\n".join(f"cycle: {', '.join(group)}\n" + "\n".join(
        f"  {m} -> {x}" for m in group for x in sorted(graph[m]) if x in group)
        for group in found)
    assert not found, report


def test_no_room_cycle_at_module_level() -> None:
    graph = room_graph(import_edges(frozenset({"module"})))
    assert len(graph) > 15 and "rotbench.engines" in graph  # every room was read
    assert not any(room.startswith("rotbench.engines.") for room in graph)
    assert not cycles({k: set(v) for k, v in graph.items()}), _cycle_report(graph)


def test_imports_running_back_up_are_few_and_type_only() -> None:
    floors = room_graph(import_edges(frozenset({"module"})))
    every = import_edges(frozenset({"module", "lazy", "type"}))
    up = back_up(every, floors)
    lazy = {f"{m} -> {x}" for m, x, k in up if k == "lazy"}
    typed = [f"{m} -> {x}" for m, x, k in up if k == "type"]
    assert [(m, x) for m, x, k in up if k == "module"] == []  # none without a cycle
    assert lazy == LAZY_BACK_UP, (
        "lazy imports running back up between rooms, new: " + ", ".join(sorted(
            lazy - LAZY_BACK_UP)) + "; gone (take them off LAZY_BACK_UP): " + ", ".join(
            sorted(LAZY_BACK_UP - lazy)))
    assert len(typed) <= MAX_BACK_UP, "type-only imports running back up: " + ", ".join(typed)


def floors_picture() -> str:
    """The rooms on their floors, top floor first, as docs/contributing.md draws them."""
    graph = room_graph(import_edges(frozenset({"module"})))
    memo: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in memo:
            memo[room] = 1 + max((floor(r) for r in graph.get(room, {})), default=0)
        return memo[room]

    rooms = {room_of(m) for m in _modules()} - {"rotbench"}
    by_floor: dict[int, list[str]] = {}
    for room in rooms:
        by_floor.setdefault(floor(room), []).append(room.removeprefix("rotbench."))
    return "\n".join(f"floor {n}  " + "  ".join(sorted(by_floor[n]))
                     for n in sorted(by_floor, reverse=True))


def test_the_contributing_page_draws_the_floors_of_the_code() -> None:
    page = (ROOT / "docs" / "contributing.md").read_text()
    drawn = page.split("### The rooms on their floors", 1)[1].split("```text\n", 1)[1]
    drawn = drawn.split("\n```", 1)[0]
    assert drawn == floors_picture(), "docs/contributing.md should draw:\n" + floors_picture()


def test_rooms_count_every_package_by_its_top_level_folder() -> None:
    assert room_of("rotbench.engines.adapters.recorded_estimate") == "rotbench.engines"
    assert room_of("rotbench.engines.host.guarded") == "rotbench.engines"
    assert room_of("rotbench.run.spec") == "rotbench.run"
    assert room_of("flows.world") == "flows"
    edges = [("a.x", "b.y", "module"), ("rotbench.p.m", "rotbench.q.n.o", "module"),
             ("rotbench.q.n.o", "rotbench.p", "lazy"), ("rotbench.q.z", "rotbench.p.m", "type")]
    graph = room_graph([e for e in edges if e[2] == "module"])
    assert graph["rotbench.p"] == {"rotbench.q": ["rotbench.p.m -> rotbench.q.n.o"]}
    assert back_up(edges, graph) == [("rotbench.q.n.o", "rotbench.p", "lazy"),
                                     ("rotbench.q.z", "rotbench.p.m", "type")]
    assert floor_count(graph) == 2


def test_a_room_cycle_is_reported_with_its_imports() -> None:
    graph = room_graph([("rotbench.a.m", "rotbench.b.n", "module"),
                        ("rotbench.b.n", "rotbench.a.k", "module")])
    assert _cycle_report(graph) == ("cycle: rotbench.a, rotbench.b\n"
                                    "  rotbench.a.m -> rotbench.b.n\n"
                                    "  rotbench.b.n -> rotbench.a.k")


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
            if owner == here or source == SHARED_PRIVATE or \
                    source.startswith(SHARED_PRIVATE + "."):
                continue
            private = [a.name for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") for part in source.split(".")) or private:
                found.append(f"{name} <- {source}{'.' + ','.join(private) if private else ''}")
    return sorted(found)


def test_no_private_name_is_used_across_packages() -> None:
    assert private_imports_across_packages() == []
