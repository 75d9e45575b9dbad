"""Whether a shipped record equals what a run gives.

``differences`` names every figure, question outcome, behaviour and manifest field that
differs between a shipped record and one built from a fresh run's report; the run's own
identity (run id, instant, command, rotbench's version) is left out, and so is each world
file's digest: it covers every hit's similarity, whose last digits move with how the
texts were batched for the embedder (the question counts, the hit counts and every figure
are compared).

A record of a deterministic engine (one run) must be equalled figure for figure. A record
of a ``--repeat N`` run (an engine that varies from run to run, e.g. Hindsight) is checked
as far as its N runs say what a run gives (``varying_differences``): on the questions its
runs all answered alike, the fresh run may answer otherwise on no more questions than one
of the record's runs alone answered otherwise than the rest; the manifest, the worlds'
question counts, the injected noise and the degraded questions must be equal. Figures
outside the runs' range are named (``range_notes``), not counted as differences.
"""

from __future__ import annotations

from rotbench.published.models import Question, Record
from rotbench.results.presentation.percent import percent

FIGURE_FIELDS: tuple[str, ...] = (
    "metrics", "by_channel", "by_kind", "by_evidence", "miss_stages", "family_miss_stages",
    "perception_noise", "worlds", "degraded")
"""The report fields compared (each a figure or the worlds it was measured on)."""

STEADY_FIELDS: tuple[str, ...] = ("perception_noise", "worlds", "degraded")
"""Of ``FIGURE_FIELDS``, those a run of an engine that varies must still equal (the worlds'
question counts, what perception injected, the questions answered degraded); a world's hit
count varies with the answers (``range_notes``)."""

IDENTITY: frozenset[str] = frozenset({"run_id", "created_at", "command", "rotbench_version"})
"""Manifest fields that name one run rather than what it measured."""


def _flat(prefix: str, value: object, out: dict[str, object]) -> None:
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            _flat(f"{prefix}[{i}]", item, out)
    elif isinstance(value, dict) and not {"numerator", "denominator"} <= set(value):
        for key, item in value.items():
            _flat(f"{prefix}.{key}", item, out)
    elif isinstance(value, dict):
        out[prefix] = f"{value['numerator']}/{value['denominator']}"
    else:
        out[prefix] = value


def _fields(shipped: Record, fresh: Record, names: tuple[str, ...]
            ) -> tuple[dict[str, object], dict[str, object]]:
    """The flattened report fields ``names`` and the manifest (its identity left out) of
    both records."""
    a: dict[str, object] = {}
    b: dict[str, object] = {}
    for name in names:
        _flat(name, shipped.report.model_dump(mode="json").get(name), a)
        _flat(name, fresh.report.model_dump(mode="json").get(name), b)
    manifest_a = shipped.manifest.model_dump(mode="json")
    manifest_b = fresh.manifest.model_dump(mode="json")
    for key in manifest_a:
        if key not in IDENTITY:
            a[f"manifest.{key}"], b[f"manifest.{key}"] = manifest_a[key], manifest_b[key]
    return a, b


def _unequal(a: dict[str, object], b: dict[str, object], skip: tuple[str, ...]) -> list[str]:
    lines = []
    for key in sorted(set(a) | set(b)):
        if key.startswith("worlds[") and key.endswith(skip):
            continue
        if a.get(key) != b.get(key):
            lines.append(f"{key}: shipped {a.get(key)!r}, run {b.get(key)!r}")
    return lines


