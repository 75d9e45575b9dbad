"""An engine's ``worlds_at_once`` bound (``EngineInfo``): with a bound of 1 no two of its
worlds are ever built at once, whether called directly (``ingest_and_probe``) or through the
flow, and waiting for the slot counts against neither an engine call's time limit nor the
stage's Prefect timeout."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from rotbench.contract.registry import EngineInfo
from rotbench.embedding.embedder import Embedder
from rotbench.embedding.fake import hashing_encoder
from rotbench.engines import builtin, registry
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.ingest_probe import ingest_and_probe
from rotbench.world import generate_world
from tests.pipeline import slot_engines

FACTORY = "tests.pipeline.slot_engines:make"


@pytest.fixture(autouse=True)
def engines_in_this_process(monkeypatch) -> None:
    """The recording engine counts worlds in module state this test reads, so it runs in the
    test's process (a plug-in otherwise runs in a worker process,
    ``rotbench.engines.host.engine_worker``; the world slots are taken in the run's process
    either way)."""
    monkeypatch.setenv("ROTBENCH_ENGINES_IN_PROCESS", "1")


def info(bound: int | None) -> EngineInfo:
    return EngineInfo(name="slot-probe", version="0", factory=FACTORY, takes="documents",
                      worlds_at_once=bound)


def overlaps(events: list[tuple[str, int, float]]) -> int:
    """The most worlds between their ``enter`` and ``exit`` at one moment, from the events."""
    inside = most = 0
    for kind, _, _ in sorted(events, key=lambda e: e[2]):
        inside += 1 if kind == "enter" else -1
        most = max(most, inside)
    return most


def run_two(bound: int | None, tmp_path: Path, timeout: float | None) -> list:
    """Seeds 42 and 43 through ``ingest_and_probe`` on two threads started together."""
    slot_engines.reset()
    embedder = Embedder(tmp_path / "cache", model_id="fake", encoder=hashing_encoder)
    results: list = []

    def one(seed: int) -> None:
        world = generate_world(seed, days=30, generator="3")
        results.append(ingest_and_probe(
            world, info(bound), arm="oracle", extractor=OracleExtractor(world),
            checker=OracleChecker(), model=None, embedder=embedder, top_k=5,
            timeout_seconds=timeout, scratch_root=tmp_path / "scratch"))

    threads = [threading.Thread(target=one, args=(seed,)) for seed in (42, 43)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_without_a_bound_two_worlds_are_built_at_once(tmp_path) -> None:
    """The control: the recording engine does see two worlds at once when nothing bounds it."""
    results = run_two(None, tmp_path, timeout=None)
    assert [r.failure for r in results] == [None, None]
    assert slot_engines.most_at_once() == 2


def test_a_bound_of_one_keeps_worlds_apart(tmp_path) -> None:
    """Each world waits for the slot before its factory and gets it after the other's close;
    the wait (1.5 s, the first world's factory) is not charged to the 1 s call limit."""
    results = run_two(1, tmp_path, timeout=1.0)
    assert [r.failure for r in results] == [None, None]
    assert slot_engines.most_at_once() == 1
    assert overlaps(slot_engines.EVENTS) == 1
    kinds = [kind for kind, _, _ in slot_engines.EVENTS]
    assert kinds == ["enter", "exit", "enter", "exit"]


def test_graphiti_declares_one_world_at_once() -> None:
    assert builtin.GRAPHITI.worlds_at_once == 1
    assert builtin.GRAPHITI_CURRENT.worlds_at_once == 1
    assert builtin.GRAPHITI.identity == f"graphiti@{builtin.GRAPHITI.version}"  # not keyed


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="worlds_at_once"):
        info(0)


@pytest.mark.slow  # a whole flow run (32 s at a load of 3.5, most of it Prefect's start)
def test_through_the_flow_the_wait_is_not_part_of_the_stage_timeout(tmp_path, monkeypatch):
    """Two worlds of a bounded engine in one run (threads): they never overlap, and with the
    ingest_probe stage limited to 2.5 s, the second world (waiting 1.5 s for the slot, then
    1.5 s in its factory) still passes: its Prefect task starts once it holds the slot."""
    from flows.rot_benchmark import rot_benchmark
    from rotbench.run.spec import RunSpec

    real = registry.registered
    monkeypatch.setattr(registry, "registered",
                        lambda: {**real(), "slot-probe": info(1)})
    from flows import tasks

    monkeypatch.setitem(tasks.TASKS, "ingest_probe",
                        tasks.TASKS["ingest_probe"].with_options(timeout_seconds=2.5))
    # the task the world runs, bound to the run's storage, keeps the short limit
    assert tasks.configure(tasks.TASKS["ingest_probe"], tmp_path / "cache").timeout_seconds == 2.5
    slot_engines.reset()
    outcome = asyncio.run(rot_benchmark(RunSpec(
        cache_dir=str(tmp_path / "cache"), reports_dir=str(tmp_path / "reports"),
        generator="3", seeds=[42, 43], days=30, engines=["slot-probe"])))
    assert outcome.failures == []
    assert slot_engines.most_at_once() == 1
    assert [kind for kind, _, _ in slot_engines.EVENTS] == ["enter", "exit", "enter", "exit"]
    assert sorted(seed for kind, seed, _ in slot_engines.EVENTS if kind == "enter") == [42, 43]
