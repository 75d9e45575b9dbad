"""Scripted (oracle) perception: read claims and judge pairs from the world's ground truth.

Both take a model client only to prove they never use it: by default a ``RefusingClient``,
whose ``refused`` count the harness reports (always 0 here).
"""

from __future__ import annotations

from rotbench.contract.engine import Document
from rotbench.contract.model_client import ModelClient, RefusingClient
from rotbench.contract.perception import (
    FORGET_ANY,
    Claim,
    ClaimDraft,
    Dependency,
    Judgement,
    Mood,
    QuestionFrame,
)
from rotbench.world.generators.registry import GENERATORS
from rotbench.world.models import Fact, World
from rotbench.world.pools import (
    ATTRIBUTES,
    NEAR_MISS_FRAMES,
    NEAR_MISS_QUESTIONS,
    UNANSWERABLE_QUESTIONS,
    UNRELATED_SLOTS,
)
from rotbench.world.pools_v4 import DEPENDENTS, PREMISE_QUESTIONS

SUBJECT = "the user"
ORACLE_CONFIDENCE = 0.9

PRESENT = "The user's {label} is {value}."
PAST = "The user's {label} was previously {value}."
RELAYED = "According to a web search result, the user's {label} is {value}."
DECOY_SENTENCES: dict[str, tuple[str, str]] = {
    "other_person": ("someone the user knows",
                     "Someone the user knows has {value} as their {label}."),
    "hypothetical": ("the user, hypothetically",
                     "The user might pick {value} as their {label} someday."),
    "negation": ("the user, negated", "The user would never pick {value} as their {label}."),
    "suggestion": ("the assistant's suggestion",
                   "The assistant suggested {value} as the user's {label}; the user declined."),
}
"""Decoy kind -> (subject, sentence). A decoy keeps its own subject and mood and no slot, so
it is never filed as, compared with, or allowed to retire one of the user's facts."""
DECOY_MOODS: dict[str, Mood] = {
    "other_person": "fact", "hypothetical": "hypothetical", "negation": "negated",
    "suggestion": "suggested",
}
"""Decoy kind -> the mood its claim carries (someone else's fact is still a fact)."""
TEMPLATES: tuple[str, ...] = (PRESENT, PAST, RELAYED, *(t for _, t in DECOY_SENTENCES.values()))
"""Every sentence template the oracle renders for generators 1 and 2 (``{label}``/``{value}``
are placeholders)."""
SCHEDULED = "The user's {label} is scheduled to become {value}."
RETRACTED = "The user no longer has a {label}; it was {value}."
TEMPORARY = "The user's {label} is temporarily {value}."
TEMPLATES_V3: tuple[str, ...] = (SCHEDULED, RETRACTED, TEMPORARY)
"""The sentences only generator 3's statements add: a scheduled change (said before it takes
effect), a retraction (the value ended with no successor) and a temporary state."""
CONDITIONAL = "The user's {label} will be {value} once their {root_label} changes."
"""Generator 4's one new sentence: a declared successor (the root's value is in the claim's
``depends_on``, not in the text). A stated or implied tie keeps ``PRESENT``."""
FORGET = "The user asked the assistant to forget their {label}."
"""Generator 5's one new sentence: a forget request. The claim's ``value`` is what a reader
of the request can know: the value when the request's text names it, else ``FORGET_ANY``
(every value of the slot stated before it; all of generator 5's requests today). The value
is never in the sentence (a store that keeps the request itself serves nothing forgotten).
A mention in passing keeps ``PRESENT``."""


def oracle_texts(generator_3: bool = False, generator_4: bool = False,
                 generator_5: bool = False) -> list[str]:
    """Every text the index stage can meet on a scripted arm, sorted: each sentence the
    oracle extractor can render (every template with every attribute's label and pool
    value) and every probe question either generator asks (703 texts with today's pools).

    A world's ``index_texts`` under ``OracleExtractor`` is always a subset, so embedding
    this list once before the worlds run leaves their index stages nothing to encode (and
    gives every text the same batch, hence the same vector, whichever seeds a run has).
    ``generator_3``: also the sentences of generator 3's statements (``TEMPLATES_V3``).
    ``generator_4``: also those (whatever ``generator_3`` says), generator 4's declared
    successors (``CONDITIONAL``) and premise questions (every wording, every pool value).
    ``generator_5``: also generator 5's forget requests (``FORGET``, every label).
    """
    texts = set(UNANSWERABLE_QUESTIONS) | set(NEAR_MISS_QUESTIONS)
    templates = TEMPLATES + (TEMPLATES_V3 if generator_3 or generator_4 else ())
    for attribute in ATTRIBUTES:
        texts.add(attribute.question)
        texts.update(template.format(label=attribute.label, value=value)
                     for template in templates for value in attribute.pool)
    if generator_4:
        texts.update(_texts_v4())
    if generator_5:
        texts.update(FORGET.format(label=a.label) for a in ATTRIBUTES)
    return sorted(texts)


