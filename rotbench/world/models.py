"""The world's data model and its ground truth.

A world is what one seed produces: a persona ("the user") whose twelve attributes take values
over simulated days, the conversations and web pages that mention those values, the untrusted
(poison) values and the probe questions asked at each checkpoint. Every model here crosses a
boundary (the JSON printed by ``rotbench world``, the cache, the report), so all are pydantic.

Days are integers counted from the world epoch (day 0); day 1 is the first day with sessions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Channel = Literal["relay", "tool_turn", "source"]
"""How an untrusted value arrives: relayed by the assistant from a web search, a ``tool``
turn in the transcript, or a separate web page on an untrusted domain."""

CHANNELS: tuple[Channel, ...] = ("relay", "tool_turn", "source")

Phrasing = Literal["initial", "transition", "restatement"]
"""How a value was introduced: the first value, a change naming old and new ("I moved from
X to Y"), or a change stating only the new value ("I live in Y now")."""

Tense = Literal["present", "past"]
Role = Literal["user", "assistant", "tool"]
SessionKind = Literal[
    "intro", "change", "mention", "history", "noise", "relay", "tool_turn", "web_page"
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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


class Fact(_Frozen):
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


class Probe(_Frozen):
    """A question asked at a checkpoint; ``attribute`` is None for an unanswerable question."""

    day: int
    attribute: str | None
    question: str


class World(_Frozen):
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
    sessions: list[Session]
    checkpoints: list[int]
    probes: list[Probe]

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
        return Truth(
            attribute=key,
            day=day,
            current=current.value,
            superseded=superseded,
            poison=[PoisonValue(value=v, channel=ch) for v, ch in poison],
            changed=len(held) > 1,
            latest_phrasing=current.phrasing,
        )


class PoisonValue(_Frozen):
    value: str
    channel: Channel


class Truth(_Frozen):
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
