"""The diagnosis of a report (``rotbench.scoring.behaviours``) as ``show``, ``compare`` and the
HTML page print it: the engine's behaviours worst first, each with the metric that shows it,
the questions it lost, the kind of rule that fixes it and example questions with the hits
the engine served. Every text read from a report is escaped here (``printable`` for the
terminal, ``html_text`` for the page).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from rich.console import Console

from rotbench._util.safe_text import printable
from rotbench.results.files.worlds import iter_worlds
from rotbench.results.schema import Report
from rotbench.scoring.behaviours import Example, Finding, diagnose
from rotbench.scoring.lexicons import LEXICONS

TOP = 5
"""Behaviours ``show`` prints (the JSON and the HTML page give every one)."""
COMPARE_TOP = 3
"""Behaviours ``compare`` prints per engine."""
WIDTH = 80
"""Widest line of the terminal diagnosis."""
DOCS = "docs/engines/reading-your-report.md"
"""The page that explains the diagnosis and how to act on it."""


def report_diagnosis(report: Report) -> list[Finding]:
    """``report``'s findings, worst first, from its worlds (read one at a time). Raises
    ``ReportError`` when a world file cannot be read, ``ValueError`` for unscored hits."""
    lex = LEXICONS.get(report.selection.scorer_version)
    return diagnose(iter_worlds(report), lex.reads_decoys if lex else True, report.metrics)


def figure_text(finding: Finding) -> str:
    """The figure a finding is read from: ``'current_lost 57/111'``, or for a miss stage
    ``'current_first, wrong first answers never_seen 38/195'``."""
    counts = f"{finding.numerator}/{finding.denominator}"
    if finding.stage is not None:
        return f"{finding.metric}, wrong first answers {finding.stage} {counts}"
    return f"{finding.metric} {counts}"


def cost_text(finding: Finding) -> str:
    """``'57 current answers, 57 questions'``: what a finding costs."""
    return (f"{finding.current_answers_lost} current answers, "
            f"{finding.questions_lost} questions")


def _fit(line: str, width: int, indent: str = "") -> str:
    """``indent + line``, ``line`` shortened at a word with '…' to fit ``width``."""
    room = width - len(indent)
    if len(line) > room:
        line = textwrap.shorten(line, room, placeholder="…")
    return indent + line


def _example_lines(example: Example, width: int) -> list[str]:
    now = "none holds" if example.current is None else printable(example.current, 40)
    who = "" if example.user is None else f" for {printable(example.user, 20)}"
    lines = [_fit(f"seed {example.seed} day {example.day}{who}: "
                  f"{printable(example.question, 200)} (now: {now})", width)]
    if example.hits:
        hit = example.hits[0]
        text = "(no text kept)" if hit.text is None else printable(hit.text, 300)
        lines.append(_fit(f"served first: [{hit.cls or 'unscored'}] {text}", width, "  "))
    else:
        lines.append("  served nothing")
    return lines


def diagnosis_lines(findings: list[Finding], top: int = TOP, width: int = WIDTH) -> list[str]:
    """The terminal diagnosis: a title, then per finding (the first ``top``) its rank,
    behaviour and cost, the figure, the fix and two example questions; every line at most
    ``width`` characters (an example line is shortened with '…')."""
    if not findings:
        return ["What to fix first: no behaviour lost a question"]
    shown = findings[:top]
    lines = [f"What to fix first ({len(shown)} of {len(findings)} behaviours, most current "
             f"answers lost first; {DOCS})"]
    lines = textwrap.wrap(lines[0], width)
    for n, f in enumerate(shown, start=1):
        head = f"{n}. {f.behaviour}: {cost_text(f)} ({figure_text(f)})"
        lines += textwrap.wrap(head, width, subsequent_indent="   ")
        lines += textwrap.wrap(f"fix: {f.fix}", width, initial_indent="   ",
                               subsequent_indent="   ")
        for example in f.examples[:2]:
            lines += ["   " + line for line in _example_lines(example, width - 3)]
    return lines


def render_diagnosis(findings: list[Finding], console: Console, top: int = TOP) -> None:
    """Print ``diagnosis_lines`` (at most 80 columns, narrower on a narrower console)."""
    width = max(40, min(WIDTH, console.width))
    for line in diagnosis_lines(findings, top, width):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def compare_rows(columns: list[str], diagnoses: list[list[Finding]],
                 top: int = COMPARE_TOP) -> list[list[str]]:
    """Rows of ``compare``'s diagnosis table (engine, rank, behaviour, cost as ``n/d``: the
    current answers over the questions it lost): per engine column (``columns``: the
    headings), its ``top`` behaviours."""
    rows = []
    for heading, findings in zip(columns, diagnoses, strict=True):
        if not findings:
            rows.append([heading, "", "no behaviour lost a question", ""])
        for n, f in enumerate(findings[:top], start=1):
            rows.append([heading if n == 1 else "", str(n), f.behaviour,
                         f"{f.current_answers_lost}/{f.questions_lost}"])
    return rows


def _html_hits(example: Example) -> str:
    from rotbench._util.sinks import html_text

    if not example.hits:
        return "<span class=muted>no hits</span>"
    return "<br>".join(
        f"{h.rank}. <code>{html_text(h.cls or 'unscored', 40)}</code> "
        f"{html_text(h.text if h.text is not None else '(no text kept)', 400)}"
        for h in example.hits)


def diagnosis_html(reports: list[Report], labels: list[str],
                   diagnoses: list[list[Finding]], metric_link: Callable[[str], str]) -> str:
    """The page's "What to fix first" section: per report, every finding in the diagnosis's
    order (rank, behaviour, current answers and questions lost, the figure, the fix), each
    with its example questions and the hits the engine served. ``metric_link``: a metric's
    name as the page links it (the page's own, so that this module needs no page module)."""
    from rotbench._util.sinks import html_text

    parts = ["<h2 id=diagnosis>What to fix first</h2><p>Each behaviour the engine shows, "
             "ranked by the current answers it costs (wrong first answers to a question with "
             "a current value), then by every question it lost; a question lost by several "
             "metrics of one behaviour counts once. How to read it: "
             f"<code>{DOCS}</code>.</p>"]
    for label, findings in zip(labels, diagnoses, strict=True):
        if len(reports) > 1:
            parts.append(f"<h3>{html_text(label, 200)}</h3>")
        if not findings:
            parts.append("<p>No behaviour lost a question.</p>")
            continue
        rows = []
        for n, f in enumerate(findings, start=1):
            stage = "" if f.stage is None else f" (wrong first answers: {html_text(f.stage)})"
            examples = "".join(
                f"<li>seed {e.seed} · day {e.day} · {html_text(e.question, 300)} · now: "
                f"<b>{html_text(e.current if e.current is not None else 'none holds', 80)}"
                f"</b><br>{_html_hits(e)}</li>" for e in f.examples)
            rows.append(
                f'<tr data-behaviour="{html_text(f.behaviour, None)}"><td class=n>{n}</td>'
                f"<td>{html_text(f.behaviour, None)}</td><td class=n>{f.current_answers_lost}</td>"
                f"<td class=n>{f.questions_lost}</td><td>{metric_link(f.metric)}{stage} "
                f"{f.numerator}/{f.denominator}</td><td>{html_text(f.fix, None)}"
                f"<details><summary>examples</summary><ul>{examples}</ul></details></td></tr>")
        parts.append("<table class=diagnosis><tr><th>#</th><th>behaviour</th>"
                     "<th>current answers lost</th><th>questions lost</th><th>shown by</th>"
                     f"<th>fix</th></tr>{''.join(rows)}</table>")
    return "".join(parts)
