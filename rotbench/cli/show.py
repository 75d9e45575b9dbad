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

from rotbench.outputs import OutputError, check_outputs, safe_file_name, terminal_safe
from rotbench.results.database.tables import check_fits
from rotbench.results.files.report import ReportError, load_report, report_file_name
from rotbench.results.files.worlds import WORLDS_DIR
from rotbench.results.presentation.render import render
from rotbench.results.rescore import rescore_report
from rotbench.results.verify import load_checked
from rotbench.safe_text import terminal_console
from rotbench.scoring.lexicons import DEFAULT_SCORER, SCORER_VERSIONS, UnknownScorer, lexicon

DB_NAME = "rotbench.duckdb"


def _default_scorer_of(report: Path) -> str:
    """The default scorer for rescoring ``report``: v5 for a report of generator 3 or later, else
    ``DEFAULT_SCORER`` (also when the report cannot be read: that error is shown later)."""
    from rotbench.scoring.lexicons import default_scorer

    try:
        return default_scorer(load_report(report).selection.generator_version)
    except Exception:  # noqa: BLE001 - the rescore reports the real error itself
        return DEFAULT_SCORER


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
            "--format", help="'table' (terminal tables) or 'json' (every figure, no hit texts)."
        ),
    ] = "table",
    db: Annotated[str | None, typer.Option(
        "--db", help="Where to look a run id up (default: reports/rotbench.duckdb).",
        show_default=False)] = None,
) -> None:
    """Print a saved report: the three metric families, poison by channel, what the first
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
    if format == "json":
        print(json.dumps(loaded.model_dump(mode="json",
                                           exclude={"worlds", "embedded_worlds"}), indent=2))
        return
    render(loaded, terminal_console(), intervals=intervals)


def rescore(
    report: Annotated[
        str,
        typer.Argument(help="The saved report to rescore (left unchanged), or its run id in "
                       "the database.", show_default=False),
    ],
    scorer: Annotated[
        str | None,
        typer.Option(
            "--scorer",
            help=f"Scorer version ({', '.join(SCORER_VERSIONS)}); default {DEFAULT_SCORER}, "
            "or v5 for a report of generator 3 or later.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where to write the new report (must not exist); default "
            "<source dir>/<new run id>-<engine>.json.",
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
    source_path = _report_path(report)  # an empty path is refused once, before anything
    if is_run_id(report):  # a run id in the database: its report of record beside it
        from rotbench.cli.report import DEFAULT_DB, resolve_runs

        source_path = resolve_runs([report], DEFAULT_DB if db is None else db)[2][0]
    version = scorer or _default_scorer_of(source_path)
    try:
        lexicon(version)
    except UnknownScorer as e:
        _fail(str(e), 2)
    if out is not None:
        if out.resolve() == source_path.resolve():
            _fail(f"refusing to overwrite the source report {source_path}; choose another "
                  "--out", 2)
        if out.exists():
            _fail(f"{out} already exists; choose another --out", 2)
    # the new worlds go beside the new report (its folder is the user's or the source's)
    out_dir = out.parent if out is not None else source_path.parent
    try:  # before anything is written (the worlds' rows go to --db as they are re-scored)
        check_outputs([*([("--out", out, "report")] if out is not None else []),
                       ("--db", db if db is not None else out_dir / DB_NAME, "duckdb")])
    except OutputError as e:
        _fail(str(e), 2)
    from rotbench.results.database.tables import WorldRows

    # each re-scored world's rows go to the database as it is written (not read back later)
    rows = WorldRows(db if db is not None else out_dir / DB_NAME, reads_decoys_of(version))
    try:
        source = load_report(source_path)
        check_fits(source)
        new = rescore_report(source, version, source_path, out_dir / WORLDS_DIR, rows)
    except (ReportError, ValueError) as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write the rescored worlds in {out_dir / WORLDS_DIR}: {e.strerror or e}")
    finally:
        rows.close()
    # the file name comes from the new run id, made safe: nothing read decides a folder
    out_path = out if out is not None else out_dir / report_file_name(
        safe_file_name(new.run_id), new.selection.engine)
    if out_path.exists():
        _fail(f"{out_path} already exists; choose another --out", 2)
    db_path = db if db is not None else out_path.parent / DB_NAME
    try:
        check_outputs([("--out", out_path, "report"), ("--db", db_path, "duckdb")])
    except OutputError as e:
        _fail(str(e), 2)
    from rotbench.results.store import record

    try:
        done = record(new, out_path, db_path)
    except OSError as e:
        _fail(f"cannot write {out_path}: {e.strerror or e}")
    render(new, terminal_console())
    where = f"recorded in {db_path}" if done.pending is None else (
        f"pending for {db_path} (the next run or `rotbench db` imports it)")
    print(f"wrote {out_path}; {where}")
