"""Shared-store worlds: the worlds of several personas deposited into one engine instance.

A shared world is composed, never generated afresh: persona ``i`` is the world that
``generate_world(persona_seed, days, generator)`` returns, whatever the generator version,
so every single-user rule (timelines, untrusted values, decoys, probes) holds per persona
unchanged. Persona 0 is the run's own seed; persona ``i >= 1`` is the first candidate seed
``persona_candidate(seed, i, attempt)`` (attempt 0, 1, ...) that fits the personas already
chosen (``fits``):

- **shared values**: on at least one attribute the new persona holds, on some checkpoint,
  the same value as an earlier persona (a value two users share cannot leak, and the
  metric must not count it);
- **conflicting history**: on at least one attribute a value the new persona has left
  behind is an earlier persona's current value on that checkpoint, or the other way round
  (one user's old car is another's current car): the leak of history is then visible.

Values that differ between users are the common case on the other attributes. Untrusted
values and decoys stay per user: each persona's untrusted documents and decoy mentions are
deposited under that persona's id and scored against that persona's truth only. The pools
are small (8 or 9 values), so one persona's untrusted or decoy value is often another's
real value; scoring then never counts a value the asking user knows in any way (held,
untrusted or decoy) as another user's (the isolation metrics ``cross_user_leak_at_k`` and
``cross_user_first``). Everything is a
pure function of ``(seed, users, days, generator)``; see docs/several-users.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from rotbench._util.sinks import is_unsafe
from rotbench.world.epoch import canonical_json
from rotbench.world.generators.base import DEFAULT_GENERATOR, generate_world
from rotbench.world.generators.registry import GENERATORS
from rotbench.world.models import World

MAX_USERS = 8
"""Most personas in one store (a shared world's probes grow linearly with it)."""
MAX_USER_ID_CHARS = 128
"""Longest user id a run stores (it is data: stored in reports and DuckDB, never a path)."""
MAX_ATTEMPTS = 500
"""Candidate seeds tried per persona before giving up (``SharedWorldError``)."""


class SharedWorldError(ValueError):
    """No persona fits within ``MAX_ATTEMPTS`` candidates, or bad users; one line."""


def default_user_ids(users: int) -> list[str]:
    """``['user-1', ..., 'user-N']``: the personas' ids when none are given."""
    return [f"user-{i + 1}" for i in range(users)]


def user_id_problem(user_id: object) -> str | None:
    """Why ``user_id`` cannot be stored as a user id (None: it can).

    A user id is opaque data: any text of 1 to ``MAX_USER_ID_CHARS`` characters with no
    control, format, surrogate or line/paragraph-separator character
    (``rotbench._util.sinks.is_unsafe``: those cannot be shown on one line or stored
    faithfully; a NUL ends C strings). ``../`` and quotes are fine:
    an id never names a file or enters SQL text."""
    if not isinstance(user_id, str):
        return "a user id must be text"
    if not user_id:
        return "a user id must not be empty"
    if len(user_id) > MAX_USER_ID_CHARS:
        return f"a user id may hold at most {MAX_USER_ID_CHARS} characters, got {len(user_id)}"
    for ch in user_id:
        if is_unsafe(ch):
            return f"a user id must not hold the control character {ascii(ch)}"
    return None


class SharedUser(BaseModel):
    """One persona of a shared store: its opaque id, its seed and its world."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: str = Field(description="Opaque user id (data only: never a path or SQL text).")
    seed: int = Field(description="The persona's own world seed.")
    world: World


class SharedWorld(BaseModel):
    """The personas of one store (``users[0].seed == seed``), in persona order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = Field(description="The run's seed (persona 0's seed).")
    days: int
    generator_version: str
    users: list[SharedUser] = Field(min_length=1)
    attempts: list[int] = Field(description="Per persona, the candidate attempt chosen.")

    def perception_world(self) -> World:
        """One world holding every persona's sessions (persona 0's attributes, the same
        labels and pools for all) and every persona's questions: what a perception (the oracle's
        facts by document and frames by question, a live extractor's slot vocabulary) reads a
        shared store's documents and questions with. Not a world to score: its timelines are
        persona 0's."""
        first = self.users[0].world
        return first.model_copy(update={
            "sessions": [s for u in self.users for s in u.world.sessions],
            "probes": [p for u in self.users for p in u.world.probes]})

    @property
    def fingerprint(self) -> str:
        """sha256 of the personas' ids and world fingerprints, in order."""
        body = canonical_json({"seed": self.seed, "users": [
            [u.user, u.seed, u.world.fingerprint] for u in self.users]})
        return hashlib.sha256(body.encode()).hexdigest()


def persona_candidate(seed: int, index: int, attempt: int) -> int:
    """Candidate seed number ``attempt`` of persona ``index`` of the run seed ``seed``
    (0 .. 2**31 - 1, so it fits the database's 32-bit seed column)."""
    material = f"rotbench-persona:{seed}:{index}:{attempt}".encode()
    return int.from_bytes(hashlib.sha256(material).digest()[:8], "big") % (2**31 - 1)


def fits(candidate: World, chosen: Sequence[World]) -> bool:
    """Whether ``candidate`` may join the personas ``chosen`` (rules in the module text)."""
    shared = conflict = False
    for other in chosen:
        for day in candidate.checkpoints:
            for a in candidate.attributes:
                mine, theirs = candidate.truth(a.key, day), other.truth(a.key, day)
                now_mine, now_theirs = set(mine.current_values), set(theirs.current_values)
                shared = shared or bool(now_mine & now_theirs)
                conflict = conflict or bool(now_mine & set(theirs.superseded)) \
                    or bool(now_theirs & set(mine.superseded))
    return shared and conflict


def compose_shared_world(seed: int, users: int, days: int = 90,
                         generator: str = DEFAULT_GENERATOR,
                         user_ids: Sequence[str] | None = None) -> SharedWorld:
    """The shared world of ``users`` personas for the run seed ``seed``.

    ``user_ids``: the personas' ids (default ``default_user_ids``); they must be distinct and
    storable (``user_id_problem``). Raises SharedWorldError for a bad count or id or when no
    candidate fits, and whatever ``generate_world`` raises for bad days or generator.
    """
    if not 1 <= users <= MAX_USERS:
        raise SharedWorldError(f"users must be from 1 to {MAX_USERS}, got {users}")
    ids = list(user_ids) if user_ids is not None else default_user_ids(users)
    if len(ids) != users:
        raise SharedWorldError(f"{users} users need {users} user ids, got {len(ids)}")
    for uid in ids:
        problem = user_id_problem(uid)
        if problem:
            raise SharedWorldError(problem)
    if len(set(ids)) != len(ids):
        raise SharedWorldError("user ids must be distinct")
    worlds = [generate_world(seed, days, generator)]
    attempts = [0]
    for index in range(1, users):
        for attempt in range(MAX_ATTEMPTS):
            candidate_seed = persona_candidate(seed, index, attempt)
            if candidate_seed in {w.seed for w in worlds}:
                continue
            candidate = generate_world(candidate_seed, days, generator)
            if fits(candidate, worlds):
                worlds.append(candidate)
                attempts.append(attempt)
                break
        else:
            raise SharedWorldError(f"seed {seed}: no persona {index + 1} fits within "
                                   f"{MAX_ATTEMPTS} candidates")
    return SharedWorld(
        seed=seed, days=days, generator_version=generator, attempts=attempts,
        users=[SharedUser(user=uid, seed=w.seed, world=w) for uid, w in zip(ids, worlds,
                                                                             strict=True)])


def known_values(world: World, attribute: str) -> set[str]:
    """Every value of ``attribute`` the persona of ``world`` knows at any time: held, an
    untrusted value of theirs, or a decoy of theirs."""
    values = {c.value for c in world.attribute(attribute).changes}
    spec = GENERATORS.find(world.generator_version)
    if spec is None or spec.events:  # said but never in ``changes``: a set's members, a
        # value corrected or taken back with its root, a declared successor
        values |= {f.value for s in world.sessions for f in s.facts
                   if f.attribute == attribute}
    values |= {p.value for p in world.poison if p.attribute == attribute}
    values |= {d.value for d in getattr(world, "decoys", None) or [] if d.attribute == attribute}
    return values


def other_users_values(shared: SharedWorld, index: int, attribute: str,
                       day: int) -> tuple[list[str], list[str]]:
    """``(current, history)``: the values of ``attribute`` that the other personas of
    ``shared`` hold on ``day`` (current) or held before it and no other persona holds on it
    (history), less every value persona ``index`` ever knew (``known_values``). Sorted."""
    mine = known_values(shared.users[index].world, attribute)
    current: set[str] = set()
    history: set[str] = set()
    for j, other in enumerate(shared.users):
        if j == index:
            continue
        truth = other.world.truth(attribute, day)
        current.update(truth.current_values)  # none for a retracted or unknown value
        history.update(truth.superseded)
    history -= current
    return sorted(current - mine), sorted(history - mine)
