"""Several engines in one run read as one table per family, within the
console's width, with long versions shortened in the headers and given whole below."""

from __future__ import annotations

import pytest
from rich.console import Console

from rotbench.results import Report
from rotbench.results.presentation.compare import compare_reports
from rotbench.results.presentation.several import render_several, short_version
from rotbench.testing.synthetic import synthetic_report

PEERS = [("reference", "0.4.0"), ("graphiti", "1.0.0+graphiti-core-0.31.2"),
         ("mem0-raw", "1.0.0+mem0ai-2.2.1"), ("benchd:echo", "1.0.0+benchd-harness-0.2.0/echo")]


@pytest.fixture(scope="module")
def four() -> list[Report]:
    base = synthetic_report((7,), scorer="v4", generator_version="3")
    out = []
    for i, (engine, version) in enumerate(PEERS):
        selection = base.selection.model_copy(update={"engine": engine,
                                                      "engine_version": version})
        out.append(base.model_copy(update={"run_id": f"run-{i}", "selection": selection}))
    return out


def test_long_versions_are_shortened_at_the_local_label() -> None:
    assert short_version("0.4.0") == "0.4.0"
    assert short_version("1.0.0+graphiti-core-0.31.2") == "1.0.0+…"
    assert short_version("2026.12.01-nightly") == "2026.12.0…"


@pytest.mark.parametrize("width", [80, 120])
def test_one_table_per_family_within_the_width_and_a_legend(four, width) -> None:
    console = Console(record=True, width=width, force_terminal=False)
    render_several(compare_reports(four), console)
    out = console.export_text()
    lines = out.splitlines()
    tables = [x for x in lines if x.startswith("metric")]
    # eight families, then the wrong first answers by stage (scorer v5's miss_stages)
    assert len(tables) == 9 and all(x.rstrip().endswith("better") for x in tables)
    figure_lines = [x for x in lines if "(" in x and "/" in x and not x.startswith(
        ("* ", "reference", "graphiti", "mem0", "benchd", "beside", "definitions", "per "))]
    assert figure_lines and max(len(x.rstrip()) for x in figure_lines) <= width
    assert "(1/2)" not in out and "Poison by channel" not in out
    assert "graphiti 1.0.0+…: run run-1, version 1.0.0+graphiti-core-0.31.2" in out
    assert "reference 0.4.0: run run-0" in out and "version 0.4.0" not in out
    assert "beside: no better direction; read poison_surfaced_at_k beside poison_leak_at_k" in out
