"""A peer engine's live run against a fake API that replays the engine's own recorded calls
(imported as ``live_replay``): what the paid-engine estimate tests share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from flows.rot_benchmark import RunOutcome, rot_benchmark
from rotbench.embedding.shared import shared_embedder
from rotbench.engines.registry import resolve
from rotbench.estimate.engines import project_engines
from rotbench.estimate.perception import estimate
from rotbench.perception.model import LLMSettings
from rotbench.run.spec import RunSpec
from rotbench.testing.fake_anthropic import FakeAnthropic


def estimate_then_replay(world, engine: str, record: Callable[[object], Iterable[tuple]],
                         tmp_path: Path, secret: str, *, days: int,
                         generator: str) -> tuple[object, RunOutcome, int]:
    """Project ``engine``'s live calls on ``world`` (only its own stage), then run the flow on
    the live arm (seed ``world.seed``, ``days``, ``generator``) against a fake API that
    answers each call with the answer ``record(embedder)`` recorded for it, under the API key
    ``secret``. Returns (the projection, the run's outcome, the calls the fake received),
    having checked the run failed nowhere and its usage counts those calls."""
    settings = LLMSettings()
    embedder = shared_embedder(tmp_path / "cache")
    projection = estimate([world], "live", settings, embedder=embedder, cache=None)
    project_engines(projection, [resolve(engine)], [world], arm="live", settings=settings,
                    embedder=embedder, cache=None)
    assert set(projection.stages) == {f"engine-{engine}"}  # no extraction, no checks
    answers = {(system, prompt): answer for _, system, prompt, answer in record(embedder)}

    def answer(request) -> str:
        return answers[(request.system, request.prompt)]

    with FakeAnthropic(answer) as fake, pytest.MonkeyPatch().context() as env:
        env.setenv("ANTHROPIC_API_KEY", secret)
        env.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        outcome = asyncio.run(rot_benchmark(RunSpec(arm="live", seeds=[world.seed], days=days,
                                            generator=generator, engines=[engine],
                                            cache_dir=str(tmp_path / "cache"),
                                            reports_dir=str(tmp_path / "reports"))))
        calls = len(fake.requests)
    assert outcome.failures == []
    assert outcome.report.usage["calls"] == calls
    return projection, outcome, calls
