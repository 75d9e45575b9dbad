"""What happens to one world: which stages run for which engine, in what order, under which
cache keys and perception stamps, and what the world hands back.

The plan asks for each stage as a ``StageCall`` (the stage's name, its cache key, its
inputs) and hands it to a ``StageRunner``, which returns the stage's ``StageRef``: read from
the cache or computed. ``flows.world`` is the runner (one Prefect task per stage); the plan
never knows how a stage is run, and the runner never decides which stage runs or under
which key. ``rotbench run`` reads the same plan for its progress bars (``progress_stages``).

The reference engine runs in separable stages (generate, extract, index, deposit, probe,
score); any other engine, and every engine on a shared store (``--users`` above 1), runs
ingest_probe then score (``engine_stages``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rotbench._util.safe_text import printable
from rotbench.contract.registry import EngineInfo
from rotbench.embedding.embedder import DEFAULT_MODEL_ID
from rotbench.engines.host.guarded import EngineFailure
from rotbench.engines.registry import resolve
from rotbench.perception.arms import ArmRuntime
from rotbench.perception.noisy.arm import engine_arm
from rotbench.pipeline.ingest_probe import engine_slot
from rotbench.pipeline.stages import ENGINE_STAGES, STAGES
from rotbench.reference import ENGINE_VERSION
from rotbench.reference.config import EngineConfig
from rotbench.results import StageRecord
from rotbench.rulings import ReviewItem
from rotbench.run import keys
from rotbench.run.outcome import EngineOutcome, StageRef
from rotbench.run.spec import RunSpec

REFERENCE_NAME = "reference"


@dataclass(frozen=True)
class StageCall:
    """One stage the plan asks for.

    - ``stage``: the stage's name (``rotbench.pipeline.stages.SPECS``; its task's name);
    - ``key``: its cache key (``rotbench.run.keys``), without the stage's prefix;
    - ``records``: the list its ``StageRecord`` goes to (an engine outcome's stages);
    - ``label``: its progress label (None: the stage's name);
    - ``hold``: a context entered before the stage starts and left after it ends (an
      engine's world slot), never on a cache hit;
    - ``repeat``: the run of ``--repeat N`` (1 to N) its record names; None for a single
      run and for what every run shares (the world, its extraction);
    - ``inputs``: the stage's keyword inputs (upstream ``StageRef``s, settings).
    """

    stage: str
    key: str
    records: list[StageRecord]
    label: str | None = None
    hold: Callable[[], AbstractContextManager] | None = None
    repeat: int | None = None
    inputs: dict[str, Any] = field(default_factory=dict)


class StageRunner(Protocol):
    """What runs the plan's stages (``flows.world.WorldStages``): ``run`` returns the
    stage's ``StageRef`` (raising what the stage raised: ``EngineFailure`` for an engine's
    fault); ``uncached`` names the stages left out of the cache because model calls failed."""

    runtime: ArmRuntime
    uncached: list[str]

    def run(self, call: StageCall) -> StageRef: ...


def run_engines(spec: RunSpec) -> list[EngineInfo]:
    """The run's engines, resolved once (a plug-in's source digest reads its files), in the
    order of ``spec.engines``. Raises ``EngineError`` for an engine that cannot be resolved."""
    return [resolve(name) for name in spec.engines]


def engine_stages(spec: RunSpec, info: EngineInfo) -> tuple[str, ...]:
    """The stages engine ``info`` runs on one world, in order, generate first: the reference
    engine's separable stages on a single-user world, else ingest_probe and score."""
    return STAGES if info.separable and spec.users == 1 else ENGINE_STAGES


def progress_stages(spec: RunSpec, engines: Iterable[EngineInfo]) -> tuple[str, ...]:
    """Every stage one world runs, for a progress line: generate once, then each engine's
    stages in the run's engine order."""
    return ("generate",) + tuple(stage for info in engines
                                 for stage in engine_stages(spec, info)[1:])


def perception_stamps(rt: ArmRuntime, generator: str | None = None) -> tuple[str, str]:
    """(extractor stamp, checker stamp) of the arm: they name the perception logic, model
    and prompt version, and enter the cache keys of the stages they read. ``generator``:
    the worlds' generator version, which chooses the live arm's extraction prompt when the
    settings name none (``LLMSettings.extract_prompt_for``)."""
    from rotbench.perception.oracle import OracleChecker, OracleExtractor

    if getattr(rt, "profile", None) is not None:  # the noisy arm (NoisyRuntime)
        from rotbench.perception.noisy.perception import stamps

        return stamps(rt.profile)
    if rt.live is None:
        return OracleExtractor.stamp, OracleChecker.stamp
    live = rt.live
    checker = live.checker().stamp
    if rt.arm == "probe":
        return OracleExtractor.stamp, checker
    from rotbench.perception.model import live_extractor_stamp

    s = live.settings
    return live_extractor_stamp(s.extract_model, s.extract_prompt_for(generator)), checker


def world_key(seed: int, run: RunSpec, engines: list[EngineInfo]) -> str | None:
    """The cache key of a whole world's outcome: every input of every stage of the world
    (seed, generator, days, top k, scorer, the engine configuration, each engine's identity,
    the scripted perception's stamps, the stage and engine versions, the embedding model).

    None (not cached as a whole) on the paid arms: what their stages return depends on model
    answers, which the stage keys name by content; their stages are still cached one by one.
    """
    if not run.scripted:
        return None
    from rotbench.perception.oracle import OracleChecker, OracleExtractor

    config = EngineConfig().with_overrides(run.engine_overrides())
    stamps = (OracleExtractor.stamp, OracleChecker.stamp)
    if run.arm == "noisy":  # the profile's digest is in both stamps
        from rotbench.perception.noisy.arm import noisy_stamps

        stamps = noisy_stamps(run)
    return keys.world_key(seed, run.generator, run.days, run.top_k, run.scorer_version,
                          config, *stamps,
                          (info.identity for info in engines), volume=run.volume,
                          users=run.users, user_ids=run.user_id_list(),
                          repeats=run.repeat)


def world_record_name(key: str) -> str:
    """The file name of the whole-world record cached under ``key`` (a ``world_key``)."""
    return f"world-{key}"


def world_records(spec: RunSpec, engines: list[EngineInfo]) -> dict[int, str | None]:
    """Each seed's whole-world record name (None on the paid arms: not cached whole)."""
    found = {}
    for seed in spec.seeds:
        key = world_key(seed, spec, engines)
        found[seed] = world_record_name(key) if key is not None else None
    return found


def every_world_cached(spec: RunSpec, storage: Path,
                       engines: list[EngineInfo] | None = None) -> bool:
    """True when every seed's world has its whole-world record in ``storage`` (the run's
    result storage): each world will be one cache read and no stage computes. A record found
    damaged later only recomputes that world, which embeds what it needs."""
    records = world_records(spec, engines if engines is not None else run_engines(spec))
    return all(name is not None and (storage / name).is_file() for name in records.values())


def world_engines(seed: int, spec: RunSpec, engines: list[EngineInfo],
                  runner: StageRunner) -> list[EngineOutcome]:
    """Every engine of the run on the world of ``seed``, in the run's engine order: the
    world is generated once, then each engine runs its stages ``spec.repeat`` times. An
    engine's fault (``EngineFailure``) is kept to its engine's outcome; anything else
    raised by a stage fails the world."""
    generate_records: list[StageRecord] = []
    world = runner.run(_generate_call(seed, spec, generate_records))
    outcomes = []
    for name, info in zip(spec.engines, engines, strict=True):
        try:
            outcomes.append(_every_repeat(seed, spec, runner, info, name, world,
                                          generate_records))
        except EngineFailure as exc:
            outcomes.append(EngineOutcome(engine=name, stages=list(generate_records),
                                          failure=str(exc),
                                          failure_trace=getattr(exc, "trace", None)))
    return outcomes


def _generate_call(seed: int, run: RunSpec, records: list[StageRecord]) -> StageCall:
    """The world of ``seed``: one user's, or the shared store of ``run.users`` personas."""
    if run.users > 1:
        ids = run.user_id_list()
        return StageCall("generate", keys.shared_generate_key(run.generator, seed, run.days,
                                                              run.users, ids), records,
                         inputs={"days": run.days, "generator": run.generator,
                                 "users": run.users, "user_ids": ids})
    return StageCall("generate", keys.generate_key(run.generator, seed, run.days, run.volume),
                     records, inputs={"days": run.days, "generator": run.generator,
                                      "volume": run.volume})


def _every_repeat(seed: int, spec: RunSpec, runner: StageRunner, info: EngineInfo, name: str,
                  world: StageRef, generate_records: list[StageRecord]) -> EngineOutcome:
    """Engine ``name`` on the world, ``spec.repeat`` times, each time with fresh state: the
    first run's outcome, its later runs in ``repeats``. Every run after the first reads the
    first one's perception (the reference engine's extraction; another engine reads the
    world itself) and keys its own stages by its index. Raises EngineFailure from any run,
    naming the run when there are several."""
    runs: list[EngineOutcome] = []
    extraction: StageRef | None = None
    separable = engine_stages(spec, info) == STAGES
    for repeat in range(spec.repeat):
        records = list(generate_records) if repeat == 0 else []
        try:
            if separable:
                outcome, extraction = _reference(seed, spec, runner, world, records,
                                                 extraction, repeat)
            else:
                outcome = _engine(seed, spec, runner, info, name, world, records, repeat)
        except EngineFailure as exc:
            if spec.repeat > 1:
                exc.args = (f"repeat {repeat + 1} of {spec.repeat}: {exc}",)
            raise
        runs.append(outcome)
    return runs[0].model_copy(update={"repeats": runs[1:]})


def _repeat_label(label: str, repeat: int) -> str:
    """A stage's progress label in run ``repeat`` (0-based) of ``--repeat``: the label
    itself for the first run."""
    return f"{label} (repeat {repeat + 1})" if repeat else label


def _run_of(spec: RunSpec, repeat: int) -> int | None:
    """What a stage record of run ``repeat`` (0-based) names: 1 to N under ``--repeat N``
    above 1, else None."""
    return repeat + 1 if spec.repeat > 1 else None


def _reference(seed: int, run: RunSpec, runner: StageRunner, world: StageRef,
               rec: list[StageRecord], extraction: StageRef | None = None,
               repeat: int = 0) -> tuple[EngineOutcome, StageRef]:
    """The reference engine's separable stages: extract, index, deposit, probe, score.
    ``repeat`` (0 to N-1 of ``--repeat N``): which run of the engine this is; it enters the
    keys of index, deposit and probe (the engine's own stages) only, and a later run is
    handed the first run's ``extraction`` (perception is read once). Returns the outcome
    and the extraction it read."""
    config = EngineConfig().with_overrides(run.engine_overrides())
    scorer = run.scorer_version
    extract_stamp, check_stamp = perception_stamps(runner.runtime, run.generator)
    multi = config.store.multi_contributor
    ws, top_k, own = world.sha256, run.top_k, _run_of(run, repeat)
    if extraction is None:  # perception: every run's, none's own
        extraction = runner.run(StageCall(
            "extract", keys.extract_key(ws, extract_stamp, multi), rec,
            inputs={"world": world, "multi": multi, "concurrency": run.model_concurrency}))
    runner.run(StageCall("index", keys.index_key(ws, extraction.sha256, multi, repeat), rec,
                         _repeat_label("index", repeat), repeat=own,
                         inputs={"world": world, "extraction": extraction}))
    ledger = runner.run(StageCall(
        "deposit", keys.deposit_key(extraction.sha256, check_stamp, config, repeat), rec,
        _repeat_label("deposit", repeat), repeat=own,
        inputs={"world": world, "extraction": extraction, "config": config}))
    probes = runner.run(StageCall(
        "probe", keys.probe_key(ledger.sha256, ws, extraction.sha256, config, top_k, repeat),
        rec, _repeat_label("probe", repeat), repeat=own,
        inputs={"world": world, "ledger": ledger, "extraction": extraction, "config": config,
                "top_k": top_k}))
    scored = runner.run(StageCall(
        "score", keys.score_key(probes.sha256, scorer), rec,
        _repeat_label(f"{REFERENCE_NAME}:score", repeat), repeat=own,
        inputs={"engine": REFERENCE_NAME, "probes": probes, "scorer": scorer}))
    c = ledger.summary
    notes = [] if repeat else [
        f"seed {seed}: {c.get('claims', 0)} claims from {c.get('documents', 0)} "
        f"documents; {c.get('retirements', 0)} retirements, {c.get('reviews', 0)} review "
        f"records (quarantined), {c.get('pairs_judged', 0)} candidate pairs judged"]
    stamps = {"extract": extract_stamp, "deposit": check_stamp, "embedding": DEFAULT_MODEL_ID}
    identity = {"name": REFERENCE_NAME, "version": ENGINE_VERSION, "config": config.flat()}
    queue = [] if repeat else [ReviewItem.model_validate({**item, "seed": seed})
                               for item in c.get("review_queue", [])]
    return EngineOutcome(engine=REFERENCE_NAME, scored=scored, stages=rec, notes=notes,
                         stamps=stamps, identity=identity, review_queue=queue), extraction


def _engine(seed: int, run: RunSpec, runner: StageRunner, info: EngineInfo, name: str,
            world: StageRef, rec: list[StageRecord], repeat: int = 0) -> EngineOutcome:
    """An engine without separable stages: ingest-and-probe (interleaved), then score. A
    shared store (``--users`` above 1) runs every engine, the reference one included, this
    way: its separable stages read one user's world. ``repeat`` (0 to N-1 of ``--repeat
    N``): which run of the engine this is, in ingest_probe's key only."""
    scorer = run.scorer_version
    extract_stamp, check_stamp = perception_stamps(runner.runtime, run.generator)
    shared_config: EngineConfig | None | bool = False
    extra: dict = {}
    timeout: float | None = run.engine_timeout_seconds
    if run.users > 1:  # the reference engine on a shared store: built with the run's config
        overrides = run.engine_overrides() if info.separable else []
        shared_config = EngineConfig().with_overrides(overrides) if info.separable else None
        extra["config"] = shared_config
        if info.separable:  # rotbench's own engine: no call limit, as in its probe stage
            timeout = None
    own = _run_of(run, repeat)
    answers = runner.run(StageCall(
        "ingest_probe",
        keys.ingest_probe_key(world.sha256, info.identity, extract_stamp, check_stamp,
                              run.top_k, shared_config, repeat),
        rec, _repeat_label(f"{info.name}:ingest_probe", repeat),
        hold=lambda: engine_slot(info), repeat=own,
        inputs={"engine": name, "world": world, "arm": engine_arm(run.arm),
                "top_k": run.top_k, "timeout_seconds": timeout,
                "info": info.model_dump(mode="json"), **extra}))
    scored = runner.run(StageCall(
        "score", keys.score_key(answers.sha256, scorer, from_answers=True), rec,
        _repeat_label(f"{info.name}:score", repeat), repeat=own,
        inputs={"engine": name, "probes": answers, "scorer": scorer, "field": "probes"}))
    stamps = {"perception": extract_stamp, "checks": check_stamp, "embedding": DEFAULT_MODEL_ID}
    if info.source_sha256:
        stamps["engine_source"] = info.source_sha256
    identity = dict(answers.summary)
    scoped = identity.pop("user_scoped", None)
    notes = []
    if scoped is False and not repeat:
        notes.append(f"seed {seed}: engine {printable(info.name, 60)} ignored the user: its "
                     "query takes no 'user', so every question read the whole shared store")
    return EngineOutcome(engine=name, scored=scored, stages=rec, stamps=stamps,
                         identity=identity, notes=notes, user_scoped=scoped)
