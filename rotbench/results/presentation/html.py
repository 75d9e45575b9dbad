"""The HTML report: one self-contained file for one run or several side by side.

The page holds, in order: the headline figures, what to fix first (each report's behaviours
worst first, ``rotbench.results.presentation.diagnosis``), what ran (the selection of every
report),
every metric family's table (with 95% Wilson intervals; with several reports, the figures
and significance marks of ``rotbench.results.presentation.compare``; generator 5's
currency and supersession by evidence among them), the breakdowns by kind, the
first
value-bearing hit counts, the relevance floor sweep, the plots (inline SVG), the notes, and
a drill-down of every question with its top-k hits, their classes and provenance and the
truth on that day, so a reader can check a classification by hand.

Self-contained: inline CSS and SVG only, no script, no font or image fetched from anywhere
(a Content-Security-Policy ``default-src 'none'`` says so to the browser too). Every string
that came from a report is escaped (``html.escape``) and stripped of control characters.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path

from rotbench._util.safe_text import printable
from rotbench.results.presentation.compare import (
    MARKS,
    Cell,
    Comparison,
    Family,
    Row,
    compare_reports,
    legend_lines,
)
from rotbench.results.presentation.html_tools import CSS as TOOLS_CSS
from rotbench.results.presentation.html_tools import (
    SWITCH,
    baseline_css,
    baseline_sections,
    metric_link,
    question_fails,
)
from rotbench.results.presentation.noise import noise_section
from rotbench.results.presentation.percent import percent
from rotbench.results.presentation.plots import CLASS_COLOURS, Plot, run_labels, selection_line
from rotbench.results.presentation.render import (
    denominator_legend,
    format_rate,
    kinds_title,
    miss_denominator,
    scorer_classes,
    shared_line,
)
from rotbench.results.schema import Report
from rotbench.scoring.metrics import (
    BY_KIND_V4,
    POISON_METRICS,
    Rate,
    better_label,
    families_for,
)
from rotbench.scoring.models import HIT_CLASSES, ProbeRecord, ScoredHit

HEADLINE_METRICS: tuple[str, ...] = ("current_first", "stale_over_current", "poison_leak_at_k")
"""One figure per original family (currency, supersession, poison): the page's headline and
the three columns of ``rotbench runs``."""

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:#1d1d1f;margin:0;background:#fafafa}
main{max-width:1240px;margin:0 auto;padding:18px 28px 60px;background:#fff}
h1{font-size:1.6em;margin:.3em 0 .1em}h2{margin-top:1.8em;border-bottom:2px solid #ddd;
padding-bottom:.2em}h3{margin:1.2em 0 .4em}
.sub{color:#555;margin:0 0 1em}
table{border-collapse:collapse;margin:.4em 0 1em;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.n{text-align:right;white-space:nowrap}
.iv{color:#666;font-size:.85em;display:block}
.sig{font-weight:bold}.better{color:#0a7b34}.worse{color:#b3261e}
.cards{display:flex;flex-wrap:wrap;gap:14px}
.run{border:1px solid #ddd;border-radius:8px;padding:10px 14px;min-width:300px;flex:1}
.run h3{margin:0 0 .4em;font-size:1.05em}
.fig{display:inline-block;margin:0 18px 6px 0}
.fig b{display:block;font-size:1.9em;line-height:1.1}
.fig small{display:block;color:#555}
.degraded{background:#fff4e5;border:1px solid #f0a020;padding:6px 10px;border-radius:6px}
figure{margin:1.2em 0;border:1px solid #eee;padding:6px}
figure svg{max-width:100%;height:auto;display:block}
figcaption{color:#555;font-size:.9em;margin-top:4px}
.cls{display:inline-block;padding:0 6px;border-radius:4px;font-size:.85em;
border:1px solid #bbb}
details{margin:2px 0}summary{cursor:pointer}
details.q{border-left:4px solid #ddd;padding-left:8px}
details.q>table{font-size:.9em}
.tr{color:#333;font-size:.9em;margin:4px 0}
code{font-size:.9em}.muted{color:#777}
table.h td:first-child,table.h td:nth-child(4){text-align:right;white-space:nowrap}
table.h td:nth-child(2){white-space:nowrap;font-size:.85em}
"""

