"""``graphiti`` and ``graphiti-current``: Graphiti (graphiti-core 0.31, getzep/graphiti), the
temporal knowledge-graph engine behind Zep, on rotbench's worlds.

One throwaway graph per world: an embedded Kuzu database (kuzu 0.11) held in memory
(``GRAPH_PATH``; nothing is written to disk), group id ``world-<seed>``. Each document
becomes one episode (``add_episode``: a conversation as a ``message`` episode of
``role: text`` lines, a web page as a ``text`` episode; ``reference_time`` = the document's
written time). Graphiti extracts entities and facts (edges between entities, dated with
``valid_at``/``invalid_at``), de-duplicates them and expires the edges a new fact
contradicts.

- ``graphiti`` searches as its users do by default: ``Graphiti.search(question, group_ids,
  num_results=k)`` (hybrid BM25 + cosine over facts, reciprocal-rank fusion), which also
  returns expired and invalidated edges.
- ``graphiti-current`` keeps only edges with neither ``invalid_at`` nor ``expired_at``
  (``SearchFilters(invalid_at=[[IS NULL]], expired_at=[[IS NULL]])``).

Both call graphiti's search function with a copy of its default configuration: the method
``Graphiti.search`` writes ``num_results`` into that module-level configuration, which
graphiti's own de-duplication search also reads, so a query in one world would change the
candidates another world's next episode is compared with.

Its LLM, embedder and cross-encoder are rotbench's (``rotbench.engines.adapters.graphiti.llm``): on
the oracle arm a scripted client answering from the perceived claims, on the paid arms
Graphiti's own prompts sent through rotbench's model client. Hits are the edges' fact texts,
with rotbench's raw cosine of question and fact as ``similarity`` and status ``retired`` for an
edge with an ``invalid_at``. Calls by response model are counted in ``config``.

Graphiti is async: each engine instance runs its own event loop, created on the first call,
so on the harness's engine thread. Known Kuzu-driver gaps handled here: the driver never sets
``_database`` (graphiti#1258) and its ``build_indices_and_constraints`` does nothing (#1112;
the graph operations' own builder is called instead). Telemetry is off and no ``.env`` is
read (``rotbench.engines.adapters.graphiti.env``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import warnings
from datetime import datetime
from importlib.metadata import version
from typing import Any

import numpy as np

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import Claim

# graphiti-core with it (``env.import_graphiti``), when this module is imported: the engine
# server imports it once, before it forks a worker per world, and each fork then starts with
# it instead of importing it again (rotbench.engines.host.engine_worker)
from rotbench.engines.adapters.graphiti.llm import (  # noqa: E402
    CrossEncoder,
    Embedder,
    ModelLLM,
    ScriptedLLM,
)

ADAPTER_VERSION = "1.0.0"
DEFAULT_MODEL = "claude-sonnet-4-6"
"""Model of Graphiti's calls when the run's client names none."""
CALL_MODELS = ("ExtractedEntities", "ExtractedEdges", "EdgeDuplicate", "EdgeTimestamps",
               "NodeResolutions", "SummarizedEntities")
"""Response models whose call counts ``config`` always lists (others are added when seen)."""


BUFFER_POOL_BYTES = 256 * 2**20
"""Kuzu buffer pool of one world's graph (bytes), which also holds the in-memory graph. A
generator-2 world's graph is about 3 MB on disk and its largest full-text query fits in
64 MB once statements are not re-prepared; 256 MB leaves room for bigger worlds
(``--volume``)."""
GRAPH_PATH = ":memory:"
"""Where a world's Kuzu database lives: in memory (graphiti's own default for the Kuzu
driver). The graph is thrown away with its world; on disk (a folder in the engine's scratch
folder) each write transaction also waits for the disk, for the same figures."""
FULLTEXT_TABLES = ("Entity", "RelatesToNode_")
"""Tables whose graphiti full-text index is built: entity names and summaries, facts."""
_DRIVER_LOCK = threading.Lock()


class _BoundedKuzu:
    """The ``kuzu`` module, but ``Database(path)`` opens with ``BUFFER_POOL_BYTES`` and one
    worker thread."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def Database(self, path: str, **options: Any) -> Any:  # noqa: N802 - kuzu's name
        return self._module.Database(path, **{"buffer_pool_size": BUFFER_POOL_BYTES,
                                              "max_num_threads": 1, **options})


def _signature(value: Any) -> Any:
    """The Python type shape of a query parameter: its type, and for a list or dict the
    shapes of its items (an empty list is its own shape)."""
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_signature(v) for v in value[:1]), not value)
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _signature(v)) for k, v in value.items())))
    return type(value).__name__


