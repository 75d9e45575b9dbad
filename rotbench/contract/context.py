"""What the harness hands an engine's factory: one ``EngineContext`` per engine and world."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rotbench.contract.engine import Document
    from rotbench.contract.model_client import ModelClient
    from rotbench.contract.perception import Checker, ClaimDraft, Extractor
    from rotbench.embedding.embedder import Embedder


@dataclass
class EngineContext:
    """Everything an engine may take from the harness for one world.

    - ``arm``: 'oracle', 'probe' or 'live';
    - ``seed``: the world's seed (for naming only: an engine must not read the world);
    - ``scratch_dir``: an empty folder of its own, removed once the world is done;
    - ``embedder``: rotbench's MiniLM behind the content-addressed cache;
      ``embedder.encode(texts)`` returns an (n, 384) float32 array of unit vectors;
    - ``model``: rotbench's model client. On the oracle arm it refuses every call (and the
      refusals are counted in the report); on the paid arms it is the run's client, whose
      calls are cached under ``cache/calls/engine-<name>/`` and metered;
    - ``claims(document)``: the claims the arm's extractor perceives in ``document``
      (scripted on the oracle and probe arms, a model on the live arm): what an engine that
      takes perceived claims files instead of reading raw text;
    - ``extractor``: the arm's extractor behind ``claims``: ``extract(document)``, its
      ``stamp``, and, when it reads questions (a ``QuestionReader``),
      ``read_question(question)`` -> ``QuestionFrame`` or None;
    - ``checker``: the arm's contradiction and slot checks (scripted on the oracle arm, a
      model on the paid arms), for engines that want rotbench's judgement of claim pairs:
      ``judge(pairs)`` and ``stamp``;
    - ``variant``: for an engine chosen as ``NAME:VARIANT`` (``benchd:echo``), VARIANT.

    A plug-in in its worker process gets handles with these same attributes, answered by
    the run's objects (``rotbench.engines.host.engine_worker_side``; docs/engine-boundary.md).
    """

    arm: str
    seed: int
    scratch_dir: Path
    embedder: Embedder
    model: ModelClient
    extractor: Extractor
    checker: Checker | None = None
    variant: str | None = None

    def claims(self, document: Document) -> list[ClaimDraft]:
        """The perceived claims of ``document``, in order (see ``rotbench.contract.perception``)."""
        return list(self.extractor.extract(document))
