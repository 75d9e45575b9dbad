"""The noisy arm as a whole flow (seed 42, generator 4): no model call with the API base at
a closed port, two cold runs with identical reports, the profile in the selection and its
digest in the stage keys (another profile re-runs extraction but not generation)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from flow_helpers import computed, run_flow

from rotbench.perception.noisy import load_profile

pytestmark = pytest.mark.slow

RUN = {"arm": "noisy", "seeds": [42], "days": 90}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def world_files(root: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "reports" / "worlds").iterdir())]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    with mp.context() as env:
        env.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-ROTBENCH-NOISY-test-key-0000")
        env.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_port()}")
        one, two = tmp_path_factory.mktemp("one"), tmp_path_factory.mktemp("two")
        first, outcome = run_flow(one, generator="4", **RUN, noise="typical")
        second, _ = run_flow(two, generator="4", **RUN, noise="typical")
        worlds_one, worlds_two = world_files(one), world_files(two)
        good, _ = run_flow(one, generator="4", **RUN, noise="good")
        warm, _ = run_flow(one, generator="4", **RUN, noise="typical")
    return first, outcome, second, good, worlds_one, worlds_two, warm


def test_no_model_call_and_the_profile_named(runs) -> None:
    first, outcome, *_ = runs
    assert first.usage is None
    assert "model calls refused in scripted parts: 0" in first.notes
    typical = load_profile("typical")
    sel = first.selection
    assert (sel.arm, sel.noise, sel.noise_digest) == ("noisy", "typical", typical.digest)
    assert sel.stamps["extract"].endswith(f"+noisy/3:typical:{typical.digest}")
    assert first.perception_noise["omission"] == {"injected": 31, "opportunities": 48,
                                                  "question_injected": 0,
                                                  "question_opportunities": 0}
    assert first.perception_noise["subject_split"] == {
        "injected": 4, "opportunities": 40, "question_injected": 2, "question_opportunities": 23}


def test_two_cold_runs_give_identical_reports(runs) -> None:
    first, _, second, _, worlds_one, worlds_two, _ = runs
    assert computed(first) == computed(second)
    volatile = {"run_id", "created_at", "stages", "timings", "worlds", "notes"}
    a = {k: v for k, v in first.model_dump(mode="json").items() if k not in volatile}
    b = {k: v for k, v in second.model_dump(mode="json").items() if k not in volatile}
    assert a == b
    assert [w["sha256"] for w in first.model_dump(mode="json")["worlds"]] == \
        [w["sha256"] for w in second.model_dump(mode="json")["worlds"]]
    assert len(worlds_one) == 1 and worlds_one == worlds_two
    probes = [p for p in worlds_one[0]["probes"] if p.get("perception_errors")]
    assert probes, "no probe carries an error record"


def test_the_questions_read_survive_a_warm_run(runs) -> None:
    """The reference engine had all 34 distinct questions of seed 42 read as frames (its
    extract stage reads them): the count is in its world file, and a warm run (every stage
    from the cache) files the same misses."""
    first, _, _, _, worlds_one, _, warm = runs
    assert [w.get("questions_read") for w in worlds_one] == [34]
    assert {(s.stage, s.cached) for s in warm.stages} == {
        (s.stage, True) for s in warm.stages}
    assert warm.miss_stages == first.miss_stages
    assert warm.family_miss_stages == first.family_miss_stages is not None


def test_another_profile_reruns_perception_but_not_generation(runs) -> None:
    first, _, _, good, *_ = runs
    stages = {(s.stage, s.cached) for s in good.stages}
    assert ("generate", True) in stages
    assert ("extract", False) in stages and ("deposit", False) in stages
    assert good.selection.noise_digest == load_profile("good").digest
    cf = good.metrics["current_first"].numerator, first.metrics["current_first"].numerator
    assert cf[0] >= cf[1]
