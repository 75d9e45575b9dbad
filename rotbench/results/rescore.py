"""Rescoring: re-classify a saved report's recorded hit texts under another scorer version.

Nothing is re-run: no engine, no model, no embedding (this module and its imports stay light,
so ``rotbench rescore`` never loads torch, prefect or sentence-transformers). The result is a
new report that copies the source's selection, stages, timings and usage, with the scorer
version, every class and every figure replaced, a new run id, an ``origin``, and as its first
note the origin in words. The source report is never modified.

Worlds are read, re-classified and written one at a time (``build_report`` with a worlds
folder), so a rescore of a thousand-world run holds one world at a time.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from rotbench.results.build import build_report
from rotbench.results.files.report import ReportError
from rotbench.results.files.worlds import iter_worlds
from rotbench.results.schema import Origin, Report, StageRecord
from rotbench.scoring.lexicons import lexicon
from rotbench.scoring.models import WorldProbes
from rotbench.scoring.score import score_world
from rotbench.scoring.tally import MetricTally

_RESCORE_MARK = "-rescore-"


def rescore_run_id(source_run_id: str, scorer: str) -> str:
    """A fresh run id for a rescore: ``<source base>-rescore-<scorer>-<UTC stamp>-<4 hex>``.

    The base drops any earlier rescore suffix, so chains of rescores stay short.
    """
    base = source_run_id.split(_RESCORE_MARK, 1)[0]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{base}{_RESCORE_MARK}{scorer}-{stamp}-{secrets.token_hex(2)}"


def origin_note(origin: Origin, scorer: str) -> str:
    """The first note of a re-scored report, naming its origin."""
    return (
        f"Re-scored under scorer {scorer} from {origin.source} (sha256 {origin.sha256}, "
        f"run {origin.run_id}, scored under {origin.scorer_version}); hit texts re-classified,"
        " nothing re-run."
    )


def _no_text(source_path: Path) -> ReportError:
    return ReportError(
        f"{source_path}: no recorded claim text (record_claim_text was off); "
        "a report without hit texts cannot be rescored"
    )


def rescore_report(report: Report, scorer: str, source_path: Path,
                   worlds_dir: Path | None = None,
                   on_world: Callable[[str, WorldProbes, MetricTally], None] | None = None,
                   ) -> Report:
    """``report`` (loaded from ``source_path``) re-classified and re-measured under ``scorer``.

    ``source_path`` is hashed (sha256 of its bytes) for the origin. ``worlds_dir``: where the
    new report's world files go (the ``worlds`` folder beside where the new report will be
    saved); None embeds the re-scored worlds in the new report. ``on_world``: as for
    ``build_report`` (e.g. ``rotbench.results.database.tables.WorldRows`` of the database to record
    in).

    Raises ``UnknownScorer`` for an unknown version, and ``ReportError`` when the report has
    no recorded claim text, the source file cannot be read, or a world file is missing or
    damaged.
    """
    lexicon(scorer)
    if not report.selection.record_claim_text:
        raise _no_text(source_path)
    try:
        from rotbench._util.regular import read_regular

        sha = hashlib.sha256(read_regular(source_path)).hexdigest()
    except OSError as e:
        raise ReportError(f"cannot read report {source_path}: {e.strerror or e}") from None
    origin = Origin(
        source=str(source_path),
        sha256=sha,
        run_id=report.run_id,
        scorer_version=report.selection.scorer_version,
    )
    started = time.perf_counter()
    stages: list[StageRecord] = []

    def rescored() -> Iterator[WorldProbes]:
        for world in iter_worlds(report):
            if any(h.text is None for p in world.probes if p.truth is not None
                   for h in p.hits):
                raise _no_text(source_path)
            t0, seed = time.perf_counter(), world.seed
            rescored_world = score_world(world, scorer)
            del world
            yield rescored_world
            del rescored_world  # hold no world while the next one is read
            stages.append(StageRecord(seed=seed, stage="rescore", cached=False,
                                      seconds=time.perf_counter() - t0))

    earlier = report.notes[1:] if report.origin is not None else report.notes
    new = build_report(
        run_id=rescore_run_id(report.run_id, scorer),
        selection=report.selection.model_copy(update={"scorer_version": scorer}),
        worlds=rescored(),
        stages=list(report.stages),
        timings=dict(report.timings),
        notes=[origin_note(origin, scorer), *earlier],
        usage=report.usage,
        origin=origin,
        review_queue=report.review_queue,  # neither depends on the scorer: carried over
        real_pairs=report.real_pairs,
        degraded=list(report.degraded),
        worlds_dir=worlds_dir,
        on_world=on_world,
    )
    timings = {**new.timings, "rescore": time.perf_counter() - started}
    return new.model_copy(update={"stages": [*report.stages, *stages], "timings": timings})
