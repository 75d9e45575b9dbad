"""Which injected perception errors stand behind each probe and hit of a noisy run.

``annotate(probes, plan, world)`` returns the world's scored probes with:

- ``ScoredHit.perception_errors``: the errors on the claim the hit comes from: its text
  holds the perturbed sentence, and (when the hit names its document) from that document,
  delivered by the probe's day;
- ``ProbeRecord.perception_errors``: the errors that leave the engine no intact way to the
  right answer (empty when it had one):

  - the question's own misreading (``rotbench.perception.noisy.questions``), when the
    engine had the arm read that very question as a frame (``ProbeRecord.question_read``,
    recorded from its calls);
  - when no current value reached the engine (``handed.handed``: no perceived claim delivered by
    the probe's day states a current value for the asked slot as the user's own fact, in
    any tense, speaking of the day the value's current run began or later: the
    earliest ``Statement.when`` of its deciding claims; a claim of the same value from an
    earlier run tells the engine of that run, not of this one, once a perceived claim of
    another value came between and was not told as past later), the errors that kept it
    away: the current value's
    deciding claims, when every one of them was perturbed. They are the
    user's own present statements of a current value delivered by the probe's day since
    the last plain statement of another value (for a set, every statement of a current
    member; for a value that came back when a tie lapsed, its statements before the lapsed
    one): the claims that should carry the value. A statement is perturbed when an error
    sits on it (dropped, distorted, misnamed, misdated, tense flipped, read as the old
    value, its checks wrong) or when a rival of the same attribute, delivered by the day and
    said no earlier than the statement's value holds, was perceived wrong and so stands
    for another value (``DISPLACING``: a distorted value; or, on a statement of another
    value, a wrong check, an adopted decoy or relay, a flipped tense), which can retire it.
    A declared successor is a path to its value only when a perceived claim gave its root
    the root's value of the day, speaking of that value's current run (``root_told``); a
    value back from a lapsed tie whose root's value of the day no perceived claim gave so
    has a path only in a claim said on or after the tied statement (``run_start``);
  - a question with no current value (a retraction; a generator-4 dependent whose root
    changed): when an ended value reached the engine as the user's present one and its end
    did not (no perceived retraction; no perceived tie to the root, or no perceived claim of
    the root's new value), the errors that kept the end away (``_World.ended_ids``);
  - on generator 4, when a deciding claim, or a later claim of another value whose tie
    lapsed, hangs on a root (``Fact.depends_on``): the root's deciding claims as of the
    day, when every one of them was perturbed (the root's change decides the dependent's
    value); for a lapsed tie, also the root's statements of the value it hung on, when
    every one of them was perturbed (a store never told that value sees no lapse);
- ``WorldProbes.perception_noise``: the plan's injected errors and opportunities per kind,
  and ``intact`` (``{"numerator", "denominator"}``): the currency questions that keep an
  intact path to the right answer (``intact``).

``rotbench.scoring.miss_stages`` then files a wrong first answer under ``perception`` when
its probe carries an error, unless the engine never served one of the arm's claims (it reads
raw text, so the arm's errors never reached it); every other miss is the engine's own. The
rule reads only what the engine was handed (the perceived claims, and the question frames
it asked for), the same for every engine: once a current value reached the engine as a
claim of the asked slot, an engine that keeps what it is told can serve it, so a miss then
is never perception's, whatever else the arm perturbed. A hit's errors say what a served
claim went through; they decide no stage. The plan is recomputed from the world and the
profile (it is pure), so the record needs no stage of its own and is the same in a cold run
and a warm one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rotbench.contract.perception import value_key
from rotbench.perception.noisy.handed import (
    endings,
    handed,
    handed_endings,
    handed_ties,
)
from rotbench.perception.noisy.record import InjectedError, NoisePlan
from rotbench.scoring.miss_stages import INTACT
from rotbench.scoring.models import ProbeRecord, ScoredHit, WorldProbes, copied
from rotbench.world.models import Truth, World

DISPLACING: frozenset[str] = frozenset(
    {"check_error", "decoy_adopted", "relay_adopted", "distorted_value", "tense_error"})
"""Kinds whose error on a later claim of the same attribute can retire or outrank a
deciding claim that was itself perceived right."""


@dataclass(frozen=True)
class Statement:
    """One of the user's own present statements of an attribute, as the store is told it.

    ``key``: (document uri, fact index) as the plan numbers facts; ``arrival``: the day its
    document reached the store; ``written``: the day it was said (a late document's claims
    stand in the store by this day, as the reference engine compares them); ``plain``: not
    a declared successor (which holds only once its root changes), so it ends the run of
    an earlier value; ``root``: the root attribute it hangs on (generator 4), or None;
    ``root_value``: the root's value it hangs on."""

    key: tuple[str, int]
    arrival: int
    written: int
    value: str
    plain: bool
    effective_day: int | None
    root: str | None
    root_value: str | None = None

    @property
    def when(self) -> int:
        """The day the statement's value holds from: its effective day when the text dates
        it (a scheduled change, "last week"), else the day it was said."""
        return self.written if self.effective_day is None else self.effective_day


