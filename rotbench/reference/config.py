"""Configuration of the reference engine: every threshold named, overridable and recorded.

Sections split by what they affect, so the pipeline can key its caches on the right part:

- ``reconcile`` and ``store`` change what ``deposit`` decides (``DEPOSIT_SECTIONS``);
- ``query`` and ``trust`` change only how a ledger is ranked (``QUERY_SECTIONS``).

Overrides are ``section.key=value`` strings (``EngineConfig().with_overrides([...])``). Every
failure is a ``ConfigError`` with a one-line message naming the key.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEPOSIT_SECTIONS: tuple[str, ...] = ("reconcile", "store")
"""Sections whose values change the ledger ``deposit`` builds."""

QUERY_SECTIONS: tuple[str, ...] = ("query", "trust")
"""Sections whose values change only the ranking of an existing ledger."""

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ConfigError(ValueError):
    """An override or section name the configuration refuses; the message is one line."""


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReconcileConfig(_Section):
    """Candidate search on deposit (which pairs reach the checker)."""

    same_document: bool = Field(
        default=True, description="Compare a new claim with earlier claims of its own document."
    )
    same_document_floor: float = Field(
        default=0.80, ge=0.0, le=1.0, description="Cosine floor for same-document candidates."
    )
    cross_document: bool = Field(
        default=True,
        description="Compare a new claim with active same-subject claims of other documents.",
    )
    update_floor: float = Field(
        default=0.45, ge=0.0, le=1.0, description="Cosine floor for cross-document candidates."
    )
    slot_search: bool = Field(
        default=True,
        description="A claim that gives a slot a value meets every active claim of the same "
        "subject and slot, whatever its wording (no cosine floor); hypothetical, negated and "
        "suggested claims meet none. Off: the two cosine searches alone.",
    )
    same_slot_only: bool = Field(
        default=True,
        description="A retirement or review only ever pairs two facts of the same subject and "
        "slot, whatever the checker says (no collateral). Off: the checker's word alone.",
    )
    event_time: bool = Field(
        default=True,
        description="Engine 0.4.0: supersession compares the claims' event days (the day "
        "each was written, a scheduled change's effective day), never their order of "
        "arrival; a late statement older than the slot's value is filed retired on arrival. "
        "Off: the claim delivered later wins (0.3.0).",
    )
    corrections: bool = Field(
        default=True,
        description="Engine 0.4.0: a correction retires every claim of the value it corrects "
        "as never held (no history either), without a check. Off: a correction is an "
        "ordinary update (0.3.0).",
    )
    retractions: bool = Field(
        default=True,
        description="Engine 0.4.0: a retraction ends the slot's present values with no "
        "successor, without a check. Off: it is plain history (0.3.0).",
    )
    scheduled: bool = Field(
        default=True,
        description="Engine 0.4.0: a scheduled change takes effect on its effective day: "
        "the old value retires then, and before it the new one never ranks as current. "
        "Off: it takes effect the day it is said (0.3.0).",
    )
    sets: bool = Field(
        default=True,
        description="Engine 0.4.0: in a multi-valued slot adding a member retires none "
        "(no check) and dropping one retires only that member. Off: every slot holds one "
        "value (0.3.0).",
    )
    relative_dates: bool = Field(
        default=True,
        description="Engine 0.5.0: a claim whose perceived effective day (``valid_from``, "
        "resolved from a relative date against the written day) is before its written day "
        "takes effect on that earlier day. Off: it takes effect on its written day "
        "(0.4.0).",
    )
    dependencies: bool = Field(
        default=True,
        description="Engine 0.5.0: a present fact tied to another slot's value "
        "(``depends_on``) ends, unknown since that day, when the root value is superseded; "
        "it stays as history and is never served as current again. Off: the tie is "
        "ignored (0.4.0).",
    )
    successors: bool = Field(
        default=True,
        description="Engine 0.5.0: a declared successor (mood ``conditional``) takes effect "
        "on the day its root leaves the value it names: it retires the slot's older values "
        "and fills the slot from then on. Off: it never fills the slot (0.4.0).",
    )
    cascade: bool = Field(
        default=True,
        description="Engine 0.5.0: retracting or correcting a root value ends every claim "
        "tied to it, and every claim tied to those, as far down as the ties go, each "
        "ending recorded with the claim that caused it. Off: only the root ends (0.4.0).",
    )
    corroboration: bool = Field(
        default=True,
        description="Engine 0.6.0: a slot's current value is decided by the evidence for "
        "each value (how often and how recently the user stated it, through which channel, "
        "whether a change was said as one), so one stray statement does not displace a "
        "value later mentions keep confirming. Off: the latest statement wins (0.5.0).",
    )
    confirmation: bool = Field(
        default=True,
        description="Engine 0.6.0 (with ``corroboration``): a value the user said once, "
        "as a plain fact with no change named (no event, no effective day, no declared "
        "successor), after a value said four times or more, is current at once but yields "
        "to that value again when it is not said a second time within the wait (14 days, "
        "or three of that value's mean gaps between statements if longer). Off: the "
        "value said last stays current (0.6.0 before it).",
    )
    grounding: bool = Field(
        default=True,
        description="Engine 0.6.1 (with ``corroboration``): a claim whose value no user "
        "turn of its document names (a misread value, a value only the assistant, a tool or "
        "a web page gave) is no statement of the user's: it neither decides nor confirms "
        "a slot's value. Off: every claim filed as the user's counts (0.6.0).",
    )
    passing: bool = Field(
        default=True,
        description="Engine 0.6.1 (with ``corroboration``): a value the user's words "
        "doubt (every sentence naming it hedges, denies, holds it for a few days or gives "
        "it to someone else) and that is not said as a change (no event, tie or effective "
        "day; no 'now', 'my <slot>', 'new <slot>' or other value of the slot beside it) "
        "does not displace a confirmed value (one said in words that do not doubt it, or "
        "said twice in a row) until it is said a second time. Off: one statement "
        "displaces (0.6.0).",
    )
    rereading: bool = Field(
        default=True,
        description="Engine 0.6.2 (with ``corroboration``): a conversation's claims of "
        "change read again against the user's words: a forget request whose value no user "
        "turn names names no value ('*'); a member drop whose value no user turn names, or "
        "a value told as past with no present value beside it, when the words name exactly "
        "one other value the store holds for the slot, is the drop of that member, the "
        "change to that value (``rotbench.reference.reread``). Off: as perceived (0.6.1).",
    )
    change_sides: bool = Field(
        default=True,
        description="Engine 0.6.4 (with ``rereading``): a value told both present and past "
        "in one conversation, whose words tell exactly one other value the store holds as "
        "the side the change left ('it was Saab and it's Skoda now' read as Skoda twice), "
        "is the present side: its past claims are read as that other value "
        "(``rotbench.reference.reread.PAST_SIDE``). Off: its present claims are read as "
        "the other value (0.6.3).",
    )
    restatements: bool = Field(
        default=True,
        description="Engine 0.6.4 (with ``rereading``): a present claim with no event or "
        "effective day whose value no user turn names, the only claim of its single-valued "
        "slot in the document, is read as the one value the store holds for the slot that "
        "the words name and do not tell as left: a misread restatement, which would "
        "otherwise supersede the standing value and lapse what is tied to it. Off: as "
        "perceived (0.6.3).",
    )
    lost_changes: bool = Field(
        default=True,
        description="Engine 0.6.4 (with ``rereading``): a conversation with no claim of a "
        "single-valued slot whose words, in one sentence that does not hedge, tell one value "
        "the store holds for the slot as left and name exactly one other ('Switched my "
        "phone from Pixel to Nokia' read as nothing) adds one present claim of that other "
        "value. Off: a change perception lost whole stays lost (0.6.3).",
    )
    retired_lapses: bool = Field(
        default=True,
        description="Engine 0.6.4 (with ``dependencies`` or ``cascade``): when a tie's root "
        "value leaves, a tied claim already retired by an update still gets the lapse or "
        "cascade the root's end implies (an ``Ending`` filed after its retirement), because "
        "the evidence may set that update aside and a reinstatement may undo it; a "
        "reinstated claim whose root left meanwhile ends again at once. Off: a retired "
        "claim misses its tie's later end (0.6.3).",
    )
    unfiled_roots: bool = Field(
        default=True,
        description="Engine 0.6.2 (with ``cascade``): a correction of a value the store "
        "holds no claim of still ends, as never held, the claims tied to that value "
        "(``depends_on``), and undoes what they superseded. Off: a tie is acted on only "
        "when a filed claim of its root value ends (0.6.1).",
    )
    dreams: bool = Field(
        default=True,
        description="Engine 0.6.3 (with ``passing``): a sentence that daydreams of a value "
        "or leaves the choice open ('daydreaming about', 'imagine', 'undecided', 'nothing "
        "is decided') doubts it, as a hedge does (``rotbench.reference.wording.DREAM``). "
        "Off: 0.6.2's words only.",
    )
    root_evidence: bool = Field(
        default=True,
        description="Engine 0.6.3 (with ``corroboration``): a claim that lapsed because the "
        "root value it was tied to was superseded by a claim the user's words doubt still "
        "counts as a statement while the evidence for the root slot names that root value "
        "current, said twice or more and not told as past since: the update that started "
        "the lapse is decided again by the evidence, as the update itself is. Off: a lapse "
        "always stands (0.6.2).",
    )
    grounded_ties: bool = Field(
        default=True,
        description="Engine 0.6.3 (with ``grounding``): an untied claim that ended only "
        "because a tied claim of its value ended (said before it, the tie covered it) "
        "still counts as a statement when no such tied claim is a statement of the "
        "user's (no user turn names its value); and such a claim's own end does not "
        "empty the slot. Off: the tie covers earlier statements whatever carried it "
        "(0.6.2).",
    )
    undated_plans: bool = Field(
        default=True,
        description="Engine 0.6.3 (with ``corroboration``): a scheduled change read with "
        "no effective day (``event='scheduled'``, no ``valid_from``) is a plan whose day "
        "is unknown, no statement of the slot's current value; a dated statement of the "
        "change, or a later mention of the value, makes it current. Off: it is current "
        "from the day it was said (0.6.2).",
    )
    recent_members: bool = Field(
        default=True,
        description="Engine 0.6.3 (with ``corroboration``): a set's standing members stated "
        "equally often rank by their last statement, the most recent first, as a single "
        "slot's value stated last is current. Off: by their similarity to the question "
        "(0.6.2).",
    )
    forget: bool = Field(
        default=True,
        description="Engine 0.6.0: after a forget request the value (for a request of "
        "value '*', every value of the slot said before it) is served in no "
        "framing, history included, until the user states it again. Off: a forget "
        "request is plain history (0.5.0).",
    )
    redelivery: bool = Field(
        default=True,
        description="Engine 0.6.0: a document whose content (kind, timestamp and text) "
        "was delivered before adds no claim: it is counted, not filed. Off: filed like "
        "any document (0.5.0).",
    )


class StoreConfig(_Section):
    """How the store files claims."""

    multi_contributor: bool = Field(
        default=False,
        description="Record each document's contributor on its claims (else the single owner).",
    )


class QueryConfig(_Section):
    """Ranking: score = (similarity_weight * cos + confidence_weight * confidence) * trust."""

    relevance_floor: float = Field(
        default=0.25, ge=0.0, le=1.0, description="Claims whose raw cosine is below are refused."
    )
    similarity_weight: float = Field(default=0.6, ge=0.0, le=1.0)
    confidence_weight: float = Field(default=0.4, ge=0.0, le=1.0)
    present_first: bool = Field(
        default=True,
        description="For a question about the present, the subject's present-tense facts of "
        "the slot asked about rank first, above its history, quoted sources and anything else.",
    )
    abstain_unknown: bool = Field(
        default=True,
        description="Answer nothing when the store holds no fact of the subject and slot the "
        "question asks about (instead of whatever passes the relevance floor).",
    )
    temporary_after: bool = Field(
        default=True,
        description="Engine 0.4.0: a temporary state of the slot asked about ranks right "
        "after the slot's permanent value, and only up to its end day. Off: ranked by "
        "score like any other claim, at any day (0.3.0).",
    )
    premise_guard: bool = Field(
        default=True,
        description="Engine 0.5.0: a present-tense question about a slot whose value the "
        "ledger has ended with no successor (a tie lapsed, a cascade, a retraction) gets the "
        "slot's own history or nothing, never another claim lifted by its similarity to "
        "the question (a value the question takes for granted). Off: whatever passes the "
        "relevance floor (0.4.0).",
    )
    each_member: bool = Field(
        default=True,
        description="Engine 0.6.0: for a present-tense question about a set, each standing "
        "member's first claim ranks before any member's second, so one member's repeated "
        "mentions never crowd another member out of the top k. Off: the members' claims "
        "rank by support and score alone (0.5.0).",
    )


class TrustConfig(_Section):
    """Per-domain source trust, applied at query time only (the ledger keeps what was said)."""

    policy: bool = Field(default=True, description="Demote claims from untrusted web domains.")
    untrusted_domain_trust: float = Field(
        default=0.2, ge=0.0, le=1.0, description="Trust factor of a non-conversation lineage."
    )


class EngineConfig(BaseModel):
    """The whole engine configuration; immutable. Defaults are the compiled defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reconcile: ReconcileConfig = Field(default_factory=ReconcileConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    query: QueryConfig = Field(default_factory=QueryConfig)
    trust: TrustConfig = Field(default_factory=TrustConfig)

    # ---- views ---------------------------------------------------------------------------

    def flat(self) -> dict[str, bool | float]:
        """Every setting as ``{'section.key': value}``, sorted by key (recorded in reports)."""
        out: dict[str, bool | float] = {}
        for section in type(self).model_fields:
            for key, value in getattr(self, section).model_dump().items():
                out[f"{section}.{key}"] = value
        return dict(sorted(out.items()))

    def stamp(self, section_names: Iterable[str]) -> str:
        """A 12-hex-digit content hash of the named sections (order-insensitive).

        Raises ConfigError for an unknown section name.
        """
        names = sorted(set(section_names))
        known = list(type(self).model_fields)
        for name in names:
            if name not in known:
                raise ConfigError(f"unknown config section {name!r} (known: {', '.join(known)})")
        payload = {name: getattr(self, name).model_dump() for name in names}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    # ---- overrides -----------------------------------------------------------------------

    def with_overrides(self, overrides: Iterable[str]) -> EngineConfig:
        """A copy with ``section.key=value`` overrides applied, validated.

        Bools accept true/false/1/0/yes/no/on/off; numbers must parse as floats; floors,
        weights and trust factors must lie in [0, 1]. Raises ConfigError (one line, naming the
        key) for a malformed override, an unknown key, a key set twice to different values
        (``--no-trust-policy`` with ``--set trust.policy=true``), an unparsable or
        out-of-range value.
        """
        data = self.model_dump()
        known = list(self.flat())
        given: dict[str, object] = {}
        for item in overrides:
            if "=" not in item:
                raise ConfigError(f"bad override {item!r}: expected 'section.key=value'")
            key, raw = (part.strip() for part in item.split("=", 1))
            if key not in known:
                raise ConfigError(_unknown_key_message(key, known))
            section, name = key.split(".", 1)
            value = _parse(key, raw, type(data[section][name]))
            if key in given and given[key] != value:  # which was meant is the user's to say
                raise ConfigError(f"{key!r} is set twice, to {given[key]!r} and {value!r}; "
                                  "give it once")
            given[key] = data[section][name] = value
        try:
            return EngineConfig.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"])
            msg = f"bad value for {key!r}: {err['input']!r} is outside [0, 1]"
            raise ConfigError(msg) from None


def _parse(key: str, raw: str, kind: type) -> bool | float:
    if kind is bool:
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ConfigError(f"bad value for {key!r}: {raw!r} is not a boolean (true/false)")
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"bad value for {key!r}: {raw!r} is not a number") from None
    if value != value:  # NaN
        raise ConfigError(f"bad value for {key!r}: {raw!r} is not a number")
    return value


def _unknown_key_message(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
    if not close:  # try the last part alone: 'floor' -> 'query.relevance_floor'
        tails = {k.split(".", 1)[1]: k for k in known}
        tail = key.split(".")[-1]
        hit = difflib.get_close_matches(tail, list(tails), n=1, cutoff=0.5)
        close = [tails[hit[0]]] if hit else []
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown config key {key!r} ({hint}known: {', '.join(known)})"
