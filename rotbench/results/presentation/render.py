"""The terminal rendering of a report (the same for a fresh run and for ``rotbench show``).

One table per metric family (a metric the report lacks, e.g. a decoy metric under scorer
v1, is left out), poison per channel, decoys and abstention per kind, currency and
supersession by evidence (generator 5), what the first
value-bearing hit was, the floor sweep, the real pairs (when the run read rulings), and the
notes. Each rate reads ``67.6% (146/216)``;
an undefined rate reads ``— (0/0)``; with ``intervals`` the 95% Wilson interval follows in brackets.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console

from rotbench._util.outputs import terminal_safe
from rotbench._util.safe_text import printable
from rotbench.results.presentation.evidence import render_evidence
from rotbench.results.presentation.percent import percent
from rotbench.results.presentation.tables import Col, print_table
from rotbench.results.schema import Report
from rotbench.scoring.lexicons import LEXICONS
from rotbench.scoring.metrics import BY_KIND_V4 as BY_KIND
from rotbench.scoring.metrics import FAMILIES, POISON_METRICS, Rate, better_label, hit_classes
from rotbench.scoring.models import HIT_CLASSES, HitClass


def format_rate(rate: Rate, intervals: bool = False) -> str:
    """``'67.6% (146/216)'``, ``'— (0/0)'`` when undefined; ``intervals`` appends
    ``' [61.1–73.5%]'`` (the 95% Wilson interval, percent, one decimal)."""
    counts = f"({rate.numerator}/{rate.denominator})"
    if rate.value is None:
        return f"— {counts}"
    text = f"{percent(rate.value)} {counts}"
    if intervals and rate.low is not None and rate.high is not None:
        text += f" [{percent(rate.low)[:-1]}–{percent(rate.high)}]"
    return text


def _header(report: Report) -> list[str]:
    s = report.selection
    lines = [
        f"rotbench report {report.run_id}  ({report.created_at})",
        f"arm {s.arm}, seeds {' '.join(map(str, s.seeds))}, {s.days} days, checkpoints "
        f"{' '.join(map(str, s.checkpoints))}, top {s.top_k}"
        + ("" if s.trust_policy is None else
           f", trust policy {'on' if s.trust_policy else 'off'}"),
        f"engine {s.engine} {s.engine_version}, embeddings {s.embedding_model}, generator "
        f"{s.generator_version}, scorer {s.scorer_version}",
    ]
    lines.append(question_counts(report))
    if report.origin is not None:
        o = report.origin
        lines.append(
            f"re-scored from {o.source} (sha256 {o.sha256[:12]}…, scorer {o.scorer_version})"
        )
    if s.users:
        lines.append(shared_line(report))
    if report.usage:
        lines.append("usage: " + ", ".join(f"{k} {v}" for k, v in report.usage.items()))
    if report.degraded:
        lines.append("DEGRADED: " + "; ".join(report.degraded))
    return [terminal_safe(line, one_line=True) for line in lines]


def question_counts(report: Report) -> str:
    """The header's count of questions, in the same numbers as the tables below it: every
    attribute question (the first-hit table's denominator), those with a current value (the
    currency denominator), those on changed and on poisoned attributes (a question on a
    changed attribute may have no current value, so these are not a part of the first), the
    generator-4 questions on a dependent whose value became unknown when its root changed,
    and the unanswerable ones (``answered_unanswerable``'s denominator: from scorer v4 it
    includes the attribute questions asked after a retraction, and on generator 5 those
    asked after a forget request)."""
    answerable = report.metrics["recall_current_at_k"].denominator
    changed = report.metrics["stale_over_current"].denominator
    poisoned = report.metrics["poison_first"].denominator
    never = sum(w.unanswerable for w in report.worlds)
    abstain = report.metrics.get("answered_unanswerable")
    unanswerable = abstain.denominator if abstain is not None else never
    attribute = sum(report.first_hit_counts.values()) or answerable
    without = attribute - answerable  # attribute questions with no current value
    retracted = unanswerable - never  # of them, asked after a retraction (unanswerable)
    unknown = without - retracted  # of them, a dependent whose value became unknown
    text = (f"{attribute} attribute questions ({answerable} with a current value; {changed} "
            f"on changed and {poisoned} on poisoned attributes")
    if retracted >= 0 and unknown > 0:
        text += f"; {unknown} on a dependent whose value became unknown"
    text += f") and {unanswerable} unanswerable"
    if 0 < retracted <= without:
        forgets = " or a forget request" if "forgotten_served_at_k" in report.metrics else ""
        text += (f" ({never} about what the world never mentions, {retracted} attribute "
                 f"questions asked after a retraction{forgets})")
    return text


def miss_denominator(report: Report) -> int | None:
    """What every place shows the miss stages over: ``current_first``'s denominator (the
    questions with a current value; the stages split its wrong first answers). None for a
    report without miss stages or ``current_first``."""
    first = report.metrics.get("current_first")
    if report.miss_stages is None or first is None:
        return None
    return first.denominator


def denominator_legend(report: Report) -> list[str]:
    """One line per distinct denominator of the tables: the number, what it counts
    (``rotbench.scoring.definitions.short_denominator``, the words of ``docs/metrics.md``'s
    summary table) and the metrics over it, the miss stages with ``current_first``. The
    terminal prints it under the tables, the HTML page under its legend."""
    from rotbench.scoring.definitions import (
        FIRST_HIT_DENOMINATOR,
        MISS_STAGES_ROW,
        denominator_group,
        short_denominator,
    )

    lex = LEXICONS.get(report.selection.scorer_version)
    events = lex.reads_events if lex is not None else True

    groups: dict[tuple[str, int], list[str]] = {}
    for names in FAMILIES.values():
        for name in names:
            rate = report.metrics.get(name)
            if rate is not None:
                groups.setdefault((denominator_group(name), rate.denominator), []).append(name)
    misses = miss_denominator(report)
    if misses is not None:
        groups[(denominator_group("current_first"), misses)].append(MISS_STAGES_ROW)
    total = sum(report.first_hit_counts.values())
    lines = ["Denominators (the d of n/d):"]
    if total:
        lines.append(f"  {total}: {FIRST_HIT_DENOMINATOR} (first value-bearing hit)")
    for (group, d), names in groups.items():
        what = short_denominator(group, events)
        lines.append(f"  {d}: {what} ({', '.join(names)})")
    if report.floor_sweep:
        never = report.floor_sweep[0].unanswerable_passing.denominator
        lines.append(f"  {never}: unanswerable questions about what the world never mentions "
                     "(floor sweep)")
    return lines


def shared_line(report: Report) -> str:
    """One line on a shared store: its users (ids escaped, each cut to 40 characters) and
    whether the engine took the asking user. Not yet made terminal-safe as a whole."""
    from rotbench._util.safe_text import printable

    s = report.selection
    ids = ", ".join(printable(u, 40) for u in s.users[:8])
    took = {True: "yes (asked per user)", False: "NO: it ignored the user and read every "
            "user's memories", None: "unknown"}[s.user_scoped]
    return f"shared store: {len(s.users)} users ({ids}); engine took the user: {took}"


def kinds_title(report_kinds: Iterable[str]) -> str:
    """Title of the by-kind table: it names cross-user leaks only when they are in it, and
    generator 4's dependent kinds when they are; "(lower is better)" only while every
    metric in it is lower-is-better (``successor_first`` is higher-is-better)."""
    from rotbench.scoring.dependents import BY_KIND_DEPENDENTS
    from rotbench.scoring.metrics import CROSS_USER_KINDS

    kinds = set(report_kinds)
    parts = ["Decoys", "abstention"]
    if kinds & set(CROSS_USER_KINDS):
        parts.append("cross-user leaks")
    if kinds & set(BY_KIND_DEPENDENTS):
        parts.append("dependents")
        return f"{', '.join(parts[:-1])} and {parts[-1]} by kind (the better column says which way)"
    return f"{', '.join(parts[:-1])} and {parts[-1]} by kind (lower is better)"


_DECOY_CLASSES = ("decoy_asserted", "decoy_framed")


def scorer_classes(report: Report) -> list[HitClass]:
    """The hit classes ``report``'s scorer gives, in ``HIT_CLASSES`` order: the decoy
    classes from scorer v3 on, ``premature``/``planned``/``corrected`` from v4 on
    (``Lexicon.reads_decoys``/``reads_events``). A class with a non-zero count in the
    report is always listed; for a scorer version this rotbench does not know, the classes
    are those ``first_hit_counts`` carries. So a generator-2 report never lists v4's
    classes, and a generator-3 report scored v4 lists them."""
    counts = report.first_hit_counts
    lex = LEXICONS.get(report.selection.scorer_version)
    if lex is None:
        return [c for c in HIT_CLASSES if c in counts]
    given = set(hit_classes(lex.reads_events))
    if not lex.reads_decoys:
        given -= set(_DECOY_CLASSES)
    return [c for c in HIT_CLASSES if c in given or counts.get(c, 0)]


def render(report: Report, console: Console, intervals: bool = False,
           diagnosis: list | None = None) -> None:
    """Print ``report`` to ``console``: header, the diagnosis when given (``diagnosis``: the
    report's findings, ``rotbench.results.presentation.diagnosis``), family tables, poison
    by channel, first-hit counts, floor sweep and notes. ``intervals`` adds 95% Wilson
    intervals to every rate. Text read from the report reaches the terminal with control
    characters escaped."""
    for i, line in enumerate(_header(report)):
        console.print(
            line, style="bold" if i == 0 else None, markup=False, highlight=False, soft_wrap=True
        )
    if diagnosis is not None:
        from rotbench.results.presentation.diagnosis import render_diagnosis

        render_diagnosis(diagnosis, console)

    for family, names in FAMILIES.items():
        present = [n for n in names if n in report.metrics]
        if not present:
            continue
        print_table(console, family, [Col("metric"), Col("rate", "words", "right"),
                                      Col("better")],
                    [[name, format_rate(report.metrics[name], intervals),
                      better_label(name)] for name in present])

    print_table(console, "Poison by channel (lower is better; poison_surfaced_at_k: "
                f"{better_label('poison_surfaced_at_k')})",
                [Col("channel"), *(Col(name, "words", "right") for name in POISON_METRICS)],
                [[channel, *(format_rate(rates[m], intervals) for m in POISON_METRICS)]
                 for channel, rates in report.by_channel.items()])

    if report.by_kind:
        print_table(console, kinds_title(report.by_kind),
                    [Col("kind"), Col("metric"), Col("rate", "words", "right"), Col("better")],
                    [[kind, name, format_rate(rates[name], intervals), better_label(name)]
                     for kind, rates in report.by_kind.items()
                     for name in BY_KIND.get(kind, tuple(rates)) if name in rates])
    render_evidence(report, console, lambda r: format_rate(r, intervals))  # generator 5

    total = sum(report.first_hit_counts.values())
    print_table(console, "First value-bearing hit",
                [Col("class"), Col("questions", "words", "right")],
                [[cls, format_rate(Rate.of(report.first_hit_counts.get(cls, 0), total),
                                   intervals)] for cls in scorer_classes(report)])
    render_miss_stages(report, console, intervals)
    from rotbench.results.presentation.repeats import render_repeats

    render_repeats(report, console, lambda r: format_rate(r, intervals))  # --repeat N

    if report.floor_sweep is None:
        console.print("Relevance floor sweep: not applicable (some hits report no raw cosine)",
                      highlight=False)
        _real_pairs(report, console, intervals)
        _notes(report, console)
        _legend(report, console)
        return
    print_table(console, "Relevance floor sweep (raw cosine)",
                [Col("floor", justify="right"),
                 Col("unanswerable still answered", "words", "right"),
                 Col("answerable refused", "words", "right")],
                [[f"{row.floor:.2f}", format_rate(row.unanswerable_passing, intervals),
                  format_rate(row.answerable_refused, intervals)]
                 for row in report.floor_sweep])
    _real_pairs(report, console, intervals)
    _notes(report, console)
    _legend(report, console)


def _legend(report: Report, console: Console) -> None:
    """The denominators and where every metric is defined, after the tables."""
    from rotbench.scoring.definitions import DOCS_PAGE, metric_url

    for line in denominator_legend(report):
        console.print(terminal_safe(line, one_line=True), highlight=False, markup=False,
                      soft_wrap=True)
    console.print(f"Every metric is defined in docs/{DOCS_PAGE} "
                  f"({metric_url('current_first').rsplit('#')[0]})", highlight=False,
                  markup=False, soft_wrap=True)


def render_miss_stages(report: Report, console: Console, intervals: bool = False) -> None:
    """The "Wrong first answers by stage" table (``Report.miss_stages``), each stage over
    ``current_first``'s denominator as everywhere (``miss_denominator``); nothing for a
    report written before it existed."""
    stages = report.miss_stages
    if stages is None:
        return
    over = miss_denominator(report) or sum(stages.values())
    total = sum(stages.values())
    print_table(console, f"Wrong first answers ({total} of {over})",
                [Col("stage"), Col("questions", "words", "right")],
                [[printable(stage, 40), format_rate(Rate.of(n, over), intervals)]
                 for stage, n in stages.items()])
    render_family_stages(report, console, intervals)
    from rotbench.results.presentation.noise import render_noise

    render_noise(report, console, lambda r: format_rate(r, intervals))  # the noisy arm


def render_family_stages(report: Report, console: Console, intervals: bool = False) -> None:
    """The "Wrong first answers by family" table (``Report.family_miss_stages``): each
    other question family's stages as a share of its questions; nothing for a report
    without it."""
    families = report.family_miss_stages
    if not families:
        return
    rows = []
    for family, got in families.items():
        for j, (stage, n) in enumerate(got.stages.items()):
            rows.append([printable(family, 40) if j == 0 else "", printable(stage, 40),
                         format_rate(Rate.of(n, got.questions), intervals)])
    print_table(console, "Wrong first answers by family (share of the family's questions)",
                [Col("family"), Col("stage"), Col("questions", "words", "right")], rows)


def _real_pairs(report: Report, console: Console, intervals: bool) -> None:
    """The "Real pairs" block: the checks against people's rulings, apart from the worlds."""
    block = report.real_pairs
    if block is None:
        return
    if not block.scored:
        console.print(f"Real pairs: not scored; {block.reason}", highlight=False, markup=False,
                      soft_wrap=True)
        return
    print_table(console, f"Real pairs ({len(block.pairs)} ruled pairs; not pooled with the "
                "worlds)",
                [Col("ruling"), *(Col(c, "words", "right")
                                  for c in ("checks retire", "checks keep", "undecided"))],
                [[ruling, *(str(cells[k]) for k in ("retire", "keep", "undecided"))]
                 for ruling, cells in block.table.items()])
    over = {"agree": "every ruled pair", "false_positive": "pairs ruled coexist",
            "miss": "pairs ruled replacement", "undecided": "every ruled pair"}
    print_table(console, "Real pairs: rates",
                [Col("outcome"), Col("rate", "words", "right"), Col("over", "words")],
                [[name, format_rate(rate, intervals), over[name]]
                 for name, rate in block.rates.items()])


def _notes(report: Report, console: Console) -> None:
    if report.notes:
        console.print("Notes", style="bold")
        for note in report.notes:
            console.print(f"- {terminal_safe(note, one_line=True)}", highlight=False,
                          markup=False, soft_wrap=True)
