"""The model seams rotbench hands Graphiti: its LLM client, embedder and cross-encoder.

Graphiti asks its LLM for structured answers, one pydantic response model per prompt. Both
clients here subclass graphiti's ``LLMClient`` and override only ``_generate_response``, so
the messages they receive are exactly the ones graphiti prepared (its prompt, the response
model's JSON schema appended, its language instruction, its input cleaning): the scripted
client on the oracle arm sees byte for byte what the model would see on a paid arm, which is
what makes the paid-arm estimate exact.

Graphiti wraps ``_generate_response`` in its own retry (up to 4 attempts, waits of 5 to 120
s) for rate limits, 5xx ``httpx`` errors, empty answers and ``json.JSONDecodeError``. Nothing
these clients raise is one of those (``GraphitiAnswerError`` is not a JSONDecodeError, and the
Anthropic SDK, which retries by itself, raises its own errors), so that retry never sleeps
and never runs past the engine's per-call timeout.

- ``ScriptedLLM`` (oracle arm) answers each response model by name from rotbench's perceived
  claims of the document being added (``ANSWERED``); any other model raises
  ``GraphitiAnswerError`` naming it.
- ``ModelLLM`` (paid arms) sends graphiti's prompt through rotbench's cached, metered, budgeted
  model client and validates the answer against graphiti's response model.
- ``Embedder`` is rotbench's MiniLM; ``CrossEncoder`` ranks by its cosine (no OpenAI client).
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from rotbench._util.validation import first_error
from rotbench.engines.adapters.graphiti.env import import_graphiti

import_graphiti()

from graphiti_core.cross_encoder.client import CrossEncoderClient  # noqa: E402
from graphiti_core.embedder.client import EmbedderClient  # noqa: E402
from graphiti_core.llm_client.client import LLMClient  # noqa: E402
from graphiti_core.llm_client.config import LLMConfig  # noqa: E402
from pydantic import BaseModel, ValidationError  # noqa: E402

from rotbench.contract.engine import Document  # noqa: E402
from rotbench.contract.perception import Checker, Claim, subject_key  # noqa: E402
from rotbench.engines.adapters.model_side import claim_key  # noqa: E402

MAX_TOKENS = 4096
"""Output budget of every Graphiti call through rotbench's model client (tokens). One fixed
figure, so a call's cache key does not depend on which of graphiti's budgets it asked for."""
SUMMARY_CHARS = 1000
"""Length limit of an entity summary (graphiti's ``MAX_SUMMARY_CHARS``)."""
DEFAULT_RELATION = "RELATES_TO"
"""Relation of a fact whose claim names no slot (graphiti's own default edge name)."""
ANSWERED = ("ExtractedEntities", "ExtractedEdges", "EdgeDuplicate", "EdgeTimestamps",
            "NodeResolutions", "SummarizedEntities")
"""The response models the scripted client answers."""

Recorder = Callable[[str, str, str, str], None]
"""``on_call(response_model_name, system, prompt, answer_json)``."""


class GraphitiAnswerError(RuntimeError):
    """A Graphiti call could not be answered; the message is one line naming the model."""


def split_messages(messages: list[Any]) -> tuple[str, str]:
    """Graphiti's messages as rotbench's (system, prompt): system messages joined by newlines,
    the others by blank lines."""
    system = "\n".join(m.content for m in messages if m.role == "system")
    prompt = "\n\n".join(m.content for m in messages if m.role != "system")
    return system, prompt


def parse_answer(text: str, response_model: type[BaseModel]) -> dict[str, Any]:
    """The model's ``text`` validated against ``response_model`` (a JSON object, optionally in
    a code fence or after a line of prose). Raises GraphitiAnswerError (one line)."""
    name = response_model.__name__
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fence:
        body = fence.group(1).strip()
    elif not body.startswith("{") and "{" in body:
        body = body[body.index("{"):body.rindex("}") + 1]
    try:
        return response_model.model_validate(json.loads(body)).model_dump(mode="json")
    except json.JSONDecodeError as exc:
        raise GraphitiAnswerError(f"{name}: the answer is not JSON ({exc.msg} at char "
                                  f"{exc.pos})") from None
    except ValidationError as exc:
        where, msg = first_error(exc, "answer")
        raise GraphitiAnswerError(f"{name}: the answer does not fit the model ({where}: "
                                  f"{msg})") from None


_UNCLEAN = re.compile("[\ud800-\udfff\u200b\u200c\u200d\ufeff\u2060"
                      "\x00-\x08\x0b\x0c\x0e-\x1f]")
"""What graphiti's ``LLMClient._clean_input`` removes: lone surrogates (its UTF-8 round trip
drops them), its zero-width characters, and the control characters below 32 other than
tab, newline and return."""


class _RotbenchLLM(LLMClient):
    """Shared part: counts calls by response model; ``_answer`` gives the answer."""

    def __init__(self, on_call: Recorder | None = None) -> None:
        super().__init__(LLMConfig(api_key="unused", model="rotbench", small_model="rotbench",
                                   max_tokens=MAX_TOKENS), cache=False)
        self.calls: Counter[str] = Counter()
        self.on_call = on_call

    def _clean_input(self, input: str) -> str:
        """Graphiti's own input cleaning (``LLMClient._clean_input``: lone surrogates, the
        zero-width characters and every control character but newline, return and tab
        removed), the same string from one regular expression instead of a Python-level
        loop over every character of every prompt."""
        return _UNCLEAN.sub("", input)

    async def _generate_response(self, messages, response_model=None, max_tokens=MAX_TOKENS,
                                 model_size=None, *, model=None) -> dict[str, Any]:
        if response_model is None:
            raise GraphitiAnswerError("graphiti asked for an answer without a response model")
        name = response_model.__name__
        self.calls[name] += 1
        system, prompt = split_messages(messages)
        answer = await self._answer(response_model, system, prompt)
        if self.on_call is not None:
            self.on_call(name, system, prompt, json.dumps(answer))
        return answer

    async def _answer(self, response_model: type[BaseModel], system: str,
                      prompt: str) -> dict[str, Any]:
        raise NotImplementedError


class ModelLLM(_RotbenchLLM):
    """The paid arms: one Messages call per Graphiti prompt through rotbench's model client
    (cached under ``calls/engine-<name>/``, metered, within the run's budget), the answer
    validated against graphiti's response model. Calls run on worker threads, so graphiti's
    concurrent calls (one ``EdgeDuplicate`` per new fact) overlap."""

    def __init__(self, client: Any, model: str, on_call: Recorder | None = None) -> None:
        super().__init__(on_call)
        self.client = client
        self.model_id = model

    async def _answer(self, response_model, system, prompt):
        done = await asyncio.to_thread(self.client.complete, model=self.model_id, system=system,
                                       prompt=prompt, max_tokens=MAX_TOKENS)
        return parse_answer(done.text, response_model)


def _section(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.DOTALL)
    if found is None:
        raise GraphitiAnswerError(f"scripted answer: no <{tag}> section in the prompt")
    return found.group(1).strip()



class ScriptedLLM(_RotbenchLLM):
    """The oracle arm's LLM: answers from rotbench's perceived claims, never a guess.

    The engine sets ``document`` and ``time`` (the document's ISO timestamp) before each
    ``add_episode`` and files every claim it perceives in ``claims`` (sentence -> Claim).

    - ``ExtractedEntities``: the user, every other subject, every value;
    - ``ExtractedEdges``: one edge per claim said as a fact (subject -> value, relation = the
      slot in capitals, fact = the claim's sentence), dated from its tense: present ->
      ``valid_at`` = the document's time; past -> ``invalid_at`` = the document's time;
    - ``EdgeDuplicate``: an existing fact is a duplicate when it is the same claim, and
      contradicted when rotbench's checker says the two claims contradict (older, newer);
    - ``EdgeTimestamps``: the same dating rule for the fact's claim;
    - ``NodeResolutions``: an entity is the existing one of the same name (case-folded);
    - ``SummarizedEntities`` (asked once an entity's facts outgrow graphiti's summary length):
      the newest perceived facts naming the entity (as subject or value) that fit in
      ``SUMMARY_CHARS``, oldest first.

    Anything else raises GraphitiAnswerError naming the response model.
    """

    def __init__(self, checker: Checker, on_call: Recorder | None = None) -> None:
        super().__init__(on_call)
        self.checker = checker
        self.document: Document | None = None
        self.drafts: list = []
        self.time: str | None = None
        self.claims: dict[str, Claim] = {}

    async def _answer(self, response_model, system, prompt):
        name = response_model.__name__
        handler = getattr(self, f"_answer_{name}", None) if name in ANSWERED else None
        if handler is None:
            raise GraphitiAnswerError(f"the oracle arm has no scripted answer for graphiti's "
                                      f"response model {name}")
        return response_model.model_validate(handler(prompt)).model_dump(mode="json")

    def _claim(self, fact: str, model: str) -> Claim:
        claim = self.claims.get(fact.strip())
        if claim is None:
            raise GraphitiAnswerError(f"{model}: the fact {fact[:80]!r} is no perceived claim")
        return claim

    def _dates(self, claim, time: str | None) -> dict[str, str | None]:
        past = claim.tense == "past"
        return {"valid_at": None if past else time, "invalid_at": time if past else None}

    def _answer_ExtractedEntities(self, prompt: str) -> dict:
        names: list[str] = ["the user"]
        for draft in self.drafts:
            for name in (draft.subject, draft.value):
                if subject_key(name) not in {subject_key(n) for n in names}:
                    names.append(name)
        return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in names]}

    def _answer_ExtractedEdges(self, prompt: str) -> dict:
        edges = []
        for draft in self.drafts:
            if draft.mood != "fact" or subject_key(draft.subject) == subject_key(draft.value):
                continue
            edges.append({"source_entity_name": draft.subject, "target_entity_name": draft.value,
                          "relation_type": (draft.slot or DEFAULT_RELATION).upper(),
                          "fact": draft.sentence, **self._dates(draft, self.time)})
        return {"edges": edges}

    def _answer_EdgeDuplicate(self, prompt: str) -> dict:
        new = self._claim(_section(prompt, "NEW FACT"), "EdgeDuplicate")
        existing = ast.literal_eval(_section(prompt, "EXISTING FACTS"))
        candidates = ast.literal_eval(_section(prompt, "FACT INVALIDATION CANDIDATES"))
        duplicates, contradicted = [], []
        rows = [(row, True) for row in existing] + [(row, False) for row in candidates]
        olds = [self._claim(row["fact"], "EdgeDuplicate") for row, _ in rows]
        judgements = self.checker.judge([(old, new) for old in olds]) if olds else []
        for (row, is_existing), old, judgement in zip(rows, olds, judgements, strict=True):
            if is_existing and claim_key(old) == claim_key(new):
                duplicates.append(int(row["idx"]))
            if judgement.contradicts:
                contradicted.append(int(row["idx"]))
        return {"duplicate_facts": duplicates, "contradicted_facts": contradicted}

    def _answer_EdgeTimestamps(self, prompt: str) -> dict:
        claim = self._claim(_section(prompt, "FACT"), "EdgeTimestamps")
        return self._dates(claim, _section(prompt, "REFERENCE TIME"))

    def _answer_NodeResolutions(self, prompt: str) -> dict:
        extracted = json.loads(_section(prompt, "ENTITIES"))
        existing = json.loads(_section(prompt, "EXISTING ENTITIES"))
        resolutions = []
        for node in extracted:
            same = [c["candidate_id"] for c in existing
                    if subject_key(c["name"]) == subject_key(node["name"])]
            resolutions.append({"id": node["id"], "name": node["name"],
                                "duplicate_candidate_id": same[0] if same else -1})
        return {"entity_resolutions": resolutions}

    def _answer_SummarizedEntities(self, prompt: str) -> dict:
        filed = sorted(self.claims.values(), key=lambda c: (c.day, int(c.id.lstrip("c"))))
        summaries = []
        for entity in json.loads(_section(prompt, "ENTITIES")):
            key = subject_key(entity["name"])
            kept: list[str] = []
            for claim in reversed(filed):
                if claim.mood != "fact" or key not in (subject_key(claim.subject),
                                                        subject_key(claim.value)):
                    continue
                if sum(len(s) + 1 for s in kept) + len(claim.sentence) > SUMMARY_CHARS:
                    break
                kept.append(claim.sentence)
            if kept:
                summaries.append({"name": entity["name"], "summary": " ".join(reversed(kept))})
        return {"summaries": summaries}


class Embedder(EmbedderClient):
    """rotbench's embedder (MiniLM, unit vectors, content-cached) as graphiti's embedder."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    async def create(self, input_data) -> list[float]:
        text = input_data if isinstance(input_data, str) else list(input_data)[0]
        return [float(x) for x in self.embedder.encode([str(text)])[0]]

    async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
        if not input_data_list:
            return []
        return [[float(x) for x in row] for row in self.embedder.encode(list(input_data_list))]


class CrossEncoder(CrossEncoderClient):
    """Ranks passages by rotbench's cosine with the query (graphiti's default reranker would
    build an OpenAI client; the default search, RRF, does not call a cross-encoder)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
        if not passages:
            return []
        vectors = np.asarray(self.embedder.encode([query, *passages]), np.float64)
        scores = vectors[1:] @ vectors[0]
        return sorted(zip(passages, (float(s) for s in scores), strict=True),
                      key=lambda pair: -pair[1])
