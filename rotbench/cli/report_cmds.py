"""The ``rotbench show`` and ``rotbench rescore`` commands (registered in ``rotbench.cli.main``).

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
from rich.console import Console

from rotbench.report.db import write_run
from rotbench.report.io import ReportError, load_report, write_report
from rotbench.report.render import render
from rotbench.report.rescore import rescore_report
from rotbench.scoring.lexicons import DEFAULT_SCORER, SCORER_VERSIONS, UnknownScorer, lexicon

DB_NAME = "rotbench.duckdb"


def _fail(message: str, code: int = 1) -> NoReturn:
    line = " ".join(str(message).split())
    print(f"rotbench: error: {line}", file=sys.stderr)
    raise typer.Exit(code)


def show(
    report: Annotated[
        Path, typer.Argument(help="A saved report, e.g. reports/<run-id>.json.", show_default=False)
    ],
    intervals: Annotated[
        bool, typer.Option("--intervals", help="Show the 95% Wilson interval of every rate.")
    ] = False,
    format: Annotated[
        str,
        typer.Option(
            "--format", help="'table' (terminal tables) or 'json' (every figure, no hit texts)."
        ),
    ] = "table",
) -> None:
    """Print a saved report: the three metric families, poison by channel, what the first
    value-bearing hit was, the relevance floor sweep, and the notes."""
    if format not in ("table", "json"):
        _fail(f"unknown format {format!r} (available: table, json)", 2)
    try:
        loaded = load_report(report)
    except ReportError as e:
        _fail(str(e))
    if format == "json":
        print(json.dumps(loaded.model_dump(mode="json", exclude={"worlds"}), indent=2))
        return
    render(loaded, Console(), intervals=intervals)


def rescore(
    report: Annotated[
        Path,
        typer.Argument(help="The saved report to rescore (left unchanged).", show_default=False),
    ],
    scorer: Annotated[
        str | None,
        typer.Option(
            "--scorer",
            help=f"Scorer version ({', '.join(SCORER_VERSIONS)}); default the newest, "
            f"{DEFAULT_SCORER}.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where to write the new report (must not exist); default "
            "<source dir>/<new run id>.json.",
            show_default=False,
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help=f"Run database to record the rescore in; default <out dir>/{DB_NAME}.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Re-classify a saved report's recorded hit texts under a scorer version and recompute
    every figure, with no engine, model or embedding. Writes a new report whose first note
    names its origin, and records it in the run database."""
    version = scorer or DEFAULT_SCORER
    try:
        lexicon(version)
    except UnknownScorer as e:
        _fail(str(e), 2)
    try:
        source = load_report(report)
        new = rescore_report(source, version, report)
    except ReportError as e:
        _fail(str(e))
    out_path = out if out is not None else report.parent / f"{new.run_id}.json"
    if out_path.resolve() == report.resolve():
        _fail(f"refusing to overwrite the source report {report}; choose another --out", 2)
    if out_path.exists():
        _fail(f"{out_path} already exists; choose another --out", 2)
    db_path = db if db is not None else out_path.parent / DB_NAME
    try:
        write_report(new, out_path)
    except OSError as e:
        _fail(f"cannot write {out_path}: {e.strerror or e}")
    try:
        write_run(db_path, new)
    except Exception as e:  # any database failure: undo the report so nothing is left behind
        out_path.unlink(missing_ok=True)
        _fail(f"cannot record the rescore in {db_path}: {type(e).__name__}: {e}")
    render(new, Console())
    print(f"wrote {out_path}; recorded in {db_path}")
