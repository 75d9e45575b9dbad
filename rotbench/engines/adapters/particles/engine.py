"""``particles``: the Particles engine (linkedparticles 1.214.1) fed rotbench's perception.

It follows the sequence of the package's own rot benchmark (``particles/benchmark/rot/
runner.py``), with rotbench's documents and perception instead of its own:

- one scratch SQLite store per world (``scratch_store``), its blobs in the same scratch folder;
- each document deposited with ``deposit_text_versioned`` (dated with the document's own
  timestamp as ``content_published_at``), then ``extract_snapshot`` with a scripted extractor
  that returns the claims rotbench perceives in that document on the arm (the claims the
  reference engine gets);
- its contradiction and slot checks (purposes ``semantic_lint`` and ``verification``) answered
  by rotbench's checker in the reply format Particles expects (``VERDICT: YES/NO``,
  ``SLOT: CHANGES``); every other model purpose refused and counted;
- a trust rule (score 0.2, the package's own benchmark value) for the host of every web page
  it is given, the policy the reference engine applies to a non-conversation lineage;
- questions through ``retrieve_ranked(db, QueryRequest(question, top_k=k))``.

Lineage in Particles is the URI's host: every conversation of a world shares one host
(``session://world-42/...``) and each web page has its own, so an update across sessions
supersedes rather than being held as a conflict between sources.

Several users in one store: Particles documents no per-user boundary inside one store. Its
query module says the viewer "is the querying store's owner; single-viewer, no auth", that
several contributors sharing a store "each run their own SDK", and that serving several
readers from one config is "a separate multi-tenant layer"
(``particles/operations/query/owner_policy.py``); its README lists "project scope as a
relevance filter rather than isolation" among the limitations (linkedparticles 1.214.1
METADATA, SECURITY.md). The per-user boundary it documents is therefore the store itself:
the adapter keeps one scratch store per user (``user-<n>`` sub-folders, numbered in order
of first deposit: a user id never names a folder), and a question asked for a user reads
that user's store only.

Particles keeps process-wide settings (its blob folder, its store write lock, the second
reading of a contradiction). Every call holds one process-wide lock while those point at the
world's scratch folder, so concurrent worlds never share a folder and nothing is written to
the working directory (the store's write lock, which would sit beside ``./particles.db``, is
off: a scratch store has one writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import Iterator
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import Document, Hit, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.perception import Claim, ClaimDraft

_LOCK = threading.RLock()
"""Held by every call into Particles (its settings are process-wide)."""
_STATUSES = {"active", "retired", "quarantined"}
UNTRUSTED_WEB_TRUST = 0.2


PRELOADED = ("particles.core.schema", "particles.extraction.general", "particles.config",
             "particles.benchmark.rot.oracle", "particles.benchmark.update_gate.scripted",
             "particles.benchmark.memory.runner", "particles.llm", "particles.embeddings",
             "particles.ingest.pipeline", "particles.corpus.deposit",
             "particles.store.trust_store", "particles.operations.query.main")
"""The Particles modules this adapter imports as a world runs (with the Anthropic SDK and
SQLAlchemy beneath them)."""


def preload_in_server() -> None:
    """In the engine server, once before it forks a worker per world
    (``rotbench.engines.host.engine_worker_side.PRELOAD``): import ``PRELOADED``, so that no
    world's worker imports Particles again. Importing them reads no setting and starts no
    thread; each world still points Particles' settings at its own scratch folder."""
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)


