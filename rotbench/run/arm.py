"""The perception one world is read with, built from the run's settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rotbench.perception.arms import ArmRuntime, paid_runtime, run_settings
from rotbench.run.spec import RunSpec


def world_runtime(spec: RunSpec, ledger_path: str | None, budget: dict | None,
                  gate=None, api_key: Callable[[], str | None] = lambda: None,  # noqa: ANN001
                  seed: int | None = None) -> ArmRuntime:
    """The arm's perception for one world (or, ``seed`` None, for the run-wide stages).
    Paid arms: model calls draw on the spend ledger at ``ledger_path`` under ``budget``
    (``Budget`` fields), hold slots of the run's one call gate ``gate`` (a ``CallGate``, or
    None), and are made with the key ``api_key()`` returns, asked for only on those arms.
    In batch mode the checker's progress lines name the world's seed."""
    if spec.arm == "oracle":
        return ArmRuntime(arm="oracle", cache_dir=spec.cache_dir)
    if spec.arm == "noisy":
        from rotbench.perception.noisy.arm import noisy_runtime

        return noisy_runtime(spec)
    from rotbench.perception.calls.budget import Budget, SpendLedger

    settings = run_settings(spec)
    ledger = SpendLedger(Path(ledger_path), Budget(**(budget or {}))) if ledger_path else None
    runtime = paid_runtime(spec.arm, settings, spec.cache_dir, ledger=ledger,
                           api_key=api_key(), gate=gate)
    if seed is not None and runtime.live is not None and hasattr(runtime.live.live_checker,
                                                                 "rounds"):
        runtime.live.live_checker.label = f"checks seed {seed}"  # batch mode's progress lines
    return runtime
