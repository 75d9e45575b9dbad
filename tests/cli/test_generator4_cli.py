"""Generators 4 and 5 on the command line: generator 5 the default of ``run`` and ``world``,
bad input refused in one line before any work, and ``rotbench world --generator 4`` showing
generator 4's kinds exactly as before generator 5 became the default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.run.spec import RunSpec
from rotbench.world.generators.base import DEFAULT_GENERATOR

runner = CliRunner()


def test_generator_5_is_the_default_with_scorer_v6() -> None:
    assert DEFAULT_GENERATOR == "5"
    assert RunSpec().generator == "5" and RunSpec().scorer_version == "v6"


def test_world_without_a_generator_is_generator_5s() -> None:
    """``rotbench world --seed 42`` prints generator 5's world, the one ``--generator 5``
    prints (fingerprint pinned in tests/world/test_generator5.py)."""
    plain = runner.invoke(app, ["world", "--seed", "42"])
    named = runner.invoke(app, ["world", "--seed", "42", "--generator", "5"])
    assert plain.exit_code == named.exit_code == 0
    assert plain.output == named.output
    world = json.loads(plain.output)
    assert world["generator_version"] == "5"
    assert world["fingerprint"].startswith("83234bb26360")


@pytest.mark.parametrize(("args", "message"), [
    (["--generator", "6"],
     "rotbench: error: --generator: unknown generator '6' (available: 1, 2, 3, 4, 5)"),
    (["--generator", "4", "--days", "20"], "rotbench: error: --days must be at least 30, got 20"),
    (["--days", "20"], "rotbench: error: --days must be at least 30, got 20"),
    (["--generator", "5", "--days", "20"],
     "rotbench: error: --days must be at least 30, got 20"),
])
def test_bad_generator_input_fails_in_one_line_before_any_work(args, message,
                                                               tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", *args, "--cache-dir", str(tmp_path / "c"),
                                 "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [message]
    assert not (tmp_path / "c").exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize(("args", "says"), [
    (["--generator", "6"], "unknown generator '6'"),
    (["--generator", "5", "--days", "20"], "days must be an integer from 30"),
])
def test_world_command_refuses_bad_generator_input_in_one_line(args, says) -> None:
    result = runner.invoke(app, ["world", *args])
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1 and says in result.output


def test_world_shows_the_new_kinds() -> None:
    result = runner.invoke(app, ["world", "--seed", "42", "--generator", "4"])
    assert result.exit_code == 0
    world = json.loads(result.output)
    assert world["generator_version"] == "4"
    ties = sorted(f["tie"] for s in world["sessions"] for f in s["facts"] if "tie" in f)
    assert ties == ["contingent", "contingent", "contingent", "implied", "successor"]
    assert sum(1 for p in world["probes"] if "premise" in p) == 12
    text = runner.invoke(app, ["world", "--seed", "42", "--generator", "4", "--format",
                               "transcript"]).output
    assert "(successor on employer = Halcyra)" in text
    assert "Scratch the move to Hobart" in text
