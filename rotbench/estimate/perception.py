"""``--estimate``: projected calls, tokens and dollars of an arm, before anything runs.

Pure: no model call, no network, nothing written (the embedder may read its cache, and encode
misses locally). How each number is projected:

- extract (live arm only): one call per distinct extraction prompt. Identical conversations
  (same text) share one prompt, and a ``LiveExtractor`` pays for a prompt once, so this is the
  exact count of first attempts. A document whose expected answer (the oracle's claims as
  the prompt version's JSON) the version's answer shape refuses is priced as both attempts
  the run pays for it, the first and the retry that quotes the reason, and named in the
  notes (the run leaves it unextracted and reports it as a failure); other retries are
  not projected. From
  prompt ``extract-v2`` the stage also reads each distinct probe question once (the same
  questions recur in every world, so a run pays for them once). From ``extract-v3`` the
  prompt carries the document's written date, so identical conversations share a call only
  when written on the same date.
- check (probe and live arms): the oracle arm is deposited with a recording checker, which
  yields every (older, newer) pair the candidate search sends to the checker; two calls per
  pair, counted once per distinct prompt. For the probe arm this is exact as long as the live
  checks agree with the oracle (each disagreement changes which claims stay active and so the
  later candidates). For the live arm it assumes the live extractor reads what the oracle
  reads, and is an approximation. Without an embedder no candidate search can run: the count
  is then an upper bound (every earlier same-subject claim), marked ``exact=False``.
- extra pairs (e.g. real ruled pairs): two calls each.
- calls already in the call cache are free: reported as ``cached_calls``, not in ``calls``.
- tokens: input = characters of system prompt and user turn / 4, plus 3 per message; output
  = characters of the expected answer / 4, plus 1 (for extraction, the oracle's claims
  rendered as the answer JSON; for a check, ``{"answer": "yes"}``). A heuristic, good to tens
  of percent on English text.
- prompt cache (standard calls only): a call whose fixed prefix reaches its model's minimum
  (``rotbench.perception.calls.prompt_cache.cached_prefix_chars``; today ``extract-v4`` and
  ``-v5`` with the world's slot list) bills that prefix as a cache write (1.25x the input
  price) or a cache read (0.1x). Per distinct prefix the first ``settings.concurrency``
  paid calls are counted as writes (so many can be in flight before the first write lands)
  and the rest as reads; the prefix's tokens then leave ``input_tokens`` for
  ``cache_write_tokens`` and ``cache_read_tokens``. Batches are sent unmarked, so the batch
  price has no cache terms.
- dollars: tokens times ``settings.prices`` of the stage's model; None without a price.
  Both prices are given: standard (one call at a time, prompt cache as above) and batch
  (Message Batches bill all usage at ``BATCH_PRICE_FACTOR``, half, every input token at the
  full rate: ``StageEstimate.uncached_usd``); ``Estimate.applicable_usd`` is the one the run
  pays (``batch`` from the settings), which the budget guard checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from rotbench.contract.engine import Document
from rotbench.contract.estimate import (
    MESSAGE_OVERHEAD_TOKENS,
    Projection,
    StageEstimate,
    approx_tokens,
)
from rotbench.contract.extraction import world_documents
from rotbench.contract.model_client import RefusingClient
from rotbench.contract.perception import Claim, Judgement
from rotbench.perception.calls.cache import CallCache
from rotbench.perception.calls.prices import cost_usd
from rotbench.perception.calls.prompt_cache import cached_prefix_chars
from rotbench.perception.model import (
    InvalidAnswer,
    LiveChecker,
    LiveExtractor,
    LLMSettings,
    parse_answer,
    retry_prompt,
    slots_from_world,
)
from rotbench.world.models import World

Arm = Literal["oracle", "probe", "live"]
ARMS: tuple[str, ...] = ("oracle", "probe", "live")

CHECK_ANSWER = '{"answer": "yes"}'
QUESTION_ANSWER = '{"subject": "the user", "slot": "home_city", "tense": "present"}'


class Estimate(BaseModel):
    """What an arm would call and cost. ``stages`` is empty for the oracle arm."""

    arm: str
    stages: dict[str, StageEstimate] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    batch: bool = Field(default=False, description="The run sends its calls as Message "
                        "Batches (billed at half price).")

    @property
    def calls(self) -> int:
        """Calls that would be paid, all stages."""
        return sum(s.calls for s in self.stages.values())

    @property
    def cached_calls(self) -> int:
        return sum(s.cached_calls for s in self.stages.values())

    @property
    def usd(self) -> float | None:
        """Total US dollars; None when any stage with calls has no price."""
        parts = [s.usd for s in self.stages.values() if s.calls]
        if any(p is None for p in parts):
            return None
        return round(sum(parts), 4)  # type: ignore[arg-type]

    @property
    def batch_usd(self) -> float | None:
        """Total US dollars were every call sent in a Message Batch: half the standard price
        without the prompt cache (``StageEstimate.uncached_usd``; batches are sent
        unmarked)."""
        parts = [s.batch_usd for s in self.stages.values() if s.calls]
        if any(p is None for p in parts):
            return None
        return round(sum(parts), 4)  # type: ignore[arg-type]

    @property
    def applicable_usd(self) -> float | None:
        """What this run would pay: ``batch_usd`` in batch mode, else ``usd``."""
        return self.batch_usd if self.batch else self.usd

    def render(self) -> str:
        """A short text table for the CLI."""
        lines = [f"estimate for arm {self.arm!r} (calls already cached are free, not counted):"]
        if not self.stages:
            lines.append("  no model calls")
        for s in self.stages.values():
            usd = ("price not configured" if s.usd is None else
                   f"US${s.usd:.2f} (batch US${s.batch_usd:.2f})")
            cached = ("" if not (s.cache_write_tokens or s.cache_read_tokens) else
                      f" + ~{s.cache_write_tokens:,} cache-write / "
                      f"~{s.cache_read_tokens:,} cache-read in")
            mark = "" if s.projection == "exact" else f"  ({s.projection})"
            lines.append(
                f"  {s.stage:<8} {s.model:<20} {s.calls:>6} calls (+{s.cached_calls} cached)  "
                f"~{s.input_tokens:,} in{cached} / ~{s.output_tokens:,} out tokens  "
                f"{usd}{mark}"
            )
            lines.append(f"           basis: {s.basis}")
        total = self.usd
        if total is None and self.calls:
            money = "dollars unknown (no price)"
        else:
            applies = ("batch applies (--batch)" if self.batch else
                       "standard applies; --batch for the batch price")
            money = (f"US${total or 0:.2f} standard, US${self.batch_usd or 0:.2f} batch "
                     f"({applies})")
        lines.append(f"  total    {self.calls} calls, {money}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


class _RecordingChecker:
    """Answers like the oracle and remembers every pair it was asked about."""

    stamp = "estimate-recording-checker"

    def __init__(self) -> None:
        from rotbench.perception.oracle import OracleChecker

        self._oracle = OracleChecker()
        self.pairs: list[tuple[Claim, Claim]] = []

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        self.pairs.extend(pairs)
        return self._oracle.judge(pairs)


def oracle_pairs(
    world: World, embedder: object, engine_config: object | None = None
) -> list[tuple[Claim, Claim]]:
    """Every (older, newer) pair the oracle arm's deposit sends to its checker, in order."""
    from rotbench.perception.oracle import OracleExtractor
    from rotbench.pipeline.extract import extract_concurrently
    from rotbench.reference.config import EngineConfig
    from rotbench.reference.reconcile import deposit

    extraction = extract_concurrently(world_documents(world), OracleExtractor(world), concurrency=1)
    recorder = _RecordingChecker()
    deposit(extraction, embedder, recorder, engine_config or EngineConfig())  # type: ignore[arg-type]
    return recorder.pairs


