"""Stored figures are not trusted. ``rotbench db`` refuses a report whose
figures its probes do not give; ``show``, ``compare``, ``report`` and ``export`` re-classify
the recorded hit texts, so a hit text edited in a world file (with the new digest written into
the report) is counted as what the text says, with a warning."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results.verify import TextCheck, recompute, verification_problems
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.testing.synthetic import synthetic_world_probes

runner = CliRunner()


def _record(root: Path):
    spec = RunSpec(seeds=[42], generator="2", reports_dir=str(root / "reports"),
                   db_path=str(root / "made.duckdb"))
    report = record_run(spec, [synthetic_world_probes(42)], [], {}, [], {})
    [path] = (root / "reports").glob(f"{report.run_id}-*.json")
    return report, path


def _edit_a_hit_text(report_path: Path) -> str:
    """Replace the text of the first 'current' hit of the world file with one naming no
    value, keep its recorded class, store the world under its new digest and write that
    digest into the report (what a careful forger does). Returns the old text."""
    data = json.loads(report_path.read_text())
    worlds = report_path.parent / "worlds"
    old_sha = data["worlds"][0]["sha256"]
    world = json.loads((worlds / f"{old_sha}.json").read_text())
    hit = next(h for p in world["probes"] if p.get("truth") is not None
               for h in p["hits"] if h["cls"] == "current")
    old, hit["text"] = hit["text"], "The user mentioned the weather today."
    raw = json.dumps(world, separators=(",", ":")).encode()
    sha = hashlib.sha256(raw).hexdigest()
    (worlds / f"{sha}.json").write_bytes(raw)
    data["worlds"][0]["sha256"] = sha
    report_path.write_text(json.dumps(data))
    return old


def test_an_unedited_report_verifies(tmp_path) -> None:
    report, _ = _record(tmp_path)
    assert verification_problems(report) == []


def test_an_edited_hit_text_is_reclassified_by_show_and_compare(tmp_path) -> None:
    report, path = _record(tmp_path)
    stored = report.metrics["current_first"]
    _edit_a_hit_text(path)
    from rotbench.results.files.report import load_report

    edited = load_report(path)
    check = TextCheck()
    bundle = recompute(edited, check)
    assert check.count == 1 and check.first[0].endswith("recorded current, its text gives none")
    # the forged hit was the first value-bearing hit of its question: one fewer current first
    assert (bundle.metrics["current_first"].numerator,
            bundle.metrics["current_first"].denominator) == (stored.numerator - 1,
                                                             stored.denominator)
    shown = runner.invoke(app, ["show", str(path), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    assert "1 recorded hit classes disagree with their hit texts (seed 42" in shown.stderr
    assert json.loads(shown.stdout)["metrics"]["current_first"]["numerator"] == \
        stored.numerator - 1
    other = _record(tmp_path / "b")[1]
    compared = runner.invoke(app, ["compare", str(other), str(path), "--format", "json"])
    assert compared.exit_code == 0, compared.output
    assert "recorded hit classes disagree with their hit texts" in compared.stderr
    row = next(r for f in json.loads(compared.stdout)["families"] for r in f["rows"]
               if r["metric"] == "current_first")
    assert [c["rate"]["numerator"] for c in row["cells"]] == [stored.numerator,
                                                              stored.numerator - 1]


@pytest.mark.parametrize("edit", ["figures", "text"])
def test_db_import_refuses_a_report_that_does_not_verify(tmp_path, edit) -> None:
    report, path = _record(tmp_path)
    if edit == "figures":  # figures the probes do not give: 21/22 where they give 7/22
        data = json.loads(path.read_text())
        from rotbench.scoring.metrics import Rate

        whole = data["metrics"]["current_first"]["denominator"]
        data["metrics"]["current_first"] = Rate.of(whole, whole).model_dump(mode="json")
        path.write_text(json.dumps(data))
    else:
        _edit_a_hit_text(path)
    db = tmp_path / "fresh.duckdb"
    result = runner.invoke(app, ["db", "--reports-dir", str(path.parent), "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert f"rotbench: warning: not imported: {path.name}: does not verify, not imported: " \
        in result.stderr
    why = ("the stored figures disagree with the report's probes (metrics.current_first"
           if edit == "figures" else "1 recorded hit classes disagree with their hit texts")
    assert why in result.stderr
    assert "0 runs imported" in result.stdout
    if not db.exists():
        return  # nothing was written at all
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables"
                                            ).fetchall()}
        assert "runs" not in tables or con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_db_import_takes_a_report_that_verifies(tmp_path) -> None:
    report, path = _record(tmp_path)
    db = tmp_path / "fresh.duckdb"
    result = runner.invoke(app, ["db", "--reports-dir", str(path.parent), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"imported {report.run_id}" in result.stdout


def test_a_family_added_or_removed_by_hand_is_a_disagreement(small_report) -> None:
    """A fresh-user trial: a family added to ``family_miss_stages`` by hand, or one removed,
    passed ``show`` silently (only changed counts were caught). Both are disagreements now;
    a report that stores no families at all (written before they existed) is not."""
    from rotbench.results.verify import mismatches, recompute
    from rotbench.scoring.miss_stages import FamilyStages

    bundle = recompute(small_report)
    forget = FamilyStages(questions=3, stages={"served": 1})
    derived = bundle.model_copy(update={"family_miss_stages": {"forget": forget}})
    evil = small_report.model_copy(update={"family_miss_stages": {
        "forget": forget, "<b>evil</b>": FamilyStages(questions=3, stages={"served": 1})}})
    assert mismatches(evil, derived) == [
        "family_miss_stages.<b>evil</b>: stored questions=3 stages={'served': 1}, probes "
        "give nothing"]
    removed = small_report.model_copy(update={"family_miss_stages": {
        "premise": FamilyStages(questions=1, stages={"never_seen": 0})}})
    got = mismatches(removed, derived)
    assert [line.split(":")[0] for line in got] == ["family_miss_stages.forget",
                                                    "family_miss_stages.premise"]
    assert mismatches(small_report, derived) == []  # stores none: an older report
    kept = small_report.model_copy(update={"family_miss_stages": {"forget": forget}})
    assert mismatches(kept, derived) == []
