"""Message Batches for the paid stages: submit many calls at once at half price, wait without
busy work, read each result into the call cache the moment it is read, never pay twice.

``BatchRunner.run(calls)`` for a list of ``BatchCall``:

1. drops every call already in the call cache (a batch run and a single-call run share it);
2. collects every batch an earlier run submitted and never read (a journal entry under
   ``<cache>/calls/_batches/<batch id>.json``) that holds any of the remaining calls, instead
   of submitting them again;
3. draws the rest from the run's budget (``rotbench.perception.calls.budget.SpendLedger``,
   at batch prices; a call the budget refuses is a failed call), submits them as one batch with one
   ``custom_id`` per call (its call-cache key), and writes the journal entry (the batch id
   and every custom id with its stage, key, model and prompt version) before waiting;
4. polls ``retrieve`` every ``poll_seconds`` (sleeping in between; a line on stderr when the
   count of finished requests changes) until the batch has ended, or raises ``BatchTimeout``
   after ``timeout_seconds``;
5. reads the results (any order): each success is written to the call cache, metered under
   its stage at batch prices and spent from the ledger as it is read; an errored, canceled
   or expired request is a failed call (the run is degraded; the next run submits only it).

A journal entry is collected once: a per-batch ``flock`` keeps two collectors (two worlds of
one run, or two runs) from reading and metering the same batch twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rotbench._util.regular import read_regular_text
from rotbench.contract.model_client import Completion
from rotbench.perception.calls.cache import CallCache
from rotbench.perception.calls.prices import BATCH_PRICE_FACTOR
from rotbench.perception.calls.redact import one_line
from rotbench.perception.calls.usage import UsageMeter

if TYPE_CHECKING:
    from rotbench.perception.model import LLMSettings

log = logging.getLogger("rotbench.perception.model")

JOURNAL_DIR = "_batches"
"""Folder of the batch journal, inside the call cache (``<cache>/calls/_batches``)."""
MAX_BATCH_REQUESTS = 100_000
"""The API's limit of requests per batch; a larger submission is split."""


class BatchTimeout(RuntimeError):
    """A batch still in progress after ``--batch-timeout`` (one line saying how to collect
    it later)."""


class BatchCall(BaseModel):
    """One call to submit: where its answer is cached and what is sent."""

    stage: str
    key: str = Field(description="The call-cache key; also the batch request's custom_id.")
    model: str
    prompt_version: str
    system: str
    prompt: str
    max_tokens: int


class JournalEntry(BaseModel):
    """One submitted batch, as the call cache remembers it."""

    batch_id: str
    label: str
    submitted_unix: float
    calls: dict[str, dict[str, str]] = Field(
        description="custom_id -> {stage, key, model, prompt_version}.")
    collected: bool = False
    failed: dict[str, str] = Field(default_factory=dict,
                                   description="custom_id -> one-line reason.")


class BatchOutcome(BaseModel):
    """What ``BatchRunner.run`` did: calls answered (now in the cache), failed ones with
    their reasons, the batches submitted and the ones collected from earlier runs."""

    answered: list[str] = Field(default_factory=list, description="Keys now in the cache.")
    failed: dict[str, str] = Field(default_factory=dict, description="key -> reason.")
    submitted: list[str] = Field(default_factory=list, description="Batch ids submitted.")
    resumed: list[str] = Field(default_factory=list,
                               description="Batch ids of earlier runs collected.")


def _now() -> float:
    return time.time()


