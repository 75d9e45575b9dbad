"""What one ``rotbench run`` asks for, validated before any work starts.

``RunSpec`` crosses the boundary into the Prefect flow (as JSON parameters), so it is a small
pydantic model holding only plain values; engine config overrides stay as ``KEY=VALUE``
strings and are parsed by ``EngineConfig.with_overrides``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rotbench.world.generate import MIN_DAYS

Arm = Literal["oracle", "probe", "live"]
ARMS: tuple[str, ...] = ("oracle", "probe", "live")
DEFAULT_SEEDS: tuple[int, ...] = (42, 43, 44)


class SpecError(ValueError):
    """A bad run request; the message is one line naming the flag or key."""


class RunSpec(BaseModel):
    """The full request of one run. Units: days, top-k hits, worlds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arm: Arm = "oracle"
    seeds: list[int] = Field(default_factory=lambda: list(DEFAULT_SEEDS))
    days: int = 90
    top_k: int = 10
    trust_policy: bool = True
    scorer: str | None = Field(default=None, description="None = the newest scorer version.")
    overrides: list[str] = Field(default_factory=list, description="Engine config KEY=VALUE.")
    record_claim_text: bool = True
    cache_dir: str = "cache"
    reports_dir: str = "reports"
    db_path: str | None = Field(default=None, description="None = <reports_dir>/rotbench.duckdb.")
    out_path: str | None = None
    max_concurrent_worlds: int = Field(default=4, ge=1)
    model_concurrency: int = Field(default=8, ge=1, description="Concurrent model calls.")

    @property
    def db(self) -> Path:
        return Path(self.db_path) if self.db_path else Path(self.reports_dir) / "rotbench.duckdb"

    def engine_overrides(self) -> list[str]:
        """Overrides in force, the trust flag included (``--no-trust-policy``)."""
        extra = [] if self.trust_policy else ["trust.policy=false"]
        return [*self.overrides, *extra]


def default_cache_dir() -> str:
    """``ROTBENCH_CACHE_DIR`` when set, else ``cache`` (relative to the working directory)."""
    return os.environ.get("ROTBENCH_CACHE_DIR") or "cache"


def validate_spec(spec: RunSpec) -> None:
    """Check every flag before any work: days, k, seeds, scorer and config keys.

    Raises SpecError with a one-line message naming the flag. Imports only light modules
    (the scorer registry and the engine config), never torch or prefect.
    """
    from rotbench.config import ConfigError, EngineConfig
    from rotbench.scoring import SCORER_VERSIONS

    if spec.days < MIN_DAYS:
        raise SpecError(f"--days must be at least {MIN_DAYS}, got {spec.days}")
    if spec.top_k < 1:
        raise SpecError(f"--top-k must be at least 1, got {spec.top_k}")
    if not spec.seeds:
        raise SpecError("--seed: at least one seed is required")
    if len(set(spec.seeds)) != len(spec.seeds):
        raise SpecError(f"--seed: duplicate seeds in {spec.seeds}")
    if spec.scorer is not None and spec.scorer not in SCORER_VERSIONS:
        known = ", ".join(SCORER_VERSIONS)
        raise SpecError(f"--scorer: unknown scorer {spec.scorer!r} (available: {known})")
    try:
        EngineConfig().with_overrides(spec.engine_overrides())
    except ConfigError as exc:
        raise SpecError(f"--set: {exc}") from None
