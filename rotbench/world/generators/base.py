"""The world generator: ``generate_world(seed, days)`` -> World.

A pure function of ``(seed, days, generator version)``: one private ``random.Random`` seeded
from those three, no I/O, no clock. A released version never changes what a seed produces;
a change is a new row of ``registry.GENERATORS``. The fingerprint tests pin the output of
seeds 42, 43 and 44 under every version.

Shape of a world (days counted from the epoch, day 0):

- days 1..10: introductions; every attribute's initial value is stated once.
- changes fall strictly between checkpoints, from day 11 to the day before the last
  checkpoint, and two changes of one attribute always have a checkpoint between them, so each
  change is observable. Two attributes never change (controls), three change and change back
  (A -> B -> A), the other seven change once or twice to fresh values.
- mention sessions restate current values; history sessions mention superseded values in the
  past tense, only on days after they were superseded and while they are not current.
- six untrusted values, two per channel, on six distinct attributes; each is a pool value
  the attribute never holds.
- noise sessions carry no attribute value.

Generator 2 keeps all of that and adds (drawn after everything generator 1 draws):

- decoy mentions: two per kind (another person's fact, a hypothetical, a negation, an
  assistant's suggestion the user declines) on eight distinct attributes, each a pool value
  the attribute never holds and no untrusted value of it, on a day before the last checkpoint;
- untrusted values in varied wordings (``*_V2`` in ``pools``), with no fixed giveaway word;
- two attributes restated many times (``REPEATED_MENTIONS`` extra present-tense mentions);
- two near-miss unanswerable questions per checkpoint beside the two unrelated ones.
"""

from __future__ import annotations

import functools
import hashlib
import random
from datetime import timedelta

from rotbench.world.epoch import EPOCH
from rotbench.world.generators.builder import (
    INTRO_LAST_DAY,
    Draft,
    ack,
    change_windows,
    decoy_turns,
    fingerprinted,
    remark,
)
from rotbench.world.generators.registry import (
    CHECKPOINT_EVERY_DAYS,
    DEFAULT_GENERATOR,
    GENERATORS,
    MAX_DAYS,
    MAX_VOLUME,
    MIN_DAYS,
    WorldConfigError,
    generator_spec,
    volume_generators,
)
from rotbench.world.generators.registry import (
    GENERATOR_VERSIONS as GENERATOR_VERSIONS,
)
from rotbench.world.generators.registry import (
    UnknownGenerator as UnknownGenerator,
)
from rotbench.world.invariants import check_pools
from rotbench.world.models import (
    DECOY_KINDS,
    Attribute,
    Change,
    Channel,
    Decoy,
    Fact,
    Poison,
    Probe,
    Session,
    Turn,
    World,
)
from rotbench.world.pools import (
    ATTRIBUTES,
    DECOY_PEOPLE,
    DECOY_TEMPLATES,
    NEAR_MISS_QUESTIONS,
    NOISE_EXCHANGES,
    RELAY_REQUEST,
    RELAY_REQUESTS_V2,
    RELAY_TURN,
    RELAY_TURNS_V2,
    TOOL_AFTER,
    TOOL_AFTERS_V2,
    TOOL_CALL,
    TOOL_CALLS_V2,
    TOOL_REQUEST,
    TOOL_REQUESTS_V2,
    TOOL_TURN,
    TOOL_TURNS_V2,
    UNANSWERABLE_QUESTIONS,
    UNTRUSTED_DOMAINS,
    WEB_PAGE,
    WEB_PAGES_V2,
    AttributeSpec,
)

GENERATOR_VERSION = DEFAULT_GENERATOR
"""Alias of ``registry.DEFAULT_GENERATOR`` (the generator rows live in ``registry``)."""
MAX_DAYS_TIMES_VOLUME = 36500
"""Largest ``days * volume`` of one world (ten years at volume 10, or one at 100)."""
N_CONTROLS = 2
N_REVERSIONS = 3
POISON_PER_CHANNEL = 2
UNANSWERABLE_PER_CHECKPOINT = 2
NEAR_MISS_PER_CHECKPOINT = 2
DECOYS_PER_KIND = 2
REPEATED_ATTRIBUTES = 2
REPEATED_MENTIONS = 6

