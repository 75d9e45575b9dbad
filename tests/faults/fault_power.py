"""Power under noise: is each faulty engine of tests/faults caught by the metric
that names it, on generator 5's worlds, on the oracle arm and under the noisy arm's profiles?

Each fault is paired with the correct engine its own tests use (``FAULTS``); both answer the
same questions of the same worlds (generator 5, 90 days, top 10, the deterministic
bag-of-words embedder), on the noisy arm with the same perceived claims (``NoisyExtractor``
under the world's ``world_plan``, the probes annotated as a noisy run's are: ``annotate``).
Per question, the naming figure's 0/1 outcome (``outcomes``); ``b`` counts the questions
the fault gets wrong and its correct engine right, ``c`` the reverse; the fault is caught
when ``b > c`` and the two-sided exact McNemar p-value of (b, c) is below 0.05. A figure
that counts hits (``redundancy_at_k``) is read per question as "some hit repeats another".

Verdicts per column of ``COLUMNS``: the oracle arm and ``good`` on each default seed,
``typical`` pooled over the three. ``verdicts`` computes the table; ``render`` prints it and
``pin_source`` prints the dict tests/faults/test_fault_power.py pins.

Importable from the tests (tests/faults is on their path) and from
benchmarks/bench_fault_power.py (which puts tests/faults on ``sys.path``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import faulty_engines as f2
import faulty_engines_g5 as g5
import faulty_engines_v3 as f3
import faulty_engines_v4 as f4
import faulty_engines_v5 as f5
from pydantic import PrivateAttr

from rotbench.embedding import FAKE_MODEL_ID, Embedder, hashing_encoder
from rotbench.perception.noisy import load_profile
from rotbench.perception.noisy.attribution import annotate
from rotbench.perception.noisy.perception import NoisyExtractor, world_plan
from rotbench.pipeline.probe import probe_world
from rotbench.scoring import score_world
from rotbench.scoring.lexicons import default_scorer
from rotbench.scoring.metrics import (
    HIGHER_IS_BETTER,
    _channel_outcomes,
    _kind_outcomes,
    _outcomes,
    lost_flags,
)
from rotbench.scoring.models import WorldProbes
from rotbench.scoring.paired import NOT_PAIRED, mcnemar_exact
from rotbench.world import generate_world
from rotbench.world.models import Truth, World

GENERATOR = "5"
SEEDS = (42, 43, 44)
ALPHA = 0.05
PROFILES = ("good", "typical")
COLUMNS: tuple[tuple[str | None, int | None], ...] = (
    *((None, s) for s in SEEDS), *(("good", s) for s in SEEDS), ("typical", None))
"""(profile, seed) of each verdict column: None profile is the oracle arm, None seed pooled."""

Where = tuple[str, ...]
"""``(metric,)``, ``("kind", kind, metric)`` or ``("channel", channel, metric)``."""

# the date faults of tests/faults/test_faults_dates_g5.py, built the same way (ArrivalOrderG5
# is the switch f4.DatedByDelivery already turns on)
DatedByDeliveryG5 = f4._fault("DatedByDeliveryG5", dated_by_delivery=True)
MisreadRelativeDate = f4._fault("MisreadRelativeDate", misread_relative=True)


def _floored(engine: type, floor: float) -> Callable:
    def make(world, embedder):
        return engine(world, embedder, floor=floor)

    make.__name__ = f"{engine.__name__}(floor={floor})"
    return make


CORRECT: dict[str, Callable] = {
    "CorrectEngine": f2.CorrectEngine,
    "CorrectEngine(floor=0.45)": _floored(f2.CorrectEngine, 0.45),
    "EventTimeEngine": f3.EventTimeEngine,
    "EventTimeEngine(floor=0.5)": _floored(f3.EventTimeEngine, 0.5),
    "DependencyEngine": f4.DependencyEngine,
    "EvidenceEngine": g5.EvidenceEngine,
}
"""The correct engines the faults are paired with, by the name the table shows."""

FAULTS: list[tuple[str, type, str, Where]] = [
    # (row name, faulty engine, its correct engine, the figure that names it)
    ("g2 DecoyFiler", f2.DecoyFiler, "CorrectEngine", ("decoy_asserted_at_k",)),
    ("g2 ReAddDeletes", f2.ReAddDeletes, "CorrectEngine", ("current_lost",)),
    ("g2 CollateralInvalidation", f2.CollateralInvalidation, "CorrectEngine",
     ("control_recall_at_k",)),
    ("g2 Tripler", f2.Tripler, "CorrectEngine", ("redundancy_at_k",)),
    ("g2 RawLines", f2.RawLines, "CorrectEngine", ("poison_leak_at_k",)),
    ("g2 NeverAbstains", f2.NeverAbstains, "CorrectEngine(floor=0.45)",
     ("answered_unanswerable",)),
    ("g3 ArrivalOrder", f3.ArrivalOrder, "EventTimeEngine", ("late_stale_first",)),
    ("g3 SingleValued", f3.SingleValued, "EventTimeEngine", ("member_lost",)),
    ("g3 TemporaryAsPermanent", f3.TemporaryAsPermanent, "EventTimeEngine",
     ("kind", "temporary", "decoy_asserted_at_k")),
    ("g3 ScheduledNow", f3.ScheduledNow, "EventTimeEngine", ("premature_at_k",)),
    ("g3 CorrectionIgnored", f3.CorrectionIgnored, "EventTimeEngine",
     ("corrected_served_at_k",)),
    ("g3 RetractionIgnored", f3.RetractionIgnored, "EventTimeEngine",
     ("retracted_asserted_at_k",)),
    ("g3 RelayAdopted", f3.RelayAdopted, "EventTimeEngine", ("poison_leak_at_k",)),
    ("g3 WebAsConversation", f3.WebAsConversation, "EventTimeEngine",
     ("channel", "source", "poison_leak_at_k")),
    ("g3 OtherPersonAsUser", f3.OtherPersonAsUser, "EventTimeEngine",
     ("kind", "other_person", "decoy_asserted_at_k")),
    ("g3 HypotheticalAsUser", f3.HypotheticalAsUser, "EventTimeEngine",
     ("kind", "hypothetical", "decoy_asserted_at_k")),
    ("g3 SlotBlindInvalidation", f3.SlotBlindInvalidation, "EventTimeEngine",
     ("control_recall_at_k",)),
    ("g3 ReAddDeletes", f3.ReAddDeletes, "EventTimeEngine", ("current_lost",)),
    ("g3 CollateralInvalidation", f3.CollateralInvalidation, "EventTimeEngine",
     ("control_recall_at_k",)),
    ("g3 Tripler", f3.Tripler, "EventTimeEngine", ("redundancy_at_k",)),
    ("g3 RawLines", f3.RawLines, "EventTimeEngine", ("poison_leak_at_k",)),
    ("g3 NeverAbstains", f3.NeverAbstains, "EventTimeEngine(floor=0.5)",
     ("answered_unanswerable",)),
    ("v5 MemberRetiredOnAdd", f5.MemberRetiredOnAdd, "EventTimeEngine", ("member_lost",)),
    ("v5 SetEndedOnDrop", f5.SetEndedOnDrop, "EventTimeEngine", ("member_lost",)),
    ("v5 MostSimilarRetired", f5.MostSimilarRetired, "EventTimeEngine", ("current_lost",)),
    ("g4 DependenciesIgnored", f4.DependenciesIgnored, "DependencyEngine",
     ("dependent_stale_first",)),
    ("g4 SuccessorsIgnored", f4.SuccessorsIgnored, "DependencyEngine", ("successor_first",)),
    ("g4 PremiseBySimilarity", f4.PremiseBySimilarity, "DependencyEngine",
     ("premise_stale_first",)),
    ("g4 RootOnlyRetraction", f4.RootOnlyRetraction, "DependencyEngine",
     ("cascade_asserted_at_k",)),
    ("g4 DatedByDelivery", f4.DatedByDelivery, "DependencyEngine",
     ("kind", "relative_date", "stale_retained_at_k")),
    ("g5 DatedByDeliveryG5", DatedByDeliveryG5, "DependencyEngine",
     ("kind", "relative_date", "stale_retained_at_k")),
    ("g5 MisreadRelativeDate", MisreadRelativeDate, "DependencyEngine",
     ("kind", "scheduled", "premature_at_k")),
    ("g5 ForgetIgnored", g5.ForgetIgnored, "EvidenceEngine", ("forgotten_served_at_k",)),
    ("g5 RedeliveryAsNew", g5.RedeliveryAsNew, "EvidenceEngine", ("resurrected_first",)),
    ("g5 FirstValueWins", g5.FirstValueWins, "EvidenceEngine", ("current_first",)),
    ("g5 LastStatementWins", g5.LastStatementWins, "EvidenceEngine", ("current_first",)),
]
"""Every faulty engine of tests/faults that a single-user world can show, paired with its
correct engine. Left out: ``UserBlind`` (it needs a shared store of several users) and the
two v6 wrappers (tests/faults/faulty_engines_v6.py: they game scorer v5, no metric names them)."""


class _World(World):
    """A world that works out each (attribute, day)'s truth once: every engine of a table
    is asked the same questions of the same worlds."""

    _truths: dict = PrivateAttr(default_factory=dict)

    def truth(self, key: str, day: int) -> Truth:
        got = self._truths.get((key, day))
        if got is None:
            got = self._truths[(key, day)] = super().truth(key, day)
        return got


class Arms:
    """Generator 5's worlds of the default seeds, their noise plans and an embedder, built
    once and shared by every engine run (``run``)."""

    def __init__(self, tmp: Path) -> None:
        self.embedder = Embedder(tmp / "emb", FAKE_MODEL_ID, encoder=hashing_encoder)
        self.worlds = {s: _World.model_construct(**dict(generate_world(s, 90, GENERATOR)))
                       for s in SEEDS}
        self.profiles = {p: load_profile(p) for p in PROFILES}
        self.plans = {(p, s): world_plan(w, self.profiles[p])
                      for p in PROFILES for s, w in self.worlds.items()}
        self.scorer = default_scorer(GENERATOR)

    def run(self, factory: Callable, profile: str | None, seed: int,
            oracle: WorldProbes | None = None) -> WorldProbes:
        """``factory``'s engine on the world ``seed``, scored; on the noisy arm ``profile``
        (None: the oracle arm) handed the noisy claims and annotated. ``oracle``: the same
        engine's scored oracle-arm probes of ``seed``, annotated in place of a second run
        when the engine perceives nothing (no ``extractor``: raw lines), so its noisy run
        would ask and answer exactly as its oracle run did."""
        world = self.worlds[seed]
        engine = factory(world, self.embedder)
        perceives = hasattr(engine, "extractor")
        if profile is not None and not perceives and oracle is not None:
            scored = oracle
        else:
            if profile is not None and perceives:
                engine.extractor = NoisyExtractor(world, self.profiles[profile])
            scored = score_world(probe_world(world, engine, 10, timeout_seconds=None),
                                 self.scorer)
        if profile is None:
            return scored
        return annotate(scored, self.plans[(profile, seed)], world)


def outcomes(world: WorldProbes, where: Where) -> dict[tuple[int, int], int]:
    """{(seed, probe index): 1 when the question is in the numerator of ``where``, else 0},
    over the questions in its denominator (the rows ``compute_metrics`` sums;
    ``redundancy_at_k``: 1 when some hit repeats one ranked above, over the questions
    with a value-bearing hit)."""
    lost = lost_flags(world)
    out: dict[tuple[int, int], int] = {}
    for i, p in enumerate(world.probes):
        control = p.truth is not None and p.truth.attribute in world.controls_of(p.user)
        row = _outcomes(p, lost.get(i), control, True, world.reads_events)
        if where[0] == "kind":
            row = _kind_outcomes(p, where[1], True, row)
        elif where[0] == "channel":
            row = _channel_outcomes(p, where[1])  # type: ignore[arg-type]
        got = row.get(where[-1])
        if got is not None:
            out[(world.seed, i)] = int(got[0] > 0)
    return out


def verdict(fault: list[WorldProbes], correct: list[WorldProbes],
            where: Where, read: Callable[[WorldProbes, Where], dict] | None = None,
            ) -> tuple[int, int, float, bool]:
    """(b, c, p, caught) of ``fault`` against ``correct`` over the same worlds: b the
    questions the fault gets wrong and the correct engine right on ``where``, c the reverse,
    p the exact McNemar p-value; caught when b > c and p < ``ALPHA``. ``read``: how the
    correct engine's ``outcomes`` are read (default: computed afresh). Raises ValueError
    when the two do not count the same questions."""
    read = read or outcomes
    mine: dict = {}
    theirs: dict = {}
    for f, c in zip(fault, correct, strict=True):
        mine.update(outcomes(f, where))
        theirs.update(read(c, where))
    if where[-1] in NOT_PAIRED:  # a question with no value-bearing hit repeats nothing
        for k in mine.keys() | theirs.keys():
            mine.setdefault(k, 0)
            theirs.setdefault(k, 0)
    if mine.keys() != theirs.keys():
        raise ValueError(f"{where}: the two engines count different questions")
    bad = 0 if HIGHER_IS_BETTER.get(where[-1], False) else 1  # the outcome that is a miss
    b = sum(1 for k, v in mine.items() if v == bad and theirs[k] != bad)
    c = sum(1 for k, v in mine.items() if v != bad and theirs[k] == bad)
    p = mcnemar_exact(b, c)
    return b, c, p, b > c and p < ALPHA


Row = dict[tuple[str | None, int | None], tuple[int, int, float, bool]]


def verdicts(tmp: Path, faults: Iterable[tuple[str, type, str, Where]] = FAULTS,
             log: Callable[[str], None] | None = None) -> dict[str, Row]:
    """{row name: {column: (b, c, p, caught)}} for ``faults`` over ``COLUMNS``; each correct
    engine runs once per world, and its outcomes on a figure are read once per world (many
    faults share a correct engine and a figure)."""
    arms = Arms(tmp)
    cells = [(profile, seed) for profile in (None, *PROFILES) for seed in SEEDS]

    def probed(factory: Callable) -> dict:
        out: dict = {}
        for profile, seed in cells:  # the oracle cells first (``Arms.run``'s ``oracle``)
            out[(profile, seed)] = arms.run(factory, profile, seed, out.get((None, seed)))
        return out

    read: dict[tuple[int, Where], dict] = {}

    def correct_outcomes(world: WorldProbes, where: Where) -> dict:
        key = (id(world), where)  # the correct engines' records live as long as ``read``
        if key not in read:
            read[key] = outcomes(world, where)
        return read[key]

    faults = list(faults)
    corrects = {name: probed(CORRECT[name]) for name in dict.fromkeys(f[2] for f in faults)}
    out: dict[str, Row] = {}
    for name, engine, correct, where in faults:
        if log is not None:
            log(name)
        mine, theirs = probed(engine), corrects[correct]
        row: Row = {}
        for profile, seed in COLUMNS:
            seeds = SEEDS if seed is None else (seed,)
            row[(profile, seed)] = verdict([mine[(profile, s)] for s in seeds],
                                           [theirs[(profile, s)] for s in seeds], where,
                                           correct_outcomes)
        out[name] = row
    return out


def caught(table: dict[str, Row]) -> dict[str, str]:
    """{row name: one character per column of ``COLUMNS``, 'y' caught, '.' not}: the form
    tests/faults/test_fault_power.py pins."""
    return {name: "".join("y" if row[col][3] else "." for col in COLUMNS)
            for name, row in table.items()}


def _column_name(col: tuple[str | None, int | None]) -> str:
    profile, seed = col
    return f"{profile or 'oracle'} {seed if seed is not None else 'pooled'}"


def render(table: dict[str, Row]) -> str:
    """The table as text: per fault its naming metric, then per column ``b/c p verdict``."""
    names = {name: where for name, _e, _c, where in FAULTS}
    head = ["fault", "metric", *(_column_name(c) for c in COLUMNS)]
    lines = [head]
    for name, row in table.items():
        cells = [f"{b}/{c} p={p:.3g} {'CAUGHT' if ok else '-'}"
                 for b, c, p, ok in (row[col] for col in COLUMNS)]
        lines.append([name, ":".join(names.get(name, ("?",))), *cells])
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
            for line in lines]
    done = caught(table)
    for col_index, col in enumerate(COLUMNS):
        hits = sum(v[col_index] == "y" for v in done.values())
        text.append(f"caught {_column_name(col)}: {hits} of {len(done)}")
    return "\n".join(text)


def pin_source(table: dict[str, Row]) -> str:
    """``CAUGHT = {...}`` as Python source, one fault a line (columns as ``COLUMNS``)."""
    lines = ["CAUGHT = {  # " + " ".join(_column_name(c).replace(" ", "-") for c in COLUMNS)]
    lines += [f"    {name!r}: {marks!r}," for name, marks in caught(table).items()]
    lines.append("}")
    return "\n".join(lines)
