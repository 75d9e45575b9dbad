"""``rotbench show`` and ``rotbench rescore``: outputs, one-line errors, nothing written on error,
and no heavy import (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from rotbench.cli.rescore import rescore
from rotbench.cli.show import show
from rotbench.results import Report, load_report, write_report
from rotbench.testing.synthetic import synthetic_report

REPO = Path(__file__).resolve().parents[2]
app = typer.Typer()
app.command()(show)
app.command()(rescore)
runner = CliRunner()


def _listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_show(saved: Path, small_report: Report) -> None:
    result = runner.invoke(app, ["show", str(saved)])
    assert result.exit_code == 0, result.output
    assert "Currency" in result.stdout and small_report.run_id in result.stdout
    result = runner.invoke(app, ["show", str(saved), "--intervals"])
    assert result.exit_code == 0 and "–" in result.stdout
    result = runner.invoke(app, ["show", str(saved), "--format", "json"])
    data = json.loads(result.stdout)
    assert (
        "worlds" not in data
        and data["metrics"] == json.loads(small_report.model_dump_json())["metrics"]
    )
    result = runner.invoke(app, ["show", str(saved), "--format", "yaml"])
    assert result.exit_code == 2 and "unknown format 'yaml'" in result.stderr


@pytest.mark.slow
def test_rescore_writes_a_new_report_and_records_it(saved: Path, small_report: Report) -> None:
    before = saved.read_bytes()
    result = runner.invoke(app, ["rescore", str(saved), "--scorer", "v1"])
    assert result.exit_code == 0, result.stderr
    new = [p for p in saved.parent.glob("*.json") if p != saved]
    assert len(new) == 1 and new[0].name.startswith("synthetic-v2-rescore-v1-")
    assert saved.read_bytes() == before
    report = load_report(new[0])
    assert report.notes[0].startswith("Re-scored under scorer v1 from ")
    assert f"wrote {new[0]}" in result.stdout
    with duckdb.connect(str(saved.parent / "rotbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT id FROM runs").fetchall() == [(report.run_id,)]
    out = saved.parent / "explicit.json"
    result = runner.invoke(
        app, ["rescore", str(saved), "--out", str(out), "--db", str(out.with_suffix(".db"))]
    )
    assert result.exit_code == 0 and load_report(out).selection.scorer_version == "v3"
    assert out.with_suffix(".db").exists()


def _fails(args: list[str], code: int, needle: str, directory: Path) -> None:
    before = _listing(directory)
    result = runner.invoke(app, args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rotbench: error: ") and needle in lines[0]
    assert _listing(directory) == before  # nothing written


def test_rescore_errors(saved: Path, tmp_path: Path) -> None:
    d = saved.parent
    _fails(
        ["rescore", str(saved), "--scorer", "v9"], 2,
        "unknown scorer 'v9' (available: v1, v2, v3, v4, v5, v6)", d
    )
    cut = d / "cut.json"
    cut.write_text(saved.read_text()[:5000])
    _fails(["rescore", str(cut)], 1, f"{cut}: invalid JSON at line", d)
    no_text = write_report(
        synthetic_report((3,), scorer="v2", record_claim_text=False), d / "no-text.json"
    )
    _fails(["rescore", str(no_text)], 1, "no recorded claim text", d)
    _fails(["rescore", str(saved), "--out", str(saved)], 2, "refusing to overwrite the source", d)
    _fails(["rescore", str(d / "absent.json")], 1, "cannot read report", d)
    _fails(["show", str(cut)], 1, "invalid JSON", d)


@pytest.mark.subprocess
def test_rescore_through_the_entry_point_imports_nothing_heavy(saved: Path) -> None:
    """The real ``rotbench`` app in a fresh interpreter: no torch, prefect or
    sentence_transformers may be imported by ``rotbench rescore``."""
    code = (
        "import atexit, sys\n"
        "heavy = ('torch', 'prefect', 'sentence_transformers', 'transformers', 'anthropic')\n"
        "loaded = lambda: ','.join(m for m in heavy if m in sys.modules)\n"
        "atexit.register(lambda: print('HEAVY=' + loaded()))\n"
        "from rotbench.cli.main import app\n"
        "app()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code, "rescore", str(saved), "--scorer", "v1"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "HEAVY=\n" in result.stdout or result.stdout.rstrip().endswith("HEAVY=")
