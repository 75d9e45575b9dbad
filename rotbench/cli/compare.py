"""``rotbench compare``: two or more saved runs side by side (registered in
``rotbench.cli.main``)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rotbench._util.safe_text import terminal_console
from rotbench.cli.common import fail
from rotbench.published.store import PREFIX


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


def compare(
    reports: Annotated[list[Path], typer.Argument(help="Two or more saved reports or run ids "
                                                  "in the database, or published:ENGINE / "
                                                  "published:all (the reports shipped with "
                                                  "rotbench, on the first report's arm); the "
                                                  "first is the baseline column.",
                                                  show_default=False)],
    intervals: Annotated[bool, typer.Option("--intervals", help="Show 95% Wilson intervals.")
                         ] = False,
    format: Annotated[CompareFormat, typer.Option("--format", help="table, json or markdown.")
                      ] = CompareFormat.table,
    force: Annotated[bool, typer.Option("--force", help="Compare reports on different worlds."
                                        )] = False,
    fail_if_worse: Annotated[bool, typer.Option(
        "--fail-if-worse", help="A regression gate: exit 1 when a figure with a better "
        "direction is significantly worse in a later report than in the first (one line per "
        "figure on stderr), 0 otherwise, 2 on unusable input.")] = False,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", help="With --fail-if-worse: judge only this metric (repeat for several).",
        show_default=False)] = None,
    allow: Annotated[list[str] | None, typer.Option(
        "--allow", help="With --fail-if-worse: a known trade-off; this metric may be worse "
        "(said, never failing; repeatable).", show_default=False)] = None,
    gate_file: Annotated[str | None, typer.Option(
        "--gate-file", help="With --fail-if-worse: a TOML file of metrics = [...] and allow "
        "= [...] (default: ./rotbench-gate.toml when present; --metric/--allow win).",
        show_default=False)] = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", help="With --fail-if-worse: print the verdict alone, no tables.")] = False,
    db: Annotated[str | None, typer.Option(
        "--db", help="Where run ids are looked up (default: reports/rotbench.duckdb).",
        show_default=False)] = None,
) -> None:
    """Compare reports side by side: each engine's top behaviours (what to fix first), then
    one table per metric family, a column per report, and a mark on each figure that differs
    significantly (95%) from the first column: '*' from the paired exact McNemar test
    (identical worlds), '+' from Newcombe's interval. published:mem0 (or published:all)
    adds the report shipped with rotbench for that engine on the first report's worlds,
    paired question by question, with nothing installed."""
    from rotbench.cli.show import is_run_id
    from rotbench.results.files.report import ReportError
    from rotbench.results.presentation.compare import (
        CompareError,
        compare_reports,
        comparison_markdown,
        render_comparison,
    )
    from rotbench.results.presentation.gate import (
        GateError,
        check_gate_input,
        gate_policy,
        worse_lines,
    )
    from rotbench.results.verify import load_checked

    bad_input = 2 if fail_if_worse else 1
    if len(reports) < 2 and not any(str(p).startswith(PREFIX) for p in reports):  # usage (2)
        fail("compare needs at least two reports (one run: rotbench show)", 2)
    gating = [flag for flag, given in (("--metric", metric), ("--allow", allow),
                                       ("--gate-file", gate_file), ("--quiet", quiet)) if given]
    if gating and not fail_if_worse:
        fail(f"{gating[0]} applies to the gate: add --fail-if-worse", 2)
    policy = None
    if fail_if_worse:
        try:
            policy = gate_policy(metric or [], allow or [], _gate_file(gate_file))
        except GateError as exc:
            fail(str(exc), 2)
    loaded: list = []
    shipped: dict[int, str] = {}  # position in loaded -> 'published:...' to expand there
    for path in reports:
        if str(path).startswith(PREFIX):
            shipped[len(loaded)] = str(path)
            continue
        if not str(path).strip() or str(path) == ".":
            fail("compare: an empty report path is not allowed", 2)
        if is_run_id(str(path)):  # a run id: its report of record beside the database
            from rotbench.cli.report import resolve_runs

            loaded.extend(resolve_runs([str(path)], Path(db) if db else None, bad_input)[0])
            continue
        try:
            loaded.append(load_checked(path, lambda line: typer.echo(line, err=True)))
        except (ReportError, ValueError) as exc:
            fail(str(exc), bad_input)
    names = [str(p) for p in reports if not str(p).startswith(PREFIX)]
    loaded, names, known, findings = _with_published(loaded, names, shipped, bad_input)
    if len(loaded) < 2:
        fail("compare needs at least two reports (published:all on its own arm: add a run)", 2)
    try:
        if fail_if_worse:
            check_gate_input(loaded, names)
        comparison = compare_reports(loaded, force=force, known=known)
    except (CompareError, GateError) as exc:
        fail(str(exc), bad_input)
    worse = _verdict(*worse_lines(comparison, policy), len(loaded) - 1) if fail_if_worse \
        else False  # the verdict first, then the tables
    if not quiet:
        from rotbench.results.presentation.diagnosis import report_diagnosis

        try:
            diagnoses = [found if found is not None else report_diagnosis(r)
                         for r, found in zip(loaded, findings, strict=True)]
        except (ReportError, ValueError) as exc:
            fail(str(exc), bad_input)
        if format is CompareFormat.json:
            document = comparison.model_dump(mode="json")
            document["diagnosis"] = [[f.model_dump(mode="json") for f in findings]
                                     for findings in diagnoses]
            typer.echo(json.dumps(document, indent=2))
        elif format is CompareFormat.markdown:
            typer.echo(comparison_markdown(comparison, intervals), nl=False)
        else:
            console = terminal_console()
            _render_diagnoses(comparison, diagnoses, console)
            render_comparison(comparison, console, intervals)
    if worse:
        raise typer.Exit(1)


def _with_published(loaded: list, names: list[str], shipped: dict[int, str], code: int
                    ) -> tuple[list, list[str], list, list]:
    """``loaded`` with each ``published:<engine>`` (or ``published:all``) expanded at its
    place into the shipped reports it names, on the arm of the first report given (the
    oracle arm when there is none). Returns (reports, their names, their known question
    outcomes (None: read from the worlds), their findings (None: diagnosed from the
    worlds)). Fails (exit ``code``) with one line when a shipped report is unknown or does
    not pair with that first report."""
    from rotbench.published.store import PublishedError, outcomes_of, resolve

    if not shipped:
        return loaded, names, [None] * len(loaded), [None] * len(loaded)
    baseline = loaded[0] if loaded else None
    label = names[0] if names else "the baseline"
    out, out_names, known, findings = [], [], [], []
    seen: set[str] = set()
    for i in range(len(loaded) + 1):
        if i in shipped:
            try:
                records, arm = resolve(shipped[i], baseline, label)
            except PublishedError as exc:
                fail(str(exc), code)
            for record in records:
                name = f"published:{record.manifest.engine_source}"
                if name in seen:
                    continue
                seen.add(name)
                selection = record.report.selection.model_copy(
                    update={"engine_source": name})  # its heading says where it came from
                out.append(record.report.model_copy(update={"selection": selection}))
                out_names.append(name)
                known.append(outcomes_of(record, arm))
                findings.append(list(record.findings))
                baseline = baseline or record.report
        if i < len(loaded):
            out.append(loaded[i])
            out_names.append(names[i])
            known.append(None)
            findings.append(None)
    return out, out_names, known, findings


def _render_diagnoses(comparison, diagnoses, console) -> None:  # noqa: ANN001
    """Before the family tables: each engine column's top behaviours (``compare_rows``)."""
    from rotbench.results.presentation.compare import heading
    from rotbench.results.presentation.diagnosis import COMPARE_TOP, DOCS, compare_rows
    from rotbench.results.presentation.tables import Col, print_table

    heads = [heading(column, stacked=True) for column in comparison.columns]
    print_table(console, f"What to fix first (top {COMPARE_TOP} behaviours per engine; lost: "
                f"current answers / questions; {DOCS})",
                [Col("engine", "words"), Col("#"), Col("behaviour", "text"),
                 Col("lost", "key", "right")], compare_rows(heads, diagnoses))


