"""``--estimate`` for ``mem0``: its extraction calls on the probe and live arms.

mem0 makes one extraction call per ``add`` (per document), and the prompt holds the
memories its search finds, which depend on what earlier calls answered. So the projection
runs the engine on each world with the scripted stand-in (answering as the oracle would) and
records every prompt it would send: the count of distinct prompts not already in the call
cache is the count of calls the run makes when the model answers as the oracle does (the
tests check it against a fake API answering so); ``recorded_estimate`` counts them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from rotbench.contract.context import EngineContext
from rotbench.contract.extraction import world_documents
from rotbench.contract.model_client import RefusingClient
from rotbench.engines.adapters.mem0.engine import (
    MAX_TOKENS,
    Mem0Engine,
    ScriptedLLM,
    scripted_answer,
)
from rotbench.engines.adapters.recorded_estimate import project_recorded_calls
from rotbench.perception.oracle import OracleExtractor


def recorded_prompts(world, embedder,
                     scratch_root: Path | None = None) -> list[tuple[str, str, str]]:
    """Every (system, prompt, scripted answer) mem0 sends while ``world`` is deposited."""
    sent: list[tuple[str, str, str]] = []
    oracle = OracleExtractor(world)
    scratch = Path(tempfile.mkdtemp(prefix="rotbench-mem0-estimate-", dir=scratch_root))
    try:
        llm = ScriptedLLM(oracle.extract)
        llm.on_call = lambda system, prompt: sent.append(
            (system, prompt, scripted_answer(oracle.extract(llm.document))))
        context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=scratch,
                                embedder=embedder, model=RefusingClient(), extractor=oracle)
        engine = Mem0Engine(context, infer=True, llm=llm)
        try:
            for document in world_documents(world):
                engine.deposit(document)
        finally:
            engine.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return sent


def estimate_calls(worlds, *, arm: str, settings, embedder, cache, stage: str):
    """The ``engine-mem0`` stage of the estimate (None on the oracle arm)."""
    if arm == "oracle":
        return None
    recorded = (("extraction", system, prompt, answer) for world in worlds
                for system, prompt, answer in recorded_prompts(world, embedder))
    return project_recorded_calls(
        recorded, stage=stage, settings=settings, cache=cache, max_tokens=MAX_TOKENS,
        basis=lambda _: "one call per distinct prompt mem0 sends while the oracle answers "
                        "(its add pipeline: one extraction call per document)")