def statements(world: World) -> dict[str, list[Statement]]:
    """``{attribute: its own present statements}`` in the order their values hold (by
    ``Statement.when``, then the world's session order and the fact's turn)."""
    out: dict[str, list[Statement]] = defaultdict(list)
    for s in world.sessions:
        if s.kind == "web_page":
            continue
        arrival = s.day if s.delivered_day is None else s.delivered_day
        for i, f in enumerate(sorted(s.facts, key=lambda f: f.turn)):
            if (f.decoy is not None or f.channel is not None or f.tense != "present"
                    or f.event in ("retraction", "member_drop")):
                continue
            out[f.attribute].append(Statement(
                key=(s.document_uri, i), arrival=arrival, written=s.day, value=f.value,
                plain=f.tie != "successor",
                effective_day=f.effective_day,
                root=f.depends_on.attribute if f.depends_on is not None else None,
                root_value=f.depends_on.value if f.depends_on is not None else None))
    for stmts in out.values():
        stmts.sort(key=lambda st: st.when)
    return out


def deciding(stmts: list[Statement], values: set[str], day: int,
             multi: bool) -> tuple[list[Statement], set[tuple[str, str | None]]]:
    """(the statements that should carry ``values`` on ``day``, the roots they depend on:
    (root attribute, None) for the root's current value, (root attribute, value) for the
    root value a lapsed tie hung on).

    Walking back from the latest (by ``Statement.when``) of those delivered and in effect
    by ``day`` (a scheduled change counts from its effective day): a statement of a current
    value is a deciding claim;
    the first plain statement of another value ends the walk once a deciding claim was
    found. Before one is found, a statement of another value that hangs on a root
    (generator 4) is passed over and its root noted: the current value came back when that
    tie lapsed (a cascade or a corrected root), so the root's claims decide too, both those
    of its current value and those of the value the tie hung on (a store never told that
    value cannot see the tie lapse). For a
    set, every statement of a current member is a deciding claim."""
    out: list[Statement] = []
    roots: set[tuple[str, str | None]] = set()
    for st in reversed([st for st in stmts if st.arrival <= day and st.when <= day]):
        if st.value in values:
            out.append(st)
            if st.root is not None:
                roots.add((st.root, None))
        elif st.plain and not multi:
            if out or st.root is None:
                break
            roots.update({(st.root, None), (st.root, st.root_value)})
    return out, roots


def run_start(stmts: list[Statement], values: set[str], day: int,
              multi: bool) -> tuple[int | None, int | None]:
    """(the day from which a claim of ``values`` speaks of their current run on ``day``:
    the earliest deciding statement's day, None when no statement carries them; the day
    of the latest tied statement of another value ``deciding``'s walk passed over before a
    deciding claim, or None). In the second case the values came back when that tie
    lapsed: a claim of them said before it tells of the run the tie ended, and only the
    lapse (the root's claims) says they hold again."""
    found: list[Statement] = []
    lapse: int | None = None
    for st in reversed([st for st in stmts if st.arrival <= day and st.when <= day]):
        if st.value in values:
            found.append(st)
        elif st.plain and not multi:
            if found or st.root is None:
                break
            lapse = st.when if lapse is None else lapse
    return min((st.when for st in found), default=None), lapse


