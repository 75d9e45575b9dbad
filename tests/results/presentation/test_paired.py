"""The paired comparison: exact McNemar p-values against a hand computation, the outcomes
per question adding up to each figure, and on one seed a fault the paired test marks and
Newcombe's interval does not."""

from __future__ import annotations

import sys
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from rotbench.results.build import build_report
from rotbench.results.presentation.compare import (
    compare_reports,
    comparison_markdown,
    newcombe_difference,
)
from rotbench.results.schema import StageRecord
from rotbench.scoring import compute_metrics
from rotbench.scoring.paired import mcnemar_exact, pair, question_outcomes
from rotbench.testing.synthetic import synthetic_selection, synthetic_world_probes

# (in the first's numerator only, in the other's only, p by hand: 2 * P(X <= min) for
# X ~ Binomial(b + c, 1/2), capped at 1)
HAND = [
    (0, 0, Fraction(1)),
    (5, 0, Fraction(2, 32)),  # 2 * 1/2^5
    (0, 6, Fraction(2, 64)),  # 2 * 1/2^6
    (7, 1, Fraction(2 * (1 + 8), 256)),  # 2 * (C(8,0) + C(8,1)) / 2^8 = 0.0703125
    (2, 10, Fraction(2 * (1 + 12 + 66), 4096)),  # 0.03857421875
    (3, 3, Fraction(1)),  # 2 * 42/64 > 1: capped
    (11, 0, Fraction(2, 2048)),
]


@pytest.mark.parametrize(("b", "c", "expected"), HAND)
def test_mcnemar_equals_the_hand_computation(b: int, c: int, expected: Fraction) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(float(expected), rel=1e-12)
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_pair_on_fixed_outcomes() -> None:
    """Twelve questions: 2 in both numerators, 7 only in the first's, 1 only in the other's,
    2 in neither; p = 2 * (C(8,0) + C(8,1)) / 2^8."""
    first = {(42, None, d, "a", "q"): v for d, v in enumerate([1, 1] + [1] * 7 + [0] + [0, 0])}
    other = {(42, None, d, "a", "q"): v for d, v in enumerate([1, 1] + [0] * 7 + [1] + [0, 0])}
    got = pair(first, other)
    assert got is not None
    assert (got.both, got.first_only, got.other_only, got.neither) == (2, 7, 1, 2)
    assert got.p_value == float(Fraction(18, 256)) == 0.0703125
    assert sum(comb(8, i) for i in range(2)) == 9
    # different questions in the two denominators: not pairable
    assert pair(first, dict(list(other.items())[:-1])) is None


def test_outcomes_add_up_to_every_figure() -> None:
    worlds = [synthetic_world_probes(s) for s in (42, 43)]
    from rotbench.scoring import score_world

    scored = [score_world(w, "v5") for w in worlds]
    outcomes = question_outcomes(scored)
    bundle = compute_metrics(scored)
    for metric, rate in bundle.metrics.items():
        if metric == "redundancy_at_k":
            assert metric not in outcomes  # counts hits, not questions
            continue
        got = outcomes.get(metric, {})
        assert (sum(got.values()), len(got)) == (rate.numerator, rate.denominator), metric


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "faults"))


