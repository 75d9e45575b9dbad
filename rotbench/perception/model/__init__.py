"""Model-backed perception for the probe and live arms: the perceiving side (perception,
prompts, wiring, batches) here, and the client side (``rotbench.perception.calls``) re-exported.

Public surface (everything else is private):

- clients: ``ModelClient``, ``Completion``, ``Usage``, ``RefusingClient``, ``RefusedCall``
  (``rotbench.contract.model_client``); ``AnthropicClient``, ``require_api_key``, ``MissingApiKey``
  (``rotbench.perception.calls.anthropic_client``; the SDK is imported on first use only).
- perception: ``LiveExtractor``, ``LiveChecker`` (run them over documents with
  ``rotbench.pipeline.extract.extract_concurrently``).
- configuration and money: ``LLMSettings``, ``UsageMeter``, ``UsageReport``, ``StageUsage``.
- persistence: ``CallCache`` (one JSON file per completed call).
- reporting: ``PerceptionStats``, ``CallFailure``, ``LLMRunSummary``; errors
  ``ModelCallError`` (recorded), ``FatalModelError`` (raised).
- planning: ``slots_from_world``, ``cost_usd``, ``call_key``; the projection itself
  (``estimate``, ``approx_tokens``, ...) is the run-level ``rotbench.estimate``.
- the prompts' wire format, for fakes that answer them (``prompt_kind``,
  ``document_text_of``, ``question_text_of``, ``claim_views_of``, ``RETRY_MARKER``;
  ``extract_prompt_of``, ``names_a_time`` and ``written_date_of`` for the dated ``extract-v3``).
- wiring: ``build_perception`` -> ``LivePerception``.
- the run's bound on calls in flight: ``CallGate``, ``ProcessGate``, ``process_gate``,
  ``forget_process_gate``, ``GatedClient`` (``calls.gate``).
- Message Batches: ``BatchRunner``, ``BatchCall``, ``BatchOutcome``, ``BatchTimeout``,
  ``journal_summary`` (``calls.batch``); ``BatchChecker``, ``BatchOnlyClient``,
  ``batch_extraction`` (``_batch_perception``).
"""

from rotbench.contract.model_client import (
    Completion,
    ModelClient,
    RefusedCall,
    RefusingClient,
    Usage,
)
from rotbench.perception.calls.anthropic_client import (
    AnthropicClient,
    MissingApiKey,
    require_api_key,
)
from rotbench.perception.calls.batch import (
    BatchCall,
    BatchOutcome,
    BatchRunner,
    BatchTimeout,
    journal_summary,
)
from rotbench.perception.calls.cache import CallCache, call_key
from rotbench.perception.calls.gate import (
    CallGate,
    GatedClient,
    ProcessGate,
    forget_process_gate,
    process_gate,
)
from rotbench.perception.calls.records import (
    CallFailure,
    FatalModelError,
    ModelCallError,
    PerceptionStats,
)
from rotbench.perception.calls.usage import StageUsage, UsageMeter, UsageReport
from rotbench.perception.model._batch_perception import (
    BatchChecker,
    BatchOnlyClient,
    batch_extraction,
)
from rotbench.perception.model._perception import (
    LiveChecker,
    LiveExtractor,
    live_extractor_stamp,
    slots_from_world,
)
from rotbench.perception.model._prompts import (
    CHECK_PROMPTS,
    EXTRACT_PROMPTS,
    RETRY_MARKER,
    InvalidAnswer,
    claim_views_of,
    document_text_of,
    extract_prompt_of,
    names_a_time,
    parse_answer,
    prompt_kind,
    question_text_of,
    retry_prompt,
    written_date_of,
)
from rotbench.perception.model._prompts_v4 import EXTRACT_V4  # joins EXTRACT_PROMPTS
from rotbench.perception.model._prompts_v5 import EXTRACT_V5  # joins EXTRACT_PROMPTS
from rotbench.perception.model._settings import (
    DEFAULT_PRICES,
    DEFAULT_PRICES_DATE,
    DEFAULT_PRICES_SOURCE,
    LLMSettings,
    cost_usd,
)
from rotbench.perception.model._wiring import LivePerception, LLMRunSummary, build_perception

__all__ = [
    "BatchCall",
    "BatchChecker",
    "BatchOnlyClient",
    "BatchOutcome",
    "BatchRunner",
    "BatchTimeout",
    "CallGate",
    "GatedClient",
    "ProcessGate",
    "batch_extraction",
    "forget_process_gate",
    "journal_summary",
    "process_gate",
    "RETRY_MARKER",
    "claim_views_of",
    "cost_usd",
    "document_text_of",
    "extract_prompt_of",
    "prompt_kind",
    "question_text_of",
    "names_a_time",
    "written_date_of",
    "live_extractor_stamp",
    "CHECK_PROMPTS",
    "EXTRACT_PROMPTS",
    "EXTRACT_V4",
    "EXTRACT_V5",
    "AnthropicClient",
    "CallCache",
    "CallFailure",
    "Completion",
    "FatalModelError",
    "InvalidAnswer",
    "parse_answer",
    "retry_prompt",
    "LLMRunSummary",
    "LLMSettings",
    "DEFAULT_PRICES",
    "DEFAULT_PRICES_DATE",
    "DEFAULT_PRICES_SOURCE",
    "LiveChecker",
    "LiveExtractor",
    "LivePerception",
    "MissingApiKey",
    "ModelCallError",
    "ModelClient",
    "PerceptionStats",
    "RefusedCall",
    "RefusingClient",
    "StageUsage",
    "Usage",
    "UsageMeter",
    "UsageReport",
    "build_perception",
    "call_key",
    "require_api_key",
    "slots_from_world",
]