PAGE_CSS = _CSS
"""The page's base style sheet (body, tables, intervals, cards), for other pages of the
same look (``rotbench.published.page``)."""

_DARK_CLASSES = {"current", "stale", "poison_asserted", "decoy_asserted"}


def esc(text: object, limit: int = 2000) -> str:
    """Report-derived text for an HTML attribute or text: control characters shown as
    escapes, cut to ``limit`` characters, and ``& < > " '`` escaped."""
    from rotbench._util.sinks import html_text

    return html_text(text, limit)


def esc_text(text: object, limit: int = 2000) -> str:
    """Like ``esc`` for text between tags only, where quotes need no escape (``& < >``)."""
    return html.escape(printable(text, limit), quote=False)


def degraded_reasons(report: Report) -> list[str]:
    """Why a run is marked degraded (``Report.degraded``; empty: it is not)."""
    return list(report.degraded)


def single_families(report: Report) -> list[Family]:
    """The family tables of one report, in the shapes of ``compare`` (one cell per row)."""
    def row(metric: str, rate: Rate | None) -> Row:
        return Row(metric=metric, better=better_label(metric), cells=[Cell(rate=rate)])

    families = [Family(name=name, rows=[row(m, report.metrics.get(m)) for m in metrics])
                for name, metrics in families_for([report]).items()]
    families.append(Family(name="Poison by channel", rows=[
        row(f"{m} ({channel})", rates.get(m))
        for channel, rates in report.by_channel.items() for m in POISON_METRICS]))
    from rotbench.results.presentation.evidence import EVIDENCE_FAMILY, evidence_rows

    if rows := evidence_rows([report]):  # generator 5
        families.append(Family(name=EVIDENCE_FAMILY, rows=[row(name, rates[0])
                                                           for name, rates in rows]))
    return families


def _rate_cell(rate: Rate | None, extra: str = "") -> str:
    if rate is None:
        return '<td class="n muted">n/a</td>'
    main = esc(format_rate(rate))
    interval = ""
    if rate.low is not None and rate.high is not None:
        interval = f'<span class="iv">95% CI {percent(rate.low)}–{percent(rate.high)}</span>'
    return f'<td class="n">{main}{extra}{interval}</td>'


def _cell(cell: Cell, better: str) -> str:
    diff = cell.difference
    if diff is None or not diff.significant:
        return _rate_cell(cell.rate)
    if better not in ("higher", "lower"):  # a context figure: a difference, no verdict
        tip = (f"{'+' if diff.value >= 0 else '−'}{abs(100 * diff.value):.1f} points against "
               f"the first column (no better direction: read it {better})")
        return _rate_cell(cell.rate, f' <span class="sig" title="{esc(tip)}">'
                          f'{MARKS[diff.test]}</span>')
    good = (diff.value > 0) == (better == "higher")
    tip = (f"{'+' if diff.value >= 0 else '−'}{abs(100 * diff.value):.1f} points against the "
           f"first column, 95% interval {100 * diff.low:+.1f} to {100 * diff.high:+.1f}")
    if diff.paired is not None:
        tip += (f"; paired: {diff.paired.first_only} vs {diff.paired.other_only} discordant "
                f"questions, exact McNemar p={diff.paired.p_value:.3g}")
    mark = (f' <span class="sig {"better" if good else "worse"}" title="{esc(tip)}">'
            f'{MARKS[diff.test]} {"better" if good else "worse"}</span>')
    return _rate_cell(cell.rate, mark)


def _family_tables(families: list[Family], labels: list[str]) -> str:
    heads = "".join(f"<th>{esc(label)}</th>" for label in labels)
    out = []
    for family in families:
        if all(c.rate is None for r in family.rows for c in r.cells):
            continue
        better = family.directed  # a family of inputs (injected noise) has no direction
        rows = "".join(
            f"<tr><td>{metric_link(r.metric)}</td>"
            + "".join(_cell(c, r.better) for c in r.cells)
            + (f"<td>{esc(r.better)}</td>" if better else "") + "</tr>"
            for r in family.rows)
        out.append(f'<h3>{esc(family.name)}</h3><table class="family"><tr><th>metric</th>'
                   f"{heads}{'<th>better</th>' if better else ''}</tr>{rows}</table>")
    return "".join(out)


