"""The noise plan of one world: which perception errors hit which claims, decided up front.

``plan_world(world, profile)`` walks the world's sessions in delivery order and, for each
fact the oracle would perceive (facts sorted by turn, as ``OracleExtractor.extract`` reads
them), draws each error kind the fact is an opportunity for. Every draw is
``sha256(seed, profile digest, document uri, fact index, kind)`` read as a number in [0, 1):
no global random state, so a world's plan is the same in any process, in any order, and
changes only with the seed, the profile or the world.

Opportunities per fact (a fact omitted is an opportunity for nothing else):

- ``relay_adopted``: a relayed or tool-turn fact in a conversation (taken as the user's own);
- ``decoy_adopted``: a decoy that is not the user's (someone else's, hypothetical, negated,
  a declined suggestion), taken as the user's present fact;
- ``omission``: the user's own statement (dropped);
- then, for a kept own statement with a slot: ``update_missed`` (a present change of value,
  read as a plain restatement of the value it replaces: a correction so read corrects
  nothing), ``distorted_value`` (another pool value, or the proper noun cut to its first
  word; never the value a correction, scheduled change or declared successor replaces),
  ``tense_error`` (present read as past and past as present; a member's drop read as present
  is no drop), ``date_error`` (a statement carrying a date: read undated, or dated by its
  delivery), ``subject_split`` (the persona named "the speaker" or "User"),
  ``value_as_subject`` (only when not split: "Hiroshi is the user's manager") and
  ``check_error`` (the checks on pairs whose newer claim this is answer wrong; applied by
  ``NoisyChecker``).

So no perceived claim names one value on both sides of a change: no value corrects itself,
is scheduled or declared to follow itself, or is dropped while held
(tests/perception/noisy/test_no_self_contradiction.py).
"""

from __future__ import annotations

from rotbench.contract.perception import ClaimDraft, value_key
from rotbench.perception.noisy.profile import NoiseProfile
from rotbench.perception.noisy.questions import read_questions
from rotbench.perception.noisy.record import InjectedError, NoisePlan, draw
from rotbench.perception.oracle import PAST, PRESENT, OracleExtractor
from rotbench.world.models import Fact, Session, World

__all__ = ["InjectedError", "NoisePlan", "draw", "plan_world"]

class _Planner:
    """Walks one world's facts and applies the drawn errors (see the module docstring)."""

    def __init__(self, world: World, profile: NoiseProfile) -> None:
        self.world, self.profile, self.digest = world, profile, profile.digest
        self.oracle = OracleExtractor(world)
        self.labels = {a.key: a.label for a in world.attributes}
        self.pools = {a.key: a.pool for a in world.attributes}
        self.held: dict[str, str] = {}  # attribute -> the user's last stated present value
        self.plan = NoisePlan()

    def hit(self, s: Session, i: int, kind: str) -> bool:
        self.plan.opportunities[kind] += 1
        if draw(self.world.seed, self.digest, s.document_uri, i, kind) < self.profile.rate(kind):
            self.plan.injected[kind] += 1
            return True
        return False

    def variant(self, s: Session, i: int, kind: str) -> float:
        return draw(self.world.seed, self.digest, s.document_uri, i, kind + ":variant")

    def record(self, s: Session, i: int, kind: str, fact: Fact, before: ClaimDraft | None,
               after: ClaimDraft | None) -> None:
        arrival = s.day if s.delivered_day is None else s.delivered_day
        self.plan.errors.append(InjectedError(
            id=f"{kind}@{s.document_uri}#{i}", kind=kind, document_uri=s.document_uri,
            fact_index=i, attribute=fact.attribute, value=fact.value, day=arrival,
            before=before.sentence if before else None, after=after.sentence if after else None))

    def own_present(self, fact: Fact) -> ClaimDraft:
        label = self.labels[fact.attribute]
        extra = {"multi_valued": True} if fact.attribute in self.oracle._multi else {}
        return ClaimDraft(subject="the user", slot=fact.attribute, value=fact.value,
                          tense="present", sentence=PRESENT.format(label=label, value=fact.value),
                          confidence=0.9, **extra)

    def session(self, s: Session) -> list[ClaimDraft]:
        out: list[ClaimDraft] = []
        web = s.kind == "web_page"
        for i, fact in enumerate(sorted(s.facts, key=lambda f: f.turn)):
            draft = self.fact(s, i, fact, web)
            if fact.decoy is None and fact.channel is None and fact.tense == "present" \
                    and fact.event not in ("retraction", "member_drop", "scheduled"):
                self.held[fact.attribute] = fact.value
            if draft is not None and draft not in out:
                out.append(draft)
        return out

    def fact(self, s: Session, i: int, fact: Fact, web: bool) -> ClaimDraft | None:
        said = s.turns[fact.turn].text if fact.turn < len(s.turns) else ""
        oracle = self.oracle._draft(fact, web_page=web, said=said)
        if not web and fact.channel in ("relay", "tool_turn"):
            if self.hit(s, i, "relay_adopted"):
                new = self.own_present(fact)
                self.record(s, i, "relay_adopted", fact, oracle, new)
                return new
            return oracle
        if fact.decoy is not None and fact.decoy != "temporary":
            if self.hit(s, i, "decoy_adopted"):
                new = self.own_present(fact)
                self.record(s, i, "decoy_adopted", fact, oracle, new)
                return new
            return oracle
        if fact.channel is not None or oracle is None:
            return oracle
        if self.hit(s, i, "omission"):
            self.record(s, i, "omission", fact, oracle, None)
            return None
        if oracle.slot is None:
            return oracle
        return self.own(s, i, fact, oracle)

    def own(self, s: Session, i: int, fact: Fact, draft: ClaimDraft) -> ClaimDraft:
        """The slot-level kinds on a kept own statement, in a fixed order."""
        label = self.labels[fact.attribute]
        plain = draft.sentence in (PRESENT.format(label=label, value=draft.value),
                                   PAST.format(label=label, value=draft.value))
        steps = []
        old = self.held.get(fact.attribute)
        if (draft.tense == "present" and draft.mood == "fact" and not draft.multi_valued
                and draft.event in (None, "correction") and old not in (None, fact.value)):
            steps.append(("update_missed", lambda d: _restate(d, old)))
        steps.append(("distorted_value",
                      lambda d: _revalue(d, self.distort(s, i, d, _replaced(d, old)))))
        if plain:
            steps.append(("tense_error", lambda d: _flip_tense(d, label)))
        if draft.valid_from is not None or draft.valid_until is not None:
            steps.append(("date_error", lambda d: self.misdate(s, i, d)))
        for kind, change in steps:
            if self.hit(s, i, kind):
                new = change(draft)
                self.record(s, i, kind, fact, draft, new)
                draft = new
        if draft.sentence.startswith("The user"):
            if self.hit(s, i, "subject_split"):
                name = "User" if self.variant(s, i, "subject_split") < 0.5 else "the speaker"
                new = draft.model_copy(update={
                    "subject": name, "sentence": name[0].upper() + name[1:]
                    + draft.sentence[len("The user"):]})
                self.record(s, i, "subject_split", fact, draft, new)
                draft = new
            elif plain and self.hit(s, i, "value_as_subject"):
                verb = "is" if draft.tense == "present" else "was previously"
                new = draft.model_copy(update={
                    "subject": draft.value,
                    "sentence": f"{draft.value} {verb} the user's {label}."})
                self.record(s, i, "value_as_subject", fact, draft, new)
                draft = new
        if self.hit(s, i, "check_error"):
            self.record(s, i, "check_error", fact, draft, draft)
            self.plan.wrong_checks[(s.document_uri, draft.sentence)] = (
                f"check_error@{s.document_uri}#{i}")
        return draft

    def distort(self, s: Session, i: int, d: ClaimDraft, replaced: str | None) -> str:
        """Another value for ``d``: its first word (the proper noun cut), or another value of
        the attribute's pool, chosen by a draw. Never ``replaced``, the value ``d`` says it
        corrects or changes from (``_replaced``): a change to the value it changes from
        would name one value on both of its sides."""
        u = self.variant(s, i, "distorted_value")
        words = d.value.split()
        if u < 0.5 and len(words) > 1 and not _same(words[0], replaced):
            return words[0]
        others = [v for v in self.pools[d.slot or ""]
                  if v != d.value and not _same(v, replaced)]
        return others[int(u * len(others)) % len(others)] if others else d.value

    def misdate(self, s: Session, i: int, d: ClaimDraft) -> ClaimDraft:
        """``d`` undated, or (for a late document, by a draw) dated by its delivery."""
        if s.delivered_day is not None and s.delivered_day != s.day \
                and self.variant(s, i, "date_error") >= 0.5:
            return d.model_copy(update={"valid_from": s.delivered_day})
        return d.model_copy(update={"valid_from": None, "valid_until": None})


