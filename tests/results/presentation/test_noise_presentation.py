"""show, compare and the HTML page on a noisy-arm report: injected errors per kind and the
perception/engine split; nothing added for a report of another arm."""

from __future__ import annotations

from rich.console import Console

from rotbench.results import Report, render
from rotbench.results.presentation.compare import compare_reports
from rotbench.results.presentation.noise import noise_section, split

NOISE = {"omission": {"injected": 31, "opportunities": 48},
         "check_error": {"injected": 5, "opportunities": 17},
         "subject_split": {"injected": 4, "opportunities": 40, "question_injected": 2,
                           "question_opportunities": 23},
         "intact": {"numerator": 126, "denominator": 237}}
STAGES = {"perception": 30, "never_seen": 4, "lost": 0, "outranked": 2, "abstained": 0}


def noisy(report: Report) -> Report:
    sel = report.selection.model_copy(update={"arm": "noisy", "noise": "typical",
                                              "noise_digest": "40419ef6a02d" + "0" * 52})
    return report.model_copy(update={"selection": sel, "perception_noise": NOISE,
                                     "miss_stages": STAGES})


def _text(report: Report) -> str:
    console = Console(record=True, width=120, force_terminal=False)
    render(report, console)
    return console.export_text()


def test_show_names_the_profile_counts_and_split(small_report: Report) -> None:
    out = _text(noisy(small_report))
    assert "Noisy arm: profile typical, sha256 40419ef6a02d" in out
    assert "64.6% (31/48)" in out and "29.4% (5/17)" in out
    line = next(x for x in out.splitlines() if "subject_split" in x)
    assert "10% (4/40)" in line and "2 / 23" in line
    assert "of which in questions" in out
    assert [x for x in out.splitlines() if "intact" in x] == ["intact paths: 126/237"]
    assert "Wrong first answers: 36; perception 30, engine's own rules 6" in out
    assert split(noisy(small_report)) == (30, 6)
    assert "Perception noise" not in _text(small_report)


def test_compare_adds_a_noise_family_only_with_a_noisy_report(small_report: Report) -> None:
    both = compare_reports([small_report, noisy(small_report)], force=True)
    family = next(f for f in both.families if f.name.startswith("Perception noise"))
    assert [r.metric for r in family.rows] == ["noise: omission", "noise: check_error",
                                               "noise: subject_split", "noise: intact paths"]
    assert (family.rows[-1].cells[1].rate.numerator,
            family.rows[-1].cells[1].rate.denominator) == (126, 237)
    assert family.rows[0].cells[0].rate is None
    assert (family.rows[0].cells[1].rate.numerator,
            family.rows[0].cells[1].rate.denominator) == (31, 48)
    plain = compare_reports([small_report, small_report], force=True)
    assert not any(f.name.startswith("Perception noise") for f in plain.families)


def test_html_section(small_report: Report) -> None:
    page = noise_section([small_report, noisy(small_report)], ["oracle", "noisy"])
    assert "<td>typical, sha256 40419ef6a02d</td>" in page
    assert "<td class=n>31 / 48</td>" in page
    assert "<td class=n>4 / 40 (questions 2 / 23)</td>" in page
    assert "<tr><td>intact paths (currency questions)</td><td class=n>n/a</td>" \
           "<td class=n>126 / 237</td></tr>" in page
    assert "<code>intact</code>" not in page
    assert "<tr><td>wrong first answers: perception</td><td class=n>n/a</td>" \
           "<td class=n>30</td></tr>" in page
    assert noise_section([small_report], ["oracle"]) == ""


def _family_block(text: str, title: str) -> list[str]:
    """The lines of the table titled ``title`` in rendered ``text`` (to the next blank)."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if title in x)
    block = []
    for x in lines[start + 1:]:
        if not x.strip():
            break
        block.append(x)
    return block


def test_injected_noise_has_no_better_column_anywhere(small_report: Report) -> None:
    """Injected noise is an input: compare (terminal, markdown, JSON), the several-engine
    table, the HTML page and show print it with no better direction and no difference."""
    from rotbench.results.presentation.compare import comparison_markdown, render_comparison
    from rotbench.results.presentation.html import render_html
    from rotbench.results.presentation.several import render_several

    title = "Perception noise injected (noisy arm)"
    both = compare_reports([small_report, noisy(small_report)], force=True)
    family = next(f for f in both.families if f.name == title)
    assert not family.directed and {r.better for r in family.rows} == {"input"}
    assert all(c.difference is None for r in family.rows for c in r.cells)
    for draw in (render_comparison, render_several):
        console = Console(record=True, width=160, force_terminal=False)
        draw(both, console)
        text = console.export_text()
        block = _family_block(text, title)
        head = next(x for x in block if "metric" in x)
        assert "better" not in head, draw.__name__
        line = next(x for x in block if "noise: omission" in x)
        assert [w for w in line.split() if w != "│"] == [
            "noise:", "omission", "n/a", "64.6%", "(31/48)"], line
        assert "better" in text  # the engines' figures keep theirs
    md = comparison_markdown(both).split(f"### {title}")[1].split("###")[0]
    assert "| metric | " in md and "better" not in md
    assert "| noise: omission | n/a | 64.6% (31/48) |\n" in md
    page = render_html([small_report, noisy(small_report)], [], force=True)
    tables = [t for t in page.split("<h3>")[1:] if t.startswith(title)]
    assert tables and all("<th>better</th>" not in t and "lower" not in t for t in tables)
    assert "<th>better</th>" in page  # the engines' figures keep theirs
    out = _text(noisy(small_report))
    assert "better" not in "\n".join(_family_block(out, "Perception noise"))


def test_the_gate_refuses_pairing_two_noise_profiles(small_report: Report) -> None:
    """A 'typical' and a 'good' noisy report were paired question by question as
    if the perception were the same (exit 0, no note); now the gate refuses in one line
    (``compare`` exits 2 on a GateError). The same profile passes."""
    import pytest

    from rotbench.results.presentation.gate import GateError, check_gate_input

    typical = noisy(small_report)
    typical = typical.model_copy(update={"selection": typical.selection.model_copy(
        update={"scorer_version": "v5"})})
    good = typical.model_copy(update={"selection": typical.selection.model_copy(
        update={"noise": "good", "noise_digest": "9f" * 32})})
    check_gate_input([typical, typical], ["a.json", "b.json"])
    with pytest.raises(GateError) as refused:
        check_gate_input([typical, good], ["a.json", "b.json"])
    assert str(refused.value) == (
        "b.json perceived through noise profile 'good' (digest 9f9f9f9f9f9f...), the baseline "
        "a.json through 'typical' (digest 40419ef6a02d...): the gate pairs questions only "
        "under one perception (run both with the same --noise)")
