"""Issue 26 through the whole flow: hostile engines in one run beside a sound one. Each fails
alone with its one line; the sound engine (and the engine whose ``name`` raises) keep their
reports; Prefect prints no traceback or ERROR line of its own for an engine's fault; and a
world whose engines failed is not cached whole."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from flow_helpers import run_flow

# a flow of every hostile engine (module fixture)
pytestmark = pytest.mark.slow

BAD = "tests.flows.bad_engines:"
ENGINES = [BAD + "unprintable", BAD + "raising_name", BAD + "exits", BAD + "generator_exit",
           BAD + "surrogate", BAD + "huge_text", BAD + "long_list", BAD + "similarity",
           "latest-wins"]
CALL = "day 15: query('Which city does the user live in?', k=10)"
AT = Path(__file__).parent / "bad_engines.py"
"""Where the engines' own errors are raised: the one-line error names it (issue 38)."""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("prefect", "prefect.task_runs",
                                              "prefect.flow_runs")]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        # a generous call limit: the sound engine's first query loads the embedding model,
        # which on a loaded machine can take longer than the default minute
        _, outcome = run_flow(root, engines=ENGINES, seeds=[42], days=30, generator="2",
                              engine_timeout_seconds=600.0)
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
    return root, outcome, records


def test_every_hostile_engine_fails_alone_with_one_line(hostile) -> None:
    _, outcome, _ = hostile
    assert outcome.failures == [
        f"engine unprintable: seed 42, {CALL}: raised _Unprintable: <cannot be shown: its "
        f"__str__ raised RuntimeError> (at {AT}:102 in query)",
        "engine exits: seed 42, day 2: deposit(session://world-42/day-002/0): raised "
        f"SystemExit: 0 (at {AT}:133 in deposit)",
        f"engine generator-exit: seed 42, {CALL}: raised GeneratorExit (at {AT}:143 in query)",
        f"engine surrogate: seed 42, {CALL}: malformed hit at position 1: text holds a lone "
        "surrogate (U+D800 at character 14), which no file can store",
        f"engine huge-text: seed 42, {CALL}: malformed hit at position 1: text is 1000000 "
        "characters, above the 16384 rotbench accepts",
        f"engine long-list: seed 42, {CALL}: returned 50 hits for k=10",
        f"engine similarity: seed 42, {CALL}: malformed hit at position 1: similarity 7.0 "
        "lies outside [-1, 1] (it must be a cosine)",
    ]
    assert outcome.missing == {}


def test_the_other_engines_keep_their_reports(hostile) -> None:
    """Item 5: an exception whose __str__ raises and a name property that raises no longer
    fail the world, so the sound engine's report is written."""
    _, outcome, _ = hostile
    assert [r.selection.engine_source for r in outcome.reports] == [BAD + "raising_name",
                                                                    "latest-wins"]
    raising, latest = outcome.reports
    assert raising.selection.engine == BAD + "raising_name"  # its registered name
    assert latest.metrics["current_first"].denominator == 24


def test_prefect_prints_no_error_or_traceback_for_an_engine_fault(hostile) -> None:
    """Item 20: no 'Task run failed' ERROR with a traceback, no 'Finished in state Failed',
    no warning that the exception could not be stored as a result."""
    _, _, records = hostile
    noisy = [r.getMessage()[:120] for r in records
             if r.levelno >= logging.WARNING and "EngineFailure" in r.getMessage()]
    assert noisy == []
    assert not [r for r in records if r.exc_info and r.levelno >= logging.WARNING]


def test_a_world_whose_engines_failed_is_not_cached_whole(hostile) -> None:
    root, _, _ = hostile
    assert list((root / "cache" / "prefect").glob("world-*")) == []


def test_a_plainly_raising_engine_gets_no_prefect_error_lines(tmp_path) -> None:
    """Item 20 on its own (an engine that raises a plain ValueError, which the world always
    survived): Prefect's ERROR lines with a traceback used to come before the one line."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    task_runs = logging.getLogger("prefect.task_runs")
    task_runs.addHandler(handler)
    try:
        _, outcome = run_flow(tmp_path, engines=[BAD + "raises", "latest-wins"], seeds=[42],
                              days=30, generator="2", engine_timeout_seconds=600.0)
    finally:
        task_runs.removeHandler(handler)
    assert len(outcome.failures) == 1 and outcome.failures[0].startswith("engine raises: ")
    assert [r.getMessage()[:60] for r in records if r.levelno >= logging.WARNING] == []
