"""`rotbench run --batch / --batch-timeout / --concurrency-limit`: the flags reach the run, and
`--estimate` shows the standard and the batch price, saying which applies."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app

runner = CliRunner()
PRICES = {"claude-sonnet-4-6": [3.0, 15.0], "claude-haiku-4-5": [1.0, 5.0]}


@pytest.mark.slow
def test_estimate_shows_both_prices_and_which_applies(tmp_path) -> None:
    """... and writes no file: the cache folder it names is never made. Generator 3: no
    prompt of it is long enough for the prompt cache, so the batch price is exactly half the
    standard one (on generators 4 and 5 the standard price reads extract-v5's prefix from
    the cache, which batches do not use: tests/perception/model/test_prompt_cache.py)."""
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"prices": PRICES}))
    base = ["run", "--arm", "live", "--seed", "42", "--generator", "3", "--estimate",
            "--llm-settings", str(settings), "--cache-dir", str(tmp_path / "c"),
            "--reports-dir", str(tmp_path / "r")]
    batch = runner.invoke(app, [*base, "--batch"])
    single = runner.invoke(app, base)
    assert batch.exit_code == 0 == single.exit_code, batch.output + single.output
    [total] = [line for line in batch.output.splitlines() if line.strip().startswith("total")]
    found = re.fullmatch(r"  total    (\d+) calls, US\$(\d+\.\d\d) standard, US\$(\d+\.\d\d) "
                         r"batch \(batch applies \(--batch\)\)", total)
    assert found, total
    standard, half = float(found.group(2)), float(found.group(3))
    assert abs(half - standard / 2) <= 0.006 and half > 0
    assert "(standard applies; --batch for the batch price)" in single.output
    assert re.search(r"extract\s+claude-sonnet-4-6 .* US\$\d+\.\d\d \(batch US\$\d+\.\d\d\)",
                     batch.output)
    assert not (tmp_path / "c").exists()  # an estimate writes nothing (it filled embeddings)


def test_bad_batch_timeout_and_limit_name_fail_in_one_line(tmp_path) -> None:
    common = ["run", "--arm", "live", "--estimate", "--cache-dir", str(tmp_path / "c"),
              "--reports-dir", str(tmp_path / "r")]
    bad = runner.invoke(app, [*common, "--batch-timeout", "0"])
    assert bad.exit_code == 2
    assert bad.output.strip() == ("rotbench: error: --batch-timeout must be a number of "
                                  "seconds above 0, got 0.0")
    name = runner.invoke(app, [*common, "--concurrency-limit", "a/b"])
    assert name.exit_code == 2
    assert name.output.strip() == ("rotbench: error: --concurrency-limit: 'a/b' is not a "
                                   "Prefect concurrency limit name (non-empty, none of / % & "
                                   "< >)")


@pytest.mark.parametrize("arm", ["oracle", "noisy"])
def test_a_concurrency_limit_on_an_arm_without_model_calls_is_refused(arm, tmp_path) -> None:
    """It was accepted and ignored: nothing on these arms calls a model."""
    got = runner.invoke(app, ["run", "--arm", arm, "--concurrency-limit", "calls", "--seed",
                              "42", "--cache-dir", str(tmp_path / "c"), "--reports-dir",
                              str(tmp_path / "r")])
    assert (got.exit_code, got.output.strip()) == (
        2, f"rotbench: error: --concurrency-limit bounds model calls, which only --arm probe "
           f"and live make (this run is --arm {arm})")
    assert not (tmp_path / "c").exists()
