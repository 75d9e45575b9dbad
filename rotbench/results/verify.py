"""Checking a saved report's figures against its own probes.

A report stores both its figures (``metrics``, ``by_channel``, ...) and (in its world files)
every probe with its classified hits, so the figures can be recomputed without running
anything. The probes are read as their hit texts say: every recorded hit is re-classified
from its text under the report's scorer (``reclassified_worlds``, the step ``rescore``
takes), so an edited class or hit text cannot pass for its recorded class. ``mismatches``
lists where the stored figures and the probes disagree (an edited or damaged file);
``verification_problems`` says why a report does not verify (``rotbench db`` refuses it);
``with_recomputed_figures`` is the report with the figures the probes give."""

from __future__ import annotations

from collections.abc import Iterator

from rotbench.results.files.worlds import iter_worlds
from rotbench.results.schema import Report, reads_decoys
from rotbench.scoring.metrics import MetricsBundle, Rate
from rotbench.scoring.models import WorldProbes
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


WHOLE_FIELDS: frozenset[str] = frozenset({"family_miss_stages"})
"""Stored mappings whose keys the probes decide as well as their values: a family stored
that the probes do not give, or one they give that a report storing the field lacks, is a
disagreement (elsewhere a figure the report does not store, one a later rotbench added, is
not)."""


def _figures(bundle: MetricsBundle | Report) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in MetricsBundle.model_fields:
        value = getattr(bundle, name)
        if isinstance(value, list):  # floor sweep rows: compare their rates
            value = [dict(row) for row in value]
        _flatten(name, value, out)
    return {k: (_fraction(v) if isinstance(v, Rate) else v) for k, v in out.items()}


def _reading(hit: object) -> tuple:
    """What scoring decided about one hit: every field a figure is counted from."""
    return (hit.cls, tuple(hit.poison_channels), tuple(hit.values), tuple(hit.decoy_kinds),
            hit.framed_past, tuple(hit.other_classes))


class TextCheck:
    """Hits whose recorded class disagrees with what their recorded text gives under the
    report's scorer (``reclassified_worlds``): ``count`` of them and the first MAX_LISTED
    as ``'seed 42, day 30, 'city', rank 1: recorded current, its text gives stale'``."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def line(self) -> str | None:
        """One line for a warning or a refusal; None when every class agrees."""
        if not self.count:
            return None
        more = f"; and {self.count - len(self.first)} more" if self.count > len(self.first) \
            else ""
        return (f"{self.count} recorded hit classes disagree with their hit texts "
                f"({'; '.join(self.first)}{more})")


def reclassified_worlds(report: Report, check: TextCheck) -> Iterator[WorldProbes]:
    """``report``'s worlds one at a time, each hit re-classified from its recorded text under
    the report's scorer (``score_world``, as ``rotbench rescore`` does), so that a class or
    a hit text edited in a world file (with the digest the report names re-written) counts as
    what the text says; disagreements are added to ``check``. A report without hit texts
    (``--no-claim-text``), or under a scorer this rotbench does not know, yields its worlds
    as recorded."""
    from rotbench.scoring.lexicons import UnknownScorer
    from rotbench.scoring.score import MissingClaimText, score_world

    scorer = report.selection.scorer_version
    for world in iter_worlds(report):
        if not report.selection.record_claim_text:
            yield world
            continue
        try:
            fresh = score_world(world, scorer)
        except (MissingClaimText, UnknownScorer):
            yield world
            continue
        for old, new in zip(world.probes, fresh.probes, strict=True):
            for was, now in zip(old.hits, new.hits, strict=True):
                if _reading(was) != _reading(now):
                    check.count += 1
                    if len(check.first) < MAX_LISTED:
                        check.first.append(
                            f"seed {world.seed}, day {old.day}, {old.attribute!r}, rank "
                            f"{was.rank}: recorded {was.cls}, its text gives {now.cls}")
        del world
        yield fresh


def recompute(report: Report, check: TextCheck | None = None) -> MetricsBundle:
    """The figures of ``report``'s probes, read one world at a time, with every hit
    classified from its recorded text (``reclassified_worlds``; classes as recorded when
    the report has no texts). ``check`` collects the hits whose recorded class the text
    does not give. Raises ValueError when a hit is unscored, ReportError for a missing or
    damaged world file."""
    worlds = reclassified_worlds(report, check if check is not None else TextCheck())
    return tally_worlds(worlds, reads_decoys(report.selection)).bundle()


def verification_problems(report: Report) -> list[str]:
    """Why ``report``'s stored figures cannot be taken as true, as one-line reasons, first
    the gravest: a truth its seed, days and generator do not give (``rotbench.results.truth``),
    hit classes its hit texts do not give, stored figures its probes do not give. Empty when
    the report verifies. Raises as ``recompute``."""
    from rotbench.results.truth import truth_problem

    problems = [truth] if (truth := truth_problem(report)) else []
    check = TextCheck()
    bundle = recompute(report, check)
    if line := check.line():
        problems.append(line)
    if differ := mismatches(report, bundle):
        problems.append("the stored figures disagree with the report's probes ("
                        + "; ".join(differ) + ")")
    return problems


def mismatches(report: Report, bundle: MetricsBundle | None = None) -> list[str]:
    """Stored figures the probes disagree with, as ``'metrics.current_first: stored 216/216,
    probes give 183/216'``; the first MAX_LISTED, then a count of the rest. A figure the
    report does not store (one added by a later rotbench) is not a disagreement. An empty
    list means every stored figure is what the probes give. ``bundle``: the recomputed
    figures when the caller already has them."""
    stored = _figures(report)
    derived = _figures(bundle if bundle is not None else recompute(report))
    differ = [k for k in sorted(stored) if stored[k] != derived.get(k, stored[k])]
    # a mapping whose keys the probes decide: a key stored or missing is a disagreement too
    strict = {k for k in stored.keys() ^ derived.keys() if k.split(".")[0] in WHOLE_FIELDS
              and any(j.startswith(k.split(".")[0] + ".") for j in stored)}
    differ = sorted({*differ, *strict})
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
    recomputed figures are the ones returned. A report whose truth is not what its seed,
    days and generator give (``rotbench.results.truth``) is refused. Raises ReportError
    (unreadable, invalid or missing world files, a truth that does not re-derive) and
    ValueError (an unscored hit)."""
    from rotbench._util.outputs import terminal_safe
    from rotbench.results.files.report import ReportError, load_report
    from rotbench.results.truth import truth_problem

    report = load_report(path)
    if problem := truth_problem(report):
        raise ReportError(terminal_safe(f"{path}: {problem}; its figures are not shown",
                                        one_line=True))
    check = TextCheck()
    bundle = recompute(report, check)
    differ = mismatches(report, bundle)
    if not differ and not check.count:  # a figure added after the report was written
        return report.model_copy(update={name: getattr(bundle, name)
                                         for name in MetricsBundle.model_fields
                                         if getattr(report, name) is None
                                         and getattr(bundle, name) is not None})
    if check.count:
        warn(terminal_safe(f"rotbench: warning: {path}: {check.line()}; showing the figures "
                           "the hit texts give", one_line=True))
    if differ:
        warn(terminal_safe(f"rotbench: warning: {path}: the stored figures disagree with the "
                           f"report's probes ({'; '.join(differ)}); showing the figures the "
                           "probes give", one_line=True))
    return report.model_copy(update={name: getattr(bundle, name)
                                     for name in MetricsBundle.model_fields})
