"""The stage table (``rotbench.pipeline.stages.SPECS``) is what the Prefect wiring uses: the
task names, timeouts, retries and cacheable models all come from it."""

from __future__ import annotations

from pathlib import Path

from flows.caching import MODELS
from flows.tasks import RETRY_DELAYS_SECONDS, configured_tasks
from rotbench.pipeline.stages import ALL_STAGES, ENGINE_STAGES, SPECS, STAGES


def test_the_table_in_pipeline_order_with_the_limits_of_before() -> None:
    assert ALL_STAGES == ("generate", "extract", "index", "deposit", "probe", "ingest_probe",
                          "score", "real_pairs")
    assert {n: (s.timeout_seconds, s.retried) for n, s in SPECS.items()} == {
        "generate": (120, True), "extract": (3600, True), "index": (1800, True),
        "deposit": (3600, True), "probe": (1800, True), "ingest_probe": (7200, False),
        "score": (600, True), "real_pairs": (3600, True)}
    assert {n: s.output.__name__ for n, s in SPECS.items()} == {
        "generate": "World", "extract": "Extraction", "index": "EncodeStats",
        "deposit": "Ledger", "probe": "WorldProbes", "ingest_probe": "EngineAnswers",
        "score": "WorldProbes", "real_pairs": "RealPairs"}
    assert set(STAGES) | set(ENGINE_STAGES) <= set(ALL_STAGES)


def test_the_prefect_tasks_take_name_timeout_and_retries_from_the_table(tmp_path: Path) -> None:
    tasks = configured_tasks(tmp_path)
    assert list(tasks) == list(ALL_STAGES)
    for name, task in tasks.items():
        assert task.name == name
        assert task.timeout_seconds == SPECS[name].timeout_seconds
        assert task.retries == (len(RETRY_DELAYS_SECONDS) if SPECS[name].retried else 0)


def test_every_stage_output_and_nothing_else_is_cacheable() -> None:
    assert set(MODELS) == {s.output.__name__ for s in SPECS.values()} | {
        "StageRef", "WorldOutcome", "SharedWorld"}  # generate's output for --users above 1
    assert all(MODELS[s.output.__name__] is s.output for s in SPECS.values())
