"""``rotbench review``: the reference engine's review queue of a run, and ruling on it.

Reads the report of record only (its ``review_queue``), and appends to a rulings file; loads
no engine, model or workflow engine. Errors are one line on stderr: exit 1 for an unreadable
report or rulings file, 2 for a bad option.
"""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from rotbench._util.safe_text import printable, terminal_console
from rotbench.cli.common import fail


def _report_path(run: str, reports_dir: str) -> Path:
    path = Path(run)
    if path.suffix == ".json" or path.is_file():
        return path
    if "/" in run or "\\" in run or run in ("", ".", ".."):
        fail(f"RUN {printable(run)!r} is neither a report file nor a run id", 2)
    from rotbench.results.files.report import find_report

    return find_report(Path(reports_dir), run) or Path(reports_dir) / f"{run}.json"


def _claim(c) -> str:  # noqa: ANN001 - a RulingClaim
    return f"{printable(c.text, 160)}\n{printable(c.source, 60)}, {c.date}"


# Every text here comes from the report (a file): pair ids, claims, the run id. Cells are
# rich Text (never markup) with control characters escaped, printed through the terminal
# console (rotbench._util.safe_text), which escapes whatever else would reach the terminal.


def review(
    run: Annotated[str, typer.Argument(help="A run id (looked up in --reports-dir) or a "
                                       "report file.", show_default=False)],
    rule: Annotated[
        tuple[str, str] | None,
        typer.Option("--rule", help="Rule on one pair: ID coexist|replacement.",
                     show_default=False),
    ] = None,
    rulings: Annotated[
        str | None,
        typer.Option("--rulings", help="Rulings file (default: rulings.jsonl beside the report).",
                     show_default=False),
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who rules (default: your user name).",
                                           show_default=False)] = None,
    note: Annotated[str | None, typer.Option("--note", help="A note kept with the ruling.",
                                             show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="List ruled pairs too, with their ruling.")
                    ] = False,
    format: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    reports_dir: Annotated[str, typer.Option("--reports-dir", help="Where run ids are looked "
                                             "up.")] = "reports",
) -> None:
    """List the open review records of a run (pairs the reference engine may not settle
    itself: a web page's claim against a conversation's), or rule on one with --rule."""
    from rotbench.results.files.report import ReportError, load_report
    from rotbench.rulings import RULING_KINDS, RulingsError, open_items, read_rulings

    if format not in ("table", "json"):
        fail(f"--format: unknown format {format!r} (available: table, json)", 2)
    path = _report_path(run, reports_dir)
    try:
        report = load_report(path)
    except ReportError as exc:
        fail(str(exc), 1)
    rulings_path = Path(rulings) if rulings else path.parent / "rulings.jsonl"
    try:
        ruled = read_rulings(rulings_path) if rulings_path.exists() else None
    except RulingsError as exc:
        fail(str(exc), 1)
    items = report.review_queue
    if not items:
        why = ("it was written without claim text (--no-claim-text)"
               if not report.selection.record_claim_text else
               f"engine {report.selection.engine} filed none")
        typer.echo(f"{path}: no review records ({printable(why)})")
        return
    in_effect = {r.key: r for r in ruled.effective} if ruled else {}
    if rule is not None:
        pair_id, kind = rule
        if kind not in RULING_KINDS:
            fail(f"--rule: unknown ruling {printable(kind)!r} (available: "
                 f"{', '.join(RULING_KINDS)})", 2)
        item = next((i for i in items if i.pair_id == pair_id), None)
        if item is None:
            fail(f"--rule: no review record {printable(pair_id)!r} in {path}", 2)
        _append(rulings_path, item, kind, by, note, report.run_id, in_effect.get(pair_id))
        return
    shown = items if all_ else open_items(items, set(in_effect))
    if format == "json":
        typer.echo(json.dumps([{**i.model_dump(mode="json"),
                                "ruling": in_effect[i.pair_id].ruling
                                if i.pair_id in in_effect else None} for i in shown], indent=2))
        return
    from rotbench.results.presentation.tables import Col, print_table

    cols = [Col("id"), Col("seed", justify="right"), Col("day", justify="right"),
            Col("older claim", "text"), Col("newer claim", "text"),
            *((Col("ruling"),) * all_)]
    rows = [[i.pair_id, str(i.seed), str(i.day), _claim(i.older), _claim(i.newer),
             *((in_effect[i.pair_id].ruling if i.pair_id in in_effect else "open",) * all_)]
            for i in shown]
    print_table(terminal_console(), f"Review records of {report.run_id}: {len(shown)} "
                f"{'listed' if all_ else 'open'} of {len(items)}", cols, rows)
    if shown and not all_:
        typer.echo(f"rule with: rotbench review {printable(run)} --rule ID coexist|replacement")


def _append(path: Path, item, kind: str, by: str | None, note: str | None,  # noqa: ANN001
            run_id: str, earlier) -> None:  # noqa: ANN001
    from pydantic import ValidationError

    from rotbench.rulings import RULINGS_SCHEMA_VERSION, Ruling, RulingsError, append_ruling

    try:
        who = by if by is not None else getpass.getuser()
    except (KeyError, OSError):
        who = "unknown"
    try:
        ruling = Ruling(schema_version=RULINGS_SCHEMA_VERSION, pair_id=item.pair_id,
                        older=item.older, newer=item.newer, ruling=kind, ruled_by=who,
                        ruled_at=datetime.now(UTC).replace(microsecond=0),
                        origin=f"rotbench review {run_id} seed {item.seed} record "
                        f"{item.review_id}", note=note)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        fail(f"--by/--note: field {'.'.join(map(str, err['loc']))}: {err['msg']}", 2)
    try:
        written = append_ruling(path, ruling)
    except RulingsError as exc:
        fail(str(exc), 1)
    except OSError as exc:
        fail(f"{path}: cannot write ({exc.strerror or exc})", 1)
    replaced = f" (replaces the earlier ruling: {earlier.ruling})" if earlier else ""
    typer.echo(f"ruled {printable(item.pair_id, 80)} {kind}{replaced}; {printable(path)} "
               "now holds "
               f"{len(written.rulings)} rulings on {len(written.effective)} pairs")
