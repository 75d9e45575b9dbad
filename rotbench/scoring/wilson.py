"""The Wilson score interval for a binomial proportion.

Source: E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
inference", JASA 22(158). Chosen over the normal (Wald) interval because it stays inside
[0, 1] and behaves at 0/n and n/n, which are common here (e.g. 0/51, 216/216).
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile, Phi^-1(0.975)."""


def wilson_interval(numerator: int, denominator: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson interval ``(low, high)`` of ``numerator/denominator``, both in [0, 1].

    None when ``denominator`` is 0 (no interval for an undefined rate). ``low`` is exactly 0.0
    at 0/n and ``high`` exactly 1.0 at n/n. Raises ``ValueError`` unless
    ``0 <= numerator <= denominator``.
    """
    if not 0 <= numerator <= denominator:
        raise ValueError(f"need 0 <= numerator <= denominator, got {numerator}/{denominator}")
    if denominator == 0:
        return None
    n = denominator
    p = numerator / n
    z2 = z * z
    scale = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / scale
    half = (z / scale) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if numerator == 0 else max(0.0, center - half)
    high = 1.0 if numerator == n else min(1.0, center + half)
    return low, high