_KIND_ORDER = {
    "intro": 0,
    "change": 1,
    "mention": 2,
    "history": 3,
    "noise": 4,
    "relay": 5,
    "tool_turn": 6,
    "web_page": 7,
    "decoy": 8,
}


def checkpoints_for(days: int, generator: str | None = None) -> list[int]:
    """Checkpoint days of a world of ``generator`` over ``days`` days: the row's own rule
    (generator 5: day 15, every ten days after it and the last day), else every 15 days
    (15, 30, ..., 90 for 90 days)."""
    spec = GENERATORS.find(generator)
    if spec is not None and spec.checkpoints is not None:
        return spec.checkpoints(days)
    return list(range(CHECKPOINT_EVERY_DAYS, days + 1, CHECKPOINT_EVERY_DAYS))


def _rng(seed: int, days: int, version: str) -> random.Random:
    material = f"rotbench-world:{version}:{seed}:{days}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(material).digest()[:8], "big"))


def _change_days(rng: random.Random, intervals: list[range], n: int) -> list[int]:
    chosen = sorted(rng.sample(range(len(intervals)), n))
    return [rng.choice(intervals[i]) for i in chosen]


def _timeline(
    rng: random.Random, spec: AttributeSpec, role: str, intervals: list[range]
) -> list[Change]:
    initial = rng.choice(spec.pool)
    changes = [Change(day=1, value=initial, phrasing="initial")]
    if role == "control":
        return changes
    n = 2 if role == "reversion" else (2 if rng.random() < 0.3 and len(intervals) > 1 else 1)
    days = _change_days(rng, intervals, n)
    held = [initial]
    for i, day in enumerate(days):
        if role == "reversion" and i == 1:
            value = initial
        else:
            value = rng.choice([v for v in spec.pool if v not in held])
        held.append(value)
        changes.append(
            Change(day=day, value=value, phrasing=rng.choice(("transition", "restatement")))
        )
    return changes


def _value_on(changes: list[Change], day: int) -> str:
    return [c for c in changes if c.day <= day][-1].value


def _superseded_on(changes: list[Change], day: int) -> list[str]:
    held = [c for c in changes if c.day <= day]
    current = held[-1].value
    return sorted({c.value for c in held[:-1]} - {current})


def _fill(template: str, spec: AttributeSpec, **kw: str) -> str:
    return template.format(label=spec.label, **kw)


def _intro_sessions(rng: random.Random, timelines: dict[str, list[Change]]) -> list[Draft]:
    keys = list(timelines)
    rng.shuffle(keys)
    intro_days = sorted(rng.sample(range(1, INTRO_LAST_DAY + 1), 4))
    drafts = []
    for i, day in enumerate(intro_days):
        turns, facts = [], []
        for key in keys[i * 3 : (i + 1) * 3]:
            spec = _SPECS[key]
            value = timelines[key][0].value
            facts.append(Fact(turn=len(turns), attribute=key, value=value, tense="present"))
            turns += [Turn(role="user", text=rng.choice(spec.present).format(v=value)), ack(rng)]
        drafts.append(Draft(day=day, kind="intro", turns=turns, facts=facts))
    # The intro timeline entries are dated day 1; the stated day is the session's day.
    return drafts


def _change_session(rng: random.Random, spec: AttributeSpec, old: str, ch: Change) -> Draft:
    if ch.phrasing == "transition":
        text = spec.transition.format(old=old, new=ch.value)
        facts = [
            Fact(turn=0, attribute=spec.key, value=ch.value, tense="present"),
            Fact(turn=0, attribute=spec.key, value=old, tense="past"),
        ]
    else:
        text = spec.restatement.format(new=ch.value)
        facts = [Fact(turn=0, attribute=spec.key, value=ch.value, tense="present")]
    return Draft(
        day=ch.day, kind="change", turns=[Turn(role="user", text=text), ack(rng)], facts=facts
    )


