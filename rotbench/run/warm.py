"""What a run starts before its worlds so that they wait less: the embedding warm-up and
the early folding of scored worlds into the report."""

from __future__ import annotations

import threading
from pathlib import Path

from rotbench.contract.registry import EngineInfo
from rotbench.run.plan import every_world_cached
from rotbench.run.spec import RunSpec


def warm_up(spec: RunSpec, storage: Path | None = None,
            engines: list[EngineInfo] | None = None) -> threading.Thread | None:
    """Start embedding every text the run's index stages can meet
    (``rotbench.embedding.shared.warm_for_run``), in the background; the thread, or None.
    ``storage`` (the run's result storage): nothing is started when every world is cached
    whole there (no index stage will run). On Dask the call waits for the warm-up, so that
    the workers find the vectors in the shared cache instead of each loading the model.
    Best effort: the index stage meets and reports any failure."""
    if storage is not None and every_world_cached(spec, storage, engines):
        return None
    from rotbench.embedding.shared import warm_for_run
    from rotbench.perception.noisy.arm import noisy_texts

    thread = warm_for_run(spec.arm, spec.engines, Path(spec.cache_dir), spec.generator,
                          noisy_texts(spec))
    if thread is not None and spec.dask is not None:
        thread.join()
    return thread


def fold_early(spec: RunSpec) -> None:
    """Have each world scored in this process folded for the report by its score stage
    (``rotbench.results.early``): not on Dask (the worlds run in other processes) nor on
    the noisy arm (its report annotates every world first)."""
    if spec.dask or spec.arm == "noisy":
        return
    from rotbench.results.early import EarlyFolds
    from rotbench.results.files.worlds import WORLDS_DIR

    EarlyFolds.open_for(spec.cache_dir, EarlyFolds(
        spec.cache_dir, Path(spec.reports_dir).resolve() / WORLDS_DIR, spec.db.resolve(),
        spec.scorer_version, spec.record_claim_text))


def end_early_folds(spec: RunSpec) -> None:
    """The early folds' last rows inserted and the database let go, before the reports."""
    from rotbench.results.early import EarlyFolds

    EarlyFolds.end_for(spec.cache_dir)
