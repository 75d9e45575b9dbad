"""Plots of one report or several side by side (matplotlib), as SVG text and PNG bytes.

Every figure says what ran in its title (arm, seeds, days, engine, scorer) and labels its axes
with units: rates are percent of a named denominator, time is the simulated day of the
checkpoint. Several reports share one figure, one line (or bar) per report, told apart by
colour and marker; intervals are the reports' own 95% Wilson intervals.

Figures (``Plot.name``):

- ``family-<name>``: each metric of a family against the checkpoint day, one line per report
  with its Wilson band; a family none of the reports carries (decoys under scorer v2) is
  skipped;
- ``first-hit-heatmap``: attribute x checkpoint day (one column per seed inside each day),
  coloured by the class of the first value-bearing hit; one panel per report;
- ``phrasing``: ``current_first`` and ``stale_over_current`` when the current value was set by
  a transition vs a restatement, bars with Wilson intervals;
- ``poison-by-channel``: the poison metrics per channel, bars with Wilson intervals;
- ``evidence`` (generator 5; only when some report has ``by_evidence``): ``current_first``
  per evidence bucket (how many statements of the current value the store had received
  before the question), bars with Wilson intervals.

Only the object API is used (``matplotlib.figure.Figure``): no pyplot state, no GUI backend.
Text that came from a report is cut, stripped of control characters and has ``$`` escaped
(matplotlib would read it as mathematics). SVG output keeps text as text and is
deterministic (fixed id salt, no date).
"""

from __future__ import annotations

import functools
import io
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rotbench._util.safe_text import printable
from rotbench.results.schema import Report
from rotbench.scoring.metrics import (
    EVIDENCE_BUCKETS,
    FAMILIES,
    POISON_METRICS,
    Rate,
    better_label,
)
from rotbench.scoring.models import HIT_CLASSES
from rotbench.world.models import CHANNELS

if TYPE_CHECKING:
    from matplotlib.figure import Figure
# matplotlib and numpy are imported where a figure is drawn: the page's text (labels,
# colours, ``Plot``) and a page whose figures come from
# ``rotbench.results.presentation.plot_cache`` never
# pay for their import

COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442")
"""Okabe-Ito colours, one per report (they stay distinct for colour-blind readers)."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""One marker per report, so lines are told apart in grey too."""

CLASS_COLOURS: dict[str, str] = {
    "current": "#1a9850",
    "mixed": "#a6d96a",
    "history": "#92a8d1",
    "stale": "#d73027",
    "poison_asserted": "#40004b",
    "poison_attributed": "#c2a5cf",
    "decoy_asserted": "#8c510a",
    "decoy_framed": "#f6e8c3",
    "none": "#d9d9d9",
    "premature": "#f46d43",
    "planned": "#fee08b",
    "corrected": "#762a83",
}
"""Heat-map colour of each hit class ('none': no value-bearing hit in the top k)."""

DENOMINATORS: dict[str, str] = {
    "recall_current_at_k": "answerable questions",
    "current_first": "answerable questions",
    "stale_over_current": "questions on changed attributes",
    "stale_retained_at_k": "questions on changed attributes",
    "poison_leak_at_k": "questions on poisoned attributes",
    "poison_first": "questions on poisoned attributes",
    "poison_surfaced_at_k": "questions on poisoned attributes",
    "decoy_asserted_at_k": "questions on attributes with decoys",
    "decoy_first": "questions on attributes with decoys",
    "late_stale_first": "questions after a late document restating a superseded value",
    "premature_first": "questions before a scheduled change takes effect",
    "premature_at_k": "questions before a scheduled change takes effect",
    "corrected_served_at_k": "questions after a correction",
    "retracted_asserted_at_k": "questions after a retraction",
    "members_recall_at_k": "questions on a set with two members or more",
    "member_lost": "questions on a set after a member joined",
    "current_lost": "questions whose current value was recalled before",
    "control_recall_at_k": "questions on never-changing attributes",
    "answered_unanswerable": "unanswerable questions",
    "redundancy_at_k": "value-bearing hits",
    "cross_user_leak_at_k": "questions where another user holds a value the asker never knew",
    "cross_user_first": "questions where another user holds a value the asker never knew",
}
"""What each metric counts over (the y axis says '% of <this>')."""

