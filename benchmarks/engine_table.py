"""Print one markdown table of every figure of several reports, a column per report (the
tables of docs/results/engines.md and noisy.md).

    python benchmarks/engine_table.py REPORT.json... [--label NAME]... [--metrics m1,m2]

Each column is headed by ``--label`` (in order) or by the report's engine and version; a
row per metric the first report carries (or ``--metrics``), each cell ``rate (n/d)`` as
``rotbench show`` prints it. Reports are read as ``rotbench show`` reads them (checked).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rotbench.results.presentation.render import format_rate
from rotbench.results.verify import load_checked


def table(paths: list[Path], labels: list[str], metrics: list[str] | None) -> str:
    """The markdown table (a header, a rule, a row per metric)."""
    reports = [load_checked(p, lambda _line: None) for p in paths]
    heads = labels or [f"{r.selection.engine} {r.selection.engine_version}" for r in reports]
    names = metrics or list(reports[0].metrics)
    lines = ["| metric | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for name in names:
        cells = [format_rate(r.metrics[name]) if name in r.metrics else "n/a" for r in reports]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--label", action="append", default=[])
    parser.add_argument("--metrics", default="")
    args = parser.parse_args()
    if args.label and len(args.label) != len(args.reports):
        parser.error("give one --label per report, or none")
    print(table(args.reports, args.label, [m for m in args.metrics.split(",") if m] or None))


if __name__ == "__main__":
    main()
