"""A plug-in engine that monkeypatches rotbench (the scorer, the hit check,
the shared embedder) changes nothing outside its own worker process: the other engines'
figures are those of a run without it, nothing false is cached, and the hit check of the
run's process still holds it to ``--top-k``.

The engines live in ``tests/engines/isolation_engines.py``; every run is one seed, 30 days,
generator 4."""

from __future__ import annotations

import pytest

from rotbench.engines.registry import registered, resolve

pytestmark = pytest.mark.slow

E = "tests.engines.isolation_engines:"
RUN = {"seeds": [42], "days": 30, "generator": "4"}
CALL = "query('Which city does the user live in?', k=10)"


def figures(report) -> dict[str, tuple[int, int]]:
    return {name: (m.numerator, m.denominator) for name, m in report.metrics.items()}


@pytest.fixture(scope="module")
def alone(run_engines):
    """The two baselines without any plug-in: their figures."""
    run = run_engines("alone", engines=["transcript-rag", "latest-wins"], **RUN)
    return {name: figures(r) for name, r in run.reports.items()}


def test_which_engines_run_in_a_worker() -> None:
    """Plug-ins and peer adapters run in workers; the reference engine and the baselines
    in the run's process."""
    from rotbench.engines.host.engine_worker import IN_PROCESS, isolated

    engines = registered()
    assert {name for name, info in engines.items() if info.factory in IN_PROCESS} == {
        "reference", "transcript-rag", "latest-wins"}
    assert len(engines) > 3
    assert isolated(resolve(E + "sound"))


def test_a_patched_scorer_changes_no_other_engine_and_nothing_cached(run_engines,
                                                                      alone) -> None:
    """On main, ``patches_scorer`` made every hit of every engine 'current' (7/22 shown as
    22/22), and a later run without it was served the false figures from the cache."""
    run = run_engines("scorer", engines=[E + "patches_scorer", "latest-wins"], **RUN)
    assert figures(run.reports["latest-wins"]) == alone["latest-wins"]
    sound = figures(run.reports["sound"])
    assert sound["current_first"][0] < sound["current_first"][1]  # its own, unpatched scoring
    from flow_helpers import run_flow

    report, _ = run_flow(run.root, engines=["latest-wins"], **RUN)  # the same cache
    assert figures(report) == alone["latest-wins"]


def test_a_patched_hit_check_still_meets_the_run_s_check(run_engines) -> None:
    """On main, waving ``validate_hits`` through let 50 hits in for ``--top-k 10``."""
    run = run_engines("hitcheck", engines=[E + "patches_hit_check", "latest-wins"], **RUN)
    assert run.outcome.failures == [
        f"engine sound: seed 42, day 15: {CALL}: returned 50 hits for k=10"]
    assert list(run.reports) == ["latest-wins"]


def test_a_patched_embedder_moves_only_its_own_figures(run_engines, alone) -> None:
    """On main, replacing ``encode`` on the shared embedder's class moved the other engine's
    figures (10/22 to 8/22)."""
    run = run_engines("embedder", engines=[E + "patches_embedder", "transcript-rag"], **RUN)
    assert figures(run.reports["transcript-rag"]) == alone["transcript-rag"]