PHRASINGS: tuple[str, ...] = ("transition", "restatement")
PHRASING_METRICS: tuple[str, ...] = ("current_first", "stale_over_current")
_DPI = 110
_RC = {
    "svg.fonttype": "none",  # text stays text: small files, selectable, searchable
    "svg.hashsalt": "rotbench",
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.labelsize": 9.5,
    "legend.fontsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e6e6e6",
    "grid.linewidth": 0.8,
}


@dataclass(frozen=True)
class Plot:
    """One rendered figure: ``name`` (file stem, e.g. 'family-currency'), ``title`` (one line,
    for a caption), ``svg`` (the SVG document's text, from ``<svg`` on) and ``png`` (bytes;
    empty when not asked for)."""

    name: str
    title: str
    svg: str
    png: bytes


def safe_label(text: object, limit: int = 60) -> str:
    """Report-derived text as a matplotlib label: one printable line, cut to ``limit``
    characters, ``$`` escaped so it is never read as mathematics."""
    return printable(text, limit).replace("$", r"\$")


def run_labels(reports: list[Report]) -> list[str]:
    """A short, distinct label per report: the engine name, then as much of arm, scorer,
    trust policy, engine version, ``--engine`` value and run id as it takes to tell them
    apart."""
    parts = [[r.selection.engine] for r in reports]
    extras = (
        lambda r: f"arm {r.selection.arm}",
        lambda r: f"scorer {r.selection.scorer_version}",
        lambda r: "" if r.selection.trust_policy is None else
        f"trust {'on' if r.selection.trust_policy else 'off'}",
        lambda r: r.selection.engine_version,
        lambda r: r.selection.engine_source,  # an engine of your own named like a built-in
        lambda r: r.run_id[-6:],
        lambda r: r.run_id,
    )
    for extra in extras:
        if len({" ".join(p) for p in parts}) == len(parts):
            break
        values = [extra(r) for r in reports]
        if len(set(values)) > 1:
            for p, v in zip(parts, values, strict=True):
                if v:
                    p.append(v)
    labels = [" · ".join(p) for p in parts]
    if len(set(labels)) < len(labels):  # identical runs: number them
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    return [safe_label(label, 70) for label in labels]


def _joined(values: Iterable[object]) -> str:
    seen: list[str] = []
    for v in values:
        if str(v) not in seen:
            seen.append(str(v))
    return ", ".join(seen)


def selection_line(reports: list[Report]) -> str:
    """One line saying what ran: arm, seeds, days, engines and scorer (distinct values)."""
    s = [r.selection for r in reports]
    seeds = _joined(" ".join(map(str, x.seeds)) for x in s)
    engines = _joined(f"{x.engine} {x.engine_version}" for x in s)
    return safe_label(
        f"arm {_joined(x.arm for x in s)} · seeds {seeds} · {_joined(x.days for x in s)} days"
        f" · engine{'s' if len(set(engines.split(', '))) > 1 else ''} {engines}"
        f" · scorer {_joined(x.scorer_version for x in s)}", 200)


def _pct(rate: Rate | None) -> tuple[float, float, float]:
    if rate is None or rate.value is None:
        nan = float("nan")
        return nan, nan, nan
    return 100 * rate.value, 100 * rate.low, 100 * rate.high


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=_DPI, layout="constrained")


Drawn = tuple[str, str, "Figure"]
"""A drawn figure before rendering: (name, title, figure)."""


def _render(name: str, title: str, fig: Figure, png: bool = True) -> Plot:
    svg = io.StringIO()
    fig.savefig(svg, format="svg", metadata={"Date": None})
    text = svg.getvalue()
    text = text[text.index("<svg"):]
    # drop the RDF block (creator, licence): bytes a reader never sees
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.DOTALL)
    if not png:
        return Plot(name=name, title=title, svg=text, png=b"")
    fig.set_layout_engine("none")  # keep the layout the SVG got: the PNG is the same picture
    data = io.BytesIO()
    fig.savefig(data, format="png", dpi=_DPI, metadata={"Software": None})
    return Plot(name=name, title=title, svg=text, png=data.getvalue())


