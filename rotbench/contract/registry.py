"""What the registry knows of an engine before importing it: its descriptor (``EngineInfo``),
the entry-point group engines register under, and the one error an engine that cannot be
chosen or built raises. The registry itself (finding and loading engines) is
``rotbench.engines.registry``.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ENTRY_POINT_GROUP = "rotbench.engines"


class EngineError(ValueError):
    """An engine cannot be chosen or built; the message is one line. ``trace``: when the
    engine's own code raised (its module at import), that traceback limited to the engine's
    frames (``rotbench.engines.trace``), else None."""

    def __init__(self, message: str, trace: str | None = None) -> None:
        super().__init__(message)
        self.trace = trace


class EngineInfo(BaseModel):
    """What the harness knows about an engine before building it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Registered name, e.g. 'transcript-rag'.")
    version: str = Field(description="Version of the engine's logic; enters the cache keys.")
    factory: str = Field(description="'module:callable' taking an EngineContext.")
    takes: Literal["documents", "claims"] = Field(
        description="'documents': raw documents; 'claims': rotbench's perceived claims."
    )
    paid_calls: bool = Field(default=False, description="Whether it can make model calls.")
    requires: tuple[str, ...] = Field(
        default=(), description="Import names of the packages it needs beyond rotbench's own."
    )
    extra: str | None = Field(default=None, description="The rotbench extra that installs them.")
    separable: bool = Field(
        default=False,
        description="True for the reference engine only: the flow runs its extract, index, "
        "deposit and probe stages separately (it answers as of a past day).",
    )
    parametric: bool = Field(
        default=False,
        description="True when the engine is chosen as 'NAME:VARIANT' (e.g. 'benchd:echo'); "
        "the factory reads the variant from ``EngineContext.variant``.",
    )
    variant: str | None = Field(default=None, description="The VARIANT of 'NAME:VARIANT'.")
    estimate: str | None = Field(
        default=None,
        description="'module:callable' projecting the engine's own model calls on a paid arm "
        "(see ``rotbench.estimate.engines``); None: its calls are not projected.",
    )
    warm_texts: str | None = Field(
        default=None,
        description="'module:callable' taking (arm, generator) and returning the texts the "
        "engine will embed through the run's embedder, known before any world runs; they are "
        "encoded in one batch in a child process while the run starts "
        "(``rotbench.run.warm.warm_for_run``). None: nothing is known up front.",
    )
    worlds_at_once: int | None = Field(
        default=None, ge=1,
        description="The most worlds of this engine built at once in one process (from the "
        "factory to ``close``); None: no bound beyond the run's. For an engine whose every open "
        "instance holds much memory and whose work holds the interpreter lock (e.g. Graphiti on "
        "Kuzu), so that worlds side by side cost memory and gain little time. Not part of the "
        "cache key: it changes when worlds run, never what they answer.",
    )
    summary: str = ""
    source_sha256: str | None = Field(
        default=None, description="For a module:factory engine, the digest of its source: its "
        "module file and the modules beside it that it imports (``rotbench.engines.source``)."
    )

    @property
    def installed(self) -> bool:
        """True when every required package can be imported."""
        return all(importlib.util.find_spec(name) is not None for name in self.requires)

    @property
    def identity(self) -> str:
        """What enters a cache key: name, version and (ad-hoc engines) the source hash."""
        return f"{self.name}@{self.version}" + (
            f"#{self.source_sha256}" if self.source_sha256 else ""
        )