def _upper_bound_pairs(world: World) -> int:
    """Pairs if every earlier claim of the same subject were a candidate (oracle claims)."""
    from rotbench.perception.oracle import OracleExtractor

    ex = OracleExtractor(world)
    n = sum(len(ex.extract(doc)) for doc in world_documents(world))
    return n * (n - 1) // 2


def estimate(
    subject: World | Sequence[World] | Sequence[Document],
    arm: str,
    settings: LLMSettings,
    *,
    embedder: object | None = None,
    engine_config: object | None = None,
    cache: CallCache | None = None,
    slots: Mapping[str, str] | Sequence[str] | None = None,
    extra_pairs: Sequence[tuple[Claim, Claim]] = (),
) -> Estimate:
    """Projected calls, tokens and dollars per stage for ``arm`` over ``subject``.

    Args:
        subject: a world, several worlds (summed), or plain documents (then only extraction
            is projected, with output tokens at 60% of input, and checks only for
            ``extra_pairs``).
        arm: 'oracle' (no calls), 'probe' (checks) or 'live' (extraction and checks).
        settings: models, prices, prompt versions, max_tokens.
        embedder: the run's ``rotbench.embedding.Embedder``; needed for an exact check count.
        engine_config: the run's ``EngineConfig`` (default: compiled defaults).
        cache: the run's call cache; calls found there are reported as cached, not paid.
        slots: slot vocabulary for plain documents (worlds bring their own).
        extra_pairs: further (older, newer) pairs the run will check (two calls each).

    Raises ValueError for an unknown arm.
    """
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; available: {', '.join(ARMS)}")
    if isinstance(subject, World):
        worlds, documents = [subject], []
    else:
        items = list(subject)
        worlds = [x for x in items if isinstance(x, World)]
        documents = [x for x in items if isinstance(x, Document)]
    est = Estimate(arm=arm, batch=settings.batch)
    if arm == "oracle":
        est.notes.append("scripted arm: no model call can be made (refusing client)")
        return est

    refusing = RefusingClient()
    if arm == "live":
        est.stages["extract"], refused = _extract_stage(worlds, documents, settings, cache,
                                                        slots, refusing)
        if refused:
            est.notes.append(
                f"{len(refused)} documents' expected answers are refused by the prompt's "
                f"answer shape: each priced as two calls (first and retry); a run leaves "
                f"them unextracted and reports them as failures (first: {refused[0]})")

    checker = LiveChecker(
        refusing,
        settings.check_model,
        settings.check_prompt_version,
        cache,
        max_tokens=settings.check_max_tokens,
    )
    pairs: list[tuple[Claim, Claim]] = []
    bound_calls = 0
    for w in worlds:
        if embedder is not None:
            pairs.extend(oracle_pairs(w, embedder, engine_config))
        else:
            bound_calls += 2 * _upper_bound_pairs(w)
    pairs.extend(extra_pairs)
    est.stages["check"] = _check_stage(checker, pairs, settings, bound_calls, arm, worlds)
    if arm == "live":
        est.notes.append("live checks projected from the oracle extraction (an approximation)")
    if embedder is None and worlds:
        est.notes.append("no embedder given: the check count is an upper bound, not a projection")
    if refusing.refused:  # pragma: no cover - the estimate only renders prompts
        raise AssertionError("the estimate tried to call a model")
    return est


