"""``--estimate`` for ``graphiti`` and ``graphiti-current``: Graphiti's own calls on the paid arms.

How many calls Graphiti makes per episode depends on what earlier answers put in the graph
(an ``EdgeDuplicate`` call per new fact that has candidates, a ``NodeResolutions`` call when
an entity's name is not matched exactly, a ``SummarizedEntities`` call once an entity's facts
outgrow its summary). So the projection runs the engine on each world with the oracle arm's
scripted client and records every prompt, as the paid client would send it (both see the
messages graphiti prepared, byte for byte): the distinct prompts not already in the call
cache are the calls the run makes when the model answers as the oracle does (a test checks
this against the fake API; ``recorded_estimate`` counts them). The basis names the calls per
document by response model.

Both engines deposit the same way, so one recording per world serves both (kept for the
process, keyed by the world's fingerprint); each engine's calls are cached and paid under its
own stage.
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
    """(documents, every call Graphiti makes while ``world`` is deposited on the oracle arm,
    each as (response model name, system, prompt, scripted answer JSON))."""
    with _LOCK:
        if world.fingerprint in _RECORDED:
            return _RECORDED[world.fingerprint]
    from rotbench.engines.graphiti_engine import GraphitiEngine
    from rotbench.engines.graphiti_llm import ScriptedLLM

    calls: list[RecordedCall] = []
    oracle = OracleExtractor(world)
    documents = world_documents(world)
    scratch = Path(tempfile.mkdtemp(prefix="rotbench-graphiti-estimate-", dir=scratch_root))
    try:
        llm = ScriptedLLM(OracleChecker(), on_call=lambda *call: calls.append(call))
        context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=scratch,
                                embedder=embedder, model=RefusingClient(), extractor=oracle)
        engine = GraphitiEngine(context, current_only=False, llm=llm)
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
    """The ``engine-graphiti`` (or ``engine-graphiti-current``) stage of the estimate; None
    on the oracle arm."""
    if arm == "oracle":
        return None
    from rotbench.engines.graphiti_llm import MAX_TOKENS

    recordings = [recorded_calls(world, embedder) for world in worlds]
    documents = sum(count for count, _ in recordings)

    def basis(by_model: Counter[str]) -> str:
        per_document = ", ".join(f"{name} {n / max(documents, 1):.2f}"
                                 for name, n in sorted(by_model.items()))
        return (f"one call per distinct prompt Graphiti sends while the oracle answers; per "
                f"document ({documents}): {per_document or 'none'}")

    return project_recorded_calls(
        (call for _, calls in recordings for call in calls), stage=stage, settings=settings,
        cache=cache, max_tokens=MAX_TOKENS, basis=basis)
