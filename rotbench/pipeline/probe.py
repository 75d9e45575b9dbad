"""The probe stage: ask every checkpoint question of an engine and record the top-k hits.

Talks to the engine only through the protocol in ``rotbench.engines.protocol``. Two orders:

- ``probe_world`` interleaves (protocol v2): before each checkpoint day it deposits every
  document up to that day, then asks that day's questions of the store as it is now. Any
  engine can be measured this way, including one with no notion of time.
- ``probe_as_of`` asks an ``AsOfEngine`` whose documents are all deposited already, each
  question as of its checkpoint day (the reference engine's separate deposit and probe
  stages). Both orders give the same answers for such an engine.

Every call goes through ``GuardedEngine``: one dedicated thread per engine instance, a
timeout per call, and a one-line ``EngineFailure`` naming the engine, seed, day and call for
an exception, a hang or a malformed answer. Without a timeout (the reference engine's own
probe stage) calls run on the caller's thread: a thread per world and a hand-off per
question would buy nothing there but waits for the interpreter lock. The truth at each
probe's day is recorded next to its hits, so scoring and rescoring need nothing else.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pydantic import ValidationError

from rotbench.engines.protocol import (  # noqa: F401
    AsOfEngine,
    Document,
    Hit,
    MemoryEngine,
    accepts_user,
)
from rotbench.safe_text import printable
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes
from rotbench.world.models import World

DEFAULT_TIMEOUT_SECONDS = 60.0
"""Default limit on one engine call (a deposit or a query), seconds."""


class EngineFailure(RuntimeError):
    """An engine under test raised, hung past its timeout or answered malformed hits.

    ``str()`` is one printable line: ``engine NAME: seed S, day D: CALL: what happened``.
    """


class _EngineThread:
    """One daemon thread running submitted calls in order (a hung call never blocks the
    process from exiting, unlike a ThreadPoolExecutor's worker)."""

    def __init__(self) -> None:
        self._calls: queue.Queue = queue.Queue()
        threading.Thread(target=self._loop, name="rotbench-engine", daemon=True).start()

    def _loop(self) -> None:
        while (item := self._calls.get()) is not None:
            fn, future = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    future.set_exception(exc)

    def submit(self, fn: Callable[[], Any]) -> Future:
        future: Future = Future()
        self._calls.put((fn, future))
        return future

    def stop(self) -> None:
        self._calls.put(None)


class GuardedEngine:
    """Calls one engine instance from a single dedicated thread, each call limited to
    ``timeout_seconds``. A call that hangs is abandoned (its thread cannot be killed; it is a
    daemon and dies with the process). ``timeout_seconds`` None: no limit, and every call runs
    on the caller's thread (same errors, no thread)."""

    def __init__(self, engine: MemoryEngine, seed: int, timeout_seconds: float | None,
                 name: str | None = None) -> None:
        self.engine = engine
        self.seed = seed
        self.timeout_seconds = timeout_seconds
        self.name = name or str(getattr(engine, "name", type(engine).__name__))
        missing = [m for m in ("deposit", "query") if not callable(getattr(engine, m, None))]
        if missing:
            raise self.fail(None, "protocol", f"{type(engine).__name__} has no "
                            f"{' or '.join(m + '()' for m in missing)}")
        self._thread = _EngineThread() if timeout_seconds is not None else None
        self.user_scoped: bool | None = None
        """Shared store: whether the engine took ``user`` (None until asked for a user)."""

    def fail(self, day: int | None, call: str, what: str) -> EngineFailure:
        when = f"day {day}" if day is not None else "set-up"
        return EngineFailure(f"engine {printable(self.name, 60)}: seed {self.seed}, {when}: "
                             f"{call}: {what}")

    def call(self, day: int | None, call: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the engine's thread (the caller's without a timeout); raises
        EngineFailure on error or timeout."""
        if self._thread is None:
            try:
                return fn(*args)
            except Exception as exc:  # noqa: BLE001 - the engine's own error, as one line
                raise self._raised(day, call, exc) from None
        future = self._thread.submit(lambda: fn(*args))
        try:
            return future.result(timeout=self.timeout_seconds)
        except Exception as exc:  # noqa: BLE001 - the engine's own error, as one line
            if isinstance(exc, FutureTimeout) and not future.done():  # not the engine's own
                raise self.fail(day, call,
                                f"no answer within {self.timeout_seconds:g} s") from None
            raise self._raised(day, call, exc) from None

    def _raised(self, day: int | None, call: str, exc: Exception) -> EngineFailure:
        return self.fail(day, call, f"raised {type(exc).__name__}: {printable(exc)}")

    def deposit(self, document: Document) -> None:
        self.call(document.day, f"deposit({printable(document.uri, 80)})",
                  lambda: self.engine.deposit(document))

    def hits(self, day: int, question: str, k: int, as_of: bool,
             user: str | None = None) -> list[ScoredHit]:
        """The engine's answer to ``question`` as validated ``ScoredHit`` records (rank =
        position). ``user``: asked on behalf of that user of a shared store, passed only to
        an engine whose method takes it (``accepts_user``; ``user_scoped`` records which).
        Raises EngineFailure for a non-list, a malformed hit or more than ``k``."""
        call = f"query({printable(question, 80)!r}, k={k})"
        kwargs: dict[str, str] = {}
        if user is not None:
            method = self.engine.query_as_of if as_of else self.engine.query
            if self.user_scoped is None:
                self.user_scoped = accepts_user(method)
            if self.user_scoped:
                kwargs["user"] = user
        if as_of:
            answer = self.call(day, call,
                               lambda: self.engine.query_as_of(question, day, k, **kwargs))
        else:
            answer = self.call(day, call, lambda: self.engine.query(question, k, **kwargs))
        return validate_hits(answer, k, lambda what: self.fail(day, call, what))

    def close(self) -> None:
        """Call the engine's optional ``close()`` and release the thread."""
        close = getattr(self.engine, "close", None)
        try:
            if callable(close):
                self.call(None, "close()", close)
        finally:
            if self._thread is not None:
                self._thread.stop()