class _Errors:
    """A world's claim errors, indexed for the per-probe questions."""

    def __init__(self, plan: NoisePlan, written: dict[str, int]) -> None:
        self.written = written
        self.at: dict[tuple[str, int], list[InjectedError]] = defaultdict(list)
        self.rivals: dict[str, list[InjectedError]] = defaultdict(list)
        for e in plan.errors:
            self.at[(e.document_uri, e.fact_index)].append(e)
            if e.kind in DISPLACING:
                self.rivals[e.attribute].append(e)
        self.all = plan.errors
        self.shown: dict[str, list[InjectedError]] = defaultdict(list)  # by document
        self._of_hit: dict[tuple[str | None, str, int], tuple[str, ...]] = {}
        for e in plan.errors:
            if e.after:
                self.shown[e.document_uri].append(e)

    def on(self, attribute: str, st: Statement, day: int) -> list[str]:
        """Ids of the errors that perturbed ``st`` as of ``day`` (empty: it stood intact)."""
        own = [e.id for e in self.at.get(st.key, ())]
        rivals = [e.id for e in self.rivals.get(attribute, ())
                  if e.day <= day and self.written.get(e.document_uri, e.day) >= st.when
                  and (e.document_uri, e.fact_index) != st.key
                  and (e.kind == "distorted_value" or e.value != st.value)]
        return own + rivals

    def all_perturbed(self, attribute: str, claims: list[Statement], day: int) -> list[str]:
        """The error ids when every one of ``claims`` was perturbed, else []."""
        ids: list[str] = []
        for st in claims:
            got = self.on(attribute, st, day)
            if not got:
                return []
            ids.extend(got)
        return ids

    def of_hit(self, h: ScoredHit, day: int) -> list[str]:
        """Ids of the errors on the claim ``h`` comes from (see the module docstring)."""
        if not h.text:
            return []
        uri = h.provenance.document_uri if h.provenance is not None else None
        key = (uri, h.text, day)  # a world's hits repeat a few claim texts many times
        got = self._of_hit.get(key)
        if got is None:
            errors = self.all if uri is None else self.shown.get(uri, ())
            got = self._of_hit[key] = tuple(sorted(
                {e.id for e in errors if e.after and e.day <= day and e.after in h.text}))
        return list(got)


