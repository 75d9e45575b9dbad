"""The world's data model and its ground truth.

A world is what one seed produces: a persona ("the user") whose twelve attributes take values
over simulated days, the conversations and web pages that mention those values, the untrusted
(poison) values and the probe questions asked at each checkpoint. Every model here crosses a
boundary (the JSON printed by ``rotbench world``, the cache, the report), so all are pydantic.

Days are integers counted from the world epoch (day 0); day 1 is the first day with sessions.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Channel = Literal["relay", "tool_turn", "source"]
"""How an untrusted value arrives: relayed by the assistant from a web search, a ``tool``
turn in the transcript, or a separate web page on an untrusted domain."""

CHANNELS: tuple[Channel, ...] = ("relay", "tool_turn", "source")

Phrasing = Literal["initial", "transition", "restatement"]
"""How a value was introduced: the first value, a change naming old and new ("I moved from
X to Y"), or a change stating only the new value ("I live in Y now")."""

DecoyKind = Literal["other_person", "hypothetical", "negation", "suggestion", "temporary"]
"""How a decoy mention carries a pool value the user never holds (generator 2): another
person's fact ("My sister's car is a Dacia"), a hypothetical or plan, a negation ("I would
never drive a Dacia"), or an assistant's suggestion the user does not take. Generator 3 adds
``temporary``: a state that holds for a few days and leaves the permanent attribute as it is
("I'm in Porto this week for a conference", "driving a loaner Saab while mine is repaired")."""

DECOY_KINDS: tuple[DecoyKind, ...] = ("other_person", "hypothetical", "negation", "suggestion")
"""The decoy kinds of generator 2 (and the decoy breakdown of scorer v3)."""
DECOY_KINDS_V3: tuple[DecoyKind, ...] = (*DECOY_KINDS, "temporary")
"""The decoy kinds of generator 3 (and the decoy breakdown of scorer v4)."""

FactEvent = Literal["correction", "retraction", "scheduled", "member_add", "member_drop",
                    "forget"]
"""What a generator-3 statement does beyond stating a value (see ``Fact.event``):

- ``correction``: the value replaces one stated wrongly before (``Fact.corrects``); the
  wrong value never held;
- ``retraction``: the value ends with no successor ("I sold the car and have none now");
- ``scheduled``: the value takes effect on ``Fact.effective_day``, after it is said;
- ``member_add`` / ``member_drop``: a member joins / leaves a set-valued attribute;
- ``forget`` (generator 5): the user asks the assistant to forget the value (past tense;
  the value was true, so it is not a retraction): from then on it must not be served in
  any framing until the user states it again.
"""

HardCase = Literal["late", "correction", "retraction", "scheduled", "temporary", "set",
                   "successor", "contingent", "implied", "cascade", "relative_date", "forget",
                   "redelivery"]
"""The hard cases of generator 3, as they appear in ``Truth.cases``, then generator 4's
(see ``rotbench.world.generators.truth_v4``), then generator 5's (``truth_v5``)."""

Tie = Literal["successor", "contingent", "implied"]
"""Generator 4: how a statement ties its attribute to a root attribute's value (see
``Fact.tie``): a declared successor ("if I ever leave Lisbon my gym will be X"), a stated
tie ("I go to X, two blocks from my flat") or a tie implied by what the text says about it
("the coffee place next to the office")."""

HARD_CASES: tuple[HardCase, ...] = get_args(HardCase)

UnanswerableKind = Literal["near_miss", "unrelated"]
"""An unanswerable question close to an attribute the world knows ("Which city does the
user's best friend live in?"), or about something unrelated ("the user's blood type")."""

UNANSWERABLE_KINDS: tuple[UnanswerableKind, ...] = ("near_miss", "unrelated")

Tense = Literal["present", "past"]
Role = Literal["user", "assistant", "tool"]
SessionKind = Literal[
    "intro", "change", "mention", "history", "noise", "relay", "tool_turn", "web_page", "decoy",
    "correction", "retraction", "scheduled", "member", "filler", "forget",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _empty_addition(value: Any) -> bool:
    """True for the values an added field is left out with: None and what serialises as [] or {}."""
    return value is None or (isinstance(value, (list, tuple, set, frozenset, dict)) and not value)


class Additive(_Frozen):
    """A model whose fields added after its first version are left out of its JSON while
    empty (None, [] or {}).

    ``added_fields`` names those fields. A record of an older version (a generator-1 world, a
    protocol-v2 document, a 0.4.0 ledger event) then serialises byte for byte as it did
    before they existed, so its fingerprint and every cache key derived from it stay put.
    """

    added_fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Each of ``added_fields`` is left out while None, an empty list or an empty dict
        (pydantic's ``exclude_if``, applied in its core serializer), so no instance goes
        through a Python dict as a wrapping ``model_serializer`` would send it."""
        super().__pydantic_init_subclass__(**kwargs)
        if cls.added_fields:
            for name in cls.added_fields:
                cls.model_fields[name].exclude_if = _empty_addition
            cls.model_rebuild(force=True)


class Change(_Frozen):
    """One entry of an attribute's value timeline: from ``day`` on, the value is ``value``."""

    day: int = Field(description="Day the value takes effect (days since the world epoch).")
    value: str
    phrasing: Phrasing


class Attribute(Additive):
    """One attribute of the persona, its candidate pool and its value timeline.

    For a set-valued attribute (``multi_valued``, generator 3) ``changes`` lists the first
    member only; its members over time follow from the sessions (``World.truth``).
    """

    key: str = Field(description="Stable identifier, e.g. 'home_city'.")
    label: str = Field(description="Noun phrase used in rendered claims, e.g. 'home city'.")
    question: str = Field(description="The probe question asked at every checkpoint.")
    pool: list[str] = Field(description="Every value this attribute can take (>= 8 proper nouns).")
    changes: list[Change] = Field(
        description="Value timeline; the first entry is the initial value."
    )
    multi_valued: bool | None = Field(
        default=None, description="True for a set-valued attribute (generator 3).")

    added_fields = ("multi_valued",)


class Poison(_Frozen):
    """An untrusted value: from the attribute's pool, never true at any day of the world."""

    attribute: str
    value: str
    channel: Channel
    day: int = Field(description="Day the untrusted value first arrives.")
    document_uri: str = Field(description="The document (session or web page) that carries it.")


class Decoy(_Frozen):
    """A decoy mention (generator 2): a pool value the user never holds, said so that a
    correct reader does not file it as the user's fact (see ``DecoyKind``)."""

    attribute: str
    value: str
    kind: DecoyKind
    day: int = Field(description="Day of the mention (days since the world epoch).")
    document_uri: str = Field(description="The session that carries it.")


class Dependency(_Frozen):
    """Generator 4: a root attribute and the value of it a statement hangs on."""

    attribute: str
    value: str


class Fact(Additive):
    """Ground-truth annotation of what one turn of a session says about an attribute.

    The world's text is what an engine sees; facts are what a perfect reader would take from
    it. The oracle perception reads these; scoring never does (it reads hit texts).
    """

    turn: int = Field(description="Index of the turn in the session that carries the fact.")
    attribute: str
    value: str
    tense: Tense = Field(description="'present': the value holds now; 'past': it used to hold.")
    channel: Channel | None = Field(
        default=None, description="None for the user's own statement, else the untrusted channel."
    )
    decoy: DecoyKind | None = Field(
        default=None,
        description="Set for a decoy mention: the value is not the user's (see DecoyKind).",
    )
    event: FactEvent | None = Field(
        default=None, description="Generator 3: what the statement does (see FactEvent).")
    effective_day: int | None = Field(
        default=None, description="Generator 3, scheduled change: the day the value takes "
        "effect (resolved from the session's day when the text gives a relative date).")
    until_day: int | None = Field(
        default=None, description="Generator 3, temporary state: its last day.")
    corrects: str | None = Field(
        default=None, description="Generator 3, correction: the value stated wrongly before.")
    depends_on: Dependency | None = Field(
        default=None, description="Generator 4: the root attribute value the statement is "
        "tied to (see ``tie``).")
    tie: Tie | None = Field(
        default=None, description="Generator 4: how the tie is said. 'successor': the "
        "value takes effect when the root leaves ``depends_on.value`` (not before); "
        "'contingent'/'implied': the value holds while the root keeps it.")

    added_fields = ("decoy", "event", "effective_day", "until_day", "corrects", "depends_on",
                    "tie")


class Turn(_Frozen):
    role: Role
    text: str


DeliveredDay = Annotated[int | None, Field(
    description="Day the document reaches the store (generator 3, protocol v3), on or after "
    "the day it was written; None: the day it was written (every document of generators 1 "
    "and 2).")]
"""A document's delivery day, declared once for ``Session``, the engine's ``Document`` and
the extraction's ``DocumentClaims``."""


class Arrives:
    """The ``arrival`` of a document-like model with fields ``day`` (written) and
    ``delivered_day`` (``DeliveredDay``): a mixin, so each model keeps its own field order."""

    @property
    def arrival(self) -> int:
        """The day the document reaches the store: ``delivered_day``, else ``day``."""
        delivered = self.delivered_day  # type: ignore[attr-defined]
        return self.day if delivered is None else delivered  # type: ignore[attr-defined]


class Session(Additive, Arrives):
    """A document deposited into memory: a conversation, or a web page (``kind='web_page'``).

    ``day`` is the day it was written; ``delivered_day`` (generator 3) the day it reaches the
    store, on or after ``day`` (None: delivered the day it was written, as in generators 1
    and 2). A world lists its sessions in delivery order.
    """

    day: int
    position: int = Field(description="Order of the document within its day, from 0.")
    timestamp: str = Field(
        description="ISO-8601 UTC, derived from the world epoch, day and position."
    )
    kind: SessionKind
    document_uri: str
    turns: list[Turn] = Field(description="For a web page: one 'tool' turn holding the page text.")
    facts: list[Fact] = Field(default_factory=list)
    delivered_day: DeliveredDay = None
    redelivery_of: str | None = Field(
        default=None, description="Generator 5, a re-delivered document: the URI of the "
        "document it repeats unchanged (same turns, facts, written day and timestamp; its "
        "own URI is that one plus '#redelivery'), delivered again after what it states "
        "stopped being true.")

    added_fields = ("delivered_day", "redelivery_of")

    @property
    def late(self) -> bool:
        """True when the document is delivered after the day it was written."""
        return self.arrival > self.day

    @property
    def text(self) -> str:
        """The document as plain text, one ``role: text`` line per turn (web page: page text)."""
        if self.kind == "web_page":
            return "\n".join(t.text for t in self.turns)
        return "\n".join(f"{t.role}: {t.text}" for t in self.turns)


Unanswerable = Annotated[UnanswerableKind | None, Field(
    description="For an unanswerable question of generator 2: near-miss or unrelated (None: "
    "answerable, or generator 1, whose unanswerable questions are all unrelated: a question "
    "without it counts as unrelated).")]
"""A question's kind of unanswerable, declared once for the world's ``Probe`` and the
scored ``ProbeRecord``."""

Premise = Annotated[str | None, Field(
    description="Generator 4, a premise question: the superseded value the question takes "
    "for granted ('Does the user still live in Porto?' -> 'Porto').")]
"""A question's premise, declared once for the world's ``Probe`` and the scored
``ProbeRecord``."""


class Probe(Additive):
    """A question asked at a checkpoint; ``attribute`` is None for an unanswerable question."""

    day: int
    attribute: str | None
    question: str
    unanswerable: Unanswerable = None
    premise: Premise = None

    added_fields = ("unanswerable", "premise")


class World(Additive):
    """One generated world. A pure function of ``(seed, days, generator_version)``."""

    seed: int
    days: int
    generator_version: str
    fingerprint: str = Field(description="sha256 of the canonical JSON of every other field.")
    epoch: str = Field(description="ISO-8601 UTC instant of day 0; fixed, never the clock.")
    attributes: list[Attribute]
    controls: list[str] = Field(description="Keys of the attributes that never change.")
    reversions: list[str] = Field(description="Keys of the attributes that change back (A->B->A).")
    poison: list[Poison]
    decoys: list[Decoy] = Field(
        default_factory=list, description="Decoy mentions (generator 2; empty in generator 1)."
    )
    sessions: list[Session] = Field(description="In delivery order (for generators 1 and 2, "
                                    "delivery is the day of writing).")
    checkpoints: list[int]
    probes: list[Probe]
    volume: int | None = Field(
        default=None, description="Generator 3: the filler multiplier it was built with.")

    added_fields = ("decoys", "volume")

    # ---- ground truth -------------------------------------------------------------------

    def attribute(self, key: str) -> Attribute:
        """The attribute with this key. Raises KeyError for an unknown key."""
        for a in self.attributes:
            if a.key == key:
                return a
        raise KeyError(f"unknown attribute {key!r}")

    def truth(self, key: str, day: int) -> Truth:
        """What is true about attribute ``key`` as of the end of ``day``.

        The current value is the last change on or before ``day``; superseded values are every
        earlier value that is not the current one; poison values are the untrusted values whose
        first arrival is on or before ``day``. A generator with a rule of its own
        (``TRUTH_RULES``) has it worked out once per world object and (attribute, day): a
        world is frozen, and scoring and annotating ask the same truths again and again.
        """
        rule = TRUTH_RULES.get(self.generator_version)
        if rule is not None:
            memo = _memo(self)
            got = memo.get((rule, key, day))
            if got is None:
                got = memo[(rule, key, day)] = rule(self, key, day)
            return got
        attr = self.attribute(key)
        held = [c for c in attr.changes if c.day <= day]
        if not held:
            raise ValueError(f"attribute {key!r} has no value on day {day}")
        current = held[-1]
        superseded: list[str] = []
        for c in held[:-1]:
            if c.value != current.value and c.value not in superseded:
                superseded.append(c.value)
        poison = [(p.value, p.channel) for p in self.poison if p.attribute == key and p.day <= day]
        decoys = [
            DecoyValue(value=d.value, kind=d.kind)
            for d in self.decoys
            if d.attribute == key and d.day <= day
        ]
        return Truth(
            attribute=key,
            day=day,
            current=current.value,
            superseded=superseded,
            poison=[PoisonValue(value=v, channel=ch) for v, ch in poison],
            changed=len(held) > 1,
            latest_phrasing=current.phrasing,
            decoys=decoys,
        )


class PoisonValue(_Frozen):
    value: str
    channel: Channel


class DecoyValue(_Frozen):
    value: str
    kind: DecoyKind


class Truth(Additive):
    """Ground truth for one attribute on one day (see ``World.truth``).

    ``current`` is None only for a retracted attribute of generator 3 (it has no value now).
    The fields after ``decoys`` are generator 3's and left out of the JSON while empty.
    """

    attribute: str
    day: int
    current: str | None
    superseded: list[str] = Field(description="Values held before and no longer current.")
    poison: list[PoisonValue] = Field(description="Untrusted values that have arrived by this day.")
    changed: bool = Field(description="True once the attribute has changed at least once.")
    latest_phrasing: Phrasing = Field(
        description="Phrasing of the change that set the current value."
    )
    decoys: list[DecoyValue] = Field(
        default_factory=list,
        description="Decoy values mentioned by this day (never the user's; generator 2).",
    )
    members: list[str] = Field(
        default_factory=list, description="Set-valued attribute: every current member, in "
        "the order they joined (``current`` is the first).")
    added_members: list[str] = Field(
        default_factory=list, description="Set-valued attribute: members that joined while "
        "an older member was current (what ``member_lost`` watches the older ones across).")
    premature: list[str] = Field(
        default_factory=list, description="Values of scheduled changes said by this day "
        "whose effective day is still to come (current later, not yet).")
    corrected: list[str] = Field(
        default_factory=list, description="Values stated wrongly and corrected by this day: "
        "they never held.")
    retracted: bool | None = Field(
        default=None, description="True when the attribute's last value ended with no "
        "successor (``current`` is None).")
    cases: list[HardCase] = Field(
        default_factory=list, description="The hard cases live for this question (see "
        "``knowable_truth``).")
    unknown_since: int | None = Field(
        default=None, description="Generator 4: the day the root this attribute hung on "
        "changed with no successor given; the value is unknown since then (``current`` is "
        "None, the value it had is in ``superseded`` and ``previously``).")
    previously: str | None = Field(
        default=None, description="Generator 4, with ``unknown_since``: the value it had.")
    cascaded: list[str] = Field(
        default_factory=list, description="Generator 4: values stated under a root value "
        "that was later taken back; they went with it (listed in ``superseded`` too, so a "
        "hit serving one as current is stale).")
    forgotten: list[str] = Field(
        default_factory=list, description="Generator 5: values the user asked to have "
        "forgotten and has not stated again since; none may be served in any framing "
        "(``current`` is None while the forgotten value is the last one stated).")
    redelivered: list[str] = Field(
        default_factory=list, description="Generator 5, case ``redelivery``: the value of "
        "a re-delivered document that is no longer true (superseded or corrected), while "
        "that document is the last delivered own statement of the attribute.")
    evidence: int | None = Field(
        default=None, description="Generator 5: how many of the user's own statements of "
        "``current`` were delivered by this day (a set: of its first member); None when "
        "there is no current value, and in worlds of generators 1 to 4.")

    added_fields = ("decoys", "members", "added_members", "premature", "corrected",
                    "retracted", "cases", "unknown_since", "previously", "cascaded",
                    "forgotten", "redelivered", "evidence")

    @property
    def current_values(self) -> list[str]:
        """Every value that is current: the members of a set, else ``[current]`` (empty when
        retracted)."""
        if self.members:
            return list(self.members)
        return [] if self.current is None else [self.current]


def knowable_truth(world: World, key: str, day: int) -> Truth:
    """Generator 3's truth: what the documents delivered by the end of ``day`` imply about
    attribute ``key``, replayed by their written day (a scheduled change: its effective day).

    Only the user's own conversation statements count (never an untrusted channel or a
    decoy). Replayed in order of (effective day, written day, delivery order, turn):

    - a present-tense statement makes its value current (a set: adds a member); a past-tense
      one is history and changes nothing;
    - a correction makes its value current and moves the value it corrects to
      ``corrected`` (it never held, so it is not superseded either);
    - a retraction leaves no current value (``retracted``);
    - a scheduled change counts from its effective day; before it, its value is
      ``premature``;
    - ``member_drop`` removes a member from a set (it becomes superseded).

    Hard cases live for the question (``cases``): ``late`` when the most recently delivered
    own present-tense statement of the attribute came late and carries a superseded value;
    ``correction``, ``retraction``, ``scheduled`` (a premature value), ``temporary`` (a
    temporary state mentioned) and ``set`` (a set-valued attribute with two members or more).
    Raises ValueError when nothing delivered by ``day`` states a value.
    """
    return replay_truth(world, key, day, truth_rows(world, key, day))


TruthRow = tuple[int, int, int, int, Fact, bool, bool, int]
"""One own statement as ``knowable_truth`` replays it: (effective day, written day, index of
its session in delivery order, turn, fact, the session also says a past value of the
attribute, the session came late, its arrival day)."""



TRUTH_RULES: dict[str, Callable[[World, str, int], Truth]] = {"3": knowable_truth}
"""``World.truth`` of the generators whose truth is more than the replay of their changes,
by generator version. A later generator's module adds its own rule when it loads
(``rotbench.world.generators.truth_v4``: "4"); the package ``rotbench.world`` imports
it, so the table is whole wherever a world is read."""


_MEMOS: dict[int, dict] = {}
"""Per live world (by ``id``): what its pure functions of the world worked out (the truth of
an (attribute, day), the own statements of an attribute). A world is frozen, so each is
computed once per world object; the entry goes when the world is collected."""


def _memo(world: World) -> dict:
    """The memo of ``world`` (``_MEMOS``), made empty on first use."""
    memo = _MEMOS.get(id(world))
    if memo is None:
        memo = _MEMOS[id(world)] = {}
        weakref.finalize(world, _MEMOS.pop, id(world), None)
    return memo


def _own_rows(world: World, key: str) -> list[TruthRow]:
    """Every own statement of ``key`` in ``world``, whatever its arrival, as ``truth_rows``
    gives them (unsorted, in session order)."""
    rows: list[TruthRow] = []
    for index, s in enumerate(world.sessions):
        own = [f for f in s.facts
               if f.attribute == key and f.channel is None and f.decoy is None]
        if not own:
            continue
        arrival = s.day if s.delivered_day is None else s.delivered_day  # Session.arrival
        past_in_session = any(f.tense == "past" for f in own)
        for f in own:
            effective = f.effective_day if f.effective_day is not None else s.day
            rows.append((effective, s.day, index, f.turn, f, past_in_session, arrival > s.day,
                         arrival))
    return rows


def truth_rows(world: World, key: str, day: int) -> list[TruthRow]:
    """The user's own statements of ``key`` delivered by the end of ``day``, sorted as
    ``knowable_truth`` replays them (effective day, written day, delivery order, turn).
    Worked out once per world, attribute and day (``_memo``); each call gets its own list."""
    memo = _memo(world)
    rows = memo.get(("rows", key, day))
    if rows is None:
        every = memo.get(("own", key))
        if every is None:
            every = memo[("own", key)] = _own_rows(world, key)
        rows = [r for r in every if r[7] <= day]
        rows.sort(key=lambda r: r[:4])
        memo[("rows", key, day)] = rows
    return list(rows)


def _planted(world: World, key: str, day: int) -> tuple[list[PoisonValue], list[DecoyValue]]:
    """The poison and decoy values of ``key`` planted on or before ``day``."""
    poison = [PoisonValue(value=p.value, channel=p.channel)
              for p in world.poison if p.attribute == key and p.day <= day]
    decoys = [DecoyValue(value=d.value, kind=d.kind)
              for d in world.decoys if d.attribute == key and d.day <= day]
    return poison, decoys


def _hard_cases(rows: list[TruthRow], day: int, superseded: list[str], corrected: list[str],
                retracted: bool, premature: list[str], decoys: list[DecoyValue],
                is_set: bool) -> list[HardCase]:
    """The hard cases a probe of this truth falls in (``Truth.cases``), in their fixed order:
    late (the last delivered own statement is a superseded value), correction, retraction,
    scheduled, temporary, set."""
    cases: list[HardCase] = []
    own_present = [r for r in rows if r[0] <= day and r[4].tense == "present"]
    if own_present:
        last = max(own_present, key=lambda r: (r[7], r[2], r[3]))  # the last delivered
        if last[6] and last[4].value in superseded:
            cases.append("late")
    if corrected:
        cases.append("correction")
    if retracted:
        cases.append("retraction")
    if premature:
        cases.append("scheduled")
    if any(d.kind == "temporary" for d in decoys):
        cases.append("temporary")
    if is_set:
        cases.append("set")
    return cases


def replay_truth(world: World, key: str, day: int, rows: list[TruthRow]) -> Truth:
    """Replay ``rows`` (``truth_rows``, sorted) into the truth of ``key`` on ``day``, by the
    rules of ``knowable_truth``. Raises ValueError when no row states a value."""
    multi = bool(world.attribute(key).multi_valued)
    current: str | None = None
    members: list[str] = []
    added: list[str] = []
    held: list[str] = []
    corrected: list[str] = []
    premature: list[str] = []
    retracted = False
    changes = 0
    phrasing: Phrasing = "initial"
    stated = False
    for effective, _written, _index, _turn, f, transition, _late, _arrival in rows:
        if effective > day:
            if f.value not in premature:
                premature.append(f.value)
            continue
        if f.tense == "past" and f.event not in ("retraction", "member_drop"):
            continue
        if f.event == "retraction":
            if current is not None or members:
                changes += 1
            current, members, retracted = None, [], True
            continue
        if f.event == "member_drop":
            if f.value in members:
                members.remove(f.value)
                changes += 1
            continue
        if f.event == "correction" and f.corrects is not None:
            if f.corrects not in corrected:
                corrected.append(f.corrects)
            held = [v for v in held if v != f.corrects]
            members = [v for v in members if v != f.corrects]
            if current == f.corrects:
                current = None
        if multi:
            if f.value not in members:
                if members:
                    added.append(f.value)
                    changes += 1
                members.append(f.value)
            current = members[0]
        elif f.value != current:
            if stated and f.event != "correction":
                changes += 1
            phrasing = "transition" if stated and transition else (
                "restatement" if stated else "initial")
            current = f.value
        if f.value not in held:
            held.append(f.value)
        stated = True
        retracted = False
    if not stated:
        raise ValueError(f"attribute {key!r} has no value on day {day}")
    now = set(members) if multi else ({current} if current is not None else set())
    superseded = [v for v in held if v not in now and v not in corrected]
    premature = [v for v in premature if v not in now]
    poison, decoys = _planted(world, key, day)
    cases = _hard_cases(rows, day, superseded, corrected, retracted, premature, decoys,
                        multi and len(members) >= 2)
    members_now = list(members) if multi else []
    return Truth(
        attribute=key,
        day=day,
        current=current,
        superseded=superseded,
        poison=poison,
        changed=changes > 0,
        latest_phrasing=phrasing,
        decoys=decoys,
        members=members_now,
        added_members=[v for v in added if v in members_now],
        premature=premature,
        corrected=corrected,
        retracted=True if retracted else None,
        cases=cases,
    )
