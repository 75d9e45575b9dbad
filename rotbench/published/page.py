"""The results page of the shipped reports of record: ``rotbench report --published --html``
and ``docs/results/published.md``.

The page holds one table per metric (a row per engine; the oracle column with the noisy
``good`` and ``typical`` columns beside it; every figure ``value (n/d)`` with its 95% Wilson
interval), a heat map per arm of each kind's own figure (``BY_KIND_V4``: the kind's first
metric), and each record's manifest; every figure links to the manifest of the report it
comes from. Runs of the user's own may be added as rows (``Row``): each must pair with the
shipped reports of its arm (``store.pairing_problem``).

Every text read from a shipped file or a user's report is escaped (``html.esc``) or, in the
markdown, reduced to printable text with markdown's table characters removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rotbench._util.safe_text import printable
from rotbench.published.models import ARMS, ArmFile, Record
from rotbench.results.presentation.html import PAGE_CSS, esc
from rotbench.results.presentation.html_tools import metric_link
from rotbench.results.presentation.percent import percent
from rotbench.results.presentation.render import format_rate
from rotbench.results.schema import Report
from rotbench.scoring.metrics import BY_KIND_V4, Rate, better_label

ARM_TITLES: dict[str, str] = {"oracle": "oracle", "noisy-good": "noisy good",
                              "noisy-typical": "noisy typical"}
"""Each shipped arm's column heading."""

_PAGE_CSS = """
td.h{text-align:right;white-space:nowrap;font-size:.9em}
td.n a,td.h a{color:inherit;text-decoration:none}
table.manifest th{text-align:left;font-weight:normal;color:#555}
.yours{font-weight:bold}
"""


@dataclass
class Row:
    """One engine's row: its report on each arm (absent: not shipped or not run there)."""

    label: str
    reports: dict[str, Report] = field(default_factory=dict)
    anchors: dict[str, str] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    yours: bool = False


def anchor(key: str, label: str) -> str:
    """The id of one record's manifest on the page: letters, digits and '-' only."""
    return "m-" + key + "-" + re.sub(r"[^A-Za-z0-9]+", "-", printable(label, 80)).strip("-")


def shipped_rows(arms: dict[str, ArmFile]) -> list[Row]:
    """A row per shipped engine (the reference engine first, then by name)."""
    rows: dict[str, Row] = {}
    for key, arm in arms.items():
        for record in arm.records:
            name = record.manifest.engine_source
            row = rows.setdefault(name, Row(label=name))
            row.reports[key] = record.report
            row.records[key] = record
            row.anchors[key] = anchor(key, name)
            row.sources[key] = f"rotbench/published/data/{key}.json.gz, record {name}"
    return sorted(rows.values(), key=lambda r: (r.label != "reference", r.label))


def _metrics(rows: list[Row]) -> list[str]:
    names: list[str] = []
    for row in rows:
        for report in row.reports.values():
            names += [m for m in report.metrics if m not in names]
    return names


def _kinds(rows: list[Row], key: str) -> list[str]:
    kinds: list[str] = []
    for row in rows:
        report = row.reports.get(key)
        if report is not None:
            kinds += [k for k in report.by_kind if k not in kinds and k in BY_KIND_V4]
    return kinds


def _goodness(metric: str, rate: Rate | None) -> float | None:
    if rate is None or rate.value is None:
        return None
    better = better_label(metric)
    if better == "higher":
        return rate.value
    if better == "lower":
        return 1 - rate.value
    return None


def _interval(rate: Rate) -> str:
    if rate.low is None or rate.high is None:
        return ""
    return f"{percent(rate.low)}–{percent(rate.high)}"


def _html_cell(rate: Rate | None, href: str, cls: str = "n", style: str = "") -> str:
    if rate is None:
        return f'<td class="{cls} muted">n/a</td>'
    iv = _interval(rate)
    title = f"{format_rate(rate)}, 95% Wilson interval {iv}" if iv else "undefined (0/0)"
    span = f'<span class="iv">{esc(iv)}</span>' if iv and cls == "n" else ""
    text = format_rate(rate) if cls == "n" or rate.value is None else percent(rate.value)
    return (f'<td class="{cls}"{style} title="{esc(title)}"><a href="#{href}">'
            f"{esc(text)}{span}</a></td>")