class _World:
    """What ``annotate`` needs of one world: statements, errors, current root values."""

    def __init__(self, world: World, plan: NoisePlan) -> None:
        self.stmts = statements(world)
        self.multi = {a.key for a in world.attributes if a.multi_valued}
        self.errors = _Errors(plan, {s.document_uri: s.day for s in world.sessions})
        self.questions = plan.question_errors
        self.handed = handed(plan, world)
        self.endings = endings(world)
        self.handed_endings = handed_endings(plan, world)
        self.handed_ties = handed_ties(plan, world)
        self.world = world

    def reached(self, attribute: str, values: Iterable[str], day: int,
                present: bool = False, since: int | None = None,
                declared: bool | None = None) -> bool:
        """True when a perceived claim delivered by ``day`` states one of ``values`` for
        ``attribute`` as the user's own (``handed``; ``present``: in the present tense;
        ``since``: speaking of that day or later, i.e. of the values' current run rather
        than of an earlier time the slot held the same value, unless no perceived claim
        of another value handed by ``day`` speaks of that claim's day or later, or each
        such value was told as past on its claim's day or later (then, in what the engine
        was handed, the value never changed, or the value that displaced it ended);
        ``declared``: only declared successors (True) or only plain facts (False))."""
        wanted = {value_key(v) for v in values}
        handed = [h for h in self.handed.get(attribute, ()) if h[0] <= day]
        ended: dict[str, int] = {}  # value -> the latest day a past-tense claim speaks of
        for _, v, now, when, _c in handed:
            if not now:
                ended[v] = max(ended.get(v, when), when)
        others = [when for _, v, now, when, cond in handed
                  if v not in wanted and now and not cond and ended.get(v, -1) < when]

        def current(when: int) -> bool:  # of the run, or never displaced in what was handed
            return since is None or when >= since or not any(o >= when for o in others)

        return any(v in wanted and (now or not present) and current(when)
                   and (declared is None or cond == declared)
                   for _, v, now, when, cond in handed)

    def root_told(self, root: str, day: int) -> bool:
        """True when a perceived claim delivered by ``day`` gave the root slot its value of
        that day as the user's own, speaking of the value's current run (``run_start``; or
        never displaced in what was handed), or the root holds no value then: the engine
        was told of the root's change. A claim of the value from before another value came
        between tells of that earlier run (a correction back to it lost tells nothing)."""
        try:
            now = self.world.truth(root, day).current_values
        except ValueError:  # no value that day: nothing to be told
            return True
        if not now:
            return True
        since, _ = run_start(self.stmts.get(root, []), set(now), day, root in self.multi)
        return self.reached(root, now, day, since=since)

    def root_ids(self, root: str, value: str | None, day: int) -> list[str]:
        """The errors on the root's claims when all of them were perturbed by ``day``: its
        deciding claims (``value`` None), or its statements of ``value``."""
        stmts = [st for st in self.stmts.get(root, []) if st.arrival <= day]
        if value is not None:
            claims = [st for st in stmts if st.value == value]
        else:
            plain = [st for st in stmts if st.plain and st.when <= day]
            if not plain:
                return []
            claims, _ = deciding(stmts, {plain[-1].value}, day, root in self.multi)
        return self.errors.all_perturbed(root, claims, day)

    def ended_ids(self, p: ProbeRecord) -> list[str]:
        """A question whose value ended (no current value): the errors that kept the end
        from the engine, when no perceived claim delivered by the probe's day told it and a
        perceived claim did state an ended value as the user's present one. A
        retraction: the errors on the user's retractions, when every one delivered was
        perturbed. A dependent whose root changed (generator 4, ``Truth.unknown_since``):
        when no perceived claim carried its tie to the root, the errors on the statements
        that carry it (when every one delivered was perturbed); else the root's deciding
        claims, when no perceived claim gave the root its value of the day and every one of
        them was perturbed."""
        truth = p.truth
        assert truth is not None and p.attribute is not None
        ended = truth.superseded if truth.retracted else [truth.previously or ""]
        if not self.reached(p.attribute, ended, p.day, present=True):
            return []  # never told it as the user's present value: nothing to end
        if truth.retracted:
            if any(at <= p.day for at in self.handed_endings.get(p.attribute, ())):
                return []
            ids: list[str] = []
            for key, at in self.endings.get(p.attribute, ()):
                if at <= p.day:
                    got = [e.id for e in self.errors.at.get(key, ())]
                    if not got:
                        return []
                    ids += got
            return ids
        if truth.unknown_since is None or truth.previously is None:
            return []
        ties = [st for st in self.stmts.get(p.attribute, [])
                if st.root is not None and st.value == truth.previously]
        ids = []
        value = value_key(truth.previously)
        if not any(at <= p.day and v == value
                   for at, v in self.handed_ties.get(p.attribute, ())):
            # the tie never reached the engine: the errors on the statements that carry it
            for st in ties:
                if st.arrival <= p.day:
                    got = [e.id for e in self.errors.at.get(st.key, ())]
                    if not got:
                        return []
                    ids += got
            return ids
        for root in sorted({st.root for st in ties if st.root is not None}):
            if not self.root_told(root, p.day):
                ids += self.root_ids(root, None, p.day)
        return ids

    def probe(self, p: ProbeRecord) -> ProbeRecord:
        """``p`` with its own and its hits' error ids."""
        ids = [e.id for e in self.questions.get(p.question, ())] if p.question_read else []
        if p.truth is not None and p.attribute is not None and not p.truth.current_values:
            ids += self.ended_ids(p)
        if p.truth is not None and p.attribute is not None and p.truth.current_values:
            claims, roots = deciding(self.stmts.get(p.attribute, []),
                                     set(p.truth.current_values), p.day,
                                     p.attribute in self.multi)
            start, lapse = run_start(self.stmts.get(p.attribute, []),
                                     set(p.truth.current_values), p.day,
                                     p.attribute in self.multi)
            values = p.truth.current_values
            found = []
            for root, value in sorted(roots, key=str):
                found += self.root_ids(root, value, p.day)
            told = all(self.root_told(root, p.day) for root, value in roots if value is None)
            since = lapse if lapse is not None and not told else start
            if self.reached(p.attribute, values, p.day, since=since, declared=False) or (
                    told and self.reached(p.attribute, values, p.day, since=since)):
                claims, found = [], []  # a fact, or a successor whose root change reached it
            ids += self.errors.all_perturbed(p.attribute, claims, p.day) + found
        hits = []
        for h in p.hits:
            got = self.errors.of_hit(h, p.day)
            hits.append(copied(h, {"perception_errors": got}) if got else h)
        return copied(p, {"perception_errors": sorted(set(ids)), "hits": hits})