def validate_hits(answer: object, k: int,
                  fail: Callable[[str], Exception]) -> list[ScoredHit]:
    """``answer`` (a list of ``Hit`` or of dicts with Hit's fields) as ScoredHit records,
    ranked by position. Raises ``fail(reason)`` when it is not a list, holds a malformed hit,
    or holds more than ``k`` hits."""
    if not isinstance(answer, Sequence) or isinstance(answer, str | bytes):
        raise fail(f"returned {type(answer).__name__}, not a list of hits")
    if len(answer) > k:
        raise fail(f"returned {len(answer)} hits for k={k}")
    out: list[ScoredHit] = []
    for position, item in enumerate(answer, start=1):
        try:
            hit = item if isinstance(item, Hit) else Hit.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "hit"
            raise fail(f"malformed hit at position {position}: {field}: {err['msg']}") from None
        out.append(ScoredHit.from_hit(hit, rank=position))
    return out


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
    )


def probe_world(
    world: World,
    engine: MemoryEngine | GuardedEngine,
    top_k: int,
    documents: list[Document] | None = None,
    timeout_seconds: float | None = DEFAULT_TIMEOUT_SECONDS,
) -> WorldProbes:
    """Deposit ``documents`` (default: the world's sessions, ``world_documents``) and ask
    ``world.probes``, interleaved: before each question every document dated on or before
    its day is deposited, in time order.

    Returns a WorldProbes holding, per probe, its truth (None for an unanswerable question)
    and up to ``top_k`` unscored hits. Raises EngineFailure (one line) when the engine raises,
    hangs past ``timeout_seconds`` or answers malformed hits.
    """
    from rotbench.pipeline.extract import world_documents

    docs = list(world_documents(world) if documents is None else documents)
    guard = engine if isinstance(engine, GuardedEngine) else GuardedEngine(
        engine, world.seed, timeout_seconds)
    records: list[ProbeRecord] = []
    next_doc = 0
    try:
        for p in world.probes:
            while next_doc < len(docs) and docs[next_doc].day <= p.day:
                guard.deposit(docs[next_doc])
                next_doc += 1
            records.append(_record(world, p, guard.hits(p.day, p.question, top_k, as_of=False)))
    finally:
        if guard is not engine:
            guard.close()
    return _world_probes(world, records)


def probe_as_of(world: World, engine: AsOfEngine, top_k: int,
                timeout_seconds: float | None = None) -> WorldProbes:
    """Ask every question of ``world`` of an engine that already holds the whole world, each
    as of its checkpoint day (``query_as_of``). Same shape and errors as ``probe_world``."""
    guard = GuardedEngine(engine, world.seed, timeout_seconds)
    try:
        records = [_record(world, p, guard.hits(p.day, p.question, top_k, as_of=True))
                   for p in world.probes]
    finally:
        guard.close()
    return _world_probes(world, records)
