"""Wilson score intervals: exact values for a few cases."""

from __future__ import annotations

import math

import pytest

from rotbench.scoring import Rate, wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (5, 10, 0.236593090512564, 0.7634069094874361),  # the textbook 0.2366-0.7634
        (146, 216, 0.6109076663545038, 0.7347960075916681),
        (1, 3, 0.06149194472039615, 0.7923403991979523),
        (0, 10, 0.0, 0.2775327998628892),
        (216, 216, 0.9825262312154358, 1.0),
    ],
)
def test_exact_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(k, n)
    assert got is not None
    assert got[0] == pytest.approx(low, abs=1e-12)
    assert got[1] == pytest.approx(high, abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(3, 7), (146, 216), (70, 123)])
def test_bounds_solve_the_score_equation(k: int, n: int) -> None:
    # independent check: both bounds p satisfy |k/n - p| = z * sqrt(p (1 - p) / n)
    z = 1.959963984540054
    for p in wilson_interval(k, n):
        assert abs(k / n - p) == pytest.approx(z * math.sqrt(p * (1 - p) / n), abs=1e-12)


def test_zero_denominator_and_bad_counts() -> None:
    assert wilson_interval(0, 0) is None
    assert Rate.of(0, 0).model_dump() == {
        "numerator": 0,
        "denominator": 0,
        "value": None,
        "low": None,
        "high": None,
    }
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        Rate(numerator=3, denominator=2)