def _selection_table(reports: list[Report], labels: list[str], sources: list[str]) -> str:
    def row(name: str, values: Iterable[str]) -> str:
        return f"<tr><th>{esc(name)}</th>" + "".join(f"<td>{v}</td>" for v in values) + "</tr>"

    s = [r.selection for r in reports]
    rows = [
        row("run id", (f"<code>{esc(r.run_id)}</code>" for r in reports)),
        row("created (UTC)", (esc(r.created_at) for r in reports)),
        row("source", (esc(x) for x in sources)),
        row("engine", (esc(f"{x.engine} {x.engine_version}") for x in s)),
        row("engine source", (esc(x.engine_source) for x in s)),
        row("arm", (esc(x.arm) for x in s)),
        row("seeds", (esc(" ".join(map(str, x.seeds))) for x in s)),
        row("days · checkpoints", (esc(f"{x.days} · {' '.join(map(str, x.checkpoints))}")
                                   for x in s)),
        row("top k", (esc(x.top_k) for x in s)),
        row("trust policy", (esc("n/a" if x.trust_policy is None else
                                 ("on" if x.trust_policy else "off")) for x in s)),
        row("generator · scorer", (esc(f"{x.generator_version} · {x.scorer_version}")
                                   for x in s)),
        row("embedding model", (esc(x.embedding_model) for x in s)),
        row("degraded", (esc("; ".join(degraded_reasons(r)) or "no") for r in reports)),
    ]
    if any(x.users for x in s):
        rows.append(row("shared store", (esc(shared_line(r)) if r.selection.users else "one user"
                                         for r in reports)))
    if any(r.origin for r in reports):
        rows.append(row("re-scored from", (
            esc(f"{r.origin.source} (sha256 {r.origin.sha256[:12]}…, scorer "
                f"{r.origin.scorer_version})") if r.origin else "" for r in reports)))
    rows.append(row("config", (
        "<details><summary>" + esc(f"{len(x.config)} values") + "</summary>"
        + "<br>".join(esc(f"{k} = {v}") for k, v in x.config.items()) + "</details>"
        for x in s)))
    heads = "".join(f"<th>{esc(label)}</th>" for label in labels)
    return f'<table class="selection"><tr><th></th>{heads}</tr>{"".join(rows)}</table>'


def _headline(reports: list[Report], labels: list[str]) -> str:
    cards = []
    for report, label in zip(reports, labels, strict=True):
        figs = []
        for metric in HEADLINE_METRICS:
            rate = report.metrics.get(metric)
            better = better_label(metric)
            if rate is None or rate.value is None:
                value, detail = "—", "n/a" if rate is None else "(0/0)"
            else:
                value = percent(rate.value)
                detail = (f"({rate.numerator}/{rate.denominator}) · 95% CI "
                          f"{percent(rate.low)}–{percent(rate.high)}")
            figs.append(f'<div class="fig" data-metric="{metric}"><small><code>{metric}</code>'
                        f"</small><b>{esc(value)}</b><small>{esc(detail)} · {better} is better"
                        f"</small></div>")
        warn = degraded_reasons(report)
        banner = (f'<p class="degraded">degraded run: {esc("; ".join(warn))}</p>'
                  if warn else "")
        cards.append(f'<div class="run"><h3>{esc(label)}</h3>{banner}{"".join(figs)}</div>')
    return f'<div class="cards" id="headline">{"".join(cards)}</div>'


def _by_kind(reports: list[Report], labels: list[str]) -> str:
    keys = []
    for r in reports:
        for kind, rates in r.by_kind.items():
            for metric in BY_KIND_V4.get(kind, tuple(rates)):
                if (kind, metric) not in keys:
                    keys.append((kind, metric))
    if not keys:
        return ""
    heads = "".join(f"<th>{esc(label)}</th>" for label in labels)
    rows = "".join(
        f"<tr><td>{esc(kind)}</td><td>{metric_link(metric)}</td>"
        + "".join(_rate_cell(r.by_kind.get(kind, {}).get(metric)) for r in reports)
        + f"<td>{esc(better_label(metric))}</td></tr>"
        for kind, metric in keys)
    title = kinds_title(kind for kind, _ in keys)
    return (f"<h3>{esc(title)}</h3><table><tr><th>kind</th>"
            f"<th>metric</th>{heads}<th>better</th></tr>{rows}</table>")


