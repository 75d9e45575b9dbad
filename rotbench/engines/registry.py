"""The engine registry: which engines rotbench can run, found without importing them.

An engine is registered by a Python entry point in the group ``rotbench.engines`` whose
object is an ``EngineInfo`` (a small, import-light description naming the factory as a
``"module:callable"`` string), so a third-party package registers its engine from its own
``pyproject.toml``:

    [project.entry-points."rotbench.engines"]
    my-engine = "my_package.rotbench_plugin:INFO"

The factory module is imported only when that engine is chosen. Besides registered names,
``--engine module:factory`` names a factory importable from the working directory.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.metadata as md
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rotbench.contract.registry import ENTRY_POINT_GROUP, EngineError, EngineInfo
from rotbench.engines.source import parse_module, source_digest


def registered() -> dict[str, EngineInfo]:
    """Every engine registered through entry points, by name (sorted). Entry points whose
    object is not an ``EngineInfo`` are skipped. Imports only the entry points' own modules."""
    found: dict[str, EngineInfo] = {}
    for ep in _entry_points(tuple(sys.path)):
        try:
            info = ep.load()
        except Exception:  # noqa: BLE001 - a broken plug-in must not hide the others
            continue
        if isinstance(info, EngineInfo):
            found[ep.name] = info
    return dict(sorted(found.items()))


@functools.lru_cache(maxsize=4)
def _entry_points(path: tuple[str, ...]) -> tuple:
    """The engine entry points seen on ``path`` (``sys.path``): reading them scans every
    installed distribution's metadata, and a run resolves its engines several times, so it is
    done once per ``sys.path``."""
    return tuple(md.entry_points(group=ENTRY_POINT_GROUP))


