"""The world's plan (``rotbench.run.plan``) decides which stages run, in what order, under
which keys and labels; a runner only runs them. Checked with a runner that runs nothing."""

from __future__ import annotations

import pytest

from rotbench.engines.host.guarded import EngineFailure
from rotbench.engines.registry import resolve
from rotbench.perception.arms import ArmRuntime
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.reference.config import EngineConfig
from rotbench.run import keys
from rotbench.run.outcome import StageRef
from rotbench.run.plan import StageCall, progress_stages, run_engines, world_engines
from rotbench.run.spec import RunSpec


class Recorder:
    """A runner that runs nothing: each stage's output is named ``sha-<stage>-<n>``."""

    def __init__(self, tmp_path, fail: str | None = None) -> None:
        self.runtime = ArmRuntime(arm="oracle", cache_dir=str(tmp_path))
        self.uncached: list[str] = []
        self.calls: list[StageCall] = []
        self.fail = fail

    def run(self, call: StageCall) -> StageRef:
        self.calls.append(call)
        if call.stage == self.fail:
            raise EngineFailure("engine latest-wins: seed 42, day 1: deposit: broke")
        return StageRef(stage=call.stage, key=call.key, model="X",
                        sha256=f"sha-{call.stage}-{len(self.calls)}", size_bytes=1)


def test_the_reference_engine_then_another_each_twice(tmp_path) -> None:
    spec = RunSpec(seeds=[42], days=30, generator="3", engines=["reference", "latest-wins"],
                   repeat=2)
    runner = Recorder(tmp_path)
    outcomes = world_engines(42, spec, run_engines(spec), runner)
    assert [(c.stage, c.label, c.repeat) for c in runner.calls] == [
        ("generate", None, None), ("extract", None, None),
        ("index", "index", 1), ("deposit", "deposit", 1), ("probe", "probe", 1),
        ("score", "reference:score", 1),
        ("index", "index (repeat 2)", 2), ("deposit", "deposit (repeat 2)", 2),
        ("probe", "probe (repeat 2)", 2), ("score", "reference:score (repeat 2)", 2),
        ("ingest_probe", "latest-wins:ingest_probe", 1), ("score", "latest-wins:score", 1),
        ("ingest_probe", "latest-wins:ingest_probe (repeat 2)", 2),
        ("score", "latest-wins:score (repeat 2)", 2)]
    config = EngineConfig()
    multi = config.store.multi_contributor
    stamp, check = OracleExtractor.stamp, OracleChecker.stamp
    generate, extract, index, deposit, probe = runner.calls[:5]
    assert generate.key == keys.generate_key("3", 42, 30)
    assert extract.key == keys.extract_key("sha-generate-1", stamp, multi)
    assert index.key == keys.index_key("sha-generate-1", "sha-extract-2", multi, 0)
    assert runner.calls[6].key == keys.index_key("sha-generate-1", "sha-extract-2", multi, 1)
    assert deposit.key == keys.deposit_key("sha-extract-2", check, config, 0)
    assert probe.key == keys.probe_key("sha-deposit-4", "sha-generate-1", "sha-extract-2",
                                       config, 10, 0)
    ingest = runner.calls[10]
    assert ingest.key == keys.ingest_probe_key("sha-generate-1", resolve("latest-wins").identity,
                                               stamp, check, 10, False, 0)
    assert ingest.inputs["arm"] == "oracle" and ingest.hold is not None
    assert runner.calls[11].key == keys.score_key("sha-ingest_probe-11", "v6",
                                                  from_answers=True)
    assert [o.engine for o in outcomes] == ["reference", "latest-wins"]
    assert [len(o.repeats) for o in outcomes] == [1, 1]
    assert outcomes[0].stamps == {"extract": stamp, "deposit": check,
                                  "embedding": outcomes[0].stamps["embedding"]}


def test_an_engine_failure_stays_with_its_engine(tmp_path) -> None:
    spec = RunSpec(seeds=[42], days=30, generator="3", engines=["latest-wins", "reference"])
    outcomes = world_engines(42, spec, run_engines(spec), Recorder(tmp_path, "ingest_probe"))
    assert outcomes[0].failure == "engine latest-wins: seed 42, day 1: deposit: broke"
    assert outcomes[1].failure is None and outcomes[1].scored is not None


@pytest.mark.parametrize(("users", "stages"), [
    (1, ("generate", "extract", "index", "deposit", "probe", "score", "ingest_probe", "score")),
    (2, ("generate", "ingest_probe", "score", "ingest_probe", "score"))])
def test_the_cli_s_progress_reads_the_plan(users, stages) -> None:
    spec = RunSpec(engines=["reference", "latest-wins"], users=users)
    assert progress_stages(spec, run_engines(spec)) == stages
