"""``rotbench new-engine NAME``: a ready engine module and its test, where the user points.

Writes ``NAME.py`` (an engine that runs as it is: the newest present-tense statement per slot,
ranked by similarity, as ``examples/my_engine.py``) and ``test_NAME.py`` (pytest: the engine
beside the reference on one seed, through ``rotbench run``) into ``--dir`` (default: the
working folder), then says the command to run. Never into rotbench's install folder (its
``rotbench`` or ``flows`` package), never over an existing file unless ``--force``, and never
under a name that would hide another importable module.
"""

from __future__ import annotations

import importlib.util
import keyword
import sys
from pathlib import Path
from typing import Annotated

import typer

from rotbench.cli.common import fail

TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The engine module's and its test's templates (``str.format`` fields; shipped as package
data). ``examples/my_engine.py`` is the engine template rendered by ``render_engine``
(``tests/cli/test_new_engine_template.py`` holds them equal)."""

NEW_ENGINE_DOC = """{name}: a memory engine for rotbench (from `rotbench new-engine {name}`).

It keeps the newest present-tense statement the user made about each slot and answers with
the closest ones by meaning. Change ``deposit`` and ``query`` to try your own rules.

Run it beside the reference engine:  rotbench run --engine {name}:make_engine --engine reference
Its test:                            python -m pytest test_{name}.py
"""


def render_engine(doc: str, cls: str = "Engine", engine: str = "{name}",
                  version: str = "0.1", **fields: str) -> str:
    """The engine template filled in: module docstring ``doc``, class ``cls`` named
    ``engine`` at ``version``; ``fields`` fill the ``{name}`` fields of ``doc`` and
    ``engine``. Raises KeyError for a field left unfilled."""
    text = (TEMPLATES / "engine.py.tmpl").read_text(encoding="utf-8")
    return text.format(doc=doc.format(**fields), cls=cls, engine=engine.format(**fields),
                       version=version)


def render_test(name: str) -> str:
    """The test module for engine module ``name`` (its template filled in)."""
    return (TEMPLATES / "test_engine.py.tmpl").read_text(encoding="utf-8").format(name=name)


def _install_folders() -> list[Path]:
    import flows
    import rotbench

    return [Path(rotbench.__file__).resolve().parent, Path(flows.__file__).resolve().parent]


MAX_NAME_CHARS = 100
"""Longest module name ``new-engine`` accepts (``test_<name>.py`` must fit a file name)."""
RESERVED_NAMES = frozenset({"sitecustomize", "usercustomize", "setup", "conftest"})
"""Names that Python, setuptools or pytest read on their own, so an engine module of that
name would run where nobody asked for it."""


def new_engine(
    name: Annotated[str, typer.Argument(help="The engine's module name (a Python identifier, "
                                        "e.g. my_engine).", show_default=False)],
    dir: Annotated[str, typer.Option(
        "--dir", help="Folder for NAME.py and test_NAME.py (default: the working folder; "
        "created if missing).")] = ".",
    force: Annotated[bool, typer.Option("--force", help="Replace files already there.")
                     ] = False,
) -> None:
    """Write a ready engine module NAME.py and its test test_NAME.py, then run it with
    `rotbench run --engine NAME:make_engine --engine reference` from that folder."""
    from rotbench._util.atomic import write_atomic
    from rotbench._util.safe_text import printable

    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        fail(f"new-engine: {printable(name, 80)!r} is not a Python module name (letters, "
             "digits and '_', not starting with a digit)")
    if len(name) > MAX_NAME_CHARS:
        fail(f"new-engine: a module name of {len(name)} characters is too long (at most "
             f"{MAX_NAME_CHARS}; its test file's name must fit the file system too)")
    if name.startswith("__") and name.endswith("__") or name in RESERVED_NAMES:
        fail(f"new-engine: {name!r} is a name Python gives a meaning of its own (a package's "
             "__init__, the running script, a start-up hook); choose another")
    if not dir.strip():
        fail("--dir: an empty path is not allowed")
    folder = Path(dir).resolve()
    for install in _install_folders():
        if folder == install or install in folder.parents:
            fail(f"--dir {printable(dir, 200)}: inside rotbench's install folder ({install}); "
                 "point it at your own project")
    if folder.exists() and not folder.is_dir():
        fail(f"--dir {printable(dir, 200)}: not a folder")
    targets = [folder / f"{name}.py", folder / f"test_{name}.py"]
    taken = [t for t in targets if t.exists() or t.is_symlink()]  # a dangling link too
    if taken and not force:
        fail(f"new-engine: {taken[0]} exists (--force replaces it)")
    try:
        spec = importlib.util.find_spec(name) if not taken else None
    except (ImportError, ValueError):  # a module that is there but cannot be looked up
        fail(f"new-engine: a module {name!r} exists already; choose another name")
    origin = spec.origin if spec is not None else None
    # a built-in or frozen module (sys, os, io) has an origin that is not a path
    if name in sys.stdlib_module_names or (origin and (
            not Path(origin).is_absolute() or Path(origin).resolve().parent != folder)):
        where = origin or "the standard library"
        fail(f"new-engine: a module {name!r} exists already ({where}); choose another name "
             "so that --engine finds yours")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(targets[0], render_engine(NEW_ENGINE_DOC, name=name).encode())
        write_atomic(targets[1], render_test(name).encode())
    except OSError as exc:
        fail(f"new-engine: cannot write into {folder}: {exc.strerror or exc}", 1)
    where = "" if folder == Path.cwd().resolve() else f"cd {folder} && "
    typer.echo(f"wrote {targets[0]} and {targets[1]}")
    typer.echo(f"next: {where}rotbench run --engine {name}:make_engine --engine reference")
