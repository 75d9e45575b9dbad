"""The world's data model and its ground truth.

A world is what one seed produces: a persona ("the user") whose twelve attributes take values
over simulated days, the conversations and web pages that mention those values, the untrusted
(poison) values and the probe questions asked at each checkpoint. Every model here crosses a
boundary (the JSON printed by ``rotbench world``, the cache, the report), so all are pydantic.

Days are integers counted from the world epoch (day 0); day 1 is the first day with sessions.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Channel = Literal["relay", "tool_turn", "source"]
"""How an untrusted value arrives: relayed by the assistant from a web search, a ``tool``
turn in the transcript, or a separate web page on an untrusted domain."""

CHANNELS: tuple[Channel, ...] = ("relay", "tool_turn", "source")

Phrasing = Literal["initial", "transition", "restatement"]
"""How a value was introduced: the first value, a change naming old and new ("I moved from
X to Y"), or a change stating only the new value ("I live in Y now")."""

DecoyKind = Literal["other_person", "hypothetical", "negation", "suggestion"]
"""How a decoy mention carries a pool value the user never holds (generator 2): another
person's fact ("My sister's car is a Dacia"), a hypothetical or plan, a negation ("I would
never drive a Dacia"), or an assistant's suggestion the user does not take."""

DECOY_KINDS: tuple[DecoyKind, ...] = ("other_person", "hypothetical", "negation", "suggestion")

UnanswerableKind = Literal["near_miss", "unrelated"]
"""An unanswerable question close to an attribute the world knows ("Which city does the
user's best friend live in?"), or about something unrelated ("the user's blood type")."""

UNANSWERABLE_KINDS: tuple[UnanswerableKind, ...] = ("near_miss", "unrelated")

Tense = Literal["present", "past"]
Role = Literal["user", "assistant", "tool"]
SessionKind = Literal[
    "intro", "change", "mention", "history", "noise", "relay", "tool_turn", "web_page", "decoy"
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Additive(_Frozen):
    """A model whose fields added by generator 2 are left out of its JSON while empty.

    ``added_fields`` names those fields. A generator-1 world then serialises byte for byte as it
    did before they existed, so its fingerprint and every cache key derived from it stay put.
    """

    added_fields: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_empty_additions(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        for name in self.added_fields:
            if name in data and data[name] in (None, [], {}):
                del data[name]
        return data


class Change(_Frozen):
    """One entry of an attribute's value timeline: from ``day`` on, the value is ``value``."""

    day: int = Field(description="Day the value takes effect (days since the world epoch).")
    value: str
    phrasing: Phrasing


class Attribute(_Frozen):
    """One attribute of the persona, its candidate pool and its value timeline."""

    key: str = Field(description="Stable identifier, e.g. 'home_city'.")
    label: str = Field(description="Noun phrase used in rendered claims, e.g. 'home city'.")
    question: str = Field(description="The probe question asked at every checkpoint.")
    pool: list[str] = Field(description="Every value this attribute can take (>= 8 proper nouns).")
    changes: list[Change] = Field(
        description="Value timeline; the first entry is the initial value."
    )


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

    added_fields = ("decoy",)


class Turn(_Frozen):
    role: Role
    text: str


class Session(_Frozen):
    """A document deposited into memory: a conversation, or a web page (``kind='web_page'``)."""

    day: int
    position: int = Field(description="Order of the document within its day, from 0.")
    timestamp: str = Field(
        description="ISO-8601 UTC, derived from the world epoch, day and position."
    )
    kind: SessionKind
    document_uri: str
    turns: list[Turn] = Field(description="For a web page: one 'tool' turn holding the page text.")
    facts: list[Fact] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The document as plain text, one ``role: text`` line per turn (web page: page text)."""
        if self.kind == "web_page":
            return "\n".join(t.text for t in self.turns)
        return "\n".join(f"{t.role}: {t.text}" for t in self.turns)


class Probe(Additive):
    """A question asked at a checkpoint; ``attribute`` is None for an unanswerable question."""

    day: int
    attribute: str | None
    question: str
    unanswerable: UnanswerableKind | None = Field(
        default=None,
        description="For an unanswerable question of generator 2: near-miss or unrelated "
        "(None: answerable, or generator 1, whose unanswerable questions are all unrelated).",
    )

    added_fields = ("unanswerable",)


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
    sessions: list[Session]
    checkpoints: list[int]
    probes: list[Probe]

    added_fields = ("decoys",)

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
        first arrival is on or before ``day``.
        """
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
    """Ground truth for one attribute on one day (see ``World.truth``)."""

    attribute: str
    day: int
    current: str
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

    added_fields = ("decoys",)
