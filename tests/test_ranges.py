"""Every number from outside has a stated range, checked where it comes in,
with one line naming the field (rotbench._util.ranges)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rotbench._util.ranges import range_problem
from rotbench.cli.main import app


class _Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.exit_code, self.output, self.stderr = code, out + err, err


@pytest.fixture()
def cli(capsys, monkeypatch):
    """``rotbench ARGS`` as the console script runs it (usage errors as one line), in
    this process, without the supervising parent of ``run``."""
    from rotbench.cli.main import _main

    def invoke(_app, argv, env=None):
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        capsys.readouterr()
        code = _main(argv)
        out, err = capsys.readouterr()
        return _Result(code, out, err)
    return SimpleNamespace(invoke=invoke)


def _one_line_error(result, field: str) -> str:
    err = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(err.splitlines()) == 1, err
    assert err.startswith("rotbench: error:") and field in err, err
    assert "Traceback" not in result.output
    return err


def test_range_problem_names_the_field_and_refuses_nan_and_inf() -> None:
    assert range_problem("--x", 5, 0, 10) is None
    assert range_problem("--x", 0, 0, 10, low_open=True) == \
        "--x must be above 0 and at most 10, got 0"
    assert range_problem("--x", float("inf"), 0, 10) == \
        "--x must be at least 0 and at most 10, got inf"
    assert range_problem("--x", float("nan"), 0, 10) is not None
    assert range_problem("--x", None, 0, 10) is None


def test_engine_timeout_inf_is_refused_up_front(cli, tmp_path) -> None:
    result = cli.invoke(app, ["run", "--seed", "42", "--days", "30", "--engine-timeout",
                                 "inf", "--reports-dir", str(tmp_path / "r"),
                                 "--cache-dir", str(tmp_path / "c")])
    err = _one_line_error(result, "--engine-timeout")
    assert err == "rotbench: error: --engine-timeout must be above 0 and at most 86400, got inf"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("flag", "value"), [("--batch-timeout", "inf"),
                                             ("--budget-usd", "inf"),
                                             ("--budget-calls", str(2**63)),
                                             ("--dask-workers", "100000")])
def test_other_run_numbers_have_ranges(cli, tmp_path, flag, value) -> None:
    result = cli.invoke(app, ["run", "--arm", "probe", "--seed", "42", "--days", "30",
                                 flag, value, "--estimate", "--reports-dir",
                                 str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")],
                           env={"ANTHROPIC_API_KEY": "sk-ant-test-000"})
    _one_line_error(result, flag)


def test_batch_poll_of_a_nanosecond_is_refused_naming_the_field(cli, tmp_path) -> None:
    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"batch_poll_seconds": 1e-9}))
    result = cli.invoke(app, ["run", "--arm", "probe", "--seed", "42", "--days", "30",
                                 "--llm-settings", str(settings), "--estimate",
                                 "--reports-dir", str(tmp_path / "r"),
                                 "--cache-dir", str(tmp_path / "c")],
                           env={"ANTHROPIC_API_KEY": "sk-ant-test-000"})
    _one_line_error(result, "batch_poll_seconds")


def test_settings_numbers_have_ranges() -> None:
    from pydantic import ValidationError

    from rotbench.perception.model import LLMSettings

    for field, value in (("batch_poll_seconds", 1e-9), ("batch_poll_seconds", float("inf")),
                         ("batch_timeout_seconds", float("inf")),
                         ("timeout_seconds", float("inf")), ("budget_usd", float("inf")),
                         ("budget_calls", 2**63)):
        with pytest.raises(ValidationError, match=field):
            LLMSettings(**{field: value})
    assert LLMSettings(batch_poll_seconds=0.05).batch_poll_seconds == 0.05


def test_runs_limit_of_2_to_the_63_is_one_line(cli, tmp_path) -> None:
    result = cli.invoke(app, ["runs", "--limit", str(2**63), "--db",
                                 str(tmp_path / "x.duckdb")])
    _one_line_error(result, "--limit")


def test_a_claim_day_past_int32_is_the_engines_malformed_hit() -> None:
    from rotbench.engines.host.guarded import validate_hits

    class Refused(Exception):
        pass

    hit = {"text": "the user lives in Oslo", "provenance": {"day": 2**31}}
    with pytest.raises(Refused, match=r"position 1: provenance\.day: Input should be less"):
        validate_hits([hit], 10, Refused)
    hit["provenance"]["day"] = 2**31 - 1  # the last day a database column holds
    assert validate_hits([hit], 10, Refused)[0].provenance.day == 2**31 - 1


def _message(**usage):
    base = {"input_tokens": 10, "output_tokens": 5}
    base.update(usage)
    return SimpleNamespace(usage=SimpleNamespace(**base), model="claude-haiku-4-5",
                           content=[SimpleNamespace(type="text", text="yes")])


def test_negative_usage_is_a_failed_call_and_never_credits_the_ledger() -> None:
    from rotbench.perception.calls.anthropic_client import AnthropicClient
    from rotbench.perception.calls.records import ModelCallError
    from rotbench.perception.calls.usage import UsageMeter

    meter = UsageMeter({"claude-haiku-4-5": (1.0, 5.0)})
    answers = iter([_message(output_tokens=-10**9), _message()])
    sdk = SimpleNamespace(messages=SimpleNamespace(create=lambda **kw: next(answers)))
    client = AnthropicClient(_sdk=sdk, meter=meter, stage="check")
    with pytest.raises(ModelCallError, match=r"usage\.output_tokens must be at least 0"):
        client.complete(model="claude-haiku-4-5", system="s", prompt="p", max_tokens=8)
    assert meter.stage("check").calls == 0  # nothing of the refused response was metered
    client.complete(model="claude-haiku-4-5", system="s", prompt="p", max_tokens=8)
    stage = meter.stage("check")
    assert (stage.calls, stage.input_tokens, stage.output_tokens) == (1, 10, 5)
    assert stage.usd == pytest.approx((10 * 1.0 + 5 * 5.0) / 1e6)


def test_a_batch_success_with_negative_usage_is_a_failed_request() -> None:
    from rotbench.perception.calls.anthropic_client import AnthropicClient

    line = SimpleNamespace(custom_id="c1", result=SimpleNamespace(
        type="succeeded", message=_message(input_tokens=-5)))
    sdk = SimpleNamespace(messages=SimpleNamespace(batches=SimpleNamespace(
        results=lambda batch_id: iter([line]))))
    [(custom_id, outcome)] = list(AnthropicClient(_sdk=sdk).batch_results("b1"))
    assert custom_id == "c1"
    assert outcome == ("unusable response: usage.input_tokens must be at least 0 and at most "
                       "1000000000, got -5")
