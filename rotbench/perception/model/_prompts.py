"""Versioned prompts and the validated shapes of the answers they ask for.

A prompt version names the exact text of the system prompt and of the user-turn template. It
enters every cache key and every perception stamp, so editing a prompt's text without giving it
a new version is a bug: add a new version instead. The texts are data: one TOML file a version
in ``prompts/`` beside this module (``prompt_data``), where a later version names its ``base``
and holds only the blocks and layouts it changes; ``tests/perception/model/
test_prompt_digests.py`` pins every rendered text by digest.

Answers are JSON objects validated by pydantic (``ExtractionAnswer``, ``QuestionAnswer``,
``YesNoAnswer``).
``parse_answer`` accepts the object bare, in a code fence, or surrounded by prose, and raises
``InvalidAnswer`` (one line, safe to record) on anything else.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from importlib.resources import files
from typing import ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from rotbench._util.validation import first_error
from rotbench.contract.engine import Document
from rotbench.contract.perception import Claim, ClaimDraft, ClaimEvent, QuestionFrame
from rotbench.world.generators.registry import GENERATORS

CheckKind = Literal["contradiction", "slot"]
CHECK_KINDS: tuple[CheckKind, ...] = ("contradiction", "slot")

DOC_OPEN, DOC_CLOSE = "<document>", "</document>"
QUESTION_OPEN, QUESTION_CLOSE = "<question>", "</question>"
OLDER_OPEN, OLDER_CLOSE = "<older>", "</older>"
NEWER_OPEN, NEWER_CLOSE = "<newer>", "</newer>"
RETRY_MARKER = "Your previous answer could not be used:"


class InvalidAnswer(ValueError):
    """The model's text is not the JSON object the prompt asked for (message: one line)."""


# ---- answer shapes --------------------------------------------------------------------------

_MOOD_SPELLINGS = {"": "fact", "negation": "negated", "negative": "negated",
                   "suggestion": "suggested", "hypothesis": "hypothetical", "plan": "hypothetical"}


def _lowered(v: object) -> object:
    """A model's spelling of a closed word (tense, attribution) as the answer shape spells
    it: stripped and lower-cased; anything but text is left for the shape's own check."""
    return v.strip().lower() if isinstance(v, str) else v