def generator_texts(generator: str) -> list[str]:
    """``oracle_texts`` for worlds of ``generator``: the statement sets its ``GENERATORS``
    row names (``warm_texts``); an unknown version gets generator 1's."""
    spec = GENERATORS.find(generator)
    return oracle_texts(**dict.fromkeys(spec.warm_texts if spec else (), True))


def _texts_v4() -> set[str]:
    labels = {a.key: a.label for a in ATTRIBUTES}
    pools = {a.key: a.pool for a in ATTRIBUTES}
    texts: set[str] = set()
    for root, dependents in DEPENDENTS.items():
        for dep in dependents:
            texts.update(CONDITIONAL.format(label=labels[dep], value=v, root_label=labels[root])
                         for v in pools[dep])
    for key, wordings in PREMISE_QUESTIONS.items():
        texts.update(w.format(v=v) for w in wordings for v in pools[key])
    return texts


def oracle_names() -> list[str]:
    """Every subject and value a scripted claim can name, sorted: the user, each decoy's
    subject and every attribute's pool value (the entities an engine that files claims as a
    graph of named things, such as Graphiti, is told about)."""
    names = {SUBJECT} | {subject for subject, _ in DECOY_SENTENCES.values()}
    for attribute in ATTRIBUTES:
        names.update(attribute.pool)
    return sorted(names)


def _refused(client: ModelClient) -> int:
    return int(getattr(client, "refused", 0))


