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


def _baseline(name: str, module: str, takes: str, summary: str) -> EngineInfo:
    """A baseline's description: version 1.0.0, factory
    ``rotbench.engines.baselines.<module>:make_engine``, no model call of its own."""
    return EngineInfo(name=name, version="1.0.0", takes=takes, summary=summary,
                      factory=f"rotbench.engines.baselines.{module}:make_engine")


TRANSCRIPT_RAG = _baseline("transcript-rag", "transcript_rag", "documents",
                           "baseline: every turn embedded, top k by cosine; no memory management")
LATEST_WINS = _baseline("latest-wins", "latest_wins", "claims",
                        "baseline: newest claim per subject and slot from any source; no trust "
                        "policy")


def _dist(name: str) -> str:
    """Installed version of distribution ``name``, or 'missing' (read from metadata only)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "missing"


def _peer(name: str, adapter: str, make: str, dist: str, *, requires: tuple[str, ...],
          summary: str, takes: str = "documents", paid: bool = False, **more) -> EngineInfo:
    """A peer engine's description: its adapter under ``rotbench.engines.adapters.<adapter>``
    (factory ``engine:<make>``, install extra ``adapter``), versioned as adapter 1.0.0 plus
    distribution ``dist`` and its installed version, ``dist`` spelled as ``pip show`` names
    it (a shipped manifest reads its peer package from this version). ``paid``: the engine
    calls the model itself, and its ``estimate`` module projects the calls."""
    root = f"rotbench.engines.adapters.{adapter}"
    if paid:
        more |= {"paid_calls": True, "estimate": f"{root}.estimate:estimate_calls"}
    return EngineInfo(name=name, version=f"1.0.0+{dist}-{_dist(dist)}",
                      factory=f"{root}.engine:{make}", takes=takes, requires=requires,
                      extra=adapter, summary=summary, **more)


_MEM0 = {"adapter": "mem0", "dist": "mem0ai", "requires": ("mem0", "qdrant_client")}
MEM0_RAW = _peer("mem0-raw", make="make_raw", **_MEM0, summary=(
    "mem0 (open source) storing every turn as it is (infer=False); mem0's own search"))
MEM0 = _peer("mem0", make="make_infer", paid=True, **_MEM0, summary=(
    "mem0 (open source) with its own extraction (infer=True); rotbench's model as "
    "its LLM (scripted on the oracle arm)"))
PARTICLES = _peer("particles", "particles", "make_engine", "linkedparticles",
                  takes="claims", requires=("particles",),
                  summary="Particles (linkedparticles) fed rotbench's perceived claims and checks")
BENCHD = _peer("benchd", "benchd", "make_engine", "benchd-harness",
               requires=("benchd_harness",), parametric=True, summary=(
                   "bridge to a benchd-harness adapter: --engine benchd:<adapter> "
                   "(e.g. benchd:echo)"))

GRAPHITI_WORLDS_AT_ONCE = 1
"""Graphiti worlds built at once per process. Each open graph (an embedded Kuzu database with
its buffer pool, tables and full-text indexes) holds much memory, and most of a world's time
is Graphiti's own Python, which holds the interpreter lock: several graphs at once cost
memory and gain little wall time (docs/graphiti.md)."""

_GRAPHITI = {"adapter": "graphiti", "dist": "graphiti-core", "paid": True,
             "requires": ("graphiti_core", "kuzu"), "worlds_at_once": GRAPHITI_WORLDS_AT_ONCE,
             "warm_texts": "rotbench.engines.adapters.graphiti.texts:warm_texts"}
GRAPHITI = _peer("graphiti", make="make_default", **_GRAPHITI, summary=(
    "Graphiti (temporal knowledge graph, embedded Kuzu) with its own extraction and "
    "its default search (expired facts included); rotbench's model as its LLM"))
GRAPHITI_CURRENT = _peer("graphiti-current", make="make_current", **_GRAPHITI, summary=(
    "Graphiti as 'graphiti', searching only facts with no invalid_at/expired_at"))

_LANGMEM = {"adapter": "langmem", "dist": "langmem", "paid": True,
            "requires": ("langmem", "langgraph", "trustcall")}
LANGMEM = _peer("langmem", make="make_default", **_LANGMEM,
                summary="LangMem: tool calls add or patch the 5 nearest memories; deletes off")
LANGMEM_DELETES = _peer("langmem-deletes", make="make_deletes", **_LANGMEM,
                        summary="LangMem with deletes on (RemoveDoc offered)")

HINDSIGHT_WORLDS_AT_ONCE = 3
"""Hindsight worlds built at once per run process. Each world runs in a worker process of its
own with its own PostgreSQL, so worlds side by side share no state: most of a world's time
is spent waiting for its server and for the run's embedder, which three worlds overlap
(docs/layout-history.md). hindsight-api keeps process-wide state
bound to the event loop that first used it (its date-parsing executor), and two worlds on
two loops in one process failed ("got Future attached to a different loop", then a
segmentation fault), so the adapter itself runs one world at a time in any one process
(engines run in the run's process, or the estimate's recordings: ``engine.ONE_WORLD``)."""

HINDSIGHT = _peer("hindsight", "hindsight", "make_engine", "hindsight-api-slim",
                  paid=True, requires=("hindsight_api", "pg0"),
                  worlds_at_once=HINDSIGHT_WORLDS_AT_ONCE,
                  summary="Hindsight: facts consolidated into observations, embedded PostgreSQL")