def _mention_sessions(
    rng: random.Random,
    timelines: dict[str, list[Change]],
    days: int,
    change_days: dict[str, set[int]],
) -> list[Draft]:
    drafts = []
    for key, changes in timelines.items():
        spec = _SPECS[key]
        candidates = [d for d in range(INTRO_LAST_DAY + 1, days + 1) if d not in change_days[key]]
        for day in sorted(rng.sample(candidates, rng.randint(1, 3))):
            value = _value_on(changes, day)
            text = rng.choice(spec.present).format(v=value)
            drafts.append(remark(rng, day, "mention", text,
                                 [Fact(turn=0, attribute=key, value=value, tense="present")]))
        for ch in changes[1:]:
            later = [d for d in range(ch.day + 1, days + 1) if d not in change_days[key]]
            old_values = [c.value for c in changes if c.day < ch.day]
            previous = old_values[-1]
            pick = [d for d in later if previous in _superseded_on(changes, d)]
            for day in sorted(rng.sample(pick, min(len(pick), rng.randint(1, 2)))):
                text = rng.choice(spec.past).format(v=previous)
                fact = Fact(turn=0, attribute=key, value=previous, tense="past")
                drafts.append(remark(rng, day, "history", text, [fact]))
    return drafts


def _noise_sessions(rng: random.Random, days: int) -> list[Draft]:
    drafts = []
    for day in sorted(rng.sample(range(1, days + 1), max(4, days // 6))):
        user, assistant = rng.choice(NOISE_EXCHANGES)
        drafts.append(
            Draft(
                day=day,
                kind="noise",
                turns=[Turn(role="user", text=user), Turn(role="assistant", text=assistant)],
            )
        )
    return drafts


def _poison(
    rng: random.Random,
    timelines: dict[str, list[Change]],
    checkpoints: list[int],
    seed: int,
    varied: bool = False,
) -> tuple[list[Poison], list[Draft]]:
    channels: list[Channel] = [
        c for c in ("relay", "tool_turn", "source") for _ in range(POISON_PER_CHANNEL)
    ]
    keys = rng.sample(list(timelines), len(channels))
    eligible = [d for d in range(INTRO_LAST_DAY + 1, checkpoints[-1]) if d not in checkpoints]
    poison, drafts = [], []
    for i, (key, channel) in enumerate(zip(keys, channels, strict=True)):
        spec = _SPECS[key]
        held = {c.value for c in timelines[key]}
        value = rng.choice([v for v in spec.pool if v not in held])
        day = rng.choice(eligible)
        fact = Fact(turn=0, attribute=key, value=value, tense="present", channel=channel)
        words = _untrusted_wording(rng, channel) if varied else _V1_WORDING[channel]
        if channel == "relay":
            turns = [
                Turn(role="user", text=words[0]),
                Turn(role="assistant", text=_fill(words[1], spec, v=value)),
            ]
            draft = Draft(
                day=day, kind="relay", turns=turns, facts=[fact.model_copy(update={"turn": 1})]
            )
        elif channel == "tool_turn":
            turns = [
                Turn(role="user", text=words[0]),
                Turn(role="assistant", text=words[1]),
                Turn(role="tool", text=_fill(words[2], spec, v=value)),
                Turn(role="assistant", text=words[3]),
            ]
            draft = Draft(
                day=day, kind="tool_turn", turns=turns, facts=[fact.model_copy(update={"turn": 2})]
            )
        else:
            domain = UNTRUSTED_DOMAINS[i % len(UNTRUSTED_DOMAINS)]
            uri = f"https://{domain}/profiles/world-{seed}/{key.replace('_', '-')}"
            draft = Draft(
                day=day,
                kind="web_page",
                uri=uri,
                turns=[Turn(role="tool", text=_fill(words[0], spec, v=value))],
                facts=[fact],
            )
        drafts.append(draft)
        poison.append(Poison(attribute=key, value=value, channel=channel, day=day, document_uri=""))
    return poison, drafts


_V1_WORDING: dict[str, tuple[str, ...]] = {
    "relay": (RELAY_REQUEST, RELAY_TURN),
    "tool_turn": (TOOL_REQUEST, TOOL_CALL, TOOL_TURN, TOOL_AFTER),
    "source": (WEB_PAGE,),
}


def _untrusted_wording(rng: random.Random, channel: str) -> tuple[str, ...]:
    """Generator 2: one varied wording per turn of an untrusted session."""
    if channel == "relay":
        return (rng.choice(RELAY_REQUESTS_V2), rng.choice(RELAY_TURNS_V2))
    if channel == "tool_turn":
        return (rng.choice(TOOL_REQUESTS_V2), rng.choice(TOOL_CALLS_V2),
                rng.choice(TOOL_TURNS_V2), rng.choice(TOOL_AFTERS_V2))
    return (rng.choice(WEB_PAGES_V2),)


def _decoys(
    rng: random.Random,
    timelines: dict[str, list[Change]],
    poison: list[Poison],
    checkpoints: list[int],
) -> tuple[list[Decoy], list[Draft]]:
    """Generator 2: ``DECOYS_PER_KIND`` decoy mentions per kind, on distinct attributes."""
    kinds = [k for k in DECOY_KINDS for _ in range(DECOYS_PER_KIND)]
    keys = rng.sample(list(timelines), len(kinds))
    eligible = [d for d in range(INTRO_LAST_DAY + 1, checkpoints[-1]) if d not in checkpoints]
    decoys, drafts = [], []
    for key, kind in zip(keys, kinds, strict=True):
        spec = _SPECS[key]
        taken = {c.value for c in timelines[key]} | {p.value for p in poison if p.attribute == key}
        value = rng.choice([v for v in spec.pool if v not in taken])
        day = rng.choice(eligible)
        text = rng.choice(DECOY_TEMPLATES[kind]).format(
            who=rng.choice(DECOY_PEOPLE), label=spec.label, v=value)
        turns, turn = decoy_turns(rng, kind, text)
        fact = Fact(turn=turn, attribute=key, value=value, tense="present", decoy=kind)
        drafts.append(Draft(day=day, kind="decoy", turns=turns, facts=[fact]))
        decoys.append(Decoy(attribute=key, value=value, kind=kind, day=day, document_uri=""))
    return decoys, drafts


def _repeated_mentions(
    rng: random.Random, timelines: dict[str, list[Change]], days: int,
    change_days: dict[str, set[int]],
) -> list[Draft]:
    """Generator 2: a few attributes restated many times, so duplicates can pile up."""
    drafts = []
    for key in sorted(rng.sample(list(timelines), REPEATED_ATTRIBUTES)):
        spec = _SPECS[key]
        candidates = [d for d in range(INTRO_LAST_DAY + 1, days + 1) if d not in change_days[key]]
        for day in sorted(rng.sample(candidates, min(len(candidates), REPEATED_MENTIONS))):
            value = _value_on(timelines[key], day)
            text = rng.choice(spec.present).format(v=value)
            drafts.append(remark(rng, day, "mention", text,
                                 [Fact(turn=0, attribute=key, value=value, tense="present")]))
    return drafts


def _finish_sessions(drafts: list[Draft], seed: int) -> list[Session]:
    drafts.sort(key=lambda d: (d.day, _KIND_ORDER[d.kind], d.order))
    sessions, position, last_day = [], 0, None
    for d in drafts:
        position = position + 1 if d.day == last_day else 0
        last_day = d.day
        stamp = EPOCH + timedelta(days=d.day, hours=9, minutes=40 * position)
        uri = d.uri or f"session://world-{seed}/day-{d.day:03d}/{position}"
        sessions.append(
            Session(
                day=d.day,
                position=position,
                timestamp=stamp.isoformat().replace("+00:00", "Z"),
                kind=d.kind,
                document_uri=uri,
                turns=d.turns,
                facts=d.facts,
            )
        )
    return sessions



@functools.lru_cache(maxsize=8)
def _check_pools_once(pools: tuple[tuple[str, tuple[str, ...]], ...],
                      templates: tuple[str, ...]) -> None:
    """``check_pools`` once per distinct pool set and template texts in this process (it
    costs about as much as generating a world). A failing set is not remembered: it raises
    again on every call."""
    check_pools(dict(pools), templates)


def days_problem(generator: str, days: int) -> str | None:
    """Why generator ``generator`` cannot build a world of ``days`` days (one line), or None
    (the row's ``min_days``; None too for an unknown generator, refused elsewhere)."""
    spec = GENERATORS.find(generator)
    if spec is None or days >= spec.min_days:
        return None
    kinds = ""
    if spec.dependents:
        from rotbench.world.generators.v4 import FULL_DAYS_V4

        kinds = f"; each new kind is asked five times or more from {FULL_DAYS_V4} days"
    return (f"generator {generator} needs --days {spec.min_days} or more (two checkpoints"
            f"{kinds}), got {days}")


def generate_world(seed: int, days: int = 90, generator: str = DEFAULT_GENERATOR,
                   volume: int = 1) -> World:
    """Build the world for ``seed`` over ``days`` simulated days with generator ``generator``
    (its ``GENERATORS`` row builds it).

    ``volume`` (1 to the row's ``max_volume``) multiplies the filler sessions; a generator
    without filler accepts only 1.

    Raises WorldConfigError when ``days`` is under 30 (a world needs two checkpoints so that a
    change can be observed between them) or over 3650, or ``days * volume`` is over
    ``MAX_DAYS_TIMES_VOLUME``, UnknownGenerator (a WorldConfigError)
    for a version not in ``GENERATORS``, and PoolOverlapError if the pools break the
    invariant.
    """
    if not isinstance(days, int) or not MIN_DAYS <= days <= MAX_DAYS:
        raise WorldConfigError(
            f"days must be an integer from {MIN_DAYS} to {MAX_DAYS}, got {days!r}")
    spec = generator_spec(generator)
    problem = days_problem(generator, days)
    if problem:
        raise WorldConfigError(problem)
    if not isinstance(volume, int) or not 1 <= volume <= MAX_VOLUME:
        raise WorldConfigError(f"volume must be an integer from 1 to {MAX_VOLUME}, "
                               f"got {volume!r}")
    if days * volume > MAX_DAYS_TIMES_VOLUME:
        raise WorldConfigError(f"volume {volume} over {days} days: days x volume {days * volume}"
                               f" is beyond the largest world ({MAX_DAYS_TIMES_VOLUME})")
    if volume > spec.max_volume:
        raise WorldConfigError(f"volume applies to generators {volume_generators()} only "
                               f"(generator {generator} has no filler to multiply), got {volume}")
    _check_pools_once(tuple((a.key, tuple(a.pool)) for a in ATTRIBUTES),
                      tuple(spec.templates()))
    if spec.build is None:
        return generate_v1_v2(seed, days, generator)
    return spec.build(seed, days, volume)


def generate_v1_v2(seed: int, days: int, generator: str) -> World:
    """Generators 1 and 2 (2 adds varied poison wording, decoys, repeated mentions and
    near-miss questions); arguments checked by ``generate_world``."""
    v2 = generator != "1"
    rng = _rng(seed, days, generator)
    checkpoints = checkpoints_for(days)
    intervals = change_windows(checkpoints)
    order = [a.key for a in ATTRIBUTES]
    rng.shuffle(order)
    roles = {k: "control" for k in order[:N_CONTROLS]}
    roles |= {k: "reversion" for k in order[N_CONTROLS : N_CONTROLS + N_REVERSIONS]}
    roles |= {k: "change" for k in order[N_CONTROLS + N_REVERSIONS :]}
    timelines = {a.key: _timeline(rng, a, roles[a.key], intervals) for a in ATTRIBUTES}
    change_days = {k: {c.day for c in ch[1:]} for k, ch in timelines.items()}

    drafts = _intro_sessions(rng, timelines)
    for key, changes in timelines.items():
        for old, ch in zip(changes, changes[1:], strict=False):
            drafts.append(_change_session(rng, _SPECS[key], old.value, ch))
    drafts += _mention_sessions(rng, timelines, days, change_days)
    drafts += _noise_sessions(rng, days)
    poison, poison_drafts = _poison(rng, timelines, checkpoints, seed, varied=v2)
    drafts += poison_drafts
    decoys: list[Decoy] = []
    if v2:
        decoys, decoy_drafts = _decoys(rng, timelines, poison, checkpoints)
        drafts += decoy_drafts + _repeated_mentions(rng, timelines, days, change_days)
    for i, d in enumerate(drafts):
        d.order = i
    sessions = _finish_sessions(drafts, seed)
    poison, decoys = _with_documents(sessions, poison, decoys)
    probes = _probes(rng, checkpoints, v2)

    body = dict(
        seed=seed,
        days=days,
        generator_version=generator,
        epoch=EPOCH.isoformat().replace("+00:00", "Z"),
        attributes=[
            Attribute(
                key=a.key,
                label=a.label,
                question=a.question,
                pool=list(a.pool),
                changes=timelines[a.key],
            )
            for a in ATTRIBUTES
        ],
        controls=sorted(k for k, r in roles.items() if r == "control"),
        reversions=sorted(k for k, r in roles.items() if r == "reversion"),
        poison=sorted(poison, key=lambda p: (p.day, p.attribute)),
        decoys=decoys,
        sessions=sessions,
        checkpoints=checkpoints,
        probes=probes,
    )
    return fingerprinted(World(fingerprint="", **body))


def _with_documents(sessions: list[Session], poison: list[Poison],
                    decoys: list[Decoy]) -> tuple[list[Poison], list[Decoy]]:
    """The poison and decoys with the URI of the document that carries each (decoys sorted
    by day, then attribute)."""
    by_fact = {
        (f.attribute, f.channel): s.document_uri for s in sessions for f in s.facts if f.channel
    }
    poison = [
        p.model_copy(update={"document_uri": by_fact[(p.attribute, p.channel)]}) for p in poison
    ]
    by_decoy = {
        (f.attribute, f.decoy): s.document_uri for s in sessions for f in s.facts if f.decoy
    }
    decoys = sorted(
        (d.model_copy(update={"document_uri": by_decoy[(d.attribute, d.kind)]}) for d in decoys),
        key=lambda d: (d.day, d.attribute),
    )
    return poison, decoys


def _probes(rng: random.Random, checkpoints: list[int], v2: bool) -> list[Probe]:
    """Every checkpoint's questions: one per attribute, then unanswerable ones drawn from
    ``rng`` (generator 2: marked 'unrelated', and near misses too)."""
    probes = []
    for cp in checkpoints:
        probes += [Probe(day=cp, attribute=a.key, question=a.question) for a in ATTRIBUTES]
        for q in rng.sample(UNANSWERABLE_QUESTIONS, UNANSWERABLE_PER_CHECKPOINT):
            probes.append(Probe(day=cp, attribute=None, question=q,
                                unanswerable="unrelated" if v2 else None))
        if v2:
            for q in rng.sample(NEAR_MISS_QUESTIONS, NEAR_MISS_PER_CHECKPOINT):
                probes.append(Probe(day=cp, attribute=None, question=q, unanswerable="near_miss"))
    return probes


_SPECS: dict[str, AttributeSpec] = {a.key: a for a in ATTRIBUTES}
