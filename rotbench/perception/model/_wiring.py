"""One call to get the model-backed perception of an arm, and one model to report it."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from rotbench.contract.model_client import ModelClient
from rotbench.perception.calls.cache import CallCache
from rotbench.perception.calls.records import CallFailure, PerceptionStats
from rotbench.perception.calls.usage import UsageMeter, UsageReport
from rotbench.perception.model._perception import (
    LiveChecker,
    LiveExtractor,
    _slot_map,
    slots_from_world,
)
from rotbench.perception.model._settings import LLMSettings
from rotbench.world.models import World


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


class LivePerception:
    """The model-backed parts of a probe or live run, sharing one client, meter and cache.

    Plugs into ``rotbench.perception.arms.ArmRuntime.live``: ``extractor(world)`` and
    ``checker(world)``
    hand out the perception a world is read with, ``usage()`` and ``notes()`` what the report
    records. The checker is shared by every world it serves, and so is the extractor of
    every world with the same slot vocabulary (identical calls are de-duplicated in
    process). The run-wide bound on calls in flight is not kept here but by the client's
    gate (``rotbench.perception.calls.gate.GatedClient``), which every world's instance shares.
    """

    def __init__(
        self,
        arm: str,
        settings: LLMSettings,
        client: ModelClient,
        meter: UsageMeter,
        cache: CallCache,
        slots: Mapping[str, str] | Sequence[str] | None = None,
        batch_runner: Any = None,
        generator_version: str | None = None,
    ) -> None:
        self.arm = arm
        self.settings = settings
        self.client = client
        self.meter = meter
        self.cache = cache
        self.batch_runner = batch_runner
        """A ``rotbench.perception.model.BatchRunner`` in batch mode (extraction and checks go
        as Message Batches; engines' own calls stay single calls), else None."""
        self._lock = threading.Lock()
        self._extractors: dict[tuple[object, ...], LiveExtractor] = {}
        """(prompt version, *sorted slot vocabulary) -> the extractor of those worlds."""
        self.live_checker: LiveChecker
        if batch_runner is not None:
            from rotbench.perception.model._batch_perception import BatchChecker

            self.live_checker = BatchChecker(
                settings.check_model, settings.check_prompt_version, cache,
                settings.concurrency, max_tokens=settings.check_max_tokens,
                runner=batch_runner)
        else:
            self.live_checker = LiveChecker(
                client,
                settings.check_model,
                settings.check_prompt_version,
                cache,
                settings.concurrency,
                max_tokens=settings.check_max_tokens,
            )
        self.live_extractor: LiveExtractor | None = None
        if arm == "live" and slots is not None:
            self.live_extractor = self._extractor_for(slots, generator_version)

    def __repr__(self) -> str:
        return f"LivePerception(arm={self.arm!r}, client={self.client!r})"

    def _extractor_for(self, slots: Mapping[str, str] | Sequence[str],
                       generator_version: str | None) -> LiveExtractor:
        vocab = _slot_map(slots)
        version = self.settings.extract_prompt_for(generator_version)
        key = (version, *sorted(vocab.items()))
        with self._lock:
            ex = self._extractors.get(key)
            if ex is None:
                s = self.settings
                client = self.client
                if self.batch_runner is not None:
                    from rotbench.perception.model._batch_perception import BatchOnlyClient

                    client = BatchOnlyClient(prompt_version=version)
                ex = self._extractors[key] = LiveExtractor(
                    client,
                    s.extract_model,
                    version,
                    self.cache,
                    slots=vocab,
                    max_tokens=s.extract_max_tokens,
                    concurrency=s.concurrency,
                )
            return ex

    def extractor(self, world: World) -> LiveExtractor:
        """The live extractor for ``world`` (its attributes are the slot vocabulary; its
        generator chooses the prompt version unless the settings name one, see
        ``LLMSettings.extract_prompt_for``).

        Raises RuntimeError on the probe arm, whose extraction stays scripted."""
        if self.arm != "live":
            raise RuntimeError(f"arm {self.arm!r} extracts with the oracle, not a model")
        ex = self._extractor_for(slots_from_world(world), world.generator_version)
        if self.live_extractor is None:
            self.live_extractor = ex
        return ex

    def checker(self, world: World | None = None) -> LiveChecker:
        """The live checker (one for every world of the run)."""
        return self.live_checker

    def _parts(self) -> list[LiveExtractor | LiveChecker]:
        with self._lock:
            extractors = list(self._extractors.values())
        return [*extractors, self.live_checker]

    def stats(self) -> dict[str, PerceptionStats]:
        """Counts and failures per stage (summed over extractors of different vocabularies)."""
        out: dict[str, PerceptionStats] = {}
        for part in self._parts():
            st = part.stats
            if st.stage not in out:
                out[st.stage] = st
                continue
            acc = out[st.stage]
            for name in (
                "requested",
                "cache_hits",
                "calls",
                "failed_calls",
                "invalid_answers",
                "undecided",
            ):
                setattr(acc, name, getattr(acc, name) + getattr(st, name))
            acc.failures.extend(st.failures)
        return out

    def summary(self) -> LLMRunSummary:
        """Usage, counts and failures so far."""
        return LLMRunSummary(
            arm=self.arm,
            settings=self.settings,
            stamps={p.stage: p.stamp for p in self._parts()},
            usage=self.meter.snapshot(),
            stats=self.stats(),
        )

    def usage(self) -> dict[str, Any]:
        """For the report's ``usage`` field: flat totals first, then ``detail`` (the whole
        ``LLMRunSummary`` as JSON-ready data). Never contains a secret."""
        summary = self.summary()
        stats = summary.stats.values()
        return {
            "calls": summary.usage.calls,
            "cache_hits": sum(s.cache_hits for s in stats),
            "input_tokens": sum(u.input_tokens for u in summary.usage.stages.values()),
            "output_tokens": sum(u.output_tokens for u in summary.usage.stages.values()),
            "usd": summary.usage.total_usd,
            "failures": len(summary.failures),
            "detail": summary.model_dump(mode="json"),
        }

    def notes(self, max_failures_listed: int = 5) -> list[str]:
        """One-line notes for the report: calls per stage, dollars, failures (first few)."""
        summary = self.summary()
        notes = []
        for stage, st in summary.stats.items():
            u = summary.usage.stages.get(stage)
            usd = "dollars unknown (no price configured)"
            if u is not None and u.usd is not None:
                usd = f"US${u.usd:.4f}"
            elif u is None:
                usd = "US$0"
            notes.append(
                f"model {stage} ({st.stamp}): {st.calls} calls paid, {st.cache_hits} from the "
                f"call cache, {st.invalid_answers} invalid answers, {st.undecided} undecided; "
                f"{usd}"
            )
        rounds = getattr(self.live_checker, "rounds", None)
        if rounds is not None:
            notes.append(f"model check batches: {rounds} rounds (Message Batches, billed at "
                         "half price)")
        failures = summary.failures
        if failures:
            notes.append(
                f"model failures: {len(failures)} items left unanswered (extraction empty or "
                f"judgement undecided); completed calls are cached, a rerun pays only for these"
            )
            for f in failures[:max_failures_listed]:
                notes.append(f"  {f.stage} {f.item}: {f.reason}")
        return notes


def build_perception(
    arm: str,
    settings: LLMSettings,
    *,
    cache_dir: str | os.PathLike[str],
    slots: Mapping[str, str] | Sequence[str] | None = None,
    client: ModelClient | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    batch_runner: Any = None,
    generator_version: str | None = None,
) -> LivePerception:
    """The checker (probe, live) and extractor (live) of ``arm``, ready to run.

    ``slots``: the extractor's slot vocabulary; optional, since ``extractor(world)`` takes it
    from the world (given, ``live_extractor`` is built at once, with the prompt of worlds of
    ``generator_version``: None, the newest generator).

    Builds an ``AnthropicClient`` (``api_key``/``base_url``, the settings' retries and
    timeout, a meter priced by ``settings.prices``) unless ``client`` is given. A given
    client's ``meter`` gets the settings' prices; a client without one gets a fresh meter
    that stays empty (such a client meters nothing). Raises
    MissingApiKey (before anything else) without a key, ValueError for the oracle arm or an
    unknown arm. ``batch_runner``: batch mode (``rotbench.perception.calls.batch.BatchRunner``).
    """
    if arm not in ("probe", "live"):
        raise ValueError(f"arm {arm!r} makes no model calls; build_perception is for probe, live")
    if client is None:
        from rotbench.perception.calls.anthropic_client import AnthropicClient

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
    return LivePerception(arm, settings, client, meter, CallCache(cache_dir), slots,
                          batch_runner=batch_runner, generator_version=generator_version)