def resolve(name: str) -> EngineInfo:
    """The ``EngineInfo`` for ``--engine NAME``: a registered name, or ``module:factory``
    importable from the working directory (its version is then taken from the built engine,
    and the digest of its source files keys the cache, so an edited engine is re-run:
    ``rotbench.engines.source``).

    Raises EngineError: unknown name (with the closest names), a module that cannot be found,
    or a registered engine whose extra is not installed.
    """
    engines = registered()
    base, _, variant = name.partition(":")
    if name in engines or (variant and base in engines and engines[base].parametric):
        info = engines[base] if variant else engines[name]
        if not info.installed:
            hint = f"pip install 'rotbench[{info.extra}]'" if info.extra else (
                "pip install " + " ".join(info.requires))
            raise EngineError(f"engine {name!r} is not installed: {hint}")
        if info.parametric and not variant:
            raise EngineError(f"engine {name!r} needs a variant: --engine {name}:NAME")
        if variant:
            if not all(c.isalnum() or c in "-_." for c in variant):
                raise EngineError(f"engine {name!r}: bad variant {variant!r} (letters, digits, "
                                  "'-', '_' and '.' only)")
            return info.model_copy(update={"name": name, "variant": variant})
        return info
    if ":" in name:
        module, _, attr = name.partition(":")
        if not module or not attr:
            raise EngineError(f"--engine {name!r}: expected module:factory")
        if str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        try:
            digest = source_digest(module)
        except (ImportError, ValueError):
            digest = None
        if importlib.util.find_spec(module.split(".")[0]) is None:
            raise EngineError(f"--engine {name!r}: module {module!r} not found "
                              "(it must be importable from the working directory)")
        if digest is None:  # found, but no source file: built into Python (os, sys)
            raise EngineError(f"--engine {name!r}: module {module!r} has no source file "
                              "(a module built into Python?); --engine takes a module of your "
                              "own, importable from the working directory")
        return EngineInfo(name=name, version="unversioned", factory=name, takes="claims",
                          summary="a factory given on the command line (it may read perceived "
                          "claims, so an estimate counts the extraction)",
                          source_sha256=digest)
    close = difflib.get_close_matches(name, list(engines), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise EngineError(f"unknown engine {name!r} ({hint}available: {', '.join(engines)}; "
                      "or give module:factory)")


def _module_roots(module: str) -> tuple[Path, ...]:
    """The engine's own files for a module that may not have finished importing: its file
    (or its package's folder) found without importing it."""
    from rotbench.engines.trace import engine_roots

    roots = engine_roots(module)
    if roots:
        return roots
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        return ()
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return ()
    origin = Path(spec.origin).resolve()
    return (origin.parent,) if origin.name == "__init__.py" else (origin,)


def load_factory(info: EngineInfo) -> Callable[..., Any]:
    """Import and return the factory named by ``info.factory``. Raises EngineError."""
    module, _, attr = info.factory.partition(":")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        factory = getattr(importlib.import_module(module), attr)
    except BaseException as exc:  # noqa: BLE001 - user code: one line whatever it raised
        if isinstance(exc, KeyboardInterrupt):
            raise
        from rotbench._util.safe_text import printable, safe_str, type_name
        from rotbench.engines.trace import engine_trace

        where, trace = engine_trace(exc, _module_roots(module))
        at = f" at {printable(where, 300)}" if where else ""
        raise EngineError(f"engine {printable(info.name, 60)}: cannot load "
                          f"{printable(info.factory, 120)} ({type_name(exc)}: "
                          f"{safe_str(exc)}{at})", trace=trace) from None
    if not callable(factory):
        raise EngineError(f"engine {info.name!r}: {info.factory!r} is not callable")
    return factory


_LITERALS = ("Constant", "List", "Tuple", "Dict", "Set", "JoinedStr", "ListComp", "DictComp",
             "SetComp", "BinOp")


def _top_level_names(body: list) -> tuple[dict[str, bool], bool]:
    """Names a module binds at its top level -> whether they may be callable (False only for
    a name bound to nothing but literal values), and whether it may bind names this cannot
    see (``from x import *``, a module ``__getattr__``, ``globals()`` writes)."""
    import ast

    names: dict[str, bool] = {}
    dynamic = False

    def bind(name: str, maybe_callable: bool) -> None:
        names[name] = names.get(name, False) or maybe_callable

    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bind(node.name, True)
            dynamic |= node.name == "__getattr__"
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value_is_literal = type(node.value).__name__ in _LITERALS
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        bind(leaf.id, not value_is_literal)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    dynamic = True
                else:
                    bind(alias.asname or alias.name.split(".")[0], True)
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
            inner = [*getattr(node, "body", []), *getattr(node, "orelse", []),
                     *getattr(node, "finalbody", [])]
            for handler in getattr(node, "handlers", []):
                inner.extend(handler.body)
            sub, more = _top_level_names(inner)
            for name, maybe in sub.items():
                bind(name, maybe)
            dynamic |= more
        elif isinstance(node, ast.Expr) and "globals" in ast.dump(node):
            dynamic = True
    return names, dynamic





def check_factory(name: str) -> None:
    """Before any work: for ``--engine module:factory``, read the module's source (without
    running it) and check that it parses, that it defines ``factory`` (else the closest
    names it does define: "did you mean ...?") and that ``factory`` is not bound to a plain
    value (a number, a string, a list: not callable). A registered engine is not checked
    here (its factory is rotbench's or its package's). Raises EngineError, one line naming
    the module's file (and line, for a syntax error)."""

    info = resolve(name)
    if info.source_sha256 is None or info.factory != name:
        return
    module, _, attr = name.partition(":")
    spec = importlib.util.find_spec(module)
    origin = Path(spec.origin)  # resolve() checked it is a file
    try:
        tree = parse_module(origin.read_bytes(), str(origin))
    except SyntaxError as exc:
        raise EngineError(f"{name!r}: {origin}:{exc.lineno}: {exc.msg} (the module "
                          "cannot be imported)") from None
    except (OSError, ValueError) as exc:
        raise EngineError(f"{name!r}: cannot read {origin} ({exc})") from None
    names, dynamic = _top_level_names(tree.body)
    if attr in names:
        if not names[attr]:
            raise EngineError(f"{name!r}: {origin}: {attr!r} is a plain value, not a "
                              "callable factory (a function taking an EngineContext)")
        return
    if dynamic:
        return
    candidates = [n for n, maybe in names.items() if maybe and not n.startswith("_")]
    close = difflib.get_close_matches(attr, candidates, n=1, cutoff=0.6)
    hint = f"; did you mean {module}:{close[0]}?" if close else (
        f"; it defines {', '.join(sorted(candidates)[:8])}" if candidates else "")
    raise EngineError(f"{name!r}: {origin} defines no {attr!r}{hint}")