def _same(a: str, b: str | None) -> bool:
    """Whether ``a`` and ``b`` name one value (case and spacing aside; None names none)."""
    return b is not None and value_key(a) == value_key(b)


def _replaced(d: ClaimDraft, held: str | None) -> str | None:
    """The value ``d`` declares it replaces: a correction's ``corrects``; for a scheduled
    change or a declared successor, ``held`` (the user's last stated present value of the
    slot); None for any other claim (a plain statement names only its own value)."""
    if d.event == "correction":
        return d.corrects
    if d.event == "scheduled" or d.mood == "conditional":
        return held
    return None


def _restate(d: ClaimDraft, old: str) -> ClaimDraft:
    """``update_missed``: ``d`` read as a restatement of ``old``, the value it replaces. A
    correction loses what made it one (``event``, ``corrects``): the old value restated
    corrects nothing (and, restating a value said earlier in the same document, it is the
    same draft and is kept once)."""
    new = _revalue(d, old)
    if d.event == "correction":
        new = new.model_copy(update={"event": None, "corrects": None})
    return new


def _revalue(d: ClaimDraft, value: str) -> ClaimDraft:
    """``d`` stating ``value`` instead of its own (the sentence re-rendered)."""
    return d.model_copy(update={"value": value, "sentence": d.sentence.replace(d.value, value)})


def _flip_tense(d: ClaimDraft, label: str) -> ClaimDraft:
    """``d`` in the other tense (present read as past, past as present). A member's drop
    read as present loses its ``event``: it then says the member is held, and a drop of
    the value it holds would name that value on both sides."""
    tense = "past" if d.tense == "present" else "present"
    template = PAST if tense == "past" else PRESENT
    update: dict = {"tense": tense, "sentence": template.format(label=label, value=d.value)}
    if tense == "present" and d.event == "member_drop":
        update["event"] = None
    return d.model_copy(update=update)


def plan_world(world: World, profile: NoiseProfile) -> NoisePlan:
    """The noise plan of ``world`` under ``profile`` (see the module docstring). Pure:
    the same world and profile give the same plan in any process."""
    planner = _Planner(world, profile)
    for s in world.sessions:
        planner.plan.drafts[s.document_uri] = planner.session(s)
    read_questions(world, profile, planner.plan)
    return planner.plan
