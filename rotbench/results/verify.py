"""Checking a saved report's figures against its own probes.

A report stores both its figures (``metrics``, ``by_channel``, ...) and (in its world files)
every probe with its classified hits, so the figures can be recomputed without running
anything. ``mismatches`` lists where the stored figures and the probes disagree (an edited
or damaged file); ``with_recomputed_figures`` is the report with the figures the probes
give."""

from __future__ import annotations

from rotbench.results.files.worlds import iter_worlds
from rotbench.results.schema import Report, reads_decoys
from rotbench.scoring.metrics import MetricsBundle, Rate
from rotbench.scoring.tally import tally_worlds

MAX_LISTED = 3
"""Disagreements spelled out in ``mismatches`` before the rest are only counted."""


def _fraction(rate: object) -> str:
    if isinstance(rate, Rate):
        return f"{rate.numerator}/{rate.denominator}"
    return str(rate)


def _flatten(prefix: str, value: object, out: dict[str, object]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _flatten(f"{prefix}[{i}]", item, out)
    else:
        out[prefix] = value


def _figures(bundle: MetricsBundle | Report) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in MetricsBundle.model_fields:
        value = getattr(bundle, name)
        if isinstance(value, list):  # floor sweep rows: compare their rates
            value = [dict(row) for row in value]
        _flatten(name, value, out)
    return {k: (_fraction(v) if isinstance(v, Rate) else v) for k, v in out.items()}


def recompute(report: Report) -> MetricsBundle:
    """The figures of ``report``'s probes (classes as recorded), read one world at a time.
    Raises ValueError when a hit is unscored, ReportError for a missing or damaged world
    file."""
    return tally_worlds(iter_worlds(report), reads_decoys(report.selection)).bundle()


def mismatches(report: Report, bundle: MetricsBundle | None = None) -> list[str]:
    """Stored figures the probes disagree with, as ``'metrics.current_first: stored 216/216,
    probes give 183/216'``; the first MAX_LISTED, then a count of the rest. A figure the
    report does not store (one added by a later rotbench) is not a disagreement. An empty
    list means every stored figure is what the probes give. ``bundle``: the recomputed
    figures when the caller already has them."""
    stored = _figures(report)
    derived = _figures(bundle if bundle is not None else recompute(report))
    differ = [k for k in sorted(stored) if stored[k] != derived.get(k, stored[k])]
    lines = [f"{k}: stored {stored.get(k, 'nothing')}, probes give {derived.get(k, 'nothing')}"
             for k in differ[:MAX_LISTED]]
    if len(differ) > MAX_LISTED:
        lines.append(f"and {len(differ) - MAX_LISTED} more")
    return lines


def with_recomputed_figures(report: Report) -> Report:
    """``report`` with every figure replaced by what its probes give."""
    bundle = recompute(report)
    return report.model_copy(update={name: getattr(bundle, name)
                                     for name in MetricsBundle.model_fields})


def load_checked(path, warn) -> Report:  # noqa: ANN001 - path: str | Path
    """The report at ``path`` with the figures its probes give: every command that shows a
    figure read from a file loads it through here (``show``, ``compare``, ``report``,
    ``report --html``, ``export`` of a report file).

    When the stored figures disagree with the probes (an edited or damaged file),
    ``warn`` is called with one line naming the file and the first disagreements, and the
    recomputed figures are the ones returned. Raises ReportError (unreadable, invalid or
    missing world files) and ValueError (an unscored hit)."""
    from rotbench.outputs import terminal_safe
    from rotbench.results.files.report import load_report

    report = load_report(path)
    bundle = recompute(report)
    differ = mismatches(report, bundle)
    if not differ:  # a figure added after the report was written is filled in
        return report.model_copy(update={name: getattr(bundle, name)
                                         for name in MetricsBundle.model_fields
                                         if getattr(report, name) is None
                                         and getattr(bundle, name) is not None})
    warn(terminal_safe(f"rotbench: warning: {path}: the stored figures disagree with the "
                       f"report's probes ({'; '.join(differ)}); showing the figures the "
                       "probes give", one_line=True))
    return with_recomputed_figures(report)
