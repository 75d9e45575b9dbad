"""What a stage, a world and a run hand back: plain data, a few KB each.

A stage task returns a ``StageRef`` (where its stored output lies and its hash, never the
output itself); a world task returns a ``WorldOutcome`` (one ``EngineOutcome`` per engine,
naming its stored scored probes). Both cross process boundaries (Dask workers) and are what
Prefect caches, through ``flows.caching.SafeJSONSerializer``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rotbench.results import Report, StageRecord
from rotbench.rulings import RealPairs, ReviewItem


def payload_path(cache_dir: Path | str, stage: str, key: str) -> Path:
    """Where the output of ``stage`` under ``key`` is stored."""
    return Path(cache_dir) / "stages" / f"{stage}-{key}.json"


class StageRef(BaseModel):
    """What a stage task returns and Prefect caches: where its output lies, not the output.

    The payload (a registered model) is ``<cache_dir>/stages/<stage>-<key>.json`` in the
    ``SafeJSONSerializer`` format; ``sha256`` is the hash of its JSON data, so a downstream
    key can name the content without loading it. ``summary`` holds the little the run's
    notes need (the ledger's counts, an engine's reported identity). ``complete`` is False
    when model calls failed during the stage (the caller then keeps it out of the cache).
    """

    stage: str
    key: str
    model: str
    sha256: str
    size_bytes: int
    summary: dict[str, Any] = {}
    complete: bool = True

    def path(self, cache_dir: Path | str) -> Path:
        return payload_path(cache_dir, self.stage, self.key)

    @property
    def record_name(self) -> str:
        """The name of the Prefect cache record that holds this ref: ``<stage>-<key>``
        (``flows.world.WorldStages.stage``; ``SafeJSONSerializer`` writes it in)."""
        return f"{self.stage}-{self.key}"


class EngineOutcome(BaseModel):
    """One engine on one world: the stored scored probes, or the one-line failure."""

    engine: str
    scored: StageRef | None = None
    stages: list[StageRecord] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    stamps: dict[str, str] = Field(default_factory=dict)
    identity: dict = Field(default_factory=dict)
    """The engine's name, version and config as it reported them."""
    failure: str | None = None
    failure_trace: str | None = None
    """With ``failure``: the traceback limited to the engine's own frames, when its code
    raised."""
    review_queue: list[ReviewItem] = Field(default_factory=list)
    """The reference engine's review records on this world (empty for other engines)."""
    user_scoped: bool | None = None
    """Shared store: whether the engine took the asking user (None: one user)."""
    repeats: list[EngineOutcome] = Field(default_factory=list)
    """``--repeat N``: the engine's runs 2 to N on this world, in order (each with its own
    scored probes and stages); empty for a single run."""

    def every_run(self) -> list[EngineOutcome]:
        """This outcome (the first run) followed by its later repeats."""
        return [self, *self.repeats]

    def as_cached(self) -> EngineOutcome:
        """This outcome, and its repeats, with every stage cached (0 s)."""
        return self.model_copy(update={
            "stages": [r.model_copy(update={"cached": True, "seconds": 0.0})
                       for r in self.stages],
            "repeats": [r.as_cached() for r in self.repeats]})


class WorldOutcome(BaseModel):
    """What one world's task hands back to the parent flow (plain data, a few KB)."""

    seed: int
    engines: list[EngineOutcome]
    usage: dict | None = None
    """This world's metered model usage (``LivePerception.usage``); None on the oracle arm."""
    notes: list[str] = Field(default_factory=list)
    """Model perception notes (calls, failures) of this world."""
    refused: int = 0
    """Model calls refused in scripted parts."""
    uncached: list[str] = Field(default_factory=list)
    damaged: list[str] = Field(default_factory=list)
    spans: list[tuple[str, float, float]] = Field(default_factory=list)
    """(stage label, start, end) in epoch seconds."""
    degraded: dict[str, int] = Field(default_factory=dict)
    """Items failed model calls left unanswered (``ArmRuntime.degraded_counts``)."""
    stage_keys: list[str] = Field(default_factory=list)
    """The stage cache records (``<stage>-<key>``) this outcome's results rest on."""
    record: str | None = None
    """The name of this world's whole-world cache record (``world-<world_key>``); None when
    it is not cached as a whole (the paid arms)."""
    incomplete_keys: list[str] = Field(default_factory=list)
    """The stage records (``<stage>-<key>``) computed with failed model calls: never cached.
    Prefect writes a stage's record when the world task's transaction commits, after the
    task body removed it, so the parent removes them again (``drop_incomplete``)."""

    @property
    def record_name(self) -> str | None:
        """``record``, the name ``SafeJSONSerializer`` writes into the record."""
        return self.record

    @property
    def complete(self) -> bool:
        """True when every engine succeeded, every stage went into the cache and no model
        call failed: only a complete outcome may be cached as a whole."""
        return (not self.uncached and not any(r.failure for e in self.engines
                                                  for r in e.every_run())
                and not any(self.degraded.values()))

    def as_cached(self) -> WorldOutcome:
        """This outcome as a run that found it whole in the cache sees it: every stage
        cached (0 s), nothing run, nothing damaged."""
        engines = [e.as_cached() for e in self.engines]
        return self.model_copy(update={"engines": engines, "spans": [], "damaged": []})


@dataclass
class RunWide:
    """A run-wide stage's results, folded into every report."""

    block: RealPairs | None = None
    stages: list[StageRecord] = field(default_factory=list)
    usage: dict | None = None
    notes: list[str] = field(default_factory=list)
    uncached: list[str] = field(default_factory=list)
    degraded: dict[str, int] = field(default_factory=dict)


@dataclass
class PaidRun:
    """What a paid run's worlds share, worked out once by the parent: the projection, the
    spend ledger's path, the budget and the plan of the run's call gate (all None on the
    oracle arm)."""

    estimate: dict | None = None
    ledger_path: str | None = None
    budget: dict | None = None
    gate: dict | None = None


@dataclass
class RunWides:
    """What the run-wide parts hand the reports: real pairs, the extraction batch, the
    engines' sandbox notes and the paid run's shared state."""

    pairs: RunWide
    batched: RunWide
    sandbox_notes: list[str]
    paid: PaidRun


@dataclass
class RunOutcome:
    """What a run produced (the flow's return value in-process)."""

    reports: list[Report] = field(default_factory=list)
    """Every engine's report of record, in the run's engine order."""
    report_paths: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """One line per engine and world that failed (no report is written for that engine)."""
    traces: list[str | None] = field(default_factory=list)
    """Beside ``failures``: the traceback limited to the engine's own frames, or None."""
    failure_paths: list[str] = field(default_factory=list)
    """The failure record of each failed engine (``rotbench.results.failures``)."""
    missing: dict[int, str] = field(default_factory=dict)
    """Seeds whose world failed as a whole -> one-line reason (left out of every report)."""
    refused: int = 0
    """Model calls refused in scripted parts."""
    spans: list[tuple[int, str, float, float]] = field(default_factory=list)
    """(seed, stage, start, end) in epoch seconds: when each stage ran."""
    usage: dict | None = None
    cut_short: bool = False
    flow_run_id: str | None = None
    """The Prefect flow run (its artifact and task runs hang off it)."""

    @property
    def report(self) -> Report | None:
        return self.reports[0] if self.reports else None
