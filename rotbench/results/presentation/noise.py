"""The noisy arm in show, compare and the HTML page: injected errors per kind and the
perception/engine split of the wrong first answers (``Report.perception_noise``,
``Report.miss_stages``). Every function returns nothing (or an empty string) for a report
of another arm, so other reports render as before."""

from __future__ import annotations

import html
from collections.abc import Callable

from rich.console import Console

from rotbench._util.safe_text import printable
from rotbench.results.presentation.tables import Col, print_table
from rotbench.results.schema import Report
from rotbench.scoring.metrics import Rate
from rotbench.scoring.miss_stages import INTACT, error_kinds


def split(report: Report) -> tuple[int, int] | None:
    """(perception, engine): the wrong first answers filed under ``perception`` and the
    rest; None for a report without the noisy arm's record."""
    if report.perception_noise is None or report.miss_stages is None:
        return None
    wrong = sum(report.miss_stages.values())
    perceived = report.miss_stages.get("perception", 0)
    return perceived, wrong - perceived


def profile_label(report: Report) -> str:
    """``typical (sha256 40419ef6a02d)``: the profile and the head of its digest."""
    sel = report.selection
    return f"{printable(sel.noise or '?', 64)}, sha256 {(sel.noise_digest or '?')[:12]}"


def render_noise(report: Report, console: Console, fmt: Callable[[Rate], str]) -> None:
    """The "Perception noise" table of ``rotbench show``: per kind, injected of
    opportunities (each written by ``fmt``, the page's rate format), then one line with the
    intact paths (``intact paths: n/d``, when the report has them) and one with the split.
    Nothing for another arm."""
    noise = report.perception_noise
    if noise is None:
        return
    console.print(f"Noisy arm: profile {profile_label(report)}", highlight=False,
                  markup=False)
    print_table(console, "Perception noise",
                [Col("kind"), Col("injected / opportunities", "words", "right"),
                 Col("of which in questions", "words", "right")],
                [[printable(kind, 40), fmt(Rate.of(c.get("injected", 0),
                                                   c.get("opportunities", 0))),
                  _questions(c)]
                 for kind, c in error_kinds(noise).items()])
    intact = noise.get(INTACT)
    if intact:
        console.print(f"intact paths: {intact['numerator']}/{intact['denominator']}",
                      highlight=False, markup=False)
    parts = split(report)
    if parts is not None:
        console.print(f"Wrong first answers: {sum(parts)}; perception {parts[0]}, engine's "
                      f"own rules {parts[1]}", highlight=False, markup=False)


def _questions(c: dict[str, int]) -> str:
    """``2 / 23``: a kind's injected errors of its opportunities in reading questions; "-"
    for a kind no question offers (or a report from before question noise)."""
    chances = c.get("question_opportunities", 0)
    return f"{c.get('question_injected', 0)} / {chances}" if chances else "-"


def noise_rows(reports: list[Report]) -> list[tuple[str, list[Rate | None]]]:
    """Rows for ``rotbench compare``: ``noise: <kind>`` (injected of opportunities) per
    report; empty when no report is of the noisy arm."""
    if all(r.perception_noise is None for r in reports):
        return []
    kinds = list(dict.fromkeys(k for r in reports for k in error_kinds(r.perception_noise)))
    rows = []
    for kind in kinds:
        cells: list[Rate | None] = []
        for r in reports:
            c = (r.perception_noise or {}).get(kind)
            cells.append(None if c is None else Rate.of(c["injected"], c["opportunities"]))
        rows.append((f"noise: {kind}", cells))
    if any(INTACT in (r.perception_noise or {}) for r in reports):
        rows.append(("noise: intact paths", [
            None if (c := (r.perception_noise or {}).get(INTACT)) is None
            else Rate.of(c["numerator"], c["denominator"]) for r in reports]))
    return rows


def noise_section(reports: list[Report], labels: list[str]) -> str:
    """The HTML page's "Perception noise" section: the profile, each kind's injected of
    opportunities and the perception/engine split per report; "" without a noisy report."""
    if all(r.perception_noise is None for r in reports):
        return ""
    heads = "".join(f"<th>{html.escape(label)}</th>" for label in labels)
    kinds = list(dict.fromkeys(k for r in reports for k in error_kinds(r.perception_noise)))

    def cell(r: Report, kind: str) -> str:
        c = (r.perception_noise or {}).get(kind)
        if c is None:
            return "<td class=n>n/a</td>"
        asked = _questions(c)
        return (f"<td class=n>{c['injected']} / {c['opportunities']}"
                + ("" if asked == "-" else f" (questions {asked})") + "</td>")

    names = "".join(
        f"<td>{html.escape(profile_label(r)) if r.perception_noise else 'n/a'}</td>"
        for r in reports)
    rows = [f"<tr><td>profile</td>{names}</tr>"]
    rows += [f"<tr><td><code>{html.escape(k[:40])}</code></td>"
             f"{''.join(cell(r, k) for r in reports)}</tr>" for k in kinds]
    if any(INTACT in (r.perception_noise or {}) for r in reports):
        rows.append("<tr><td>intact paths (currency questions)</td>" + "".join(
            f"<td class=n>{c['numerator']} / {c['denominator']}</td>"
            if (c := (r.perception_noise or {}).get(INTACT)) else "<td class=n>n/a</td>"
            for r in reports) + "</tr>")
    for i, what in enumerate(("perception", "engine's own rules")):
        rows.append(f"<tr><td>wrong first answers: {what}</td>" + "".join(
            f"<td class=n>{p[i]}</td>" if (p := split(r)) else "<td class=n>n/a</td>"
            for r in reports) + "</tr>")
    return ("<h3>Perception noise (noisy arm)</h3><p>Errors injected per kind, of the "
            "opportunities the worlds gave (in brackets: of them, in reading questions), and "
            "the wrong first answers whose question was misread or whose deciding claim was "
            "perturbed (perception) against the rest (the engine's own rules).</p>"
            f"<table><tr><th>kind</th>{heads}</tr>{''.join(rows)}</table>")