@dataclass
class _Tally:
    """Distinct calls of one stage of ``model``: cached ones are free and only counted, the
    others are counted with their projected input and output tokens, a fixed prefix the
    request marks for the prompt cache as a write for the first ``writers`` paid calls that
    share it and as a read after (see the module text)."""

    model: str
    writers: int
    seen: set[str] = field(default_factory=set)
    calls: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cache_write: int = 0
    cache_read: int = 0
    prefixes: dict[str, int] = field(default_factory=dict)

    def add(self, asker, system: str, prompt: str, out_tokens: Callable[[int], int]) -> None:
        """Count the call (``system``, ``prompt``) once; ``out_tokens(input_tokens)`` projects
        its answer's size (from its whole input, cached or not)."""
        key = asker.key(system, prompt)
        if key in self.seen:
            return
        self.seen.add(key)
        if asker.has(key):
            self.cached += 1
            return
        self.calls += 1
        n_in = approx_tokens(system + prompt) + MESSAGE_OVERHEAD_TOKENS
        self.tokens_out += out_tokens(n_in)
        marked = cached_prefix_chars(self.model, system, prompt)
        if marked:
            prefix = (system + prompt)[:marked]
            n_prefix = approx_tokens(prefix)
            earlier = self.prefixes.get(prefix, 0)
            self.prefixes[prefix] = earlier + 1
            if earlier < self.writers:
                self.cache_write += n_prefix
            else:
                self.cache_read += n_prefix
            n_in -= n_prefix
        self.tokens_in += n_in

    def estimate(self, stage: str, model: str, settings: LLMSettings, projection: Projection,
                 basis: str) -> StageEstimate:
        price = settings.price(model)
        cached = self.cache_write + self.cache_read
        return StageEstimate(
            stage=stage, model=model, calls=self.calls, cached_calls=self.cached,
            input_tokens=self.tokens_in, output_tokens=self.tokens_out,
            cache_write_tokens=self.cache_write, cache_read_tokens=self.cache_read,
            usd=cost_usd(price, input_tokens=self.tokens_in, output_tokens=self.tokens_out,
                         cache_read_input_tokens=self.cache_read,
                         cache_creation_input_tokens=self.cache_write),
            uncached_usd=(cost_usd(price, input_tokens=self.tokens_in + cached,
                                   output_tokens=self.tokens_out) if cached else None),
            projection=projection, basis=basis,
        )


