"""The spending limit: the ledger refuses calls once calls or dollars reach the budget,
across threads, and a refused call is an unanswered item, not a crash."""

from __future__ import annotations

import contextlib
import threading

import pytest

from rotbench.contract.model_client import Completion, Usage
from rotbench.perception.calls.budget import (
    Budget,
    BudgetedClient,
    BudgetReached,
    SpendLedger,
    refusal,
)
from rotbench.perception.calls.gate import GatedClient
from rotbench.perception.model import LLMSettings


class Counting:
    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, *, model, system, prompt, max_tokens) -> Completion:
        with self._lock:
            self.calls += 1
        return Completion(text='{"answer": "no"}', model=model,
                          usage=Usage(input_tokens=1_000_000, output_tokens=0))


def test_calls_stop_at_the_call_budget_across_threads(tmp_path) -> None:
    inner = Counting()
    client = BudgetedClient(inner, SpendLedger(tmp_path / "l.json", Budget(calls=7)),
                            LLMSettings())
    refused = []

    def one() -> None:
        try:
            client.complete(model="m", system="s", prompt="p", max_tokens=8)
        except BudgetReached:
            refused.append(1)

    threads = [threading.Thread(target=one) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inner.calls == 7 and len(refused) == 13
    assert client.ledger.totals() == {"calls": 7, "usd": 0.0, "refused": 13, "held": 0.0}


def test_calls_stop_once_dollars_reach_the_budget(tmp_path) -> None:
    settings = LLMSettings(prices={"m": (1.0, 0.0)})  # one call = 1M input tokens = US$1
    inner = Counting()
    client = BudgetedClient(inner, SpendLedger(tmp_path / "l.json", Budget(usd=2.5)), settings)
    for _ in range(3):
        client.complete(model="m", system="s", prompt="p", max_tokens=8)
    with pytest.raises(BudgetReached, match=r"budget of US\$2.50 reached \(3 calls, US\$3"):
        client.complete(model="m", system="s", prompt="p", max_tokens=8)
    assert inner.calls == 3


def test_a_refused_call_is_an_unanswered_item(tmp_path) -> None:
    from rotbench.perception.model import LiveChecker

    inner = Counting()
    client = BudgetedClient(inner, SpendLedger(tmp_path / "l.json", Budget(calls=0)),
                            LLMSettings())
    checker = LiveChecker(client, "claude-haiku-4-5", "check-v1", None, 2)
    result = checker._asker.ask("s", "p", dict, "item-1")
    assert result is None and inner.calls == 0
    stats = checker.stats
    assert stats.failures[0].reason.startswith("BudgetReached: budget of 0 calls reached")


def test_refusal_before_the_run() -> None:
    assert refusal(Budget(calls=100), 101, 0.5).startswith("projected 101 model calls exceed")
    assert refusal(Budget(calls=100), 100, None) is None
    assert refusal(Budget(usd=1.0), 10, None).startswith("a dollar budget is set")
    assert refusal(Budget(usd=1.0), 10, 1.01).startswith("projected US$1.01 exceeds")
    assert refusal(Budget(), 10**6, None) is None


class CountingGate:
    """A call gate that counts the slots taken (``rotbench.perception.calls.gate.CallGate``)."""

    def __init__(self) -> None:
        self.taken = 0

    @contextlib.contextmanager
    def slot(self):
        self.taken += 1
        yield

    def describe(self) -> str:
        return "counting"


def test_a_spent_budget_refuses_before_a_slot_is_taken(tmp_path) -> None:
    """Calls past the budget never wait for the run's call gate (on Dask a Prefect limit,
    polled). Each refused call counts once."""
    settings = LLMSettings(prices={"m": (1.0, 0.0)})  # one call = US$1
    for budget, made in ((Budget(calls=2), 2), (Budget(usd=1.0), 1)):
        inner, gate = Counting(), CountingGate()
        ledger = SpendLedger(tmp_path / f"{made}.json", budget)
        client = GatedClient(BudgetedClient(inner, ledger, settings), gate)
        for _ in range(made):
            client.complete(model="m", system="s", prompt="p", max_tokens=8)
        for _ in range(3):
            with pytest.raises(BudgetReached, match=r"^budget of .* reached"):
                client.complete(model="m", system="s", prompt="p", max_tokens=8)
        assert (inner.calls, gate.taken) == (made, made)
        assert ledger.totals()["refused"] == 3 and ledger.totals()["calls"] == made


def test_a_call_refused_before_its_slot_is_an_unanswered_item(tmp_path) -> None:
    from rotbench.perception.model import LiveChecker

    inner, gate = Counting(), CountingGate()
    client = GatedClient(BudgetedClient(inner, SpendLedger(tmp_path / "l.json",
                                                           Budget(calls=0)), LLMSettings()),
                         gate)
    checker = LiveChecker(client, "claude-haiku-4-5", "check-v1", None, 2)
    assert checker._asker.ask("s", "p", dict, "item-1") is None
    assert (inner.calls, gate.taken) == (0, 0)
    [failure] = checker.stats.failures
    assert (failure.item, failure.kind) == ("item-1", "call")
    assert failure.reason == "BudgetReached: budget of 0 calls reached (0 calls, US$0.0000 spent)"