def _badge(cls: str | None, title: str | None = None) -> str:
    name = cls or "unscored"
    key = name if name in CLASS_COLOURS else "unscored"
    tip = f' title="{esc(title)}"' if title else ""
    return f'<span class="cls k-{key}"{tip}>{esc(name.replace("_", " "))}</span>'


def _class_css() -> str:
    """One CSS rule per hit class: its heat-map colour, with ink that reads on it."""
    rules = [f".k-{c}{{background:{colour};color:{'#fff' if c in _DARK_CLASSES else '#111'}}}"
             f"details.b-{c}{{border-color:{colour}}}" for c, colour in CLASS_COLOURS.items()]
    return "".join(rules) + ".k-unscored{background:#fff}"


def _first_hits(reports: list[Report], labels: list[str]) -> str:
    heads = "".join(f"<th>{esc(label)}</th>" for label in labels)
    rows = []
    of_report = [scorer_classes(r) for r in reports]
    for cls in [c for c in HIT_CLASSES if any(c in classes for classes in of_report)]:
        cells = []
        for r, classes in zip(reports, of_report, strict=True):
            total = sum(r.first_hit_counts.values())
            # a class its scorer does not give is n/a for that report, never 0%
            cells.append(_rate_cell(Rate.of(r.first_hit_counts.get(cls, 0), total)
                                    if cls in classes else None))
        name = "no value-bearing hit" if cls == "none" else cls
        rows.append(f"<tr><td>{_badge(cls)} {esc(name) if cls == 'none' else ''}</td>"
                    f"{''.join(cells)}</tr>")
    return (f"<h3>First value-bearing hit (answerable questions)</h3><table><tr><th>class</th>"
            f"{heads}</tr>{''.join(rows)}</table>")


def _missed(reports: list[Report]) -> list[dict[str, list[tuple[int, ProbeRecord]]]]:
    """Per report, per stage: the (seed, question) of each wrong first answer."""
    from rotbench.results.files.worlds import iter_worlds
    from rotbench.scoring.miss_stages import question_stages

    out: list[dict[str, list[tuple[int, ProbeRecord]]]] = []
    for r in reports:
        stages: dict[str, list[tuple[int, ProbeRecord]]] = {}
        if r.miss_stages is not None:
            for world in iter_worlds(r):
                for i, stage in sorted(question_stages(world).items()):
                    stages.setdefault(stage, []).append((world.seed, world.probes[i]))
        out.append(stages)
    return out


def family_stages_section(reports: list[Report], labels: list[str]) -> str:
    """"Wrong first answers by family": per other question family and stage, its share of
    the family's questions in each report (``Report.family_miss_stages``); empty when no
    report has it."""
    if all(not r.family_miss_stages for r in reports):
        return ""
    families = list(dict.fromkeys(f for r in reports for f in (r.family_miss_stages or {})))
    heads = "".join(f"<th>{esc(label)}</th>" for label in labels)
    rows = []
    for family in families:
        stages = list(dict.fromkeys(s for r in reports
                                    if (got := (r.family_miss_stages or {}).get(family))
                                    for s in got.stages))
        for stage in stages:
            cells = []
            for r in reports:
                got = (r.family_miss_stages or {}).get(family)
                cells.append(_rate_cell(None if got is None else
                                        Rate.of(got.stages.get(stage, 0), got.questions)))
            rows.append(f"<tr><td><code>{esc(family, 40)}: {esc(stage, 40)}</code></td>"
                        f"{''.join(cells)}</tr>")
    return ("<h3>Wrong first answers by family</h3><p>Premise, successor and cascade "
            "questions keep their stage above; retracted and dependent questions (no current "
            "value) went wrong when an ended value came first: kept (nothing framed it as "
            "past) or outranked (a hit did). Each as a share of the family's questions.</p>"
            f"<table><tr><th>family: stage</th>{heads}</tr>{''.join(rows)}</table>")


