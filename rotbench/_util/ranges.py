"""The stated range of every number rotbench takes from outside, and the one check of it.

A number from the command line, a settings file, a deployment parameter, an engine's hit, a
report or the model API is checked against its range where it comes in, before anything uses
it: one line naming the field, never a traceback later (an ``inf`` timeout that overflows a
thread wait, a poll interval of a nanosecond, a claim day no 32-bit column holds, a negative
token count that would credit the spending ledger).

The bounds are kept here so that the CLI, ``RunSpec``, ``LLMSettings``, the hit check and the
usage check state the same figure. Each bound says where it comes from.
"""

from __future__ import annotations

import math

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
"""The database's INTEGER columns (seed, day, rank, claim day): DuckDB's 32-bit integers."""

MAX_ENGINE_TIMEOUT_SECONDS = 86_400.0
"""``--engine-timeout``: one engine call may take at most a day (a thread wait takes no
``inf``: it raised OverflowError in every engine)."""

MAX_BATCH_TIMEOUT_SECONDS = 7 * 86_400.0
"""``--batch-timeout`` / ``batch_timeout_seconds``: the Message Batches API ends a batch after
24 h; a week leaves room for a collecting rerun and refuses ``inf``."""

MIN_BATCH_POLL_SECONDS = 0.01
MAX_BATCH_POLL_SECONDS = 3_600.0
"""``batch_poll_seconds``: between 10 ms (the fake server in tests) and an hour (a shorter
interval polls the batch API in a busy loop)."""

MAX_SDK_TIMEOUT_SECONDS = 3_600.0
"""``timeout_seconds`` of the settings file: one HTTP attempt, at most an hour."""

MAX_BUDGET_USD = 1_000_000.0
MAX_BUDGET_CALLS = 10**9
"""``--budget-usd`` and ``--budget-calls`` (and the settings file's): finite, 0 or more."""

MAX_TOKENS_PER_RESPONSE = 10**9
"""Token counts of one API response (input, output, cache read, cache creation): 0 to a
billion. A negative count would make negative dollars that credit the ledger; it is a failed
call (``rotbench.perception.calls.anthropic_client.usage_of``)."""

MAX_RUNS_LIMIT = INT32_MAX
"""``rotbench runs --limit``: DuckDB's LIMIT takes a signed 64-bit count; 2**31 - 1 is more
runs than any database holds."""

MAX_DASK_WORKERS = 256
"""``--dask-workers``: worker processes of a local cluster."""


def range_problem(field: str, value: object, low: float, high: float, *,
                  low_open: bool = False) -> str | None:
    """Why ``value`` of ``field`` is outside ``[low, high]`` (``(low, high]`` when
    ``low_open``), as one line naming the field; None when it is inside. NaN and the
    infinities are outside every range. ``value`` None is not checked (an unset option)."""
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, int | float):
        return f"{field} must be a number, got {type(value).__name__}"
    inside = math.isfinite(value) and (low < value if low_open else low <= value) \
        and value <= high
    if inside:
        return None
    lower = f"above {_num(low)}" if low_open else f"at least {_num(low)}"
    return f"{field} must be {lower} and at most {_num(high)}, got {_num(value)}"


def _num(x: float) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


def spec_problems(spec) -> list[str]:  # noqa: ANN001 - a RunSpec (no import cycle)
    """Every range problem of a run's numbers (``RunSpec``), flags as the CLI names them."""
    checks = [
        ("--engine-timeout", spec.engine_timeout_seconds, 0.0, MAX_ENGINE_TIMEOUT_SECONDS, True),
        ("--batch-timeout", spec.batch_timeout_seconds, 0.0, MAX_BATCH_TIMEOUT_SECONDS, True),
        ("--budget-usd", spec.budget_usd, 0.0, MAX_BUDGET_USD, False),
        ("--budget-calls", spec.budget_calls, 0, MAX_BUDGET_CALLS, False),
        ("--dask-workers", spec.dask_workers, 1, MAX_DASK_WORKERS, False),
    ]
    return [p for flag, value, low, high, low_open in checks
            if (p := range_problem(flag, value, low, high, low_open=low_open))]
