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

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from rotbench._util.safe_text import printable
from rotbench.results.presentation.compare import TESTS, Cell, Comparison
from rotbench.results.presentation.evidence import EVIDENCE_FAMILY
from rotbench.results.schema import Report
from rotbench.scoring.lexicons import SCORER_VERSIONS
from rotbench.scoring.metrics import CONTEXT_FIGURES, HIGHER_IS_BETTER

GATE_SCORER = "v5"
"""The oldest scorer whose reports the gate accepts."""

GATED_FAMILIES_SKIPPED: frozenset[str] = frozenset({"Poison by channel", EVIDENCE_FAMILY})
"""Breakdown rows the gate leaves out (their totals are gated)."""


class GateError(ValueError):
    """Reports the gate cannot judge (one line; exit 2)."""


def check_gate_input(reports: list[Report], paths: list[str]) -> None:
    """Raise ``GateError`` unless every report has the baseline's arm, scorer and noise
    profile (``noise_digest``: two noisy reports of different profiles saw different
    perceptions, so their questions cannot be paired), scored under ``GATE_SCORER`` or
    later. ``paths``: how each report was named, for the message."""
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
        if s.noise_digest != base.noise_digest:
            raise GateError(
                f"{name} perceived through noise profile {_profile(s)}, the baseline "
                f"{printable(paths[0], 120)} through {_profile(base)}: the gate pairs "
                "questions only under one perception (run both with the same --noise)")


def _profile(selection) -> str:  # noqa: ANN001 - a Selection
    """A noisy report's profile as ``'typical' (sha256 1a2b3c4d...)``; ``none`` off the noisy
    arm."""
    if selection.noise_digest is None:
        return "none"
    return (f"{printable(selection.noise or '?', 40)!r} "
            f"(digest {printable(selection.noise_digest, 64)[:12]}...)")


def _test_text(cell: Cell) -> str:
    diff = cell.difference
    assert diff is not None
    if diff.paired is not None:
        p = diff.paired
        return (f"exact McNemar, paired: {p.first_only} questions only in the baseline's "
                f"numerator, {p.other_only} only in this one's, p={p.p_value:.3g}")
    return (f"Newcombe 95% interval of the difference {diff.low:+.3f} to {diff.high:+.3f}"
            " (independent samples)")


GATE_FILE = "rotbench-gate.toml"
"""The gate file ``compare --fail-if-worse`` reads from the working folder when present."""
MAX_GATE_FILE_BYTES = 64 * 1024
"""Largest gate file read (a few lines are enough)."""


class GatePolicy(BaseModel):
    """Which figures the gate judges. ``metrics``: only these (None: every figure with a
    better direction); ``allow``: known trade-offs, reported when worse but never failing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: tuple[str, ...] | None = None
    allow: tuple[str, ...] = ()

    def judged(self, metric: str) -> bool:
        """Whether the gate looks at ``metric`` at all."""
        return self.metrics is None or metric in self.metrics


def gate_policy(metrics: list[str], allow: list[str], file: Path | None) -> GatePolicy:
    """The policy of ``--metric``/``--allow`` flags, else of the gate ``file`` (``metrics``
    and ``allow``, lists of metric names), else judge every figure. Raises GateError (one
    line naming the flag, or the file, line and field) for an unknown metric, a metric both
    judged and allowed, a file that is not TOML or has other keys."""
    if metrics or allow:
        return _checked(GatePolicy(metrics=tuple(metrics) or None, allow=tuple(allow)),
                        "--metric", "--allow")
    if file is None:
        return GatePolicy()
    return _checked(_read_gate_file(file), f"{printable(file, 200)}: field metrics",
                    f"{printable(file, 200)}: field allow")


def _read_gate_file(path: Path) -> GatePolicy:
    import tomllib

    from pydantic import ValidationError

    from rotbench._util.json_input import JSONInputError, decode_utf8, read_capped

    shown = printable(path, 200)
    try:
        text = decode_utf8(read_capped(path, MAX_GATE_FILE_BYTES, "gate file"), shown)
        data = tomllib.loads(text)
    except JSONInputError as exc:
        raise GateError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise GateError(f"{shown}: not TOML ({printable(exc, 200)})") from None
    try:
        return GatePolicy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        line = _line_of_key(text, str(err["loc"][0])) if err["loc"] else None
        at = f" line {line}:" if line else ""
        raise GateError(f"{shown}:{at} field {printable(where, 80)}: {err['msg']} (a gate "
                        "file holds metrics = [...] and allow = [...], lists of metric "
                        "names)") from None


def _line_of_key(text: str, key: str) -> int | None:
    """The line that sets ``key`` (``key = ...`` or a ``[key]`` table), if one does."""
    import re

    pattern = re.compile(r"\s*\[*\s*[\"']?" + re.escape(key) + r"[\"']?\s*[=\].]")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return None


def _checked(policy: GatePolicy, metric_flag: str, allow_flag: str) -> GatePolicy:
    import difflib

    known = [m for m in HIGHER_IS_BETTER if m not in CONTEXT_FIGURES]
    for flag, names in ((metric_flag, policy.metrics or ()), (allow_flag, policy.allow)):
        for name in names:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise GateError(f"{flag}: {printable(name, 60)!r} is not a metric the gate "
                                f"judges (one with a better direction){hint}")
    both = sorted(set(policy.metrics or ()) & set(policy.allow))
    if both:
        raise GateError(f"{allow_flag}: {both[0]!r} is both judged ({metric_flag}) and "
                        "allowed to be worse; name it in one of them")
    return policy


def worse_lines(comparison: Comparison, policy: GatePolicy | None = None
                ) -> tuple[list[str], list[str]]:
    """(worse, allowed): one line per (later column, figure) significantly worse than the
    baseline, metric, both n/d and the test; a figure ``policy`` allows goes to the second
    list (``allowed: ...``), one it does not judge nowhere. Both empty when nothing is
    worse."""
    policy = policy or GatePolicy()
    lines: list[str] = []
    allowed: list[str] = []
    base = comparison.columns[0]
    for family in comparison.families:
        if family.name in GATED_FAMILIES_SKIPPED:
            continue
        for row in family.rows:
            if row.metric in CONTEXT_FIGURES or row.metric not in HIGHER_IS_BETTER \
                    or not policy.judged(row.metric):
                continue
            higher = HIGHER_IS_BETTER[row.metric]  # type: ignore[index]
            first = row.cells[0].rate
            for column, cell in zip(comparison.columns[1:], row.cells[1:], strict=True):
                diff = cell.difference
                if diff is None or not diff.significant or first is None or cell.rate is None:
                    continue
                if (diff.value < 0) != higher:
                    continue  # significantly better
                (allowed if row.metric in policy.allow else lines).append(
                    f"{'allowed' if row.metric in policy.allow else 'worse'}: {row.metric} "
                    f"({'higher' if higher else 'lower'} is better): "
                    f"{printable(base.engine, 60)} {first.numerator}/{first.denominator} -> "
                    f"{printable(column.engine, 60)} {cell.rate.numerator}/"
                    f"{cell.rate.denominator} ({_test_text(cell)})")
    return lines, allowed


__all__ = ["GATE_FILE", "GATE_SCORER", "GateError", "GatePolicy", "TESTS", "check_gate_input",
           "gate_policy", "worse_lines"]
