"""A synthetic report for tests, benchmarks and demos: no generator, no engine, no model.

``synthetic_report(seeds)`` scores the synthetic worlds of ``rotbench.results.synthetic``
(``synthetic_world_probes``, offered here too for tests) under a plausible oracle-arm
selection. Deterministic in the seeds.
"""

from __future__ import annotations

from rotbench.results.build import build_report
from rotbench.results.schema import Report, Selection, StageRecord
from rotbench.results.synthetic import CHECKPOINTS, synthetic_world_probes
from rotbench.scoring.lexicons import DEFAULT_SCORER

__all__ = ["synthetic_report", "synthetic_selection", "synthetic_world_probes"]


def synthetic_selection(seeds: list[int], scorer: str = DEFAULT_SCORER, **changes) -> Selection:
    """A plausible oracle-arm selection for ``seeds`` (fields overridable by keyword)."""
    fields = dict(
        arm="oracle",
        seeds=list(seeds),
        days=90,
        checkpoints=list(CHECKPOINTS),
        top_k=10,
        trust_policy=True,
        config={"relevance_floor": 0.25, "same_document_floor": 0.8, "update_floor": 0.45},
        generator_version="synthetic-1",
        scorer_version=scorer,
        engine="synthetic",
        engine_version="0",
        embedding_model="none",
        record_claim_text=True,
    )
    fields.update(changes)
    return Selection(**fields)


def synthetic_report(
    seeds: tuple[int, ...] = (42, 43, 44), scorer: str = DEFAULT_SCORER, **selection: object
) -> Report:
    """A scored report over synthetic worlds for ``seeds`` (run id ``synthetic-<scorer>``)."""
    worlds = [synthetic_world_probes(s) for s in seeds]
    return build_report(
        run_id=f"synthetic-{scorer}",
        selection=synthetic_selection(list(seeds), scorer, **selection),
        worlds=worlds,
        stages=[StageRecord(seed=s, stage="probe", cached=False, seconds=0.0) for s in seeds],
        timings={"probe": 0.0},
        notes=["Synthetic worlds and hits: a fixture, not a measurement."],
    )