def _gate_file(flag: str | None) -> Path | None:
    """The gate file: ``--gate-file``, else ``rotbench-gate.toml`` in the working folder
    when there is one (said on stderr), else None."""
    from rotbench.results.presentation.gate import GATE_FILE

    if flag is not None:
        if not flag.strip():
            fail("--gate-file: an empty path is not allowed", 2)
        return Path(flag)
    if Path(GATE_FILE).is_file():
        typer.echo(f"rotbench: compare: gate file {GATE_FILE}", err=True)
        return Path(GATE_FILE)
    return None


def _verdict(lines: list[str], allowed: list[str], later: int) -> bool:
    """Print the gate's verdict on stderr (worse figures, allowed ones, a summary line);
    True when some figure is worse."""
    from rotbench._util.outputs import terminal_safe

    for line in [*lines, *allowed]:
        typer.echo(terminal_safe(line, one_line=True), err=True)
    also = f" ({len(allowed)} allowed trade-off(s) worse)" if allowed else ""
    if lines:
        typer.echo(f"rotbench: compare: {len(lines)} figure(s) significantly worse than the "
                   f"baseline{also}", err=True)
        return True
    typer.echo(f"rotbench: compare: no figure significantly worse than the baseline in "
               f"{later} later report(s){also}", err=True)
    return False
