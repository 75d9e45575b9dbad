"""An engine's own part of a traceback: what an engine author needs to find their bug.

When an engine under test raises, the harness's frames (the guard, the thread hand-off, the
flow) say nothing to its author; the frames in the engine's own files do. ``engine_roots``
says which files are the engine's: the folder of the package its factory (or its class)
lives in, or the module file itself for a top-level module such as ``demo.py``.
``engine_trace`` keeps only those frames, formats them as Python does, and names the
innermost one (``file:line``) for the one-line error. Texts are plain and escaped before
they reach a terminal (``rotbench._util.safe_text.printable``); a traceback is at most
``MAX_TRACE_CHARS`` long.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

MAX_TRACE_CHARS = 8_000
"""Longest traceback text kept (the innermost frames are kept when it is cut)."""


def module_root(module_name: str) -> Path | None:
    """The files of module ``module_name`` as a path: its package's folder when it is inside
    a package (``my_pkg.engine`` -> ``.../my_pkg``; for rotbench's own adapters, the folder
    of the adapter module), else the module file; None when it has no file."""
    module = sys.modules.get(module_name)
    origin = getattr(module, "__file__", None)
    if not origin:
        return None
    path = Path(origin).resolve()
    top = module_name.split(".")[0]
    if top == "rotbench":  # a built-in adapter: its own module only, not the harness
        return path
    if "." in module_name or path.name == "__init__.py":
        top_module = sys.modules.get(top)
        top_file = getattr(top_module, "__file__", None)
        if top_file:
            return Path(top_file).resolve().parent
    return path


def engine_roots(*module_names: str | None) -> tuple[Path, ...]:
    """The files and folders counted as the engine's own (see ``module_root``), from the
    modules of its factory and of its class; names without a file are skipped."""
    roots = [module_root(name) for name in module_names if name]
    return tuple(dict.fromkeys(r for r in roots if r is not None))


def _inside(filename: str, roots: tuple[Path, ...]) -> bool:
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return any(path == root or root in path.parents for root in roots)


def engine_trace(exc: BaseException, roots: tuple[Path, ...]) -> tuple[str | None, str | None]:
    """(where, text) for ``exc``: ``where`` is ``'FILE:LINE in FUNCTION'`` of the innermost
    frame in the engine's files, ``text`` the traceback limited to those frames followed by
    the exception line (chained causes included, each limited alike). (None, None) when no
    frame of the traceback is the engine's."""
    try:
        return _engine_trace(exc, roots)
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the failure itself
        return None, None


def _engine_trace(exc: BaseException, roots: tuple[Path, ...]) -> tuple[str | None, str | None]:
    from rotbench._util.safe_text import safe_str, type_name

    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < 5:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__
                                        else current.__context__)
    where = None
    parts: list[str] = []
    for link in reversed(chain):
        frames = [f for f in traceback.extract_tb(link.__traceback__)
                  if _inside(f.filename, roots)]
        if not frames:
            continue
        if parts:
            parts.append("\nThe above led to:\n")
        parts.append("Traceback (the engine's own frames):\n")
        parts.extend(traceback.format_list(frames))
        message = safe_str(link)
        parts.append(f"{type_name(link)}" + (f": {message}" if message else "") + "\n")
        if link is exc or where is None:
            last = frames[-1]
            where = f"{last.filename}:{last.lineno} in {last.name}"
    if not parts:
        return None, None
    text = "".join(parts)
    if len(text) > MAX_TRACE_CHARS:
        text = "…" + text[-MAX_TRACE_CHARS:]
    return where, text
