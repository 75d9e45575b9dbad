"""The plug-in surface: ``rotbench.plugin`` is all an engine author imports; the old path
``rotbench.engine.protocol`` (deprecated for one release) is gone."""

# layout-codemod: skip (this file names the old paths on purpose)

from __future__ import annotations

import ast
from pathlib import Path

import rotbench.plugin as plugin
from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, MemoryEngine
from rotbench.contract.perception import Checker, ClaimDraft, Judgement
from rotbench.contract.registry import EngineInfo

ROOT = Path(__file__).resolve().parents[1]


def test_plugin_names_are_the_definitions() -> None:
    assert (plugin.Document, plugin.Hit, plugin.MemoryEngine, plugin.EngineContext,
            plugin.EngineInfo, plugin.ClaimDraft, plugin.Checker, plugin.Judgement) == (
        Document, Hit, MemoryEngine, EngineContext, EngineInfo, ClaimDraft, Checker, Judgement)
    assert sorted(plugin.__all__) == sorted(n for n in vars(plugin) if not n.startswith("_")
                                            and n not in {"annotations"})


def test_examples_import_only_the_plugin_module() -> None:
    imported = set()
    for path in sorted((ROOT / "examples").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    assert {m for m in imported if m.split(".")[0] == "rotbench"} == {"rotbench.plugin"}


def test_old_protocol_path_is_gone() -> None:
    """The deprecated ``rotbench.engine`` shim is no module of the package any more (read
    from the package's folder: an editable install elsewhere may still map the old path)."""
    import pkgutil

    import rotbench

    assert "engine" not in {m.name for m in pkgutil.iter_modules(rotbench.__path__)}
    assert {m.name for m in pkgutil.iter_modules(rotbench.__path__)} >= {"plugin", "engines"}
