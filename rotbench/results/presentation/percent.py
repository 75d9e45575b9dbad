"""How a fraction is written as a percent, the one form of every rate rotbench shows (the
terminal, the pages, the tables, the repeat summary)."""

from __future__ import annotations


def percent(x: float | None) -> str:
    """``x`` (a fraction) as a percent with at most one decimal: ``'67.6%'``, ``'100%'``;
    ``'—'`` for None."""
    if x is None:
        return "—"
    text = f"{100 * x:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"
