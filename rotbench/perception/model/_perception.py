"""Model-backed perception: ``LiveExtractor`` (documents -> claim drafts) and ``LiveChecker``
(claim pairs -> two yes/no judgements).

Both go through one ``_Asker``: look the call up in the call cache, else call the model (at most
``concurrency`` calls in flight per object), write the completed call to the cache the moment
it returns, validate the answer, and on an invalid answer ask once more with a note saying what
was wrong. What still fails becomes a ``CallFailure`` in ``stats``; the caller gets an empty
extraction or an undecided (None) judgement, never an exception. Only ``FatalModelError``,
``RefusedCall`` and ``BaseException`` (Ctrl-C, a kill) propagate.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from typing import TypeVar

from pydantic import BaseModel

from rotbench.contract.engine import Document
from rotbench.contract.model_client import Completion, ModelClient, RefusedCall
from rotbench.contract.perception import Claim, ClaimDraft, Judgement, QuestionFrame
from rotbench.perception.calls.budget import BudgetReached
from rotbench.perception.calls.cache import CallCache, call_key
from rotbench.perception.calls.records import CallFailure, FatalModelError, PerceptionStats
from rotbench.perception.calls.redact import one_line
from rotbench.perception.model._prompts import (
    CHECK_KINDS,
    CHECK_PROMPTS,
    DEFAULT_CHECK_PROMPT,
    DEFAULT_EXTRACT_PROMPT,
    EXTRACT_PROMPTS,
    CheckKind,
    InvalidAnswer,
    YesNoAnswer,
    parse_answer,
    retry_prompt,
)
from rotbench.world.models import World

log = logging.getLogger("rotbench.perception.model")

EXTRACTOR_LOGIC_VERSION = "live-extractor-1"
CHECKER_LOGIC_VERSION = "live-checker-1"


def live_extractor_stamp(model: str, prompt_version: str) -> str:
    """The stamp a ``LiveExtractor`` on ``model`` with extraction prompt ``prompt_version``
    carries (and its cache keys name), without building one."""
    return f"{EXTRACTOR_LOGIC_VERSION}:{model}:{prompt_version}"

A = TypeVar("A", bound=BaseModel)
T = TypeVar("T")
R = TypeVar("R")


def _bind_stage(client: ModelClient, stage: str) -> ModelClient:
    """``client.for_stage(stage)`` when the client meters by stage, else the client itself."""
    for_stage = getattr(client, "for_stage", None)
    return for_stage(stage) if callable(for_stage) else client


class _Asker:
    """Cached, validated, counted calls for one stage of one perception object."""

    def __init__(
        self,
        *,
        client: ModelClient,
        stage: str,
        model: str,
        prompt_version: str,
        stamp: str,
        cache: CallCache | None,
        max_tokens: int,
        concurrency: int,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.client = _bind_stage(client, stage)
        self.stage = stage
        self.model = model
        self.prompt_version = prompt_version
        self.cache = cache
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self._in_flight = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._memo: dict[str, Completion] = {}
        self._stats = PerceptionStats(stage=stage, stamp=stamp)
        self.batch_paid: set[str] = set()
        """Keys this object paid for in a Message Batch: their first read from the call
        cache counts as a call, not a cache hit."""

    # -- counters ---------------------------------------------------------------------------

    def count(self, **deltas: int) -> None:
        with self._lock:
            for name, d in deltas.items():
                setattr(self._stats, name, getattr(self._stats, name) + d)

    def fail(self, failure: CallFailure) -> None:
        log.warning("%s failure on %s: %s", failure.stage, failure.item, failure.reason)
        with self._lock:
            self._stats.failures.append(failure)
            if failure.kind == "call":
                self._stats.failed_calls += 1

    def stats(self) -> PerceptionStats:
        with self._lock:
            return self._stats.model_copy(deep=True)

    # -- calls ------------------------------------------------------------------------------

    def key(self, system: str, prompt: str) -> str:
        return call_key(
            stage=self.stage,
            model=self.model,
            prompt_version=self.prompt_version,
            system=system,
            prompt=prompt,
            max_tokens=self.max_tokens,
        )

    def is_cached(self, system: str, prompt: str) -> bool:
        return self.has(self.key(system, prompt))

    def has(self, key: str) -> bool:
        """True when the call with this ``key`` has completed (this process or the cache)."""
        if key in self._memo:
            return True
        if self.cache is None:
            return False
        return self.cache.contains(
            self.stage, key, model=self.model, prompt_version=self.prompt_version
        )

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            lock = self._key_locks.get(key)
            if lock is None:
                lock = self._key_locks[key] = threading.Lock()
            return lock

    def _complete(self, system: str, prompt: str, item: str) -> Completion | None:
        """The completion for this exact call: from memory, the call cache, or the model.

        One call per key at a time (single flight): a second thread asking the same thing
        waits and then reads the first one's answer, so identical calls are paid once.
        """
        key = self.key(system, prompt)
        with self._key_lock(key):
            hit = self._memo.get(key) or self._cached(key)
            if hit is not None:
                self._memo[key] = hit
                self._hit(key)
                return hit
            if self.cache is None:
                return self._call(key, system, prompt, item)
            with self.cache.claim(self.stage, key):  # another process may be paying for it
                hit = self._cached(key)
                if hit is not None:
                    self._memo[key] = hit
                    self._hit(key)
                    return hit
                return self._call(key, system, prompt, item)

    def _hit(self, key: str) -> None:
        with self._lock:
            paid = key in self.batch_paid
            self.batch_paid.discard(key)
        self.count(**({"calls": 1} if paid else {"cache_hits": 1}))

    def _cached(self, key: str) -> Completion | None:
        if self.cache is None:
            return None
        return self.cache.get(self.stage, key, model=self.model, prompt_version=self.prompt_version)

    def _call(self, key: str, system: str, prompt: str, item: str) -> Completion | None:
        """Call the model (one of ``concurrency`` slots), memoise and cache the answer.

        Behind the run's call gate (``GatedClient.held``) the slot is held until the answer
        is in the call cache, not only while the request is out: a run killed at any moment
        then owes again at most the calls holding a slot (``--concurrency``), never one
        answered but not yet written."""
        held = getattr(self.client, "held", None)
        try:
            with held() if callable(held) else contextlib.nullcontext():
                return self._call_and_cache(key, system, prompt, item)
        except BudgetReached as exc:  # refused before a slot was taken (``_call_and_cache``
            # records its own): the same unanswered item
            self.fail(CallFailure(stage=self.stage, item=item, key=key, kind="call",
                                  reason=one_line(f"{type(exc).__name__}: {exc}")))
            return None

    def _call_and_cache(self, key: str, system: str, prompt: str,
                        item: str) -> Completion | None:
        try:
            with self._in_flight:
                completion = self.client.complete(
                    model=self.model, system=system, prompt=prompt, max_tokens=self.max_tokens
                )
        except (FatalModelError, RefusedCall, TypeError, AttributeError, NameError):
            raise  # configuration or programming errors: every call would fail the same way
        except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
            self.fail(
                CallFailure(
                    stage=self.stage,
                    item=item,
                    key=key,
                    kind="call",
                    reason=one_line(f"{type(exc).__name__}: {exc}"),
                )
            )
            return None
        self.count(calls=1)
        self._memo[key] = completion
        if self.cache is not None:
            try:
                self.cache.put(
                    self.stage,
                    key,
                    completion,
                    model=self.model,
                    prompt_version=self.prompt_version,
                )
            except OSError as exc:
                log.warning("could not write call cache entry %s: %s", key, one_line(str(exc)))
        return completion

    def ask(self, system: str, prompt: str, shape: type[A], item: str,
            context: Mapping[str, object] | None = None) -> A | None:
        """The validated answer, or None (failure recorded) after one retry of an invalid one.
        ``context``: the validation context of ``shape`` (see ``parse_answer``)."""
        answer, first_error = self._answer_of(system, prompt, shape, item, context)
        if first_error is None:
            return answer
        second_prompt = retry_prompt(prompt, first_error)
        answer, error = self._answer_of(system, second_prompt, shape, item, context)
        if error is not None:
            self.fail(CallFailure(stage=self.stage, item=item,
                                  key=self.key(system, second_prompt), kind="invalid_answer",
                                  reason=one_line(f"invalid twice: {first_error}; then {error}")))
        return answer

    def _answer_of(self, system: str, prompt: str, shape: type[A], item: str,
                   context: Mapping[str, object] | None) -> tuple[A | None, str | None]:
        """One call's outcome: (the valid answer, None); (None, None) when the call failed
        (``_complete`` recorded it); (None, the parse error) for an invalid answer (counted
        in ``invalid_answers``)."""
        completion = self._complete(system, prompt, item)
        if completion is None:
            return None, None
        try:
            return parse_answer(completion.text, shape, context), None
        except InvalidAnswer as exc:
            self.count(invalid_answers=1)
            return None, str(exc)


def _slot_map(slots: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(slots, Mapping):
        return {str(k): str(v) for k, v in slots.items()}
    return {str(k): str(k).replace("_", " ") for k in slots}


class _LivePerception:
    """What both model-backed seams share: a versioned prompt, a stamp, and an asker that
    caches, meters and limits the calls. Subclasses set ``stage``, ``_prompts``, ``_logic``."""

    stage: str
    _prompts: Mapping[str, object]
    _logic: str

    def _setup(self, client: ModelClient, model: str, prompt_version: str,
               cache: CallCache | None, max_tokens: int, concurrency: int) -> None:
        if prompt_version not in self._prompts:
            raise ValueError(
                f"unknown {self.stage} prompt version {prompt_version!r}; "
                f"available: {', '.join(self._prompts)}"
            )
        self.model = model
        self.prompt_version = prompt_version
        self.prompt = self._prompts[prompt_version]
        self.stamp = f"{self._logic}:{model}:{prompt_version}"
        self._asker = _Asker(client=client, stage=self.stage, model=model,
                             prompt_version=prompt_version, stamp=self.stamp, cache=cache,
                             max_tokens=max_tokens, concurrency=concurrency)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(stamp={self.stamp!r})"

    @property
    def stats(self) -> PerceptionStats:
        """Counts and failures so far (a copy)."""
        return self._asker.stats()


class LiveExtractor(_LivePerception):
    """An ``Extractor`` that asks a model for the claims in one document.

    Args:
        client: a ``ModelClient`` (an ``AnthropicClient`` is bound to stage 'extract').
        model: model id, e.g. 'claude-sonnet-4-6'.
        prompt_version: a key of ``EXTRACT_PROMPTS``.
        cache: the call cache, or None for none (every call paid).
        slots: the slot vocabulary: attribute key -> label (e.g. from ``slots_from_world``),
            or a sequence of keys. A slot the model names outside it becomes None.
        max_tokens: per call.
        concurrency: calls in flight at once, across every thread using this extractor
            (``extract_concurrently`` puts several documents in flight).

    The document's text reaches the model as it is, ``tool`` turns included; the prompt marks
    tool output and web pages as untrusted content. A document whose call fails after retries,
    or whose answer is invalid twice, yields ``[]`` and a ``CallFailure`` in ``stats``.

    From prompt ``extract-v2`` it also reads questions (``read_question``: one call per
    distinct question, cached like an extraction, metered under stage 'extract'). Prompt
    ``extract-v3`` (the default) adds what a claim does and when it holds: ``event``,
    ``valid_from``, ``valid_until`` (the model answers dates, read against the document's
    written date and turned into world days), ``corrects`` and ``multi_valued``; an answer
    whose fields disagree is invalid (asked once more with the reason).
    """

    stage = "extract"
    _prompts = EXTRACT_PROMPTS
    _logic = EXTRACTOR_LOGIC_VERSION

    def __init__(
        self,
        client: ModelClient,
        model: str,
        prompt_version: str = DEFAULT_EXTRACT_PROMPT,
        cache: CallCache | None = None,
        *,
        slots: Mapping[str, str] | Sequence[str],
        max_tokens: int = 2048,
        concurrency: int = 8,
    ) -> None:
        self._setup(client, model, prompt_version, cache, max_tokens, concurrency)
        self.slots = _slot_map(slots)

    def request(self, document: Document) -> tuple[str, str]:
        """The (system, user turn) sent for ``document`` (pure; used by the estimate)."""
        return self.prompt.system, self.prompt.render(document, self.slots)

    def is_cached(self, document: Document) -> bool:
        """True when the first call for ``document`` is already in the call cache."""
        return self._asker.is_cached(*self.request(document))

    def question_request(self, question: str) -> tuple[str, str] | None:
        """The (system, user turn) that reads ``question``; None when the prompt version
        reads no questions (pure; used by the estimate)."""
        system = self.prompt.question_system
        if system is None:
            return None
        return system, self.prompt.render_question(question, self.slots)

    def read_question(self, question: str) -> QuestionFrame | None:
        """What ``question`` asks (subject, slot, tense); None for a prompt version that reads
        no questions or a recorded failure. A slot outside the vocabulary is kept: it names
        something the store was never told."""
        request = self.question_request(question)
        if request is None:
            return None
        self._asker.count(requested=1)
        answer = self._asker.ask(*request, self.prompt.question_shape,
                                 item=f"question {question[:60]!r}")
        if answer is None:
            self._asker.count(undecided=1)
            return None
        return self.prompt.frame(answer)

    def extract(self, document: Document) -> list[ClaimDraft]:
        """The claims ``document`` supports, in order; ``[]`` on a recorded failure."""
        self._asker.count(requested=1)
        system, prompt = self.request(document)
        answer = self._asker.ask(system, prompt, self.prompt.answer_shape, item=document.uri,
                                 context=self.prompt.answer_context(document))
        if answer is None:
            self._asker.count(undecided=1)
            return []
        return self.prompt.drafts(answer, document, self.slots)


class LiveChecker(_LivePerception):
    """A ``Checker`` that asks a model two small yes/no questions per (older, newer) pair.

    Args:
        client: a ``ModelClient`` (an ``AnthropicClient`` is bound to stage 'check').
        model: model id, e.g. 'claude-haiku-4-5'.
        prompt_version: a key of ``CHECK_PROMPTS``.
        cache: the call cache, or None.
        concurrency: calls in flight at once (default 8); the 2 x len(pairs) calls of a
            ``judge`` run on a thread pool of at most this size.
        max_tokens: per call.

    A judgement whose call fails after retries, or whose answer is invalid twice, is None
    (undecided) and recorded in ``stats``.
    """

    stage = "check"
    _prompts = CHECK_PROMPTS
    _logic = CHECKER_LOGIC_VERSION

    def __init__(
        self,
        client: ModelClient,
        model: str,
        prompt_version: str = DEFAULT_CHECK_PROMPT,
        cache: CallCache | None = None,
        concurrency: int = 8,
        *,
        max_tokens: int = 64,
    ) -> None:
        self._setup(client, model, prompt_version, cache, max_tokens, concurrency)
        self._pool: ThreadPoolExecutor | None = None
        self._asked: dict[str, Future[bool | None]] = {}
        self._keys: dict[tuple[int, int], tuple[Claim, Claim, dict[str, str]]] = {}
        self._done = threading.Condition()

    def requests(self, older: Claim, newer: Claim) -> list[tuple[CheckKind, str, str]]:
        """The (kind, system, user turn) of both calls for one pair (pure; for the estimate)."""
        prompt = self.prompt.render(older, newer)
        return [(kind, self.prompt.systems[kind], prompt) for kind in CHECK_KINDS]

    def cached_calls(self, older: Claim, newer: Claim) -> int:
        """How many of the pair's two calls are already in the call cache (0..2)."""
        return sum(self._asker.is_cached(s, p) for _, s, p in self.requests(older, newer))

    def _ask(self, task: tuple[Claim, Claim, CheckKind]) -> bool | None:
        older, newer, kind = task
        self._asker.count(requested=1)
        answer = self._asker.ask(
            self.prompt.systems[kind],
            self.prompt.render(older, newer),
            YesNoAnswer,
            item=f"{older.id} -> {newer.id} ({kind})",
        )
        if answer is None:
            self._asker.count(undecided=1)
            return None
        return answer.answer == "yes"

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        """One ``Judgement`` per (older, newer) pair, in order; None fields are undecided.

        Questions already asked through ``prefetch`` are not asked again: their answers
        (or failures) are taken as they come."""
        futures = self._submit(pairs)
        try:
            answers = [f.result() for f in futures]
        except BaseException:
            self.cancel_pending()
            raise
        return [
            Judgement(contradicts=answers[2 * i], new_value_for_slot=answers[2 * i + 1])
            for i in range(len(pairs))
        ]

    # -- asking ahead (see rotbench.reference.lookahead) ---------------------------------------

    def _task_key(self, older: Claim, newer: Claim, kind: CheckKind) -> str:
        """The call key of one question (memoised per pair object: rendering and hashing a
        prompt costs more than the lookahead's bookkeeping around it)."""
        memo = self._keys.get((id(older), id(newer)))
        if memo is None or memo[0] is not older or memo[1] is not newer:
            rendered = self.prompt.render(older, newer)
            keys = {k: self._asker.key(self.prompt.systems[k], rendered) for k in CHECK_KINDS}
            memo = self._keys[(id(older), id(newer))] = (older, newer, keys)
        return memo[2][kind]

    def _submit(self, pairs: list[tuple[Claim, Claim]]) -> list[Future[bool | None]]:
        """Both questions of every pair, each asked once per checker: the future of an
        earlier ask is reused."""
        out = []
        with self._done:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._asker.concurrency,
                                                thread_name_prefix="rotbench-check")
            for older, newer in pairs:
                for kind in CHECK_KINDS:
                    key = self._task_key(older, newer, kind)
                    future = self._asked.get(key)
                    if future is None or future.cancelled():
                        future = self._pool.submit(self._ask, (older, newer, kind))
                        future.add_done_callback(self._notify)
                        self._asked[key] = future
                    out.append(future)
        return out

    def _notify(self, _future: Future[bool | None]) -> None:
        with self._done:
            self._done.notify_all()

    def prefetch(self, pairs: list[tuple[Claim, Claim]]) -> None:
        """Start asking both questions of each pair now, without waiting. Only for pairs
        whose judgement will certainly be asked for: each call is paid."""
        self._submit(pairs)

    def asked(self, older: Claim, newer: Claim) -> bool:
        """True when both questions of the pair have been asked (finished or not)."""
        with self._done:
            for kind in CHECK_KINDS:
                future = self._asked.get(self._task_key(older, newer, kind))
                if future is None or future.cancelled():
                    return False
        return True

    def known(self, older: Claim, newer: Claim) -> Judgement | None:
        """The pair's judgement when both of its questions have finished (answered, or
        failed and undecided), else None. Never waits and never asks; re-raises a fatal
        error (``FatalModelError``, ``RefusedCall``) one of them met."""
        answers = []
        with self._done:
            for kind in CHECK_KINDS:
                future = self._asked.get(self._task_key(older, newer, kind))
                if future is None or not future.done() or future.cancelled():
                    return None
                answers.append(future)
        for f in answers:
            if f.exception() is not None:  # a fatal error: every call would fail alike
                raise f.exception()  # type: ignore[misc]
        return Judgement(contradicts=answers[0].result(), new_value_for_slot=answers[1].result())

    def room(self) -> int:
        """How many more questions may be queued ahead: twice the concurrency, less those
        asked and not yet finished."""
        with self._done:
            busy = sum(1 for f in self._asked.values() if not f.done())
        return max(0, 2 * self._asker.concurrency - busy)

    def wait(self, timeout_seconds: float) -> None:
        """Block until any question finishes, or ``timeout_seconds`` pass."""
        with self._done:
            self._done.wait(timeout_seconds)

    def cancel_pending(self) -> None:
        """On an interruption: drop every question queued and not yet started, and wait for
        those already running, so each completed call is in the call cache before the
        interruption goes on."""
        with self._done:
            futures = list(self._asked.values())
        for future in futures:
            future.cancel()
        wait_for(futures)


def slots_from_world(world: World) -> dict[str, str]:
    """The slot vocabulary of a world: attribute key -> label."""
    return {a.key: a.label for a in world.attributes}
