"""Building the report of record: a run's scored worlds pooled into one ``Report``.

The schema (``rotbench.results.schema``) stays pure; this module is the one that folds the
worlds' counts into the figures and (given a folder) writes each world's file as it goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rotbench.results.files.worlds import check_world_fits, restore_world_file, write_world
from rotbench.results.schema import (
    Origin,
    Report,
    Selection,
    StageRecord,
    WorldEntry,
    now_utc,
    reads_decoys,
)
from rotbench.results.summaries import StoredWorld, WorldSummary, summary_of
from rotbench.rulings import RealPairs, ReviewItem, without_text
from rotbench.scoring.metrics import MetricsBundle
from rotbench.scoring.models import WorldProbes
from rotbench.scoring.score import score_world
from rotbench.scoring.tally import MetricTally, tally_world


def _strip_text(world: WorldProbes) -> WorldProbes:
    probes = [
        p.model_copy(update={"hits": [h.model_copy(update={"text": None}) for h in p.hits]})
        for p in world.probes
    ]
    return world.model_copy(update={"probes": probes})


def _summary_serving(item: WorldProbes | StoredWorld, selection: Selection, decoys: bool,
                     worlds_dir: Path | None, on_world) -> WorldSummary | None:
    """The stored summary of ``item`` when it can stand for the world: a ``StoredWorld``
    whose summary for this scorer, decoys and text setting is sound, whose world file is in
    ``worlds_dir`` (or was restored there from the payload's bytes, checked against its
    digest) and whose database rows ``on_world`` holds already. Else None."""
    if not isinstance(item, StoredWorld) or worlds_dir is None:
        return None
    summary = item.summary(selection.scorer_version, decoys, selection.record_claim_text)
    if summary is None or not restore_world_file(summary.sha256, worlds_dir, item.world_bytes):
        return None
    holds = getattr(on_world, "holds", None)
    if on_world is not None and (holds is None or not holds(summary.sha256)):
        return None
    return summary


def fold_world(item: WorldProbes | StoredWorld, scorer: str, text: bool, decoys: bool,
               embedded: list[WorldProbes] | None, worlds_dir: Path | None,
               on_world) -> tuple[WorldEntry, MetricTally]:
    """One world read and folded (see ``build_report``): scored under ``scorer`` when it is
    not, its counts taken, its hit texts dropped unless ``text``, then embedded, or written
    to ``worlds_dir`` with its database rows (``on_world``) and, for a ``StoredWorld``, its
    summary. Returns its entry and counts. Raises what ``build_report`` raises."""
    world = item.load() if isinstance(item, StoredWorld) else item
    scored = world if world.scored else score_world(world, scorer)
    counts = tally_world(scored, decoys)
    if not text:
        scored = _strip_text(scored)
    if embedded is not None:
        embedded.append(scored)
        return WorldEntry.of(scored, None), counts
    check_world_fits(scored)
    # a stored world taken as it is: its payload holds the world file's bytes already
    same = isinstance(item, StoredWorld) and scored is world
    digest = write_world(scored, worlds_dir, item.world_bytes() if same else None)
    if on_world is not None:
        on_world(digest, scored, counts)
    if isinstance(item, StoredWorld):
        item.remember(summary_of(scored, digest, counts), scorer, decoys, text)
    return WorldEntry.of(scored, digest), counts


def build_report(
    run_id: str,
    selection: Selection,
    worlds: Iterable[WorldProbes | StoredWorld],
    stages: list[StageRecord],
    timings: dict[str, float],
    notes: list[str],
    usage: dict[str, Any] | None = None,
    *,
    origin: Origin | None = None,
    review_queue: list[ReviewItem] | None = None,
    real_pairs: RealPairs | None = None,
    degraded: list[str] | None = None,
    worlds_dir: Path | None = None,
    on_world: Callable[[str, WorldProbes, MetricTally], None] | None = None,
) -> Report:
    """The report of record of a run.

    ``worlds`` is taken one world at a time, in the order given. Worlds with unscored hits
    are scored under ``selection.scorer_version`` first (raises ``UnknownScorer`` /
    ``MissingClaimText`` as ``score_world``); already scored worlds are taken as they are.
    Figures are pooled over ``worlds`` by folding one world's counts at a time. When
    ``selection.record_claim_text`` is False, hit texts are dropped after scoring, and so are
    the review queue and the real pairs' claim texts.

    A ``StoredWorld`` (``rotbench.results.summaries``) is read only when its stored summary
    cannot stand for it (see ``_summary_serving``); once read, its summary is stored.
    ``worlds_dir`` given: each world is written to ``<worlds_dir>/<sha256>.json``
    (``rotbench.results.files.worlds.write_world``) and dropped, so no more than one world is held;
    the report lists their digests and must be saved in ``worlds_dir``'s parent folder.
    ``on_world(sha256, world, tally)`` is then called for each world stored (e.g.
    ``rotbench.results.database.tables.WorldRows``, storing its database rows while it is at hand).
    None: the worlds are embedded in the report (for reports built in memory). Raises
    OSError when a world file cannot be written and ValueError for a value beyond a
    database column (``check_world_fits``).
    """
    decoys = reads_decoys(selection)
    tally = MetricTally(decoys)
    entries: list[WorldEntry] = []
    embedded: list[WorldProbes] | None = None if worlds_dir is not None else []
    for item in worlds:
        summary = _summary_serving(item, selection, decoys, worlds_dir, on_world)
        if summary is not None:  # the world's figures, file and rows are all in place
            tally += summary.counts()
            entries.append(WorldEntry(**summary.model_dump(
                include={"seed", "fingerprint", "sha256", "probes", "unanswerable", "hits"})))
            continue
        entry, counts = fold_world(item, selection.scorer_version, selection.record_claim_text,
                                   decoys, embedded, worlds_dir, on_world)
        tally += counts
        entries.append(entry)
        del item  # hold no world while the next one is made
    bundle: MetricsBundle = tally.bundle()
    if not selection.record_claim_text:
        review_queue = []
        real_pairs = without_text(real_pairs) if real_pairs is not None else None
    report = Report(
        run_id=run_id,
        created_at=now_utc(),
        origin=origin,
        selection=selection,
        **{name: getattr(bundle, name) for name in MetricsBundle.model_fields},
        worlds=entries,
        embedded_worlds=embedded,
        notes=list(notes),
        stages=list(stages),
        timings=dict(timings),
        usage=usage,
        review_queue=list(review_queue or []),
        real_pairs=real_pairs,
        degraded=list(degraded or []),
    )
    if worlds_dir is not None:
        report._worlds_dir = Path(worlds_dir)
    return report
