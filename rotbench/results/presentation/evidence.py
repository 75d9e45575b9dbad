"""Generator 5's breakdown by evidence in ``show``, ``compare`` and the HTML page
(``Report.by_evidence``): the currency and supersession metrics (``EVIDENCE_METRICS``) over
the questions whose current value the user had stated once, two or three times, or four
times or more by the question's day (``EVIDENCE_BUCKETS``).

Every function returns nothing (or an empty list) when no report has the breakdown, so the
reports of generators 1 to 4 render as before.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from rotbench._util.safe_text import printable
from rotbench.results.presentation.tables import Col, print_table
from rotbench.results.schema import Report
from rotbench.scoring.metrics import EVIDENCE_BUCKETS, EVIDENCE_METRICS, Rate
from rotbench.scoring.paired import evidence_row

EVIDENCE_FAMILY = "By evidence (statements of the current value before the question)"
"""The title of the breakdown's table in ``show`` and its family in ``compare``."""

BUCKET_HEADS: dict[str, str] = {"1": "1 statement", "2-3": "2-3", "4+": "4+"}
"""Column heading of each bucket in ``show``."""


def buckets_of(reports: list[Report]) -> list[str]:
    """The buckets any of ``reports`` carries: ``EVIDENCE_BUCKETS`` first, in order, then
    any other key a report holds (cut and escaped where shown)."""
    found = [b for r in reports for b in (r.by_evidence or {})]
    return [*(b for b in EVIDENCE_BUCKETS if b in found),
            *dict.fromkeys(b for b in found if b not in EVIDENCE_BUCKETS)]


def metrics_of(reports: list[Report]) -> list[str]:
    """The metrics of the breakdown any of ``reports`` carries, in ``EVIDENCE_METRICS``
    order."""
    found = {m for r in reports for rates in (r.by_evidence or {}).values() for m in rates}
    return [m for m in EVIDENCE_METRICS if m in found]


def render_evidence(report: Report, console: Console, fmt: Callable[[Rate], str]) -> None:
    """``show``'s "By evidence" table: one row per metric, one column per bucket, each rate
    written by ``fmt``; nothing for a report without the breakdown."""
    if report.by_evidence is None:
        return
    buckets = buckets_of([report])
    print_table(console, EVIDENCE_FAMILY,
                [Col("metric"), *(Col(BUCKET_HEADS.get(b, printable(b, 20)), "words", "right")
                                  for b in buckets)],
                [[metric, *(_cell(report, b, metric, fmt) for b in buckets)]
                 for metric in metrics_of([report])])


def _cell(report: Report, bucket: str, metric: str, fmt: Callable[[Rate], str]) -> str:
    rate = (report.by_evidence or {}).get(bucket, {}).get(metric)
    return "n/a" if rate is None else fmt(rate)


def evidence_rows(reports: list[Report]) -> list[tuple[str, list[Rate | None]]]:
    """The breakdown's rows for ``compare`` and the page: ``<metric> (evidence <bucket>)``
    (``rotbench.scoring.paired.evidence_row``, bucket by bucket) with each report's rate
    (None: the report has no such figure); empty when no report has the breakdown."""
    if all(r.by_evidence is None for r in reports):
        return []
    return [(evidence_row(metric, printable(bucket, 20)),
             [(r.by_evidence or {}).get(bucket, {}).get(metric) for r in reports])
            for bucket in buckets_of(reports) for metric in metrics_of(reports)]