def _label_html(row: Row) -> str:
    text = esc(row.label)
    return f'<span class="yours">{text}</span>' if row.yours else text


def _metric_tables(rows: list[Row], keys: list[str]) -> str:
    heads = "".join(f"<th>{esc(ARM_TITLES[k])}</th>" for k in keys)
    out = []
    for metric in _metrics(rows):
        body = "".join(
            f"<tr><td>{_label_html(row)}</td>"
            + "".join(_html_cell(row.reports[k].metrics.get(metric) if k in row.reports
                                 else None, row.anchors.get(k, "")) for k in keys)
            + "</tr>" for row in rows)
        out.append(f"<h3 id='metric-{esc(metric)}'>{metric_link(metric)} "
                   f"<small class=muted>({esc(better_label(metric))} is better)</small></h3>"
                   f"<table><tr><th>engine</th>{heads}</tr>{body}</table>")
    return "".join(out)


def _heat_style(metric: str, rate: Rate | None) -> str:
    good = _goodness(metric, rate)
    if good is None:
        return ""
    return f' style="background:hsl({round(120 * good)},65%,82%)"'


def _heat_maps(rows: list[Row], keys: list[str], *, table: str,
               head: Callable[[str], str], label: Callable[[Row], str],
               cell: Callable[[str, Rate | None, str], str]) -> list[tuple[str, list[str]]]:
    """Each arm's heat map of the kinds' own figures, as (arm key, lines of an HTML table),
    for the arms whose reports have a kind of ``BY_KIND_V4``. The first line opens the table
    (``table``, as ``<table class=heat>``) with its heading row: ``engine``, then per kind its
    name over ``head(metric)`` (the kind's first metric); then a line per engine row
    (``label(row)``, then per kind ``cell(metric, rate, href)``: ``rate`` None where the row has
    no report or no figure, ``href`` the id of its manifest); last ``</table>``."""
    maps = []
    for key in keys:
        kinds = _kinds(rows, key)
        if not kinds:
            continue
        lines = [f"{table}<tr><th>engine</th>" + "".join(
            f"<th>{esc(k)}<br><small>{head(BY_KIND_V4[k][0])}</small></th>" for k in kinds)
            + "</tr>"]
        for row in rows:
            report = row.reports.get(key)
            href = row.anchors.get(key, "")
            cells = []
            for kind in kinds:
                metric = BY_KIND_V4[kind][0]
                rate = report.by_kind.get(kind, {}).get(metric) if report else None
                cells.append(cell(metric, rate, href))
            lines.append(f"<tr><td>{label(row)}</td>{''.join(cells)}</tr>")
        maps.append((key, [*lines, "</table>"]))
    return maps


def _html_heat_cell(metric: str, rate: Rate | None, href: str) -> str:
    return _html_cell(rate, href, "h", _heat_style(metric, rate))


def _html_heat_maps(rows: list[Row], keys: list[str]) -> str:
    return "".join(f"<h3>{esc(ARM_TITLES[key])}</h3>" + "".join(lines) for key, lines in
                   _heat_maps(rows, keys, table="<table class=heat>", head=metric_link,
                              label=_label_html, cell=_html_heat_cell))


def _md_heat_cell(metric: str, rate: Rate | None, href: str) -> str:
    if rate is None or rate.value is None:
        return f"<td>{'n/a' if rate is None else '0/0'}</td>"
    return f'<td{_heat_style(metric, rate)}><a href="#{href}">{percent(rate.value)}</a></td>'


