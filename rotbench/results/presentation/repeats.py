"""The repeat summary of a ``--repeat N`` report on the terminal (``rotbench run``,
``show``): each figure's first run, median and range, pass^N of the currency figures, how
many runs agreed on each question, and the flaky questions. Nothing for a single run."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from rotbench._util.safe_text import printable
from rotbench.results.presentation.percent import percent
from rotbench.results.presentation.tables import Col, print_table
from rotbench.results.schema import FigureSpread, Report
from rotbench.scoring.metrics import Rate

FLAKY_SHOWN = 20
"""Flaky questions listed on the terminal (the report and the database hold them all)."""


def spread_text(spread: FigureSpread) -> tuple[str, str]:
    """(median, 'low–high') of one figure, in percent."""
    return percent(spread.median), f"{percent(spread.low)}–{percent(spread.high)}"


def render_repeats(report: Report, console: Console,
                   format_rate=lambda r: str(r)) -> None:  # noqa: ANN001
    """Print ``report``'s repeat tables (``Report.repeats``); nothing for a single run.
    ``format_rate``: how a ``Rate`` is written (the caller's, with or without intervals)."""
    rep = report.repeats
    if rep is None:
        return
    n = rep.count
    rows = []
    for metric, spread in rep.spread.items():
        median, span = spread_text(spread)
        first: Rate | None = report.metrics.get(metric)
        rows.append([metric, format_rate(first) if first is not None else "n/a", median, span])
    print_table(console, f"Repeats: {n} runs of the engine on the same worlds",
                [Col("metric"), Col("run 1", "words", "right"),
                 Col("median", justify="right"), Col("range", justify="right")], rows)
    print_table(console, f"pass^{n}: right in every one of the {n} runs",
                [Col("metric"), Col(f"pass^{n}", "words", "right")],
                [[metric, format_rate(rate)] for metric, rate in rep.pass_all.items()])
    agreement = ", ".join(f"{k} of {n}: {q}" for k, q in rep.agreement.items())
    console.print(f"Questions answered alike across the runs ({rep.questions} questions; "
                  f"runs agreeing on the most common answer): {agreement}; flaky: "
                  f"{len(rep.flaky)}", highlight=False, markup=False, soft_wrap=True)
    if not rep.flaky:
        return
    shown = rep.flaky[:FLAKY_SHOWN]
    more = f", first {len(shown)}" if len(rep.flaky) > len(shown) else ""
    print_table(console, f"Flaky questions ({len(rep.flaky)}{more})",
                [Col("seed", justify="right"), Col("day", justify="right"),
                 Col("question", "text"), Col("agree", justify="right"),
                 Col("current_first by run", "words"), Col("figures that differ", "text")],
                [[str(q.seed), str(q.day), printable(q.question, 120),
                  f"{q.agreeing}/{n}",
                  " ".join("-" if r is None else ("right" if r else "wrong")
                           for r in q.current_first),
                  printable(", ".join(q.figures), 200)] for q in shown])


def repeats_html(reports: list[Report], labels: list[str], esc: Callable[[object], str],
                 rate_cell: Callable[[Rate | None], str]) -> str:
    """The HTML page's repeat section: per ``--repeat`` report, each figure's run 1, median
    and range, pass^N, the agreement counts and the flaky questions (every text escaped by
    the page's ``esc``; a rate's cell by its ``rate_cell``); empty when no report ran
    repeats."""
    _rate_cell = rate_cell
    out = []
    for report, label in zip(reports, labels, strict=True):
        rep = report.repeats
        if rep is None:
            continue
        n = rep.count
        rows = "".join(
            f"<tr><td>{esc(metric)}</td>{_rate_cell(report.metrics.get(metric))}"
            f"<td class=n>{esc(spread_text(spread)[0])}</td>"
            f"<td class=n>{esc(spread_text(spread)[1])}</td></tr>"
            for metric, spread in rep.spread.items())
        passes = "".join(f"<tr><td>{esc(metric)}</td>{_rate_cell(rate)}</tr>"
                         for metric, rate in rep.pass_all.items())
        agreement = ", ".join(f"{k} of {n}: {q}" for k, q in rep.agreement.items())
        flaky = "".join(
            f"<tr><td class=n>{q.seed}</td><td class=n>{q.day}</td><td>{esc(q.question)}</td>"
            f"<td class=n>{q.agreeing}/{n}</td><td>{esc(', '.join(q.figures))}</td></tr>"
            for q in rep.flaky)
        flaky_table = ("<table><tr><th>seed</th><th>day</th><th>question</th><th>agree</th>"
                       f"<th>figures that differ</th></tr>{flaky}</table>" if flaky else "")
        out.append(
            f"<h3>{esc(label)}: {n} runs of the engine on the same worlds</h3>"
            f"<table><tr><th>metric</th><th>pass^{n}</th></tr>{passes}</table>"
            f"<table><tr><th>metric</th><th>run 1</th><th>median</th><th>range</th></tr>"
            f"{rows}</table><p>{rep.questions} questions; runs agreeing on the most "
            f"common answer: {esc(agreement)}; flaky questions: {len(rep.flaky)}</p>"
            f"{flaky_table}")
    if not out:
        return ""
    return ("<h2 id=repeats>Repeated runs</h2><p>Each engine ran several times on the same "
            "worlds with fresh state (<code>--repeat</code>). pass^N counts a question when "
            "it is right in every run; a flaky question is one whose outcome on some figure "
            "differs between runs.</p>" + "".join(out))