def miss_stages_section(reports: list[Report], labels: list[str]) -> str:
    """"Wrong first answers by stage": a count per stage and report, each linking to the
    list of its questions (seed, day, attribute, question, the first hit's class)."""
    if all(r.miss_stages is None for r in reports):
        return ""
    missed = _missed(reports)
    stages = list(dict.fromkeys(s for r in reports for s in (r.miss_stages or {})))
    heads = "".join(f"<th>{esc(label)}</th>" for label in labels)
    rows = []
    for j, stage in enumerate(stages):
        cells = []
        for i, r in enumerate(reports):
            if r.miss_stages is None:
                cells.append(_rate_cell(None))
                continue
            rate = Rate.of(r.miss_stages.get(stage, 0),
                           miss_denominator(r) or sum(r.miss_stages.values()))
            cells.append(_rate_cell(rate, f' <a href="#miss-{i}-{j}">questions</a>'))
        rows.append(f"<tr><td><code>{esc(stage, 40)}</code></td>{''.join(cells)}</tr>")
    lists = []
    for i, (label, by_stage) in enumerate(zip(labels, missed, strict=True)):
        for j, stage in enumerate(stages):
            items = "".join(
                f"<li>seed {seed} · day {p.day} · {esc((p.attribute or '').replace('_', ' '))}"
                f" · first: {_badge(_first_class(p))} · <span class=muted>"
                f"{esc(p.question, 300)}</span></li>" for seed, p in by_stage.get(stage, []))
            lists.append(f'<details id="miss-{i}-{j}"><summary>{esc(label)}: '
                         f"{esc(stage, 40)} ({len(by_stage.get(stage, []))})</summary>"
                         f"<ul>{items}</ul></details>")
    return ("<h3>Wrong first answers by stage</h3><p>Each question whose first value-bearing "
            "hit is not the current value: never seen in the top k since it became current, "
            "lost (seen before, not now), outranked (in the top k, not first), or abstained "
            "(no hit); each stage over current_first's denominator (the questions with a "
            "current value), as in the terminal, compare and DuckDB."
            f"</p><table><tr><th>stage</th>{heads}</tr>{''.join(rows)}</table>"
            + "".join(lists))


def _repeats(reports: list[Report], labels: list[str]) -> str:
    from rotbench.results.presentation.repeats import repeats_html

    return repeats_html(reports, labels, esc, _rate_cell)


def _floor_sweep(reports: list[Report], labels: list[str]) -> str:
    out = ["<h3>Relevance floor sweep (raw cosine; lower is better)</h3>"]
    for r, label in zip(reports, labels, strict=True):
        if r.floor_sweep is None:
            out.append(f"<p>{esc(label)}: not applicable (some hits report no raw "
                       "cosine similarity)</p>")
            continue
        rows = "".join(f'<tr><td class="n">{row.floor:.2f}</td>'
                       f"{_rate_cell(row.unanswerable_passing)}"
                       f"{_rate_cell(row.answerable_refused)}</tr>" for row in r.floor_sweep)
        out.append(f"<details><summary>{esc(label)}</summary><table><tr><th>floor</th>"
                   f"<th>unanswerable still answered</th><th>answerable refused</th></tr>"
                   f"{rows}</table></details>")
    return "".join(out)


def _real_pairs(reports: list[Report], labels: list[str]) -> str:
    """The real-pairs block of each report that has one (never pooled with the worlds)."""
    out = []
    for r, label in zip(reports, labels, strict=True):
        block = getattr(r, "real_pairs", None)
        if block is None:
            continue
        if not block.scored:
            out.append(f"<p>{esc(label)}: not scored ({esc(block.reason or 'no reason given')})"
                       "</p>")
            continue
        rows = "".join(f"<tr><td>{esc(name.replace('_', ' '))}</td>{_rate_cell(rate)}</tr>"
                       for name, rate in block.rates.items())
        verdicts = "".join(
            f"<tr><td>{esc(ruling)}</td>" + "".join(f'<td class="n">{esc(n)}</td>'
                                                    for n in counts.values()) + "</tr>"
            for ruling, counts in block.table.items())
        heads = "".join(f"<th>checks: {esc(k)}</th>" for k in
                        next(iter(block.table.values()), {}))
        out.append(f"<h3>{esc(label)}: {len(block.pairs)} ruled pairs from "
                   f"<code>{esc(block.rulings_file or '')}</code></h3><table><tr><th>outcome"
                   f"</th><th>rate</th></tr>{rows}</table><table><tr><th>ruling</th>{heads}"
                   f"</tr>{verdicts}</table>")
    if not out:
        return ""
    return ("<h2 id=real-pairs>Real pairs</h2><p>The checks against people's rulings on pairs "
            "from a real store; never pooled with the world figures.</p>" + "".join(out))


