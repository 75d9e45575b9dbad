"""The projection shared by the adapters whose engines make their own model calls (mem0,
Graphiti, Hindsight, LangMem): each runs its engine on the oracle arm with a scripted model
(``record_oracle_deposit``), records every call the engine sends, and this module turns the
record into the estimate's stage (``project_recorded_calls``).

A call counts once per distinct call-cache key (the same prompt sent twice is one paid call,
as on the paid arms, where the second is a cache hit); a call whose answer is already in the
call cache is counted as cached and costs nothing. Tokens are characters / 4 plus the
message overhead, as for rotbench's own stages, and an answer's size is the scripted one's.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from rotbench.contract.estimate import MESSAGE_OVERHEAD_TOKENS, StageEstimate, approx_tokens
from rotbench.perception.calls.engine_client import ENGINE_PROMPT_VERSION
from rotbench.perception.model import call_key, cost_usd

RecordedCall = tuple[str, str, str, str]
"""(what the call asks for, e.g. a response model's name; system; prompt; scripted answer)."""

_RECORDINGS: dict[tuple[str, str], tuple[int, list[RecordedCall]]] = {}
_LOCK = threading.Lock()


def record_oracle_deposit(world, embedder, *, recording: str, build: Callable,
                          scratch_root: Path | None = None) -> tuple[int, list[RecordedCall]]:
    """(documents, calls): every call the engine ``build(context, on_call)`` returns sends
    while each document of ``world`` is deposited on the oracle arm, in order.

    ``build`` gets an oracle-arm ``EngineContext`` (a scratch folder under ``scratch_root``,
    removed afterwards, and a client that refuses every call) and ``on_call``, which its
    scripted model calls with each ``RecordedCall``'s four parts. The engine is closed after
    the last document. Recordings are kept for the process by (``recording``, the world's
    fingerprint): ``recording`` names what is recorded, e.g. ``"graphiti"``."""
    key = (recording, world.fingerprint)
    with _LOCK:
        if key in _RECORDINGS:
            return _RECORDINGS[key]
    from rotbench.contract.context import EngineContext
    from rotbench.contract.extraction import world_documents
    from rotbench.contract.model_client import RefusingClient
    from rotbench.perception.oracle import OracleExtractor

    calls: list[RecordedCall] = []
    documents = world_documents(world)
    scratch = Path(tempfile.mkdtemp(prefix=f"rotbench-{recording}-estimate-", dir=scratch_root))
    try:
        context = EngineContext(arm="oracle", seed=world.seed, scratch_dir=scratch,
                                embedder=embedder, model=RefusingClient(),
                                extractor=OracleExtractor(world))
        engine = build(context, lambda *call: calls.append(call))
        try:
            for document in documents:
                engine.deposit(document)
        finally:
            engine.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with _LOCK:
        _RECORDINGS[key] = (len(documents), calls)
    return len(documents), calls


def per_document_basis(engine: str, documents: int) -> Callable[[Counter[str]], str]:
    """A ``basis`` for ``project_recorded_calls``: the distinct calls ``engine`` sends while
    the oracle answers, per document by what they ask for (``documents``: over every world)."""
    def basis(by_name: Counter[str]) -> str:
        per_document = ", ".join(f"{name} {n / max(documents, 1):.2f}"
                                 for name, n in sorted(by_name.items()))
        return (f"one call per distinct prompt {engine} sends while the oracle answers; per "
                f"document ({documents}): {per_document or 'none'}")
    return basis


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


def per_document_estimate(worlds, record: Callable, *, engine: str, max_tokens: int,
                          stage: str, settings, embedder, cache) -> StageEstimate:
    """The stage estimate of an adapter whose calls are counted per document: ``record(world,
    embedder)`` gives (documents, recorded calls) for each of ``worlds``; every call is
    projected by ``project_recorded_calls`` (answers of at most ``max_tokens``) and the basis
    names ``engine``'s calls per document (``per_document_basis``). Graphiti and Hindsight
    share it."""
    recordings = [record(world, embedder) for world in worlds]
    documents = sum(count for count, _ in recordings)
    return project_recorded_calls(
        (call for _, calls in recordings for call in calls), stage=stage, settings=settings,
        cache=cache, max_tokens=max_tokens, basis=per_document_basis(engine, documents))
