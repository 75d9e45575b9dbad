"""Rescoring a saved report: v2 -> v1 -> v2 reproduces v2 exactly; origin; refusals."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rotbench.results import Report, ReportError, rescore_report, write_report
from rotbench.results.build import build_report
from rotbench.scoring import UnknownScorer
from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

FIGURES = (
    "metrics", "by_channel", "by_checkpoint", "by_attribute", "by_phrasing",
    "first_hit_counts", "floor_sweep",
)  # fmt: skip


def _figures(report: Report) -> dict:
    return {name: getattr(report, name) for name in FIGURES}


def test_v2_to_v1_and_back(tmp_path: Path, report_v2: Report) -> None:
    src = write_report(report_v2, tmp_path / "src.json")
    v1 = rescore_report(report_v2, "v1", src)
    v1_path = write_report(v1, tmp_path / "v1.json")
    back = rescore_report(v1, "v2", v1_path)

    assert _figures(back) == _figures(report_v2)
    assert back.worlds == report_v2.worlds
    # the scorers disagree on the listed tool-turn values
    leak = {v: r.by_channel["tool_turn"]["poison_leak_at_k"] for v, r in (("v1", v1), ("v2", back))}
    assert leak["v2"].numerator == 0 < leak["v1"].numerator == leak["v1"].denominator
    assert v1.metrics["recall_current_at_k"] == report_v2.metrics["recall_current_at_k"]
    assert v1.selection.scorer_version == "v1" and back.selection.scorer_version == "v2"


def test_origin_and_first_note(tmp_path: Path, small_report: Report) -> None:
    src = write_report(small_report, tmp_path / "src.json")
    before = src.read_bytes()
    sha = hashlib.sha256(before).hexdigest()
    new = rescore_report(small_report, "v1", src)
    assert new.origin is not None
    assert (new.origin.source, new.origin.sha256, new.origin.scorer_version) == (
        str(src),
        sha,
        "v2",
    )
    assert new.origin.run_id == small_report.run_id
    assert str(src) in new.notes[0] and sha in new.notes[0] and "v2" in new.notes[0]
    assert new.notes[1:] == small_report.notes
    assert new.run_id != small_report.run_id and new.run_id.startswith("synthetic-v2-rescore-v1-")
    assert new.selection.model_copy(update={"scorer_version": "v2"}) == small_report.selection
    assert new.stages[-1].stage == "rescore" and "rescore" in new.timings
    again = rescore_report(new, "v2", write_report(new, tmp_path / "new.json"))
    assert again.notes[1:] == small_report.notes  # the older origin note is not stacked
    assert again.run_id.startswith("synthetic-v2-rescore-v2-")
    assert src.read_bytes() == before  # the source is never modified


def test_refusals(tmp_path: Path, small_report: Report) -> None:
    src = write_report(small_report, tmp_path / "src.json")
    with pytest.raises(UnknownScorer,
                       match=r"unknown scorer 'v9' \(available: v1, v2, v3, v4, v5, v6\)"):
        rescore_report(small_report, "v9", src)
    world = synthetic_world_probes(3, k=2)
    no_text = build_report(
        "t", synthetic_selection([3], "v2", record_claim_text=False), [world], [], {}, []
    )
    with pytest.raises(ReportError, match="no recorded claim text"):
        rescore_report(no_text, "v1", src)


def test_an_old_noisy_report_keeps_its_noise_logic_version(tmp_path: Path,
                                                           small_report: Report) -> None:
    """A report recorded under noise logic noisy/2 reads back, and rescores, as noisy/2:
    the stamps are what the run used, never relabelled by the current noisy/3."""
    from rotbench.perception.noisy import load_profile
    from rotbench.perception.noisy.perception import stamps
    from rotbench.results import load_report

    typical = load_profile("typical")
    old = {"extract": f"oracle-extractor/2+noisy/2:typical:{typical.digest}",
           "deposit": f"oracle-checker/1+noisy/2:typical:{typical.digest}"}
    assert set(old.values()).isdisjoint(stamps(typical))  # today's stamps say noisy/3
    sel = small_report.selection.model_copy(update={
        "arm": "noisy", "noise": "typical", "noise_digest": typical.digest, "stamps": old})
    src = write_report(small_report.model_copy(update={"selection": sel}), tmp_path / "o.json")
    loaded = load_report(src)
    assert loaded.selection.stamps == old
    again = rescore_report(loaded, "v1", src)
    assert again.selection.stamps == old
    back = load_report(write_report(again, tmp_path / "r.json"))
    assert back.selection.stamps == old and back.selection.noise_digest == typical.digest
