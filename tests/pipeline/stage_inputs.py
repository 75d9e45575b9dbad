"""One small world run through the stage functions by hand (no Prefect), shared by the
per-stage tests of tests/pipeline: seed 42, generator 1, 30 days, oracle perception, the
hashing embedder (no model)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from rotbench.contract.extraction import Extraction, world_documents
from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.pipeline.deposit import deposit
from rotbench.pipeline.extract import extract_concurrently
from rotbench.pipeline.generate import generate
from rotbench.reference.config import EngineConfig
from rotbench.reference.ledger import Ledger
from rotbench.world.models import World

SEED, DAYS, GENERATOR = 42, 30, "1"


@functools.cache
def world() -> World:
    return generate(SEED, DAYS, GENERATOR)


@functools.cache
def extraction() -> Extraction:
    w = world()
    return extract_concurrently(world_documents(w), OracleExtractor(w), 1,
                                [p.question for p in w.probes])


def embedder(folder: Path | None = None) -> Embedder:
    return Embedder(Path(folder or tempfile.mkdtemp()) / "emb", FAKE_MODEL_ID,
                    encoder=hashing_encoder)


@functools.cache
def ledger_and_embedder() -> tuple[Ledger, Embedder]:
    emb = embedder()
    return deposit(extraction(), emb, OracleChecker(), EngineConfig()), emb