def _plots(plots: list[Plot]) -> str:
    return "".join(
        f'<figure id="plot-{esc(p.name)}" data-plot="{esc(p.name)}">{p.svg}'
        f"<figcaption>{esc(p.title)}</figcaption></figure>" for p in plots)


def _notes(reports: list[Report], labels: list[str]) -> str:
    out = []
    for r, label in zip(reports, labels, strict=True):
        items = "".join(f"<li>{esc(n)}</li>" for n in r.notes) or "<li>none</li>"
        out.append(f"<h3>{esc(label)}</h3><ul>{items}</ul>")
    return "".join(out)


def _truth_line(probe: ProbeRecord) -> str:
    t = probe.truth
    if t is None:
        kind = probe.unanswerable or "unrelated"
        return (f'<p class="tr">unanswerable ({esc(kind.replace("_", " "))}): the world never '
                "says; any hit is an answer where none is due</p>")
    how = {"initial": "the first value", "transition": "set by a transition naming old and "
           "new", "restatement": "set by a restatement of the new value"}
    parts = [f"current <b>{esc_text(t.current)}</b> "
             f"({esc_text(how.get(t.latest_phrasing, t.latest_phrasing))})"]
    if t.superseded:
        parts.append("superseded " + esc(", ".join(t.superseded)))
    if t.poison:
        parts.append("untrusted " + esc(", ".join(f"{p.value} ({p.channel})" for p in t.poison)))
    if t.decoys:
        parts.append("decoys " + esc(", ".join(f"{d.value} ({d.kind})" for d in t.decoys)))
    if probe.others is not None and (probe.others.current or probe.others.history):
        parts.append("other users' values " + esc(", ".join(
            [f"{v} (current)" for v in probe.others.current]
            + [f"{v} (history)" for v in probe.others.history])))
    return f'<p class="tr">truth on day {t.day}: {"; ".join(parts)}</p>'


def _provenance(hit: ScoredHit) -> str:
    p = hit.provenance
    if p is None:
        return '<span class="muted">not reported</span>'
    bits = [p.document_uri, None if p.day is None else f"day {p.day}", p.status, p.lineage,
            p.claim_id]
    return esc_text(" · ".join(str(b) for b in bits if b is not None))


def _number(x: float | None) -> str:
    return "" if x is None else f"{x:.3f}"


def _scores(hit: ScoredHit) -> str:
    """'0.576' when similarity and ranking score agree (or one is missing), else both."""
    sim, score = _number(hit.similarity), _number(hit.score)
    if not sim or not score or sim == score:
        return sim or score
    return f"{sim} / {score}"


def _first_class(probe: ProbeRecord) -> str:
    hits = sorted(probe.hits, key=lambda h: h.rank)
    return next((h.cls for h in hits if h.cls not in (None, "none")), "none")


def _hits_table(probe: ProbeRecord) -> str:
    """The top-k hits as compact rows (optional end tags left out: the page stays small)."""
    hits = sorted(probe.hits, key=lambda h: h.rank)
    if not hits:
        return "<p class=muted>no hits</p>"
    rows = "".join(
        f"<tr><td>{h.rank}<td class=k-{h.cls if h.cls in CLASS_COLOURS else 'unscored'}>"
        f"{esc_text((h.cls or 'unscored').replace('_', ' '))}<td>{esc_text(h.text or '')}"
        f"<td>{_scores(h)}<td>{_provenance(h)}" for h in hits)
    return ("<table class=h><tr><th>rank<th>class<th>text<th>similarity / score"
            f"<th>provenance{rows}</table>")


