"""One call to get the model-backed perception of an arm, and one model to report it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from rotbench.llm._cache import CallCache
from rotbench.llm._perception import LiveChecker, LiveExtractor
from rotbench.llm._records import CallFailure, PerceptionStats
from rotbench.llm._settings import LLMSettings
from rotbench.llm._usage import UsageMeter, UsageReport
from rotbench.llm.client import ModelClient


class LLMRunSummary(BaseModel):
    """What the model-backed perception did in one run: for the report and the database.

    ``usage`` is what was billed (metered from responses); ``stats`` per stage counts cache
    hits (free), calls, invalid answers and undecided items; ``failures`` lists every item left
    unanswered, with a one-line reason. No secret appears in any field.
    """

    arm: str
    settings: LLMSettings
    stamps: dict[str, str] = Field(description="stage -> perception stamp.")
    usage: UsageReport
    stats: dict[str, PerceptionStats] = Field(description="stage -> counts and failures.")

    @property
    def failures(self) -> list[CallFailure]:
        return [f for s in self.stats.values() for f in s.failures]


@dataclass
class LivePerception:
    """The model-backed parts of a probe or live run, sharing one client, meter and cache.

    ``extractor`` is None for the probe arm (extraction stays scripted). Share one instance
    across all seeds of a run: the concurrency limit and the in-process de-duplication of
    identical calls then hold across worlds.
    """

    arm: str
    settings: LLMSettings
    client: ModelClient
    meter: UsageMeter
    cache: CallCache
    checker: LiveChecker
    extractor: LiveExtractor | None = None

    def summary(self) -> LLMRunSummary:
        """Usage, counts and failures so far."""
        parts: list[LiveExtractor | LiveChecker] = [self.checker]
        if self.extractor is not None:
            parts.insert(0, self.extractor)
        return LLMRunSummary(
            arm=self.arm,
            settings=self.settings,
            stamps={p.stage: p.stamp for p in parts},
            usage=self.meter.snapshot(),
            stats={p.stage: p.stats for p in parts},
        )


def build_perception(
    arm: str,
    settings: LLMSettings,
    *,
    cache_dir: str | os.PathLike[str],
    slots: Mapping[str, str] | Sequence[str],
    client: ModelClient | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> LivePerception:
    """The checker (probe, live) and extractor (live) of ``arm``, ready to run.

    Builds an ``AnthropicClient`` (``api_key``/``base_url``, the settings' retries and
    timeout, a meter priced by ``settings.prices``) unless ``client`` is given. A given
    client's ``meter`` gets the settings' prices; a client without one gets a fresh meter
    that stays empty (such a client meters nothing). Raises
    MissingApiKey (before anything else) without a key, ValueError for the oracle arm or an
    unknown arm.
    """
    if arm not in ("probe", "live"):
        raise ValueError(f"arm {arm!r} makes no model calls; build_perception is for probe, live")
    if client is None:
        from rotbench.llm.anthropic_client import AnthropicClient

        meter = UsageMeter(settings.prices)
        client = AnthropicClient(
            api_key=api_key,
            base_url=base_url,
            max_retries=settings.max_retries,
            timeout_seconds=settings.timeout_seconds,
            meter=meter,
        )
    else:
        meter = getattr(client, "meter", None)
        if isinstance(meter, UsageMeter):
            meter.set_prices(settings.prices)
        else:
            meter = UsageMeter(settings.prices)
    cache = CallCache(cache_dir)
    checker = LiveChecker(
        client,
        settings.check_model,
        settings.check_prompt_version,
        cache,
        settings.concurrency,
        max_tokens=settings.check_max_tokens,
    )
    extractor = None
    if arm == "live":
        extractor = LiveExtractor(
            client,
            settings.extract_model,
            settings.extract_prompt_version,
            cache,
            slots=slots,
            max_tokens=settings.extract_max_tokens,
            concurrency=settings.concurrency,
        )
    return LivePerception(
        arm=arm,
        settings=settings,
        client=client,
        meter=meter,
        cache=cache,
        checker=checker,
        extractor=extractor,
    )
