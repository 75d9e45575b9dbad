"""Shared helpers of the noisy-arm tests: the reference engine's stages on one world under a
given perception, with the deterministic bag-of-words embedder (no model loaded)."""

from __future__ import annotations

from pathlib import Path

from rotbench.contract.extraction import world_documents
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate
from rotbench.perception.noisy.perception import NoisyChecker, NoisyExtractor, world_plan
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.stages import SPECS
from rotbench.reference.config import EngineConfig
from rotbench.reference.engine import ReferenceEngine
from rotbench.scoring import score_world
from rotbench.scoring.lexicons import default_scorer
from rotbench.world import generate_world


def perception(world, profile: str | None):
    """(extractor, checker) of the oracle arm (``profile`` None) or the noisy arm."""
    if profile is None:
        return OracleExtractor(world), OracleChecker()
    p = load_profile(profile)
    return NoisyExtractor(world, p), NoisyChecker(world, p)


def reference_world(seed: int, profile: str | None, emb_dir: Path, generator: str = "4"):
    """The reference engine's scored probes of ``seed`` (the generator's default scorer, v6)
    under ``profile``, annotated with the noise record on the noisy arm."""
    world = generate_world(seed, 90, generator)
    embedder = Embedder(emb_dir, FAKE_MODEL_ID, encoder=hashing_encoder)
    extractor, checker = perception(world, profile)
    config = EngineConfig()
    extraction = SPECS["extract"].function(world_documents(world), extractor, 1,
                                           [p.question for p in world.probes])
    ledger = SPECS["deposit"].function(extraction, embedder, checker, config)
    engine = ReferenceEngine.from_ledger(ledger, config, embedder, extraction.questions)
    scored = score_world(SPECS["probe"].function(world, engine, 10,
                                                 questions_read=extraction.questions),
                         default_scorer(generator))
    if profile is not None:
        scored = annotate(scored, world_plan(world, load_profile(profile)), world)
    return scored