def _report(engine_factory, name: str, tmp_path: Path):
    from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
    from rotbench.pipeline.probe import probe_world
    from rotbench.world import generate_world

    embedder = Embedder(tmp_path / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
    world = generate_world(42, generator="3")
    probed = probe_world(world, engine_factory(world, embedder), 10)
    return build_report(
        run_id=f"run-{name}", worlds=[probed], notes=[], timings={},
        selection=synthetic_selection([42], "v5", generator_version="3", engine=name),
        stages=[StageRecord(seed=42, stage="probe", cached=False, seconds=0.0)])


def test_on_one_seed_the_paired_test_marks_a_fault_newcombe_does_not(tmp_path) -> None:
    """Seed 42: the fault that supersedes by arrival order (a late document's old value
    displaces the current one) loses 8 of 45 values against the correct engine's 2. As
    independent proportions (Newcombe) that is no significant difference; question by
    question the 6 extra losses are all on the fault's side (6 vs 0 discordant, p = 2/64),
    so the paired test marks it."""
    from faulty_engines_v3 import ArrivalOrder, EventTimeEngine

    correct = _report(EventTimeEngine, "correct", tmp_path)
    fault = _report(ArrivalOrder, "fault", tmp_path)
    row = next(r for f in compare_reports([correct, fault]).families for r in f.rows
               if r.metric == "current_lost")
    first, cell = row.cells
    assert (first.rate.numerator, first.rate.denominator) == (2, 45)
    assert (cell.rate.numerator, cell.rate.denominator) == (8, 45)
    assert cell.difference.test == "mcnemar" and cell.difference.significant
    p = cell.difference.paired
    assert (p.first_only, p.other_only, p.both, p.neither) == (0, 6, 2, 37)
    assert p.p_value == 0.03125
    newcombe = newcombe_difference(first.rate, cell.rate)
    assert newcombe is not None and not newcombe.significant
    md = comparison_markdown(compare_reports([correct, fault]))
    assert "| current_lost | 4.4% (2/45) | 17.8% (8/45) * | lower |" in md
    assert "exact McNemar" in md


@pytest.fixture(scope="module")
def gate_files(tmp_path_factory):
    from faulty_engines_v3 import EventTimeEngine
    from faulty_engines_v5 import MostSimilarRetired

    from rotbench.results import write_report

    root = tmp_path_factory.mktemp("gate")
    correct = _report(EventTimeEngine, "correct", root)
    fault = _report(MostSimilarRetired, "fault", root)
    files = {"correct": write_report(correct, root / "correct.json"),
             "fault": write_report(fault, root / "fault.json"),
             "probe-arm": write_report(fault.model_copy(update={"selection": fault.selection.
                                       model_copy(update={"arm": "probe"})}),
                                       root / "probe.json")}
    damaged = root / "damaged.json"
    damaged.write_text(files["fault"].read_text()[:500])
    files["damaged"] = damaged
    return files


def _gate(*paths):
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    return CliRunner().invoke(app, ["compare", *map(str, paths), "--fail-if-worse",
                                    "--format", "json"])


def test_gate_passes_a_report_against_itself(gate_files) -> None:
    got = _gate(gate_files["correct"], gate_files["correct"])
    assert got.exit_code == 0, got.output
    assert got.stderr.splitlines()[-1] == (
        "rotbench: compare: no figure significantly worse than the baseline in 1 later "
        "report(s)")


def test_gate_fails_a_worse_report_naming_each_figure(gate_files) -> None:
    got = _gate(gate_files["correct"], gate_files["fault"])
    assert got.exit_code == 1, got.output
    lines = [line for line in got.stderr.splitlines() if line.startswith("worse: ")]
    assert [line.split(" (")[0] for line in lines] == ["worse: recall_current_at_k",
                                                        "worse: current_lost"]
    assert lines[1] == (
        "worse: current_lost (lower is better): correct 2/45 -> fault 10/45 (exact McNemar, "
        "paired: 0 questions only in the baseline's numerator, 8 only in this one's, "
        "p=0.00781)")
    # the other way round nothing is worse
    assert _gate(gate_files["fault"], gate_files["correct"]).exit_code == 0


@pytest.mark.parametrize(("which", "message"), [
    ("probe-arm", "ran arm probe, the baseline"),
    ("damaged", "damaged.json"),
])
def test_gate_refuses_unusable_input_in_one_line(gate_files, which, message) -> None:
    got = _gate(gate_files["correct"], gate_files[which])
    assert got.exit_code == 2, got.output
    errors = [line for line in got.stderr.splitlines() if line.startswith("rotbench: error:")]
    assert len(errors) == 1 and message in errors[0], got.stderr
    assert "Traceback" not in got.output


def test_gate_refuses_a_report_before_v5(gate_files, tmp_path) -> None:
    from rotbench.results import write_report
    from rotbench.results.files.report import load_report
    from rotbench.results.rescore import rescore_report

    source = gate_files["fault"]
    old = write_report(rescore_report(load_report(source), "v4", source), tmp_path / "v4.json")
    got = _gate(gate_files["correct"], old)
    assert got.exit_code == 2
    assert got.stderr.strip().splitlines()[-1] == (
        f"rotbench: error: {old} was scored under scorer v4, before v5: rescore it first "
        f"(rotbench rescore {old} --scorer v5)")
    # without the gate the comparison still runs
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    assert CliRunner().invoke(app, ["compare", str(gate_files["correct"]), str(old)]
                              ).exit_code == 0


def test_json_carries_each_test_and_its_discordant_counts(gate_files) -> None:
    import json

    from typer.testing import CliRunner

    from rotbench.cli.main import app

    got = CliRunner().invoke(app, ["compare", str(gate_files["correct"]),
                                   str(gate_files["fault"]), "--format", "json"])
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    rows = {r["metric"]: r for f in data["families"] for r in f["rows"]}
    lost = rows["current_lost"]["cells"][1]["difference"]
    assert lost["test"] == "mcnemar" and lost["significant"] is True
    assert lost["paired"] == {"first_only": 0, "other_only": 8, "both": 2, "neither": 35,
                              "p_value": 0.0078125}
    redundancy = rows["redundancy_at_k"]["cells"][1]["difference"]
    assert redundancy["test"] == "newcombe" and redundancy["paired"] is None
    assert set(data["tests"]) == {"mcnemar", "newcombe"}
    assert [r for r in rows if r.startswith("miss: ")] == [
        "miss: never_seen", "miss: lost", "miss: outranked", "miss: abstained",
        "miss: retraction: kept", "miss: retraction: outranked"]
    kept = rows["miss: retraction: kept"]["cells"]  # the 4 retracted questions, paired
    assert [(c["rate"]["numerator"], c["rate"]["denominator"]) for c in kept] == [(0, 4),
                                                                                  (0, 4)]
    assert kept[1]["difference"]["paired"] == {"first_only": 0, "other_only": 0, "both": 0,
                                               "neither": 4, "p_value": 1.0}


def test_gate_refuses_a_run_id_it_cannot_resolve_with_exit_2(gate_files, tmp_path) -> None:
    """A run id the gate cannot resolve (unknown, or its report of record gone) exited 1,
    the gate's "worse"; unusable input exits 2."""
    import json

    from typer.testing import CliRunner

    from rotbench.cli.main import app

    run_id = json.loads(gate_files["correct"].read_text())["run_id"]
    of_record = tmp_path / f"{run_id}-correct.json"
    of_record.write_bytes(gate_files["correct"].read_bytes())
    db = tmp_path / "rotbench.duckdb"
    assert CliRunner().invoke(app, ["db", "--reports-dir", str(tmp_path)]).exit_code == 0
    unknown = "rot-20260101-000000-abcdef"
    got = _gate(gate_files["correct"], unknown, "--db", str(db))
    errors = [line for line in got.stderr.splitlines() if line.startswith("rotbench: error:")]
    assert (got.exit_code, len(errors)) == (2, 1), got.output
    assert errors[0].startswith(f"rotbench: error: {unknown}: neither a report file nor a run "
                                f"id in {db}")
    of_record.unlink()
    got = _gate(gate_files["correct"], run_id, "--db", str(db))
    assert got.exit_code == 2, got.output
    assert f"run {run_id} is in {db} but its report of record is not in" in got.stderr


def _errors(got) -> list[str]:
    return [line for line in got.stderr.splitlines() if line.startswith("rotbench: error:")]


def test_gate_on_chosen_metrics_only(gate_files) -> None:
    """``--metric``: only the named figures are judged; current_lost, worse, is not one."""
    got = _gate(gate_files["correct"], gate_files["fault"], "--metric", "current_first",
                "--metric", "stale_over_current")
    assert got.exit_code == 0, got.output
    assert got.stderr.splitlines()[-1] == (
        "rotbench: compare: no figure significantly worse than the baseline in 1 later "
        "report(s)")
    got = _gate(gate_files["correct"], gate_files["fault"], "--metric", "current_lost")
    assert got.exit_code == 1
    assert [line.split(" (")[0] for line in got.stderr.splitlines()
            if line.startswith("worse: ")] == ["worse: current_lost"]


def test_gate_accepts_an_allowed_trade_off_and_says_so(gate_files) -> None:
    got = _gate(gate_files["correct"], gate_files["fault"], "--allow", "current_lost",
                "--allow", "recall_current_at_k")
    assert got.exit_code == 0, got.output
    lines = got.stderr.splitlines()
    assert [line.split(" (")[0] for line in lines if line.startswith("allowed: ")] == [
        "allowed: recall_current_at_k", "allowed: current_lost"]
    assert lines[-1] == ("rotbench: compare: no figure significantly worse than the baseline "
                         "in 1 later report(s) (2 allowed trade-off(s) worse)")
    # one allowed, one not: still worse
    assert _gate(gate_files["correct"], gate_files["fault"], "--allow", "current_lost"
                 ).exit_code == 1


def test_gate_file_names_metrics_and_trade_offs(gate_files, tmp_path, monkeypatch) -> None:
    """``--gate-file``, and ``rotbench-gate.toml`` found in the working folder."""
    (tmp_path / "rotbench-gate.toml").write_text(
        '# the gate of my engine\nallow = ["current_lost", "recall_current_at_k"]\n')
    monkeypatch.chdir(tmp_path)
    got = _gate(gate_files["correct"], gate_files["fault"])
    assert got.exit_code == 0, got.output
    assert "rotbench: compare: gate file rotbench-gate.toml" in got.stderr.splitlines()
    other = tmp_path / "strict.toml"
    other.write_text('metrics = ["current_lost"]\n')
    assert _gate(gate_files["correct"], gate_files["fault"], "--gate-file", str(other)
                 ).exit_code == 1
    # flags win over the file
    assert _gate(gate_files["correct"], gate_files["fault"], "--metric", "current_first"
                 ).exit_code == 0


@pytest.mark.parametrize(("body", "args", "message"), [
    (None, ["--metric", "current_frist"], "--metric: 'current_frist' is not a metric the gate "
     "judges (one with a better direction); did you mean 'current_first'?"),
    (None, ["--allow", "redundancy_at_k"], "--allow: 'redundancy_at_k' is not a metric the "
     "gate judges (one with a better direction)"),
    (None, ["--metric", "current_lost", "--allow", "current_lost"], "--allow: 'current_lost' "
     "is both judged (--metric) and allowed to be worse; name it in one of them"),
    ('metrics = "current_first"\n', [], "gate.toml: line 1: field metrics: Input should be a "
     "valid tuple (a gate file holds metrics = [...] and allow = [...], lists of metric "
     "names)"),
    ('allow = [\n', [], "gate.toml: not TOML"),
    ('[gate]\nallow = []\n', [], "gate.toml: line 1: field gate: Extra inputs are not "
     "permitted"),
])
def test_gate_refuses_a_bad_policy_in_one_line_with_exit_2(gate_files, tmp_path, body, args,
                                                          message, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    if body is not None:
        (tmp_path / "gate.toml").write_text(body)
        args = [*args, "--gate-file", "gate.toml"]
    got = _gate(gate_files["correct"], gate_files["fault"], *args)
    assert got.exit_code == 2, got.output
    errors = _errors(got)
    assert len(errors) == 1 and errors[0].startswith(f"rotbench: error: {message}"), errors


def test_the_verdict_comes_before_the_tables_or_alone_with_quiet(gate_files) -> None:
    from typer.testing import CliRunner

    from rotbench.cli.main import app

    got = CliRunner().invoke(app, ["compare", str(gate_files["correct"]),
                                   str(gate_files["fault"]), "--fail-if-worse"])
    assert got.exit_code == 1
    output = got.output  # stdout and stderr as the terminal shows them, in order
    assert output.index("worse: recall_current_at_k") < output.index("current_first")
    quiet = CliRunner().invoke(app, ["compare", str(gate_files["correct"]),
                                     str(gate_files["fault"]), "--fail-if-worse", "--quiet"])
    assert quiet.exit_code == 1 and quiet.stdout == ""
    assert quiet.stderr.splitlines()[-1] == (
        "rotbench: compare: 2 figure(s) significantly worse than the baseline")
    alone = CliRunner().invoke(app, ["compare", str(gate_files["correct"]),
                                     str(gate_files["fault"]), "--quiet"])
    assert (alone.exit_code, _errors(alone)) == (2, [
        "rotbench: error: --quiet applies to the gate: add --fail-if-worse"])
