"""The stage table (``rotbench.pipeline.stages.SPECS``) names the stages and their cacheable
models; each Prefect task of ``flows/tasks.py`` declares its own timeout and retries."""

from __future__ import annotations

from pathlib import Path

from flows.tasks import RETRY_DELAYS_SECONDS, configured_tasks, transient
from rotbench.pipeline.stages import ALL_STAGES, ENGINE_STAGES, SPECS, STAGES
from rotbench.run.store import MODELS


def test_the_table_in_pipeline_order_with_the_limits_of_before() -> None:
    assert ALL_STAGES == ("generate", "extract", "index", "deposit", "probe", "ingest_probe",
                          "score", "real_pairs")
    assert {n: s.output.__name__ for n, s in SPECS.items()} == {
        "generate": "World", "extract": "Extraction", "index": "EncodeStats",
        "deposit": "Ledger", "probe": "WorldProbes", "ingest_probe": "EngineAnswers",
        "score": "WorldProbes", "real_pairs": "RealPairs"}
    assert set(STAGES) | set(ENGINE_STAGES) <= set(ALL_STAGES)


def test_the_prefect_tasks_keep_the_limits_of_before_and_only_an_engine_is_not_retried(
        tmp_path: Path) -> None:
    tasks = configured_tasks(tmp_path)
    assert list(tasks) == list(ALL_STAGES)
    assert {n: (t.timeout_seconds, t.retries) for n, t in tasks.items()} == {
        "generate": (120, 2), "extract": (3600, 2), "index": (1800, 2),
        "deposit": (3600, 2), "probe": (1800, 2), "ingest_probe": (7200, 0),
        "score": (600, 2), "real_pairs": (3600, 2)}
    for name, task in tasks.items():
        assert task.name == name
        assert task.retry_delay_seconds == RETRY_DELAYS_SECONDS
        assert task.retry_condition_fn is transient


def test_every_stage_output_and_nothing_else_is_cacheable() -> None:
    assert set(MODELS) == {s.output.__name__ for s in SPECS.values()} | {
        "StageRef", "WorldOutcome", "SharedWorld"}  # generate's output for --users above 1
    assert all(MODELS[s.output.__name__] is s.output for s in SPECS.values())