def _question(key: tuple, probes: list[ProbeRecord | None], labels: list[str]) -> str:
    """One question (same seed, day and question in every report) with each report's hits."""
    day, user, attribute, question = key
    known = [p for p in probes if p is not None]
    subject = esc(attribute.replace("_", " ")) if attribute else "unanswerable"
    if user:
        subject = f"for {esc(user, 60)} · {subject}"
    firsts = " ".join(
        (_badge(_first_class(p), label if len(probes) > 1 else None) if p is not None
         else "<span class=muted>—</span>") for p, label in zip(probes, labels, strict=True))
    summary = (f"day {day} · {subject} · first: {firsts} · "
               f"<span class=muted>{esc(question, 300)}</span>")
    parts = [_truth_line(known[0])]
    for probe, label in zip(probes, labels, strict=True):
        if len(probes) > 1:
            parts.append(f"<p class=tr><b>{esc(label)}</b></p>")
        parts.append("<p class=muted>not asked</p>" if probe is None else _hits_table(probe))
    border = _first_class(known[0]) if len(known) == 1 else "none"
    fail = " fail" if any(question_fails(p) for p in probes) else ""
    return (f'<details class="q b-{border}{fail}"><summary>{summary}</summary>'
            f"{''.join(parts)}</details>")


def _drilldown(reports: list[Report], labels: list[str]) -> str:
    """Per seed, every question asked, each with every report's hits side by side."""
    seeds: list[int] = []
    table: dict[int, dict[tuple, list[ProbeRecord | None]]] = {}
    from rotbench.results.files.worlds import iter_worlds

    for i, r in enumerate(reports):
        for world in iter_worlds(r):
            if world.seed not in table:
                seeds.append(world.seed)
                table[world.seed] = {}
            for probe in world.probes:
                key = (probe.day, probe.user or "", probe.attribute, probe.question)
                slots = table[world.seed].setdefault(key, [None] * len(reports))
                slots[i] = probe
    out = []
    for seed in seeds:
        keys = sorted(table[seed], key=lambda k: (k[0], k[1], k[2] is None, k[2] or k[3]))
        out.append(f"<details><summary>seed {seed}: {len(keys)} questions</summary>"
                   + "".join(_question(k, table[seed][k], labels) for k in keys)
                   + "</details>")
    return "".join(out)


def denominators_html(reports: list[Report], labels: list[str]) -> str:
    """The denominator legend of each report (``render.denominator_legend``: the lines the
    terminal prints under its tables, the words of ``docs/metrics.md``'s summary table), one
    ``<p class=den>`` per line, each report's under its label when there are several."""
    out = []
    for report, label in zip(reports, labels, strict=True):
        lines = denominator_legend(report)
        head = lines[0] if len(reports) == 1 else f"{label}: {lines[0]}"
        out.append(f'<div class=denominators><p>{esc(head)}</p>'
                   + "".join(f"<p class=den>{esc(line.strip())}</p>" for line in lines[1:])
                   + "</div>")
    return "".join(out)


