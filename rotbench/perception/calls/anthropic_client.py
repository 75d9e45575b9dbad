"""``ModelClient`` on the official Anthropic SDK, metering every response.

Retries and backoff are the SDK's own (``max_retries`` attempts after the first, on 408, 409,
429, 5xx, 529, timeouts and connection errors, honouring ``retry-after`` / ``retry-after-ms``).
This module adds no retry loop: a call that still fails is raised as ``ModelCallError`` for the
perception objects to record, or as ``FatalModelError`` when no later call could succeed.

The API key is resolved once (argument, else ``ANTHROPIC_API_KEY``), handed to the SDK and
registered for redaction. It is never part of a repr, a pickle, an error message or a log line
written by this package.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from rotbench.contract.model_client import Completion, Usage
from rotbench.perception.calls.records import FatalModelError, ModelCallError
from rotbench.perception.calls.redact import one_line, register_secret
from rotbench.perception.calls.usage import UsageMeter

log = logging.getLogger("rotbench.perception.model")

API_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_STAGE = "default"


class MissingApiKey(RuntimeError):
    """No API key: neither passed nor in ``ANTHROPIC_API_KEY``. Raised before any work starts."""

    def __init__(self) -> None:
        super().__init__(
            f"{API_KEY_ENV} is not set: the probe and live arms call the Anthropic API; export "
            f"{API_KEY_ENV}=... (or use --estimate, or the oracle arm, which make no calls)"
        )


def require_api_key(api_key: str | None = None) -> str:
    """The API key to use: ``api_key`` if given, else ``$ANTHROPIC_API_KEY``.

    Call it up front (before generating worlds or touching caches) so a missing key fails in
    one line before anything runs. Raises MissingApiKey when both are empty.
    """
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
    key = key.strip()
    if not key:
        raise MissingApiKey()
    register_secret(key)
    problem = key_shape_problem(key)
    if problem:
        raise MalformedApiKey(problem)
    return key


MAX_API_KEY_CHARS = 512
"""Longest API key accepted, in characters (Anthropic's keys are about 108)."""


class MalformedApiKey(MissingApiKey):
    """The API key cannot be sent as an HTTP header (a newline or another character outside
    printable ASCII, or far too long): every call would fail, so the run is refused before
    any. The message never shows the key."""

    def __init__(self, problem: str) -> None:
        RuntimeError.__init__(self, f"{API_KEY_ENV} {problem}; no model call was made (check "
                              "how the key was exported: a pasted line break, quotes)")


def key_shape_problem(key: str) -> str | None:
    """Why ``key`` (already stripped of outer whitespace) cannot be an API key, or None. Says
    what is wrong and where, never the key itself."""
    if len(key) > MAX_API_KEY_CHARS:
        return f"is {len(key)} characters long (at most {MAX_API_KEY_CHARS})"
    for index, ch in enumerate(key):
        if not "\x21" <= ch <= "\x7e":
            what = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab",
                    " ": "a space"}.get(ch, f"character U+{ord(ch):04X}")
            return (f"holds {what} at character {index + 1} of {len(key)}: a key is printable "
                    "ASCII without spaces")
    return None


def _fatal_types() -> tuple[type[BaseException], ...]:
    import anthropic

    return (
        anthropic.AuthenticationError,
        anthropic.PermissionDeniedError,
        anthropic.NotFoundError,
        anthropic.PaymentRequiredError,
    )


