"""``--estimate`` for ``langmem`` and ``langmem-deletes``: LangMem's own calls on the paid arms.

LangMem makes one memory-manager call per document, and the prompt holds the memories its
search finds, which depend on what earlier calls answered. So the projection runs the engine
on each world with the scripted model (answering as the oracle would) and records every
request as the paid model would get it (the same system text, messages and tool schemas,
session ids made stable): the distinct requests not already in the call cache are the calls
the run makes when the model answers as the oracle does (``recorded_estimate`` counts them).
The two engines differ in the tools offered (``RemoveDoc``), so each is recorded on its own;
recordings are kept for the process, by world fingerprint and engine.
"""

from __future__ import annotations

from pathlib import Path

from rotbench.engines.adapters.recorded_estimate import (
    RecordedCall,
    project_recorded_calls,
    record_oracle_deposit,
)
from rotbench.perception.oracle import OracleChecker


def recorded_calls(world, embedder, *, deletes: bool,
                   scratch_root: Path | None = None) -> list[RecordedCall]:
    """Every request LangMem sends while ``world`` is deposited on the oracle arm, as (tools
    offered, system, prompt, scripted answer JSON)."""
    from rotbench.engines.adapters.langmem.chat import ScriptedChat
    from rotbench.engines.adapters.langmem.engine import LangMemEngine

    def build(context, on_call):
        return LangMemEngine(context, deletes=deletes,
                             chat=ScriptedChat(OracleChecker(), on_call=on_call))

    recording = "langmem-deletes" if deletes else "langmem"
    return record_oracle_deposit(world, embedder, recording=recording, build=build,
                                 scratch_root=scratch_root)[1]


def estimate_calls(worlds, *, arm: str, settings, embedder, cache, stage: str):
    """The ``engine-langmem`` (or ``engine-langmem-deletes``) stage of the estimate; None on
    the oracle arm."""
    if arm == "oracle":
        return None
    from rotbench.engines.adapters.langmem.chat import MAX_TOKENS

    deletes = stage.endswith("-deletes")
    recorded = [call for world in worlds
                for call in recorded_calls(world, embedder, deletes=deletes)]
    return project_recorded_calls(
        recorded, stage=stage, settings=settings, cache=cache, max_tokens=MAX_TOKENS,
        basis=lambda by_tools: "one call per distinct request LangMem sends while the oracle "
                               f"answers (one memory-manager call per document: "
                               f"{sum(by_tools.values())} distinct)")
