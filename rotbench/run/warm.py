"""What a run starts before its worlds so that they wait less: the embedding warm-up (the
texts the run's engines will embed, read from the engine registry and the oracle's sentences)
and the early folding of scored worlds into the report."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from rotbench.contract.registry import EngineInfo
from rotbench.embedding import shared
from rotbench.run.plan import every_world_cached
from rotbench.run.spec import RunSpec


def warm_up(spec: RunSpec, storage: Path | None = None,
            engines: list[EngineInfo] | None = None) -> threading.Thread | None:
    """Start embedding every text the run's index stages can meet
    (``warm_for_run``), in the background; the thread, or None.
    ``storage`` (the run's result storage): nothing is started when every world is cached
    whole there (no index stage will run). On Dask the call waits for the warm-up, so that
    the workers find the vectors in the shared cache instead of each loading the model.
    Best effort: the index stage meets and reports any failure."""
    if storage is not None and every_world_cached(spec, storage, engines):
        return None
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


def warm_for_run(arm: str, engines: list[str], cache_dir: Path,
                 generator: str, extra: Iterable[str] = ()) -> threading.Thread | None:
    """Start embedding, in one batch in the background, every text the run's engines are
    known to embed on worlds of ``generator``: for the reference engine on the oracle or
    probe arm, every text a scripted arm's index stage can meet
    (``rotbench.perception.oracle.oracle_texts``: 703 texts for generators 1 and 2, 994 with
    generator 3's scheduled, retracted and temporary sentences; the live arm's texts are not
    known before its extraction), and for an engine whose registry entry names
    ``warm_texts``, the texts it returns (Graphiti on the oracle arm). Returns the warm-up
    thread, or None when nothing was started (every text cached already, a warm-up under
    way, or nothing known, or every text shipped: ``rotbench.embedding.bundled.adopt``, which
    on a noisy run takes ``extra`` too). ``Embedder.start_warming`` says how it runs. Best
    effort: an engine that cannot be resolved or whose ``warm_texts`` fails adds nothing."""
    texts = run_texts(arm, engines, generator)
    more = set(extra) - texts  # e.g. the noisy arm's sentences of the run's worlds
    if not texts and not more:
        return None
    from rotbench.embedding import bundled

    embedder = shared.shared_embedder(Path(cache_dir))
    wanted = sorted(texts)
    if more and bundled.enabled() and embedder.missing([*wanted, *more]) \
            and bundled.adopt(embedder, sorted({*wanted, *more})):
        return None  # e.g. a noisy run: every text within the shipped oracle and noise sets
    if wanted and bundled.enabled() and embedder.missing(wanted) \
            and bundled.adopt(embedder, wanted):
        wanted = []  # the shipped vectors of exactly these texts: no model for them
    wanted = sorted({*wanted, *more})
    return embedder.start_warming(wanted) if wanted else None


def run_texts(arm: str, engines: list[str], generator: str) -> set[str]:
    """The texts ``warm_for_run`` warms for a run (empty on the live arm)."""
    if arm == "live":
        return set()
    texts: set[str] = set()
    if "reference" in engines:
        from rotbench.perception.oracle import generator_texts

        texts.update(generator_texts(generator))
    texts.update(_engines_texts(arm, engines, generator))
    return texts


def _engines_texts(arm: str, engines: list[str], generator: str) -> set[str]:
    """The texts the ``warm_texts`` of ``engines`` (registered names) declare."""
    import contextlib

    from rotbench.engines.registry import load_factory, resolve

    found: set[str] = set()
    for name in engines:
        with contextlib.suppress(Exception):
            info = resolve(name)
            if info.warm_texts:  # loaded as rotbench.estimate.engines loads an estimate hook
                warm = load_factory(info.model_copy(update={"factory": info.warm_texts}))
                found.update(t for t in warm(arm, generator) if isinstance(t, str))
    return found
