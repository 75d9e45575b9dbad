"""Perception per arm: which extractor and checker each world is read with.

- ``oracle``: scripted extraction and scripted checks; both get a refusing model client.
- ``probe``: scripted extraction (refusing client), model-backed checks.
- ``live``: model-backed extraction and checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rotbench._util.validation import first_error
from rotbench.contract.model_client import RefusingClient
from rotbench.contract.perception import Checker, Extractor
from rotbench.perception.oracle import OracleChecker, OracleExtractor
from rotbench.world.models import World


@dataclass
class ArmRuntime:
    """The objects one world of a run reads with (not serialisable: built inside the world's
    task from the run's settings, never a flow or task parameter).

    ``refusing`` is the client every scripted part receives; ``live`` builds model-backed
    perception for the probe and live arms (None for the oracle arm). ``cache_dir`` is the
    run's cache folder (embeddings, stage outputs).
    """

    arm: str
    refusing: RefusingClient = field(default_factory=RefusingClient)
    live: object | None = None
    cache_dir: str = "cache"
    estimate: dict | None = None
    """The projection made before the run (calls, tokens, dollars per stage), if any."""

    def embedder(self):
        """The process-wide embedder of this run's cache folder."""
        from rotbench.embedding.shared import shared_embedder

        return shared_embedder(Path(self.cache_dir))

    def failure_count(self) -> int:
        """Model calls that have failed so far in this run (0 for the oracle arm)."""
        return 0 if self.live is None else len(self.live.summary().failures)

    def usage(self) -> dict | None:
        """Metered model usage for the report, beside the estimate made before the run
        (None for the oracle arm)."""
        if self.live is None:
            return None
        usage = self.live.usage()
        if self.estimate is not None:
            usage["estimate"] = self.estimate
        return usage

    def degraded_counts(self) -> dict[str, int]:
        """Items a failed model call left unanswered, per kind ('documents left
        unextracted', 'checks left undecided'); empty for a complete run or world."""
        if self.live is None:
            return {}
        counts: dict[str, int] = {}
        for stage, st in self.live.stats().items():
            if st.failures:
                what = "documents left unextracted" if stage == "extract" else (
                    "checks left undecided")
                counts[what] = counts.get(what, 0) + len(st.failures)
        return counts

    def degraded(self) -> list[str]:
        """Why this run's figures are incomplete: per stage, the items a failed model call
        left unanswered (empty extractions, undecided checks). Empty for a complete run."""
        return degraded_lines(self.degraded_counts())

    def extra_notes(self) -> list[str]:
        """Notes from model-backed perception (failures, retries); none for the oracle arm."""
        return [] if self.live is None else self.live.notes()

    def engine_client(self, engine: str):
        """The model client an engine under test gets: the refusing client on the oracle
        arm; on the paid arms the run's client, cached under ``calls/engine-<name>/`` and
        metered under that stage."""
        if self.live is None:
            return self.refusing
        from rotbench.perception.calls.engine_client import CachedModelClient

        stage = "engine-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in engine)
        return CachedModelClient(self.live.client, self.live.cache, stage,
                                 default_model=self.live.settings.extract_model)

    def perception(self, world: World) -> tuple[Extractor, Checker]:
        """The (extractor, checker) pair this arm reads ``world`` with."""
        if self.arm == "oracle":
            return OracleExtractor(world, self.refusing), OracleChecker(self.refusing)
        if self.live is None:
            raise RuntimeError(f"arm {self.arm!r} needs model-backed perception; none configured")
        extractor: Extractor = (
            OracleExtractor(world, self.refusing)
            if self.arm == "probe"
            else self.live.extractor(world)
        )
        return extractor, self.live.checker(world)


def degraded_lines(counts: dict[str, int]) -> list[str]:
    """``ArmRuntime.degraded_counts`` (summed over worlds) as the report's reasons."""
    return [f"{n} {what} after failed model calls" for what, n in counts.items()]


MAX_SETTINGS_BYTES = 1 << 20
"""Largest --llm-settings file read (1 MiB; a settings file with prices for a dozen models
is under 2 KiB)."""


class SettingsError(ValueError):
    """A bad model-settings file; the message is one line naming the file and line or field."""


def load_llm_settings(path: Path | None, concurrency: int):
    """``LLMSettings`` from a JSON object file (models, prices, prompt versions), else the
    defaults; ``concurrency`` (model calls in flight) applies unless the file sets it.

    Raises SettingsError naming the file and the JSON line or the settings field; the file
    is read by ``rotbench._util.json_input`` (at most MAX_SETTINGS_BYTES, strict UTF-8, depth and
    number limits).
    """
    from pydantic import ValidationError

    from rotbench._util.json_input import JSONInputError, read_json_file
    from rotbench.perception.model import LLMSettings

    data: object = {}
    if path is not None:
        try:
            data = read_json_file(Path(path), MAX_SETTINGS_BYTES, "model-settings file")
        except JSONInputError as exc:
            raise SettingsError(str(exc)) from None
        if not isinstance(data, dict):
            raise SettingsError(f"{path}: expected a JSON object of settings, "
                                f"got {type(data).__name__}")
    assert isinstance(data, dict)
    data.setdefault("concurrency", concurrency)
    try:
        return LLMSettings.model_validate(data)
    except ValidationError as exc:
        where, msg = first_error(exc, "(top level)")
        raise SettingsError(f"{path}: field {where}: {msg}") from None


def batch_runner(settings, cache_dir: str, client, ledger=None):
    """The ``rotbench.perception.model.BatchRunner`` of a batch-mode run: the Anthropic
    client under ``client``'s wrappers (its batch API and its meter), the run's call cache
    and ledger."""
    from rotbench.perception.model import BatchRunner, CallCache

    api = client
    while not hasattr(api, "batch_create") and hasattr(api, "client"):
        api = api.client
    return BatchRunner(api, CallCache(cache_dir), api.meter, settings, ledger)


def run_settings(spec):
    """The ``LLMSettings`` of a paid run: the settings file (``spec.llm_settings``, else
    ``$ROTBENCH_LLM_SETTINGS``, else the defaults) with the run's own ``batch`` and
    ``batch_timeout_seconds`` where it gives them. Raises SettingsError."""
    import os

    path = spec.llm_settings or os.environ.get("ROTBENCH_LLM_SETTINGS")
    settings = load_llm_settings(Path(path) if path else None, spec.model_concurrency)
    update = {}
    if spec.batch is not None:
        update["batch"] = spec.batch
    if spec.batch_timeout_seconds is not None:
        update["batch_timeout_seconds"] = spec.batch_timeout_seconds
    return settings.model_copy(update=update) if update else settings


def paid_runtime(arm: str, settings, cache_dir: str, estimate: dict | None = None,
                 ledger=None, api_key: str | None = None, gate=None) -> ArmRuntime:
    """The runtime of a probe or live world: model-backed perception with its own client,
    meter and the run's call cache; every call drawn from ``ledger`` (a
    ``rotbench.perception.calls.budget.SpendLedger``) when given, and holding a slot of
    ``gate`` (the run's ``rotbench.perception.calls.gate.CallGate``, shared by every world)
    while it is in flight. Raises MissingApiKey without a key (``api_key``, else
    ``ANTHROPIC_API_KEY``)."""
    from rotbench.perception.model import AnthropicClient, UsageMeter, build_perception

    client = AnthropicClient(api_key=api_key, max_retries=settings.max_retries,
                             timeout_seconds=settings.timeout_seconds,
                             meter=UsageMeter(settings.prices))
    if ledger is not None:
        from rotbench.perception.calls.budget import BudgetedClient

        client = BudgetedClient(client, ledger, settings)
    if gate is not None:
        from rotbench.perception.model import GatedClient

        client = GatedClient(client, gate)  # outermost: the budget is drawn inside a slot
    runner = batch_runner(settings, cache_dir, client, ledger) if settings.batch else None
    live = build_perception(arm, settings, cache_dir=cache_dir, client=client,
                            batch_runner=runner)
    return ArmRuntime(arm=arm, live=live, estimate=estimate, cache_dir=cache_dir)
