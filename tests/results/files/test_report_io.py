"""load_report turns every bad file into one line naming the file and the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rotbench.results import ReportError, load_report


def _error(path: Path) -> str:
    with pytest.raises(ReportError) as err:
        load_report(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    return message


def test_truncated_file_names_line_and_column(saved: Path) -> None:
    text = saved.read_text()
    cut = saved.with_name("cut.json")
    cut.write_text(text[: len(text) // 2])
    message = _error(cut)
    line = text[: len(text) // 2].count("\n") + 1
    assert f"invalid JSON at line {line}, column" in message
    assert "truncated" in message


def test_invalid_field_names_the_field(saved: Path) -> None:
    data = json.loads(saved.read_text())
    data["embedded_worlds"][0]["probes"][3]["hits"][2]["rank"] = "first"
    bad = saved.with_name("bad.json")
    bad.write_text(json.dumps(data))
    assert ("field embedded_worlds[0].probes[3].hits[2].rank: Input should be a valid "
            "integer") in _error(bad)


def test_missing_field_and_other_shapes(tmp_path: Path, saved: Path) -> None:
    data = json.loads(saved.read_text())
    del data["selection"]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(data))
    assert "field selection: Field required" in _error(missing)
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]")
    assert "not a report (top level is list)" in _error(listing)
    empty = tmp_path / "empty.json"
    empty.write_text("")
    assert "invalid JSON at line 1, column 1" in _error(empty)
    assert "cannot read report" in _error(tmp_path / "absent.json")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    assert "UTF-16 text; rotbench reads UTF-8 JSON only" in _error(binary)
    binary.write_bytes(b"\xff\x00")
    assert "line 1: not UTF-8" in _error(binary)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["metrics"].pop("current_first"), "metrics is missing current_first"),
        (lambda d: d["metrics"]["current_first"].update(value=0.5), "value 0.5 does not match"),
        (lambda d: d["metrics"]["current_first"].update(value=float("nan")),
             "NaN and Infinity are not JSON numbers"),
        (lambda d: d["metrics"]["current_first"].update(low=0.99), "low 0.99 does not match"),
        (lambda d: d["selection"].update(top_k=-1), "field selection.top_k"),
        (lambda d: d["selection"].update(seeds=[]), "field selection.seeds"),
        # a break pass found these shown without a word ("seeds 42, -4 days")
        (lambda d: d["selection"].update(days=-4),
         "field selection.days: Input should be greater than or equal to 1"),
        (lambda d: d["selection"].update(checkpoints=[15, 900]),
         "field selection: checkpoint day 900 is outside the run's 1-90 days"),
    ],
)
def test_self_contradicting_reports_are_refused(saved: Path, edit, expected) -> None:
    data = json.loads(saved.read_text())
    edit(data)
    bad = saved.with_name("edited.json")
    bad.write_text(json.dumps(data))
    assert expected in _error(bad)


def test_a_nan_is_placed_on_its_own_line(saved: Path) -> None:
    """A fresh user's trial: a NaN on line 44 of an indented report was said to be on
    line 1. A "NaN" inside a string is text, not the number."""
    data = json.loads(saved.read_text())
    data["notes"] = ["a note that says NaN and Infinity"]
    data["metrics"]["current_first"]["value"] = float("nan")
    text = json.dumps(data, indent=1)
    bad = saved.with_name("nan.json")
    bad.write_text(text)
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if t.strip().endswith(("NaN", "NaN,")))
    assert line > 1
    assert _error(bad).endswith(f"nan.json: line {line}: NaN and Infinity are not JSON numbers")