CHECKS = (
    "A record of an engine that gives the same answers every run is checked against a cold "
    "run figure for figure: every figure, every question's outcome on every per-question "
    "figure, the top behaviours and the manifest (`make verify-published`). An engine that "
    "varies from run to run (Hindsight) ships a `--repeat 3` run instead: its figures on "
    "this page are run 1's, its manifest gives its flaky questions (those its three runs "
    "did not all answer alike), pass^3 and the median and range of the currency figures, "
    "and `rotbench compare` pairs its pooled outcomes (pass^3 for a higher-is-better figure, "
    "the worst run otherwise). Its check (`make verify-published-hindsight`, in Hindsight's "
    "environment) takes a fresh run and requires: the manifest, the worlds' question "
    "counts, the injected noise and the degraded questions equal; and, of the questions the "
    "three runs all answered alike, the fresh run answers no more otherwise (on any "
    "per-question figure) than the most on which one of the three runs alone answered "
    "otherwise than the other two (its manifest's lone departures). A figure outside the "
    "three runs' range is named but not counted against the record: a fourth run of an "
    "engine that varies is the lowest or highest of four with chance 1/2 for each figure "
    "that varies, so a range check would fail nearly every run. The figures, and the "
    "tables by channel, kind, evidence and miss stage, are sums of the per-question "
    "outcomes, which the check bounds; the top behaviours, judged on run 1's figures, are "
    "not compared.")
"""What the page says is checked of a shipped record (``rotbench.published.verify``)."""


def repeat_text(record: Record) -> str | None:
    """A record of a ``--repeat N`` run in one line: its runs, flaky questions, pass^N and
    the currency figures' median and range; None for a single run."""
    from rotbench.results.repeats import repeat_lines

    lines = repeat_lines(record.report)
    if not lines:
        return None
    head = lines[0].removeprefix("repeats: ")
    lone = ", ".join(map(str, record.lone_departures or []))
    return "; ".join([head, *(line.strip() for line in lines[1:])]) + (
        f"; lone departures by run: {lone}; the figures on this page are run 1's")


def manifest_items(row: Row, key: str) -> list[tuple[str, str]]:
    """(field, text) pairs of one report's manifest (a shipped record's, or a run of the
    user's own: its selection); texts are raw (escape them where they are shown)."""
    record = row.records.get(key)
    if record is not None:
        m = record.manifest
        return [
            ("engine", f"{m.engine} {m.engine_version} (--engine {m.engine_source})"),
            ("peer package", m.peer_package or "none (rotbench's own)"),
            ("arm", m.arm + (f", noise {m.noise} ({m.noise_logic or '?'}, sha256 "
                             f"{(m.noise_digest or '?')[:12]})" if m.noise else "")),
            ("worlds", "; ".join(f"seed {w.seed} {w.fingerprint[:16]}" for w in m.worlds)
             + f" ({m.days} days, top {m.top_k})"),
            ("generator · scorer", f"{m.generator_version} · {m.scorer_version}"),
            ("rotbench", m.rotbench_version),
            ("run", f"{m.run_id} at {m.created_at}"),
            ("command", m.command),
            *([("repeats", text)] if (text := repeat_text(record)) else []),
            ("report", row.sources[key]),
        ]
    report = row.reports[key]
    s = report.selection
    return [
        ("engine", f"{s.engine} {s.engine_version} (--engine {s.engine_source})"),
        ("arm", s.arm + (f", noise {s.noise}" if s.noise else "")),
        ("worlds", "; ".join(f"seed {w.seed} {w.fingerprint[:16]}" for w in report.worlds)),
        ("generator · scorer", f"{s.generator_version} · {s.scorer_version}"),
        ("run", f"{report.run_id} at {report.created_at}"),
        ("report", row.sources.get(key, "")),
    ]


def _manifests(rows: list[Row], keys: list[str]) -> str:
    out = []
    for row in rows:
        for key in keys:
            if key not in row.reports:
                continue
            items = "".join(f"<tr><th>{esc(k)}</th><td><code>{esc(v)}</code></td></tr>"
                            for k, v in manifest_items(row, key))
            out.append(f"<h3 id='{row.anchors[key]}'>{_label_html(row)} · "
                       f"{esc(ARM_TITLES[key])}</h3><table class=manifest>{items}</table>")
    return "".join(out)


def _summary(rows: list[Row]) -> str:
    for row in rows:
        for key, record in row.records.items():
            m = record.manifest
            return (f"generator {m.generator_version}, scorer {m.scorer_version}, seeds "
                    f"{' '.join(map(str, m.seeds))}, {m.days} days, top {m.top_k}; rotbench "
                    f"{m.rotbench_version}; first arm {ARM_TITLES[key]}")
    return ""


