"""The flow takes the run's request whole (``spec``, a ``RunSpec``), typed, checked by the CLI's
rules; the CLI's defaults are ``RunSpec``'s."""

from __future__ import annotations

import ast
import inspect

import pytest
from prefect.utilities.callables import parameter_schema

import rotbench.cli.run as cli_run
import rotbench.run.report as run_report
from flows.rot_benchmark import name_for, rot_benchmark
from rotbench.run.report import run_timings
from rotbench.run.spec import RunSpec, SpecError, spec_from_parameters


def test_parameters_are_the_runspec_and_the_start_time() -> None:
    params = inspect.signature(rot_benchmark.fn).parameters
    assert list(params) == ["spec", "started_unix"]
    assert params["spec"].annotation in (RunSpec, "RunSpec")
    assert params["spec"].default == RunSpec()  # the defaults, written once


def test_the_start_time_is_an_optional_parameter_not_an_environment_variable() -> None:
    param = inspect.signature(rot_benchmark.fn).parameters["started_unix"]
    assert param.default is None  # a deployment run passes no start time
    props = parameter_schema(rot_benchmark.fn).model_dump()
    assert "started_unix" not in props.get("required", [])
    assert props["properties"]["started_unix"]["anyOf"][0]["type"] == "number"
    assert "started_unix" not in RunSpec.model_fields  # not part of what the run computes
    for module in (run_report, cli_run):
        assert "ROTBENCH_STARTED_UNIX" not in inspect.getsource(module)


def test_the_timings_take_the_start_time_when_given() -> None:
    assert run_timings(100.0, 112.5) == {"worlds_seconds": 12.5}
    assert run_timings(100.0, 112.5, 97.25) == {"worlds_seconds": 12.5,
                                                 "startup_seconds": 2.75}


@pytest.mark.parametrize("started", [-1e300, 1e300, 100.5, float("nan"), 100.0 - 3601])
def test_a_start_time_that_is_no_start_of_this_flow_is_not_recorded(started) -> None:
    """A deployment parameter ``started_unix: -1e300`` became a report's start-up of
    1e300 seconds."""
    assert run_timings(100.0, 101.0, started) == {"worlds_seconds": 1.0}


def test_a_start_time_in_the_environment_is_ignored(monkeypatch) -> None:
    monkeypatch.setenv("ROTBENCH_STARTED_UNIX", "1.0")
    assert run_timings(100.0, 101.0) == {"worlds_seconds": 1.0}


SPEC_OPTIONS = {
    "arm": "arm", "noise": "noise", "days": "days", "top_k": "top_k", "generator": "generator",
    "volume": "volume", "scorer": "scorer", "out": "out_path", "db": "db_path",
    "reports_dir": "reports_dir", "max_worlds": "max_concurrent_worlds",
    "concurrency": "model_concurrency", "concurrency_limit": "model_concurrency_limit",
    "engine_timeout": "engine_timeout_seconds", "html": "html_path",
    "llm_settings": "llm_settings", "budget_usd": "budget_usd", "budget_calls": "budget_calls",
    "batch": "batch", "batch_timeout": "batch_timeout_seconds", "dask": "dask",
    "dask_workers": "dask_workers", "rulings": "rulings_path", "users": "users",
    "repeat": "repeat"}
"""``rotbench run``'s options that set a ``RunSpec`` field to their value."""
NEGATED = {"no_trust_policy": "trust_policy", "no_claim_text": "record_claim_text",
           "no_real_pairs": "real_pairs"}
"""Its flags that turn a field off."""


def test_the_cli_defaults_are_the_runspec_defaults_written_once() -> None:
    params = inspect.signature(cli_run.run).parameters
    spec = RunSpec()
    for option, field in SPEC_OPTIONS.items():
        assert params[option].default == getattr(spec, field), option
    for option, field in NEGATED.items():
        assert params[option].default is (not getattr(spec, field)), option
    # read from RunSpec, not written again as literals
    tree = ast.parse(inspect.getsource(cli_run))
    [run] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
    literal = [a.arg for a, d in zip(run.args.args[-len(run.args.defaults):],
                                     run.args.defaults, strict=True)
               if a.arg in SPEC_OPTIONS | NEGATED and isinstance(d, ast.Constant)]
    assert literal == []
    # list options: none given is RunSpec's default list; the cache folder: RunSpec's too
    assert params["seed"].default is None and params["engine"].default is None
    assert "42, 43, 44" not in inspect.getsource(cli_run)
    assert RunSpec.model_fields["cache_dir"].default == "cache"


def test_the_schema_gives_the_ui_typed_fields() -> None:
    schema = parameter_schema(rot_benchmark.fn).model_dump()
    spec = schema["definitions"]["RunSpec"]["properties"]
    assert schema["properties"]["spec"]["$ref"].endswith("/RunSpec")
    assert spec["seeds"]["type"] == "array" and spec["seeds"]["items"]["type"] == "integer"
    assert spec["arm"]["enum"] == ["oracle", "noisy", "probe", "live"]
    assert spec["days"]["type"] == "integer"


def test_a_deployment_s_spec_mapping_becomes_the_runspec(tmp_path) -> None:
    """What Prefect does with a deployment's ``spec:`` mapping before the flow starts, then
    the flow's own checks."""
    fields = {"arm": "oracle", "seeds": [7, 8], "days": 30, "generator": "3",
              "cache_dir": str(tmp_path / "c"), "reports_dir": str(tmp_path / "r")}
    given = rot_benchmark.validate_parameters({"spec": fields})
    assert given["spec"] == RunSpec(**fields)
    assert spec_from_parameters(given["spec"]) == RunSpec(**fields)
    assert spec_from_parameters(fields) == RunSpec(**fields)


@pytest.mark.parametrize(("params", "message"), [
    ({"seeds": [42, 42]}, "--seed: duplicate seeds in [42, 42]"),
    ({"days": 10}, "--days must be at least 30, got 10"),
    ({"engines": ["nope"]}, "--engine: unknown engine 'nope'"),
    ({"budget_calls": -1}, "--budget-calls must be 0 or more, got -1"),
    ({"dask": "somewhere"}, "--dask: expected 'local' or a scheduler address"),
    ({"seeds": "7"}, "parameter seeds: Input should be a valid list"),
    ({"noise_digest": "0" * 64}, "noise_digest: a noise profile's digest belongs to the noisy "
                                 "arm only (this run is --arm oracle)"),  # accepted before
])
def test_bad_parameters_fail_with_one_line(params, message, tmp_path) -> None:
    base = {"cache_dir": str(tmp_path / "c"), "reports_dir": str(tmp_path / "r")}
    with pytest.raises(SpecError) as err:
        spec_from_parameters(base | params)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_run_name_says_arm_engines_and_seeds() -> None:
    live = {"arm": "live", "engines": ["reference", "latest-wins"], "seeds": [42, 43, 44]}
    assert name_for({"spec": live}) == "live reference+latest-wins seeds 42,43,44"
    assert name_for({"spec": RunSpec(seeds=list(range(1000, 1100)))}) == \
        "oracle reference seeds 1000-1099"
    assert name_for({}) == "oracle reference seeds 42,43,44"  # a deployment without a spec
