"""Plug-in engines for the pipelined calls of a worker process (issue 40, round 2), loaded as
``tests.pipeline.pipeline_engines:FACTORY``. Deposits are sent ahead without waiting for
their replies, and a checkpoint's questions are sent together, so these engines fail or hang
on a deposit with more requests already on the pipe, or ask the run for embeddings while
queries wait behind them."""

from __future__ import annotations

import time

from rotbench.contract.engine import Hit
from rotbench.engines.baselines.transcript_rag import make_engine as _transcript_rag

FAILING_DEPOSIT = 3
"""The deposit (counted from 1) on which the faulty engines below fail."""


def rag(context):
    """rotbench's transcript-rag baseline as a plug-in: every query asks the run's embedder
    (once for the new turns, once for the question) while later queries wait."""
    return _transcript_rag(context)


class _Faulty:
    name = "faulty-deposit"
    version = "1"

    def __init__(self, fault) -> None:
        self.fault = fault
        self.deposits = 0

    def deposit(self, document) -> None:
        self.deposits += 1
        if self.deposits == FAILING_DEPOSIT:
            self.fault()

    def query(self, question, k):
        return [Hit(text="no idea")]


def _raise() -> None:
    raise ValueError("bad document")


def raises_in_deposit(context):
    return _Faulty(_raise)


def hangs_in_deposit(context):
    return _Faulty(lambda: time.sleep(3600))


def exits_in_deposit(context):
    import os

    return _Faulty(lambda: os._exit(1))


class _Numbered(_Faulty):
    version = 2  # not a string: it fell back to the registered version without a word


def numbered_version(context):
    return _Numbered(lambda: None)


class _Unnamed(_Faulty):
    name = ""


def empty_name(context):
    return _Unnamed(lambda: None)
