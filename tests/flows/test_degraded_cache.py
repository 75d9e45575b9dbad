"""Issue 26, item 1: a degraded run never comes back clean.

A probe-arm run whose model calls fail is degraded; no stage whose calls failed may be
cached at any level (its stage record, the Prefect record, the world record), so the next
run with a working API computes that stage again, asks only the calls that failed (every
answered call comes from the call cache) and reports the clean figures with nothing
degraded. Prefect writes a stage's record when the world task's transaction commits (after
the stage itself had removed it), which is how a degraded deposit used to stay cached."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from flow_helpers import computed, run_flow

from flows.caching import SafeJSONSerializer, read_record
from flows.rot_benchmark import rot_benchmark
from rotbench.run.outcome import StageRef, WorldOutcome
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world

# whole probe-arm flows against the fake API (module fixture of 3-4 runs)
pytestmark = pytest.mark.slow

KEY = "sk-ant-api03-ROTBENCH-DEGRADED-test-key-0000"
RUN = {"seeds": [42], "days": 30, "generator": "1"}


def probe_run(root: Path):
    return asyncio.run(rot_benchmark(RunSpec(arm="probe", cache_dir=str(root / "cache"),
                                     reports_dir=str(root / "reports"), **RUN)))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def figures(report) -> dict[str, tuple[int, int]]:
    return {n: (r.numerator, r.denominator) for n, r in report.metrics.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run 1: the API unreachable (every check fails). Run 2 (same cache): a fake API that
    fails every third check. Run 3: the fake answering everything."""
    root = tmp_path_factory.mktemp("degraded")
    mp = pytest.MonkeyPatch()
    world = generate_world(42, 30, generator="1")
    with mp.context() as env, FakeAnthropic(oracle_answerer(world)) as fake:
        env.setenv("ANTHROPIC_API_KEY", KEY)
        env.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_port()}")
        first = probe_run(root).report
        after_first = sorted(p.name.split("-")[0] for p in (root / "cache" / "prefect").iterdir())
        stages_after_first = sorted(p.name.split("-")[0]
                                    for p in (root / "cache" / "stages").iterdir())
        env.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        fake.set_fault(lambda req: "500" if int(req.prompt_sha[:2], 16) % 3 == 0 else None)
        second = probe_run(root).report
        answered = {r.prompt_sha for r in fake.requests if r.outcome == "ok"}
        failed = {r.prompt_sha for r in fake.requests if r.outcome != "ok"} - answered
        fake.set_fault(None)
        before = len(fake.requests)
        third = probe_run(root).report
        asked = [r.prompt_sha for r in fake.requests[before:]]
    oracle, _ = run_flow(tmp_path_factory.mktemp("oracle"), **RUN)
    return (first, after_first, stages_after_first, second, answered, failed, third, asked,
            oracle)


def test_the_unreachable_run_is_degraded_and_caches_no_deposit(runs) -> None:
    first, after_first, stages_after_first, *_ = runs
    assert first.degraded == ["120 checks left undecided after failed model calls"]
    assert "deposit" not in after_first  # no Prefect record of the degraded stage
    assert "deposit" not in stages_after_first  # nor its stored output
    assert {"generate", "extract", "index", "probe", "score"} <= set(after_first)


def test_the_next_run_computes_the_failed_stage_again(runs) -> None:
    first, _, _, second, *_ = runs
    assert (42, "deposit") in computed(second)
    assert second.usage["calls"] > 0


def test_a_rerun_asks_only_the_calls_that_failed(runs) -> None:
    """Run 3 pays only for checks that run 2 could not get answered: not one answered call
    is asked twice."""
    *_, answered, failed, third, asked, _ = runs
    assert asked and len(asked) == len(set(asked))
    assert set(asked).isdisjoint(answered)
    assert set(asked) & failed  # the failed ones are asked again (new answers may lead on
    # to pairs never asked before, so not only those)
    assert third.degraded == []


def test_the_clean_rerun_reports_the_clean_figures(runs) -> None:
    first, _, _, second, *_, third, _, oracle = runs
    assert second.degraded  # every third check failed
    assert figures(third) == figures(oracle)
    assert figures(first) != figures(oracle)


def _record(path: Path, payload) -> None:
    """A Prefect result record of ours at ``path`` holding ``payload``."""
    import json

    blob = SafeJSONSerializer(key=path.name,
                              cache_dir=str(path.parent.parent)).dumps(payload).decode()
    path.write_text(json.dumps({"metadata": {"serializer": {"type": "rotbench-json"},
                                             "storage_key": str(path)}, "result": blob}))


def test_an_incomplete_record_is_never_read_as_a_hit(tmp_path) -> None:
    """Whoever wrote it (Prefect at commit time, an older rotbench), a stage record of a
    stage whose calls failed and a world outcome that is not complete are refused and
    removed."""
    storage = tmp_path / "prefect"
    storage.mkdir()
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "deposit-abc.json").write_text("x")
    ref = StageRef(stage="deposit", key="abc", model="Ledger", sha256="0" * 64, size_bytes=1,
                   complete=False)
    _record(storage / "deposit-abc", ref)
    assert read_record(storage / "deposit-abc", "StageRef") is None
    assert not (storage / "deposit-abc").exists()
    _record(storage / "deposit-abc", ref.model_copy(update={"complete": True}))
    assert read_record(storage / "deposit-abc", "StageRef") is not None
    outcome = WorldOutcome(seed=42, engines=[], degraded={"checks left undecided": 3})
    assert not outcome.complete
    _record(storage / "world-abc", outcome)
    assert read_record(storage / "world-abc", "WorldOutcome") is None
    assert not (storage / "world-abc").exists()

