"""Figures folded one world at a time equal the figures of all worlds at once."""

from __future__ import annotations

import pytest

from rotbench.results.schema import Report, reads_decoys
from rotbench.scoring import compute_metrics
from rotbench.scoring.tally import MetricTally, tally_world, tally_worlds
from rotbench.testing.synthetic import synthetic_report


@pytest.mark.parametrize("scorer", ["v1", "v2", "v3"])
def test_tally_equals_compute_metrics_on_seeds_42_to_44(scorer: str) -> None:
    report: Report = synthetic_report((42, 43, 44), scorer=scorer)
    worlds = report.embedded_worlds
    decoys = reads_decoys(report.selection)
    expected = compute_metrics(worlds, reads_decoys=decoys)
    folded = tally_worlds(iter(worlds), decoys).bundle()
    assert folded == expected
    # same keys in the same order, down to the JSON
    assert folded.model_dump_json() == expected.model_dump_json()
    assert list(folded.by_checkpoint) == [15, 30, 45, 60, 75, 90]
    assert list(folded.by_attribute) == sorted(folded.by_attribute)
    # the pinned pooled count of the fixture (currency denominator: answerable questions)
    assert (folded.metrics["recall_current_at_k"].denominator,
            sum(folded.first_hit_counts.values())) == (216, 216)
    # tallies add in any order; a + b leaves both untouched
    a, b, c = (tally_world(w, decoys) for w in worlds)
    assert (c + b + a).bundle() == expected
    assert a.bundle() == compute_metrics(worlds, seed=42, reads_decoys=decoys)


def test_floor_sweep_is_none_once_a_hit_lacks_similarity() -> None:
    worlds = synthetic_report((42, 43), scorer="v2").embedded_worlds
    probe = worlds[1].probes[5]
    bare = [h.model_copy(update={"similarity": None}) for h in probe.hits]
    damaged = worlds[1].model_copy(update={"probes": [
        probe.model_copy(update={"hits": bare}), *worlds[1].probes[6:]]})
    expected = compute_metrics([worlds[0], damaged], reads_decoys=False)
    folded = tally_worlds([worlds[0], damaged], reads_decoys=False).bundle()
    assert expected.floor_sweep is None and folded == expected
    assert tally_world(worlds[0], False).bundle().floor_sweep is not None


def test_unscored_and_mixed_scorers_are_refused() -> None:
    world = synthetic_report((42,), scorer="v2").embedded_worlds[0]
    unscored = world.model_copy(update={"probes": [world.probes[0].model_copy(update={
        "hits": [world.probes[0].hits[0].model_copy(update={"cls": None})]})]})
    with pytest.raises(ValueError, match="unscored"):
        tally_world(unscored)
    total = MetricTally(reads_decoys=True)
    with pytest.raises(ValueError, match="decoys"):
        total += tally_world(world, reads_decoys=False)
