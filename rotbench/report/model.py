"""The report of record: one versioned pydantic model, saved as ``reports/<run-id>.json``.

A report carries everything needed to read, check and rescore a run without re-running it:
the full selection, the figures, and per world its pools and every probe with every top-k hit.

Versioning: ``schema_version`` is the first field. A report written by a newer rotbench is
refused; an older one is upgraded in place before validation by the chain of functions in
``_UPGRADES`` (``{old version: function returning the next version's dict}``). Version 1 is
the first schema, so the chain is empty today.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rotbench.rulings import RealPairs, ReviewItem, without_text
from rotbench.scoring.lexicons import LEXICONS
from rotbench.scoring.metrics import (
    CORE_METRICS,
    FloorRow,
    MetricName,
    MetricsBundle,
    PoisonMetricName,
    Rate,
    compute_metrics,
)
from rotbench.scoring.models import HitClass, WorldProbes
from rotbench.scoring.score import score_world
from rotbench.world.models import Channel

SCHEMA_VERSION = 2
"""The report schema this rotbench writes and reads.

- 1: the first schema (the reference engine only).
- 2: any engine: ``selection.engine_source``; ``selection.trust_policy`` may be None (an
  engine without that switch); a hit's score, similarity and provenance may be None;
  ``floor_sweep`` is None when some hit reported no raw similarity.
"""


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    selection = dict(data.get("selection") or {})
    selection.setdefault("engine_source", selection.get("engine", "reference"))
    return {**data, "selection": selection, "schema_version": 2}


_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}
"""``{v: f}``: ``f`` turns a version ``v`` report dict into a version ``v + 1`` one."""

ConfigValue = bool | int | float | str | None
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"
"""A run id names a file: no separator, no leading dot, no control character."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Selection(_Strict):
    """What was run: enough to reproduce the run and to read its figures."""

    arm: str = Field(description="'oracle', 'probe' or 'live' (or another registered arm).")
    seeds: list[int] = Field(min_length=1)
    days: int = Field(description="Length of each world in days.")
    checkpoints: list[int] = Field(description="Days on which every question was asked.")
    top_k: int = Field(ge=1, description="Hits kept per question.")
    trust_policy: bool | None = Field(
        description="Whether the reference engine's per-domain trust rule was applied; None "
        "for an engine without that switch.")
    config: dict[str, ConfigValue] = Field(
        default_factory=dict,
        description="The engine's configuration, flat: {'relevance_floor': 0.25, ...}.",
    )
    generator_version: str
    scorer_version: str
    engine: str = Field(description="Engine name as the engine reports it, e.g. 'reference'.")
    engine_version: str
    engine_source: str = Field(
        default="reference",
        description="How the engine was chosen: a registered name or 'module:factory'.",
    )
    embedding_model: str = Field(description="Embedding model id, e.g. 'all-MiniLM-L6-v2'.")
    record_claim_text: bool = Field(
        default=True, description="Whether hit texts are kept in the report (needed to rescore)."
    )
    stamps: dict[str, str] = Field(
        default_factory=dict,
        description="Other version stamps (extractor, checker, prompt), by stage.",
    )


class StageRecord(_Strict):
    """One pipeline stage of one world (``seed`` None for a run-wide stage)."""

    seed: int | None
    stage: str = Field(description="'generate', 'extract', 'index', 'deposit', 'probe', ...")
    cached: bool = Field(description="True when the result came from the cache.")
    seconds: float = Field(ge=0, description="Wall time spent in the stage.")


class Origin(_Strict):
    """Where a re-scored report came from."""

    source: str = Field(description="Path of the source report file, as given.")
    sha256: str = Field(description="sha256 of the source file's bytes.")
    run_id: str = Field(description="The source report's run id.")
    scorer_version: str = Field(description="The scorer version the source was scored under.")


