"""The HTML page's reading aids, kept apart from the page's layout (``html``):

- every metric name links to its definition (``rotbench.scoring.definitions.metric_url``);
- with several reports, a baseline can be chosen: one set of family tables per baseline,
  each tested against it (``compare_reports`` with that report first), shown by a radio
  button; above them, the largest gaps against that baseline, largest first;
- a "failing questions only" switch over the list of every question.

The page runs no script (its Content-Security-Policy forbids any): the switches are form
controls whose state CSS reads (``:has(... :checked)``), so they work in any current browser
with scripts off.
"""

from __future__ import annotations

import re

from rotbench.results.presentation.compare import Comparison, compare_reports
from rotbench.results.schema import Report
from rotbench.scoring.definitions import definition, metric_url
from rotbench.scoring.models import ProbeRecord

_INTERVAL = re.compile(r'<span class="iv">[^<]*</span>')
"""A rate's interval in a family table cell (``html._rate_cell``)."""

MAX_GAPS = 12
"""Most rows in a baseline's "largest gaps" table."""

CSS = """
.base{display:none}.pick{margin:.3em 0 .8em}.pick label{margin-right:1.2em;cursor:pointer}
.gaps td.n{text-align:right}a.m{color:inherit;text-decoration:underline dotted}
.switch{margin:.4em 0 .8em;font-weight:bold}
body:has(#failing-only:checked) details.q:not(.fail){display:none}
"""


def esc(text: object) -> str:
    """``text`` escaped for HTML text and attribute values (the HTML rule of
    ``rotbench._util.sinks``: control, C1 and bidi characters escaped too; nothing cut)."""
    from rotbench._util.sinks import html_text

    return html_text(text, None)


def metric_link(name: str) -> str:
    """``<code>name</code>`` linked to the metric's definition (a cut such as
    ``poison_leak_at_k (relay)`` links to the metric's); plain code for other names."""
    code = f"<code>{esc(name)}</code>"
    if definition(name) is None:
        return code
    return f'<a class=m href="{esc(metric_url(name))}">{code}</a>'


def baseline_css(count: int) -> str:
    """The rules that show the tables of the checked baseline only."""
    return "".join(f"body:has(#base-{i}:checked) .base-{i}{{display:block}}"
                   for i in range(count))


def gaps_table(comparison: Comparison, labels: list[str]) -> str:
    """Every (metric, other report) with a difference from the baseline (the comparison's
    first column), largest absolute difference first, at most ``MAX_GAPS`` rows; each says
    whether the difference is significant and whether it is better or worse."""
    rows = []
    for family in comparison.families:
        for row in family.rows:
            for label, cell in zip(labels[1:], row.cells[1:], strict=True):
                diff = cell.difference
                if diff is None or diff.value == 0:
                    continue
                if row.better in ("higher", "lower"):
                    verdict = "better" if (diff.value > 0) == (row.better == "higher") else "worse"
                else:
                    verdict = f"no direction ({row.better})"
                rows.append((abs(diff.value), row.metric, label, diff, verdict))
    if not rows:
        return "<p class=muted>No figure differs from the baseline.</p>"
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    body = "".join(
        f"<tr><td>{metric_link(metric)}</td><td>{esc(label)}</td>"
        f'<td class="n">{100 * diff.value:+.1f} points</td>'
        f"<td>{'yes' if diff.significant else 'no'}</td><td>{esc(verdict)}</td></tr>"
        for _, metric, label, diff, verdict in rows[:MAX_GAPS])
    return ('<table class="gaps"><tr><th>metric</th><th>report</th><th>against the baseline'
            "</th><th>significant at 95%</th><th>reads</th></tr>" + body + "</table>")


def baseline_sections(reports: list[Report], labels: list[str], force: bool,
                      tables) -> str:  # noqa: ANN001 - (families, labels) -> html
    """The radio buttons choosing a baseline, then per baseline (hidden unless chosen): its
    largest gaps and every family's table with that report as the first column."""
    pick = "".join(
        f'<input type=radio name=baseline id=base-{i}{" checked" if i == 0 else ""}>'
        f"<label for=base-{i}>{esc(label)}</label>" for i, label in enumerate(labels))
    parts = [f'<div class="pick" id="baseline">Baseline: {pick}</div>']
    for i in range(len(reports)):
        order = [i, *(j for j in range(len(reports)) if j != i)]
        comparison = compare_reports([reports[j] for j in order], force=force)
        ordered = [labels[j] for j in order]
        families = tables(comparison.families, ordered)
        if i > 0:  # the intervals are the same whatever the baseline: shown once, in the first
            families = _INTERVAL.sub("", families)
        parts.append(
            f'<div class="base base-{i}"><h3>Largest gaps against {esc(labels[i])}</h3>'
            f"{gaps_table(comparison, ordered)}{families}</div>")
    return "".join(parts)


def question_fails(probe: ProbeRecord | None) -> bool:
    """Whether the engine got ``probe`` wrong, as the page's switch reads it: an unanswerable
    question that got any hit; a question with no current value (after a retraction) whose
    first value-bearing hit serves a value; any other whose first value-bearing hit is not
    the current value alone. A question not asked is not failing."""
    if probe is None:
        return False
    hits = sorted(probe.hits, key=lambda h: h.rank)
    if probe.truth is None:
        return bool(hits)
    first = next((h.cls for h in hits if h.cls not in (None, "none")), "none")
    if probe.truth.current is None:
        return first not in ("none", "history")
    return first != "current"


SWITCH = ('<p class=switch><input type=checkbox id=failing-only> <label for=failing-only>'
          "failing questions only</label> <span class=muted>(a question fails when a report's "
          "first value-bearing hit is not the current value; an unanswerable one when it got "
          "any hit)</span></p>")
