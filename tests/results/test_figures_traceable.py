"""Every figure says what ran (effective trust policy, degraded runs,
stored figures checked against the probes)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from rich.console import Console
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.perception.arms import ArmRuntime
from rotbench.perception.calls.records import CallFailure, PerceptionStats
from rotbench.results import Report, render, write_report, write_run
from rotbench.run.record import selection_for
from rotbench.run.spec import RunSpec
from rotbench.scoring.metrics import Rate

runner = CliRunner()


def test_trust_policy_follows_the_effective_configuration() -> None:
    by_set = selection_for(RunSpec(overrides=["trust.policy=false"]), {})
    by_flag = selection_for(RunSpec(trust_policy=False), {})
    default = selection_for(RunSpec(), {})
    assert (by_set.trust_policy, by_flag.trust_policy, default.trust_policy) == (
        False, False, True)
    assert by_set.config["trust.policy"] is False


def test_the_header_and_database_say_trust_policy_off(tmp_path: Path,
                                                      small_report: Report) -> None:
    selection = small_report.selection.model_copy(
        update={"trust_policy": selection_for(RunSpec(overrides=["trust.policy=false"]),
                                              {}).trust_policy})
    report = small_report.model_copy(update={"selection": selection})
    console = Console(record=True, width=200)
    render(report, console)
    assert "trust policy off" in console.export_text()
    write_run(tmp_path / "r.duckdb", report)
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        assert con.execute("SELECT trust_policy FROM runs").fetchone() == (False,)


class _FailingLive:
    def stats(self):
        failures = [CallFailure(stage="check", item=f"c{i} -> c{i + 1} (slot)", key="k" * 64,
                                kind="call", reason="APIStatusError: 500") for i in range(80)]
        return {"check": PerceptionStats(stage="check", stamp="s", failures=failures)}


def test_a_run_with_failed_calls_is_marked_degraded_everywhere(tmp_path: Path,
                                                               small_report: Report) -> None:
    reasons = ArmRuntime(arm="probe", live=_FailingLive()).degraded()
    assert reasons == ["80 checks left undecided after failed model calls"]
    assert ArmRuntime(arm="oracle").degraded() == []
    report = small_report.model_copy(update={"degraded": reasons})
    console = Console(record=True, width=200)
    render(report, console)
    assert "DEGRADED: 80 checks left undecided after failed model calls" in console.export_text()
    write_run(tmp_path / "r.duckdb", report)
    write_run(tmp_path / "r.duckdb", small_report.model_copy(update={"run_id": "clean"}))
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT id, degraded, degraded_reasons FROM runs ORDER BY id").fetchall()
    assert [(r[0], r[1], json.loads(r[2])) for r in rows] == [
        ("clean", False, []), (small_report.run_id, True, reasons)]


def test_strict_makes_a_degraded_run_exit_3(tmp_path: Path, small_report: Report,
                                            monkeypatch) -> None:
    import rotbench.cli.run as run_cmd

    degraded = small_report.model_copy(update={"degraded": ["3 checks left undecided after "
                                                            "failed model calls"]})

    def fake_flow(spec, server, started):
        from flows.rot_benchmark import RunOutcome

        return RunOutcome(reports=[degraded], report_paths=["r.json"])

    monkeypatch.setattr(run_cmd, "_run_flow", fake_flow)
    args = ["run", "--cache-dir", str(tmp_path / "c"), "--reports-dir", str(tmp_path / "r"),
            "--format", "json"]
    env = {"PREFECT_API_URL": "http://127.0.0.1:9/api"}
    lenient = runner.invoke(app, args, env=env)
    strict = runner.invoke(app, [*args, "--strict"], env=env)
    assert lenient.exit_code == 0 and strict.exit_code == 3
    assert (f"rotbench: warning: degraded run {degraded.run_id}: 3 checks left undecided"
            in strict.output)


def test_show_checks_the_stored_figures_against_the_probes(tmp_path: Path,
                                                           small_report: Report) -> None:
    true = small_report.metrics["current_first"]
    data = json.loads(small_report.model_dump_json())
    data["metrics"]["current_first"] = Rate.of(true.denominator,
                                               true.denominator).model_dump(mode="json")
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["show", str(path), "--format", "json"])
    assert result.exit_code == 0
    warning, body = result.stderr.strip(), result.stdout
    assert warning.startswith(f"rotbench: warning: {path}: the stored figures disagree with "
                              "the report's probes (metrics.current_first: stored "
                              f"{true.denominator}/{true.denominator}, probes give "
                              f"{true.numerator}/{true.denominator}")
    shown = json.loads(body)["metrics"]["current_first"]
    assert (shown["numerator"], shown["denominator"]) == (true.numerator, true.denominator)
    clean = write_report(small_report, tmp_path / "clean.json")
    assert "warning" not in runner.invoke(app, ["show", str(clean)]).output
