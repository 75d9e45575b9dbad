"""The source digest of a ``module:factory`` engine covers the files it imports beside it
(``rotbench.engines.source``): editing a helper module re-runs the engine."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rotbench.engines.registry import resolve
from rotbench.engines.source import engine_source_files, source_digest

ENGINE = "from base_eng import Engine\n\ndef make(context):\n    return Engine()\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "e_stale.py").write_text(ENGINE)
    (tmp_path / "base_eng.py").write_text("from tools.rank import best\n\nclass Engine:\n"
                                          "    pass\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools" / "rank.py").write_text("from . import weights\n\ndef best(x):\n"
                                                "    return x[:1]\n")
    (tmp_path / "tools" / "weights.py").write_text("W = 1\n")
    (tmp_path / "unrelated.py").write_text("X = 1\n")
    return tmp_path


def test_an_edited_helper_module_changes_the_engine_identity(folder: Path) -> None:
    """The trial's case: e_stale.py subclasses an engine from base_eng.py; editing
    base_eng.py used to leave the identity, and so every cached stage, as it was."""
    before = resolve("e_stale:make").identity
    (folder / "base_eng.py").write_text("from tools.rank import best\n\nclass Engine:\n"
                                        "    stale = True\n")
    assert resolve("e_stale:make").identity != before


def test_the_files_are_those_imported_transitively_and_nothing_else(folder: Path) -> None:
    names = [p.relative_to(folder).as_posix() for p in engine_source_files("e_stale")]
    assert names == ["e_stale.py", "base_eng.py", "tools/__init__.py", "tools/rank.py",
                     "tools/weights.py"]
    digest = source_digest("e_stale")
    (folder / "unrelated.py").write_text("X = 2\n")
    assert source_digest("e_stale") == digest
    (folder / "tools" / "weights.py").write_text("W = 2\n")  # two imports away, relative
    assert source_digest("e_stale") != digest


def test_a_one_file_engine_keeps_the_digest_it_had(tmp_path: Path, monkeypatch) -> None:
    """Caches written before the helpers were followed stay valid for one-file engines."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    text = "import json\nfrom rotbench.plugin import Hit\n\ndef make(context):\n    return None\n"
    (tmp_path / "solo.py").write_text(text)
    assert source_digest("solo") == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert resolve("solo:make").source_sha256 == source_digest("solo")


def test_a_package_engine_follows_its_own_package_only(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "engine.py").write_text("from mypkg.util import f\nimport other\n")
    (pkg / "util.py").write_text("def f():\n    return 1\n")
    (tmp_path / "other.py").write_text("Y = 1\n")
    names = [p.relative_to(tmp_path).as_posix() for p in engine_source_files("mypkg.engine")]
    assert names == ["mypkg/engine.py", "mypkg/__init__.py", "mypkg/util.py"]


def test_a_file_that_does_not_parse_is_hashed_but_not_followed(folder: Path) -> None:
    (folder / "base_eng.py").write_text("def broken(:\n")
    names = [p.name for p in engine_source_files("e_stale")]
    assert names == ["e_stale.py", "base_eng.py"]


def test_every_parse_of_an_engines_files_holds_the_one_parse_lock(folder: Path,
                                                                  monkeypatch) -> None:
    """Following an engine's imports parses each of its files under ``parse_module``'s lock
    (CPython 3.11's AST constructor keeps a recursion counter that every thread shares: two
    engines' digests taken at once in the world threads raised "SystemError: AST
    constructor recursion depth mismatch" in a run with two plug-in engines)."""
    import ast

    from rotbench.engines import source

    held: list[bool] = []
    original = ast.parse

    def spy(*args, **kwargs):
        held.append(source._PARSE_LOCK.locked())
        return original(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    files = engine_source_files("e_stale")
    assert [f.name for f in files] == ["e_stale.py", "base_eng.py", "__init__.py", "rank.py",
                                       "weights.py"]
    assert held == [True] * 5
