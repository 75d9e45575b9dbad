"""The report of record: model, building, saving/loading, rendering, rescoring, run database.

Imports stay light (pydantic, rich, duckdb): nothing here loads an engine, a model or an
embedding, so ``rotbench show`` and ``rotbench rescore`` start fast.
"""

from rotbench.report.db import write_run
from rotbench.report.io import ReportError, load_report, write_report
from rotbench.report.model import (
    SCHEMA_VERSION,
    Origin,
    Report,
    Selection,
    StageRecord,
    WorldEntry,
    build_report,
)
from rotbench.report.render import format_rate, render
from rotbench.report.rescore import rescore_report
from rotbench.report.worlds import iter_worlds

__all__ = [
    "SCHEMA_VERSION",
    "Origin",
    "Report",
    "ReportError",
    "Selection",
    "StageRecord",
    "WorldEntry",
    "build_report",
    "format_rate",
    "iter_worlds",
    "load_report",
    "render",
    "rescore_report",
    "write_report",
    "write_run",
]
