"""Hindsight's report of record is a ``--repeat 3`` run (issue 59): it varies from run to
run, so its record keeps every run's figures, each figure's range and the flaky questions,
and a fresh run is checked against that (``rotbench.published.verify``): the same answer on
every question outside the flaky ones, every figure within the runs' range. The engines
that give the same answers every run keep their single-run records and the exact check."""

from __future__ import annotations

from pathlib import Path

import pytest

from rotbench.engines.builtin import HINDSIGHT, _dist
from rotbench.published.build import peer_package
from rotbench.published.models import ARMS, Record
from rotbench.published.regenerate import REPEATS, _last_run, by_repeat, run_command
from rotbench.published.store import load_arm, outcomes_of
from rotbench.published.verify import departures, differences, range_notes
from rotbench.results.presentation.percent import percent
from rotbench.scoring.metrics import Rate


def _hindsight(key: str) -> tuple[Record, list]:
    arm = load_arm(key)
    return next(r for r in arm.records if r.manifest.engine_source == "hindsight"), \
        list(arm.questions)


def _one_run(record: Record, run: int = 0) -> Record:
    """What a single run that gave the record's run ``run + 1`` would ship (its outcomes
    left as the record's: outside the flaky questions every run's are the same)."""
    rep = record.report.repeats
    report = record.report.model_copy(update={
        "repeats": None, "metrics": rep.runs[run].metrics, "worlds": rep.runs[run].worlds,
        "run_id": "fresh"})
    return record.model_copy(update={"report": report, "manifest": record.manifest.model_copy(
        update={"command": "rotbench run --engine hindsight", "run_id": "fresh"})})


def test_the_hindsight_manifest_names_the_package_pip_shows() -> None:
    """The distribution is hindsight-api-slim (what `pip show` in .venv-hindsight lists),
    and the version is the installed one ('missing' where it is not installed)."""
    assert HINDSIGHT.version == f"1.0.0+hindsight-api-slim-{_dist('hindsight-api-slim')}"
    assert peer_package(HINDSIGHT.version) == (
        f"hindsight-api-slim {_dist('hindsight-api-slim')}")
    for key in ARMS:
        record, _ = _hindsight(key)
        assert record.manifest.peer_package == "hindsight-api-slim 1.1.0"
        assert record.manifest.engine_version == "1.0.0+hindsight-api-slim-1.1.0"


@pytest.mark.parametrize("key", list(ARMS))
def test_hindsights_record_is_a_run_of_three_and_the_others_a_run_of_one(key) -> None:
    arm = load_arm(key)
    for record in arm.records:
        repeats = record.report.repeats
        if record.manifest.engine_source != "hindsight":
            assert repeats is None and "--repeat" not in record.manifest.command
            continue
        assert repeats.count == 3 and [r.repeat for r in repeats.runs] == [1, 2, 3]
        assert record.manifest.command.endswith("--engine hindsight --engine-timeout 600 "
                                                "--repeat 3")
        assert repeats.questions == len(arm.questions)
        assert repeats.agreement.get(3, 0) + len(repeats.flaky) == repeats.questions
        # the shipped outcomes are pooled: current_first's is pass^3
        first = record.outcomes["current_first"]
        assert (first.count("1"), first.count("1") + first.count("0")) == (
            repeats.pass_all["current_first"].numerator,
            repeats.pass_all["current_first"].denominator)


def test_the_flaky_questions_and_ranges_of_the_record() -> None:
    """What the three oracle runs measured (a fixed file: these figures are its)."""
    record, _ = _hindsight("oracle")
    rep = record.report.repeats
    got = {
        "flaky": len(rep.flaky),
        "current_first": [(r.metrics["current_first"].numerator,
                           r.metrics["current_first"].denominator) for r in rep.runs],
        "pass^3": (rep.pass_all["current_first"].numerator,
                   rep.pass_all["current_first"].denominator),
    }
    assert got == PINNED_ORACLE


PINNED_ORACLE = {"flaky": 53, "current_first": [(128, 247), (128, 247), (133, 247)],
                 "pass^3": (124, 247)}
"""Hindsight on the oracle arm, three cold runs (hindsight-api-slim 1.1.0, generator 5's
worlds of 2026-12-07's eighth session, deciding documents carried twice): 53 of 483
questions flaky, current_first 128 to 133 of 247, pass^3 124."""


def test_a_run_like_any_of_the_three_agrees_with_the_record() -> None:
    for key in ARMS:
        record, questions = _hindsight(key)
        for run in range(3):
            assert differences(record, _one_run(record, run), questions) == [], (key, run)


def _moved(fresh: Record, indices: list[int], row: str = "current_first") -> Record:
    """``fresh`` with the outcome of each question at ``indices`` flipped on ``row``."""
    text = list(fresh.outcomes[row])
    for i in indices:
        text[i] = {"0": "1", "1": "0", ".": "1"}[text[i]]
    return fresh.model_copy(update={"outcomes": {**fresh.outcomes, row: "".join(text)}})


