"""What every generator builds a world with: the assistant's acknowledgement turn and the
world's fingerprint. A generator module adds only what its version changes."""

from __future__ import annotations

import hashlib
import random

from rotbench.world.epoch import canonical_json
from rotbench.world.models import Turn, World
from rotbench.world.pools import ASSISTANT_ACKS


def ack(rng: random.Random) -> Turn:
    """The assistant's short acknowledgement after a user's remark, drawn from ``rng``."""
    return Turn(role="assistant", text=rng.choice(ASSISTANT_ACKS))


def fingerprinted(draft: World) -> World:
    """``draft`` with its fingerprint: sha256 of the canonical JSON of every other field."""
    fingerprint = hashlib.sha256(
        canonical_json(draft.model_dump(mode="json", exclude={"fingerprint"})).encode()
    ).hexdigest()
    return draft.model_copy(update={"fingerprint": fingerprint})