class _Embedding:
    """rotbench's embedder behind Particles' ``EmbeddingModel`` seam (unit vectors)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def encode(self, texts, convert_to_numpy: bool = True, normalize_embeddings: bool = True,
               **kwargs: Any):
        single = isinstance(texts, str)
        vectors = self.embedder.encode([texts] if single else list(texts))
        return vectors[0] if single else vectors


class _ScriptedExtractor:
    """An extractor plug-in returning the perceived claims registered for a text."""

    EXTRACTOR_ID = "rotbench-perception"
    EXTRACTOR_VERSION = "1"

    def __init__(self) -> None:
        self._claims: dict[bytes, list[ClaimDraft]] = {}

    def register(self, text: str, claims: list[ClaimDraft]) -> None:
        self._claims[text.encode("utf-8")] = claims

    def accepts(self, source_type: str) -> bool:
        return True

    async def extract(self, snapshot: Any, content: bytes, **kwargs: object):
        from particles.core.schema import UncertaintyNature
        from particles.extraction.general import CandidateParticle, ExtractionResult

        claims = self._claims.get(content)
        if claims is None:
            return ExtractionResult(quality_notes=["rotbench: unregistered document text"])
        return ExtractionResult(candidates=[
            CandidateParticle(content=c.sentence, confidence_value=c.confidence,
                              uncertainty_nature=UncertaintyNature.EPISTEMIC,
                              subjects=[c.subject])
            for c in claims])


class _CheckerProvider:
    """Particles' completion provider for its pair probes, answered by rotbench's checker.

    A prompt holds two fenced claims (A, B). The contradiction probe asks whether they
    contradict; the update probe (its system prompt asks for a ``SLOT:`` line) whether B, the
    later claim, gives A's slot a new value. Claims are found by their sentence among those
    deposited so far; an unknown sentence gets ``VERDICT: NO`` and is counted."""

    def __init__(self, engine: ParticlesEngine) -> None:
        self.engine = engine
        self.calls = 0
        self.unknown = 0

    @property
    def provider_model(self) -> str:
        checker = self.engine.context.checker
        return f"rotbench-checker:{getattr(checker, 'stamp', 'none')}"

    async def complete(self, prompt: str, *, max_tokens: int, system: str | None = None,
                       **opts: object) -> str:
        from particles.benchmark.rot.oracle import _CLAIMS
        from particles.benchmark.update_gate.scripted import unfence_claim
        from particles.ingest.pipeline import UPDATE_SLOT_REQUEST

        self.calls += 1
        update = UPDATE_SLOT_REQUEST in (system or "")
        match = _CLAIMS.search(prompt)
        a = self.engine.claims.get(unfence_claim(match["a"])) if match else None
        b = self.engine.claims.get(unfence_claim(match["b"])) if match else None
        checker = self.engine.context.checker
        if a is None or b is None or checker is None:
            self.unknown += 1
            return "REASON: unknown claims\n" + ("SLOT: NONE\n" if update else "") + "VERDICT: NO"
        older, newer = (a, b) if update or a.day <= b.day else (b, a)
        judgement = checker.judge([(older, newer)])[0]
        if update:
            yes = bool(judgement.contradicts and judgement.new_value_for_slot)
            return ("REASON: the later claim gives the slot a new value\nSLOT: CHANGES\n"
                    "VERDICT: YES") if yes else "REASON: no new value\nSLOT: NONE\nVERDICT: NO"
        if judgement.contradicts:
            return "REASON: the claims give one attribute different values\nVERDICT: YES"
        return "REASON: the claims do not disagree\nVERDICT: NO"


@contextlib.contextmanager
def _settings(scratch: Path) -> Iterator[None]:
    """Point Particles' process-wide settings at ``scratch`` for one call (under _LOCK)."""
    from particles.config import get_config

    cfg = get_config()
    saved = (cfg.storage.blob_dir, cfg.storage.write_lock.enabled,
             cfg.extraction.verify_conflicts)
    cfg.storage.blob_dir = str((scratch / "blobs").resolve())
    cfg.storage.write_lock.enabled = False
    # As the package's own benchmark does: the contradiction probe alone decides.
    cfg.extraction.verify_conflicts = False
    try:
        yield
    finally:
        (cfg.storage.blob_dir, cfg.storage.write_lock.enabled,
         cfg.extraction.verify_conflicts) = saved


