"""Failures inside one world, through the whole flow: a stage that fails transiently is
retried and the run's figures are a clean run's; a stage that fails for good (not
transient, or past its timeout) fails its own seed with a one-line reason while the other
seeds' report is written and names the missing seed.

Each fault is a patched plain function a stage task calls (its row of the stage table,
``flows.tasks``, patched), counting its calls, so the attempts a stage
made are counted exactly. The retry delays are cut to hundredths of a second."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from flow_helpers import computed, run_flow

import flows.tasks as tasks

pytestmark = pytest.mark.slow

SEEDS = [42, 43]
DAYS = 30
STAGES = {"generate", "extract", "index", "deposit", "probe", "score"}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The same run with nothing failing: its report."""
    report, outcome = run_flow(tmp_path_factory.mktemp("clean"), seeds=SEEDS, days=DAYS,
                               generator="2")
    assert outcome.missing == {}
    return report


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch) -> None:
    monkeypatch.setattr(tasks, "RETRY_DELAYS_SECONDS", [0.01, 0.01])


def test_a_transient_failure_is_retried_and_changes_no_figure(tmp_path, monkeypatch,
                                                              clean) -> None:
    real = tasks.score
    calls: list[int] = []

    def score(probes, scorer):
        calls.append(1)
        if len(calls) == 1:  # the first score of the run (either seed's) meets a full disk
            raise OSError(28, "No space left on device")
        return real(probes, scorer)

    monkeypatch.setattr(tasks, "score", score)  # the stage function its task calls
    report, outcome = run_flow(tmp_path, seeds=SEEDS, days=DAYS, generator="2")
    assert len(calls) == len(SEEDS) + 1  # one retry, of the one failed attempt
    assert outcome.missing == {} and outcome.failures == []
    assert report.selection.seeds == SEEDS
    assert report.metrics == clean.metrics
    assert report.by_channel == clean.by_channel
    assert report.worlds == clean.worlds
    assert computed(report) == {(s, stage) for s in SEEDS for stage in STAGES}
    assert not any("missing" in note for note in report.notes)


def test_a_failure_that_is_not_transient_fails_its_seed_alone_without_retry(
        tmp_path, monkeypatch, clean) -> None:
    real = tasks.generate
    attempts: Counter[int] = Counter()

    def generate(seed: int, days: int, generator: str, *rest):  # rest: volume, users, ids
        attempts[seed] += 1
        if seed == 43 and attempts[seed] == 1:  # a retry would succeed: there must be none
            raise ValueError("seed 43 cannot be generated\nsecond line of detail")
        return real(seed, days, generator, *rest)

    monkeypatch.setattr(tasks, "generate", generate)
    report, outcome = run_flow(tmp_path, seeds=SEEDS, days=DAYS, generator="2")
    assert attempts == {42: 1, 43: 1}
    assert outcome.missing == {43: "ValueError: seed 43 cannot be generated"}
    assert report.selection.seeds == [42]
    assert report.worlds == [clean.worlds[0]]  # seed 42's world, untouched
    assert ("seeds missing from this report (their world failed; requested 2, reported 1): "
            "43: ValueError: seed 43 cannot be generated") in report.notes
    assert computed(report) == {(42, stage) for stage in STAGES}
    [saved] = outcome.report_paths
    assert saved.endswith(f"{report.run_id}-reference.json")
    assert "43: ValueError: seed 43 cannot be generated" in Path(saved).read_text()


def test_a_stage_past_its_timeout_fails_its_seed_alone(tmp_path, monkeypatch, clean) -> None:
    """Seed 43's world never finishes generating. Prefect enforces a timeout in a worker
    thread by raising into it at its next Python instruction (it cannot interrupt one
    blocking call), so the stuck stage here waits in short sleeps. Without the timeout it
    would give up by itself after 60 s and the seed would not be missing."""
    real = tasks.generate
    attempts: Counter[int] = Counter()

    def generate(seed: int, days: int, generator: str, *rest):  # rest: volume, users, ids
        attempts[seed] += 1
        if seed == 43:
            give_up = time.monotonic() + 60
            while time.monotonic() < give_up:
                time.sleep(0.01)
        return real(seed, days, generator, *rest)

    monkeypatch.setattr(tasks, "generate", generate)
    short = tasks.TASKS["generate"].with_options(timeout_seconds=2.0, retries=0)
    monkeypatch.setitem(tasks.TASKS, "generate", short)  # one attempt: the timeout alone
    report, outcome = run_flow(tmp_path, seeds=SEEDS, days=DAYS, generator="2")
    assert attempts == {42: 1, 43: 1}
    assert list(outcome.missing) == [43]
    assert outcome.missing[43] == "TaskRunTimeoutError: Scope timed out after 2.0 second(s)."
    assert report.selection.seeds == [42]
    assert report.worlds == [clean.worlds[0]]
    assert any(note.startswith("seeds missing from this report (their world failed; "
                               "requested 2, reported 1): 43: TaskRunTimeoutError")
               for note in report.notes)