def _title(fig: Figure, what: str, reports: list[Report]) -> str:
    """Set the figure's title (what it shows, then what ran, wrapped to the figure's width);
    returns it as one line for a caption."""
    line = selection_line(reports)
    width = int(fig.get_figwidth() * 14)  # characters of 10.5 pt text per inch, roughly
    wrap = textwrap.TextWrapper(width, break_on_hyphens=False).wrap
    fig.suptitle("\n".join([*wrap(what), *wrap(line)]),
                 fontsize=10.5, linespacing=1.5)
    return f"{what} ({line})"


def _ylabel(ax, text: str) -> None:
    ax.set_ylabel("\n".join(textwrap.wrap(text, 40)))


def _legend(fig: Figure, labels: list[str], bars: bool = False) -> None:
    """One legend for the whole figure, below it (only when there are several reports)."""
    if len(labels) < 2:
        return
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if bars:
        handles = [Patch(facecolor=COLOURS[i % len(COLOURS)], alpha=0.85, label=label)
                   for i, label in enumerate(labels)]
    else:
        handles = [Line2D([], [], color=COLOURS[i % len(COLOURS)],
                          marker=MARKERS[i % len(MARKERS)], label=label)
                   for i, label in enumerate(labels)]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(labels), 4),
               frameon=False)


def metric_title(metric: str) -> str:
    """A panel's title: the metric and its direction, wrapped to lines of at most
    ``TITLE_CHARS`` characters so that a long one stays inside its panel."""
    import textwrap

    return "\n".join(textwrap.wrap(f"{metric} ({_better(metric)})", TITLE_CHARS))


TITLE_CHARS = 40
"""Longest line of a panel title, characters (a panel is at least 4 inches wide)."""


def _better(metric: str) -> str:
    label = better_label(metric)
    return f"{label} is better" if label in ("higher", "lower") else f"no direction, read {label}"


def _present(metrics: tuple[str, ...], reports: list[Report]) -> list[str]:
    """The metrics of ``metrics`` some report carries (a family's plot draws these)."""
    return [m for m in metrics if any(m in r.metrics for r in reports)]


def _has_evidence(reports: list[Report]) -> bool:
    """Whether some report has the evidence breakdown (the ``evidence`` plot is drawn)."""
    return any(r.by_evidence is not None for r in reports)


def family_plot(family: str, metrics: tuple[str, ...], reports: list[Report]) -> Drawn | None:
    """Each metric of ``family`` over the checkpoint days, one line per report with its 95%
    Wilson band; None when no report carries any of the family's metrics."""
    present = _present(metrics, reports)
    if not present:
        return None
    labels = run_labels(reports)
    fig = _figure(max(4.6 * len(present), 6.4), 3.9 + 0.3 * (len(reports) > 1))
    axes = fig.subplots(1, len(present), squeeze=False)[0]
    spans = [max(r.by_checkpoint) - min(r.by_checkpoint) for r in reports if r.by_checkpoint]
    dodge = 0.015 * max(spans, default=0) if len(reports) > 1 else 0.0
    for ax, metric in zip(axes, present, strict=True):
        for i, report in enumerate(reports):
            days = sorted(report.by_checkpoint)
            points = [_pct(report.by_checkpoint[d].get(metric)) for d in days]
            if metric not in report.metrics or not days:
                continue
            colour = COLOURS[i % len(COLOURS)]
            # several reports: shift each a little sideways so equal values stay visible
            xs = [d + dodge * (i - (len(reports) - 1) / 2) for d in days]
            ax.fill_between(xs, [p[1] for p in points], [p[2] for p in points],
                            color=colour, alpha=0.12, linewidth=0)
            ax.plot(xs, [p[0] for p in points], color=colour, marker=MARKERS[i % len(MARKERS)],
                    markersize=5, linewidth=1.8, label=labels[i])
            ax.set_xticks(days)
        if not any(p.value is not None for r in reports
                   for p in (r.by_checkpoint[d].get(metric) for d in r.by_checkpoint) if p):
            ax.text(0.5, 0.5, "no question in this metric's denominator", ha="center",
                    va="center", transform=ax.transAxes, color="#666666")
        ax.set_ylim(-3, 103)
        ax.set_title(metric_title(metric))
        ax.set_xlabel("checkpoint (simulated day)")
        _ylabel(ax, f"% of {DENOMINATORS.get(metric, 'questions')}")
    _legend(fig, labels)
    title = _title(fig, f"{family} over simulated time (bands: 95% Wilson interval)", reports)
    return (family_plot_name(family), title, fig)


