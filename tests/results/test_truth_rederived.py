"""A report's truth is re-derived from its seed, days and generator. On
main a probe's ``truth`` edited in a world file (its digest re-written into the report, as
a careful forger does) passed every check: ``show``, ``compare`` (paired, though the
denominators differed), ``rescore`` and ``db`` took it. Now each refuses it in one line.

The report is one world of generator 4 over 30 days (seed 42), probed with an engine that
answers the latest turns, scored and recorded without a flow run (about 1 s)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.engines.host.guarded import GuardedEngine
from rotbench.pipeline.generate import generate
from rotbench.pipeline.probe_shared import probe_any
from rotbench.results.verify import verification_problems
from rotbench.run.record import record_run
from rotbench.run.spec import RunSpec
from rotbench.scoring.score import score_world

runner = CliRunner()


class Latest:
    name = "latest"
    version = "1"

    def __init__(self) -> None:
        self.turns: list[str] = []

    def deposit(self, document) -> None:
        self.turns.extend(t.text for t in document.turns)

    def query(self, question, k):
        from rotbench.contract.engine import Hit

        return [Hit(text=t) for t in reversed(self.turns[-k:])]


def _record(root: Path):
    spec = RunSpec(seeds=[42], days=30, generator="4", reports_dir=str(root / "reports"),
                   db_path=str(root / "made.duckdb"))
    world = generate(42, 30, "4")
    probes = score_world(probe_any(world, GuardedEngine(Latest(), 42, None), 10),
                         spec.scorer_version)
    report = record_run(spec, [probes], [], {}, [], {})
    [path] = (root / "reports").glob(f"{report.run_id}-*.json")
    return report, path


def _forge(report_path: Path, edit) -> None:
    """Apply ``edit`` to the world file's JSON, store it under its new digest and write that
    digest into the report."""
    data = json.loads(report_path.read_text())
    worlds = report_path.parent / "worlds"
    world = json.loads((worlds / f"{data['worlds'][0]['sha256']}.json").read_text())
    edit(world)
    raw = json.dumps(world, separators=(",", ":")).encode()
    sha = hashlib.sha256(raw).hexdigest()
    (worlds / f"{sha}.json").write_bytes(raw)
    data["worlds"][0]["sha256"] = sha
    report_path.write_text(json.dumps(data))


def _new_current(world: dict) -> None:
    """The first answerable probe's current value replaced by another of its pool."""
    probe = next(p for p in world["probes"] if p.get("truth"))
    pool = world["pools"][probe["attribute"]]
    probe["truth"]["current"] = next(v for v in pool if v != probe["truth"]["current"])


def _unanswerable(world: dict) -> None:
    """Every answerable probe of day 15 made unanswerable (the denominators move)."""
    for probe in world["probes"]:
        if probe["day"] == 15 and probe.get("truth"):
            probe["truth"] = probe["attribute"] = None


@pytest.fixture(scope="module")
def forged(tmp_path_factory):
    root = tmp_path_factory.mktemp("truth")
    clean, clean_path = _record(root / "clean")
    assert verification_problems(clean) == []
    _, path = _record(root / "value")
    _forge(path, _new_current)
    _, gone = _record(root / "gone")
    _forge(gone, _unanswerable)
    return clean_path, path, gone


def _error(result) -> str:
    return result.stderr.strip().splitlines()[-1]


def test_show_and_compare_refuse_a_forged_truth(forged) -> None:
    clean, path, gone = forged
    assert runner.invoke(app, ["show", str(clean)]).exit_code == 0
    shown = runner.invoke(app, ["show", str(path)])
    assert shown.exit_code == 1
    line = _error(shown)
    assert line.startswith(f"rotbench: error: {path}: its truth is not what seed 42, 30 days, "
                           "generator 4 give (day ")
    assert ": truth recorded {" in line and line.endswith(
        "): a world file was edited; its figures are not shown")
    compared = runner.invoke(app, ["compare", str(clean), str(gone)])
    assert compared.exit_code == 1
    assert _error(compared).startswith(f"rotbench: error: {gone}: its truth is not what seed "
                                       "42, 30 days, generator 4 give (day 15, ")


def test_rescore_and_db_refuse_a_forged_truth(forged, tmp_path) -> None:
    _, path, gone = forged
    rescored = runner.invoke(app, ["rescore", str(path), "--out", str(tmp_path / "r.json")])
    assert rescored.exit_code == 1
    assert "its truth is not what seed 42, 30 days, generator 4 give" in _error(rescored)
    assert _error(rescored).endswith("not rescored")
    db = tmp_path / "fresh.duckdb"
    imported = runner.invoke(app, ["db", "--reports-dir", str(gone.parent), "--db", str(db)])
    assert imported.exit_code == 1
    assert "does not verify, not imported: its truth is not what seed 42, 30 days, " \
           "generator 4 give (day 15, " in imported.stderr


def test_export_of_a_run_id_re_verifies_its_report(tmp_path) -> None:
    """``export RUN-ID`` read the database's rows and never looked at the
    report again; now its report of record beside the database is checked as ``show``
    checks it, and a truth forged after the import is refused."""
    root = tmp_path / "run"
    spec = RunSpec(seeds=[42], days=30, generator="4", reports_dir=str(root),
                   db_path=str(root / "r.duckdb"))
    world = generate(42, 30, "4")
    probes = score_world(probe_any(world, GuardedEngine(Latest(), 42, None), 10),
                         spec.scorer_version)
    report = record_run(spec, [probes], [], {}, [], {})
    [path] = root.glob(f"{report.run_id}-*.json")
    args = ["export", report.run_id, "--db", str(root / "r.duckdb")]
    assert runner.invoke(app, [*args, "--out", str(tmp_path / "a")]).exit_code == 0
    _forge(path, _new_current)
    refused = runner.invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert refused.exit_code == 1
    assert _error(refused).startswith(f"rotbench: error: {path}: its truth is not what seed "
                                      "42, 30 days, generator 4 give (day ")
    assert not (tmp_path / "b").exists()
