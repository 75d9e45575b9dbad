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

from rotbench.perception.client import Completion, Usage
from rotbench.perception.model._records import FatalModelError, ModelCallError
from rotbench.perception.model._redact import one_line, register_secret
from rotbench.perception.model._usage import UsageMeter

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
    return key


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
        import anthropic

        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": [{"role": "user", "content": prompt}],
        }
        try:
            msg = self._sdk.messages.create(**kwargs)
        except _fatal_types() as exc:
            status = getattr(exc, "status_code", "?")
            raise FatalModelError(
                one_line(f"{type(exc).__name__} (HTTP {status}) calling {model!r}: {exc}")
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

        u = msg.usage
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_input_tokens=u.cache_read_input_tokens or 0,
            cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
        )
        self.meter.record(self.stage, model, usage, response_model=msg.model)
        text = "".join(
            getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text"
        )
        return Completion(text=text, model=msg.model, usage=usage)
