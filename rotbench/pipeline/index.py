"""Stage: index. Every claim sentence and probe question of a world into the embedding cache.

Runs after extract and before deposit, so that deposit and probe find every vector cached
(a cold world embeds in one batch here instead of one text at a time later).
"""

from __future__ import annotations

from rotbench.contract.extraction import Extraction
from rotbench.embedding.embedder import EncodeStats
from rotbench.world.models import World


def index_texts(world: World, extraction: Extraction) -> list[str]:
    """Every distinct text the index stage embeds for a world: claim sentences and probe
    questions, sorted (so the list, and a hash of it, does not depend on order)."""
    return sorted(set(extraction.sentences()) | {p.question for p in world.probes})


def index_world(world: World, extraction: Extraction, embedder) -> EncodeStats:  # noqa: ANN001
    """Embed ``index_texts(world, extraction)`` not yet in ``embedder``'s cache (an
    ``rotbench.embedding.Embedder``); returns the counts and seconds of the batch."""
    return embedder.ensure(index_texts(world, extraction))
