"""Stage: build an engine for one world, feed it the world and ask every question.

For an engine without separable stages the pipeline is generate -> ingest-and-probe -> score;
this module is the middle stage as a plain function (``flows/`` caches it). The engine is
handed the arm's extractor behind a counting proxy (``rotbench.pipeline.question_count``),
wherever it runs, so its answers record how many questions it had read as frames
(``WorldProbes.questions_read``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rotbench._util.safe_text import printable
from rotbench.contract.context import EngineContext
from rotbench.contract.model_client import ModelClient
from rotbench.contract.perception import Checker, Extractor
from rotbench.contract.registry import EngineError, EngineInfo
from rotbench.embedding.embedder import Embedder
from rotbench.engines.host.engine_worker import isolated
from rotbench.engines.host.guarded import (
    ConfigValue,
    EngineFailure,
    GuardedEngine,
    describe_raised,
    engine_attribute,
    flat_config,
    identity_problem,
    setup_failure,
)
from rotbench.engines.registry import load_factory
from rotbench.pipeline.probe import with_questions_read
from rotbench.pipeline.question_count import CountingExtractor, questions_asked
from rotbench.scoring.models import WorldProbes
from rotbench.world.models import World
from rotbench.world.shared import SharedWorld


class EngineAnswers(BaseModel):
    """What one engine answered on one world, with the identity the engine reported."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The engine's ``name`` attribute (else the registered name).")
    version: str = Field(description="The engine's ``version`` attribute (else the registry's).")
    config: dict[str, ConfigValue] = Field(
        default_factory=dict, description="The engine's ``config`` attribute, if a flat dict.")
    probes: WorldProbes | None = Field(description="None when the engine failed.")
    failure: str | None = Field(
        default=None, description="The one-line EngineFailure; such a result is never cached.")
    failure_trace: str | None = Field(
        default=None, description="With ``failure``: the traceback limited to the engine's "
        "own frames (``rotbench.engines.trace``), when its code raised.")


_SLOTS: dict[tuple[str, int], threading.BoundedSemaphore] = {}
"""The process's world slots of every bounded engine, by (engine name, ``worlds_at_once``)."""
_SLOTS_LOCK = threading.Lock()
_HELD = threading.local()
"""The slots the current thread holds (``keys``: a set), so that taking one again is a no-op."""


@contextlib.contextmanager
def engine_slot(info: EngineInfo) -> Iterator[None]:
    """Hold one of the ``info.worlds_at_once`` world slots of engine ``info.name`` in this
    process while the block runs (waits while they are all held); no bound for an engine
    without one. A thread already holding that engine's slot does not take a second one
    (``flows.world`` takes it before the stage's Prefect task starts, so that the wait is not
    part of the stage's time limit, and ``ingest_and_probe`` takes it again inside).

    Per process: worlds on Dask workers (one world per worker process at a time) are bounded
    by their workers."""
    limit = info.worlds_at_once
    if limit is None:
        yield
        return
    key = (info.name, limit)
    held: set[tuple[str, int]] = _HELD.__dict__.setdefault("keys", set())
    if key in held:
        yield
        return
    with _SLOTS_LOCK:
        slot = _SLOTS.setdefault(key, threading.BoundedSemaphore(limit))
    slot.acquire()
    held.add(key)
    try:
        yield
    finally:
        held.discard(key)
        slot.release()


def ingest_and_probe(
    world: World | SharedWorld,
    info: EngineInfo,
    *,
    arm: str,
    extractor: Extractor,
    checker: Checker | None,
    model: ModelClient,
    embedder: Embedder,
    top_k: int,
    timeout_seconds: float | None,
    scratch_root: Path | None = None,
    factory_kwargs: dict | None = None,
) -> EngineAnswers:
    """Build the engine of ``info`` for ``world`` (a fresh instance, a fresh scratch folder
    under ``scratch_root``, removed afterwards), then deposit and probe interleaved
    (``rotbench.pipeline.probe.probe_world``). When the factory or the engine fails, hangs or
    answers
    malformed hits, the result has no probes and ``failure`` holds the one-line reason naming
    the engine, seed, day and call (returned, not raised, so the workflow engine logs no
    traceback for a fault of the engine under test).

    ``world`` a ``SharedWorld``: every persona's documents go into the one engine and each
    user's questions are asked for that user (``rotbench.pipeline.probe_shared.probe_shared``).
    ``factory_kwargs``: extra keywords for the factory (the reference engine's
    configuration).

    An engine with a ``worlds_at_once`` bound waits for a world slot (``engine_slot``) before
    its factory runs and gives it back after ``close``; the wait is not part of any engine
    call's ``timeout_seconds``."""
    with engine_slot(info):
        return _ingest_and_probe(world, info, arm=arm, extractor=extractor, checker=checker,
                                 model=model, embedder=embedder, top_k=top_k,
                                 timeout_seconds=timeout_seconds, scratch_root=scratch_root,
                                 factory_kwargs=factory_kwargs)


