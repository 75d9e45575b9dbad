"""The engines rotbench ships, registered as entry points in ``pyproject.toml``.

Only descriptions live here (no heavy import); each factory is imported when chosen.
"""

from __future__ import annotations

from rotbench.contract.registry import EngineInfo
from rotbench.reference import ENGINE_VERSION

REFERENCE = EngineInfo(
    name="reference",
    version=ENGINE_VERSION,
    factory="rotbench.reference.engine:make_engine",
    takes="claims",
    paid_calls=True,
    separable=True,
    summary="rotbench's reference engine: append-only ledger, reconciliation, source trust",
)

TRANSCRIPT_RAG = EngineInfo(
    name="transcript-rag",
    version="1.0.0",
    factory="rotbench.engines.baselines.transcript_rag:make_engine",
    takes="documents",
    summary="baseline: every turn embedded, top k by cosine; no memory management",
)

LATEST_WINS = EngineInfo(
    name="latest-wins",
    version="1.0.0",
    factory="rotbench.engines.baselines.latest_wins:make_engine",
    takes="claims",
    summary="baseline: newest claim per subject and slot from any source; no trust policy",
)


def _dist(name: str) -> str:
    """Installed version of distribution ``name``, or 'missing' (read from metadata only)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "missing"


MEM0_RAW = EngineInfo(
    name="mem0-raw",
    version=f"1.0.0+mem0ai-{_dist('mem0ai')}",
    factory="rotbench.engines.adapters.mem0.engine:make_raw",
    takes="documents",
    requires=("mem0", "qdrant_client"),
    extra="mem0",
    summary="mem0 (open source) storing every turn as it is (infer=False); mem0's own search",
)

MEM0 = EngineInfo(
    name="mem0",
    version=f"1.0.0+mem0ai-{_dist('mem0ai')}",
    factory="rotbench.engines.adapters.mem0.engine:make_infer",
    takes="documents",
    paid_calls=True,
    requires=("mem0", "qdrant_client"),
    extra="mem0",
    estimate="rotbench.engines.adapters.mem0.estimate:estimate_calls",
    summary="mem0 (open source) with its own extraction (infer=True); rotbench's model as "
    "its LLM (scripted on the oracle arm)",
)

PARTICLES = EngineInfo(
    name="particles",
    version=f"1.0.0+linkedparticles-{_dist('linkedparticles')}",
    factory="rotbench.engines.adapters.particles.engine:make_engine",
    takes="claims",
    requires=("particles",),
    extra="particles",
    summary="Particles (linkedparticles) fed rotbench's perceived claims and checks",
)

BENCHD = EngineInfo(
    name="benchd",
    version=f"1.0.0+benchd-harness-{_dist('benchd-harness')}",
    factory="rotbench.engines.adapters.benchd.engine:make_engine",
    takes="documents",
    requires=("benchd_harness",),
    extra="benchd",
    parametric=True,
    summary="bridge to a benchd-harness adapter: --engine benchd:<adapter> (e.g. benchd:echo)",
)

GRAPHITI_WORLDS_AT_ONCE = 1
"""Graphiti worlds built at once per process. Each open graph (an embedded Kuzu database with
its buffer pool, tables and full-text indexes) holds about 150 MB, and most of a world's time
is Graphiti's own Python, which holds the interpreter lock: three graphs at once measured
1.3 GB in the rotbench process and gained little wall time on two cores, one at a time about
630 MB (docs/graphiti.md)."""

GRAPHITI = EngineInfo(
    name="graphiti",
    version=f"1.0.0+graphiti-core-{_dist('graphiti-core')}",
    factory="rotbench.engines.adapters.graphiti.engine:make_default",
    takes="documents",
    paid_calls=True,
    requires=("graphiti_core", "kuzu"),
    extra="graphiti",
    estimate="rotbench.engines.adapters.graphiti.estimate:estimate_calls",
    worlds_at_once=GRAPHITI_WORLDS_AT_ONCE,
    warm_texts="rotbench.engines.adapters.graphiti.texts:warm_texts",
    summary="Graphiti (temporal knowledge graph, embedded Kuzu) with its own extraction and "
    "its default search (expired facts included); rotbench's model as its LLM",
)

GRAPHITI_CURRENT = EngineInfo(
    name="graphiti-current",
    version=f"1.0.0+graphiti-core-{_dist('graphiti-core')}",
    factory="rotbench.engines.adapters.graphiti.engine:make_current",
    takes="documents",
    paid_calls=True,
    requires=("graphiti_core", "kuzu"),
    extra="graphiti",
    estimate="rotbench.engines.adapters.graphiti.estimate:estimate_calls",
    worlds_at_once=GRAPHITI_WORLDS_AT_ONCE,
    warm_texts="rotbench.engines.adapters.graphiti.texts:warm_texts",
    summary="Graphiti as 'graphiti', searching only facts with no invalid_at/expired_at",
)

LANGMEM = EngineInfo(
    name="langmem",
    version=f"1.0.0+langmem-{_dist('langmem')}",
    factory="rotbench.engines.adapters.langmem.engine:make_default",
    takes="documents",
    paid_calls=True,
    requires=("langmem", "langgraph", "trustcall"),
    extra="langmem",
    estimate="rotbench.engines.adapters.langmem.estimate:estimate_calls",
    summary="LangMem: tool calls add or patch the 5 nearest memories; deletes off",
)

LANGMEM_DELETES = EngineInfo(
    name="langmem-deletes",
    version=f"1.0.0+langmem-{_dist('langmem')}",
    factory="rotbench.engines.adapters.langmem.engine:make_deletes",
    takes="documents",
    paid_calls=True,
    requires=("langmem", "langgraph", "trustcall"),
    extra="langmem",
    estimate="rotbench.engines.adapters.langmem.estimate:estimate_calls",
    summary="LangMem with deletes on (RemoveDoc offered)",
)

HINDSIGHT_WORLDS_AT_ONCE = 1
"""Hindsight worlds built at once per process. hindsight-api 1.1.0 keeps process-wide state
bound to the event loop that first used it (its background trace writes, its date-parsing
executor): with two worlds on two loops at once a run measured "got Future attached to a
different loop" and then a segmentation fault. One at a time, each world's loop is the only
one running."""

HINDSIGHT = EngineInfo(
    name="hindsight",
    version=f"1.0.0+hindsight-{_dist('hindsight-api-slim')}",
    factory="rotbench.engines.adapters.hindsight.engine:make_engine",
    takes="documents",
    paid_calls=True,
    requires=("hindsight_api", "pg0"),
    extra="hindsight",
    estimate="rotbench.engines.adapters.hindsight.estimate:estimate_calls",
    worlds_at_once=HINDSIGHT_WORLDS_AT_ONCE,
    summary="Hindsight: facts consolidated into observations, embedded PostgreSQL",
)
