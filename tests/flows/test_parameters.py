"""The flow's parameters are the run's own fields, typed, checked by the CLI's rules."""

from __future__ import annotations

import inspect

import pytest
from prefect.utilities.callables import parameter_schema

from flows.rot_benchmark import name_for, rot_benchmark
from rotbench.runspec import RunSpec, SpecError, spec_from_parameters


def test_parameters_are_exactly_the_runspec_fields() -> None:
    names = set(inspect.signature(rot_benchmark.fn).parameters)
    assert names == set(RunSpec.model_fields)
    assert not names & {"runtime_token", "started_unix", "spec"}


def test_defaults_match_the_runspec_defaults() -> None:
    sig = inspect.signature(rot_benchmark.fn).parameters
    spec = RunSpec()
    for name, param in sig.items():
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
