"""Metered token usage and dollars, per pipeline stage.

Every response a real client receives is recorded here once, keyed by stage ('extract',
'check'). Calls answered from the call cache are not usage: they are counted by the
perception objects (``PerceptionStats.cache_hits``), not here.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from pydantic import BaseModel, Field

from rotbench.contract.model_client import Usage
from rotbench.perception.calls.prices import BATCH_PRICE_FACTOR, Price, cost_usd


class StageUsage(BaseModel):
    """Usage of one stage: billed calls and their tokens; ``usd`` when every call was priced."""

    stage: str
    calls: int = Field(default=0, description="Responses received (each one billed).")
    batch_calls: int = Field(default=0, description="Of ``calls``, those answered in a "
                             "Message Batch (billed at half price).")
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    usd: float | None = Field(
        default=None, description="US dollars; None when any call's model has no price."
    )
    unpriced_calls: int = Field(default=0, description="Calls whose model had no price.")
    models: list[str] = Field(default_factory=list, description="Model ids called, sorted.")


class UsageReport(BaseModel):
    """Usage of a run, per stage, with a total in dollars when every stage is priced."""

    stages: dict[str, StageUsage] = Field(default_factory=dict)
    total_usd: float | None = None

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stages.values())


class UsageMeter:
    """Thread-safe accumulator of ``Usage`` per stage and model, priced when reported.

    ``prices`` maps model id -> (input_usd_per_mtok, output_usd_per_mtok); a response is
    priced by the model id requested (e.g. 'claude-haiku-4-5') and, failing that, by the id
    the API returned (e.g. a dated id). Prices may be set after the calls (``set_prices``):
    dollars are computed from token totals at ``stage``/``snapshot`` time.
    """

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = dict(prices or {})
        self._lock = threading.Lock()
        # (stage, requested model, returned model, batch) -> [calls, Usage totals]
        self._totals: dict[tuple[str, str, str, bool], tuple[int, Usage]] = {}

    def set_prices(self, prices: Mapping[str, Price]) -> None:
        """Add or replace prices (model id -> (input, output) US dollars per million tokens)."""
        with self._lock:
            self._prices.update(prices)

    def record(
        self, stage: str, model: str, usage: Usage, response_model: str | None = None,
        batch: bool = False,
    ) -> None:
        """Add one billed response of ``model`` to ``stage``; ``batch``: it came from a
        Message Batch, priced at ``BATCH_PRICE_FACTOR`` of the standard prices."""
        key = (stage, model, response_model or model, batch)
        with self._lock:
            calls, total = self._totals.get(key, (0, Usage()))
            self._totals[key] = (
                calls + 1,
                Usage(
                    input_tokens=total.input_tokens + usage.input_tokens,
                    output_tokens=total.output_tokens + usage.output_tokens,
                    cache_read_input_tokens=total.cache_read_input_tokens
                    + usage.cache_read_input_tokens,
                    cache_creation_input_tokens=total.cache_creation_input_tokens
                    + usage.cache_creation_input_tokens,
                ),
            )

    def stage(self, stage: str) -> StageUsage:
        """One stage's usage (zeros when nothing was recorded)."""
        with self._lock:
            rows = [(k, v) for k, v in self._totals.items() if k[0] == stage]
            prices = dict(self._prices)
        out = StageUsage(stage=stage, usd=0.0)
        models: set[str] = set()
        for (_, model, returned, batch), (calls, u) in rows:
            models.add(model)
            out.calls += calls
            out.batch_calls += calls if batch else 0
            out.input_tokens += u.input_tokens
            out.output_tokens += u.output_tokens
            out.cache_read_input_tokens += u.cache_read_input_tokens
            out.cache_creation_input_tokens += u.cache_creation_input_tokens
            usd = cost_usd(
                prices.get(model) or prices.get(returned),
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                cache_read_input_tokens=u.cache_read_input_tokens,
                cache_creation_input_tokens=u.cache_creation_input_tokens,
            )
            if usd is None:
                out.unpriced_calls += calls
            else:
                out.usd = (out.usd or 0.0) + usd * (BATCH_PRICE_FACTOR if batch else 1.0)
        out.models = sorted(models)
        if out.unpriced_calls:
            out.usd = None
        elif out.usd is not None:
            out.usd = round(out.usd, 6)
        return out

    def snapshot(self) -> UsageReport:
        """Every stage's usage and the total in US dollars (None if any call is unpriced)."""
        with self._lock:
            names = sorted({k[0] for k in self._totals})
        stages = {n: self.stage(n) for n in names}
        usds = [s.usd for s in stages.values()]
        total = None if any(u is None for u in usds) else round(sum(usds), 6)  # type: ignore[arg-type]
        return UsageReport(stages=stages, total_usd=total)
