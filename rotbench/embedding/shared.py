"""One embedder per cache folder and model for the whole process.

Worlds that run concurrently share it (and its loaded model and in-memory table); the CLI
uses the same instance to start encoding before the workflow engine is up.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from rotbench.embedding.embedder import DEFAULT_MODEL_ID, Embedder

# Process-wide on purpose: a loaded model (MiniLM, ~90 MB, seconds to load) and its
# in-memory vector table are worth one copy per process, shared by every world on a thread.
_lock = threading.Lock()
_embedders: dict[tuple[str, str], Embedder] = {}


def shared_embedder(cache_dir: Path, model_id: str = DEFAULT_MODEL_ID) -> Embedder:
    """The process-wide Embedder for ``(cache_dir, model_id)``, created on first use."""
    key = (str(Path(cache_dir).resolve()), model_id)
    with _lock:
        if key not in _embedders:
            _embedders[key] = Embedder(Path(key[0]), model_id)  # absolute: the run may chdir
        return _embedders[key]


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

    embedder = shared_embedder(Path(cache_dir))
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
