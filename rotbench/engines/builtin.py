"""The engines rotbench ships, registered as entry points in ``pyproject.toml``.

Only descriptions live here (no heavy import); each factory is imported when chosen.
"""

from __future__ import annotations

from rotbench.engine import ENGINE_VERSION
from rotbench.engines.registry import EngineInfo

REFERENCE = EngineInfo(
    name="reference",
    version=ENGINE_VERSION,
    factory="rotbench.engine.reference:make_engine",
    takes="claims",
    paid_calls=True,
    separable=True,
    summary="rotbench's reference engine: append-only ledger, reconciliation, source trust",
)

TRANSCRIPT_RAG = EngineInfo(
    name="transcript-rag",
    version="1.0.0",
    factory="rotbench.engines.transcript_rag:make_engine",
    takes="documents",
    summary="baseline: every turn embedded, top k by cosine; no memory management",
)

LATEST_WINS = EngineInfo(
    name="latest-wins",
    version="1.0.0",
    factory="rotbench.engines.latest_wins:make_engine",
    takes="claims",
    summary="baseline: newest claim per subject and slot from any source; no trust policy",
)