def _extract_stage(
    worlds: list[World],
    documents: list[Document],
    settings: LLMSettings,
    cache: CallCache | None,
    slots: Mapping[str, str] | Sequence[str] | None,
    client: RefusingClient,
) -> tuple[StageEstimate, list[str]]:
    """The extract stage's projection, and the URIs of the documents whose expected answer
    the prompt version refuses (each priced as two attempts; see the module text)."""
    from rotbench.perception.oracle import OracleExtractor

    model = settings.extract_model
    jobs: list[tuple[LiveExtractor, Document, OracleExtractor | None]] = []
    readers: list[tuple[LiveExtractor, World]] = []
    for w in worlds:
        ex = LiveExtractor(
            client,
            model,
            settings.extract_prompt_for(w.generator_version),
            cache,
            slots=slots_from_world(w),
            max_tokens=settings.extract_max_tokens,
        )
        oracle = OracleExtractor(w)
        jobs.extend((ex, doc, oracle) for doc in world_documents(w))
        readers.append((ex, w))
    if documents:
        ex = LiveExtractor(
            client,
            model,
            settings.extract_prompt_for(None),
            cache,
            slots=slots or [],
            max_tokens=settings.extract_max_tokens,
        )
        jobs.extend((ex, d, None) for d in documents)
    def answer_tokens(ex: LiveExtractor, doc: Document,
                      oracle: OracleExtractor | None) -> Callable[[int], int]:
        """Projected answer size: the scripted answer's, in the JSON the prompt version asks
        for (``ExtractPrompt.answer_text``), or 0.6 x the input without one."""
        if oracle is None:
            return lambda n_in: int(0.6 * n_in)

        def scripted(n_in: int) -> int:
            return approx_tokens(ex.prompt.answer_text(oracle.extract(doc), doc)) + 1

        return scripted

    tally = _Tally(model, settings.concurrency)
    refused: list[str] = []
    for ex, doc, oracle in jobs:
        system, prompt = ex.request(doc)
        size = answer_tokens(ex, doc, oracle)
        before = tally.calls + tally.cached
        tally.add(ex._asker, system, prompt, size)
        if oracle is None or tally.calls + tally.cached == before:
            continue  # no scripted answer to check, or a prompt already counted
        error = _refusal(ex, doc, oracle)
        if error is not None:
            refused.append(doc.uri)
            tally.add(ex._asker, system, retry_prompt(prompt, error), size)
    questions = 0
    for ex, w in readers:
        oracle = OracleExtractor(w)
        for question in dict.fromkeys(p.question for p in w.probes):
            request = ex.question_request(question)
            if request is None:
                continue
            frame = oracle.read_question(question)
            size = approx_tokens(frame.model_dump_json() if frame else QUESTION_ANSWER) + 1
            before = tally.calls + tally.cached
            tally.add(ex._asker, *request, lambda n_in, size=size: size)
            questions += tally.calls + tally.cached - before
    basis = "one call per distinct document prompt (first attempts"
    basis += (f"; {len(refused)} refused answers priced with their retry)" if refused else
              "; retries not projected)")
    if questions:
        basis += f", plus one per distinct question read ({questions})"
    return tally.estimate("extract", model, settings, "exact", basis), refused


def _refusal(ex: LiveExtractor, doc: Document, oracle) -> str | None:
    """The one-line reason ``ex``'s prompt version refuses the oracle's answer for ``doc``
    (what the retry quotes), or None when it reads it."""
    text = ex.prompt.answer_text(oracle.extract(doc), doc)
    try:
        parse_answer(text, ex.prompt.answer_shape, ex.prompt.answer_context(doc))
    except InvalidAnswer as exc:
        return str(exc)
    return None


def _check_stage(
    checker: LiveChecker,
    pairs: list[tuple[Claim, Claim]],
    settings: LLMSettings,
    bound_calls: int,
    arm: str,
    worlds: list[World],
) -> StageEstimate:
    model = settings.check_model
    tally = _Tally(model, settings.concurrency)
    answer = approx_tokens(CHECK_ANSWER) + 1
    for older, newer in pairs:
        for _kind, system, prompt in checker.requests(older, newer):
            tally.add(checker._asker, system, prompt, lambda n_in: answer)
    if bound_calls:
        # No pair texts to render: price the bound at the mean size of a check call.
        per_in = approx_tokens(checker.prompt.systems["contradiction"]) + 120
        tally.calls += bound_calls
        tally.tokens_in += bound_calls * per_in
        tally.tokens_out += bound_calls * answer
    projection: Projection = "exact"
    if not worlds:
        basis = "two calls per given pair"
    elif bound_calls:
        basis = "every earlier claim of the same subject taken as a candidate (no embedder)"
        projection = "upper bound"
    elif arm == "live":
        basis = "two calls per pair the oracle deposit sends its checker (oracle extraction)"
        projection = "approximate"
    else:
        basis = "two calls per pair the oracle deposit sends its checker (if checks agree)"
    return tally.estimate("check", model, settings, projection, basis)
