"""``--estimate`` for ``mem0``: its extraction calls on the probe and live arms.

mem0 makes one extraction call per ``add`` (per document), and the prompt holds the
memories its search finds, which depend on what earlier calls answered. So the projection
runs the engine on each world with the scripted stand-in (answering as the oracle would) and
records every prompt it would send: the count of distinct prompts not already in the call
cache is the count of calls the run makes when the model answers as the oracle does (the
tests check it against a fake API answering so). Tokens: characters / 4, as for the other
stages; the answer's size is the scripted answer's.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from rotbench.engines.context import EngineContext
from rotbench.engines.mem0_engine import MAX_TOKENS, Mem0Engine, ScriptedLLM, scripted_answer
from rotbench.perception.client import RefusingClient
from rotbench.perception.model import (
    MESSAGE_OVERHEAD_TOKENS,
    StageEstimate,
    approx_tokens,
    call_key,
    cost_usd,
)
from rotbench.perception.model.engine_client import ENGINE_PROMPT_VERSION
from rotbench.perception.oracle import OracleExtractor
from rotbench.pipeline.extract import world_documents


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
    model = settings.extract_model
    seen: set[str] = set()
    calls = cached = tokens_in = tokens_out = 0
    for world in worlds:
        for system, prompt, answer in recorded_prompts(world, embedder):
            key = call_key(stage=stage, model=model, prompt_version=ENGINE_PROMPT_VERSION,
                           system=system, prompt=prompt, max_tokens=MAX_TOKENS)
            if key in seen:
                continue
            seen.add(key)
            if cache is not None and cache.get(stage, key, model=model,
                                               prompt_version=ENGINE_PROMPT_VERSION):
                cached += 1
                continue
            calls += 1
            tokens_in += approx_tokens(system + prompt) + MESSAGE_OVERHEAD_TOKENS
            tokens_out += approx_tokens(answer) + 1
    return StageEstimate(
        stage=stage, model=model, calls=calls, cached_calls=cached, input_tokens=tokens_in,
        output_tokens=tokens_out,
        usd=cost_usd(settings.price(model), input_tokens=tokens_in, output_tokens=tokens_out),
        projection="exact",
        basis="one call per distinct prompt mem0 sends while the oracle answers (its add "
              "pipeline: one extraction call per document)")
