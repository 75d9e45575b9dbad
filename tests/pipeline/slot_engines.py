"""An engine for the world-slot tests (loaded as ``tests.pipeline.slot_engines:make``): its
factory records when a world's instance is built, waits up to ``HOLD_SECONDS`` for a second
world's instance to be built beside it, and ``close`` records when it ends."""

from __future__ import annotations

import threading
import time

HOLD_SECONDS = 1.5
"""How long a factory waits for a second world to be built beside it (seconds)."""
EVENTS: list[tuple[str, int, float]] = []
"""(``"enter"`` or ``"exit"``, seed, ``time.monotonic()``) of every world, in order."""
_CHANGED = threading.Condition()
_STATE = {"inside": 0, "most": 0}


def reset() -> None:
    """Forget every recorded world."""
    with _CHANGED:
        EVENTS.clear()
        _STATE.update(inside=0, most=0)


def most_at_once() -> int:
    """The most worlds that were built and not yet closed at one moment."""
    with _CHANGED:
        return _STATE["most"]


class Recording:
    """Answers nothing; only records when its world was built and closed."""

    name = "slot-probe"
    version = "0"

    def __init__(self, context) -> None:
        self.seed = context.seed
        with _CHANGED:
            _STATE["inside"] += 1
            _STATE["most"] = max(_STATE["most"], _STATE["inside"])
            EVENTS.append(("enter", self.seed, time.monotonic()))
            _CHANGED.notify_all()
            _CHANGED.wait_for(lambda: _STATE["inside"] >= 2, timeout=HOLD_SECONDS)

    def deposit(self, document) -> None:
        return None

    def query(self, question, k):
        return []

    def close(self) -> None:
        with _CHANGED:
            _STATE["inside"] -= 1
            EVENTS.append(("exit", self.seed, time.monotonic()))
            _CHANGED.notify_all()


def make(context) -> Recording:
    """Factory of ``slot-probe``."""
    return Recording(context)
