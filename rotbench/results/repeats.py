"""``--repeat N``: what N runs of one engine on the same worlds say together.

Each run of the engine is scored like a run of its own (a ``Report`` per run, its worlds in
world files). ``summarise_repeats`` reads their worlds one at a time and gives the report's
``RepeatSummary``:

- ``spread``: each pooled figure's median, lowest and highest value over the runs;
- ``agreement``: per question, how many runs gave the most common answer, counted
  ``{runs agreeing: questions}``. A question's answer is its outcome on every per-question
  figure (``rotbench.scoring.paired.question_outcomes``: in the numerator or not, figure by
  figure), so two runs agree on a question exactly when no figure can tell them apart on it;
- ``flaky``: the questions on which the runs do not all agree;
- ``pass_all``: pass^N of the currency figures (``PASS_METRICS``): a question counts when it
  is in the figure's numerator in every run, of the figure's questions.

``pooled_outcomes`` turns the runs' outcomes into one outcome per question for ``rotbench
compare``: in a figure's numerator when it is in every run's (a figure where higher is
better), or in any run's (every other figure) - the worst of the runs either way.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable

from rotbench.results.presentation.percent import percent
from rotbench.results.schema import (
    FigureSpread,
    FlakyQuestion,
    RepeatRun,
    RepeatSummary,
    Report,
)
from rotbench.scoring.metrics import Rate
from rotbench.scoring.paired import Outcomes, QuestionKey

PASS_METRICS: tuple[str, ...] = ("recall_current_at_k", "current_first")
"""The currency figures ``pass_all`` gives pass^N of."""


def run_reports(report: Report) -> list[Report]:
    """Every run of ``report`` as a report of its own (its figures and world files, beside
    ``report``'s): the report itself for a single run."""
    if report.repeats is None:
        return [report]
    out = []
    for run in report.repeats.runs:
        view = report.model_copy(update={"metrics": run.metrics, "worlds": run.worlds,
                                         "repeats": None, "embedded_worlds": None})
        view._worlds_dir, view._source = report.worlds_dir, report.source
        out.append(view)
    return out


def _answers(outcomes: Outcomes) -> dict[QuestionKey, tuple]:
    """{question: its outcome on every figure that counts it, as sorted (figure, 0/1)}."""
    per: dict[QuestionKey, list[tuple[str, int]]] = {}
    for metric, rows in outcomes.items():
        for key, got in rows.items():
            per.setdefault(key, []).append((metric, got))
    return {key: tuple(sorted(rows)) for key, rows in per.items()}


def _spread(values: list[float | None]) -> FigureSpread:
    known = [v for v in values if v is not None]
    if not known:
        return FigureSpread(median=None, low=None, high=None)
    return FigureSpread(median=statistics.median(known), low=min(known), high=max(known))


def _differing(answers: list[tuple]) -> list[str]:
    """The figures whose outcome is not the same in every run's answer."""
    seen: dict[str, set] = {}
    for answer in answers:
        for metric, got in answer:
            seen.setdefault(metric, set()).add(got)
    counted = [{m for m, _ in answer} for answer in answers]
    return sorted(m for m, got in seen.items()
                  if len(got) > 1 or any(m not in c for c in counted))


def summarise_repeats(reports: list[Report], outcomes: list[Outcomes]) -> RepeatSummary:
    """The summary of the runs ``reports`` (run 1 first) of one engine on the same worlds,
    from each run's per-question ``outcomes`` (``question_outcomes`` of its worlds, in the
    same order). Raises ValueError for fewer than two runs."""
    if len(reports) < 2 or len(outcomes) != len(reports):
        raise ValueError("a repeat summary needs two runs or more, each with its outcomes")
    n = len(reports)
    answers = [_answers(o) for o in outcomes]
    questions = list(dict.fromkeys(k for a in answers for k in a))
    agreement: Counter[int] = Counter()
    flaky = []
    for key in questions:
        given = [a.get(key, ()) for a in answers]
        agreeing = Counter(given).most_common(1)[0][1]
        agreement[agreeing] += 1
        if agreeing < n:
            first = [None if key not in o.get("current_first", {})
                     else bool(o["current_first"][key]) for o in outcomes]
            seed, user, day, attribute, question = key
            flaky.append(FlakyQuestion(seed=seed, user=user, day=day, attribute=attribute,
                                       question=question, agreeing=agreeing,
                                       current_first=first, figures=_differing(given)))
    metrics = list(dict.fromkeys(m for r in reports for m in r.metrics))
    spread = {m: _spread([r.metrics[m].value if m in r.metrics else None for r in reports])
              for m in metrics}
    return RepeatSummary(
        count=n,
        runs=[RepeatRun(repeat=i + 1, metrics=r.metrics, worlds=r.worlds)
              for i, r in enumerate(reports)],
        spread=spread, questions=len(questions),
        agreement=dict(sorted(agreement.items(), reverse=True)), flaky=flaky,
        pass_all={m: passes for m in PASS_METRICS
                  if (passes := pass_all(outcomes, m)) is not None})


def pass_all(outcomes: list[Outcomes], metric: str) -> Rate | None:
    """pass^N of ``metric`` over the runs' ``outcomes``: of the questions every run counts
    in the figure, those in its numerator in every run; None when no run has the figure."""
    rows = [o.get(metric) for o in outcomes]
    if any(r is None for r in rows):
        return None
    asked = set(rows[0]).intersection(*rows[1:])
    return Rate.of(sum(1 for k in asked if all(r[k] for r in rows)), len(asked))


def lone_departures(outcomes: list[Outcomes]) -> list[int]:
    """Per run (in order), the questions on which it alone answers differently: every other
    run gives one common answer and this run another (an answer as for ``flaky``). How far
    one run strays from the others: what a further run may be held to
    (``rotbench.published.verify``). Raises ValueError for fewer than three runs (with two,
    neither run alone departs from a common answer of the others)."""
    if len(outcomes) < 3:
        raise ValueError("lone departures need three runs or more")
    answers = [_answers(o) for o in outcomes]
    questions = list(dict.fromkeys(k for a in answers for k in a))
    counts = [0] * len(answers)
    for key in questions:
        given = [a.get(key, ()) for a in answers]
        for i, mine in enumerate(given):
            others = set(given[:i] + given[i + 1:])
            if len(others) == 1 and mine not in others:
                counts[i] += 1
    return counts


def pooled_outcomes(outcomes: Iterable[Outcomes], higher: dict[str, bool]) -> Outcomes:
    """One outcome per question and figure over several runs: 1 when every run's is 1 for
    a figure whose ``higher`` is True (better when higher), else when any run's is; a
    question some run did not count is left out of the figure."""
    runs = list(outcomes)
    out: Outcomes = {}
    for metric in runs[0]:
        rows = [r.get(metric, {}) for r in runs]
        asked = set(rows[0]).intersection(*rows[1:])
        pick = all if higher.get(metric, False) else any
        out[metric] = {k: int(pick(r[k] for r in rows)) for k in rows[0] if k in asked}
    return out


def repeat_lines(report: Report) -> list[str]:
    """The repeat summary in a few plain lines (``rotbench run`` and ``show``); no lines
    for a single run. Escaping is the caller's (the text holds only numbers and metric
    names)."""
    rep = report.repeats
    if rep is None:
        return []
    unanimous = rep.agreement.get(rep.count, 0)
    lines = [f"repeats: {rep.count} runs of the engine on the same worlds; "
             f"{len(rep.flaky)} flaky question(s) of {rep.questions} "
             f"({unanimous} answered alike in every run)"]
    for metric, rate in rep.pass_all.items():
        lines.append(f"  pass^{rep.count} {metric}: {_fmt(rate)}")
    for metric in PASS_METRICS:
        if (s := rep.spread.get(metric)) is not None and s.median is not None:
            lines.append(f"  {metric}: median {percent(s.median)}, "
                         f"range {percent(s.low)}-{percent(s.high)}")
    return lines


def _fmt(rate: Rate) -> str:
    value = "n/a" if rate.value is None else percent(rate.value)
    return f"{value} ({rate.numerator}/{rate.denominator})"
