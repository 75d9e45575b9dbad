"""Prompt ``extract-v4``: ``extract-v3`` plus generator 4's perception fields.

Prompts are data: the v4 texts are ``prompts/extract-v4.toml`` (only what v4 changes of
v3's); this module holds the answer shapes they ask for and the small ``ExtractPrompt``
subclass that turns answers into drafts. What
v4 adds, each mapped onto the shared contract (``rotbench.contract.perception``):

- ``mood: "conditional"`` with ``depends_on``: a declared successor ("if I ever leave
  Lisbon, my gym will be Summit Climbing");
- ``depends_on`` on a fact: the root slot value the fact hangs on ("my manager at Acme");
- ``valid_from`` before the written date on a plain fact: a change told relative to the day
  the document was written ("I moved to Porto last week");
- ``premise`` when reading a question: the value the question takes for granted.

Each field has its own check; a bad one is a one-line ``InvalidAnswer`` reason that the
retry quotes (``rotbench.perception.model._prompts.parse_answer``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from rotbench.contract.engine import Document
from rotbench.contract.perception import ClaimDraft, Dependency, QuestionFrame
from rotbench.perception.model._prompts import (
    EXTRACT_PROMPTS,
    ClaimAnswerV3,
    ExtractionAnswer,
    ExtractionAnswerV3,
    ExtractPrompt,
    QuestionAnswer,
    _is_null,
    _text_or_null,
    load_extract_prompt,
)

V4_FIELDS = ("depends_on",)
"""The claim field ``extract-v4`` adds to v3's answer (besides the mood 'conditional')."""

class DependsOnAnswer(BaseModel):
    """``depends_on`` as the model answers it: ``{"slot": ..., "value": ...}``."""

    model_config = ConfigDict(extra="ignore")

    slot: str = Field(min_length=1)
    value: str = Field(min_length=1)

    @field_validator("slot", "value", mode="before")
    @classmethod
    def _strip(cls, v: object) -> object:
        return v.strip() if isinstance(v, str) else v


class ClaimAnswerV4(ClaimAnswerV3):
    """One claim as ``extract-v4`` asks for it: v3's fields, the mood 'conditional' and
    ``depends_on``. Checks (one line each): a conditional claim names its ``depends_on``,
    is in the present tense and carries no event; ``depends_on`` ties to another slot than
    the claim's own; a plain fact's ``valid_from`` without an event is not after the
    document's date (a later one is a scheduled change)."""

    mood: Literal["fact", "hypothetical", "negated", "suggested",  # type: ignore[assignment]
                  "temporary", "conditional"] = "fact"
    depends_on: DependsOnAnswer | None = None
    MOOD_SPELLINGS: ClassVar[Mapping[str, str]] = {
        **ClaimAnswerV3.MOOD_SPELLINGS, "if": "conditional", "successor": "conditional"}

    @field_validator("depends_on", mode="before")
    @classmethod
    def _depends(cls, v: object) -> object:
        if _is_null(v):
            return None
        if not isinstance(v, dict):
            raise ValueError(f"depends_on must be an object {{\"slot\": ..., \"value\": ...}} "
                             f"or null, got {str(v)[:40]!r}")
        return v

    @model_validator(mode="after")
    def _consistent_v4(self, info: ValidationInfo) -> ClaimAnswerV4:
        written = (info.context or {}).get("written")
        dep = self.depends_on
        if self.mood == "conditional":
            if dep is None:
                raise ValueError("a conditional claim needs depends_on, the slot value whose "
                                 "end sets it off")
            if self.tense != "present":
                raise ValueError(f"a conditional claim is told in the present tense, not "
                                 f"{self.tense!r}")
        if dep is not None and self.slot is not None and dep.slot.casefold() == \
                self.slot.strip().casefold():
            raise ValueError(f"depends_on names the claim's own slot {dep.slot!r}")
        if (self.event is None and self.mood == "fact" and self.valid_from is not None
                and isinstance(written, date) and self.valid_from > written):
            raise ValueError(f"valid_from {self.valid_from} is after the document's date "
                             f"{written}: that is event 'scheduled'")
        return self


class ExtractionAnswerV4(BaseModel):
    """The ``extract-v4`` answer: ``{"claims": [...]}`` of ``ClaimAnswerV4``."""

    model_config = ConfigDict(extra="ignore")

    claims: list[ClaimAnswerV4]


class QuestionAnswerV4(QuestionAnswer):
    """A v4 question reading: v2's fields plus ``premise`` (None for a null spelling)."""

    premise: str | None = None

    @field_validator("premise", mode="before")
    @classmethod
    def _premise(cls, v: object) -> object:
        return _text_or_null(v, f"premise must be the value the question takes for granted, "
                                f"as text, or null, got {str(v)[:40]!r}")


@dataclass(frozen=True)
class ExtractPromptV4(ExtractPrompt):
    """``extract-v4``: a dated prompt whose answers and question readings carry v4's
    fields (see the module text)."""

    @property
    def answer_shape(self) -> type[ExtractionAnswer] | type[ExtractionAnswerV3]:
        """``ExtractionAnswerV4``."""
        return ExtractionAnswerV4  # type: ignore[return-value]

    @property
    def question_shape(self) -> type[QuestionAnswer]:
        """``QuestionAnswerV4``."""
        return QuestionAnswerV4

    def frame(self, answer: QuestionAnswer) -> QuestionFrame:
        """The question frame of a v4 reading (with its premise)."""
        return super().frame(answer).model_copy(
            update={"premise": getattr(answer, "premise", None)})

    def drafts(self, answer, document: Document, slots: Mapping[str, str]) -> list[ClaimDraft]:
        """v3's drafts, each with its mood and ``depends_on`` (a slot outside ``slots`` is
        kept as named: it says what the claim hangs on)."""
        out = super().drafts(answer, document, slots)
        return [d.model_copy(update={"depends_on": Dependency(slot=c.depends_on.slot,
                                                              value=c.depends_on.value)})
                if c.depends_on is not None else d for c, d in zip(answer.claims, out,
                                                                    strict=True)]

    def answer_text(self, drafts: Sequence[ClaimDraft], document: Document) -> str:
        """v3's answer text with ``depends_on`` on every claim (null when unset)."""
        import json

        data = json.loads(super().answer_text(drafts, document))
        for claim, draft in zip(data["claims"], drafts, strict=True):
            claim["depends_on"] = (draft.depends_on.model_dump()
                                   if draft.depends_on is not None else None)
        return json.dumps(data)


EXTRACT_V4 = load_extract_prompt("extract-v4", ExtractPromptV4)
"""Its texts are ``prompts/extract-v4.toml``: v3's, with the ties block, the premise line
and the answer lines that name the new fields."""

EXTRACT_PROMPTS[EXTRACT_V4.version] = EXTRACT_V4
"""``extract-v4`` joins the table of prompts when this module loads: the package
(``rotbench.perception.model``) imports it, so the table is whole wherever it is read."""
