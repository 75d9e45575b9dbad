"""``--estimate`` for ``hindsight``: Hindsight's own calls on the paid arms.

How many calls Hindsight makes per document depends on what earlier answers put in the bank
(one fact extraction per chunk; consolidation batches over the new facts, split again when a
batch fails; a de-duplication call when a new observation lies close to an existing one).
So the projection runs the engine on each world with the scripted callback and records every
call as the paid client would send it (the same messages): the distinct calls not already in
the call cache are the calls the run makes when the model answers as the oracle does
(``recorded_estimate`` counts them). The basis names the calls per document by scope.
Recordings are kept for the process, by world fingerprint.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import Counter
from pathlib import Path

from rotbench.engines.context import EngineContext
from rotbench.engines.recorded_estimate import RecordedCall, project_recorded_calls
from rotbench.perception.client import RefusingClient
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import world_documents

_RECORDED: dict[str, tuple[int, list[RecordedCall]]] = {}
_LOCK = threading.Lock()


def recorded_calls(world, embedder,
                   scratch_root: Path | None = None) -> tuple[int, list[RecordedCall]]:
    """(documents, every call Hindsight makes while ``world`` is deposited on the oracle arm,
    each as (scope, system, prompt, scripted answer JSON))."""
    with _LOCK:
        if world.fingerprint in _RECORDED:
            return _RECORDED[world.fingerprint]
    from rotbench.engines.adapters.hindsight.engine import HindsightEngine
    from rotbench.engines.adapters.hindsight.llm import ScriptedAnswers

    calls: list[RecordedCall] = []
    documents = world_documents(world)
    scratch = Path(tempfile.mkdtemp(prefix="rotbench-hindsight-estimate-", dir=scratch_root))
    try:
        answers = ScriptedAnswers(OracleChecker(), on_call=lambda *call: calls.append(call))
        context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=scratch,
                                embedder=embedder, model=RefusingClient(),
                                extractor=OracleExtractor(world))
        engine = HindsightEngine(context, answers=answers)
        try:
            for document in documents:
                engine.deposit(document)
        finally:
            engine.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with _LOCK:
        _RECORDED[world.fingerprint] = (len(documents), calls)
    return len(documents), calls


def estimate_calls(worlds, *, arm: str, settings, embedder, cache, stage: str):
    """The ``engine-hindsight`` stage of the estimate; None on the oracle arm."""
    if arm == "oracle":
        return None
    from rotbench.engines.adapters.hindsight.llm import MAX_TOKENS

    recordings = [recorded_calls(world, embedder) for world in worlds]
    documents = sum(count for count, _ in recordings)

    def basis(by_scope: Counter[str]) -> str:
        per_document = ", ".join(f"{name} {n / max(documents, 1):.2f}"
                                 for name, n in sorted(by_scope.items()))
        return (f"one call per distinct prompt Hindsight sends while the oracle answers; per "
                f"document ({documents}): {per_document or 'none'}")

    return project_recorded_calls(
        (call for _, calls in recordings for call in calls), stage=stage, settings=settings,
        cache=cache, max_tokens=MAX_TOKENS, basis=basis)