def test_flaky_questions_are_free_and_steady_ones_count_up_to_the_lone_departures() -> None:
    """Oracle: 430 steady questions; the three runs alone answered otherwise on 10, 19 and
    20. A run may answer any flaky question otherwise, and up to 20 steady ones (each
    counted once, however many figures it moves); the 21st is a difference."""
    record, questions = _hindsight("oracle")
    assert record.lone_departures == [10, 19, 20]
    flaky = {(q.seed, q.user, q.day, q.attribute, q.question)
             for q in record.report.repeats.flaky}
    at_flaky = [i for i, q in enumerate(questions) if q.key in flaky]
    steady = [i for i, q in enumerate(questions) if q.key not in flaky]
    assert (len(at_flaky), len(steady)) == (53, 430)
    fresh = _one_run(record)
    assert differences(record, _moved(fresh, at_flaky), questions) == []
    assert departures(record, _moved(fresh, at_flaky), questions) == (0, 430)
    twice = _moved(_moved(fresh, steady[:20]), steady[:20], "recall_current_at_k")
    assert departures(record, twice, questions) == (20, 430)
    assert differences(record, twice, questions) == []
    assert differences(record, _moved(fresh, steady[:21]), questions) == [
        "outcomes: the run answers 21 of the 430 steady questions otherwise than the "
        "record; its runs strayed alone on at most 20"]


def test_a_figure_outside_the_runs_range_is_named_not_counted() -> None:
    record, questions = _hindsight("oracle")
    spread = record.report.repeats.spread["current_first"]
    fresh = _one_run(record)
    d = fresh.report.metrics["current_first"].denominator
    low = int(spread.low * d + 0.5)
    report = fresh.report.model_copy(update={"metrics": {
        **fresh.report.metrics, "current_first": Rate.of(low - 1, d)}})
    below = fresh.model_copy(update={"report": report})
    assert differences(record, below, questions) == []
    assert range_notes(record, below) == [
        f"current_first: run {low - 1}/{d}, shipped {percent(spread.low)} to "
        f"{percent(spread.high)}"]
    assert range_notes(record, fresh) == []
    worlds = [fresh.report.worlds[0].model_copy(update={"probes": 1}),
              *fresh.report.worlds[1:]]
    report = fresh.report.model_copy(update={"worlds": worlds})
    assert differences(record, fresh.model_copy(update={"report": report}), questions) == [
        f"worlds[0].probes: shipped {record.report.worlds[0].probes}, run 1"]


def test_lone_departures_count_a_run_against_the_others_common_answer() -> None:
    """Four questions over three runs: q1 alike; q2 run 3 alone; q3 runs 2 and 3 against
    run 1 (run 1 alone); q4 three answers (nobody alone: the others disagree)."""
    from rotbench.results.repeats import lone_departures

    q = [(42, "u", 1, "a", f"q{i}") for i in range(1, 5)]
    runs = [{"current_first": {q[0]: 1, q[1]: 1, q[2]: 1, q[3]: 1}},
            {"current_first": {q[0]: 1, q[1]: 1, q[2]: 0, q[3]: 0}},
            {"current_first": {q[0]: 1, q[1]: 0, q[2]: 0}}]
    assert lone_departures(runs) == [1, 0, 1]
    with pytest.raises(ValueError, match="three runs or more"):
        lone_departures(runs[:2])


def test_a_repeated_record_needs_the_questions_to_be_checked() -> None:
    record, _ = _hindsight("oracle")
    with pytest.raises(ValueError, match="question by question"):
        differences(record, _one_run(record))


def test_compare_pairs_the_pooled_outcomes() -> None:
    """``published:hindsight`` reaches compare as pooled outcomes (pass^3 where higher is
    better), as a repeated run of the user's own does."""
    from rotbench.results.presentation.compare import PooledOutcomes

    arm = load_arm("oracle")
    for record in arm.records:
        got = outcomes_of(record, arm)
        assert isinstance(got, PooledOutcomes) == (record.manifest.engine_source == "hindsight")


def test_the_varying_engines_run_apart_with_their_repeat(tmp_path: Path) -> None:
    """`make published`: the engines of REPEATS run as a `rotbench run --repeat N` of their
    own, after the single runs; last-run.txt pairs every report with its command."""
    assert REPEATS == {"hindsight": 3}
    assert by_repeat(["reference", "hindsight", "mem0"]) == {1: ["reference", "mem0"],
                                                             3: ["hindsight"]}
    assert by_repeat(["hindsight"], repeats={}) == {1: ["hindsight"]}
    assert run_command("noisy-good", ["hindsight"], 3) == [
        "rotbench", "run", "--arm", "noisy", "--noise", "good", "--engine", "hindsight",
        "--engine-timeout", "600", "--repeat", "3"]
    assert "--repeat" not in run_command("oracle", ["reference"])
    (tmp_path / "oracle").mkdir()
    (tmp_path / "oracle" / "last-run.txt").write_text(
        "a.json\nb.json\n# rotbench run --engine a --engine b\nc.json\n"
        "# rotbench run --engine c --repeat 3\n", encoding="utf-8")
    assert [(p.name, c) for p, c in _last_run("oracle", tmp_path)] == [
        ("a.json", "rotbench run --engine a --engine b"),
        ("b.json", "rotbench run --engine a --engine b"),
        ("c.json", "rotbench run --engine c --repeat 3")]