def family_plot_name(family: str) -> str:
    """The file name stem of ``family``'s plot (``Hard cases``: ``family-hard-cases``)."""
    return "family-" + "-".join(family.lower().split())


def _first_classes(report: Report) -> tuple[list[str], list[int], list[int], dict]:
    """(attributes, days, seeds, {(attribute, day, seed): class of the first value-bearing
    hit, 'none' when there is none}) over the answerable questions."""
    from rotbench.results.files.worlds import iter_worlds

    cells: dict[tuple[str, int, int], str] = {}
    for world in iter_worlds(report):
        for probe in world.probes:
            if probe.attribute is None:
                continue
            hits = sorted(probe.hits, key=lambda h: h.rank)
            first = next((h.cls for h in hits if h.cls not in (None, "none")), "none")
            cells[(probe.attribute, probe.day, world.seed)] = first
    attributes = sorted({a for a, _, _ in cells})
    days = sorted({d for _, d, _ in cells})
    seeds = [w.seed for w in report.worlds]
    return attributes, days, seeds, cells


def heatmap_plot(reports: list[Report]) -> Drawn:
    """Attribute x checkpoint day, coloured by the class of the first value-bearing hit; each
    day is split into one column per seed; one panel per report."""
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    labels = run_labels(reports)
    codes = {cls: i for i, cls in enumerate(HIT_CLASSES)}
    cmap = ListedColormap([CLASS_COLOURS[c] for c in HIT_CLASSES]).with_extremes(bad="white")
    data = [_first_classes(r) for r in reports]
    rows = max((len(d[0]) for d in data), default=1)
    fig = _figure(9.6, 1.4 + len(reports) * (0.3 * rows + 1.2))
    axes = fig.subplots(len(reports), 1, squeeze=False)[:, 0]
    used: set[str] = set()
    for ax, label, (attributes, days, seeds, cells) in zip(axes, labels, data, strict=True):
        n = max(len(seeds), 1)
        grid = np.full((len(attributes), len(days) * n), np.nan)
        for (a, d, s), cls in cells.items():
            grid[attributes.index(a), days.index(d) * n + seeds.index(s)] = codes[cls]
            used.add(cls)
        # a raster inside the SVG (a few hundred bytes), cells parted by white lines
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(HIT_CLASSES) - 0.5, aspect="auto",
                  interpolation="nearest", extent=(0, grid.shape[1], grid.shape[0], 0))
        for i in range(1, len(attributes)):
            ax.axhline(i, color="white", linewidth=0.8)
        for j in range(1, grid.shape[1]):
            ax.axvline(j, color="white", linewidth=4 if j % n == 0 else 0.8)
        ax.set_yticks([i + 0.5 for i in range(len(attributes))],
                      [safe_label(a.replace("_", " "), 30) for a in attributes])
        ax.set_xticks([(j + 0.5) * n for j in range(len(days))], [str(d) for d in days])
        ax.grid(False)
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        seed_text = " ".join(map(str, seeds))
        ax.set_xlabel("checkpoint (simulated day)" if n == 1 else
                      "checkpoint (simulated day); within each day one column per seed "
                      f"({safe_label(seed_text, 60)}, left to right)")
        ax.set_title(label, loc="left", fontsize=10, fontweight="bold")
    handles = [Patch(facecolor=CLASS_COLOURS[c], edgecolor="#999999", linewidth=0.5,
                     label="no value-bearing hit" if c == "none" else c.replace("_", " "))
               for c in HIT_CLASSES if c in used or c in ("current", "stale", "none")]
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 5),
               frameon=False, title="class of the first value-bearing hit")
    title = _title(fig, "First value-bearing hit per attribute and checkpoint", reports)
    return ("first-hit-heatmap", title, fig)


