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

from pathlib import Path

from rotbench.engines.adapters.recorded_estimate import (
    RecordedCall,
    per_document_estimate,
    record_oracle_deposit,
)
from rotbench.perception.oracle import OracleChecker


def recorded_calls(world, embedder,
                   scratch_root: Path | None = None) -> tuple[int, list[RecordedCall]]:
    """(documents, every call Graphiti makes while ``world`` is deposited on the oracle arm,
    each as (response model name, system, prompt, scripted answer JSON))."""
    from rotbench.engines.adapters.graphiti.engine import GraphitiEngine
    from rotbench.engines.adapters.graphiti.llm import ScriptedLLM

    def build(context, on_call):
        llm = ScriptedLLM(OracleChecker(), on_call=on_call)
        return GraphitiEngine(context, current_only=False, llm=llm)

    return record_oracle_deposit(world, embedder, recording="graphiti", build=build,
                                 scratch_root=scratch_root)


def estimate_calls(worlds, *, arm: str, settings, embedder, cache, stage: str):
    """The ``engine-graphiti`` (or ``engine-graphiti-current``) stage of the estimate; None
    on the oracle arm."""
    if arm == "oracle":
        return None
    from rotbench.engines.adapters.graphiti.llm import MAX_TOKENS

    return per_document_estimate(worlds, recorded_calls, engine="Graphiti", max_tokens=MAX_TOKENS,
                                 stage=stage, settings=settings, embedder=embedder, cache=cache)
