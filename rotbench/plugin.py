"""Everything an engine author imports: ``from rotbench.plugin import Hit, EngineContext, ...``.

An engine is a factory ``make_engine(context: EngineContext) -> MemoryEngine``, registered
under the ``rotbench.engines`` entry-point group with an ``EngineInfo`` (or named on the
command line as ``module:make_engine``). The harness deposits ``Document``s in the order they
reach the store (arrival order) and asks questions; the engine answers with ranked ``Hit``s.
Engines that want rotbench's own perception read the context's perceived claims
(``ClaimDraft``), ask its ``Checker`` for ``Judgement``s, and read questions into
``QuestionFrame``s with its extractor when that is a ``QuestionReader``. See
``examples/my_engine.py`` for a complete engine in about 20 lines, or run
``rotbench new-engine NAME``.

This module only re-exports: the definitions live in ``rotbench.contract.engine`` (the
engine protocol), ``rotbench.contract.context``, ``rotbench.engines.registry``,
``rotbench.contract.perception`` (perceived claims, extractor and checker seams) and
``rotbench.contract.model_client`` (the model-client seam). Nothing else of rotbench is
part of the plug-in surface.
"""

from rotbench.contract.context import EngineContext
from rotbench.contract.engine import AsOfEngine, Document, Hit, MemoryEngine, Provenance
from rotbench.contract.extraction import lineage_of
from rotbench.contract.model_client import Completion, ModelClient, RefusedCall, Usage
from rotbench.contract.perception import (
    FORGET_ANY,
    Checker,
    Claim,
    ClaimDraft,
    Extractor,
    Judgement,
    QuestionFrame,
    QuestionReader,
    subject_key,
)
from rotbench.contract.registry import EngineError, EngineInfo

__all__ = [
    "FORGET_ANY",
    "AsOfEngine",
    "Checker",
    "Claim",
    "ClaimDraft",
    "Completion",
    "Document",
    "EngineContext",
    "EngineError",
    "EngineInfo",
    "Extractor",
    "Hit",
    "Judgement",
    "MemoryEngine",
    "ModelClient",
    "Provenance",
    "QuestionFrame",
    "QuestionReader",
    "RefusedCall",
    "Usage",
    "lineage_of",
    "subject_key",
]
