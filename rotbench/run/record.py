"""The last step of a run: assemble the report of record and write it, once.

Called by the parent flow only (one writer): the JSON report goes to
``<reports_dir>/<run-id>.json`` (and ``--out``), atomically; the DuckDB rows go in one
transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rotbench.embedding.embedder import DEFAULT_MODEL_ID
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig
from rotbench.results import Report, Selection, StageRecord, build_report, write_report
from rotbench.results.files.report import report_file_name
from rotbench.results.schema import ConfigValue
from rotbench.rulings import RealPairs, ReviewItem
from rotbench.run.spec import RunSpec
from rotbench.scoring.models import WorldProbes
from rotbench.world.generators.base import checkpoints_for


def new_run_id(arm: str) -> str:
    """``rot-<arm>-<UTC yyyymmdd-HHMMSS>-<6 hex>``: sortable by time, unique per run."""
    return f"rot-{arm}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


class EngineIdentity(BaseModel):
    """Which engine a report measures: how it was chosen (``source``: the ``--engine``
    value) and the name, version and flat config the engine reported."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = "reference"
    name: str = "reference"
    version: str = ENGINE_VERSION
    config: dict[str, ConfigValue] | None = Field(
        default=None, description="None: the reference engine's configuration of the run.")


def selection_for(spec: RunSpec, stamps: dict[str, str],
                  engine: EngineIdentity | None = None,
                  user_scoped: bool | None = None) -> Selection:
    """The report's selection block: everything needed to reproduce the run, for the engine
    ``engine`` (default: the reference engine). A shared store's (``spec.users`` above 1)
    names its users and whether the engine took the asking user (``user_scoped``)."""
    engine = engine or EngineIdentity()
    reference = engine.source == "reference"
    noise: dict = {}
    if spec.arm == "noisy":
        from rotbench.perception.noisy.arm import run_profile

        profile = run_profile(spec)
        noise = {"noise": profile.name, "noise_digest": profile.digest}
    effective = EngineConfig().with_overrides(spec.engine_overrides())
    config = effective.flat() if reference else dict(engine.config or {})
    # the trust policy in force, whichever flag set it (--no-trust-policy or --set)
    trust_policy = effective.trust.policy if reference else None
    return Selection(
        arm=spec.arm,
        seeds=list(spec.seeds),
        days=spec.days,
        checkpoints=checkpoints_for(spec.days, spec.generator),
        top_k=spec.top_k,
        trust_policy=trust_policy,
        config=config,
        generator_version=spec.generator,
        scorer_version=spec.scorer_version,
        engine=engine.name,
        engine_version=engine.version,
        engine_source=engine.source,
        embedding_model=DEFAULT_MODEL_ID,
        record_claim_text=spec.record_claim_text,
        stamps=stamps,
        users=spec.user_id_list() if spec.users > 1 else [],
        user_scoped=user_scoped if spec.users > 1 else None,
        volume=spec.volume if spec.volume != 1 else None,
        **noise,
    )


def _selected_only(worlds: Iterable[WorldProbes], seeds: list[int]) -> Iterator[WorldProbes]:
    """``worlds`` one at a time, each checked to be a seed of ``seeds`` not seen before: a
    world not selected is refused (ValueError) before anything of it is written."""
    seen: set[int] = set()
    for world in worlds:
        if world.seed not in seeds or world.seed in seen:
            raise ValueError(f"the worlds computed are seeds {sorted([*seen, world.seed])}, "
                             f"not the selection's {sorted(seeds)}")
        seen.add(world.seed)
        yield world
        del world  # hold no world while the next one is made


def _in_seed_order(spec: RunSpec, report: Report) -> Report:
    """``report`` with its worlds in the selection's seed order. Raises ValueError when the
    worlds are not exactly the selection's seeds (a cached result that is not what ran)."""
    ran = sorted(w.seed for w in report.worlds)
    if ran != sorted(spec.seeds):
        raise ValueError(f"the worlds computed are seeds {ran}, not the selection's "
                         f"{sorted(spec.seeds)}")
    order = {seed: i for i, seed in enumerate(spec.seeds)}
    worlds_dir = report.worlds_dir
    report = report.model_copy(
        update={"worlds": sorted(report.worlds, key=lambda e: order[e.seed])})
    report._worlds_dir = worlds_dir
    return report


