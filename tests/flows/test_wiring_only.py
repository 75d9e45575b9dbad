"""flows/ is Prefect's wiring only: the run's decisions (which stage runs for which engine,
under which cache key and perception stamp) are made in ``rotbench/run/``, which imports no
Prefect, and the flow bodies read as the pipeline (issue 58)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECIDING_MODULES = {
    "hashlib", "hmac",  # a key or a checksum computed in flows/
    "rotbench.run.keys", "rotbench.pipeline.keys",  # the key builders
    "rotbench.engines.registry",  # which engine, and so which stages
    "rotbench.reference.config",  # the engine configuration a key names
    "rotbench.perception.oracle",  # the scripted perception's stamps
}
DECIDING_NAMES = {"STAGES", "ENGINE_STAGES", "keys", "world_key", "perception_stamps",
                  "engine_stages", "content_hash", "model_hash"}
MAX_BODY_LINES = 40


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every import in the file, at any depth (name None: ``import m``)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found += [(node.module or "", a.name) for a in node.names]
    return found


def _function(path: Path, name: str) -> ast.AsyncFunctionDef | ast.FunctionDef:
    tree = ast.parse(path.read_text(), str(path))
    [found] = [n for n in ast.walk(tree)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return found


def _body_lines(fn: ast.AsyncFunctionDef | ast.FunctionDef) -> int:
    """Lines of the body, the docstring left out."""
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(
        fn.body[0].value, ast.Constant) else fn.body
    return body[-1].end_lineno - body[0].lineno + 1


def _names(fn: ast.AST) -> set[str]:
    """Every name the function's code reads (``x`` and ``m.x`` both give ``x``)."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(fn)
            if isinstance(n, (ast.Name, ast.Attribute))}


def test_flows_compute_no_key_and_choose_no_stage() -> None:
    offenders = []
    for path in sorted((ROOT / "flows").glob("*.py")):
        for module, name in _imports(path):
            if module in DECIDING_MODULES or (module, name) in {
                    ("rotbench.run", "keys"), ("rotbench.pipeline", "keys")} \
                    or name in DECIDING_NAMES:
                offenders.append(f"{path.name}: {module} {name or ''}".strip())
    assert offenders == []


def test_the_run_room_imports_no_prefect_and_no_flows() -> None:
    modules = sorted((ROOT / "rotbench" / "run").glob("*.py"))
    assert {p.stem for p in modules} >= {"spec", "plan", "keys", "outcome", "record"}
    offenders = [f"{p.name}: {m}" for p in modules for m, _ in _imports(p)
                 if m.split(".")[0] in {"prefect", "prefect_dask", "flows"}]
    assert offenders == []


def test_the_flow_bodies_are_short_and_read_the_plan() -> None:
    world = _function(ROOT / "flows" / "world.py", "world_task")
    parent = _function(ROOT / "flows" / "rot_benchmark.py", "rot_benchmark")
    assert _body_lines(world) <= MAX_BODY_LINES
    assert _body_lines(parent) <= MAX_BODY_LINES
    assert "world_engines" in _names(world)  # the world's plan: stages, keys, stamps
    assert {"guard_budget", "warm_up", "batch_extract", "real_pairs",
            "write_reports"} <= _names(parent)
    assert [a.arg for a in parent.args.args] == ["spec", "started_unix"]
