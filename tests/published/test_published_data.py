"""The reports of record shipped in the package (issue 59, item 1): what they hold, how big
they are, and that the cheap engines' records equal a run today, figure for figure (the
peers': tests/published/test_published_heavy.py, `make verify-published`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from published_helpers import run_arm, shipped_differences  # noqa: E402

from rotbench.published.build import questions_of  # noqa: E402
from rotbench.published.models import ARMS  # noqa: E402
from rotbench.published.regenerate import ENGINES  # noqa: E402
from rotbench.published.store import DATA, load_arm  # noqa: E402
from rotbench.scoring.lexicons import default_scorer  # noqa: E402
from rotbench.world.generators.base import DEFAULT_GENERATOR  # noqa: E402

MAIN_ENV = [e for e in ENGINES if e != "hindsight"]
"""Every engine the main environment (`make test`'s extras) runs."""


def test_every_shipped_arm_holds_every_engine_on_todays_defaults() -> None:
    """Each arm's file holds every engine but Hindsight (shipped once run from its own
    environment) on seeds 42 43 44 of the default generator under its default scorer, each
    manifest naming what ran; a default that changes fails here until `make published`."""
    for key, (arm, noise) in ARMS.items():
        shipped = load_arm(key)
        names = [r.manifest.engine_source for r in shipped.records]
        assert set(MAIN_ENV) <= set(names), (key, names)
        for record in shipped.records:
            m = record.manifest
            assert (m.arm, m.noise, m.seeds, m.days, m.top_k) == (arm, noise, [42, 43, 44],
                                                                  90, 10)
            assert m.generator_version == DEFAULT_GENERATOR
            assert m.scorer_version == default_scorer(DEFAULT_GENERATOR)
            assert m.command.startswith(f"rotbench run --arm {arm}")
            assert f"--engine {m.engine_source}" in m.command
            assert (m.noise_logic is None) == (arm == "oracle")
            assert (m.peer_package is None) == (m.engine_source in (
                "reference", "transcript-rag", "latest-wins"))
        assert len({tuple(r.manifest.worlds) for r in shipped.records}) == 1
        by_name = {r.manifest.engine_source: r for r in shipped.records}
        # the version of the peer package is the adapter's
        assert by_name["mem0"].manifest.peer_package == "mem0ai 2.2.1"
        assert by_name["benchd:echo"].manifest.peer_package == "benchd-harness 0.2.0"


def test_the_shipped_files_are_small() -> None:
    """Figures, outcomes and manifests only: under 100 KB an arm, compressed."""
    sizes = {p.name: p.stat().st_size for p in DATA.glob("*.json.gz")}
    assert sorted(sizes) == sorted(f"{key}.json.gz" for key in ARMS)
    assert max(sizes.values()) < 100_000, sizes


def test_the_shipped_reference_record_equals_a_run(oracle_report) -> None:
    """The reference engine's oracle record against the session's cold run on the default
    worlds: the same questions, and no figure, outcome or behaviour differs."""
    report = oracle_report(DEFAULT_GENERATOR, (42, 43, 44))
    assert [q.key for q in questions_of(report)] == [q.key for q in load_arm("oracle").questions]
    assert shipped_differences("oracle", report) == []


@pytest.mark.slow
def test_the_cheap_engines_records_equal_a_run(tmp_path) -> None:
    """latest-wins and transcript-rag on the oracle arm, the reference engine and
    latest-wins under the noisy arm's `good` profile: each shipped record equals a cold run's,
    figure for figure."""
    for key, engines in (("oracle", ["latest-wins", "transcript-rag"]),
                         ("noisy-good", ["reference", "latest-wins"])):
        for report in run_arm(key, engines, tmp_path / key):
            assert shipped_differences(key, report) == [], (key, report.selection.engine)


def test_a_moved_figure_or_outcome_is_named() -> None:
    """What the equality check reports: each figure and question outcome that moved, and
    nothing for the run's own identity or a world file's digest."""
    from rotbench.published.verify import differences
    from rotbench.scoring.metrics import Rate

    shipped = next(r for r in load_arm("oracle").records
                   if r.manifest.engine_source == "reference")
    report = shipped.report
    worlds = [report.worlds[0].model_copy(update={"sha256": "0" * 64}), *report.worlds[1:]]
    same = shipped.model_copy(update={
        "report": report.model_copy(update={"worlds": worlds, "run_id": "other"}),
        "manifest": shipped.manifest.model_copy(update={"command": "x", "run_id": "other"})})
    assert differences(shipped, same) == []
    metrics = {**report.metrics, "current_first": Rate.of(246, 247)}
    first = shipped.outcomes["current_first"]
    moved = shipped.model_copy(update={
        "report": report.model_copy(update={"metrics": metrics}),
        "outcomes": {**shipped.outcomes, "current_first": "0" + first[1:]}})
    assert first[0] == "1"
    assert differences(shipped, moved) == [
        "metrics.current_first: shipped '247/247', run '246/247'",
        "outcomes[current_first]: 1 questions differ"]
