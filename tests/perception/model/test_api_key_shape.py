"""A key that cannot be an HTTP header is refused before any call."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.perception.model import MissingApiKey, require_api_key

KEY = "sk-ant-api03-SHAPE-test"


@pytest.mark.parametrize(("key", "what"), [
    (KEY[:10] + "\n" + KEY[10:], "holds a newline at character 11 of 24"),
    (KEY[:5] + " " + KEY[5:], "holds a space at character 6 of 24"),
    (KEY + "\u00e9", "holds character U+00E9 at character 24 of 24"),
    ("k" * 600, "is 600 characters long (at most 512)"),
])
def test_a_key_of_the_wrong_shape_is_refused_without_showing_it(key, what) -> None:
    with pytest.raises(MissingApiKey) as err:
        require_api_key(key)
    message = str(err.value)
    assert message.startswith(f"ANTHROPIC_API_KEY {what}")
    assert KEY[10:] not in message and "kkkk" not in message


def test_a_key_with_only_outer_whitespace_is_fine() -> None:
    assert require_api_key(f"  {KEY}\n") == KEY


def test_run_refuses_a_key_with_a_newline_before_any_call(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY[:10] + "\n" + KEY[10:])
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    result = CliRunner().invoke(app, ["run", "--arm", "probe", "--seed", "42", "--yes",
                                      "--cache-dir", str(tmp_path / "c"),
                                      "--reports-dir", str(tmp_path / "r")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("rotbench: error: ANTHROPIC_API_KEY holds a newline at "
                                "character 11"), result.output
    assert not (tmp_path / "r").exists() and not (tmp_path / "c" / "calls").exists()