def _ingest_and_probe(world: World | SharedWorld, info: EngineInfo, *, arm: str,
                      extractor: Extractor, checker: Checker | None, model: ModelClient,
                      embedder: Embedder, top_k: int, timeout_seconds: float | None,
                      scratch_root: Path | None,
                      factory_kwargs: dict | None) -> EngineAnswers:
    """``ingest_and_probe`` with the engine's world slot held."""
    if scratch_root is not None:
        scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"rotbench-{world.seed}-", dir=scratch_root))
    counted = CountingExtractor(extractor)  # which questions the engine had read as frames
    try:
        if isolated(info) and not factory_kwargs:  # a plug-in: in a worker process of its own
            from types import SimpleNamespace

            from rotbench.engines.host.isolated import probe_isolated
            from rotbench.pipeline.probe_shared import probe_any

            name, version, config, probes = probe_isolated(
                world, info, scratch, arm=arm, extractor=counted, checker=checker,
                model=model, embedder=embedder, top_k=top_k, timeout_seconds=timeout_seconds,
                probe=probe_any)
            return _with_reads(EngineAnswers(
                name=name, version=version, probes=probes,
                config=flat_config(SimpleNamespace(config=config))), counted)
        try:
            factory = load_factory(info)  # the engine's module runs its import-time code here
        except EngineError as exc:
            raise EngineFailure(f"{exc} (seed {world.seed}, set-up)", trace=exc.trace) from None
        return _with_reads(_build_and_probe(
            world, info, factory, scratch, arm=arm, extractor=counted, checker=checker,
            model=model, embedder=embedder, top_k=top_k, timeout_seconds=timeout_seconds,
            factory_kwargs=factory_kwargs or {}), counted)
    except EngineFailure as exc:
        return EngineAnswers(name=info.name, version=info.version, probes=None,
                             failure=str(exc), failure_trace=exc.trace)
    except BaseException as exc:  # noqa: BLE001 - engine code ran below: keep it to the engine
        if isinstance(exc, KeyboardInterrupt):
            raise
        return EngineAnswers(name=info.name, version=info.version, probes=None,
                             failure=f"engine {printable(info.name, 60)}: seed {world.seed}: "
                             f"{describe_raised(exc)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _with_reads(answers: EngineAnswers, counted: object) -> EngineAnswers:
    """``answers`` with the questions the engine had read as frames recorded from the
    counting proxy it was handed (``rotbench.pipeline.question_count``,
    ``rotbench.pipeline.probe.with_questions_read``); unchanged when it read no question or
    has no probes."""
    if answers.probes is None:
        return answers
    return answers.model_copy(update={"probes": with_questions_read(
        answers.probes, questions_asked(counted))})


def _build_and_probe(world: World | SharedWorld, info: EngineInfo, factory, scratch: Path, *,
                     arm: str, extractor: Extractor, checker: Checker | None,
                     model: ModelClient, embedder: Embedder, top_k: int,
                     timeout_seconds: float | None, factory_kwargs: dict) -> EngineAnswers:
    """The engine built in ``scratch`` and probed; raises EngineFailure."""
    context = EngineContext(arm=arm, seed=world.seed, scratch_dir=scratch,
                            embedder=embedder, model=model, extractor=extractor,
                            checker=checker, variant=info.variant)
    try:
        engine = factory(context, **factory_kwargs)
    except EngineError as exc:
        raise EngineFailure(str(exc)) from None
    except BaseException as exc:  # noqa: BLE001 - user code: one line whatever it raised
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise setup_failure(info.name, world.seed, exc, factory=factory) from None
    if problem := identity_problem(engine):
        raise setup_failure(info.name, world.seed, problem)
    name = engine_attribute(engine, "name", info.name)
    from rotbench.engines.trace import engine_roots

    guard = GuardedEngine(engine, world.seed, timeout_seconds, name=name,
                          roots=engine_roots(getattr(factory, "__module__", None),
                                             type(engine).__module__))
    from rotbench.pipeline.probe_shared import probe_any

    try:
        probes = probe_any(world, guard, top_k)
    finally:
        guard.close()
    return EngineAnswers(name=name, version=engine_attribute(engine, "version", info.version),
                         config=flat_config(engine), probes=probes)
