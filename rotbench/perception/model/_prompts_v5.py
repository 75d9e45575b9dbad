"""Prompt ``extract-v5``: ``extract-v4`` with a compact answer and requests to forget.

The texts are ``prompts/extract-v5.toml``: v4's, with an answer block that asks for JSON
without spaces and leaves out every field that is null or at its default (subject "the
user", tense "present", mood "fact", attribution "own"), and a block for generator 5's
requests to forget: a claim with ``event: "forget"`` (``rotbench.contract.perception.
ForgetEvent``), in the past tense, whose value is the value to forget. The other fields,
their meanings and their checks are v4's; the answer is shorter: on generator 5, seeds
42-44, the oracle's claims take about a third of v4's characters (docs/batches.md). An
answer that does write a default or a null is read the same.

A request that names no value ("please forget where I work") is answered with value
``FORGET_ANY`` ("*"): one document cannot tell which value the slot held. The draft keeps
it as written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from rotbench.contract.engine import Document
from rotbench.contract.perception import FORGET_ANY as FORGET_ANY  # re-exported
from rotbench.contract.perception import ClaimDraft, ClaimEvent, ForgetEvent
from rotbench.perception.model._prompts import (
    EVENTS,
    EXTRACT_PROMPTS,
    ExtractionAnswer,
    ExtractionAnswerV3,
    load_extract_prompt,
)
from rotbench.perception.model._prompts_v4 import ClaimAnswerV4, ExtractPromptV4

DEFAULT_SUBJECT = "the user"
ANSWER_DEFAULTS: dict[str, object] = {"subject": DEFAULT_SUBJECT, "tense": "present",
                                      "mood": "fact", "attribution": "own"}
"""The fields a v5 answer leaves out at these values (and every null one)."""


class ClaimAnswerV5(ClaimAnswerV4):
    """One claim as ``extract-v5`` asks for it: v4's, with ``subject`` and ``tense``
    optional (``ANSWER_DEFAULTS``) and the event ``forget`` (in the past tense, else the
    answer is refused in one line, as v3 refuses a retraction in the present)."""

    EVENTS: ClassVar[tuple[str, ...]] = (*EVENTS, "forget")

    subject: str = Field(default=DEFAULT_SUBJECT, min_length=1)
    tense: Literal["present", "past"] = "present"
    event: ClaimEvent | ForgetEvent | None = None  # type: ignore[assignment]


class ExtractionAnswerV5(BaseModel):
    """The ``extract-v5`` answer: ``{"claims": [...]}`` of ``ClaimAnswerV5``."""

    model_config = ConfigDict(extra="ignore")

    claims: list[ClaimAnswerV5]


@dataclass(frozen=True)
class ExtractPromptV5(ExtractPromptV4):
    """``extract-v5``: v4's reading, answered compactly (see the module text)."""

    @property
    def answer_shape(self) -> type[ExtractionAnswer] | type[ExtractionAnswerV3]:
        """``ExtractionAnswerV5``."""
        return ExtractionAnswerV5  # type: ignore[return-value]

    def answer_text(self, drafts: Sequence[ClaimDraft], document: Document) -> str:
        """v4's answer text without the null fields and those at ``ANSWER_DEFAULTS``, with
        no spaces between tokens."""
        data = json.loads(super().answer_text(drafts, document))
        claims = [{k: v for k, v in claim.items()
                   if v is not None and ANSWER_DEFAULTS.get(k, object()) != v}
                  for claim in data["claims"]]
        return json.dumps({"claims": claims}, separators=(",", ":"), ensure_ascii=False)


EXTRACT_V5 = load_extract_prompt("extract-v5", ExtractPromptV5)
"""Its texts are ``prompts/extract-v5.toml``: v4's with the compact answer block."""

EXTRACT_PROMPTS[EXTRACT_V5.version] = EXTRACT_V5
"""``extract-v5`` joins the table of prompts when this module loads (the package imports
it)."""
