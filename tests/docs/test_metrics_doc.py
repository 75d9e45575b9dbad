"""One source of truth for each metric, and docs that match the output.

``rotbench.scoring.definitions`` holds every metric's name, family, direction and meaning;
``docs/metrics.md`` carries the section it generates, the scoring code agrees with it, and
every metric name a default run prints is defined on the page.
"""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from rotbench.results import render
from rotbench.scoring.definitions import BY_NAME, DEFINITIONS, better_label, metrics_markdown
from rotbench.scoring.metrics import ALL_METRICS, CONTEXT_FIGURES, FAMILIES, HIGHER_IS_BETTER
from rotbench.scoring.models import HIT_CLASSES
from rotbench.testing.synthetic import synthetic_report

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def test_the_metrics_page_holds_the_generated_section_exactly() -> None:
    page = (DOCS / "metrics.md").read_text()
    assert metrics_markdown() in page


def test_the_scoring_code_reads_the_definitions() -> None:
    """The directions the scoring code uses are the rows' (one row per metric)."""
    assert set(ALL_METRICS) == set(BY_NAME)
    assert {m for m in ALL_METRICS if HIGHER_IS_BETTER[m]} == {
        "recall_current_at_k", "current_first", "control_recall_at_k", "members_recall_at_k",
        "successor_first"}
    assert CONTEXT_FIGURES == {"poison_surfaced_at_k": "poison_leak_at_k",
                               "redundancy_at_k": "current_lost"}
    assert {f: len(n) for f, n in FAMILIES.items()} == {
        "Currency": 2, "Supersession": 2, "Poison": 3, "Decoys": 2, "Loss": 2, "Abstention": 1,
        "Redundancy": 1, "Hard cases": 7, "Dependents": 4, "Resurrection": 2, "Isolation": 2}
    # generator 4's names are defined ahead of it, each with its direction
    assert {d.name: d.direction for d in DEFINITIONS if d.since == "generator 4"} == {
        "successor_first": "higher", "dependent_stale_first": "lower",
        "premise_stale_first": "lower", "cascade_asserted_at_k": "lower"}


def test_a_cut_of_a_context_figure_keeps_its_direction() -> None:
    """Item 6: poison_surfaced_at_k per channel read 'lower' in compare and the HTML page."""
    assert better_label("poison_surfaced_at_k (relay)") == "beside poison_leak_at_k"
    assert better_label("poison_leak_at_k (tool_turn)") == "lower"
    from rotbench.scoring.metrics import better_label as scoring_label

    assert scoring_label("poison_surfaced_at_k (source)") == "beside poison_leak_at_k"


def _headings(page: str) -> set[str]:
    return set(re.findall(r"^#### `(\w+)`$", page, flags=re.M))


def test_every_metric_and_class_a_default_run_prints_is_defined_on_the_page() -> None:
    report = synthetic_report((7,), scorer="v4", generator_version="3")
    console = Console(record=True, width=200, force_terminal=False)
    render(report, console)
    out = console.export_text()
    page = (DOCS / "metrics.md").read_text()
    printed = {m for m in ALL_METRICS if re.search(rf"\b{m}\b", out)}
    assert {"late_stale_first", "member_lost", "poison_surfaced_at_k"} <= printed
    assert printed - _headings(page) == set()
    for cls in HIT_CLASSES:  # premature, planned, corrected included
        assert re.search(rf"\| `{cls}` \|", page), cls
    assert "| `v3` (default) |" not in page and "`v6` (default" in page


def _example_figure_on_the_default() -> str:
    """The example engine's pooled current_first on the default generator, as the page
    writes it (tests/data/pinned_figures.json; "63.1% (123/195)" on generator 4)."""
    import json

    from rotbench.world.generators.base import DEFAULT_GENERATOR

    pinned = json.loads((ROOT / "tests" / "data" / "pinned_figures.json").read_text())
    n, d = pinned[f"generator {DEFAULT_GENERATOR}"]["newest-statement"]["current_first"]
    return f"{100 * n / d:.1f}% ({n}/{d})"


def test_the_stale_pages_named_in_the_issue_are_fixed() -> None:
    assert "being added" not in (DOCS / "index.md").read_text()
    assert "once it lands" not in (DOCS / "several-users.md").read_text()
    yours = " ".join((DOCS / "engines" / "your-engine.md").read_text().split())
    assert "scores perfectly" not in yours and _example_figure_on_the_default() in yours
    assert "Documents arrive in time order" not in yours and "arrival order" in yours.lower()
    text = (ROOT / "mkdocs.yml").read_text()
    entries = re.findall(r"^\s+- ([^:]+): (\S+\.md)$", text, flags=re.M)
    titles = [t for t, _ in entries]
    assert len(titles) == len(set(titles)), "a title listed twice"
    missing = [f for _, f in entries if not (DOCS / f).is_file()]
    assert missing == []
