"""Time and size of the HTML report: drawing the plots, the page, and the plot files.

Given report files, measures the page of all of them side by side (and of the last one
alone); without arguments, a synthetic 3-world report. Prints wall seconds per phase, the
page size (target: under 2 MB for a three-seed run) and the peak memory of this process.
Exit status 1 when a page misses the size target.

Run: .venv/bin/python benchmarks/bench_html.py [reports/A.json reports/B.json ...]
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from rotbench.results.files.report import load_report
from rotbench.results.presentation.html import render_html
from rotbench.results.presentation.plots import build_plots, write_plots
from rotbench.testing.synthetic import synthetic_report

TARGET_BYTES = 2_000_000


def measure(reports, label: str) -> bool:
    t = time.perf_counter()
    svg_only = build_plots(reports, png=False)
    plots_seconds = time.perf_counter() - t
    t = time.perf_counter()
    page = render_html(reports, svg_only).encode()
    page_seconds = time.perf_counter() - t
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        write_plots(build_plots(reports), Path(folder))
    files_seconds = time.perf_counter() - t
    ok = len(page) < TARGET_BYTES
    print(f"{label}: plots (SVG) {plots_seconds:.2f} s, page {page_seconds:.2f} s, "
          f"{len(page) / 1e6:.2f} MB ({'ok' if ok else 'over'} the 2 MB target); "
          f"plot files (SVG and PNG) {files_seconds:.2f} s")
    return ok


def main() -> int:
    paths = sys.argv[1:]
    reports = [load_report(Path(p)) for p in paths] or [synthetic_report((42, 43, 44))]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = measure(reports, f"{len(reports)} report(s) side by side")
    if len(reports) > 1:
        ok = measure(reports[-1:], "the last alone") and ok
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {peak:.0f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
