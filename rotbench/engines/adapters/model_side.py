"""The model side of an adapter whose engine makes its own model calls (Graphiti, Hindsight,
LangMem): scripted by rotbench's checker on the oracle arm, rotbench's model client on the
paid arms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rotbench.contract.perception import Claim, subject_key, value_key


def model_side(context: Any, scripted: Callable[[Any], Any],
               paid: Callable[[Any, str], Any]) -> Any:
    """``scripted(checker)`` on the oracle arm (the context's checker, else the oracle's),
    else ``paid(client, model)`` with the context's model client and the model its calls use
    (``rotbench.engines.adapters.mem0.engine.model_of``)."""
    if context.arm == "oracle":
        from rotbench.perception.oracle import OracleChecker

        return scripted(context.checker or OracleChecker())
    from rotbench.engines.adapters.mem0.engine import model_of

    return paid(context.model, model_of(context.model))


def claim_key(claim: Claim) -> tuple[str, str | None, str, str, str, str]:
    """What makes two claims one statement for an adapter's scripted model: subject, slot,
    value (``value_key``), tense, attribution and mood; their ids, days and sources aside."""
    return (subject_key(claim.subject), claim.slot, value_key(claim.value), claim.tense,
            claim.attribution, claim.mood)


class NotJSON(ValueError):
    """A model's answer held no JSON; the message is one line."""


def answer_json(text: str) -> Any:
    """The JSON value of a model's answer ``text``, which may sit in a code fence (three
    backticks, optionally tagged ``json``). Raises NotJSON, "the answer is not JSON (<the
    parser's reason> at char <n>)"."""
    import json
    import re

    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fence:
        body = fence.group(1).strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise NotJSON(f"the answer is not JSON ({exc.msg} at char {exc.pos})") from None
