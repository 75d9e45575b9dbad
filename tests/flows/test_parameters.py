"""The flow's parameters are the run's own fields, typed, checked by the CLI's rules."""

from __future__ import annotations

import inspect

import pytest
from prefect.utilities.callables import parameter_schema

import rotbench.cli.run as cli_run
import rotbench.run.report as run_report
from flows.rot_benchmark import name_for, rot_benchmark
from rotbench.run.report import run_timings
from rotbench.run.spec import RunSpec, SpecError, spec_from_parameters


def test_parameters_are_the_runspec_fields_and_the_start_time() -> None:
    names = set(inspect.signature(rot_benchmark.fn).parameters)
    assert names == set(RunSpec.model_fields) | {"started_unix"}
    assert not names & {"runtime_token", "spec"}


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


def test_defaults_match_the_runspec_defaults() -> None:
    sig = inspect.signature(rot_benchmark.fn).parameters
    spec = RunSpec()
    for name, param in sig.items():
        if name != "started_unix":
            assert param.default == getattr(spec, name), name


def test_the_schema_gives_the_ui_typed_fields() -> None:
    props = parameter_schema(rot_benchmark.fn).model_dump()["properties"]
    assert props["seeds"]["type"] == "array" and props["seeds"]["items"]["type"] == "integer"
    assert props["arm"]["enum"] == ["oracle", "noisy", "probe", "live"]
    assert props["days"]["type"] == "integer"


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
    assert name_for({"arm": "live", "engines": ["reference", "latest-wins"],
                     "seeds": [42, 43, 44]}) == "live reference+latest-wins seeds 42,43,44"
    assert name_for({"arm": "oracle", "engines": ["reference"],
                     "seeds": list(range(1000, 1100))}) == "oracle reference seeds 1000-1099"
