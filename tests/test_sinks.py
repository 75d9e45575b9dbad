"""One escaping rule per sink (rotbench._util.sinks), the same hostile corpus
against every sink, and the three places the break pass found raw text: a model name in
``--estimate``, CSV export, ``compare --format markdown``."""

from __future__ import annotations

import csv
import json
import unicodedata

import pytest
from typer.testing import CliRunner

from rotbench._util import sinks
from rotbench.cli.main import app
from rotbench.testing.synthetic import synthetic_report

runner = CliRunner()

HOSTILE = [
    "\x1b]0;pwned\x07window title",           # OSC: retitles the terminal
    "\x1b[2J\x1b[Hclear screen",              # CSI: clears it
    "\x9b2J8-bit CSI",                        # C1 CSI on its own
    "\x85next line\x8dreverse line feed",     # C1 NEL, RI
    "NUL\x00 BEL\x07 DEL\x7f BS\x08",          # C0 and DEL
    "abc\u202egnp.exe",                       # right-to-left override
    "\u2066isolate\u2069 \u200fmark\u200e \u061carabic mark",
    "zero\u200bwidth\ufeffBOM",
    "line\u2028separator\u2029paragraph",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click me](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "a | b | c",
    "`code` **bold**",
    "=HYPERLINK(\"http://x\",\"y\")",
    "+1+1", "-2", "@SUM(A1)", "\t=tab lead", "\r=cr lead",
    "\"quoted\" 'single' & amp",
    "plain text, fine",
]
"""The one hostile corpus every sink is tested with."""

LINK_OR_TAG = ("<script", "<img", "](javascript:", "<javascript:")


def _unsafe(text: str, keep: str = "") -> list[str]:
    return [ch for ch in text if ch not in keep
            and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_sink(text: str) -> None:
    for out in (sinks.terminal(text), sinks.terminal(text, None)):
        assert _unsafe(out) == [] and "\n" not in out
    assert _unsafe(sinks.terminal_lines(text + "\nsecond")) == ["\n"]


@pytest.mark.parametrize("text", HOSTILE)
def test_csv_sink(text: str) -> None:
    out = sinks.csv_cell(text)
    assert _unsafe(out, keep="\t\n\r") == []
    assert not out.startswith(sinks.FORMULA_LEADS)


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_sink(text: str) -> None:
    out = sinks.markdown(text, None)
    assert _unsafe(out) == [] and "\n" not in out
    assert "<" not in out and ">" not in out
    # every [ ( | ` ! is escaped: no link, image, code span or table cell can open
    for i, ch in enumerate(out):
        if ch in "[]()|`!*":
            assert out[i - 1] == "\\", (text, out)


@pytest.mark.parametrize("text", HOSTILE)
def test_html_sink(text: str) -> None:
    from rotbench.results.presentation import html, html_tools

    # the report page and its comparison tools write outside text through the one rule
    for out in (sinks.html_text(text, None), html.esc(text), html.esc_text(text),
                html_tools.esc(text)):
        assert _unsafe(out) == [] and not any(c in out for c in "<>"), out
    assert not any(c in sinks.html_text(text) for c in "\"'")


def test_the_rule_names_exact_escapes() -> None:
    assert sinks.terminal("a\x9bb\u202ec") == "a\\x9bb\\u202ec"
    assert sinks.csv_cell("=1+1") == "'=1+1"
    assert sinks.csv_cell("a\x85b\u202ec") == "a\\x85b\\u202ec"
    assert sinks.csv_cell(None) is None
    assert sinks.markdown("[x](javascript:alert(1))") == "\\[x\\]\\(javascript:alert\\(1\\)\\)"
    assert sinks.markdown("<b>current_first</b>") == "&lt;b&gt;current_first&lt;/b&gt;"
    assert sinks.html_text("<a href='x'>") == "&lt;a href=&#x27;x&#x27;&gt;"


def test_estimate_escapes_a_model_name_from_the_settings_file(tmp_path) -> None:
    settings = tmp_path / "llm.json"
    model = "\x1b]0;pwned\x07\x1b[2Jevil\x9b2J\u202emodel"
    settings.write_text(json.dumps({"check_model": model, "extract_model": model}))
    result = runner.invoke(app, ["run", "--arm", "probe", "--seed", "42", "--days", "30",
                                 "--llm-settings", str(settings), "--estimate",
                                 "--reports-dir", str(tmp_path / "r"),
                                 "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "\\x1b]0;pwned\\x07\\x1b[2Jevil\\x9b2J\\u202emodel" in result.stdout
    assert _unsafe(result.output, keep="\n") == []


def _hostile_report(run_id: str, engine: str):
    report = synthetic_report((7,), scorer="v2")
    selection = report.selection.model_copy(update={"engine": engine})
    return report.model_copy(update={"run_id": run_id, "selection": selection})


def test_csv_export_escapes_c1_and_bidi_controls(tmp_path) -> None:
    from rotbench.results import write_report

    engine = "=cmd|' /C calc'!A0\x85\u202eevil\x9b"
    path = write_report(_hostile_report("run-csv", engine), tmp_path / "run-csv.json")
    result = runner.invoke(app, ["export", str(path), "--out", str(tmp_path / "out"),
                                 "--db", str(tmp_path / "db.duckdb")])
    assert result.exit_code == 0, result.output
    for name in ("probes.csv", "hits.csv", "metrics.csv"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert _unsafe(text, keep="\n\r\t") == [], name
        for row in csv.reader(text.splitlines()):
            assert not any(cell.startswith(sinks.FORMULA_LEADS) for cell in row)


def test_compare_markdown_passes_no_tag_or_link_from_engine_names(tmp_path) -> None:
    from rotbench.results import write_report

    a = write_report(_hostile_report("run-a", "<script>alert(1)</script>"),
                     tmp_path / "a.json")
    b = write_report(_hostile_report("run-b", "[docs](javascript:alert(1))\u202e"),
                     tmp_path / "b.json")
    result = runner.invoke(app, ["compare", str(a), str(b), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    md = result.stdout
    assert "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in md
    # the escape's own backslash is escaped too: the page shows \u202e
    assert "\\[docs\\]\\(javascript:alert\\(1\\)\\)\\\\u202e" in md
    assert not any(bad in md for bad in LINK_OR_TAG)
    assert _unsafe(md, keep="\n") == []
