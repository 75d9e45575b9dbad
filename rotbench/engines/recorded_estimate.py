"""The projection shared by the adapters whose engines make their own model calls (mem0,
Graphiti): each runs its engine on the oracle arm with a scripted model, records every call
the engine sends, and this module turns the record into the estimate's stage.

A call counts once per distinct call-cache key (the same prompt sent twice is one paid call,
as on the paid arms, where the second is a cache hit); a call whose answer is already in the
call cache is counted as cached and costs nothing. Tokens are characters / 4 plus the
message overhead, as for rotbench's own stages, and an answer's size is the scripted one's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from rotbench.perception.model import (
    MESSAGE_OVERHEAD_TOKENS,
    StageEstimate,
    approx_tokens,
    call_key,
    cost_usd,
)
from rotbench.perception.model.engine_client import ENGINE_PROMPT_VERSION

RecordedCall = tuple[str, str, str, str]
"""(what the call asks for, e.g. a response model's name; system; prompt; scripted answer)."""


def project_recorded_calls(recorded: Iterable[RecordedCall], *, stage: str, settings, cache,
                           max_tokens: int,
                           basis: Callable[[Counter[str]], str]) -> StageEstimate:
    """The exact stage estimate of the calls in ``recorded`` (all worlds of the run, in
    order), paid with ``settings.extract_model`` under ``stage`` and the engines' prompt
    version. ``cache``: the run's call cache, or None (nothing cached). ``basis`` is given
    the count of distinct calls by what they ask for, cached ones included, and returns the
    estimate's one-line basis."""
    model = settings.extract_model
    seen: set[str] = set()
    by_name: Counter[str] = Counter()
    calls = cached = tokens_in = tokens_out = 0
    for name, system, prompt, answer in recorded:
        key = call_key(stage=stage, model=model, prompt_version=ENGINE_PROMPT_VERSION,
                       system=system, prompt=prompt, max_tokens=max_tokens)
        if key in seen:
            continue
        seen.add(key)
        by_name[name] += 1
        if cache is not None and cache.get(stage, key, model=model,
                                           prompt_version=ENGINE_PROMPT_VERSION):
            cached += 1
            continue
        calls += 1
        tokens_in += approx_tokens(system + prompt) + MESSAGE_OVERHEAD_TOKENS
        tokens_out += approx_tokens(answer) + 1
    return StageEstimate(
        stage=stage, model=model, calls=calls, cached_calls=cached, input_tokens=tokens_in,
        output_tokens=tokens_out,
        usd=cost_usd(settings.price(model), input_tokens=tokens_in, output_tokens=tokens_out),
        projection="exact", basis=basis(by_name))
