"""TransitionGate: bodies overlap, start-ups and wind-downs never do."""

from __future__ import annotations

import asyncio

from flows.fanout import TransitionGate


def test_bodies_overlap_while_transitions_are_serialised() -> None:
    gate = TransitionGate()
    events: list[tuple[str, int]] = []
    in_transition = 0
    worst = 0

    async def transition(tag: str, i: int) -> None:
        nonlocal in_transition, worst
        in_transition += 1
        worst = max(worst, in_transition)
        events.append((tag, i))
        await asyncio.sleep(0.01)  # an API write
        in_transition -= 1

    async def child(i: int) -> int:
        await transition("created", i)
        gate.started(str(i))
        events.append(("body-start", i))
        await asyncio.sleep(0.05)
        events.append(("body-end", i))
        await gate.finishing(str(i))
        await transition("finished", i)
        return i

    async def parent() -> list[int]:
        return list(await asyncio.gather(*(gate.run(str(i), lambda i=i: child(i))
                                           for i in range(3))))

    assert asyncio.run(parent()) == [0, 1, 2]
    assert worst == 1  # never two transitions at once
    starts = [events.index(("body-start", i)) for i in range(3)]
    first_end = min(events.index(("body-end", i)) for i in range(3))
    assert max(starts) < first_end  # all three bodies were running at the same time


def test_a_failing_body_releases_the_gate() -> None:
    gate = TransitionGate()

    async def broken() -> None:
        gate.started("a")
        raise RuntimeError("boom")

    async def fine() -> str:
        gate.started("b")
        await gate.finishing("b")
        return "ok"

    async def parent() -> str:
        try:
            await gate.run("a", broken)
        except RuntimeError:
            pass
        return await asyncio.wait_for(gate.run("b", fine), timeout=1)

    assert asyncio.run(parent()) == "ok"