class ClaimAnswer(BaseModel):
    """One claim as the extraction prompt asks for it. ``MOOD_SPELLINGS``: other spellings
    of a mood a model may answer, mapped to the shape's own (a later version adds to them)."""

    model_config = ConfigDict(extra="ignore")
    MOOD_SPELLINGS: ClassVar[Mapping[str, str]] = _MOOD_SPELLINGS

    subject: str = Field(min_length=1)
    slot: str | None = None
    value: str = Field(min_length=1)
    tense: Literal["present", "past"]
    attribution: Literal["own", "source"] = "own"
    sentence: str = Field(min_length=1)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    mood: Literal["fact", "hypothetical", "negated", "suggested"] = "fact"

    _lower = field_validator("tense", "attribution", mode="before")(_lowered)

    @field_validator("mood", mode="before")
    @classmethod
    def _mood(cls, v: object) -> object:
        return _read_mood(v, cls.MOOD_SPELLINGS)

    @field_validator("slot", mode="before")
    @classmethod
    def _empty_slot(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() in ("", "null", "none", "unknown"):
            return None
        return v


def _read_mood(v: object, spellings: Mapping[str, str]) -> object:
    """A model's mood as the answer shape spells it: None is "fact", case and spacing are
    ignored, and a known other spelling (``spellings``) is mapped; anything else is left
    for the shape's own check to refuse."""
    if v is None:
        return "fact"
    if isinstance(v, str):
        low = v.strip().lower()
        return spellings.get(low, low)
    return v


class QuestionAnswer(BaseModel):
    """A question reading: ``{"subject": ..., "slot": ... | null, "tense": ...}``."""

    model_config = ConfigDict(extra="ignore")

    subject: str = Field(min_length=1)
    slot: str | None = None
    tense: Literal["present", "past"] = "present"

    _lower = field_validator("tense", mode="before")(_lowered)

    @field_validator("slot", mode="before")
    @classmethod
    def _slot(cls, v: object) -> object:
        if isinstance(v, str):
            low = v.strip().lower()
            return None if low in ("", "null", "none", "unknown") else low
        return v


class ExtractionAnswer(BaseModel):
    """The whole extraction answer: ``{"claims": [...]}`` (an empty list is valid)."""

    model_config = ConfigDict(extra="ignore")

    claims: list[ClaimAnswer]


_NULLS = ("", "null", "none", "n/a", "unknown")


def _is_null(v: object) -> bool:
    """True for None and for a null spelling of an optional answer (``_NULLS``), case and
    spacing ignored."""
    return v is None or isinstance(v, str) and v.strip().lower() in _NULLS


def _text_or_null(v: object, error: str) -> str | None:
    """A model's optional text answer: None for a null spelling (``_is_null``), else the text
    stripped. Raises ValueError(``error``) when ``v`` is not text."""
    if _is_null(v):
        return None
    if not isinstance(v, str):
        raise ValueError(error)
    return v.strip()


EVENTS: tuple[str, ...] = ("correction", "retraction", "scheduled", "member_add", "member_drop")
"""The events an ``extract-v3`` claim may carry (``rotbench.contract.perception.ClaimEvent``)."""


def _as_date(v: object, field: str) -> date | None:
    """A ``YYYY-MM-DD`` string (or a full ISO instant) as a date; None for a null spelling.
    Raises ValueError naming ``field`` for anything else."""
    if _is_null(v):
        return None
    if isinstance(v, str):
        text = v.strip()
        try:
            return date.fromisoformat(text)
        except ValueError:
            try:
                return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
            except ValueError:
                pass
    raise ValueError(f"{field} must be a date as YYYY-MM-DD or null, got {str(v)[:40]!r}")


class ClaimAnswerV3(ClaimAnswer):
    """One claim as ``extract-v3`` asks for it: v2's fields plus what a claim does (``event``),
    the dates it holds between (``valid_from``, ``valid_until``: calendar dates, turned into
    days by ``ExtractPrompt.drafts``), the value a correction corrects, and whether the slot
    holds a set.

    Besides each field's own check, the fields must agree (one-line ValueError otherwise):
    ``valid_until`` not before ``valid_from``, and only on a temporary state; a scheduled
    change has a ``valid_from`` after the document's date (validation context ``written``);
    a correction names the different value it corrects, and only a correction names one; a
    retraction or a dropped member is in the past tense, an added member or a scheduled
    change in the present; a member event is on a set (``multi_valued`` true, the default
    for one); an event is only for a plain fact.
    """

    MOOD_SPELLINGS: ClassVar[Mapping[str, str]] = {
        **_MOOD_SPELLINGS, "temporarily": "temporary", "temporal": "temporary",
        "temp": "temporary"}
    EVENTS: ClassVar[tuple[str, ...]] = EVENTS
    """The events this shape admits (a later version adds to them)."""

    mood: Literal["fact", "hypothetical", "negated", "suggested", "temporary"] = "fact"
    event: ClaimEvent | None = None
    valid_from: date | None = None
    valid_until: date | None = None
    corrects: str | None = None
    multi_valued: bool | None = None

    @field_validator("event", mode="before")
    @classmethod
    def _event(cls, v: object) -> object:
        if v is None:
            return None
        known = ", ".join(cls.EVENTS)
        if not isinstance(v, str):
            raise ValueError(f"event must be one of {known} or null, got {v!r}")
        low = v.strip().lower().replace("-", "_").replace(" ", "_")
        if low in _NULLS:
            return None
        if low not in cls.EVENTS:
            raise ValueError(f"unknown event {v.strip()[:40]!r}; known: {known} or null")
        return low

    @field_validator("valid_from", "valid_until", mode="before")
    @classmethod
    def _date(cls, v: object, info: ValidationInfo) -> object:
        return _as_date(v, info.field_name or "date")

    @field_validator("corrects", mode="before")
    @classmethod
    def _corrects(cls, v: object) -> object:
        return _text_or_null(v, f"corrects must be the corrected value as text or null, got "
                                f"{v!r}")

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> ClaimAnswerV3:
        written = (info.context or {}).get("written")
        e, vf, vu = self.event, self.valid_from, self.valid_until
        if vf is not None and vu is not None and vu < vf:
            raise ValueError(f"valid_until {vu} is before valid_from {vf}")
        if vu is not None and self.mood != "temporary":
            raise ValueError(f"valid_until is only for a temporary state (mood 'temporary'), "
                             f"not mood {self.mood!r}")
        if isinstance(written, date) and vu is not None and vu < written:
            raise ValueError(f"valid_until {vu} is before the document's date {written}")
        if e is not None and self.mood != "fact":
            raise ValueError(f"event {e!r} is only for a plain fact, not mood {self.mood!r}")
        if e == "scheduled":
            if vf is None:
                raise ValueError("a scheduled change needs valid_from, the day it takes effect")
            if isinstance(written, date) and vf <= written:
                raise ValueError(f"a scheduled change takes effect after the document's date "
                                 f"{written}, got valid_from {vf}")
        if e == "correction":
            if self.corrects is None:
                raise ValueError("a correction needs corrects, the value stated wrongly")
            if self.corrects.casefold() == self.value.strip().casefold():
                raise ValueError(f"corrects {self.corrects!r} is the claim's own value")
        elif self.corrects is not None:
            has = "no event" if e is None else f"event {e!r}"
            raise ValueError(f"corrects is only for event 'correction'; the claim has {has}")
        want = {"retraction": "past", "member_drop": "past", "member_add": "present",
                "scheduled": "present", "correction": "present", "forget": "past"}.get(e or "")
        if want is not None and self.tense != want:
            raise ValueError(f"event {e!r} is told in the {want} tense, not {self.tense!r}")
        if e in ("member_add", "member_drop"):
            if self.multi_valued is False:
                raise ValueError(f"event {e!r} is only for a set-valued slot "
                                 "(multi_valued true)")
            self.multi_valued = True
        return self




class ExtractionAnswerV3(BaseModel):
    """The ``extract-v3`` answer: ``{"claims": [...]}`` of ``ClaimAnswerV3``."""

    model_config = ConfigDict(extra="ignore")

    claims: list[ClaimAnswerV3]


class YesNoAnswer(BaseModel):
    """A check answer: ``{"answer": "yes" | "no"}``."""

    model_config = ConfigDict(extra="ignore")

    answer: Literal["yes", "no"]

    @field_validator("answer", mode="before")
    @classmethod
    def _lower(cls, v: object) -> object:
        if isinstance(v, bool):
            return "yes" if v else "no"
        return v.strip().lower() if isinstance(v, str) else v


A = TypeVar("A", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_answer(text: str, shape: type[A], context: Mapping[str, object] | None = None) -> A:
    """The JSON object in ``text`` validated as ``shape``. Raises InvalidAnswer (one line).

    ``context``: what a shape's validators may check the answer against (for ``extract-v3``,
    ``{"written": date}``: the document's date); None for none."""
    body = text.strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise InvalidAnswer("no JSON object in the answer")
    try:
        data = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(f"malformed JSON: {exc.msg} at char {exc.pos}") from None
    try:
        return shape.model_validate(data, context=dict(context) if context else None)
    except ValidationError as exc:
        where, msg = first_error(exc, "answer")
        raise InvalidAnswer(
            f"{exc.error_count()} validation error(s); first at {where}: {msg}"
        ) from None


# ---- extraction -----------------------------------------------------------------------------

PROMPTS_PACKAGE = "rotbench.perception.model"
"""The package whose ``prompts/`` folder holds the prompt texts, one TOML file a version."""


@functools.cache
def _prompt_file(version: str) -> dict:
    """``prompts/<version>.toml`` as parsed, read once (callers copy before changing it)."""
    text = files(PROMPTS_PACKAGE).joinpath("prompts", f"{version}.toml").read_text("utf-8")
    return tomllib.loads(text)


def prompt_data(version: str) -> dict:
    """The data of prompt ``version`` from ``prompts/<version>.toml`` in the package: its
    ``blocks`` (name -> text) and the lists that lay them out (``system``,
    ``question_system``, ``systems``), plus flags (``dated``). A file that names a ``base``
    version holds only what it changes: its keys replace the base's, and its blocks are
    added to the base's or replace those of the same name.

    Raises FileNotFoundError for a version with no file, tomllib.TOMLDecodeError for a
    damaged one (both are bugs in the package, not in a user's input)."""
    data = dict(_prompt_file(version))
    base = data.pop("base", None)
    if base is None:
        return data
    merged = prompt_data(base)
    merged.update({key: value for key, value in data.items() if key != "blocks"})
    merged["blocks"] = {**merged["blocks"], **data.get("blocks", {})}
    return merged


def compose(data: Mapping[str, object], layout: Sequence[str]) -> str:
    """The text ``layout`` lays out from ``data``'s blocks: one block a line, in order, where
    an empty name stands for a blank line."""
    blocks = data["blocks"]
    assert isinstance(blocks, Mapping)
    return "\n".join(blocks[name] if name else "" for name in layout)


def written_date(document: Document) -> date:
    """The calendar date (UTC) a document was written: the date of its ``timestamp``."""
    return datetime.fromisoformat(document.timestamp.replace("Z", "+00:00")).date()


def date_of_day(day: int, document: Document) -> date:
    """The calendar date of world day ``day``, counted from ``document``'s own day and date."""
    return written_date(document) + timedelta(days=day - document.day)


def day_of_date(when: date, document: Document) -> int:
    """The world day (days since the epoch) of calendar date ``when``, counted from
    ``document``'s own day and date."""
    return document.day + (when - written_date(document)).days


V3_FIELDS = ("event", "valid_from", "valid_until", "corrects", "multi_valued")
"""The claim fields ``extract-v3`` adds to v2's answer."""


@dataclass(frozen=True)
class ExtractPrompt:
    """One version of the extraction prompt (and, from v2, of the question reading).

    ``dated``: the user turn carries the document's written date and the answer's dates are
    read against it (``extract-v3``); the answer then has the shape ``ExtractionAnswerV3``,
    else ``ExtractionAnswer``.
    """

    version: str
    system: str
    question_system: str | None = None
    """System prompt that reads a question into subject, slot and tense (None: v1 reads no
    questions)."""
    dated: bool = False

    @property
    def answer_shape(self) -> type[ExtractionAnswer] | type[ExtractionAnswerV3]:
        """The pydantic model an extraction answer of this version is validated as."""
        return ExtractionAnswerV3 if self.dated else ExtractionAnswer

    @property
    def question_shape(self) -> type[QuestionAnswer]:
        """The pydantic model a question reading of this version is validated as."""
        return QuestionAnswer

    def frame(self, answer: QuestionAnswer) -> QuestionFrame:
        """The question frame of a validated reading."""
        return QuestionFrame(subject=answer.subject.strip(), slot=answer.slot,
                             tense=answer.tense)

    def answer_context(self, document: Document) -> dict[str, object] | None:
        """The validation context of ``document``'s answer: ``{"written": date}`` for a dated
        version (a scheduled change must fall after it), else None."""
        return {"written": written_date(document)} if self.dated else None

    def render_question(self, question: str, slots: Mapping[str, str]) -> str:
        """The user turn that asks what ``question`` is about; ``slots``: key -> label."""
        slot_lines = "\n".join(f"- {key}: {label}" for key, label in slots.items()) or "(none)"
        return (f"Slots (key: meaning):\n{slot_lines}\n\n"
                f"{QUESTION_OPEN}\n{question}\n{QUESTION_CLOSE}")

    def render(self, document: Document, slots: Mapping[str, str]) -> str:
        """The user turn for ``document``; ``slots`` maps slot key -> human label.

        Only the text, the kind, (for a web page) the URI and (for a dated version, when
        the text names a time: ``names_a_time``) the written date enter the prompt, so
        identical conversations share one call and one cache entry, within and across
        worlds. A text that names no time gains nothing from its date (no day in its
        answer can depend on it), and leaving the date out keeps the chit-chat repeated
        on many days to one call: on generator 3, seeds 42-44, 226 extraction prompts
        instead of 274.
        """
        slot_lines = "\n".join(f"- {key}: {label}" for key, label in slots.items()) or "(none)"
        head = f"Slots (key: meaning):\n{slot_lines}\n\n"
        if document.kind == "web_page":
            head += f"Document kind: web page\nPage address: {document.uri}\n"
        else:
            head += "Document kind: conversation transcript\n"
        if self.dated and names_a_time(document.text):
            written = written_date(document)
            head += f"{WRITTEN_LABEL} {written:%A} {written.isoformat()}\n"
        return f"{head}{DOC_OPEN}\n{document.text}\n{DOC_CLOSE}"

    def drafts(self, answer: ExtractionAnswer | ExtractionAnswerV3, document: Document,
               slots: Mapping[str, str]) -> list[ClaimDraft]:
        """The validated ``answer`` for ``document`` as claim drafts, in order. A slot
        outside ``slots`` becomes None; a dated answer's dates become world days
        (``day_of_date``)."""
        out = []
        for c in answer.claims:
            slot = c.slot.strip() if c.slot else None
            extra: dict[str, object] = {}
            if c.confidence is not None:
                extra["confidence"] = c.confidence
            if isinstance(c, ClaimAnswerV3):
                extra.update(event=c.event, corrects=c.corrects, multi_valued=c.multi_valued)
                if c.valid_from is not None:
                    extra["valid_from"] = day_of_date(c.valid_from, document)
                if c.valid_until is not None:
                    extra["valid_until"] = day_of_date(c.valid_until, document)
            out.append(ClaimDraft(
                subject=c.subject.strip(), slot=slot if slot in slots else None,
                value=c.value.strip(), tense=c.tense, attribution=c.attribution,
                sentence=c.sentence.strip(), mood=c.mood, **extra))
        return out

    def answer_text(self, drafts: Sequence[ClaimDraft], document: Document) -> str:
        """The answer a perfect reader gives for ``document``'s ``drafts``, as the JSON text
        this version asks for (the estimate sizes answers by it; the fake model answers
        with it). A dated version names every v3 field, null when unset, and gives days as
        dates."""
        claims = []
        for d in drafts:
            data = d.model_dump(exclude={"confidence"})
            if self.dated:
                for name in V3_FIELDS:
                    data.setdefault(name, None)
                for name in ("valid_from", "valid_until"):
                    if data[name] is not None:
                        data[name] = date_of_day(data[name], document).isoformat()
            claims.append(data)
        return json.dumps({"claims": claims})


WRITTEN_LABEL = "Written on:"

_TIME_WORDS = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|january|february|march|april|may|june|july|august|september|october|november"
    r"|december|tomorrow|tonight|weeks?|weekend|fortnight|months?|year|next|until|till"
    r"|starting|from now|(?:\d+|a few|few|a couple of|couple of|two|three|four|five|six"
    r"|seven|eight|nine|ten) days)\b",
    re.IGNORECASE)


def names_a_time(text: str) -> bool:
    """True when ``text`` holds a word that dates can be worked out from (a weekday, a
    month, "next", "week", "until", "in three days", ...): a dated extraction prompt
    carries the written date only then. Generous on purpose: a false match costs one
    call that could have been shared; a miss would leave a relative date unresolved.
    Past-only phrases ("years ago", "these days", "today") need no date."""
    return _TIME_WORDS.search(text) is not None


def load_extract_prompt(version: str, kind: type[ExtractPrompt] = ExtractPrompt) -> ExtractPrompt:
    """Extraction prompt ``version`` as ``kind`` (``ExtractPrompt`` or a subclass that reads
    a later answer shape), its texts composed from its data file (``prompt_data``)."""
    data = prompt_data(version)
    question = data.get("question_system")
    return kind(version=version, system=compose(data, data["system"]),
                question_system=compose(data, question) if question else None,
                dated=bool(data.get("dated", False)))


EXTRACT_PROMPTS: dict[str, ExtractPrompt] = {
    version: load_extract_prompt(version) for version in ("extract-v1", "extract-v2",
                                                          "extract-v3")}
DEFAULT_EXTRACT_PROMPT = "extract-v3"
"""What an extractor asks with when neither its settings nor a generator name a prompt."""


def default_extract_prompt(generator_version: str | None) -> str:
    """The extraction prompt version a world of ``generator_version`` is read with when the
    settings name none: its ``GENERATORS`` row's ``prompt`` (None or an unknown version:
    ``DEFAULT_EXTRACT_PROMPT``)."""
    spec = GENERATORS.find(generator_version)
    return DEFAULT_EXTRACT_PROMPT if spec is None else spec.prompt


def extract_prompt_of(system: str) -> ExtractPrompt | None:
    """The extraction prompt whose system text is ``system`` (for fakes), else None."""
    return next((p for p in EXTRACT_PROMPTS.values() if p.system == system), None)


# ---- checks ---------------------------------------------------------------------------------

def claim_view(claim: Claim) -> dict[str, object]:
    """The part of a claim a check sees (no ids or URIs, so equal pairs share a cache entry)."""
    return {
        "sentence": claim.sentence,
        "subject": claim.subject,
        "slot": claim.slot,
        "value": claim.value,
        "tense": claim.tense,
        "attribution": claim.attribution,
        "source": claim.lineage,
        "day": claim.day,
    }


@dataclass(frozen=True)
class CheckPrompt:
    """One version of the two check prompts."""

    version: str
    systems: Mapping[CheckKind, str]

    def render(self, older: Claim, newer: Claim) -> str:
        """The user turn for an (older, newer) pair; the same text for both check kinds."""
        o = json.dumps(claim_view(older), sort_keys=True, ensure_ascii=False)
        n = json.dumps(claim_view(newer), sort_keys=True, ensure_ascii=False)
        return f"{OLDER_OPEN}\n{o}\n{OLDER_CLOSE}\n{NEWER_OPEN}\n{n}\n{NEWER_CLOSE}"


def load_check_prompt(version: str) -> CheckPrompt:
    """Check prompt ``version``, each kind's system composed from its data file."""
    data = prompt_data(version)
    return CheckPrompt(version=version, systems={kind: compose(data, layout)
                                                 for kind, layout in data["systems"].items()})


CHECK_PROMPTS: dict[str, CheckPrompt] = {"check-v1": load_check_prompt("check-v1")}
DEFAULT_CHECK_PROMPT = "check-v1"


def retry_prompt(prompt: str, error: str) -> str:
    """The user turn for the single retry after an invalid answer (names what was wrong)."""
    return f"{prompt}\n\n{RETRY_MARKER} {error}. Answer again with only the JSON object."


def prompt_kind(system: str) -> str | None:
    """'extract', 'question', 'contradiction' or 'slot' for a registered system prompt, else
    None."""
    for p in EXTRACT_PROMPTS.values():
        if system == p.system:
            return "extract"
        if system == p.question_system:
            return "question"
    for c in CHECK_PROMPTS.values():
        for kind, text in c.systems.items():
            if system == text:
                return kind
    return None


def _between(text: str, open_tag: str, close_tag: str) -> str:
    start = text.index(open_tag) + len(open_tag)
    return text[start : text.index(close_tag, start)].strip("\n")


def document_text_of(prompt: str) -> str:
    """The document text inside an extraction prompt (for fakes and tests)."""
    return _between(prompt, DOC_OPEN, DOC_CLOSE)


def written_date_of(prompt: str) -> str:
    """The written date (YYYY-MM-DD) a dated extraction prompt names (for fakes and tests).
    Raises ValueError when the prompt names none."""
    for line in prompt.split(DOC_OPEN, 1)[0].splitlines():
        if line.startswith(WRITTEN_LABEL):
            return line.split()[-1]
    raise ValueError("the prompt names no written date")


def question_text_of(prompt: str) -> str:
    """The question inside a question-reading prompt (for fakes and tests)."""
    return _between(prompt, QUESTION_OPEN, QUESTION_CLOSE)


def claim_views_of(prompt: str) -> tuple[dict[str, object], dict[str, object]]:
    """The (older, newer) claim views inside a check prompt (for fakes and tests)."""
    return (
        json.loads(_between(prompt, OLDER_OPEN, OLDER_CLOSE)),
        json.loads(_between(prompt, NEWER_OPEN, NEWER_CLOSE)),
    )
