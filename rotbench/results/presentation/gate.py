"""The regression gate of ``rotbench compare BASELINE NEW... --fail-if-worse``.

The gate reads a finished ``Comparison``: a figure fails it when it has a better direction
(``HIGHER_IS_BETTER``; the context figures have none) and a later column differs
significantly from the baseline on the worse side, by the test the comparison chose for that
cell (``rotbench.results.presentation.compare``). Reports the gate cannot judge fairly are
refused before anything is compared (``GateError``, exit 2): different arms, different
scorers, or a scorer older than v5 (whose figures count a current value framed as past as
recalled).
"""

from __future__ import annotations

from rotbench.results.presentation.compare import TESTS, Cell, Comparison
from rotbench.results.presentation.evidence import EVIDENCE_FAMILY
from rotbench.results.schema import Report
from rotbench.safe_text import printable
from rotbench.scoring.lexicons import SCORER_VERSIONS
from rotbench.scoring.metrics import CONTEXT_FIGURES, HIGHER_IS_BETTER

GATE_SCORER = "v5"
"""The oldest scorer whose reports the gate accepts."""

GATED_FAMILIES_SKIPPED: frozenset[str] = frozenset({"Poison by channel", EVIDENCE_FAMILY})
"""Breakdown rows the gate leaves out (their totals are gated)."""


class GateError(ValueError):
    """Reports the gate cannot judge (one line; exit 2)."""


def check_gate_input(reports: list[Report], paths: list[str]) -> None:
    """Raise ``GateError`` unless every report has the baseline's arm and scorer, scored
    under ``GATE_SCORER`` or later. ``paths``: how each report was named, for the message."""
    base = reports[0].selection
    newest = SCORER_VERSIONS.index(GATE_SCORER)
    for report, path in zip(reports, paths, strict=True):
        s = report.selection
        name = printable(path, 120)
        version = s.scorer_version
        if version not in SCORER_VERSIONS:
            raise GateError(f"{name} was scored under scorer {printable(version, 10)}, which "
                            f"this rotbench does not know ({', '.join(SCORER_VERSIONS)})")
        if SCORER_VERSIONS.index(version) < newest:
            raise GateError(
                f"{name} was scored under scorer {printable(version, 10)}, before "
                f"{GATE_SCORER}: rescore it first (rotbench rescore {name} --scorer "
                f"{GATE_SCORER})")
        if s.arm != base.arm:
            raise GateError(f"{name} ran arm {printable(s.arm, 20)}, the baseline "
                            f"{printable(paths[0], 120)} ran arm {printable(base.arm, 20)}: "
                            "the gate compares one arm")
        if version != base.scorer_version:
            raise GateError(f"{name} was scored under {printable(version, 10)}, the baseline "
                            f"under {printable(base.scorer_version, 10)}: rescore one of them")


def _test_text(cell: Cell) -> str:
    diff = cell.difference
    assert diff is not None
    if diff.paired is not None:
        p = diff.paired
        return (f"exact McNemar, paired: {p.first_only} questions only in the baseline's "
                f"numerator, {p.other_only} only in this one's, p={p.p_value:.3g}")
    return (f"Newcombe 95% interval of the difference {diff.low:+.3f} to {diff.high:+.3f}"
            " (independent samples)")


def worse_lines(comparison: Comparison) -> list[str]:
    """One line per (later column, figure) significantly worse than the baseline:
    metric, both n/d and the test. Empty when nothing is worse."""
    lines = []
    base = comparison.columns[0]
    for family in comparison.families:
        if family.name in GATED_FAMILIES_SKIPPED:
            continue
        for row in family.rows:
            if row.metric in CONTEXT_FIGURES or row.metric not in HIGHER_IS_BETTER:
                continue
            higher = HIGHER_IS_BETTER[row.metric]  # type: ignore[index]
            first = row.cells[0].rate
            for column, cell in zip(comparison.columns[1:], row.cells[1:], strict=True):
                diff = cell.difference
                if diff is None or not diff.significant or first is None or cell.rate is None:
                    continue
                if (diff.value < 0) != higher:
                    continue  # significantly better
                lines.append(
                    f"worse: {row.metric} ({'higher' if higher else 'lower'} is better): "
                    f"{printable(base.engine, 60)} {first.numerator}/{first.denominator} -> "
                    f"{printable(column.engine, 60)} {cell.rate.numerator}/"
                    f"{cell.rate.denominator} ({_test_text(cell)})")
    return lines


__all__ = ["GATE_SCORER", "GateError", "TESTS", "check_gate_input", "worse_lines"]
