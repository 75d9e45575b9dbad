"""Run the rot-benchmark flow in-process and read back what it did."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from flows.rot_benchmark import RunOutcome, rot_benchmark
from rotbench.results import Report
from rotbench.run.spec import RunSpec


def run_flow(root: Path, *, generator: str, **fields) -> tuple[Report, RunOutcome]:
    """Run the flow with cache and reports under ``root``; returns the first report and the
    run's outcome. ``generator`` is required, so that no test's figures depend on the default
    generator (generator 3 since issue 21)."""
    started = fields.pop("started_unix", None)
    spec = RunSpec(cache_dir=str(root / "cache"), reports_dir=str(root / "reports"),
                   generator=generator, **fields)
    outcome = asyncio.run(rot_benchmark(spec, started_unix=started))
    assert isinstance(outcome.report, Report)
    return outcome.report, outcome


PINNED_FILE = Path(__file__).resolve().parents[1] / "data" / "pinned_figures.json"
"""Every pooled figure the flow and engine tests pin (oracle arm; seeds 42 43 44 over 90 days
unless the scenario's name says otherwise): scenario -> engine -> metric -> [numerator,
denominator]. One place, so that a figure two tests pin (transcript-rag on generator 2 is
mem0-raw's too) is written once."""


def pinned(scenario: str) -> dict[str, dict[str, tuple[int, int]]]:
    """The figures pinned for ``scenario`` ('generator 1' (scorer v2), 'generator 2',
    'generator 2, two users', 'generator 3', 'generator 4', or 'generator 4, seed 42, 30
    days' (Hindsight and LangMem)): engine -> metric -> (numerator, denominator). Raises
    ``KeyError`` for a scenario the file does not hold."""
    engines = json.loads(PINNED_FILE.read_text(encoding="utf-8"))[scenario]
    return {engine: {metric: (n, d) for metric, (n, d) in figures.items()}
            for engine, figures in engines.items()}


def frac(rate) -> tuple[int, int]:
    """A rate as (numerator, denominator)."""
    return rate.numerator, rate.denominator


def figures_of(report: Report, metrics) -> dict[str, tuple[int, int]]:
    """The pooled figures of ``report`` for ``metrics`` (the ones a test pins)."""
    got = figures(report)
    return {m: got[m] for m in metrics}


def report_of(outcome: RunOutcome, engine: str) -> Report:
    """The report of ``engine`` (its name, as the selection gives it) in ``outcome``."""
    return next(r for r in outcome.reports if r.selection.engine == engine)


def assert_complete(outcome: RunOutcome, generator: str, scorer: str) -> None:
    """Every world of every engine ran, on ``generator`` and scored by ``scorer``."""
    assert not outcome.failures and not outcome.missing
    for report in outcome.reports:
        assert report.selection.generator_version == generator
        assert report.selection.scorer_version == scorer


def pooled_rows(root: Path, run_id: str) -> dict[tuple[str, str | None], tuple[int, int]]:
    """The pooled metric rows (no seed, no checkpoint) of run ``run_id`` in the DuckDB under
    ``root``: (metric, channel) -> (numerator, denominator)."""
    import duckdb

    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        return dict(((m, ch), (n, d)) for m, ch, n, d in con.execute(
            "SELECT metric, channel, numerator, denominator FROM metrics WHERE run_id = ? "
            "AND seed IS NULL AND checkpoint IS NULL", [run_id]).fetchall())


def count_rows(root: Path, run_id: str, where: str) -> int:
    """How many metric rows of run ``run_id`` match the SQL condition ``where``."""
    import duckdb

    with duckdb.connect(str(root / "reports" / "rotbench.duckdb"), read_only=True) as con:
        return con.execute(f"SELECT count(*) FROM metrics WHERE run_id = ? AND {where}",
                           [run_id]).fetchone()[0]


def shown(outcome: RunOutcome) -> tuple[str, dict[str, str], str]:
    """What a reader sees of a run's reports: the first report as ``show`` renders it (160
    columns), each metric's "better" label in ``compare`` of the first two, and the HTML
    page of all of them."""
    import io

    from rich.console import Console

    from rotbench.results.presentation.compare import compare_reports
    from rotbench.results.presentation.html import render_html
    from rotbench.results.presentation.render import render

    console = Console(file=io.StringIO(), width=160)
    render(outcome.reports[0], console)
    comparison = compare_reports(outcome.reports[:2])
    better = {row.metric: row.better for family in comparison.families for row in family.rows}
    return console.file.getvalue(), better, render_html(outcome.reports, [])


def computed(report: Report) -> set[tuple[int, str]]:
    """(seed, stage) of every stage that ran rather than came from the cache."""
    return {(s.seed, s.stage) for s in report.stages if not s.cached}


def clone_cache(src: Path, dst: Path) -> Path:
    """Copy a run folder (cache and reports) so a test can change it freely."""
    shutil.copytree(src, dst)
    return dst


def figures(report: Report) -> dict[str, tuple[int, int]]:
    """Every pooled metric of ``report`` as (numerator, denominator)."""
    return {name: (r.numerator, r.denominator) for name, r in report.metrics.items()}


def leaks(report: Report) -> dict[str, tuple[int, int]]:
    """``poison_leak_at_k`` by untrusted channel, as (numerator, denominator)."""
    return {ch: (m["poison_leak_at_k"].numerator, m["poison_leak_at_k"].denominator)
            for ch, m in report.by_channel.items() if "poison_leak_at_k" in m}