class BatchRunner:
    """Runs ``BatchCall`` lists as Message Batches; see the module docstring.

    Args:
        api: an object with ``batch_create``, ``batch_retrieve``, ``batch_results`` (and
            ``batch_cancel``): ``rotbench.perception.model.AnthropicClient``.
        cache: the run's call cache.
        meter: where billed usage is recorded (batch pricing).
        settings: prices, poll interval and timeout (``batch_poll_seconds``,
            ``batch_timeout_seconds``).
        ledger: the run's ``SpendLedger``, or None (no budget).
        say: where progress lines go (default: stderr).
    """

    def __init__(self, api: Any, cache: CallCache, meter: UsageMeter, settings: LLMSettings,
                 ledger: Any = None, say: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.api = api
        self.cache = cache
        self.meter = meter
        self.settings = settings
        self.ledger = ledger
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.sleep = sleep
        self.journal = cache.root / JOURNAL_DIR

    def __getstate__(self) -> dict[str, Any]:  # never crosses a process: refuse loudly
        raise TypeError("a BatchRunner stays in the process that made it")

    # -- the journal ------------------------------------------------------------------------

    def _entry_path(self, batch_id: str) -> Path:
        safe = "".join(c for c in batch_id if c.isalnum() or c in "_-")[:100]
        return self.journal / f"{safe}.json"

    def _write(self, entry: JournalEntry) -> None:
        self.journal.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.journal)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(entry.model_dump_json())
            os.replace(tmp, self._entry_path(entry.batch_id))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _read(self, path: Path) -> JournalEntry | None:
        try:
            return JournalEntry.model_validate_json(read_regular_text(path))
        except (OSError, ValueError):
            return None

    def pending(self) -> list[JournalEntry]:
        """Journal entries of batches submitted and not yet collected, oldest first."""
        if not self.journal.is_dir():
            return []
        found = [e for p in sorted(self.journal.glob("[!.]*.json"))
                 if (e := self._read(p)) is not None and not e.collected]
        return sorted(found, key=lambda e: e.submitted_unix)

    @contextlib.contextmanager
    def _collecting(self, batch_id: str) -> Iterator[None]:
        self.journal.mkdir(parents=True, exist_ok=True)
        lock = self.journal / f".{self._entry_path(batch_id).stem}.lock"
        with open(lock, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # -- running ----------------------------------------------------------------------------

    def missing(self, calls: list[BatchCall]) -> list[BatchCall]:
        """The calls not in the call cache, each key once, in order."""
        seen: set[str] = set()
        out = []
        for c in calls:
            if c.key in seen:
                continue
            seen.add(c.key)
            if not self.cache.contains(c.stage, c.key, model=c.model,
                                       prompt_version=c.prompt_version):
                out.append(c)
        return out

    def run(self, calls: list[BatchCall], label: str) -> BatchOutcome:
        """Answer every call of ``calls`` into the call cache through batches (see the
        module docstring). Raises BatchTimeout, and ``FatalModelError`` (bad key) from the
        API; every other failure is a failed call in the outcome."""
        outcome = BatchOutcome()
        todo = self.missing(calls)
        if not todo:
            return outcome
        wanted = {c.key for c in todo}
        for entry in self.pending():
            if wanted & {v["key"] for v in entry.calls.values()}:
                self.say(f"batch {entry.batch_id} ({entry.label}): submitted by an earlier "
                         "run, collecting it instead of submitting again")
                self._collect(entry, outcome)
                outcome.resumed.append(entry.batch_id)
        todo = self.missing(todo)
        for start in range(0, len(todo), MAX_BATCH_REQUESTS):
            self._submit(todo[start:start + MAX_BATCH_REQUESTS], label, outcome)
        outcome.answered = [c.key for c in calls if c.key not in outcome.failed
                            and self.cache.contains(c.stage, c.key, model=c.model,
                                                    prompt_version=c.prompt_version)]
        for key in [k for k in outcome.failed if k in set(outcome.answered)]:
            del outcome.failed[key]  # failed in an earlier batch, answered by a later one
        return outcome

    def _hold(self, c: BatchCall) -> float:
        from rotbench.perception.calls.budget import most_cost_usd

        if self.ledger is None or self.ledger.budget.usd is None:
            return 0.0
        return most_cost_usd(self.settings, c.model, c.system, c.prompt, c.max_tokens,
                             factor=BATCH_PRICE_FACTOR)

    def _submit(self, calls: list[BatchCall], label: str, outcome: BatchOutcome) -> None:
        from rotbench.perception.calls.anthropic_client import message_params

        allowed: list[BatchCall] = []
        holds: dict[str, float] = {}
        if self.ledger is not None:
            from rotbench.perception.calls.budget import BudgetReached

            for c in calls:
                hold = self._hold(c)
                try:
                    self.ledger.reserve(hold)
                except BudgetReached as exc:
                    outcome.failed[c.key] = one_line(str(exc))
                    continue
                holds[c.key] = hold
                allowed.append(c)
        else:
            allowed = list(calls)
        if not allowed:
            return
        requests = [{"custom_id": c.key,
                     "params": message_params(model=c.model, system=c.system, prompt=c.prompt,
                                              max_tokens=c.max_tokens, prompt_cache=False)}
                    for c in allowed]
        try:
            batch_id = self.api.batch_create(requests)
        except BaseException:
            if self.ledger is not None:
                for c in allowed:
                    self.ledger.release(holds.get(c.key, 0.0))
            raise
        entry = JournalEntry(batch_id=batch_id, label=label, submitted_unix=_now(),
                             calls={c.key: {"stage": c.stage, "key": c.key, "model": c.model,
                                            "prompt_version": c.prompt_version,
                                            "hold": repr(holds.get(c.key, 0.0))}
                                    for c in allowed})
        self._write(entry)  # before waiting: a run killed from here on collects it later
        outcome.submitted.append(batch_id)
        self.say(f"batch {batch_id} ({label}): submitted {len(allowed)} requests")
        self._collect(entry, outcome)

    def _wait(self, entry: JournalEntry) -> None:
        """Poll until the batch has ended (a sleep between looks); BatchTimeout after
        ``batch_timeout_seconds`` counted from its submission."""
        timeout = self.settings.batch_timeout_seconds
        poll = self.settings.batch_poll_seconds
        total = len(entry.calls)
        last = -1
        while True:
            status, counts = self.api.batch_retrieve(entry.batch_id)
            done = total - counts.get("processing", 0)
            if status == "ended":
                if last != total:
                    self.say(f"batch {entry.batch_id} ({entry.label}): {total} of {total} "
                             "done")
                return
            if done != last:
                self.say(f"batch {entry.batch_id} ({entry.label}): {done} of {total} done")
                last = done
            waited = _now() - entry.submitted_unix
            if waited >= timeout:
                raise BatchTimeout(
                    f"batch {entry.batch_id} ({entry.label}) still in progress after "
                    f"{waited / 3600:.2f} h (--batch-timeout {timeout:g} s); nothing is lost: "
                    "its id is kept in the call cache, and running the same command again "
                    "collects it once it has ended instead of submitting again")
            self.sleep(min(poll, max(timeout - waited, 0.0)) or poll)

    def _collect(self, entry: JournalEntry, outcome: BatchOutcome) -> None:
        """Wait for the batch, then read every result into the cache (once, under its
        lock): successes cached, metered and spent; the rest failed calls."""
        self._wait(entry)
        with self._collecting(entry.batch_id):
            fresh = self._read(self._entry_path(entry.batch_id))
            if fresh is not None and fresh.collected:  # another collector was first
                for cid, reason in fresh.failed.items():
                    outcome.failed[fresh.calls[cid]["key"]] = reason
                return
            seen: set[str] = set()
            for custom_id, result in self.api.batch_results(entry.batch_id):
                meta = entry.calls.get(custom_id)
                if meta is None or custom_id in seen:
                    continue  # not ours (never expected from the API), or a duplicate line
                seen.add(custom_id)
                hold = float(meta.get("hold", "0") or 0)
                if isinstance(result, Completion):
                    self._keep(meta, result, hold)
                else:
                    entry.failed[custom_id] = result
                    if self.ledger is not None:
                        self.ledger.release(hold)
            for custom_id in set(entry.calls) - seen:
                entry.failed[custom_id] = "no result for this request in the batch"
            entry.collected = True
            self._write(entry)
        for custom_id, reason in entry.failed.items():
            outcome.failed[entry.calls[custom_id]["key"]] = reason
        if entry.failed:
            self.say(f"batch {entry.batch_id} ({entry.label}): {len(entry.failed)} of "
                     f"{len(entry.calls)} requests failed (errored, canceled or expired); "
                     "the next run submits only those")

    def _keep(self, meta: dict[str, str], completion: Completion, hold: float) -> None:
        from rotbench.perception.calls.prices import cost_usd

        stage, model = meta["stage"], meta["model"]
        try:
            self.cache.put(stage, meta["key"], completion, model=model,
                           prompt_version=meta["prompt_version"])
        except OSError as exc:
            log.warning("could not write call cache entry %s: %s", meta["key"],
                        one_line(str(exc)))
        self.meter.record(stage, model, completion.usage, response_model=completion.model,
                          batch=True)
        if self.ledger is not None:
            u = completion.usage
            usd = cost_usd(self.settings.price(model) or self.settings.price(completion.model),
                           input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                           cache_read_input_tokens=u.cache_read_input_tokens,
                           cache_creation_input_tokens=u.cache_creation_input_tokens)
            self.ledger.spend((usd or 0.0) * BATCH_PRICE_FACTOR, hold)


def journal_summary(cache: CallCache) -> list[dict[str, Any]]:
    """Every batch in the journal: id, label, requests, collected, failed (for the docs'
    ``rotbench`` users and tests)."""
    root = cache.root / JOURNAL_DIR
    out = []
    for p in sorted(root.glob("[!.]*.json")) if root.is_dir() else []:
        try:
            e = JournalEntry.model_validate_json(read_regular_text(p))
        except (OSError, ValueError):
            continue
        out.append({"batch_id": e.batch_id, "label": e.label, "requests": len(e.calls),
                    "collected": e.collected, "failed": len(e.failed)})
    return out
