"""The model seams rotbench hands Hindsight (hindsight-api 1.1.0): its LLM answers, embedder
and reranker.

Hindsight's built-in ``mock`` provider takes a response callback ``fn(messages, scope)``; the
adapter installs one on each of Hindsight's LLM configurations. The scopes a world's deposits
reach, and what the scripted callback (oracle arm) answers from rotbench's perceived claims:

- ``retain_extract_facts`` (one call per chunk of a retained document): one fact per
  perceived claim of the document, ``what`` = the claim's sentence (``fact_type`` world,
  the subject and value as entities), the other fields ``N/A``, so the stored fact's text is
  the sentence itself;
- ``consolidation`` (after each retain: the bank's new facts with the existing observations
  its recall found): for each new fact, as Hindsight's consolidation prompt asks (prefer
  update over create; cascade a change to every affected observation; keep history): an
  observation holding the same claim is updated with the fact as evidence; every observation
  the claim makes outdated (rotbench's checker: ``new_value_for_slot``) is updated to the new
  state, keeping what it replaced ("...; it was X before."); a fact touching no observation
  creates one, the claim's sentence;
- ``consolidation_dedup`` (a new observation close to an existing one): ``merge`` when both
  hold the same claim, else ``keep``.

Any other scope raises ``HindsightAnswerError`` naming it. ``on_call(scope, system, prompt,
answer)`` sees every call (the paid-arm estimate records them). On the paid arms ``ModelAnswers``
sends the same messages through rotbench's cached, metered model client instead.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from rotbench._util.validation import first_error
from rotbench.contract.perception import Checker, Claim
from rotbench.engines.adapters.model_side import claim_key

MAX_TOKENS = 4096
"""Output budget of every Hindsight call through rotbench's model client (tokens)."""
ANSWERED = ("retain_extract_facts", "consolidation", "consolidation_dedup")
"""The scopes the scripted callback answers."""
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

Recorder = Callable[[str, str, str, str], None]


class HindsightAnswerError(RuntimeError):
    """A Hindsight call could not be answered; the message is one line naming the scope."""


def split_messages(messages: list[dict]) -> tuple[str, str]:
    """(system, prompt) of Hindsight's messages: system contents joined, the others' joined
    by blank lines."""
    def text(m: dict) -> str:
        content = m.get("content", "")
        if isinstance(content, list):
            return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)

    system = "\n".join(text(m) for m in messages if m.get("role") == "system")
    prompt = "\n\n".join(text(m) for m in messages if m.get("role") != "system")
    return system, prompt



def with_history(new: Claim, old: Claim) -> str:
    """An observation updated to ``new``'s state that keeps what it replaced."""
    return f"{new.sentence.rstrip('.')}; it was {old.value} before."


class ScriptedAnswers:
    """The oracle arm's callback (see the module docstring). The engine sets ``drafts`` (the
    document's perceived claims, filed) before each retain and files every claim in
    ``claims`` (sentence -> Claim); ``observations`` maps each observation text it wrote to
    the claim it states."""

    def __init__(self, checker: Checker, on_call: Recorder | None = None) -> None:
        self.checker = checker
        self.on_call = on_call
        self.drafts: list[Claim] = []
        self.claims: dict[str, Claim] = {}
        self.observations: dict[str, Claim] = {}
        self.calls: Counter[str] = Counter()

    def __call__(self, messages: list[dict], scope: str) -> Any:
        self.calls[scope] += 1
        handler = getattr(self, f"_answer_{scope}", None) if scope in ANSWERED else None
        if handler is None:
            raise HindsightAnswerError(f"the oracle arm has no scripted answer for Hindsight's "
                                       f"scope {scope!r}")
        system, prompt = split_messages(messages)
        answer = handler(prompt)
        if self.on_call is not None:
            self.on_call(scope, system, prompt, json.dumps(answer, sort_keys=True))
        return as_response(scope, answer)

    def claim_of(self, text: str) -> Claim | None:
        """The claim a fact or observation text states (its sentence, or an observation this
        callback wrote)."""
        text = text.strip()
        return self.observations.get(text) or self.claims.get(text)

    def _answer_retain_extract_facts(self, prompt: str) -> dict:
        drafts, self.drafts = self.drafts, []  # a second chunk of the document adds nothing
        return {"facts": [{"what": c.sentence, "when": "N/A", "where": "N/A", "who": "N/A",
                           "why": "N/A", "fact_kind": "conversation", "fact_type": "world",
                           "entities": [c.subject, c.value]} for c in drafts]}

    def _answer_consolidation(self, prompt: str) -> dict:
        facts, observations = _consolidation_input(prompt)
        held = [(oid, text, self.claim_of(text)) for oid, text in observations]
        held = [(oid, text, c) for oid, text, c in held if c is not None]
        creates, updates = [], {}
        for fact_id, text in facts:
            new = self.claims.get(text.strip())
            if new is None:
                continue
            same = [oid for oid, _, c in held if claim_key(c) == claim_key(new)]
            judged = self.checker.judge([(c, new) for _, _, c in held]) if held else []
            outdated = [(oid, c) for (oid, _, c), j in zip(held, judged, strict=True)
                        if j.new_value_for_slot and oid not in same]
            for oid in same:
                update = updates.setdefault(oid, {"observation_id": oid, "text": None,
                                                  "source_fact_ids": []})
                update["source_fact_ids"].append(fact_id)
            for oid, old in outdated:  # cascade to every affected observation
                update = updates.setdefault(oid, {"observation_id": oid, "text": None,
                                                  "source_fact_ids": []})
                update["text"] = with_history(new, old)
                update["source_fact_ids"].append(fact_id)
                self.observations[update["text"]] = new
            if not same and not outdated:
                creates.append({"text": new.sentence, "source_fact_ids": [fact_id]})
                self.observations[new.sentence] = new
        texts = dict((oid, text) for oid, text, _ in held)
        done = [{**u, "text": u["text"] or texts[oid]} for oid, u in updates.items()]
        return {"creates": creates, "updates": done, "deletes": []}

    def _answer_consolidation_dedup(self, prompt: str) -> dict:
        found = re.findall(r"(?:NEW|EXISTING)[^\n]*:\s*\n?(.+)", prompt)
        claims = [self.claim_of(t) for t in found[:2]]
        same = (len(claims) == 2 and None not in claims
                and claim_key(claims[0]) == claim_key(claims[1]))
        return {"action": "merge" if same else "keep", "text": found[1].strip() if same else "",
                "reason": "same claim" if same else "different claims"}