class AnthropicClient:
    """A thread-safe ``ModelClient`` backed by ``anthropic.Anthropic``.

    Args:
        api_key: the key; default ``$ANTHROPIC_API_KEY``. Raises MissingApiKey when neither.
        base_url: API root, e.g. a loopback fake ``http://127.0.0.1:PORT``; default the SDK's
            (``$ANTHROPIC_BASE_URL`` or the public API).
        max_retries: SDK retries after the first attempt.
        timeout_seconds: per-attempt timeout in seconds.
        meter: where usage is recorded; a new ``UsageMeter`` (no prices) by default.
        stage: the meter key for this view; see ``for_stage``.

    ``complete`` returns a ``Completion`` (text of all text blocks joined, the model id the API
    reports, token usage) and records the usage under ``stage``. It raises ``ModelCallError``
    (one line) for a call that failed after retries or returned an unusable body, and
    ``FatalModelError`` for 401/402/403/404.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout_seconds: float = 120.0,
        *,
        meter: UsageMeter | None = None,
        stage: str = DEFAULT_STAGE,
        _sdk: Any = None,
    ) -> None:
        self.base_url = base_url
        self.max_retries = max_retries
        self.timeout_seconds = timeout_seconds
        self.stage = stage
        self.meter = meter if meter is not None else UsageMeter()
        if _sdk is None:
            key = require_api_key(api_key)
            import anthropic

            _sdk = anthropic.Anthropic(
                api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout_seconds
            )
        self._sdk = _sdk

    def for_stage(self, stage: str) -> AnthropicClient:
        """A view of this client that meters under ``stage`` (same connection pool and meter)."""
        return AnthropicClient(
            base_url=self.base_url,
            max_retries=self.max_retries,
            timeout_seconds=self.timeout_seconds,
            meter=self.meter,
            stage=stage,
            _sdk=self._sdk,
        )

    def __repr__(self) -> str:
        return (
            f"AnthropicClient(base_url={self.base_url!r}, stage={self.stage!r}, "
            f"max_retries={self.max_retries}, timeout_seconds={self.timeout_seconds})"
        )

    # Pickling keeps configuration only: the key and the SDK client stay in this process.
    # An unpickled client resolves the key again from the environment.
    def __getstate__(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "max_retries": self.max_retries,
            "timeout_seconds": self.timeout_seconds,
            "stage": self.stage,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def close(self) -> None:
        """Close the underlying connection pool (shared with every ``for_stage`` view)."""
        self._sdk.close()

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        """One Messages call with a single user turn; see the class docstring for errors."""
        kwargs = message_params(model=model, system=system, prompt=prompt,
                                max_tokens=max_tokens)
        msg = self._api(lambda: self._sdk.messages.create(**kwargs), f"calling {model!r}")
        usage = usage_of(msg)
        self.meter.record(self.stage, model, usage, response_model=msg.model)
        return completion_of(msg, usage)

    # -- Message Batches (rotbench.perception.calls.batch drives them) -------------------

    def batch_create(self, requests: list[dict[str, Any]]) -> str:
        """Submit ``requests`` (``{"custom_id", "params"}`` each) as one Message Batch;
        returns its id. Raises ModelCallError / FatalModelError like ``complete``."""
        batch = self._api(lambda: self._sdk.messages.batches.create(requests=requests),
                          "creating a message batch")
        return str(batch.id)

    def batch_retrieve(self, batch_id: str) -> tuple[str, dict[str, int]]:
        """(processing_status, request_counts) of a batch: 'in_progress', 'canceling' or
        'ended', and counts of processing / succeeded / errored / canceled / expired."""
        batch = self._api(lambda: self._sdk.messages.batches.retrieve(batch_id),
                          f"reading batch {batch_id}")
        c = batch.request_counts
        counts = {k: int(getattr(c, k, 0) or 0)
                  for k in ("processing", "succeeded", "errored", "canceled", "expired")}
        return str(batch.processing_status), counts

    def batch_cancel(self, batch_id: str) -> None:
        """Ask the API to cancel a batch (requests not yet processed end 'canceled')."""
        self._api(lambda: self._sdk.messages.batches.cancel(batch_id),
                  f"canceling batch {batch_id}")

    def batch_results(self, batch_id: str):
        """Each result of an ended batch as it is read (any order): (custom_id, Completion)
        for a success, (custom_id, one-line reason) for errored / canceled / expired. Not
        metered here: the caller records each success under its stage, at batch prices."""
        stream = self._api(lambda: self._sdk.messages.batches.results(batch_id),
                           f"reading the results of batch {batch_id}")
        for line in stream:
            result = line.result
            kind = getattr(result, "type", "?")
            if kind == "succeeded":
                try:
                    usage = usage_of(result.message)
                except ModelCallError as exc:  # a failed request of the batch, not metered
                    yield str(line.custom_id), str(exc)
                    continue
                yield str(line.custom_id), completion_of(result.message, usage)
            elif kind == "errored":
                err = getattr(getattr(result, "error", None), "error", None)
                what = getattr(err, "type", "error")
                yield str(line.custom_id), one_line(
                    f"batch request errored: {what}: {getattr(err, 'message', '')}")
            else:
                yield str(line.custom_id), f"batch request {kind}"

    def _api(self, call, what: str):
        """``call()`` with the SDK's errors turned into ours (see the class docstring)."""
        import anthropic

        try:
            return call()
        except _fatal_types() as exc:
            status = getattr(exc, "status_code", "?")
            raise FatalModelError(
                one_line(f"{type(exc).__name__} (HTTP {status}) {what}: {exc}")
            ) from None
        except anthropic.APIStatusError as exc:
            raise ModelCallError(
                one_line(
                    f"{type(exc).__name__} (HTTP {exc.status_code}) after "
                    f"{self.max_retries} retries: {exc.message}"
                )
            ) from None
        except anthropic.APITimeoutError:
            raise ModelCallError(
                f"timeout ({self.timeout_seconds} s per attempt) after {self.max_retries} retries"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise ModelCallError(
                one_line(f"connection error after {self.max_retries} retries: {exc}")
            ) from None
        except anthropic.APIError as exc:
            raise ModelCallError(one_line(f"{type(exc).__name__}: {exc}")) from None
        except ValueError as exc:  # a 200 whose body is not the Messages shape
            raise ModelCallError(one_line(f"unusable response body: {exc}")) from None


def message_params(*, model: str, system: str, prompt: str, max_tokens: int,
                   prompt_cache: bool = True) -> dict[str, Any]:
    """The Messages request body of one call: a single user turn. With ``prompt_cache``, the
    longest fixed prefix long enough for the model's prompt cache (the system prompt, or the
    system prompt and the user turn's slot list: ``prompt_cache.request_parts``) is marked
    ``cache_control`` (ephemeral); without it (Message Batches) nothing is marked and both
    go as plain text."""
    from rotbench.perception.calls.prompt_cache import request_parts

    system_field, content = (request_parts(model, system, prompt) if prompt_cache
                             else (system, prompt))
    return {"model": model, "max_tokens": max_tokens, "system": system_field,
            "messages": [{"role": "user", "content": content}]}


def usage_of(msg: Any) -> Usage:
    """A response's token usage (absent counts as 0). Raises ModelCallError (one line naming
    the field) when a count is not an integer from 0 to
    ``rotbench._util.ranges.MAX_TOKENS_PER_RESPONSE``: such a response is a failed call, and
    nothing of it is metered (negative tokens made negative dollars that credited the
    ledger, so a budget was never reached)."""
    from rotbench._util.ranges import MAX_TOKENS_PER_RESPONSE, range_problem

    u = msg.usage
    counts = {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
              "cache_read_input_tokens": getattr(u, "cache_read_input_tokens", 0) or 0,
              "cache_creation_input_tokens": getattr(u, "cache_creation_input_tokens", 0) or 0}
    for name, value in counts.items():
        problem = (f"usage.{name} must be an integer, got {type(value).__name__}"
                   if not isinstance(value, int) or isinstance(value, bool) else
                   range_problem(f"usage.{name}", value, 0, MAX_TOKENS_PER_RESPONSE))
        if problem:
            raise ModelCallError(one_line(f"unusable response: {problem}"))
    return Usage(**counts)


def completion_of(msg: Any, usage: Usage) -> Completion:
    """The ``Completion`` of a Messages response: its text blocks joined."""
    text = "".join(
        getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text"
    )
    return Completion(text=text, model=msg.model, usage=usage)
