"""Rendered plots kept by content, so a run whose figures did not change redraws nothing.

Drawing the ten figures of a page with matplotlib is most of a warm scheduled run that asks
for an HTML page. The figures depend on the reports' contents, not
on when or under which run id they ran (a single report's figures name neither), so the
key is the sha256 of every report's JSON without the fields that differ between two runs
of the same work (``run_id``, ``created_at``, ``stages``, ``timings``), the labels the
figures give the reports (``run_labels``, which do name run ids when that is what tells
several reports apart), whether PNGs were drawn, matplotlib's version and the source of
``rotbench.results.presentation.plots``. Anything else that changes, a figure or a note, draws
afresh.

Stored as ``<cache_dir>/plots/<key>.json`` (written atomically, the key inside it); a record
that cannot be read, or that holds another key, is drawn again and rewritten.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from rotbench._util.atomic import write_atomic
from rotbench.results.schema import Report

VARYING = ("run_id", "created_at", "stages", "timings")
"""Report fields that differ between two runs of the same work and never reach a figure."""


def plots_key(reports: list[Report], png: bool) -> str:
    """The content key of the figures of ``reports`` (hex sha256)."""
    import matplotlib

    from rotbench.results.presentation import plots

    digest = hashlib.sha256()
    for report in reports:
        digest.update(report.model_dump_json(exclude=set(VARYING)).encode())
        digest.update(b"\0")
    source = Path(plots.__file__).read_bytes()
    digest.update(json.dumps([plots.run_labels(reports), png, matplotlib.__version__,
                              hashlib.sha256(source).hexdigest()]).encode())
    return digest.hexdigest()


MAX_PLOT_RECORD_BYTES = 1 << 28
"""Largest stored plot record read (256 MiB; 18 plots of a report are a few MB)."""


def cached_plots(reports: list[Report], cache_dir: Path, png: bool = True):
    """``rotbench.results.presentation.plots.build_plots(reports, png)``, read from ``cache_dir``
    when the
    same figures were drawn before, else drawn and stored. Returns (plots, True when they
    came from the cache). Raises what ``build_plots`` raises; a failed store only costs the
    next run a redraw."""
    from rotbench._util.json_input import read_json_file
    from rotbench.results.presentation.plots import Plot, build_plots

    key = plots_key(reports, png)
    path = Path(cache_dir) / "plots" / f"{key}.json"
    try:
        data = read_json_file(path, MAX_PLOT_RECORD_BYTES, "plot record")
        if data["key"] == key:
            return [Plot(name=str(p["name"]), title=str(p["title"]), svg=str(p["svg"]),
                         png=base64.b64decode(p["png"], validate=True))
                    for p in data["plots"]], True
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not drawn before, or a damaged record: draw again
    plots = build_plots(reports, png=png)
    record = {"key": key, "plots": [{"name": p.name, "title": p.title, "svg": p.svg,
                                     "png": base64.b64encode(p.png).decode()} for p in plots]}
    try:
        write_atomic(path, json.dumps(record).encode())
    except OSError:
        pass
    return plots, False