def _bars(ax, groups: list[str], series: list[list[Rate | None]], labels: list[str]) -> None:
    """Grouped bars: ``series[i][g]`` is report i's rate in group g; Wilson error bars and
    the counts above each bar."""
    n = len(series)
    width = 0.8 / max(n, 1)
    for i, rates in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        pcts = [_pct(r) for r in rates]
        heights = [0 if p[0] != p[0] else p[0] for p in pcts]
        colour = COLOURS[i % len(COLOURS)]
        ax.bar(xs, heights, width * 0.92, color=colour, label=labels[i], alpha=0.85)
        for x, p, r in zip(xs, pcts, rates, strict=True):
            if r is None:
                ax.text(x, 2, "n/a", ha="center", va="bottom", fontsize=7.5, rotation=90)
                continue
            if p[0] == p[0]:
                ax.errorbar([x], [p[0]], yerr=[[p[0] - p[1]], [p[2] - p[0]]], color="#333333",
                            capsize=2.5, linewidth=1)
            top = p[2] if p[2] == p[2] else 0
            ax.text(x, top + 2, f"{r.numerator}/{r.denominator}", ha="center", va="bottom",
                    fontsize=7.5, rotation=90 if n > 2 else 0)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 125)
    ax.set_yticks(range(0, 101, 20))
    ax.grid(axis="x", visible=False)


def _bar_panels(reports: list[Report], width: float, metrics: Sequence[str],
                groups: list[str], names: list[str],
                cut: Callable[[Report], dict[str, dict[str, Rate]]], xlabel: str,
                ylabel: Callable[[str], str]) -> Figure:
    """A figure ``width`` inches wide with one panel per metric of ``metrics``: per entry of
    ``groups`` (shown as ``names``) a bar per report, its ``cut(report)[group][metric]`` (no
    bar where the report has none), the x axis titled ``xlabel``, the y axis
    ``ylabel(metric)``, and one legend of the reports."""
    labels = run_labels(reports)
    fig = _figure(width, 4.3)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, metric in zip(axes, metrics, strict=True):
        series = [[cut(r).get(g, {}).get(metric) for g in groups] for r in reports]
        _bars(ax, names, series, labels)
        ax.set_title(metric_title(metric))
        ax.set_xlabel(xlabel)
        _ylabel(ax, ylabel(metric))
    _legend(fig, labels, bars=True)
    return fig


def phrasing_plot(reports: list[Report]) -> Drawn:
    """``current_first`` and ``stale_over_current`` by how the current value was worded
    (a transition naming old and new, or a restatement of the new value only)."""
    fig = _bar_panels(reports, 9.6, PHRASING_METRICS, list(PHRASINGS), list(PHRASINGS),
                      lambda r: r.by_phrasing, "how the change to the current value was worded",
                      lambda metric: f"% of {DENOMINATORS[metric]}")
    title = _title(fig, "Transition vs restatement (error bars: 95% Wilson; counts n/d)",
                   reports)
    return ("phrasing", title, fig)


def poison_plot(reports: list[Report]) -> Drawn:
    """Each poison metric per channel (relay, tool_turn, source), one bar per report."""
    channels = [c for c in CHANNELS if any(c in r.by_channel for r in reports)]
    fig = _bar_panels(reports, 12.0, POISON_METRICS, channels,
                      [c.replace("_", " ") for c in channels], lambda r: r.by_channel,
                      "channel the untrusted value arrived by",
                      lambda metric: "% of questions poisoned via the channel")
    title = _title(fig, "Poison by channel (error bars: 95% Wilson; counts n/d)", reports)
    return ("poison-by-channel", title, fig)