def _consolidation_input(prompt: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(new facts, existing observations) of a consolidation prompt, each as (id, text)."""
    head, _, tail = re.split(r"(?im)^#+\s*(existing observations)\s*$", prompt + "\n", maxsplit=1) \
        if re.search(r"(?im)^#+\s*existing observations\s*$", prompt) else (prompt, "", "")
    row = re.compile(rf"\[({_UUID})\]\s*(.+?)(?:\n|$)")
    facts = [(i, _MENTIONED.sub("", t).strip()) for i, t in row.findall(head)]
    return facts, _observations(tail)


_MENTIONED = re.compile(r"\s*\((?:mentioned_at|occurred|when)[^)]*\)\s*$")


def _observations(section: str) -> list[tuple[str, str]]:
    """(id, text) of each existing observation listed in a consolidation prompt."""
    body = section.strip()
    start = body.find("[")
    if start >= 0:
        try:
            rows, _ = json.JSONDecoder().raw_decode(body[start:])
            if isinstance(rows, list):
                return [(str(r.get("id")), str(r.get("text", ""))) for r in rows
                        if isinstance(r, dict) and r.get("id")]
        except json.JSONDecodeError:
            pass
    row = re.compile(rf"\[({_UUID})\]\s*(.+?)(?:\n|$)")
    return [(i, _MENTIONED.sub("", t).strip()) for i, t in row.findall(body)]


def as_response(scope: str, answer: Any) -> Any:
    """``answer`` (parsed JSON) as the object Hindsight expects back from its mock provider
    for ``scope``: its pydantic response model for the consolidation scopes (the provider
    hands the callback's result over unvalidated), the plain JSON for fact extraction
    (Hindsight parses that itself). Raises HindsightAnswerError when it does not fit."""
    from pydantic import ValidationError

    if scope not in ("consolidation", "consolidation_dedup"):
        return answer
    from hindsight_api.engine.consolidation import consolidator

    model = (consolidator._ConsolidationBatchResponse if scope == "consolidation"
             else consolidator._DedupDecision)
    try:
        return model.model_validate(answer)
    except ValidationError as exc:
        where, msg = first_error(exc, "answer")
        raise HindsightAnswerError(f"{scope}: the answer does not fit ({where}: "
                                   f"{msg})") from None


class ModelAnswers:
    """The paid arms: one Messages call per Hindsight call through rotbench's model client; the
    answer is parsed as JSON (Hindsight validates it against its own response model)."""

    def __init__(self, client: Any, model: str, on_call: Recorder | None = None) -> None:
        self.client = client
        self.model = model
        self.on_call = on_call
        self.calls: Counter[str] = Counter()

    def __call__(self, messages: list[dict], scope: str) -> Any:
        self.calls[scope] += 1
        system, prompt = split_messages(messages)
        text = self.client.complete(model=self.model, system=system, prompt=prompt,
                                    max_tokens=MAX_TOKENS).text
        from rotbench.engines.adapters.model_side import NotJSON, answer_json

        try:
            answer = answer_json(text)
        except NotJSON as exc:
            raise HindsightAnswerError(f"{scope}: {exc}") from None
        return as_response(scope, answer)


def make_embeddings(embedder: Any) -> Any:
    """rotbench's embedder (MiniLM, 384 dimensions, content-cached) as Hindsight's
    ``Embeddings``."""
    from hindsight_api.engine.embeddings import Embeddings

    class RotbenchEmbeddings(Embeddings):
        @property
        def provider_name(self) -> str:
            return "rotbench"

        @property
        def dimension(self) -> int:
            return 384

        async def initialize(self) -> None:
            embedder.encode(["the user"])

        async def encode(self, texts: list[str]) -> list[list[float]]:
            if not texts:
                return []
            return np.asarray(embedder.encode(list(texts)), np.float64).tolist()

    return RotbenchEmbeddings()
