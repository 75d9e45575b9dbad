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

import shutil
import tempfile
import threading
from pathlib import Path

from rotbench.engines.context import EngineContext
from rotbench.engines.recorded_estimate import RecordedCall, project_recorded_calls
from rotbench.perception.client import RefusingClient
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.extract import world_documents

_RECORDED: dict[tuple[str, bool], list[RecordedCall]] = {}
_LOCK = threading.Lock()


def recorded_calls(world, embedder, *, deletes: bool,
                   scratch_root: Path | None = None) -> list[RecordedCall]:
    """Every request LangMem sends while ``world`` is deposited on the oracle arm, as (tools
    offered, system, prompt, scripted answer JSON)."""
    with _LOCK:
        if (world.fingerprint, deletes) in _RECORDED:
            return _RECORDED[(world.fingerprint, deletes)]
    from rotbench.engines.adapters.langmem.chat import ScriptedChat
    from rotbench.engines.adapters.langmem.engine import LangMemEngine

    calls: list[RecordedCall] = []
    oracle = OracleExtractor(world)
    scratch = Path(tempfile.mkdtemp(prefix="rotbench-langmem-estimate-", dir=scratch_root))
    try:
        chat = ScriptedChat(OracleChecker(), on_call=lambda *call: calls.append(call))
        context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=scratch,
                                embedder=embedder, model=RefusingClient(), extractor=oracle)
        engine = LangMemEngine(context, deletes=deletes, chat=chat)
        try:
            for document in world_documents(world):
                engine.deposit(document)
        finally:
            engine.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with _LOCK:
        _RECORDED[(world.fingerprint, deletes)] = calls
    return calls


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
