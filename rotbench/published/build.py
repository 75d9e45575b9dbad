"""A report of record to a shipped record (``rotbench.published.models.Record``), and the
records of one arm to its file.

``record_of`` keeps a report's figures (metrics, channels, kinds, evidence, miss stages,
injected noise), each question's outcome per figure (``rotbench.scoring.paired``), the top
behaviours without examples, and a manifest; it drops hits, stages, timings and the
per-checkpoint, per-attribute and per-phrasing tables.

A ``--repeat N`` report (an engine that varies from run to run, e.g. Hindsight) keeps its
repeat summary (every run's figures, each figure's median and range, the flaky questions,
pass^N) and each run's lone departures (the questions on which it alone answered otherwise
than the other runs), and its question outcomes are pooled over the N runs as ``rotbench
compare`` pools them for a repeated run of yours (a higher-is-better figure counts a
question when every run does, any other figure when some run does): outside the flaky
questions they are every run's own.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable

from rotbench.published.models import ARMS, FORMAT, ArmFile, Manifest, Question, Record, WorldPrint
from rotbench.results.files.worlds import iter_worlds, world_digest
from rotbench.results.schema import Report
from rotbench.scoring.lexicons import lexicon
from rotbench.scoring.paired import Outcomes, question_outcomes


def rotbench_version() -> str:
    """The installed rotbench's version (its package metadata); 'unknown' without one."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rotbench")
    except PackageNotFoundError:
        return "unknown"


def arm_key(report: Report) -> str:
    """The shipped arm a report ran on (``ARMS``); raises ValueError for another."""
    s = report.selection
    for key, (arm, noise) in ARMS.items():
        if (s.arm, s.noise) == (arm, noise):
            return key
    raise ValueError(f"arm {s.arm!r} (noise {s.noise!r}) is not a shipped arm")


def peer_package(engine_version: str) -> str | None:
    """The peer package in an adapter's version ('1.0.0+mem0ai-2.2.1' -> 'mem0ai 2.2.1',
    '1.0.0+benchd-harness-0.2.0/echo-0.1.0' -> 'benchd-harness 0.2.0'); None for an engine
    of rotbench's own."""
    if "+" not in engine_version:
        return None
    package, _, version = engine_version.split("+", 1)[1].split("/")[0].rpartition("-")
    return f"{package} {version}" if package else version


def noise_logic(report: Report) -> str | None:
    """The noisy perception's version ('noisy/3') from the report's stamps; None off the
    noisy arm or when no stamp names it."""
    for stamp in report.selection.stamps.values():
        for part in stamp.split("+"):
            if part.startswith("noisy/"):
                return part.split(":", 1)[0]
    return None


def questions_of(report: Report) -> list[Question]:
    """Every question of the report's worlds, in seed and probe order."""
    return [Question(seed=w.seed, user=p.user, day=p.day, attribute=p.attribute,
                     question=p.question)
            for w in iter_worlds(report) for p in w.probes]


def _trimmed(report: Report) -> Report:
    entries = report.worlds
    if any(e.sha256 is None for e in entries):
        digests = [world_digest(w) for w in iter_worlds(report)]
        entries = [e.model_copy(update={"sha256": d}) for e, d in zip(entries, digests,
                                                                      strict=True)]
    return report.model_copy(update={
        "worlds": entries, "embedded_worlds": None, "by_checkpoint": {}, "by_attribute": {},
        "by_phrasing": {}, "floor_sweep": None, "stages": [], "timings": {},
        "review_queue": [], "notes": [], "origin": None})


def each_run_outcomes(report: Report) -> list[Outcomes]:
    """Every question's outcome per figure in the worlds of each run of ``report`` (one
    run unless it is a ``--repeat N`` report). Raises ValueError when a world file cannot be
    read."""
    from rotbench.results.repeats import run_reports

    decoys = lexicon(report.selection.scorer_version).reads_decoys
    return [question_outcomes(iter_worlds(run), decoys) for run in run_reports(report)]


def pooled(runs: list[Outcomes]) -> Outcomes:
    """One run's outcomes as they are; several runs' pooled as ``rotbench compare`` pools a
    repeated run (``rotbench.results.repeats.pooled_outcomes``)."""
    if len(runs) == 1:
        return runs[0]
    from rotbench.results.repeats import pooled_outcomes
    from rotbench.scoring.metrics import better_label

    return pooled_outcomes(runs, {m: better_label(m) == "higher" for m in runs[0]})


def record_of(report: Report, questions: list[Question], command: str) -> Record:
    """The shipped record of ``report`` (its question outcomes as strings over
    ``questions``; pooled over the runs of a ``--repeat N`` report). Raises ValueError when
    the report asks a question not in ``questions``."""
    from rotbench.results.presentation.diagnosis import COMPARE_TOP, report_diagnosis
    from rotbench.results.repeats import lone_departures

    index = {q.key: i for i, q in enumerate(questions)}
    outcomes = {}
    runs = each_run_outcomes(report)
    for row, got in pooled(runs).items():
        chars = ["."] * len(questions)
        for key, value in got.items():
            if key not in index:
                raise ValueError(f"{report.run_id}: a question not in the arm's list")
            chars[index[key]] = str(value)
        outcomes[row] = "".join(chars)
    s = report.selection
    manifest = Manifest(
        rotbench_version=rotbench_version(), engine=s.engine, engine_version=s.engine_version,
        engine_source=s.engine_source, peer_package=peer_package(s.engine_version),
        arm=s.arm, noise=s.noise, noise_digest=s.noise_digest,
        noise_logic=noise_logic(report), generator_version=s.generator_version,
        scorer_version=s.scorer_version, seeds=s.seeds, days=s.days, top_k=s.top_k,
        worlds=[WorldPrint(seed=w.seed, fingerprint=w.fingerprint) for w in report.worlds],
        command=command, created_at=report.created_at, run_id=report.run_id)
    findings = [f.model_copy(update={"examples": []})
                for f in report_diagnosis(report)[:COMPARE_TOP]]
    return Record(manifest=manifest, report=_trimmed(report), outcomes=outcomes,
                  findings=findings,
                  lone_departures=lone_departures(runs) if len(runs) >= 3 else None)


def arm_file(reports: Iterable[tuple[Report, str]],
             kept: Iterable[Record] = ()) -> ArmFile:
    """One arm's file from ``reports`` (each with the command that made it; all of one
    arm, on the same worlds) and records ``kept`` from an earlier file (an engine run
    elsewhere, e.g. Hindsight in its own environment; replaced by a report of the same
    engine). Raises ValueError for reports of several arms or different questions."""
    reports = list(reports)
    if not reports:
        raise ValueError("no reports")
    key = arm_key(reports[0][0])
    questions = questions_of(reports[0][0])
    records = []
    for report, command in reports:
        if arm_key(report) != key:
            raise ValueError(f"{report.run_id}: arm {arm_key(report)}, not {key}")
        if questions_of(report) != questions:
            raise ValueError(f"{report.run_id}: asked other questions than "
                             f"{reports[0][0].run_id}")
        records.append(record_of(report, questions, command))
    new = {r.manifest.engine_source for r in records}
    records += [r for r in kept if r.manifest.engine_source not in new]
    records.sort(key=lambda r: r.manifest.engine_source)
    return ArmFile(format=FORMAT, arm_key=key, questions=questions, records=records)


def arm_bytes(arm: ArmFile) -> bytes:
    """The file's bytes: compact JSON, gzip with no timestamp (the same records give the
    same bytes)."""
    return gzip.compress(arm.model_dump_json().encode(), compresslevel=9, mtime=0)
