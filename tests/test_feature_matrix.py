"""Issue 40, "every feature on every generator": each feature of ``rotbench run`` on each
supported generator (1 to 4), one seed, the fewest days the generator takes (30; generator 4:
90), through the command line in this process.

Runs are shared to keep this cheap: per generator, one oracle run holds three engine kinds
(the reference, a baseline, a plug-in) with ``--users 2`` and, where the generator has
filler sessions, ``--volume 2``; one probe-arm run with ``--batch`` and one live-arm run go
to the fake Anthropic server; one run goes through a local Dask cluster. A feature that does
not support a generator must refuse it before any work, in one line that says why
(``--volume`` on generators 1 and 2; 30 days on generator 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rotbench.cli.main import _main

pytestmark = pytest.mark.slow

GENERATORS = ["1", "2", "3", "4"]
SEED = "42"
DAYS = {"1": "30", "2": "30", "3": "30", "4": "90"}
"""The fewest days each generator takes (generator 4 refuses fewer than 90)."""
ENGINES = {"reference": "reference", "baseline": "latest-wins",
           "plug-in": "examples.my_engine:make_engine"}
VOLUME_GENERATORS = ("3", "4")
KEY = "sk-ant-api03-ROTBENCH-MATRIX-KEY-00c4"


def _run(capfd, root: Path, generator: str, *extra: str) -> tuple[int, str, list[dict]]:
    """``rotbench run`` on SEED for ``generator``: (exit code, stderr, the reports written,
    as JSON, in the order written)."""
    capfd.readouterr()
    code = _main(["run", "--seed", SEED, "--days", DAYS[generator], "--generator", generator,
                  "--reports-dir", str(root / "r"), "--cache-dir", str(root / "c"), *extra])
    err = capfd.readouterr().err
    reports = [json.loads(p.read_text()) for p in sorted((root / "r").glob("*.json"),
                                                          key=lambda p: p.stat().st_mtime)
               if not p.name.startswith(".") and not p.name.endswith(".failed.json")]
    return code, err, reports


def _one_line_refusal(capfd, root: Path, generator: str, *extra: str) -> str:
    code, err, reports = _run(capfd, root, generator, *extra)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("rotbench: error:"), err
    assert reports == [] and not (root / "c").exists()
    return lines[0]


@pytest.fixture(scope="module", params=GENERATORS)
def oracle_run(request, tmp_path_factory):
    """Per generator: the oracle arm, three engine kinds, ``--users 2`` (and ``--volume 2``
    where the generator has filler sessions)."""
    generator = request.param
    root = tmp_path_factory.mktemp(f"oracle-g{generator}")
    engines = [arg for name in ENGINES.values() for arg in ("--engine", name)]
    volume = ["--volume", "2"] if generator in VOLUME_GENERATORS else []
    return generator, root, _run_uncaptured(root, generator, "--users", "2", *volume, *engines)


def _run_uncaptured(root: Path, generator: str, *extra: str) -> tuple[int, list[dict]]:
    """As ``_run`` for a module-scoped fixture (no capture fixture there): (code, reports)."""
    code = _main(["run", "--seed", SEED, "--days", DAYS[generator], "--generator", generator,
                  "--reports-dir", str(root / "r"), "--cache-dir", str(root / "c"), *extra])
    reports = [json.loads(p.read_text()) for p in sorted((root / "r").glob("*.json"),
                                                          key=lambda p: p.stat().st_mtime)
               if not p.name.startswith(".") and not p.name.endswith(".failed.json")]
    return code, reports


def test_users_2_with_every_engine_kind(oracle_run) -> None:
    generator, _, (code, reports) = oracle_run
    assert code == 0
    assert [r["selection"]["generator_version"] for r in reports] == [generator] * 3
    assert len({r["run_id"] for r in reports}) == 1  # one run, three engines
    engines = [r["selection"]["engine_source"] for r in reports]
    assert engines[:2] == ["reference", "latest-wins"]
    assert engines[2].startswith("examples.my_engine")
    for report in reports:
        assert report["selection"]["users"] == ["user-1", "user-2"]
        # the cross-user figures are published, with questions behind them
        for name in ("cross_user_leak_at_k", "cross_user_first"):
            assert report["metrics"][name]["denominator"] > 0, (generator, name)


def test_volume(oracle_run, capfd, tmp_path) -> None:
    generator = oracle_run[0]
    if generator in VOLUME_GENERATORS:
        assert oracle_run[2][0] == 0  # the oracle run above ran with --volume 2
        return
    line = _one_line_refusal(capfd, tmp_path, generator, "--volume", "2")
    assert line == ("rotbench: error: --volume: applies to generators 3 and 4 only (this "
                    f"run uses generator {generator})")


def test_generator_4_refuses_30_days_in_one_line(capfd, tmp_path) -> None:
    code = _main(["run", "--seed", SEED, "--days", "30", "--generator", "4",
                  "--reports-dir", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c")])
    err = capfd.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith(
        "rotbench: error: --days: "), err


@pytest.fixture(scope="module")
def fake_api():
    """The fake Anthropic server answering as the oracle would, for every generator's world
    of SEED; batches end 0.2 s after they are made."""
    from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
    from rotbench.world import generate_world

    worlds = [generate_world(int(SEED), generator=g, days=int(DAYS[g])) for g in GENERATORS]
    mp = pytest.MonkeyPatch()
    with FakeAnthropic(oracle_answerer(worlds), batch_delay_seconds=0.2) as fake:
        mp.setenv("ANTHROPIC_API_KEY", KEY)
        mp.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        yield fake
    mp.undo()


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize(("arm", "batch"), [("probe", True), ("live", False)])
def test_paid_arms(generator, arm, batch, fake_api, capfd, tmp_path) -> None:
    settings = tmp_path / "llm.json"
    settings.write_text(json.dumps({"batch_poll_seconds": 0.05}))
    batches = len(fake_api.batches)
    code, err, reports = _run(capfd, tmp_path, generator, "--arm", arm, "--yes",
                              "--llm-settings", str(settings),
                              *(["--batch"] if batch else ["--no-batch"]))
    assert code == 0, err
    [report] = reports
    assert report["selection"]["arm"] == arm
    assert report["selection"]["generator_version"] == generator
    assert report["metrics"]["current_first"]["denominator"] > 0
    calls = sum(s["calls"] for s in report["usage"]["stages"].values())
    batch_calls = sum(s["batch_calls"] for s in report["usage"]["stages"].values())
    assert calls > 0
    assert (batch_calls == calls) if batch else (batch_calls == 0)
    assert (len(fake_api.batches) > batches) == batch


@pytest.mark.parametrize("generator", GENERATORS)
def test_dask(generator, capfd, tmp_path) -> None:
    code, err, reports = _run(capfd, tmp_path, generator, "--dask", "local",
                              "--dask-workers", "1")
    assert code == 0, err
    [report] = reports
    assert report["selection"]["generator_version"] == generator
    assert report["metrics"]["current_first"]["denominator"] > 0