def differences(shipped: Record, fresh: Record,
                questions: list[Question] | None = None) -> list[str]:
    """One line per difference ('metrics.current_first: shipped 93/195, run 94/195'),
    empty when the fresh record agrees with the shipped one: figure for figure, or, for a
    record of a repeated run, as ``varying_differences`` checks it (which needs the arm's
    ``questions``, the order of the outcome strings; ValueError without them)."""
    if shipped.report.repeats is not None:
        if questions is None:
            raise ValueError("a record of a repeated run is checked question by question: "
                             "pass the arm's questions")
        return varying_differences(shipped, fresh, questions)
    lines = _unequal(*_fields(shipped, fresh, FIGURE_FIELDS), skip=(".sha256",))
    for row in sorted(set(shipped.outcomes) | set(fresh.outcomes)):
        x, y = shipped.outcomes.get(row), fresh.outcomes.get(row)
        if x != y:
            moved = (sum(1 for i, j in zip(x, y, strict=True) if i != j)
                     if x is not None and y is not None else "all")
            lines.append(f"outcomes[{row}]: {moved} questions differ")
    if [f.model_dump() for f in shipped.findings] != [f.model_dump() for f in fresh.findings]:
        lines.append("findings: the top behaviours differ")
    return lines


def departures(shipped: Record, fresh: Record, questions: list[Question]) -> tuple[int, int]:
    """(departures, steady): of the ``steady`` questions a repeated record's runs all
    answered alike, those on which ``fresh`` answers otherwise on some per-question figure
    (a figure's row missing from one side counts every question it holds)."""
    repeats = shipped.report.repeats
    assert repeats is not None
    flaky = {(q.seed, q.user, q.day, q.attribute, q.question) for q in repeats.flaky}
    steady = [i for i, q in enumerate(questions) if q.key not in flaky]
    moved = set()
    for row in set(shipped.outcomes) | set(fresh.outcomes):
        x, y = shipped.outcomes.get(row), fresh.outcomes.get(row)
        moved |= {i for i in steady if x is None or y is None or x[i] != y[i]}
    return len(moved), len(steady)


def varying_differences(shipped: Record, fresh: Record, questions: list[Question]
                        ) -> list[str]:
    """What a single run (``fresh``) gives that the shipped record of a ``--repeat N`` run
    (N of 3 or more) says no run of the engine gives, one line each:

    - more departures (``departures``: questions the record's runs all answered alike and
      ``fresh`` answers otherwise) than the most questions on which one of the record's
      runs alone answered otherwise than the others (``Record.lone_departures``): the run
      strays from the record further than any of the record's runs strayed from the rest;
    - any difference in the manifest (its identity left out), the worlds' question counts,
      the injected noise or the degraded questions.

    A figure outside its runs' range is not a difference (``range_notes`` names each): a
    further run of an engine that varies is the lowest or highest of N + 1 with chance
    2 / (N + 1) for each figure that varies, so a range check fails most runs. The figures
    are sums of the per-question outcomes, which the departures bound."""
    lines = _unequal(*_fields(shipped, fresh, STEADY_FIELDS), skip=(".sha256", ".hits"))
    moved, steady = departures(shipped, fresh, questions)
    allowed = max(shipped.lone_departures or [0])
    if moved > allowed:
        lines.append(f"outcomes: the run answers {moved} of the {steady} steady questions "
                     f"otherwise than the record; its runs strayed alone on at most {allowed}")
    return lines


def range_notes(shipped: Record, fresh: Record) -> list[str]:
    """Each pooled figure of ``fresh`` outside the lowest and highest value of the
    repeated record's runs, and each world whose hit count is outside its runs' range, one
    line each ('current_first: run 141/238, shipped 59.7% to 63.4%'); empty for a record of
    a single run."""
    repeats = shipped.report.repeats
    if repeats is None:
        return []
    lines = []
    for metric, rate in fresh.report.metrics.items():
        spread = repeats.spread.get(metric)
        if spread is None or spread.low is None or rate.value is None:
            continue
        if not spread.low <= rate.value <= spread.high:
            lines.append(f"{metric}: run {rate.numerator}/{rate.denominator}, shipped "
                         f"{_range(spread.low, spread.high)}")
    for i, world in enumerate(fresh.report.worlds):
        counts = [run.worlds[i].hits for run in repeats.runs if i < len(run.worlds)]
        if counts and not min(counts) <= world.hits <= max(counts):
            lines.append(f"worlds[{i}].hits: run {world.hits}, shipped {min(counts)} to "
                         f"{max(counts)}")
    return lines


def _range(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"{percent(low)} to {percent(high)}"
