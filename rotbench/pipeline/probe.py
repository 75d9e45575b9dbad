"""The probe stage: ask every checkpoint question of an engine and record the top-k hits.

Talks to the engine only through the protocol in ``rotbench.contract.engine``. Two orders:

- ``probe_world`` interleaves (protocol v2): before each checkpoint day it deposits every
  document up to that day, then asks that day's questions of the store as it is now. Any
  engine can be measured this way, including one with no notion of time.
- ``probe_as_of`` asks an ``AsOfEngine`` whose documents are all deposited already, each
  question as of its checkpoint day (the reference engine's separate deposit and probe
  stages). Both orders give the same answers for such an engine.

Every call goes through ``rotbench.engines.host.guarded.GuardedEngine`` (a timeout per call,
one-line ``EngineFailure``s). The truth at each probe's day is recorded next to its hits, so
scoring and rescoring need nothing else.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from typing import Any

from rotbench.contract.engine import AsOfEngine, Document, MemoryEngine
from rotbench.engines.host.guarded import DEFAULT_TIMEOUT_SECONDS, GuardedEngine
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world.models import World


def _world_probes(world: World, records: list[ProbeRecord]) -> WorldProbes:
    return WorldProbes(
        seed=world.seed,
        days=world.days,
        generator_version=world.generator_version,
        fingerprint=world.fingerprint,
        pools={a.key: list(a.pool) for a in world.attributes},
        probes=records,
        controls=list(world.controls),
    )


def _record(world: World, probe: Any, hits: list[ScoredHit]) -> ProbeRecord:
    return ProbeRecord(
        day=probe.day,
        attribute=probe.attribute,
        question=probe.question,
        truth=world.truth(probe.attribute, probe.day) if probe.attribute else None,
        hits=hits,
        unanswerable=getattr(probe, "unanswerable", None),
        premise=getattr(probe, "premise", None),
    )


def probe_world(
    world: World,
    engine: MemoryEngine | GuardedEngine,
    top_k: int,
    documents: list[Document] | None = None,
    timeout_seconds: float | None = DEFAULT_TIMEOUT_SECONDS,
) -> WorldProbes:
    """Deposit ``documents`` (default: the world's sessions, ``world_documents``) and ask
    ``world.probes``, interleaved: before each question every document delivered on or
    before its day is deposited, in delivery order (``Document.arrival``).

    Returns a WorldProbes holding, per probe, its truth (None for an unanswerable question)
    and up to ``top_k`` unscored hits. Raises EngineFailure (one line) when the engine raises,
    hangs past ``timeout_seconds`` or answers malformed hits.
    """
    from rotbench.contract.extraction import world_documents

    docs = list(world_documents(world) if documents is None else documents)
    guard = engine if isinstance(engine, GuardedEngine) else GuardedEngine(
        engine, world.seed, timeout_seconds)
    records: list[ProbeRecord] = []
    next_doc = 0
    try:
        for day, group in itertools.groupby(world.probes, key=lambda p: p.day):
            while next_doc < len(docs) and docs[next_doc].arrival <= day:
                guard.deposit(docs[next_doc])
                next_doc += 1
            asked = list(group)  # one checkpoint's questions, asked together
            answers = guard.hits_many(day, [p.question for p in asked], top_k, as_of=False)
            records.extend(_record(world, p, h) for p, h in zip(asked, answers, strict=True))
    finally:
        if guard is not engine:
            guard.close()
    return _world_probes(world, records)


def with_questions_read(probes: WorldProbes, read: Collection[str]) -> WorldProbes:
    """``probes`` with the questions the arm read as frames for the engine recorded:
    ``WorldProbes.questions_read`` their number, and ``ProbeRecord.question_read`` on each
    probe whose question is among them. Unchanged when ``read`` is empty."""
    if not read:
        return probes
    marked = [p.model_copy(update={"question_read": True}) if p.question in read else p
              for p in probes.probes]
    return probes.model_copy(update={"questions_read": len(read), "probes": marked})


def probe_as_of(world: World, engine: AsOfEngine, top_k: int,
                timeout_seconds: float | None = None,
                questions_read: Collection[str] = ()) -> WorldProbes:
    """Ask every question of ``world`` of an engine that already holds the whole world, each
    as of its checkpoint day (``query_as_of``). Same shape and errors as ``probe_world``.
    ``questions_read``: the questions the arm read as frames for the engine (the reference
    engine's extract stage reads them, ``Extraction.questions``), recorded by
    ``with_questions_read``."""
    guard = GuardedEngine(engine, world.seed, timeout_seconds)
    try:
        records = [_record(world, p, guard.hits(p.day, p.question, top_k, as_of=True))
                   for p in world.probes]
    finally:
        guard.close()
    return with_questions_read(_world_probes(world, records), questions_read)
