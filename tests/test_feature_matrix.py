"""Every feature on every generator: each feature of ``rotbench run`` on each released
generator (every row of the generator registry, 1 to 5), one seed and 30 days, through the
command line: each run is ``rotbench run ARGS`` called in the test process, through the
function the console script calls (tests/in_process.py), on one Prefect server for the
module. What only a run's own process does (its supervisor, signals, a killed run's rerun,
its exit) is tested in tests/cli/ with child processes.

Runs are shared to keep this cheap: per generator, one oracle run holds three engine kinds
(the reference, a baseline, a plug-in) with ``--users 2`` and, where the generator has
filler sessions, ``--volume 2``; one probe-arm run with ``--batch`` and one live-arm run go
to the fake Anthropic server; one run goes through a local Dask cluster. On the default
generator one more run holds the noisy arm and ``--repeat 2``, and one run takes no
``--generator`` at all. The paid arms and Dask are in ``test_feature_matrix_paid.py`` (a
file of their own, so that the two halves run in parallel under ``--dist loadfile``). A
feature that does not support a generator must refuse it before any work, in one line that
says why (``--volume`` on generators 1 and 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from in_process import on_server, rotbench

from rotbench.cli.main import _main
from rotbench.world.generators.registry import DEFAULT_GENERATOR
from rotbench.world.generators.registry import GENERATORS as ROWS

pytestmark = pytest.mark.slow

GENERATORS = list(ROWS.names)
SEED = "42"
DAYS = {g: "30" for g in GENERATORS}
"""One month: the fewest days every generator builds (two checkpoints)."""
ENGINES = {"reference": "reference", "baseline": "latest-wins",
           "plug-in": "examples.my_engine:make_engine"}
VOLUME_GENERATORS = tuple(g.name for g in ROWS if g.max_volume > 1)
KEY = "sk-ant-api03-ROTBENCH-MATRIX-KEY-00c4"


@pytest.fixture(scope="module")
def server(prefect_server, bundled_vectors_on_in_module):
    """One Prefect server for every run of the module (a server per run would cost more than
    the run): the test process's own (tests/conftest.py), which the module's runs report to
    (and the Dask workers they start). The runs read the shipped vectors, as a user's do."""
    with on_server(prefect_server.api_url):
        yield prefect_server


def _reports(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "r").glob("*.json"),
                                                       key=lambda p: p.stat().st_mtime)
            if not p.name.startswith(".") and not p.name.endswith(".failed.json")]


def _run(server, root: Path, generator: str | None, *extra: str,
         env: dict[str, str] | None = None) -> tuple[int, str, list[dict]]:
    """``rotbench run`` on SEED for ``generator`` (None: no ``--generator``, the default) in
    this process on the module's server, ``env`` on top of the environment: (exit code,
    stderr, the reports written, as JSON, in the order written)."""
    chosen = [] if generator is None else ["--generator", generator]
    code, _, err = rotbench(
        ["run", "--seed", SEED, "--days", DAYS[generator or DEFAULT_GENERATOR], *chosen,
         "--reports-dir", str(root / "r"), "--cache-dir", str(root / "c"), *extra], env=env)
    return code, err, _reports(root)


def _one_line_refusal(capfd, root: Path, generator: str, *extra: str) -> str:
    """A refusal before any work, in this process (no server needed)."""
    capfd.readouterr()
    code = _main(["run", "--seed", SEED, "--days", DAYS[generator], "--generator", generator,
                  "--reports-dir", str(root / "r"), "--cache-dir", str(root / "c"), *extra])
    lines = capfd.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("rotbench: error:"), lines
    assert not (root / "r").exists() and not (root / "c").exists()
    return lines[0]


@pytest.fixture(scope="module", params=GENERATORS)
def oracle_run(request, tmp_path_factory, server):
    """Per generator: the oracle arm, three engine kinds, ``--users 2`` (and ``--volume 2``
    where the generator has filler sessions): (generator, (code, stderr, reports))."""
    generator = request.param
    root = tmp_path_factory.mktemp(f"oracle-g{generator}")
    engines = [arg for name in ENGINES.values() for arg in ("--engine", name)]
    volume = ["--volume", "2"] if generator in VOLUME_GENERATORS else []
    return generator, _run(server, root, generator, "--users", "2", *volume, *engines)


def test_users_2_with_every_engine_kind(oracle_run) -> None:
    generator, (code, err, reports) = oracle_run
    assert code == 0, err
    assert [r["selection"]["generator_version"] for r in reports] == [generator] * 3
    engines = [r["selection"]["engine_source"] for r in reports]
    assert engines[:2] == ["reference", "latest-wins"]
    assert engines[2].startswith("examples.my_engine")
    # every kind asks per user (the example, the template rendered)
    assert [r["selection"]["user_scoped"] for r in reports] == [True, True, True]
    assert "ignored the user" not in err
    for report in reports:
        assert report["selection"]["users"] == ["user-1", "user-2"]
        # the cross-user figures are published, with questions behind them
        for name in ("cross_user_leak_at_k", "cross_user_first"):
            assert report["metrics"][name]["denominator"] > 0, (generator, name)


def test_volume(oracle_run, capfd, tmp_path) -> None:
    generator = oracle_run[0]
    if generator in VOLUME_GENERATORS:
        assert oracle_run[1][0] == 0  # the oracle run above ran with --volume 2
        return
    line = _one_line_refusal(capfd, tmp_path, generator, "--volume", "2")
    assert line == ("rotbench: error: --volume: applies to generators "
                    f"{VOLUME_GENERATORS[0]} to {VOLUME_GENERATORS[-1]} only (this "
                    f"run uses generator {generator})")


def test_the_default_generator_is_5() -> None:
    assert DEFAULT_GENERATOR == "5" == GENERATORS[-1]


@pytest.fixture(scope="module")
def noisy_repeated(tmp_path_factory, server):
    """The noisy arm (the good profile) with ``--repeat 2`` and no ``--generator``: the
    default generator's world, the reference engine run twice on one perception."""
    root = tmp_path_factory.mktemp("noisy-default")
    return _run(server, root, None, "--arm", "noisy", "--noise", "good", "--repeat", "2")


def test_noisy_arm_and_repeat_on_the_default_generator(noisy_repeated) -> None:
    code, err, reports = noisy_repeated
    assert code == 0, err
    [report] = reports
    selection = report["selection"]
    assert selection["generator_version"] == DEFAULT_GENERATOR
    assert selection["arm"] == "noisy"
    assert report["metrics"]["current_first"]["denominator"] > 0
    # generator 5's own figure family is in the report of a run that named no generator
    assert {"forgotten_served_at_k", "resurrected_first"} <= report["metrics"].keys()
    repeats = report["repeats"]
    assert repeats["count"] == 2 and [r["repeat"] for r in repeats["runs"]] == [1, 2]
    assert repeats["questions"] > 0 and repeats["flaky"] == []  # the reference: deterministic
