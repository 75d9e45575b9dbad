"""``rotbench rescore``: a saved report's recorded hits re-classified under another scorer
version, every figure recomputed, with no engine, model or embedding (registered in
``rotbench.cli.main``). On failure one line on stderr: exit 1 for a file or its content, 2
for a bad option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rotbench._util.outputs import OutputError, check_outputs, safe_file_name
from rotbench._util.safe_text import terminal_console
from rotbench.cli.show import DB_NAME, _fail, _report_path, is_run_id, reads_decoys_of
from rotbench.results.database.tables import check_fits
from rotbench.results.files.report import ReportError, load_report, report_file_name
from rotbench.results.files.worlds import WORLDS_DIR
from rotbench.results.presentation.render import render
from rotbench.results.rescore import rescore_report
from rotbench.scoring.lexicons import DEFAULT_SCORER, SCORER_VERSIONS, UnknownScorer, lexicon


def _default_scorer_of(report: Path) -> str:
    """The default scorer for rescoring ``report``: v6 for a report of generator 3 or later, else
    ``DEFAULT_SCORER`` (also when the report cannot be read: that error is shown later)."""
    from rotbench.scoring.lexicons import default_scorer

    try:
        return default_scorer(load_report(report).selection.generator_version)
    except Exception:  # noqa: BLE001 - the rescore reports the real error itself
        return DEFAULT_SCORER


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
            "or v6 for a report of generator 3 or later.",
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
    out_dir = _checked_out_dir(source_path, out, db)
    new = _rescored(source_path, version, out_dir, db)
    # the file name comes from the new run id, made safe: nothing read decides a folder
    out_path = out if out is not None else out_dir / report_file_name(
        safe_file_name(new.run_id), new.selection.engine)
    _record(new, out_path, db)


def _checked_out_dir(source_path: Path, out: Path | None, db: Path | None) -> Path:
    """The folder the rescored report and its worlds go to (``--out``'s, else the source's),
    once the outputs are checked (exit 2 before anything is written)."""
    if out is not None:
        if out.resolve() == source_path.resolve():
            _fail(f"refusing to overwrite the source report {source_path}; choose another "
                  "--out", 2)
        if out.exists():
            _fail(f"{out} already exists; choose another --out", 2)
    # the new worlds go beside the new report (its folder is the user's or the source's)
    out_dir = out.parent if out is not None else source_path.parent
    from rotbench._util.outputs import probe_writable_dir

    try:  # before anything is written (the worlds' rows go to --db as they are re-scored)
        check_outputs([*([("--out", out, "report")] if out is not None else []),
                       ("--db", db if db is not None else out_dir / DB_NAME, "duckdb")])
    except OutputError as e:
        _fail(str(e), 2)
    if reason := probe_writable_dir(out_dir):  # the folder of the new report (and default db)
        _fail(f"--out {out_dir}: {reason}" if out is not None else f"the source report's "
              f"folder {out_dir}: {reason}; give --out to write the new report elsewhere", 2)
    if db is not None and (reason := probe_writable_dir(db.parent)):
        _fail(f"--db {db.parent}: {reason}", 2)
    return out_dir


def _rescored(source_path: Path, version: str, out_dir: Path, db: Path | None):
    """The source report rescored under ``version``: its worlds written in ``out_dir`` and
    their rows in the database as each is re-scored. Exits 1 on a bad report or a failed
    write."""
    from rotbench.results.database.tables import WorldRows

    # each re-scored world's rows go to the database as it is written (not read back later)
    rows = WorldRows(db if db is not None else out_dir / DB_NAME, reads_decoys_of(version))
    try:
        source = load_report(source_path)
        check_fits(source)
        from rotbench.results.truth import truth_problem

        if problem := truth_problem(source):
            _fail(f"{source_path}: {problem}; not rescored")
        return rescore_report(source, version, source_path, out_dir / WORLDS_DIR, rows)
    except (ReportError, ValueError) as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"cannot write the rescored worlds in {out_dir / WORLDS_DIR}: {e.strerror or e}")
    finally:
        rows.close()


def _record(new, out_path: Path, db: Path | None) -> None:
    """Write the rescored report ``new`` to ``out_path``, record it in the database, and
    show it."""
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
