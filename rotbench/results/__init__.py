"""The report of record: model, building, saving/loading, rendering, rescoring, run database.

Imports stay light (pydantic, rich, duckdb): nothing here loads an engine, a model or an
embedding, so ``rotbench show`` and ``rotbench rescore`` start fast.
"""

from rotbench.results.build import (
    build_report,
)
from rotbench.results.database.tables import write_run
from rotbench.results.files.report import ReportError, load_report, write_report
from rotbench.results.files.worlds import iter_worlds
from rotbench.results.presentation.render import format_rate, render
from rotbench.results.rescore import rescore_report
from rotbench.results.schema import (
    SCHEMA_VERSION,
    Origin,
    Report,
    Selection,
    StageRecord,
    WorldEntry,
)

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