class Report(_Strict):
    """The report of record of one run or one rescore (JSON field names are the contract)."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="Report schema version.")
    run_id: str = Field(
        pattern=RUN_ID_PATTERN,
        description="Letters, digits, '.', '_' and '-' only (it names the report's file).",
    )
    created_at: str = Field(description="ISO-8601 UTC instant the report was built.")
    origin: Origin | None = Field(default=None, description="Set for a re-scored report.")
    selection: Selection
    metrics: dict[MetricName, Rate]
    by_channel: dict[Channel, dict[PoisonMetricName, Rate]]
    by_kind: dict[str, dict[MetricName, Rate]] = Field(
        default_factory=dict,
        description="{decoy kind or unanswerable kind: {metric: rate}}; empty in reports "
        "written before generator 2.",
    )
    by_checkpoint: dict[int, dict[MetricName, Rate]]
    by_attribute: dict[str, dict[MetricName, Rate]]
    by_phrasing: dict[str, dict[MetricName, Rate]]
    first_hit_counts: dict[HitClass, int]
    floor_sweep: list[FloorRow] | None = Field(
        description="None (not applicable) when some hit reported no raw similarity.")
    worlds: list[WorldProbes]
    notes: list[str] = Field(default_factory=list, description="For a rescore, first: origin.")
    stages: list[StageRecord] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per phase.")
    usage: dict[str, Any] | None = Field(
        default=None, description="Metered model usage (tokens, usd); None for free arms."
    )
    review_queue: list[ReviewItem] = Field(
        default_factory=list,
        description="The reference engine's review records (pairs it may not settle itself), "
        "for `rotbench review`; empty for other engines and without claim text.")
    real_pairs: RealPairs | None = Field(
        default=None,
        description="The checks scored against people's rulings on real pairs; never pooled "
        "with the world metrics. None when the run read no rulings file.")
    degraded: list[str] = Field(
        default_factory=list,
        description="Why the figures are incomplete (e.g. model calls that failed, leaving "
        "checks undecided); empty for a complete run.",
    )

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError(f"schema_version must be an integer, got {version!r}")
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"report schema_version {version} is newer than this rotbench reads"
                f" ({SCHEMA_VERSION}); upgrade rotbench"
            )
        while version < SCHEMA_VERSION:
            step = _UPGRADES.get(version)
            if step is None:
                raise ValueError(f"no upgrade from report schema_version {version}")
            data = step(dict(data))
            version = data["schema_version"]
        return data

    @model_validator(mode="after")
    def _complete(self) -> Report:
        # Only the core seven are required: metrics added later are absent from older
        # reports, and the decoy metrics from reports scored under v1 or v2.
        missing = [m for m in CORE_METRICS if m not in self.metrics]
        if missing:
            raise ValueError(f"metrics is missing {', '.join(missing)}")
        return self

    @property
    def scored_with(self) -> str:
        """The scorer version of every class in this report."""
        return self.selection.scorer_version


def reads_decoys(selection: Selection) -> bool:
    """Whether the report's scorer classifies decoy values (scorer v3 on)."""
    lex = LEXICONS.get(selection.scorer_version)
    return lex is not None and lex.reads_decoys


def now_utc() -> str:
    """The current instant, ISO-8601 UTC with seconds (e.g. '2026-09-19T12:00:00+00:00')."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _strip_text(world: WorldProbes) -> WorldProbes:
    probes = [
        p.model_copy(update={"hits": [h.model_copy(update={"text": None}) for h in p.hits]})
        for p in world.probes
    ]
    return world.model_copy(update={"probes": probes})


def build_report(
    run_id: str,
    selection: Selection,
    worlds: list[WorldProbes],
    stages: list[StageRecord],
    timings: dict[str, float],
    notes: list[str],
    usage: dict[str, Any] | None = None,
    *,
    origin: Origin | None = None,
    review_queue: list[ReviewItem] | None = None,
    real_pairs: RealPairs | None = None,
    degraded: list[str] | None = None,
) -> Report:
    """The report of record of a run.

    Worlds with unscored hits are scored under ``selection.scorer_version`` first (raises
    ``UnknownScorer`` / ``MissingClaimText`` as ``score_world``); already scored worlds are
    taken as they are. Figures are pooled over ``worlds``. When
    ``selection.record_claim_text`` is False, hit texts are dropped after scoring, and so are
    the review queue and the real pairs' claim texts.
    """
    scored = [w if w.scored else score_world(w, selection.scorer_version) for w in worlds]
    bundle: MetricsBundle = compute_metrics(scored, reads_decoys=reads_decoys(selection))
    if not selection.record_claim_text:
        scored = [_strip_text(w) for w in scored]
        review_queue = []
        real_pairs = without_text(real_pairs) if real_pairs is not None else None
    return Report(
        run_id=run_id,
        created_at=now_utc(),
        origin=origin,
        selection=selection,
        **{name: getattr(bundle, name) for name in MetricsBundle.model_fields},
        worlds=scored,
        notes=list(notes),
        stages=list(stages),
        timings=dict(timings),
        usage=usage,
        review_queue=list(review_queue or []),
        real_pairs=real_pairs,
        degraded=list(degraded or []),
    )
