"""The probe arm through the whole flow, against a fake Anthropic API that answers like the
oracle: the same figures as the oracle arm, every call paid once, the key written nowhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from flow_helpers import clone_cache, computed

from flows.rot_benchmark import BudgetRefused, rot_benchmark
from rotbench.embedding.shared import shared_embedder
from rotbench.estimate.perception import estimate
from rotbench.perception.model import LLMSettings
from rotbench.reference.config import EngineConfig
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic, oracle_answerer
from rotbench.world import generate_world

pytestmark = pytest.mark.slow

SECRET = "sk-ant-api03-ROTBENCH-FLOW-KEY-must-not-leak-91d3"


def paid_flow(root: Path, arm: str, **fields):
    """The flow as a deployment runs it: the key and API address from the environment."""
    outcome = asyncio.run(rot_benchmark(RunSpec(arm=arm, seeds=[42], generator="1",
                                        cache_dir=str(root / "cache"),
                                        reports_dir=str(root / "reports"), **fields)))
    return outcome


def run_probe(root: Path, fake: FakeAnthropic):
    return paid_flow(root, "probe").report


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("probe")
    world = generate_world(42, generator="1")
    mp = pytest.MonkeyPatch()
    with FakeAnthropic(oracle_answerer(world)) as fake, mp.context() as env:
        env.setenv("ANTHROPIC_API_KEY", SECRET)
        env.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        report = run_probe(root, fake)
        calls = len(fake.requests)
        projected = estimate([world], "probe", LLMSettings(),
                             embedder=shared_embedder(root / "cache"),
                             engine_config=EngineConfig(), cache=None)
        rerun_root = clone_cache(root, tmp_path_factory.mktemp("rerun") / "run")
        rerun = run_probe(rerun_root, fake)
        rerun_calls = len(fake.requests) - calls
    return root, report, calls, projected, rerun, rerun_calls


def test_probe_arm_reproduces_the_oracle_figures(probe_run, oracle_report) -> None:
    _, report, calls, _, _, _ = probe_run
    oracle = oracle_report("1")  # seed 42, 90 days (tests/conftest.py)
    assert calls > 0
    assert report.metrics == oracle.metrics
    assert report.by_channel == oracle.by_channel
    assert report.selection.arm == "probe"
    assert report.usage is not None and report.usage["calls"] == calls


def test_estimate_counts_exactly_the_calls_made(probe_run) -> None:
    _, _, calls, projected, _, _ = probe_run
    assert projected.calls == calls


def test_rerun_pays_for_nothing(probe_run) -> None:
    _, _, _, _, rerun, rerun_calls = probe_run
    assert rerun_calls == 0
    assert computed(rerun) == set()


def test_api_key_is_written_nowhere(probe_run) -> None:
    root = probe_run[0]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".duckdb" for p in files) and any("calls" in p.parts for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path


def test_live_arm_with_perfect_answers_matches_the_oracle(tmp_path, monkeypatch,
                                                         oracle_report) -> None:
    world = generate_world(42, generator="1")
    with FakeAnthropic(oracle_answerer(world)) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        outcome = paid_flow(tmp_path, "live")
        kinds = {r.kind for r in fake.requests}
    oracle = oracle_report("1")
    assert outcome.report.metrics == oracle.metrics
    assert "extract" in " ".join(sorted(kinds))
    assert outcome.report.usage["calls"] == len(fake.requests)
    saved = Path(outcome.report_paths[0])
    assert saved.exists() and SECRET not in saved.read_text()


def test_budget_below_the_projection_refuses_before_any_call(tmp_path, monkeypatch) -> None:
    world = generate_world(42, generator="1")
    with FakeAnthropic(oracle_answerer(world)) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        with pytest.raises(BudgetRefused, match="exceed the budget of 10 calls"):
            paid_flow(tmp_path, "probe", budget_calls=10)
        # the default models' list prices ship (issue 38): a dollar budget is checked too
        with pytest.raises(BudgetRefused, match=r"projected US\$0\.\d\d exceeds the budget of "
                           r"US\$0\.00"):
            paid_flow(tmp_path, "probe", budget_usd=0.001)
        assert fake.requests == []
    assert not (tmp_path / "reports").exists() or not list((tmp_path / "reports").glob("*.json"))


def read_artifacts(flow_run_id: str) -> list:
    """The artifacts of one flow run, from the server the flow reported to."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        return client.read_artifacts(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))


def test_a_run_that_spends_its_budget_is_cut_short(tmp_path, monkeypatch) -> None:
    """The projection passes, but every check's first answer is invalid (so each check pays
    a retry the projection did not count): calls stop at the budget, the rest are refused,
    and the report, the outcome and the artifact say the run was cut short."""
    world = generate_world(42, generator="1")
    oracle = oracle_answerer(world)

    def invalid_first(req):
        if req.kind in ("contradiction", "slot") and not req.is_retry:
            return "I cannot tell."
        return oracle(req)

    few = ["reconcile.cross_document=false"]
    with FakeAnthropic(invalid_first) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        projected = estimate([world], "probe", LLMSettings(),
                             embedder=shared_embedder(tmp_path / "cache"),
                             engine_config=EngineConfig().with_overrides(few), cache=None).calls
        outcome = paid_flow(tmp_path, "probe", budget_calls=projected, overrides=few,
                            model_concurrency=1)
        made = len(fake.requests)
    assert projected > 2
    assert made == projected  # not one call past the budget
    assert outcome.cut_short and outcome.missing == {}
    spent = outcome.report.usage["budget"]
    assert spent["calls"] == projected and spent["refused"] >= 1
    assert spent["limit"]["calls"] == projected
    assert spent["usd"] > 0  # priced at the shipped list prices (issue 38)
    note = (f"cut short: the budget was reached after {projected} calls "
            f"(US${spent['usd']:.4f}); "
            f"{spent['refused']} further calls were refused and their items left unanswered")
    assert note in outcome.report.notes
    saved = Path(outcome.report_paths[0])
    assert note in saved.read_text()
    [artifact] = read_artifacts(outcome.flow_run_id)
    assert artifact.type == "markdown" and artifact.key == "rotbench-probe"
    assert "**cut short: the budget was reached**" in artifact.data
    assert f"report: `{saved}`" in artifact.data
    assert f"model calls: {outcome.report.usage['calls']};" in artifact.data
    assert "| recall_current_at_k |" in artifact.data
