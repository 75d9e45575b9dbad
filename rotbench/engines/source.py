"""The source digest of a ``--engine module:factory`` engine: what keys its cached stages.

An engine is more than its factory's file: ``my_engine.py`` may import ``helpers.py`` beside
it, or a package its author keeps next to it. Its cached answers stay valid only while
every one of those files is unchanged, so the digest covers the factory's module and every
module it imports, statically and transitively, that lives with it:

- for a top-level module (``my_engine.py``), the modules and packages of its own folder;
- for a module inside a package (``my_pkg.engine``), the modules of that package.

Imports are read from the source with ``ast``, never by importing (nothing of the engine
runs before the run asks for it). A module imported only at run time by a computed name
(``importlib.import_module(name)``) is not seen; neither is a file that is not Python
(a prompt or a table the engine reads): ``docs/engines/your-engine.md`` says so.

A single-file engine's digest is the sha256 of that file, as it was before this module
existed, so caches written then stay valid.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import importlib.util
import threading
from pathlib import Path

MAX_FILES = 500
"""Most files followed from one engine: beyond them the digest covers what was read."""

_INSTALLED = ("site-packages", "dist-packages")


def engine_source_files(module_name: str) -> list[Path]:
    """The engine's own source files, the factory's module first, then the others sorted.

    ``module_name``: the module part of ``module:factory``. Empty when it has no file.
    Raises ImportError or ValueError as ``importlib.util.find_spec`` does for a name that
    cannot be looked up.
    """
    spec = importlib.util.find_spec(module_name)
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return []
    origin = Path(spec.origin).resolve()
    depth = module_name.count(".") + (origin.name == "__init__.py")
    base = origin.parents[depth]  # the folder its top-level module or package lives in
    top = module_name.split(".")[0]
    in_package = "." in module_name or origin.name == "__init__.py"
    if not in_package and any(part in _INSTALLED for part in base.parts):
        return [origin]  # an installed top-level module: its neighbours are not its own
    seen = {origin}
    queue = [(origin, module_name)]
    while queue and len(seen) < MAX_FILES:
        path, name = queue.pop()
        for target in _imported(path, name, spec_is_package=path.name == "__init__.py"):
            head = target.split(".")[0]
            if head == "rotbench" or (in_package and head != top):
                continue  # the harness is versioned in the keys already
            for found in _files_of(base, target):
                if found not in seen:
                    seen.add(found)
                    queue.append((found, _module_of(base, found)))
    return [origin, *sorted(seen - {origin})]


def source_digest(module_name: str) -> str | None:
    """16 hex digits naming the engine's source (``engine_source_files``): the sha256 of
    the file for a one-file engine, else of each file's path (relative to the first's
    folder) and bytes in turn. None when the module has no file."""
    files = engine_source_files(module_name)
    if not files:
        return None
    if len(files) == 1:
        return hashlib.sha256(files[0].read_bytes()).hexdigest()[:16]
    h = hashlib.sha256()
    home = files[0].parent
    for f in files:
        rel = f.relative_to(home) if home in f.parents else f
        h.update(str(rel).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _imported(path: Path, name: str, spec_is_package: bool) -> list[str]:
    """Absolute names of the modules ``path`` (module ``name``) imports, and for ``from X
    import y`` also ``X.y`` (y may be a module). Nothing when it does not parse."""
    try:
        tree = parse_module(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, OSError):
        return []
    package = name if spec_is_package else name.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                parent = ".".join(parts[:len(parts) - (node.level - 1)])
                module = ".".join(p for p in (parent, node.module or "") if p)
            else:
                module = node.module or ""
            if module:
                names.append(module)
            names += [f"{module}.{a.name}" if module else a.name for a in node.names]
    return names


def _files_of(base: Path, dotted: str) -> list[Path]:
    """The files under ``base`` that importing ``dotted`` runs: each package's
    ``__init__.py`` on the way and the module itself (none when it is not there)."""
    found: list[Path] = []
    folder = base
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if not part.isidentifier():
            return found
        package = folder / part / "__init__.py"
        module = folder / f"{part}.py"
        if package.is_file():
            found.append(package.resolve())
            folder = folder / part
        elif module.is_file() and i == len(parts) - 1:
            found.append(module.resolve())
        else:
            break
    return found


def _module_of(base: Path, path: Path) -> str:
    """The dotted name of the file ``path`` under ``base``."""
    rel = path.relative_to(base.resolve()).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


_PARSE_LOCK = threading.Lock()
"""One ``parse_module`` at a time in a process: CPython 3.11 keeps the AST constructor's
recursion counter in state that every thread shares, and the collector switch is
process-wide."""


def parse_module(source: bytes, filename: str) -> ast.Module:
    """``ast.parse(source)``, one parse at a time in the process and with the cyclic garbage
    collector held off while the tree is built. CPython 3.11 builds the Python tree with a
    recursion counter that a parse in another thread, or an exception raised meanwhile by a
    collected object's finalizer, leaves unbalanced: the parse then fails with
    "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905). Every
    parse of user code in rotbench goes through here. Raises SyntaxError or ValueError as
    ``ast.parse`` does."""
    with _PARSE_LOCK:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return ast.parse(source, filename=filename)
        finally:
            if enabled:
                gc.enable()
