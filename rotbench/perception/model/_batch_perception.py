"""Model-backed perception in batch mode (``--batch``): the same extractor and checker, their
calls sent as Message Batches (``rotbench.perception.calls.batch``) instead of one request each.

- Extraction: ``batch_extraction`` submits every document and probe question of every world
  of the run as one batch (documents are independent), then one more batch for the answers
  that came back invalid (the retry with a note, as single calls do). The worlds' extractors
  then read every answer from the call cache.
- Checks: ``BatchChecker`` asks nothing until the deposit has to wait. It collects the
  questions the deposit needs now and every question the lookahead
  (``rotbench.reference.lookahead``) finds certain to be asked whatever the pending answers say;
  when the deposit can go no further it submits all of them as one batch: a round. The
  number of rounds per world is in ``BatchChecker.rounds``.

In batch mode no call is made one by one: a call a batch did not answer (errored, canceled,
expired, refused by the budget) reaches ``BatchOnlyClient``, which fails it with the batch's
reason. The item is recorded as a failed call, the run is degraded, and the next run submits
only that call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future

from pydantic import BaseModel

from rotbench.contract.model_client import Completion
from rotbench.contract.perception import Claim, Judgement
from rotbench.perception.calls.batch import BatchCall, BatchOutcome, BatchRunner
from rotbench.perception.calls.cache import call_key
from rotbench.perception.calls.records import ModelCallError
from rotbench.perception.model._perception import LiveChecker, LiveExtractor, _Asker
from rotbench.perception.model._prompts import (
    CHECK_KINDS,
    CheckKind,
    InvalidAnswer,
    YesNoAnswer,
    parse_answer,
    retry_prompt,
)

NOT_BATCHED = ("not answered by its message batch (errored, canceled or expired); the next "
               "run submits it again")


class BatchOnlyClient:
    """The client of batch-mode perception: it makes no call. Every call that reaches it was
    left unanswered by a batch; it raises ModelCallError with that batch's reason (recorded
    as a failed call)."""

    def __init__(self, stage: str = "default", prompt_version: str = "",
                 reasons: dict[str, str] | None = None) -> None:
        self.stage = stage
        self.prompt_version = prompt_version
        self.reasons: dict[str, str] = reasons if reasons is not None else {}

    def for_stage(self, stage: str) -> BatchOnlyClient:
        return BatchOnlyClient(stage, self.prompt_version, self.reasons)

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        key = call_key(stage=self.stage, model=model, prompt_version=self.prompt_version,
                       system=system, prompt=prompt, max_tokens=max_tokens)
        raise ModelCallError(self.reasons.get(key, NOT_BATCHED))


def _call(asker: _Asker, system: str, prompt: str) -> BatchCall:
    return BatchCall(stage=asker.stage, key=asker.key(system, prompt), model=asker.model,
                     prompt_version=asker.prompt_version, system=system, prompt=prompt,
                     max_tokens=asker.max_tokens)


def _needed(asker: _Asker, system: str, prompt: str, shape: type[BaseModel],
            context: Mapping[str, object] | None = None) -> BatchCall | None:
    """The call still needed for this question: the first one when it is not cached, the
    retry when the cached first answer is invalid (``shape`` under ``context``) and the
    retry is not cached; else None."""
    first = asker._cached(asker.key(system, prompt))
    if first is None:
        return _call(asker, system, prompt)
    try:
        parse_answer(first.text, shape, context)
        return None
    except InvalidAnswer as exc:
        again = retry_prompt(prompt, str(exc))
        return None if asker.has(asker.key(system, again)) else _call(asker, system, again)


def _run_two_passes(runner: BatchRunner, asker: _Asker,
                    questions: Sequence[tuple[str, str, type[BaseModel],
                                              Mapping[str, object] | None]],
                    label: str, reasons: dict[str, str]) -> list[BatchOutcome]:
    """Answer ``questions`` ((system, user turn, answer shape, validation context)) through
    batches: the calls
    needed now, then the retries of answers that came back invalid. Keys paid are marked on
    ``asker`` (they count as calls, not cache hits); reasons of failed calls go in
    ``reasons``."""
    outcomes = []
    failed: set[str] = set()
    for attempt in ("", " (retries of invalid answers)"):
        calls = [c for s, p, shape, context in questions
                 if (c := _needed(asker, s, p, shape, context)) and c.key not in failed]
        calls = list({c.key: c for c in calls}.values())
        if not calls:
            break
        outcome = runner.run(calls, label + attempt)
        outcomes.append(outcome)
        with asker._lock:
            asker.batch_paid.update(k for k in outcome.answered)
        reasons.update(outcome.failed)
        failed.update(outcome.failed)  # failed now: not asked again in this run
    return outcomes


def batch_extraction(extractors: Sequence[tuple[LiveExtractor, Sequence, Sequence[str]]],
                     runner: BatchRunner) -> list[BatchOutcome]:
    """One batch for every extraction of a run: ``extractors`` holds, per world, (its live
    extractor, its documents, its probe questions). Documents or questions shared by worlds
    are asked once. Returns the outcomes (the first batch, then the retries' batch if any).
    Raises BatchTimeout, FatalModelError."""
    questions: list[tuple[str, str, type[BaseModel], Mapping[str, object] | None]] = []
    asker = None
    reasons: dict[str, str] = {}
    for extractor, documents, probe_questions in extractors:
        asker = extractor._asker
        for doc in documents:
            questions.append((*extractor.request(doc), extractor.prompt.answer_shape,
                              extractor.prompt.answer_context(doc)))
        for q in probe_questions:
            request = extractor.question_request(q)
            if request is not None:
                questions.append((*request, extractor.prompt.question_shape, None))
        reasons = extractor._asker.client.reasons if isinstance(
            extractor._asker.client, BatchOnlyClient) else reasons
    if asker is None:
        return []
    return _run_two_passes(runner, asker, questions, "extraction", reasons)


class BatchChecker(LiveChecker):
    """A ``LiveChecker`` whose questions go out in rounds of Message Batches (see the module
    docstring). Same answers, same ledger as the single-call checker on the same answers:
    only when they are asked differs. ``rounds``: batches submitted for first answers (a
    round's retries of invalid answers go in one more batch, not counted as a round)."""

    def __init__(self, model: str, prompt_version: str, cache, concurrency: int = 8, *,
                 max_tokens: int = 64, runner: BatchRunner, label: str = "checks") -> None:
        self.reasons: dict[str, str] = {}
        super().__init__(BatchOnlyClient(prompt_version=prompt_version, reasons=self.reasons),
                         model, prompt_version, cache, concurrency, max_tokens=max_tokens)
        self.runner = runner
        self.label = label
        self.rounds = 0
        self._pending: list[tuple[tuple[Claim, Claim, CheckKind], Future]] = []

    def _resolve(self, task: tuple[Claim, Claim, CheckKind], future: Future) -> None:
        if future.done():
            return
        try:
            future.set_result(self._ask(task))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever reads the answer
            future.set_exception(exc)

    def _submit(self, pairs: list[tuple[Claim, Claim]]) -> list[Future[bool | None]]:
        out: list[Future] = []
        ready = []
        with self._done:
            for older, newer in pairs:
                for kind in CHECK_KINDS:
                    key = self._task_key(older, newer, kind)
                    future = self._asked.get(key)
                    if future is None or future.cancelled():
                        future = Future()
                        self._asked[key] = future
                        task = (older, newer, kind)
                        system = self.prompt.systems[kind]
                        if _needed(self._asker, system, self.prompt.render(older, newer),
                                   YesNoAnswer) is None:
                            ready.append((task, future))  # answered by the call cache
                        else:
                            self._pending.append((task, future))
                    out.append(future)
        for task, future in ready:
            self._resolve(task, future)
        return out

    def flush(self) -> None:
        """Submit every question collected so far as one round, wait for it, and answer
        them all (from the call cache, or as failed calls)."""
        with self._done:
            pending, self._pending = self._pending, []
        pending = [(t, f) for t, f in pending if not f.cancelled()]
        if not pending:
            return
        self.rounds += 1
        questions = [(self.prompt.systems[kind], self.prompt.render(older, newer), YesNoAnswer,
                      None) for (older, newer, kind), _ in pending]
        try:
            _run_two_passes(self.runner, self._asker, questions,
                            f"{self.label} round {self.rounds}", self.reasons)
        except BaseException:
            with self._done:  # not asked: a later flush (or run) asks them again
                for task, future in pending:
                    self._asked.pop(self._task_key(*task), None)
                    future.cancel()
            raise
        for task, future in pending:
            self._resolve(task, future)
        with self._done:
            self._done.notify_all()

    def judge(self, pairs: list[tuple[Claim, Claim]]) -> list[Judgement]:
        """As ``LiveChecker.judge``; questions not answered yet are submitted now (a round)."""
        futures = self._submit(pairs)
        if not all(f.done() for f in futures):
            self.flush()
        answers = [f.result() for f in futures]
        return [Judgement(contradicts=answers[2 * i], new_value_for_slot=answers[2 * i + 1])
                for i in range(len(pairs))]

    def room(self) -> int:
        """Room for every question the lookahead can find: a round takes them all."""
        return 1_000_000

    def wait(self, timeout_seconds: float) -> None:
        """The deposit can go no further without answers: submit the round."""
        self.flush()

    def cancel_pending(self) -> None:
        with self._done:
            pending, self._pending = self._pending, []
        for _, future in pending:
            future.cancel()
