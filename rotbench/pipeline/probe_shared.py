"""The probe stage for a shared store: several users' worlds in ONE engine instance.

``shared_documents`` interleaves the personas' documents by delivery day (a document's
``delivered_day`` when its generator sets one, else its ``day``), each persona's own order
kept and ties broken by persona order, every document marked with its user
(``Document.user``). ``probe_shared`` deposits them into one engine and, at each checkpoint
day once every document delivered by then is in, asks each user's questions in persona
order on behalf of that user: ``query(question, k, user=...)`` when the engine's ``query``
takes ``user`` (``rotbench.contract.engine.accepts_user``), else ``query(question, k)``.

The result is one ``WorldProbes`` for the store: every record carries its ``user`` and, for
an answerable question, the other users' values the asking user never knew
(``CrossUserValues``), so the isolation metrics, like every other, are computed from the
records alone; the other metrics are per user and pooled.
"""

from __future__ import annotations

from itertools import groupby

from rotbench.contract.engine import Document, MemoryEngine
from rotbench.contract.extraction import world_documents
from rotbench.engines.host.guarded import DEFAULT_TIMEOUT_SECONDS, GuardedEngine
from rotbench.pipeline.probe import _record, probe_world
from rotbench.scoring.models import CrossUserValues, ProbeRecord, UserEntry, WorldProbes
from rotbench.world.shared import SharedWorld, other_users_values


def delivery_day(document: Document) -> int:
    """The day ``document`` reaches the store: ``delivered_day`` if the document has one
    (generators that deliver late), else ``day``."""
    delivered = getattr(document, "delivered_day", None)
    return document.day if delivered is None else int(delivered)


def shared_documents(shared: SharedWorld, multi_contributor: bool = False) -> list[Document]:
    """Every persona's documents (``world_documents``), each marked with its user, merged in
    delivery-day order (stable: a persona's own order kept, persona order on ties)."""
    keyed = []
    for u_index, entry in enumerate(shared.users):
        for d_index, doc in enumerate(world_documents(entry.world, multi_contributor)):
            doc = doc.model_copy(update={"user": entry.user})
            keyed.append(((delivery_day(doc), u_index, d_index), doc))
    keyed.sort(key=lambda item: item[0])
    return [doc for _, doc in keyed]


def probe_shared(shared: SharedWorld, engine: MemoryEngine | GuardedEngine, top_k: int,
                 timeout_seconds: float | None = DEFAULT_TIMEOUT_SECONDS) -> WorldProbes:
    """Deposit ``shared_documents(shared)`` into one engine and ask every user's questions,
    interleaved (module text). Returns the store's WorldProbes (seed: the run's seed,
    fingerprint: ``shared.fingerprint``, ``users`` and ``user_scoped`` set). Raises
    EngineFailure as ``probe_world`` does."""
    docs = shared_documents(shared)
    guard = engine if isinstance(engine, GuardedEngine) else GuardedEngine(
        engine, shared.seed, timeout_seconds)
    asks = sorted(((p.day, u, i) for u, entry in enumerate(shared.users)
                   for i, p in enumerate(entry.world.probes)))
    records: list[ProbeRecord] = []
    next_doc = 0
    try:
        for (day, u), group in groupby(asks, key=lambda ask: ask[:2]):  # one user's checkpoint
            entry = shared.users[u]
            asked = [entry.world.probes[i] for _, _, i in group]
            while next_doc < len(docs) and delivery_day(docs[next_doc]) <= day:
                guard.deposit(docs[next_doc])
                next_doc += 1
            answers = guard.hits_many(day, [p.question for p in asked], top_k, as_of=False,
                                      user=entry.user)
            for probe, hits in zip(asked, answers, strict=True):
                record = _record(entry.world, probe, hits)
                others = None
                if probe.attribute is not None:
                    current, history = other_users_values(shared, u, probe.attribute, day)
                    others = CrossUserValues(current=current, history=history)
                records.append(record.model_copy(update={"user": entry.user,
                                                         "others": others}))
    finally:
        if guard is not engine:
            guard.close()
    first = shared.users[0].world
    return WorldProbes(
        seed=shared.seed, days=shared.days, generator_version=shared.generator_version,
        fingerprint=shared.fingerprint, pools={a.key: list(a.pool) for a in first.attributes},
        probes=records, controls=list(first.controls),
        users=[UserEntry(user=e.user, seed=e.seed, fingerprint=e.world.fingerprint,
                         controls=list(e.world.controls)) for e in shared.users],
        user_scoped=guard.user_scoped)


def probe_any(world, engine: MemoryEngine, top_k: int) -> WorldProbes:
    """Deposit ``world``'s documents into ``engine`` and ask its questions (top ``top_k``):
    a ``SharedWorld`` through ``probe_shared`` (every persona into the one engine), a single
    world through ``rotbench.pipeline.probe.probe_world``. Raises what they raise."""
    if isinstance(world, SharedWorld):
        return probe_shared(world, engine, top_k)
    return probe_world(world, engine, top_k, world_documents(world))