class _PreparedOnce:
    """The graph driver's ``client``: one Kuzu ``AsyncConnection`` (one connection, each
    query on one thread) that prepares each distinct query once per parameter shape and
    executes the prepared statement after that.

    graphiti's Kuzu driver sends each query as text, and ``kuzu.AsyncConnection.execute``
    prepares text anew on every call: in a generator-3 world's 1,700 queries preparing was a
    quarter of the engine's CPU (measured with py-spy), and kuzu 0.11.3 keeps every statement
    a connection prepared until that connection closes (20 to 170 KB each). Prepared once, a
    statement is planned once and held once. A statement is reused only for parameters of
    the same shape (``_signature``) as the ones it was prepared with, so Kuzu binds the same
    types; what a query returns is unchanged."""

    def __init__(self, database: Any) -> None:
        import kuzu

        self.connection = kuzu.AsyncConnection(database, max_concurrent_queries=1,
                                               max_threads_per_query=1)
        self.statements: dict[tuple, Any] = {}

    async def execute(self, query: Any, parameters: dict[str, Any] | None = None) -> Any:
        if not parameters or not isinstance(query, str):
            return await self.connection.execute(query, parameters)
        key = (query, _signature(parameters))
        statement = self.statements.get(key)
        if statement is None:
            # built directly: kuzu's ``prepare`` methods warn that separate preparing is
            # deprecated, though ``execute`` takes a prepared statement as before
            import kuzu

            statement = await asyncio.get_running_loop().run_in_executor(
                self.connection.executor, kuzu.PreparedStatement,
                self.connection.connections[0], query, parameters)
            if not statement.is_success():
                raise RuntimeError(statement.get_error_message())
            self.statements[key] = statement
        return await self.connection.execute(statement, parameters)

    def close(self) -> None:
        self.statements.clear()
        self.connection.close()


def _time(document: Document) -> datetime:
    return datetime.fromisoformat(document.timestamp.replace("Z", "+00:00"))


