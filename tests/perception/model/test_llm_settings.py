"""Settings, the usage meter and the estimate on plain documents (no world, no network)."""

from __future__ import annotations

import pytest
from llm_helpers import documents
from pydantic import ValidationError

from rotbench.contract.perception import Claim
from rotbench.estimate.perception import estimate
from rotbench.perception.model import LLMSettings, Usage, UsageMeter, slots_from_world
from rotbench.world.models import World


def test_settings_defaults_and_unknown_prompt_version() -> None:
    s = LLMSettings()
    assert (s.extract_model, s.check_model, s.concurrency) == (
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
        8,
    )
    # the default models' list prices ship (dated, with a source), overridable
    assert s.price("claude-haiku-4-5") == (1.0, 5.0)
    assert s.price("claude-sonnet-4-6") == (3.0, 15.0)
    assert s.price("claude-opus-unknown") is None
    mine = LLMSettings(prices={"claude-haiku-4-5": (2.0, 6.0), "my-model": (0.5, 1.0)})
    assert (mine.price("claude-haiku-4-5"), mine.price("claude-sonnet-4-6"),
            mine.price("my-model")) == ((2.0, 6.0), (3.0, 15.0), (0.5, 1.0))
    with pytest.raises(ValidationError, match="available: check-v1"):
        LLMSettings(check_prompt_version="check-v9")
    assert LLMSettings.model_validate_json(s.model_dump_json()) == s


def test_meter_prices_at_report_time_and_sums_stages() -> None:
    meter = UsageMeter()
    meter.record("check", "claude-haiku-4-5", Usage(input_tokens=1_000_000, output_tokens=0))
    meter.record(
        "extract",
        "claude-sonnet-4-6",
        Usage(input_tokens=0, output_tokens=1_000_000, cache_read_input_tokens=1_000_000),
        response_model="claude-sonnet-4-6-20260101",
    )
    assert meter.snapshot().total_usd is None
    meter.set_prices({"claude-haiku-4-5": (1.0, 5.0), "claude-sonnet-4-6-20260101": (3.0, 15.0)})
    report = meter.snapshot()
    assert report.stages["check"].usd == pytest.approx(1.0)
    assert report.stages["extract"].usd == pytest.approx(15.0 + 0.3)  # cache reads at 0.1x
    assert report.total_usd == pytest.approx(16.3) and report.calls == 2
    assert meter.stage("nothing").calls == 0


def test_estimate_on_plain_documents_and_extra_pairs(world42: World) -> None:
    docs = documents(world42)
    claim = Claim(
        id="a",
        subject="the user",
        slot="car",
        value="Saab",
        tense="present",
        sentence="The user's car is Saab.",
        document_uri="u",
        lineage="conversation",
        contributor="user",
        day=1,
    )
    pair = (claim, claim.model_copy(update={"id": "b", "value": "Mazda", "day": 2}))
    est = estimate(docs, "live", LLMSettings(extract_prompt_version="extract-v2"),
                   slots=slots_from_world(world42), extra_pairs=[pair])
    assert est.stages["extract"].calls == len({d.text for d in docs})
    assert est.stages["check"].calls == 2 and est.stages["check"].projection == "exact"
    # priced at the shipped list prices: dollars are the sum of the stages'
    assert est.usd == round(est.stages["extract"].usd + est.stages["check"].usd, 4)
    assert est.stages["extract"].usd > 0
    with pytest.raises(ValueError, match="unknown arm"):
        estimate(docs, "cheap", LLMSettings())