def render_html(reports: list[Report], plots: list[Plot], sources: list[str] | None = None,
                force: bool = False) -> str:
    """The page for ``reports`` (the first is the baseline column) with ``plots`` inline.

    ``sources``: where each report came from (a file or 'run id in <db>'), shown in the
    selection. With several reports the family tables are ``compare_reports(reports,
    force)`` (raises ``CompareError`` for reports on different worlds unless ``force``).
    Raises ValueError for no reports.
    """
    if not reports:
        raise ValueError("no reports")
    labels = run_labels(reports)
    sources = sources or ["" for _ in reports]
    if len(reports) > 1:
        comparison: Comparison | None = compare_reports(reports, force=force)
        legend = "".join(f"<p>{esc(line)}</p>" for line in legend_lines(comparison))
        legend += ("<p>Hover a mark for the difference; choose the baseline below. Every "
                   "figure reads value (n/d) with its 95% Wilson interval; each metric name "
                   "links to its definition.</p>")
        legend += "".join(f"<p class=muted>note: {esc(n)}</p>" for n in comparison.notes)
        figures = baseline_sections(reports, labels, force, _family_tables)
    else:
        figures = _family_tables(single_families(reports[0]), labels)
        legend = ("<p>Every figure reads value (n/d) with its 95% Wilson interval; each "
                  "metric name links to its definition.</p>")
    legend += denominators_html(reports, labels)
    title = "rotbench report: " + ", ".join(labels)
    from rotbench.results.presentation.diagnosis import diagnosis_html, report_diagnosis

    diagnosis = diagnosis_html(reports, labels, [report_diagnosis(r) for r in reports],
                               metric_link)
    nav = ("<p class=sub>Sections: <a href='#diagnosis'>what to fix first</a> · "
           "<a href='#selection'>selection</a> · <a href='#figures'>"
           "figures</a> · <a href='#plots'>plots</a> · <a href='#notes'>notes</a> · "
           "<a href='#questions'>questions</a></p>")
    body = (
        f"<h1>{esc(title)}</h1><p class=sub>{esc(selection_line(reports))}</p>{nav}"
        f"{_headline(reports, labels)}{diagnosis}"
        f"<h2 id=selection>What ran</h2>{_selection_table(reports, labels, sources)}"
        f"<h2 id=figures>Figures by family</h2>{legend}{figures}"
        f"{_by_kind(reports, labels)}{_first_hits(reports, labels)}"
        f"{miss_stages_section(reports, labels)}{family_stages_section(reports, labels)}"
        f"{noise_section(reports, labels)}{_repeats(reports, labels)}"
        f"{_floor_sweep(reports, labels)}"
        f"{_real_pairs(reports, labels)}"
        f"<h2 id=plots>Plots</h2>{_plots(plots)}"
        f"<h2 id=notes>Notes</h2>{_notes(reports, labels)}"
        "<h2 id=questions>Every question</h2><p>Each question with the truth on its day and "
        "its top-k hits as the engine returned them, each hit's class under the report's "
        "scorer and its provenance; the summary line shows the class of the first "
        "value-bearing hit (one per report, in column order).</p>"
        f"{SWITCH}{_drilldown(reports, labels)}"
    )
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{_CSS}{_class_css()}{TOOLS_CSS}"
        f"{baseline_css(len(reports))}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def page_path_problem(path: Path, force: bool = False) -> str | None:
    """Why ``path`` cannot take an HTML page (None when it can): the rule for every file
    rotbench writes into a user's folder (``rotbench._util.outputs.replace_problem``): a folder,
    a symlink, or an existing file rotbench did not write there, unless ``force``."""
    from rotbench._util.outputs import replace_problem

    return replace_problem(Path(path), force=force)


def default_plots_dir(html_path: Path) -> Path:
    """Where the plot files of a page go by default: ``<page name>-plots`` beside it."""
    return html_path.parent / f"{html_path.stem}-plots"


def write_page(reports: list[Report], html_path: Path | None, plots_dir: Path | None,
               sources: list[str] | None = None, force: bool = False,
               plots: list[Plot] | None = None, *, replace: bool = False
               ) -> tuple[int, list[Path]]:
    """Draw the plots (unless given as ``plots``), write the page to ``html_path`` and the
    plot files (SVG and PNG) to ``plots_dir`` (either may be None), each file atomically.

    Files already there are replaced only when rotbench wrote them, or with ``replace``
    (``rotbench._util.outputs.write_user_files``); every target is checked before anything is
    written. Returns (page size in bytes, plot files written). Raises ``CompareError`` for
    several reports on different worlds unless ``force``, ``OutputError`` (a ValueError)
    for a target that may not be replaced, OSError when a write fails.
    """
    from rotbench._util.outputs import check_user_files, write_user_files
    from rotbench.results.presentation.compare import CompareError, check_same_worlds
    from rotbench.results.presentation.plots import build_plots, plot_names, write_plots

    if len(reports) > 1 and not force:
        reason = check_same_worlds(reports)
        if reason is not None:
            raise CompareError(f"the reports ran on different worlds: {reason} "
                               "(--force shows them together anyway)")
    if html_path is not None:
        check_user_files("--html", [Path(html_path)], force=replace)
    if plots_dir is not None:  # refused before any figure is drawn (seconds)
        names = plot_names(reports) if plots is None else [p.name for p in plots]
        check_user_files("--plots", [Path(plots_dir) / f"{name}.{ext}" for name in names
                                     for ext in ("svg", "png")], force=replace)
    if plots is None:
        plots = build_plots(reports, png=plots_dir is not None)
    size = 0
    if html_path is not None:
        page = render_html(reports, plots, sources=sources, force=force).encode()
        write_user_files("--html", [(Path(html_path), page)], force=replace)
        size = len(page)
    written = write_plots(plots, plots_dir, force=replace) if plots_dir is not None else []
    return size, written
