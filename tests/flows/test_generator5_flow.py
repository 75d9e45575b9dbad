"""Generator 5, the default since issue 53, end to end: one flow run (oracle arm, seeds 42 43
44, scorer v6) of the reference engine and the 20-line example engine, with their pooled
figures pinned exactly (tests/data/pinned_figures.json, "generator 5") and carried by
DuckDB, ``show``, ``compare`` and the HTML page; a scorer change re-runs only scoring; and
``--users 2`` on the default generator. Generator 4's twin: tests/flows/test_generator4_flow.py.

The figures move whenever generator 5's worlds or the oracle's reading of them do; re-print
them with ``rotbench run --engine reference --engine examples.my_engine:make_engine``.
"""

from __future__ import annotations

import pytest
from flow_helpers import (
    assert_complete,
    clone_cache,
    computed,
    count_rows,
    figures_of,
    pinned,
    pooled_rows,
    report_of,
    run_flow,
    shown,
)

from rotbench.world.generators.base import DEFAULT_GENERATOR

pytestmark = pytest.mark.slow

ENGINES = ["reference", "examples.my_engine:make_engine"]
NEW = ("forgotten_served_at_k", "resurrected_first")
"""Generator 5's own metrics (the "Resurrection" family)."""
PINNED = pinned("generator 5")
"""Pooled over seeds 42 43 44: the reference engine and the 20-line example
(newest-statement)."""


@pytest.fixture(scope="module")
def run_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("g5")
    _, outcome = run_flow(root, engines=ENGINES, generator=DEFAULT_GENERATOR)
    return root, outcome


@pytest.fixture(scope="module")
def outcome(run_root):
    return run_root[1]


def test_the_default_is_generator_5_under_scorer_v6(outcome) -> None:
    assert DEFAULT_GENERATOR == "5"
    assert_complete(outcome, "5", "v6")


@pytest.mark.parametrize("engine", list(PINNED))
def test_figures_are_pinned(outcome, engine: str) -> None:
    report = report_of(outcome, engine)
    assert figures_of(report, PINNED[engine]) == PINNED[engine]
    assert set(report.by_kind) >= {"successor", "premise", "cascade", "relative_date",
                                   "forget", "redelivery"}
    assert set(report.by_evidence or {}) == {"1", "2-3", "4+"}


def test_generator_5_figures_reach_duckdb_show_compare_and_html(run_root) -> None:
    root, outcome = run_root
    reference = outcome.reports[0]
    pooled = pooled_rows(root, reference.run_id)
    for m in NEW:
        assert pooled[(m, None)] == PINNED["reference"][m]
    evidence = {ch: nd for (m, ch), nd in pooled.items()
                if m == "current_first" and ch and ch.startswith("evidence:")}
    assert sorted(evidence) == ["evidence:1", "evidence:2-3", "evidence:4+"]
    assert sum(n for n, _ in evidence.values()) == PINNED["reference"]["current_first"][0]
    assert sum(d for _, d in evidence.values()) == PINNED["reference"]["current_first"][1]
    per_seed = count_rows(root, reference.run_id, "seed IS NOT NULL AND metric = "
                          "'forgotten_served_at_k' AND checkpoint IS NULL AND channel IS NULL")
    assert per_seed == 3
    text, better, page = shown(outcome)
    assert "Resurrection" in text and all(m in text for m in NEW) and "By evidence" in text
    assert better["forgotten_served_at_k"] == "lower" and better["resurrected_first"] == "lower"
    assert all(m in page for m in NEW)


def test_scorer_change_reruns_only_score(run_root, tmp_path) -> None:
    """v6 (the default) to v5 and back: the stages before scoring come from the cache, and
    each report records its scorer."""
    root = clone_cache(run_root[0], tmp_path / "run")
    example = ENGINES[1]
    report, _ = run_flow(root, engines=[example], generator=DEFAULT_GENERATOR, scorer="v5")
    assert computed(report) == {(s, "score") for s in (42, 43, 44)}
    assert report.selection.scorer_version == "v5"
    again, _ = run_flow(root, engines=[example], generator=DEFAULT_GENERATOR)
    assert computed(again) == set() and again.selection.scorer_version == "v6"
    assert figures_of(again, PINNED["newest-statement"]) == PINNED["newest-statement"]


USERS_2 = {"current_first": (158, 158), "stale_over_current": (0, 196),
           "premise_stale_first": (0, 34), "premature_first": (0, 32),
           "forgotten_served_at_k": (0, 34), "resurrected_first": (0, 27),
           "cross_user_leak_at_k": (0, 142), "cross_user_first": (0, 142)}
"""The reference engine on seed 42 with two users (``rotbench run --users 2 --seed 42``)."""


def test_several_users_on_the_default_generator(tmp_path) -> None:
    """``rotbench run --users 2`` on generator 5: every user's questions answered as in a
    store of their own, forget requests and re-deliveries included, nothing of one user
    served to the other."""
    report, outcome = run_flow(tmp_path, generator=DEFAULT_GENERATOR, users=2, seeds=[42],
                               engines=["reference"])
    assert not outcome.failures
    got = {m: (r.numerator, r.denominator) for m, r in report.metrics.items()}
    assert {m: got[m] for m in USERS_2} == USERS_2
