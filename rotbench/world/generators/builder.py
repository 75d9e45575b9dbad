"""What every generator builds a world with: the draft of a session, the days a change may
fall on, the remark and decoy sessions, the assistant's acknowledgement turn and the world's
fingerprint. A generator module adds only what its version changes."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from rotbench.world.epoch import canonical_json
from rotbench.world.models import Fact, Turn, World
from rotbench.world.pools import (
    ASSISTANT_ACKS,
    DECOY_SUGGESTION_DECLINES,
    DECOY_SUGGESTION_OPENERS,
)

INTRO_LAST_DAY = 10
"""The intro sessions fall on days 1 to 10; changes and hazards come after."""


@dataclass
class Draft:
    """One session or web page before the world numbers its documents: the day it is
    written, its kind, its turns, the facts it carries, a page's URI, the day it is
    delivered (None: the day it is written; only generator 3 on delivers late) and its order
    among the day's drafts."""

    day: int
    kind: str
    turns: list[Turn]
    facts: list[Fact] = field(default_factory=list)
    uri: str | None = None
    delivered: int | None = None
    order: int = 0

    @property
    def arrival(self) -> int:
        """The day the document reaches the store."""
        return self.day if self.delivered is None else self.delivered


def ack(rng: random.Random) -> Turn:
    """The assistant's short acknowledgement after a user's remark, drawn from ``rng``."""
    return Turn(role="assistant", text=rng.choice(ASSISTANT_ACKS))


def change_windows(checkpoints: list[int]) -> list[range]:
    """Day ranges strictly between consecutive checkpoints (after the intro days) where a
    change may fall."""
    out, lo = [], INTRO_LAST_DAY + 1
    for cp in checkpoints:
        if lo <= cp - 1:
            out.append(range(lo, cp))
        lo = cp + 1
    return out


def remark(rng: random.Random, day: int, kind: str, text: str, facts: list[Fact],
           delivered: int | None = None) -> Draft:
    """A session of one user remark (carrying ``facts``) and the assistant's
    acknowledgement, drawn from ``rng``."""
    return Draft(day=day, kind=kind, turns=[Turn(role="user", text=text), ack(rng)],
                 facts=facts, delivered=delivered)


def decoy_turns(rng: random.Random, kind: str, text: str) -> tuple[list[Turn], int]:
    """The turns of a decoy session saying ``text``, and the index of the turn that says
    it: a suggestion is the assistant's, between the user's opener and decline; any other
    kind is the user's remark, acknowledged."""
    if kind == "suggestion":
        return [Turn(role="user", text=rng.choice(DECOY_SUGGESTION_OPENERS)),
                Turn(role="assistant", text=text),
                Turn(role="user", text=rng.choice(DECOY_SUGGESTION_DECLINES))], 1
    return [Turn(role="user", text=text), ack(rng)], 0


def fingerprinted(draft: World) -> World:
    """``draft`` with its fingerprint: sha256 of the canonical JSON of every other field."""
    fingerprint = hashlib.sha256(
        canonical_json(draft.model_dump(mode="json", exclude={"fingerprint"})).encode()
    ).hexdigest()
    return draft.model_copy(update={"fingerprint": fingerprint})
