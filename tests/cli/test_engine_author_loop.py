"""The engine author's loop at the command line: run ids wherever a report is taken,
``rotbench db`` beside an HTML page, and what the first screen says."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from rotbench.cli.main import app
from rotbench.results import Report, write_report

runner = CliRunner()


def test_db_skips_the_manifest_of_an_html_page_and_other_json_with_a_note(
        tmp_path: Path, small_report: Report) -> None:
    reports = tmp_path / "reports"
    write_report(small_report, reports / f"{small_report.run_id}-reference.json")
    page = runner.invoke(app, ["report", str(reports / f"{small_report.run_id}-reference.json"),
                               "--html", str(reports / "page.html")])
    assert page.exit_code == 0, page.output
    assert (reports / ".rotbench-files.json").is_file()
    (reports / "settings.json").write_text(json.dumps({"models": {}}))
    result = runner.invoke(app, ["db", "--reports-dir", str(reports)])
    assert result.exit_code == 0, result.output
    assert f"imported {small_report.run_id}" in result.output
    assert "note: skipped .rotbench-files.json: a hidden file" in result.output
    assert "note: skipped settings.json: JSON that is not a rotbench report" in result.output
    assert "1 runs imported" in result.output and "0 files not imported" in result.output


def test_estimate_prints_dollars_out_of_the_box_with_the_prices_source(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--arm", "live", "--estimate", "--seed", "42",
                                 "--cache-dir", str(tmp_path / "c"), "--reports-dir",
                                 str(tmp_path / "r")], env={"ROTBENCH_LLM_SETTINGS": ""})
    assert result.exit_code == 0, result.output
    assert "dollars unknown" not in result.output and "unpriced" not in result.output
    assert re.search(r"total\s+\d+ calls, US\$\d+\.\d\d standard", result.output)
    assert ("claude-sonnet-4-6 US$3/US$15 per million tokens in/out (list price of "
            "2026-12-01)") in result.output
    assert "source https://platform.claude.com/docs/en/about-claude/pricing" in result.output
