"""Hand-built worlds and documents for the engine tests (imported as ``engine_helpers``)."""

from __future__ import annotations

from rotbench.contract.engine import Document
from rotbench.world.models import Attribute, Change, Fact, Session, Turn, World

POOLS: dict[str, tuple[str, list[str]]] = {
    "home_city": ("home city", ["Porto", "Tallinn", "Bergen", "Hobart", "Winnipeg"]),
    "car": ("car", ["Saab", "Skoda", "Mazda", "Dacia", "Lancia"]),
    "diet": ("diet", ["Vegan", "Keto", "Paleo", "Halal", "Kosher"]),
}


def fact(attribute: str, value: str, tense: str = "present", channel: str | None = None,
         decoy: str | None = None) -> Fact:
    return Fact(turn=0, attribute=attribute, value=value, tense=tense, channel=channel,
                decoy=decoy)


def session(day: int, facts: list[Fact], uri: str | None = None, kind: str = "mention") -> Session:
    """A one-turn session carrying ``facts``. Its text names the URI (two sessions are never
    one document delivered twice) and every fact's value, as a user's words would: engine
    0.6.1's ``reconcile.grounding`` reads a claim whose value the text never names as no
    statement of the user's."""
    uri = uri or f"session://test/day-{day:03d}/{len(facts)}-{facts[0].value if facts else 'x'}"
    role = "tool" if kind == "web_page" else "user"
    return Session(
        day=day,
        position=0,
        timestamp=f"2026-01-01T09:00:00Z+{day}d",
        kind=kind,
        document_uri=uri,
        turns=[Turn(role=role, text=f"(text of {uri}: {', '.join(f.value for f in facts)})")],
        facts=facts,
    )


def page(day: int, host: str, facts: list[Fact]) -> Session:
    """A web page on ``host`` asserting ``facts`` (channel 'source')."""
    facts = [f.model_copy(update={"channel": "source"}) for f in facts]
    return session(day, facts, uri=f"https://{host}/profiles/{day}", kind="web_page")


def make_world(sessions: list[Session]) -> World:
    """A minimal world over ``POOLS`` holding ``sessions`` (ground truth fields are dummies)."""
    attributes = [
        Attribute(
            key=key,
            label=label,
            question=f"What is the user's {label}?",
            pool=pool,
            changes=[Change(day=1, value=pool[0], phrasing="initial")],
        )
        for key, (label, pool) in POOLS.items()
    ]
    return World(
        seed=0,
        days=90,
        generator_version="test",
        fingerprint="test",
        epoch="2026-01-01T00:00:00Z",
        attributes=attributes,
        controls=[],
        reversions=[],
        poison=[],
        sessions=sorted(sessions, key=lambda s: s.day),
        checkpoints=[90],
        probes=[],
    )


def documents(world: World, contributors: list[str] | None = None) -> list[Document]:
    """The world's sessions as documents; ``contributors`` cycles over them if given."""
    docs = []
    for i, s in enumerate(world.sessions):
        who = contributors[i % len(contributors)] if contributors else "user"
        docs.append(Document.from_session(s, contributor=who))
    return docs


def stale_spans(world: World, ledger) -> list[tuple[str, str, str, int, int]]:
    """Where the ledger keeps a superseded value active as a present conversation claim.

    Checks every day and attribute: the active, present-tense, own conversation claims for the
    slot must carry exactly the current value. Returns ``(attribute, stale value, current
    value, first day, last day)`` spans, in order.
    """
    spans: dict[tuple[str, str, str], list[int]] = {}
    for day in range(1, world.days + 1):
        active = [
            c
            for c in ledger.claims_at(day, "active")
            if c.lineage == "conversation" and c.tense == "present" and c.attribution == "own"
        ]
        for attr in world.attributes:
            values = {c.value for c in active if c.slot == attr.key}
            if not values:
                continue
            current = world.truth(attr.key, day).current
            assert current in values, (attr.key, day, current, values)
            for stale in sorted(values - {current}):
                spans.setdefault((attr.key, stale, current), []).append(day)
    return [(a, s, c, days[0], days[-1]) for (a, s, c), days in spans.items()]
