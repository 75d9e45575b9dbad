"""The end of a run that asked for ``--html`` (or a deployment with ``html_path``): the
HTML page of the run's reports, and a Prefect link artifact pointing at it. The figures come
from ``rotbench.results.presentation.plot_cache`` (drawn again only when they changed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prefect.artifacts import acreate_link_artifact

from rotbench.results import Report
from rotbench.results.files.report import report_file_name
from rotbench.run.spec import RunSpec


async def publish_page(run: RunSpec, reports: list[Report]) -> str | None:
    """Write ``run.html_path`` (every report side by side, plots beside it) and link it
    from the flow run's artifacts. Returns a one-line failure, or None when it worked or
    nothing was asked for. The reports of record are already written either way."""
    if not run.html_path or not reports:
        return None
    # imported here: the page's plots import matplotlib (about 0.5 s), which a run without
    # a page (every CLI run without --html, each deployment run's start) never needs
    from rotbench.results.presentation.html import default_plots_dir, write_page
    from rotbench.results.presentation.plot_cache import cached_plots

    page = Path(run.html_path)
    try:
        sources = [str(Path(run.reports_dir) / report_file_name(r.run_id, r.selection.engine))
                   for r in reports]
        # figures drawn once per content: a run whose figures did not change (a warm
        # scheduled run) redraws none of them
        plots, _ = await asyncio.to_thread(cached_plots, reports, Path(run.cache_dir))
        size, _ = await asyncio.to_thread(write_page, reports, page, default_plots_dir(page),
                                          sources, True, plots)
    except Exception as exc:  # noqa: BLE001 - one line; the reports themselves are safe
        return f"html: cannot write {page}: {type(exc).__name__}: {exc}"
    try:
        await acreate_link_artifact(
            link=page.resolve().as_uri(), link_text=f"rotbench report ({size / 1e6:.2f} MB)",
            key="rotbench-html-report",
            description=f"The HTML report of runs {', '.join(r.run_id for r in reports)}")
    except Exception as exc:  # noqa: BLE001 - the page is written; only the link is missing
        return f"html: wrote {page} but could not link it as an artifact: {exc}"
    return None