class ParticlesEngine:
    """One scratch Particles store for one world (``rotbench.contract.engine.MemoryEngine``)."""

    def __init__(self, context: EngineContext) -> None:
        from rotbench.engines.builtin import PARTICLES

        self.name, self.version = PARTICLES.name, PARTICLES.version
        self.context = context
        self.scratch = Path(context.scratch_dir)
        self.claims: dict[str, Claim] = {}
        self.hosts: set[str] = set()
        self.refused: dict[str, int] = {}
        self.extractor = _ScriptedExtractor()
        self.provider = _CheckerProvider(self)
        self._serial = 0
        self.loop = asyncio.new_event_loop()
        self._stack = AsyncExitStack()
        self.db = self._run(self._open())
        from importlib.metadata import version

        self._config = {"linkedparticles": version("linkedparticles"),
                        "untrusted_web_trust": UNTRUSTED_WEB_TRUST, "verify_conflicts": False}
        self.users: dict[str, ParticlesEngine] = {}
        """Shared store: one store per user (``Document.user``), in order of first deposit."""

    def _store_of(self, user: str | None) -> ParticlesEngine | None:
        """The engine holding ``user``'s store (this one for None; None: never deposited)."""
        return self if user is None else self.users.get(user)

    @property
    def config(self) -> dict:
        """Settings, and what happened on this world: pair checks answered by rotbench's
        checker, checks on claims it could not find, and model calls refused (summed over
        the users' stores of a shared store)."""
        parts = [self, *self.users.values()]
        return {**self._config, "checks": sum(p.provider.calls for p in parts),
                "unknown_pairs": sum(p.provider.unknown for p in parts),
                "refused_model_calls": sum(sum(p.refused.values()) for p in parts)}

    def _run(self, coro) -> Any:
        """Run ``coro`` on this world's loop with the arm's providers and settings."""
        from typing import get_args

        from particles.benchmark.rot.oracle import RefusingProvider
        from particles.llm import LLMPurpose, override_providers

        overrides: dict = {p: RefusingProvider(p, self.refused) for p in get_args(LLMPurpose)}
        overrides["semantic_lint"] = overrides["verification"] = self.provider

        async def routed():
            with override_providers(overrides):
                return await coro

        with _LOCK, _settings(self.scratch):
            return self.loop.run_until_complete(routed())

    async def _open(self):
        from particles.benchmark.memory.runner import scratch_store
        from particles.embeddings import set_embedding_model

        set_embedding_model(_Embedding(self.context.embedder))
        factory = await self._stack.enter_async_context(
            scratch_store(self.scratch / "particles.db"))
        return await self._stack.enter_async_context(factory())

    def deposit(self, document: Document) -> None:
        if document.user is not None:
            store = self.users.get(document.user)
            if store is None:
                scratch = self.scratch / f"user-{len(self.users) + 1}"
                scratch.mkdir(parents=True, exist_ok=True)
                store = ParticlesEngine(dataclasses.replace(self.context, scratch_dir=scratch))
                self.users[document.user] = store
            store.deposit(document.model_copy(update={"user": None}))
            return
        drafts = list(self.context.claims(document))
        lineage = lineage_of(document)
        for draft in drafts:
            self._serial += 1
            self.claims[draft.sentence] = Claim(
                **draft.model_dump(), id=f"c{self._serial}", document_uri=document.uri,
                lineage=lineage, contributor=document.contributor, day=document.day)
        self.extractor.register(document.text, drafts)
        self._run(self._deposit(document))

    async def _deposit(self, document: Document) -> None:
        from particles.core.schema import Mutability, SourceType
        from particles.corpus.deposit import deposit_text_versioned
        from particles.ingest.pipeline import extract_snapshot
        from particles.store.trust_store import upsert_trust_rule

        web = document.kind == "web_page"
        host = urlsplit(document.uri).hostname or ""
        if web and host and host not in self.hosts:
            self.hosts.add(host)
            await upsert_trust_rule(self.db, "domain", host, score=UNTRUSTED_WEB_TRUST,
                                    modifier=None, rationale="rotbench: untrusted web page",
                                    asserted_by="rotbench", actor="rotbench")
            await self.db.commit()
        entry_id, snapshot_id, unchanged = await deposit_text_versioned(
            self.db, text=document.text, uri_r=document.uri,
            source_type=SourceType.WEB_PAGE if web else SourceType.CONVERSATION,
            mutability=Mutability.STABLE, deposited_by="rotbench",
            content_published_at=datetime.fromisoformat(document.timestamp.replace("Z",
                                                                                    "+00:00")))
        await self.db.commit()
        if not unchanged:
            await extract_snapshot(self.db, entry_id, snapshot_id, extractor=self.extractor)
            await self.db.commit()

    def query(self, question: str, k: int, user: str | None = None) -> list[Hit]:
        """Particles' ranked retrieval over ``user``'s store (none for an unknown user)."""
        store = self._store_of(user)
        return store._run(store._query(question, k)) if store is not None else []

    async def _query(self, question: str, k: int) -> list[Hit]:
        from particles.core.schema import QueryRequest
        from particles.operations.query.main import retrieve_ranked

        scored = await retrieve_ranked(self.db, QueryRequest(question=question, top_k=k))
        hits = []
        for particle, similarity, effective in scored[:k]:
            status = str(getattr(particle.status, "value", particle.status)).lower()
            hits.append(Hit(text=particle.content, similarity=float(similarity),
                            score=float(effective),
                            provenance=Provenance(status=status if status in _STATUSES else None,
                                                  lineage=None, claim_id=str(particle.id))))
        return hits

    def close(self) -> None:
        """Close the users' stores, then this store and the world's loop."""
        try:
            for store in self.users.values():
                store.close()
        finally:
            try:
                self._run(self._stack.aclose())
            finally:
                self.loop.close()


def make_engine(context: EngineContext) -> ParticlesEngine:
    """The registered factory."""
    return ParticlesEngine(context)