def with_repeats(report: Report, later: list[Report]) -> Report:
    """``report`` (run 1) with the ``RepeatSummary`` of its runs ``[report, *later]``,
    whose worlds are read one at a time from their world files."""
    from rotbench.results.files.worlds import iter_worlds
    from rotbench.results.repeats import summarise_repeats
    from rotbench.results.schema import reads_decoys
    from rotbench.scoring.paired import question_outcomes

    runs = [report, *later]
    decoys = reads_decoys(report.selection)
    outcomes = [question_outcomes(iter_worlds(r), decoys) for r in runs]
    worlds_dir = report.worlds_dir
    report = report.model_copy(update={"repeats": summarise_repeats(runs, outcomes)})
    report._worlds_dir = worlds_dir
    return report


def record_run(
    spec: RunSpec,
    worlds: Iterable[WorldProbes],
    stages: list[StageRecord],
    timings: dict[str, float],
    notes: list[str],
    stamps: dict[str, str],
    usage: dict[str, Any] | None = None,
    run_id: str | None = None,
    engine: EngineIdentity | None = None,
    review_queue: list[ReviewItem] | None = None,
    real_pairs: RealPairs | None = None,
    degraded: list[str] | None = None,
    user_scoped: bool | None = None,
    repeats: list[Iterable[WorldProbes]] | None = None,
) -> Report:
    """Build the report, write ``<reports_dir>/<run-id>.json`` (+ ``out_path``) and the DuckDB
    rows (``rotbench.results.store.record``). Returns the report (counts only: it is small).

    ``worlds`` is consumed one world at a time (a generator that loads each world when asked
    keeps memory flat; the report lists them in the selection's seed order): each is written
    to ``<reports_dir>/worlds/<sha256>.json`` and folded into the figures, then dropped.

    Raises ValueError when the worlds are not exactly the selection's seeds (a cached
    result that is not what ran) and OSError when the report cannot be written. Nothing is
    half-written: each write is atomic; a database that stays locked or fails leaves the
    report with a pending marker that the next run or ``rotbench db`` imports; ``--out``
    (checked before the run) is written last.

    ``review_queue`` (the reference engine's review records) and ``real_pairs`` (the checks
    scored against rulings) go into the report as they are. ``repeats`` (``--repeat N``):
    the worlds of the engine's runs 2 to N, each an iterable like ``worlds``; their world
    files and rows are written the same way and the report gets its ``RepeatSummary``
    (``rotbench.results.repeats``)."""
    from rotbench.results.database.tables import WorldRows
    from rotbench.results.files.worlds import WORLDS_DIR, copy_worlds
    from rotbench.results.schema import reads_decoys
    from rotbench.results.store import record

    reports_dir = Path(spec.reports_dir)

    if spec.arm == "noisy":  # each probe and hit: the injected errors behind it
        from rotbench.perception.noisy.attribution import annotated_worlds

        worlds = annotated_worlds(spec, worlds)
    selection = selection_for(spec, stamps, engine, user_scoped)
    rows = WorldRows(Path(spec.db), reads_decoys(selection))  # each world's rows, as it goes
    run_id = run_id or new_run_id(spec.arm)
    later: list[Report] = []
    try:
        report = build_report(
            run_id,
            selection,
            _selected_only(worlds, spec.seeds),
            stages,
            timings,
            notes,
            usage,
            review_queue=review_queue,
            real_pairs=real_pairs,
            degraded=degraded,
            worlds_dir=reports_dir / WORLDS_DIR,
            on_world=rows,
        )
        for again in repeats or []:
            if spec.arm == "noisy":
                again = annotated_worlds(spec, again)
            later.append(_in_seed_order(spec, build_report(
                run_id, selection, _selected_only(again, spec.seeds), [], {}, [],
                worlds_dir=reports_dir / WORLDS_DIR, on_world=rows)))
    finally:
        rows.close()
    report = _in_seed_order(spec, report)
    if later:
        report = with_repeats(report, later)
    record(report, reports_dir / report_file_name(report.run_id, report.selection.engine), spec.db)
    if spec.out_path:  # a copy, written last: a failure above never touches the user's file
        out = Path(spec.out_path)
        from rotbench.results.repeats import run_reports

        for run in run_reports(report):  # every run's world files (one for a single run)
            copy_worlds(run, out.parent / WORLDS_DIR)
        write_report(report, out)
    return report
