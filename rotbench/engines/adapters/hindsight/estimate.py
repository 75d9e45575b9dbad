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

from pathlib import Path

from rotbench.engines.adapters.recorded_estimate import (
    RecordedCall,
    per_document_estimate,
    record_oracle_deposit,
)
from rotbench.perception.oracle import OracleChecker


def recorded_calls(world, embedder,
                   scratch_root: Path | None = None) -> tuple[int, list[RecordedCall]]:
    """(documents, every call Hindsight makes while ``world`` is deposited on the oracle arm,
    each as (scope, system, prompt, scripted answer JSON))."""
    from rotbench.engines.adapters.hindsight.engine import HindsightEngine
    from rotbench.engines.adapters.hindsight.llm import ScriptedAnswers

    def build(context, on_call):
        return HindsightEngine(context, answers=ScriptedAnswers(OracleChecker(), on_call=on_call))

    return record_oracle_deposit(world, embedder, recording="hindsight", build=build,
                                 scratch_root=scratch_root)


def estimate_calls(worlds, *, arm: str, settings, embedder, cache, stage: str):
    """The ``engine-hindsight`` stage of the estimate; None on the oracle arm."""
    if arm == "oracle":
        return None
    from rotbench.engines.adapters.hindsight.llm import MAX_TOKENS

    return per_document_estimate(worlds, recorded_calls, engine="Hindsight", max_tokens=MAX_TOKENS,
                                 stage=stage, settings=settings, embedder=embedder, cache=cache)
