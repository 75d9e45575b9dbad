"""A world that fails fails alone: its seed is reported missing with a one-line reason, and
the other worlds' report is written."""

from __future__ import annotations

from flow_helpers import computed, run_flow

import flows.tasks as tasks


def test_a_failing_world_is_reported_missing_and_the_others_finish(tmp_path,
                                                                   monkeypatch) -> None:
    real = tasks.generate_world

    def generate(seed: int, days: int, generator: str):
        if seed == 43:  # a ValueError is not transient: no retry
            raise ValueError("seed 43 cannot be generated\nsecond line of detail")
        return real(seed, days, generator)

    monkeypatch.setattr(tasks, "generate_world", generate)
    report, outcome = run_flow(tmp_path, seeds=[42, 43, 44], days=30)
    assert outcome.missing == {43: "ValueError: seed 43 cannot be generated"}
    assert report.selection.seeds == [42, 44]
    assert [w.seed for w in report.worlds] == [42, 44]
    assert ("seeds missing from this report (their world failed; requested 3, reported 2): "
            "43: ValueError: seed 43 cannot be generated") in report.notes
    assert {seed for seed, _ in computed(report)} == {42, 44}
