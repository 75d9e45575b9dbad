"""``rotbench show`` (registered in ``rotbench.cli.main``), and the helpers ``rotbench rescore``
shares with it.

Both work from a saved report alone and import nothing heavy: no engine, no model, no
embedding, no Prefect. On failure each prints one line to stderr and exits non-zero:
1 for a problem with a file or its content, 2 for a bad option.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from rotbench._util.outputs import terminal_safe
from rotbench._util.safe_text import terminal_console
from rotbench.results.files.report import ReportError
from rotbench.results.presentation.render import render
from rotbench.results.verify import load_checked
from rotbench.scoring.lexicons import lexicon

DB_NAME = "rotbench.duckdb"


def reads_decoys_of(scorer: str) -> bool:
    """Whether scorer version ``scorer`` (a known one) classifies decoy values."""
    return lexicon(scorer).reads_decoys


def _fail(message: str, code: int = 1) -> NoReturn:
    line = terminal_safe(" ".join(str(message).split()), one_line=True)
    print(f"rotbench: error: {line}", file=sys.stderr)
    raise typer.Exit(code)


def _report_path(text: str) -> Path:
    """The report argument as a path; an empty one is a bad argument (exit 2), not '.'."""
    if not text.strip():
        _fail("the report path is empty", 2)
    return Path(text)


def is_run_id(text: str) -> bool:
    """Whether a RUN argument is to be looked up as a run id: shaped like one (letters,
    digits, ``.``, ``_``, ``-``; at most 200 characters; no ``.json`` ending) and not an
    existing file."""
    from rotbench.cli.report import RUN_ID

    if not RUN_ID.fullmatch(text) or text.endswith(".json"):
        return False
    try:
        return not Path(text).exists()
    except (OSError, ValueError):
        return False


def _show_failure(path: Path) -> NoReturn:
    """Print a failed run's record (``rotbench.results.failures``): its one-line errors and
    the engine's own frames of each traceback; exit 1."""
    from rotbench.results.failures import load_failure

    try:
        record = load_failure(path)
    except ValueError as exc:
        _fail(str(exc))
    _print_failure(record)


def _print_failure(record) -> NoReturn:  # noqa: ANN001 - a FailureRecord
    from rotbench.results.failures import failure_lines

    for line in failure_lines(record):
        print(terminal_safe(line, one_line=True))
    raise typer.Exit(1)


def show(
    report: Annotated[
        str, typer.Argument(help="A saved report (reports/<run-id>-<engine>.json) or a run "
                            "id in the database.", show_default=False)
    ],
    intervals: Annotated[
        bool, typer.Option("--intervals", help="Show the 95% Wilson interval of every rate.")
    ] = False,
    format: Annotated[
        str,
        typer.Option(
            "--format", help="'table' (terminal tables) or 'json' (every figure and the "
            "diagnosis; no hit texts but the diagnosis's examples)."
        ),
    ] = "table",
    db: Annotated[str | None, typer.Option(
        "--db", help="Where to look a run id up (default: reports/rotbench.duckdb).",
        show_default=False)] = None,
) -> None:
    """Print a saved report: what to fix first (the engine's behaviours, worst first), the
    metric families, poison by channel, what the first
    value-bearing hit was, the relevance floor sweep, and the notes. The stored figures are
    checked against the report's own probes; where they differ, a warning says so and the
    figures shown are the ones the probes give."""
    if format not in ("table", "json"):
        _fail(f"unknown format {format!r} (available: table, json)", 2)
    path = _report_path(report)
    from rotbench.results.failures import FAILURE_SUFFIX, find_failure

    if is_run_id(report):
        from rotbench.cli.report import DEFAULT_DB, resolve_runs
        from rotbench.results.failures import failure_from_db

        db_path = Path(db) if db else DEFAULT_DB
        record = failure_from_db(db_path, report)
        if record is not None:
            _print_failure(record)
        failed = find_failure(db_path.parent, report)
        if failed is not None:
            _show_failure(failed)
        loaded = resolve_runs([report], Path(db) if db else None)[0][0]
    elif path.name.endswith(FAILURE_SUFFIX):
        _show_failure(path)
    else:
        try:
            loaded = load_checked(path, lambda line: print(line, file=sys.stderr))
        except (ReportError, ValueError) as e:
            _fail(str(e))
    from rotbench.results.presentation.diagnosis import report_diagnosis

    try:
        findings = report_diagnosis(loaded)
    except (ReportError, ValueError) as e:
        _fail(str(e))
    if format == "json":
        document = loaded.model_dump(mode="json", exclude={"worlds", "embedded_worlds"})
        document["diagnosis"] = [f.model_dump(mode="json") for f in findings]
        print(json.dumps(document, indent=2))
        return
    render(loaded, terminal_console(), intervals=intervals, diagnosis=findings)
