"""An engine's own frames of a traceback, and the
check of every ``--engine module:factory`` before any work (from the source, never run)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rotbench.contract.registry import EngineError, EngineInfo
from rotbench.engines.host.guarded import EngineFailure, GuardedEngine, setup_failure
from rotbench.engines.registry import check_factory, load_factory
from rotbench.engines.trace import engine_roots, engine_trace


@pytest.fixture()
def project(tmp_path: Path, monkeypatch):
    """A folder on sys.path and the working directory, as a user's project is."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("author_")]:
        del sys.modules[name]


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


def test_only_the_engines_frames_are_kept_and_the_innermost_is_named(project) -> None:
    path = _write(project, "author_engine", (
        "def helper(store):\n"
        "    return store['missing']\n"
        "\n"
        "class Engine:\n"
        "    name, version = 'mine', '1'\n"
        "    def deposit(self, document):\n"
        "        pass\n"
        "    def query(self, question, k):\n"
        "        return helper({})\n"))
    import author_engine

    guard = GuardedEngine(author_engine.Engine(), 42, None)
    with pytest.raises(EngineFailure) as caught:
        guard.call(15, "query('q', k=3)", guard.engine.query, "q", 3)
    failure = caught.value
    assert str(failure) == (f"engine mine: seed 42, day 15: query('q', k=3): raised KeyError: "
                            f"'missing' (at {path}:2 in helper)")
    assert failure.trace == (
        "Traceback (the engine's own frames):\n"
        f'  File "{path}", line 9, in query\n    return helper({{}})\n'
        "           ^^^^^^^^^^\n"
        f'  File "{path}", line 2, in helper\n    return store[\'missing\']\n'
        "           ~~~~~^^^^^^^^^^^\n"
        "KeyError: 'missing'\n")
    # a frame of the harness is never part of it, and an error not raised there has none
    assert engine_trace(ValueError("x"), engine_roots("author_engine")) == (None, None)


def test_an_error_at_import_names_the_engines_file_and_line(project) -> None:
    path = _write(project, "author_broken", "import os\nVALUE = 1 / 0\n")
    info = EngineInfo(name="author_broken:make", version="0", factory="author_broken:make",
                      takes="claims")
    with pytest.raises(EngineError) as caught:
        load_factory(info)
    assert str(caught.value).endswith(f"(ZeroDivisionError: division by zero at {path}:2 in "
                                      "<module>)")
    assert f'File "{path}", line 2, in <module>' in caught.value.trace


@pytest.mark.parametrize(("source", "name", "message"), [
    ("def make_engine(context):\n    return None\n", "make_engin",
     "defines no 'make_engin'; did you mean author_m:make_engine?"),
    ("def make_engine(context):\n    return None\n", "zzz", "defines no 'zzz'; it defines "
     "make_engine"),
    ("FACTORY = 'not a function'\n", "FACTORY", "'FACTORY' is a plain value"),
    ("def make_engine(context)\n    return None\n", "make_engine", ".py:1: expected ':'"),
])
def test_a_factory_is_checked_from_the_source(project, source, name, message) -> None:
    _write(project, "author_m", source)
    with pytest.raises(EngineError, match=None) as caught:
        check_factory(f"author_m:{name}")
    assert message in str(caught.value), str(caught.value)
    assert "author_m" not in sys.modules  # read, never run


@pytest.mark.parametrize("source", [
    "from os.path import *\n",  # a star import may bind it: left to the run
    "try:\n    from fast import make_engine\nexcept ImportError:\n    make_engine = print\n",
    "make_engine = lambda context: None\n",
])
def test_what_the_source_may_bind_is_not_refused(project, source) -> None:
    _write(project, "author_ok", source)
    check_factory("author_ok:make_engine")


def test_the_factory_check_parses_with_the_collector_held_off() -> None:
    """``check_factory`` reads an author's module with the cyclic collector off while the
    tree is built (a finalizer run meanwhile by another thread's garbage unbalanced CPython
    3.11's AST constructor: "SystemError: AST constructor recursion depth mismatch" in a run
    whose warm-up thread was loading a model), and puts the collector back as it found it."""
    import gc

    from rotbench.engines import source

    seen: list[bool] = []
    import ast

    original = ast.parse

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    ast.parse = spy
    try:
        assert gc.isenabled()
        tree = source.parse_module(b"def make_engine(context):\n    return None\n", "m.py")
        gc.disable()
        source.parse_module(b"x = 1\n", "n.py")
        assert not gc.isenabled()  # left off when it was off
        gc.enable()
    finally:
        ast.parse = original
    assert seen == [False, False]
    assert gc.isenabled()
    assert [type(node).__name__ for node in tree.body] == ["FunctionDef"]


def test_a_set_up_failure_is_one_line_naming_the_engine_seed_and_the_factorys_frame(
        project) -> None:
    path = _write(project, "author_factory", (
        "def make(context):\n"
        "    raise OSError('no store at /nowhere')\n"))
    import author_factory

    try:
        author_factory.make(None)
    except OSError as exc:
        failure = setup_failure("mine\x1b[2J", 7, exc, factory=author_factory.make)
    assert str(failure) == ("engine mine\\x1b[2J: seed 7, set-up: factory raised OSError: "
                            f"no store at /nowhere (at {path}:2 in make)")
    assert failure.trace == (
        "Traceback (the engine's own frames):\n"
        f'  File "{path}", line 2, in make\n'
        "    raise OSError('no store at /nowhere')\n"
        "OSError: no store at /nowhere\n")
    # a few words instead of an exception; no name yet; no factory frame to name
    assert str(setup_failure("mine", 7, "its version is an empty string")) == (
        "engine mine: seed 7, set-up: its version is an empty string")
    bare = setup_failure(None, 7, KeyboardInterrupt())
    assert (str(bare), bare.trace) == ("engine: seed 7, set-up: factory raised "
                                       "KeyboardInterrupt", None)
