"""Constants and small helpers shared by the llm tests (imported as ``llm_helpers``)."""

from __future__ import annotations

from rotbench.contract.engine import Document
from rotbench.contract.extraction import world_documents
from rotbench.reference.config import EngineConfig
from rotbench.world.models import World

SECRET_KEY = "sk-ant-api03-ROTBENCH-FAKE-KEY-do-not-leak-5f1c9e2b7a"
"""The distinctive fake API key every test runs with; it must never be written anywhere."""

FAST_CONFIG = EngineConfig().with_overrides(["reconcile.update_floor=0.6"])
"""With the bag-of-words test embedder, the default 0.45 floor sends ~1100 pairs of world 42
to the checker; 0.6 keeps every decision the same with ~320 pairs (a faster test)."""


def documents(world: World) -> list[Document]:
    return world_documents(world)


def drafts_of(docs: list[Document], extractor) -> list[list]:
    """Each document's drafts, extracted with up to 8 documents in flight."""
    from rotbench.pipeline.extract import extract_concurrently

    return [d.drafts for d in extract_concurrently(docs, extractor, 8).documents]
