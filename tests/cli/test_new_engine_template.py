"""One source for the engine a newcomer starts from: ``examples/my_engine.py`` is the
``rotbench new-engine`` template rendered with the example's own docstring, class and name."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.cli.new_engine import TEMPLATES, render_engine

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "my_engine.py"
EXAMPLE_DOC = ("A complete engine for rotbench in about 20 lines: the newest thing the user "
               "said per slot.\n\nRun it with:  rotbench run --engine "
               "examples.my_engine:make_engine\n")


def example_text() -> str:
    """``examples/my_engine.py`` as the template renders it (regenerate it with this)."""
    return render_engine(EXAMPLE_DOC, cls="NewestStatement", engine="newest-statement",
                         version="1.0")


def test_the_example_is_the_template_rendered() -> None:
    assert EXAMPLE.read_text(encoding="utf-8") == example_text()


def test_the_example_keeps_its_pinned_name_and_version() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert 'name, version = "newest-statement", "1.0"' in text  # bench_edit_loop edits this
    assert "return NewestStatement(context)" in text


def test_the_templates_ship_with_the_package() -> None:
    assert sorted(p.name for p in TEMPLATES.iterdir()) == ["engine.py.tmpl",
                                                           "test_engine.py.tmpl"]
    pyproject = (EXAMPLE.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"rotbench.cli" = ["templates/*.tmpl"]' in pyproject


def test_the_generated_test_keeps_no_prefect_server_up() -> None:
    """Its run's cache is in pytest's temporary folder, which is gone by the time a kept
    server would stop, and then ``rotbench server --stop`` cannot find it (a fresh user's
    trial left one running): the generated test's run keeps none."""
    import ast

    from rotbench.cli.new_engine import render_test

    tree = ast.parse(render_test("demo"))
    [call] = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
              and ast.unparse(n.func) == "subprocess.run"]
    env = next(k.value for k in call.keywords if k.arg == "env")
    assert ast.unparse(env) == "{**os.environ, 'ROTBENCH_KEEP_SERVER': '0'}"


def test_a_dangling_symlink_where_the_module_goes_is_not_replaced_without_force(
        tmp_path: Path) -> None:
    """``exists()`` follows a link, so a link to nothing passed as free and was replaced."""
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    (tmp_path / "zed4.py").symlink_to(tmp_path / "nowhere.py")
    result = CliRunner().invoke(app, ["new-engine", "zed4", "--dir", str(tmp_path)])
    assert (result.exit_code, result.output.strip()) == (
        2, f"rotbench: error: new-engine: {tmp_path / 'zed4.py'} exists (--force replaces it)")
    assert (tmp_path / "zed4.py").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["zed4.py"]


@pytest.mark.parametrize(("name", "line"), [
    ("a" * 251, "a module name of 251 characters is too long (at most 100; its test file's "
                "name must fit the file system too)"),
    *[(n, f"{n!r} is a name Python gives a meaning of its own (a package's __init__, the "
          "running script, a start-up hook); choose another")
      for n in ("__main__", "__init__", "sitecustomize", "conftest")],
])
def test_names_python_reads_or_no_file_system_holds_are_refused(name: str, line: str,
                                                                tmp_path: Path) -> None:
    """A 251-character name and ``__main__`` ended in tracebacks; ``__init__`` and
    ``sitecustomize`` were written (the second runs in every interpreter started there)."""
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    result = CliRunner().invoke(app, ["new-engine", name, "--dir", str(tmp_path / "out")])
    assert (result.exit_code, result.output.strip()) == (2, f"rotbench: error: new-engine: {line}")
    assert not (tmp_path / "out").exists()