def evidence_plot(reports: list[Report]) -> Drawn | None:
    """``current_first`` per evidence bucket (``EVIDENCE_BUCKETS``), one bar per report:
    currency against how often the user had stated the current value. None when no report
    has the breakdown (generators 1 to 4)."""
    if not _has_evidence(reports):
        return None
    labels = run_labels(reports)
    fig = _figure(7.2, 4.3)
    ax = fig.subplots()
    series = [[(r.by_evidence or {}).get(b, {}).get("current_first") for b in EVIDENCE_BUCKETS]
              for r in reports]
    _bars(ax, [f"{b} statement{'' if b == '1' else 's'}" for b in EVIDENCE_BUCKETS], series,
          labels)
    ax.set_title(metric_title("current_first"))
    ax.set_xlabel("statements of the current value delivered before the question")
    _ylabel(ax, f"% of {DENOMINATORS['current_first']} with that evidence")
    _legend(fig, labels, bars=True)
    title = _title(fig, "Currency against evidence (error bars: 95% Wilson; counts n/d)",
                   reports)
    return ("evidence", title, fig)


def build_plots(reports: list[Report], png: bool = True) -> list[Plot]:
    """Every figure for ``reports`` (one or more, the first is the baseline), in page order:
    the families, then the heat map, phrasing, poison by channel and (generator 5)
    currency against evidence. ``png=False`` leaves
    ``Plot.png`` empty (the page needs only the SVG; half the drawing time). Raises
    ValueError for no reports."""
    if not reports:
        raise ValueError("no reports to plot")
    import matplotlib

    with matplotlib.rc_context(_RC):
        drawn = [draw() for _, draw in _plan(reports)]
        return [_render(*d, png=png) for d in drawn if d is not None]


def _plan(reports: list[Report]) -> list[tuple[str, Callable[[], Drawn | None]]]:
    """The figures ``build_plots`` draws for ``reports``, in page order: (its ``Plot.name``,
    the call that draws it). A family none of the reports carries, and the evidence plot
    without a report that has the breakdown, are left out."""
    plan: list[tuple[str, Callable[[], Drawn | None]]] = [
        (family_plot_name(family), functools.partial(family_plot, family, metrics, reports))
        for family, metrics in FAMILIES.items() if _present(metrics, reports)]
    plan += [("first-hit-heatmap", functools.partial(heatmap_plot, reports)),
             ("phrasing", functools.partial(phrasing_plot, reports)),
             ("poison-by-channel", functools.partial(poison_plot, reports))]
    if _has_evidence(reports):
        plan.append(("evidence", functools.partial(evidence_plot, reports)))
    return plan


def plot_names(reports: list[Report]) -> list[str]:
    """The ``Plot.name`` of every figure ``build_plots(reports)`` draws, in its order,
    known without drawing: what a page's plot files will be called, so that a file there
    that may not be replaced is refused before the figures are drawn."""
    return [name for name, _ in _plan(reports)]


def write_plots(plots: list[Plot], folder: Path, *, force: bool = False,
                flag: str = "--plots") -> list[Path]:
    """Write ``<name>.svg`` and ``<name>.png`` of every plot into ``folder`` (created), each
    file atomically; a file that already holds exactly these bytes is left as it is (a
    rerun with unchanged figures syncs nothing to disk). Files already there are replaced
    only when rotbench wrote them (``rotbench._util.outputs.write_user_files``; else OutputError
    before anything is written, unless ``force``). Returns the paths of the plot files,
    written or already in place."""
    from rotbench._util.outputs import write_user_files

    folder = Path(folder)
    files = []
    for plot in plots:
        files += [(folder / f"{plot.name}.svg", plot.svg.encode()),
                  (folder / f"{plot.name}.png", plot.png)]
    return write_user_files(flag, files, force=force)
