"""The report model: field names, build rules, schema versioning, atomic save and load."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rotbench.results import (
    SCHEMA_VERSION,
    Report,
    ReportError,
    build_report,
    load_report,
    write_report,
)
from rotbench.results import schema as model_module
from rotbench.results.files.worlds import iter_worlds
from rotbench.scoring import CORE_METRICS, compute_metrics, metric_names, score_world
from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

FIXTURES = Path(__file__).parent / "fixtures"

TOP_LEVEL = [
    "schema_version", "run_id", "created_at", "origin", "selection", "metrics", "by_channel",
    "by_kind", "by_checkpoint", "by_attribute", "by_phrasing", "first_hit_counts", "floor_sweep",
    "miss_stages", "worlds", "embedded_worlds", "notes", "stages", "timings", "usage",
    "review_queue", "real_pairs", "degraded",
]  # fmt: skip


def test_json_field_names(small_report: Report) -> None:
    data = json.loads(small_report.model_dump_json())
    assert list(data) == TOP_LEVEL
    assert list(data["metrics"]) == list(metric_names(reads_decoys=False))  # scorer v2
    assert set(data["metrics"]["current_first"]) == {
        "numerator",
        "denominator",
        "value",
        "low",
        "high",
    }
    assert list(data["by_channel"]) == ["relay", "tool_turn", "source"]
    assert list(data["by_checkpoint"]) == ["15", "30", "45", "60", "75", "90"]
    assert data["worlds"] == [{"seed": 7, "fingerprint": "synthetic-7", "sha256": None,
                               "probes": 84, "unanswerable": 12, "hits": 840}]
    hit = data["embedded_worlds"][0]["probes"][0]["hits"][0]
    assert {"rank", "text", "score", "similarity", "cls", "provenance"} <= set(hit)
    assert hit["text"] and hit["cls"]
    assert set(data["selection"]) >= {
        "arm", "seeds", "days", "checkpoints", "top_k", "trust_policy", "config",
        "generator_version", "scorer_version", "engine_version", "embedding_model",
        "record_claim_text",
    }  # fmt: skip


def test_build_scores_unscored_worlds_and_strips_text_when_asked() -> None:
    world = synthetic_world_probes(5, k=4)
    assert not world.scored
    report = build_report("r", synthetic_selection([5], "v1"), [world], [], {}, [])
    assert report.embedded_worlds == [score_world(world, "v1")]
    expected = compute_metrics([score_world(world, "v1")], reads_decoys=False).metrics
    assert report.metrics == expected
    off = build_report(
        "r", synthetic_selection([5], "v1", record_claim_text=False), [world], [], {}, []
    )
    assert all(h.text is None for p in off.embedded_worlds[0].probes for h in p.hits)
    assert off.metrics == report.metrics  # scored before the texts were dropped


def test_round_trip(saved: Path, small_report: Report) -> None:
    assert load_report(saved) == small_report


def test_committed_schema_v1_fixture_still_loads() -> None:
    report = load_report(FIXTURES / "report-schema-v1.json")
    assert report.schema_version == 3  # upgraded on load
    assert (report.selection.engine, report.selection.engine_source) == ("synthetic", "synthetic")
    assert report.run_id == "fixture-schema-v1"
    # written before the new metrics: it has the core seven only, and they still recompute
    assert list(report.metrics) == list(CORE_METRICS) and report.by_kind == {}
    recomputed = compute_metrics([score_world(w, report.scored_with)
                                  for w in iter_worlds(report)])
    assert {m: recomputed.metrics[m] for m in CORE_METRICS} == report.metrics
    assert (
        report.metrics["current_first"].numerator,
        report.metrics["current_first"].denominator,
    ) == (7, 12)


def _dump(report: Report, **changes) -> dict:
    data = json.loads(report.model_dump_json())
    data.update(changes)
    return data


def test_newer_schema_is_refused(tmp_path: Path, small_report: Report) -> None:
    path = tmp_path / "new.json"
    path.write_text(json.dumps(_dump(small_report, schema_version=SCHEMA_VERSION + 1)))
    with pytest.raises(ReportError) as err:
        load_report(path)
    message = str(err.value)
    assert "\n" not in message
    assert str(path) in message and "newer than this rotbench reads" in message


@pytest.mark.parametrize("created_at", ["not a date", "2026-13-40T00:00:00+00:00", ""])
def test_a_created_at_that_is_no_instant_is_refused_with_its_field(
        tmp_path: Path, small_report: Report, created_at: str) -> None:
    """A fresh user's trial: ``show`` read such a report and ``rescore`` failed on it with
    Python's own message, naming neither the file nor the field."""
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(_dump(small_report, created_at=created_at)))
    with pytest.raises(ReportError) as err:
        load_report(path)
    assert str(err.value) == (f"{path}: field created_at: not an ISO-8601 instant "
                              "(e.g. 2026-12-02T15:00:00+00:00)")


@pytest.mark.parametrize("command", ["compare", "rescore", "export", "report"])
def test_a_failure_record_given_as_a_report_is_named_as_one(tmp_path: Path,
                                                            command: str) -> None:
    """A fresh user's trial: these commands said "field selection: Field required (and 13
    more)" of a ``*.failed.json``, where ``db`` already named it."""
    from typer.testing import CliRunner

    from rotbench.cli.main import app
    from rotbench.results.failures import new_failure_record

    record = new_failure_record("rot-oracle-x", "bad:make", "oracle", [42],
                                [(42, "engine bad: boom", None)])
    path = tmp_path / "rot-oracle-x-bad_make.failed.json"
    path.write_text(record.model_dump_json())
    message = (f"{path}: a failed run's failure record, not a report (it says why the run "
               "wrote none: rotbench show rot-oracle-x prints it)")
    with pytest.raises(ReportError) as err:
        load_report(path)
    assert str(err.value) == message
    args = {"compare": [str(path), str(path)], "rescore": [str(path)],
            "export": [str(path), "--out", str(tmp_path / "x")], "report": [str(path)]}
    result = CliRunner().invoke(app, [command, *args[command]])
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1].endswith(message), result.output


def test_older_schema_is_upgraded(monkeypatch, small_report: Report) -> None:
    def upgrade_0(data: dict) -> dict:
        data = dict(data)
        data["notes"] = data.pop("remarks")
        data["schema_version"] = 1
        return data

    monkeypatch.setitem(model_module._UPGRADES, 0, upgrade_0)
    old = _dump(small_report, schema_version=0)
    old["remarks"] = old.pop("notes")
    assert Report.model_validate(old) == small_report
    monkeypatch.delitem(model_module._UPGRADES, 0)
    with pytest.raises(ValueError, match="no upgrade from report schema_version 0"):
        Report.model_validate(old)


def test_write_is_atomic(tmp_path: Path, small_report: Report, monkeypatch) -> None:
    path = tmp_path / "r.json"
    path.write_text("previous")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_report(small_report, path)
    assert path.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temp file left
    monkeypatch.undo()
    write_report(small_report, path)
    assert load_report(path) == small_report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