def intact(world: World, plan: NoisePlan,
           truths: dict[tuple[str, int], Truth] | None = None) -> dict[str, int]:
    """``{"numerator": n, "denominator": d}`` over ``world``'s currency questions (those
    with a current value: current_first's denominator): ``n`` of them keep an intact path
    to the right answer, i.e. at least one of the current value's deciding claims
    (``deciding``) stood unperturbed as of the question's day (``_Errors.on``: no error on
    it, and no rival said on or after it perceived wrong). A question whose current value
    no statement delivered by its day carries (a dependent that holds by its tie alone)
    counts as not intact. It reads the world and the plan only, so every engine of a run
    gets the same figure. ``truths``: the questions' truths by (attribute, day) where the
    caller has them (a scored record's), else each is taken from the world."""
    stmts = statements(world)
    multi = {a.key for a in world.attributes if a.multi_valued}
    errors = _Errors(plan, {s.document_uri: s.day for s in world.sessions})
    n = d = 0
    for q in world.probes:
        if q.attribute is None:
            continue
        truth = (truths or {}).get((q.attribute, q.day)) or world.truth(q.attribute, q.day)
        if truth.current is None:
            continue
        d += 1
        claims, _ = deciding(stmts.get(q.attribute, []), set(truth.current_values), q.day,
                             q.attribute in multi)
        n += any(not errors.on(q.attribute, st, q.day) for st in claims)
    return {"numerator": n, "denominator": d}


def noise_counts(world: World, plan: NoisePlan,
                 probes: WorldProbes | None = None) -> dict[str, dict[str, int]]:
    """A world's ``perception_noise``: the plan's counts per error kind (``plan.counts``)
    and ``intact`` (``intact``, reading the truths ``probes`` records)."""
    truths = {(p.attribute, p.day): p.truth for p in (probes.probes if probes else ())
              if p.attribute is not None and p.truth is not None}
    return {**plan.counts(), INTACT: intact(world, plan, truths)}


def reads_claims(world: WorldProbes, plan: NoisePlan) -> bool:
    """True when the engine served the arm's perceived claims: some hit's text holds a
    sentence the arm handed it. An engine that files raw text (transcript-rag, mem0-raw)
    never does, and the arm's errors cannot explain its answers."""
    sentences = {d.sentence for drafts in plan.drafts.values() for d in drafts}
    return any(h.text and any(s in h.text for s in sentences)
               for p in world.probes for h in p.hits)


def annotate(probes: WorldProbes, plan: NoisePlan, world: World) -> WorldProbes:
    """``probes`` (the scored probes of ``world``) with its noisy-arm error record (see the
    module docstring). For an engine that never served a perceived claim (``reads_claims``
    False) no probe or hit carries an error: every miss of it stays its own;
    ``perception_noise`` is recorded all the same. A misread question is among a probe's
    errors only when the engine had that very question read as a frame
    (``ProbeRecord.question_read``, recorded from its calls; whatever engine it is)."""
    if not reads_claims(probes, plan):
        return probes.model_copy(
            update={"perception_noise": noise_counts(world, plan, probes)})
    index = _World(world, plan)
    return probes.model_copy(update={"probes": [index.probe(p) for p in probes.probes],
                                     "perception_noise": noise_counts(world, plan, probes)})


def annotated_worlds(spec, worlds: Iterable[WorldProbes]) -> Iterator[WorldProbes]:
    """``worlds`` of the noisy run ``spec``, each annotated with its plan (the world is
    generated again from its seed: pure and cheap), one at a time (``annotate``)."""
    from rotbench.perception.noisy.arm import run_profile
    from rotbench.perception.noisy.perception import world_plan
    from rotbench.world.generators.base import generate_world

    profile = run_profile(spec)
    for w in worlds:
        world = generate_world(w.seed, spec.days, spec.generator, spec.volume)
        yield annotate(w, world_plan(world, profile), world)