class OracleExtractor:
    """Claims scripted from each session's ``facts``.

    ``world``: the world whose sessions are the documents. ``client``: never called. A
    conversation's own present/past facts become the user's claims; a relayed fact becomes a
    claim attributed to its source; a tool-turn fact yields nothing; a web page's facts become
    the page's own claims (its lineage, the host, is set by the extract stage); a decoy
    (someone else's fact, a hypothetical, a negation, a declined suggestion) becomes a claim
    with its own subject and mood and no slot (``DECOY_SENTENCES``, ``DECOY_MOODS``). Generator
    3's statements carry what the text says: a temporary state is the user's claim in mood
    ``temporary`` with its end day; a scheduled change has ``valid_from`` (rendered as
    ``SCHEDULED``); a retraction is a past claim (``RETRACTED``); a correction names the value
    it corrects; a member of a set-valued slot is ``multi_valued``. Identical
    drafts within a document are kept once. ``extract`` raises KeyError for a document that
    is not in the world.

    Generator 4's statements carry their tie as the sentence tells it: a declared successor
    is a ``conditional`` claim (``CONDITIONAL``) whose ``depends_on`` names the root's value
    it replaces; a stated or implied tie is a fact with ``depends_on`` (the root value the
    sentence hangs it on: the flat in Lisbon, the office at Acme); a change dated relative
    to its written day ("last week") has ``valid_from`` resolved against that day.

    It also reads questions (``QuestionReader``): an attribute's question asks for the user's
    value of that slot; a near-miss question for another person's (``NEAR_MISS_FRAMES``); an
    unrelated one for a slot no world fills (``UNRELATED_SLOTS``); a premise question
    (generator 4) for the user's value of its slot, with ``premise`` the value it takes for
    granted. Any other question is read as None (no frame).
    """

    stamp = "oracle-extractor/2"
    in_process = True
    """Scripted, pure Python, no I/O: nothing to overlap, so ``extract_concurrently`` runs it
    on the caller's thread (threads would only queue for the interpreter lock)."""

    def __init__(self, world: World, client: ModelClient | None = None) -> None:
        self.client: ModelClient = client if client is not None else RefusingClient()
        self._labels = {a.key: a.label for a in world.attributes}
        self._multi = {a.key for a in world.attributes if a.multi_valued}
        self._facts = {s.document_uri: list(s.facts) for s in world.sessions}
        self._frames = {q: QuestionFrame(subject=who, slot=slot)
                        for q, (who, slot) in NEAR_MISS_FRAMES.items()}
        self._frames.update({q: QuestionFrame(subject=SUBJECT, slot=slot)
                             for q, slot in UNRELATED_SLOTS.items()})
        self._frames.update({a.question: QuestionFrame(subject=SUBJECT, slot=a.key)
                             for a in world.attributes})
        self._frames.update({p.question: QuestionFrame(subject=SUBJECT, slot=p.attribute,
                                                       premise=p.premise)
                             for p in world.probes if getattr(p, "premise", None)})

    @property
    def refused(self) -> int:
        """Model calls refused by the client (0 unless something tried to call a model)."""
        return _refused(self.client)

    def _draft(self, fact: Fact, web_page: bool, said: str = "") -> ClaimDraft | None:
        label = self._labels[fact.attribute]
        if fact.channel == "tool_turn":
            return None
        if fact.decoy == "temporary":  # the user's own state, but not the permanent value
            return ClaimDraft(
                subject=SUBJECT, slot=fact.attribute, value=fact.value, tense="present",
                attribution="own", sentence=TEMPORARY.format(label=label, value=fact.value),
                confidence=ORACLE_CONFIDENCE, mood="temporary", valid_until=fact.until_day)
        if fact.decoy is not None:
            subject, template = DECOY_SENTENCES[fact.decoy]
            return ClaimDraft(
                subject=subject,
                slot=None,
                value=fact.value,
                tense="present",
                attribution="own",
                sentence=template.format(label=label, value=fact.value),
                confidence=ORACLE_CONFIDENCE,
                mood=DECOY_MOODS[fact.decoy],
            )
        if fact.channel == "relay" and not web_page:
            template, attribution = RELAYED, "source"
        else:
            template = PAST if fact.tense == "past" else PRESENT
            attribution = "own"
        if fact.event == "scheduled":
            template = SCHEDULED
        elif fact.event == "retraction":
            template = RETRACTED
        elif fact.event == "forget":
            template = FORGET
        extra: dict = {}
        if fact.depends_on is not None:
            extra["depends_on"] = Dependency(slot=fact.depends_on.attribute,
                                             value=fact.depends_on.value)
            if fact.tie == "successor":
                extra["mood"] = "conditional"
                template = CONDITIONAL.replace(
                    "{root_label}", self._labels[fact.depends_on.attribute])
        if fact.event is not None:
            extra["event"] = fact.event
        if fact.effective_day is not None:
            extra["valid_from"] = fact.effective_day
        if fact.corrects is not None:
            extra["corrects"] = fact.corrects
        if fact.attribute in self._multi:
            extra["multi_valued"] = True
        value = fact.value
        if fact.event == "forget" and fact.value.casefold() not in said.casefold():
            value = FORGET_ANY  # the request's text names no value
        return ClaimDraft(
            **extra,
            subject=SUBJECT,
            slot=fact.attribute,
            value=value,
            tense=fact.tense,
            attribution=attribution,
            sentence=template.format(label=label, value=fact.value),
            confidence=ORACLE_CONFIDENCE,
        )

    def read_question(self, question: str) -> QuestionFrame | None:
        """The scripted frame of ``question`` (None for a question the world never asks)."""
        return self._frames.get(question)

    def extract(self, document: Document) -> list[ClaimDraft]:
        """The scripted drafts of ``document``, in turn order."""
        if document.uri not in self._facts:
            raise KeyError(f"document {document.uri!r} is not a session of this world")
        drafts: list[ClaimDraft] = []
        for fact in sorted(self._facts[document.uri], key=lambda f: f.turn):
            said = document.turns[fact.turn].text if fact.turn < len(document.turns) else ""
            draft = self._draft(fact, web_page=document.kind == "web_page", said=said)
            if draft is not None and draft not in drafts:
                drafts.append(draft)
        return drafts


class OracleChecker:
    """Judgements from the claims' own slot, value, tense and attribution.

    ``contradicts``: same slot, different value, both present tense, both the claimant's own.
    ``new_value_for_slot``: same slot, different value, and the newer is present and own.
    A claim without a slot contradicts nothing. ``client``: never called.
    """

    stamp = "oracle-checker/1"

    def __init__(self, client: ModelClient | None = None) -> None:
        self.client: ModelClient = client if client is not None else RefusingClient()

    @property
    def refused(self) -> int:
        """Model calls refused by the client (0 unless something tried to call a model)."""
        return _refused(self.client)

    @staticmethod
    def judge_pair(older: Claim, newer: Claim) -> Judgement:
        """The scripted judgement on one (older, newer) pair."""
        differ = (
            older.slot is not None
            and older.slot == newer.slot
            and older.value.strip().casefold() != newer.value.strip().casefold()
        )
        newer_current = newer.tense == "present" and newer.attribution == "own"
        older_current = older.tense == "present" and older.attribution == "own"
        return Judgement(
            contradicts=differ and newer_current and older_current,
            new_value_for_slot=differ and newer_current,
        )

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        """One judgement per (older, newer) pair, in order."""
        return [self.judge_pair(older, newer) for older, newer in pairs]
