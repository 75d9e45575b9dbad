"""``rotbench run --repeat``: a count from 1 to 20; anything else is refused in one line
before any work."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app

runner = CliRunner()


@pytest.mark.parametrize("value", ["0", "-1", "21", str(10**30)])
def test_a_bad_repeat_count_is_one_line_and_no_work(value, tmp_path) -> None:
    result = runner.invoke(app, ["run", "--repeat", value, "--cache-dir", str(tmp_path / "c"),
                                 "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"rotbench: error: --repeat must be between 1 and 20, got {value}"]
    assert not (tmp_path / "c").exists() and not (tmp_path / "r").exists()
