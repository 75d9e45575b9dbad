"""The model client an engine under test gets on the paid arms: cached and metered."""

from __future__ import annotations

from rotbench.contract.model_client import Completion, ModelClient
from rotbench.perception.calls.cache import CallCache, call_key

ENGINE_PROMPT_VERSION = "engine"
"""The cache entries of an engine's own calls are keyed by their full text, not a version."""


class CachedModelClient:
    """A ``ModelClient`` whose completed calls are cached under ``<cache>/calls/<stage>/`` and
    metered under ``stage`` (when the wrapped client has ``for_stage``), so an engine's own
    calls are never paid twice and appear in the run's usage. ``default_model`` is the run's
    extraction model, for an engine that has no model of its own to name. Raises what the
    wrapped client raises."""

    def __init__(self, client: ModelClient, cache: CallCache, stage: str,
                 default_model: str | None = None) -> None:
        self.stage = stage
        self.default_model = default_model
        self.cache = cache
        for_stage = getattr(client, "for_stage", None)
        self.client = for_stage(stage) if callable(for_stage) else client

    def complete(self, *, model: str, system: str, prompt: str, max_tokens: int) -> Completion:
        """One Messages call (or its cached completion)."""
        key = self.key(model=model, system=system, prompt=prompt, max_tokens=max_tokens)
        cached = self.cache.get(self.stage, key, model=model,
                                prompt_version=ENGINE_PROMPT_VERSION)
        if cached is not None:
            return cached
        done = self.client.complete(model=model, system=system, prompt=prompt,
                                    max_tokens=max_tokens)
        self.cache.put(self.stage, key, done, model=model, prompt_version=ENGINE_PROMPT_VERSION)
        return done

    def key(self, *, model: str, system: str, prompt: str, max_tokens: int) -> str:
        """The cache key of one call (what an estimate checks against the cache)."""
        return call_key(stage=self.stage, model=model, prompt_version=ENGINE_PROMPT_VERSION,
                        system=system, prompt=prompt, max_tokens=max_tokens)

    def has(self, key: str, model: str) -> bool:
        """True when the call of ``key`` is in the cache (it would be free)."""
        return self.cache.get(self.stage, key, model=model,
                              prompt_version=ENGINE_PROMPT_VERSION) is not None