class GraphitiEngine:
    """One Graphiti graph for one world (``rotbench.contract.engine.MemoryEngine``).

    ``current_only``: search only edges still current (``graphiti-current``). ``llm``
    replaces the LLM client (default: scripted on the oracle arm, rotbench's model client on
    the paid arms).
    """

    def __init__(self, context: EngineContext, *, current_only: bool, llm: Any = None) -> None:
        from rotbench.engines.builtin import GRAPHITI, GRAPHITI_CURRENT

        info = GRAPHITI_CURRENT if current_only else GRAPHITI
        self.name, self.version = info.name, info.version
        self.context = context
        self.current_only = current_only
        self.group_id = f"world-{context.seed}"
        if llm is None:
            from rotbench.engines.adapters.model_side import model_side

            llm = model_side(context, ScriptedLLM, ModelLLM)
        self.llm = llm
        self.embedder = Embedder(context.embedder)
        # In the untimed set-up: waits for the run's warm-up of the texts Graphiti embeds
        # (``rotbench.engines.adapters.graphiti.texts``) if it is still running; without one, loads
        # the model now (if this process has not) rather than inside the first deposit's
        # time limit.
        context.embedder.encode(["the user"])
        self.cross_encoder = CrossEncoder(context.embedder)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.graphiti: Any = None
        self.documents: dict[str, Document] = {}
        self._serial = 0
        self._settings = {"graphiti_core": version("graphiti-core"), "kuzu": version("kuzu"),
                          "search": "current edges only" if current_only else "default"}

    @property
    def config(self) -> dict:
        """Versions, the search used, and this world's Graphiti calls by response model
        (``calls_<Model>``), with their total."""
        counts = {f"calls_{m}": self.llm.calls.get(m, 0) for m in CALL_MODELS}
        counts.update({f"calls_{m}": n for m, n in sorted(self.llm.calls.items())})
        return {**self._settings, **counts, "calls": sum(self.llm.calls.values()),
                "episodes": len(self.documents)}

    def _run(self, coro) -> Any:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
            self.loop.run_until_complete(self._open())
        return self.loop.run_until_complete(coro)

    async def _open(self) -> None:
        import kuzu
        from graphiti_core import Graphiti
        from graphiti_core.driver import kuzu_driver
        from graphiti_core.graph_queries import get_fulltext_indices

        logging.getLogger("graphiti_core").setLevel(logging.ERROR)
        with _DRIVER_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "the Kuzu backend is deprecated"
            # graphiti's driver opens kuzu.Database(path) with Kuzu's defaults (a buffer pool
            # of 80% of the machine's memory, whose page table alone is large):
            # for the driver's constructor only, its ``kuzu`` is one that opens it bounded
            kuzu_driver.kuzu = _BoundedKuzu(kuzu)
            try:
                driver = kuzu_driver.KuzuDriver(db=GRAPH_PATH)
            finally:
                kuzu_driver.kuzu = kuzu
        driver._database = self.group_id  # graphiti#1258: add_episode(group_id=...) reads it
        driver.client.close()  # graphiti's own connection: every query on one thread instead,
        # each distinct query prepared once
        driver.client = _PreparedOnce(driver.db)
        # graphiti#1112: the driver builds no full-text index. The ones graphiti searches
        # here (facts, entities) are built; the episode and community indexes (about 40 MB
        # each, kept up to date on every insert) serve only episode and community searches,
        # which neither add_episode without communities nor the adapter's search make.
        for query in get_fulltext_indices(driver.provider):
            if any(f"'{table}'" in query for table in FULLTEXT_TABLES):
                await driver.execute_query(query)
        self.graphiti = Graphiti(graph_driver=driver, llm_client=self.llm,
                                 embedder=self.embedder, cross_encoder=self.cross_encoder)

    def deposit(self, document: Document) -> None:
        from rotbench.engines.adapters.graphiti.llm import ScriptedLLM

        if isinstance(self.llm, ScriptedLLM):
            drafts = list(self.context.claims(document))
            lineage = lineage_of(document)
            for draft in drafts:
                self._serial += 1
                self.llm.claims[draft.sentence] = Claim(
                    **draft.model_dump(), id=f"c{self._serial}", document_uri=document.uri,
                    lineage=lineage, contributor=document.contributor, day=document.day)
            self.llm.document, self.llm.drafts = document, drafts
            self.llm.time = document.timestamp
        try:
            self._run(self._deposit(document))
        finally:
            if isinstance(self.llm, ScriptedLLM):
                self.llm.document, self.llm.drafts, self.llm.time = None, [], None

    async def _deposit(self, document: Document) -> None:
        from graphiti_core.nodes import EpisodeType

        web = document.kind == "web_page"
        done = await self.graphiti.add_episode(
            name=document.uri, episode_body=document.text,
            source_description=f"web page {lineage_of(document)}" if web else "conversation",
            reference_time=_time(document),
            source=EpisodeType.text if web else EpisodeType.message,
            group_id=self.group_of(document.user))
        self.documents[done.episode.uuid] = document

    def group_of(self, user: str | None) -> str:
        """The Graphiti group that holds ``user``'s episodes: the world's group
        (``world-<seed>``) in a single-user world, else ``world-<seed>-u-<16 hex of the
        user's sha256>`` (Graphiti accepts letters, digits, ``-`` and ``_`` in a group id;
        the user id is opaque data and never names a group as it is). One group per user is
        how Graphiti scopes a store shared by several users: a search names its groups."""
        if user is None:
            return self.group_id
        return f"{self.group_id}-u-{hashlib.sha256(user.encode('utf-8')).hexdigest()[:16]}"

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """The top ``k`` facts for ``question`` from ``user``'s group (see ``group_of``)."""
        return self._run(self._query(question, k, self.group_of(user)))

    async def _query(self, question: str, k: int, group: str) -> list[Hit]:
        from graphiti_core.search.search import search
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF
        from graphiti_core.search.search_filters import (
            ComparisonOperator,
            DateFilter,
            SearchFilters,
        )

        if k <= 0:
            return []
        filters = SearchFilters()
        if self.current_only:
            null = [[DateFilter(comparison_operator=ComparisonOperator.is_null)]]
            filters = SearchFilters(invalid_at=null, expired_at=null)
        config = EDGE_HYBRID_SEARCH_RRF.model_copy(update={"limit": k})
        edges = (await search(self.graphiti.clients, question, [group], config,
                              filters)).edges[:k]
        if not edges:
            return []
        vectors = np.asarray(self.context.embedder.encode([question, *[e.fact for e in edges]]),
                             np.float64)
        cosines = vectors[1:] @ vectors[0]
        return [Hit(text=edge.fact, similarity=float(cos), provenance=self._provenance(edge))
                for edge, cos in zip(edges, cosines, strict=True)]

    def _provenance(self, edge: Any) -> Provenance:
        document = next((self.documents[u] for u in edge.episodes if u in self.documents), None)
        return Provenance(
            document_uri=document.uri if document else None,
            day=document.day if document else None,
            status="retired" if edge.invalid_at is not None else "active",
            lineage=lineage_of(document) if document else None, claim_id=edge.uuid)

    def close(self) -> None:
        """Close the graph's connection and the world's loop, and drop the references to them.
        Graphiti's Kuzu driver leaves closing the database to the garbage collector, and so
        does this adapter: a trial that closed it by hand (with a 64 MB buffer pool) ended in
        a segmentation fault inside kuzu 0.11.3."""
        if self.loop is None:
            return
        try:
            if self.graphiti is not None:
                self.loop.run_until_complete(self.graphiti.close())
                self.graphiti.driver.client.close()
        finally:
            self.loop.close()
            self.graphiti = self.loop = None


def make_default(context: EngineContext) -> GraphitiEngine:
    """Factory of ``graphiti``."""
    return GraphitiEngine(context, current_only=False)


def make_current(context: EngineContext) -> GraphitiEngine:
    """Factory of ``graphiti-current``."""
    return GraphitiEngine(context, current_only=True)