def page_html(rows: list[Row], keys: list[str]) -> str:
    """The whole page (self-contained: inline CSS, no script, nothing fetched)."""
    title = "rotbench: the shipped reports of record"
    body = (
        f"<h1>{esc(title)}</h1><p class=sub>{esc(_summary(rows))}</p>"
        "<p class=sub>Sections: <a href='#kinds'>by kind</a> · <a href='#metrics'>every "
        "metric</a> · <a href='#manifests'>manifests</a></p>"
        "<p>Every figure reads value (n/d) with its 95% Wilson interval and links to the "
        "manifest of the report it comes from; rows in bold are runs of your own. Compare "
        "a run of yours with every engine here, question by question: <code>rotbench "
        "compare RUN published:all</code>.</p>"
        "<h2 id=kinds>Each kind's own figure (heat map: green is better; hover a cell for "
        "n/d and its interval)</h2>"
        f"{_html_heat_maps(rows, keys)}"
        f"<h2 id=metrics>Every metric, oracle and noisy side by side</h2>"
        f"{_metric_tables(rows, keys)}"
        f"<h2 id=manifests>Manifests</h2><p>{esc(CHECKS.replace('`', ''))}</p>"
        f"{_manifests(rows, keys)}")
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; img-src data:\">"
            "<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>{esc(title)}</title><style>{PAGE_CSS}{_PAGE_CSS}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def _md(text: object, limit: int = 400) -> str:
    """Printable text for a markdown table cell: no '|', no backtick, no newline."""
    return printable(text, limit).replace("|", "/").replace("`", "'")


def _md_cell(rate: Rate | None, href: str) -> str:
    if rate is None:
        return "n/a"
    iv = _interval(rate)
    return f"[{format_rate(rate)}](#{href})" + (f"<br><small>{iv}</small>" if iv else "")


def page_markdown(rows: list[Row], keys: list[str], regenerate: str) -> str:
    """The docs page (``docs/results/published.md``): the same content as ``page_html``,
    as markdown tables (the heat maps as HTML tables)."""
    out = ["# The shipped reports of record", "",
           "<!-- Written by `make published-page` from rotbench/published/data; do not edit. -->",
           "",
           f"What ships with rotbench ({_md(_summary(rows))}): every built-in engine, "
           "baseline and peer adapter on the default worlds, each figure `value (n/d)` with "
           "its 95% Wilson interval under it, linked to the manifest of its report. Compare "
           "a run of yours with all of them, question by question and with nothing "
           "installed: `rotbench compare RUN published:all`; this page with your runs "
           "added: `rotbench report --published --html page.html --run RUN`.",
           "", f"Regenerate the data and this page: `{regenerate}`.", "",
           "## Each kind's own figure", "",
           "Each kind's first metric, per arm (green is better); its n/d and interval are "
           "in the metric's table below, its report's manifest behind the link.", ""]
    for key, lines in _heat_maps(rows, keys, table="<table>", head=esc,
                                 label=lambda row: esc(row.label), cell=_md_heat_cell):
        out += [f"### {ARM_TITLES[key]}", "", *lines, ""]
    out += ["## Every metric", ""]
    heads = " | ".join(ARM_TITLES[k] for k in keys)
    for metric in _metrics(rows):
        out += [f"### {metric}", "", f"{better_label(metric)} is better.", "",
                f"| engine | {heads} |", "|---|" + "---|" * len(keys)]
        for row in rows:
            cells = [_md_cell(row.reports[k].metrics.get(metric) if k in row.reports else None,
                              row.anchors.get(k, "")) for k in keys]
            out.append(f"| {_md(row.label)} | " + " | ".join(cells) + " |")
        out.append("")
    out += ["## How a shipped record is checked", "", CHECKS, "", "## Manifests", ""]
    for row in rows:
        for key in keys:
            if key not in row.reports:
                continue
            out += [f'<a id="{row.anchors[key]}"></a>', "",
                    f"### {_md(row.label)} · {ARM_TITLES[key]}", "", "| field | value |",
                    "|---|---|"]
            out += [f"| {k} | `{_md(v, 2000)}` |" for k, v in manifest_items(row, key)]
            out.append("")
    return "\n".join(out)


def arms_in_order(arms: dict[str, ArmFile]) -> list[str]:
    """The arm keys present, in ``ARMS`` order."""
    return [k for k in ARMS if k in arms]
