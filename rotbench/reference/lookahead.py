"""Asking a slow checker ahead of the deposit, without asking anything the deposit won't.

Deposit reconciles claims one at a time, and which pairs a claim is checked against depends
on what earlier judgements retired or quarantined. A model checker answers in about a second,
so asking only the current claim's pairs leaves most of the allowed calls idle, and one
throttled call holds up everything behind it.

``Lookahead`` walks the claims still to come and finds the pairs whose judgement will
*certainly* be asked for: (older, newer) is certain when the older is active now and no
judgement still unknown could deactivate it before the newer's turn. Which claims a
judgement could deactivate, and which pairs the search finds, are the engine's own rules
(``rotbench.reference.reconcile`` hands them in). Known judgements are applied as the engine
would. Certain pairs are handed to the checker's
``prefetch``; the deposit then takes every judgement from the checker as before, so the
ledger and the calls paid are the same as without the lookahead, only sooner.

A checker takes part when it has ``prefetch(pairs)``, ``asked(older, newer)``,
``known(older, newer)``, ``room()``, ``wait(timeout_seconds)`` and ``cancel_pending()``
(``rotbench.perception.model.LiveChecker`` does);
any other checker is driven one claim at a time as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rotbench.contract.perception import Claim, Judgement

HORIZON_CLAIMS = 160
"""How many claims past the current one a look ahead scans, at most."""
WAIT_SECONDS = 0.5
"""Longest pause between two looks while the current claim's answers are outstanding."""


def speculative(checker: object) -> bool:
    """True when ``checker`` offers the calls a lookahead needs."""
    return all(callable(getattr(checker, name, None))
               for name in ("prefetch", "asked", "known", "room", "wait", "cancel_pending"))


class Lookahead:
    """Every claim of one deposit, in order, and the engine's two rules about them.

    ``claims[i]`` must be exactly the claim the reconciler files at position ``i``.
    ``static_candidates(i)``: the earlier claims claim ``i`` would be checked against if
    every claim were still active (the candidate search without the active filter).
    ``may_deactivate(older, newer)``: which of the pair an update judgement would retire or
    quarantine, as (older, newer) booleans. Both come from ``rotbench.reference.reconcile``,
    the single home of the rules. ``orient(i, j)``: the two positions in the order the
    checker is asked about them (engine 0.4.0: by event time; default: as given).
    ``volatile(i)``: True when claim ``i`` may be ended (or start to fill a slot) by a rule
    other than its own pairs' judgements (engine 0.5.0's ties); no pair of it is certain.
    """

    def __init__(self, claims: Sequence[Claim],
                 static_candidates: Callable[[int], Sequence[int]],
                 may_deactivate: Callable[[Claim, Claim], tuple[bool, bool]],
                 checker: object,
                 orient: Callable[[int, int], tuple[int, int]] | None = None,
                 volatile: Callable[[int], bool] | None = None) -> None:
        self.claims = list(claims)
        self._volatile = volatile or (lambda _i: False)
        self.checker = checker
        self._orient = orient or (lambda i, j: (i, j))
        self._rule = static_candidates
        self._may_deactivate = may_deactivate
        self._static: dict[int, list[int]] = {}
        self._known: dict[tuple[int, int], Judgement] = {}
        """Judgements already finished, by (older, newer) position: asked of the checker once."""

    def _judgement(self, o: int, j: int) -> Judgement | None:
        found = self._known.get((o, j))
        if found is None:
            a, b = self._orient(o, j)
            found = self.checker.known(self.claims[a], self.claims[b])  # type: ignore[attr-defined]
            if found is not None:
                self._known[(o, j)] = found
        return found

    def static_candidates(self, index: int) -> list[int]:
        """Earlier claims passing the candidate search, active or not (memoised)."""
        found = self._static.get(index)
        if found is None:
            found = self._static[index] = [int(j) for j in self._rule(index)]
        return found

    def candidates(self, index: int, inactive: set[str]) -> list[int]:
        """Indices of earlier claims active now (ids not in ``inactive``) that pass a search."""
        return [int(j) for j in self.static_candidates(index)
                if self.claims[j].id not in inactive]

    def certain_pairs(self, index: int, inactive: set[str],
                      budget: int) -> list[tuple[Claim, Claim]]:
        """Pairs, from claim ``index`` on, whose judgement the deposit will certainly ask for
        and that have not been asked yet; at most ``budget`` of them, earliest first."""
        inactive = set(inactive)
        threatened: set[int] = set()
        out: list[tuple[Claim, Claim]] = []
        end = min(len(self.claims), index + HORIZON_CLAIMS)
        for j in range(index, end):
            newer = self.claims[j]
            for o in self.candidates(j, inactive):
                older = self.claims[o]
                hits = self._may_deactivate(older, newer)
                if o in threatened or self._volatile(o) or self._volatile(j):
                    # this pair may or may not be asked: its effects are unsure
                    threatened.update(x for x, hit in zip((o, j), hits, strict=True) if hit)
                    continue
                judgement = self._judgement(o, j)
                if judgement is None:
                    a, b = self._orient(o, j)
                    pair = (self.claims[a], self.claims[b])
                    if len(out) < budget and not self.checker.asked(*pair):  # type: ignore[attr-defined]
                        out.append(pair)
                    threatened.update(x for x, hit in zip((o, j), hits, strict=True) if hit)
                elif judgement.contradicts and judgement.new_value_for_slot:
                    # a certain pair, an update: what it deactivates is inactive from now on
                    inactive.update(self.claims[x].id
                                    for x, hit in zip((o, j), hits, strict=True) if hit)
            if len(out) >= budget:
                break
        return out

    def before_judging(self, index: int, inactive: set[str],
                       pairs: list[tuple[Claim, Claim]]) -> None:
        """Keep the checker busy with certain pairs until every judgement claim ``index``
        needs (``pairs``) has finished. Returns when they have; ``judge`` then finds them."""
        checker = self.checker
        checker.prefetch(pairs)  # type: ignore[attr-defined]
        while True:
            room = checker.room() // 2  # type: ignore[attr-defined]
            if room:
                ahead = self.certain_pairs(index, inactive, room)
                if ahead:
                    checker.prefetch(ahead)  # type: ignore[attr-defined]
            if all(checker.known(o, n) is not None for o, n in pairs):  # type: ignore[attr-defined]
                return
            checker.wait(WAIT_SECONDS)  # type: ignore[attr-defined]
