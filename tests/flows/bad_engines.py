"""Engines that misbehave, for the harness's failure tests (loaded as module:factory)."""

from __future__ import annotations

import time

from rotbench.contract.engine import Hit


class _Base:
    """A well-behaved engine: it keeps nothing and answers every question with one hit. Each
    engine below overrides only what it does wrong."""

    version = "0"

    def __init__(self, context) -> None:
        self.context = context

    def deposit(self, document) -> None:
        return None

    def query(self, question, k):
        return [Hit(text="Alex lives in Lisbon.")]


class Raises(_Base):
    name = "raises"

    def query(self, question, k):
        raise ValueError("the index is \x1b]0;gone\x07")


class Malformed(_Base):
    name = "malformed"

    def query(self, question, k):
        return [Hit(text="fine"), {"text": 7}]


class Hangs(_Base):
    name = "hangs"

    def deposit(self, document) -> None:
        if document.day >= 20:
            time.sleep(30)

    def query(self, question, k):
        return []


def raises(context):
    return Raises(context)


def malformed(context):
    return Malformed(context)


def hangs(context):
    return Hangs(context)


# -- issue 26: engines that attack the boundary itself -----------------------------------------


class LyingLength(list):
    """A hit list whose ``__len__`` says 1 whatever it holds."""

    def __len__(self) -> int:
        return 1


class LongList(_Base):
    name = "long-list"

    def query(self, question, k):
        return LyingLength(Hit(text=f"hit {i}") for i in range(50))


class Similarity(_Base):
    """Answers one hit whose ``field`` ('similarity' or 'score') is ``value``."""

    name = "similarity"

    def __init__(self, context, field: str = "similarity", value: float = 7.0) -> None:
        super().__init__(context)
        self.field, self.value = field, value

    def query(self, question, k):
        return [{"text": "a hit", self.field: self.value}]


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class RaisesUnprintable(_Base):
    name = "unprintable"

    def query(self, question, k):
        raise _Unprintable()


class RaisingName(_Base):
    @property
    def name(self):
        raise RuntimeError("who am I")


class HugeText(_Base):
    """Hits of 1 MB each (above the boundary's text limit)."""

    name = "huge-text"

    def query(self, question, k):
        return [Hit(text="x" * 1_000_000)]


class LoneSurrogate(_Base):
    name = "surrogate"

    def query(self, question, k):
        return [Hit(text="Alex lives in \ud800Lisbon.")]


class ExitsInDeposit(_Base):
    name = "exits"

    def deposit(self, document) -> None:
        import sys

        sys.exit(0)

    def query(self, question, k):
        return []


class GeneratorExitInQuery(_Base):
    name = "generator-exit"

    def query(self, question, k):
        raise GeneratorExit()


class HardExitInDeposit(ExitsInDeposit):
    """Ends the whole process in its deposit, with no exception to catch."""

    name = "hard-exit"

    def deposit(self, document) -> None:
        import os

        os._exit(0)


class EvilName(_Base):
    name = "\x1b[31mevil\nrotbench: error: forged"


class WritesOutside(_Base):
    """Writes ``./FILE`` and ``~/FILE`` on its first deposit."""

    name = "writes-outside"

    def deposit(self, document) -> None:
        from pathlib import Path

        for path in (Path("rotbench-engine-wrote-here.txt"),
                     Path("~/rotbench-engine-wrote-home.txt").expanduser()):
            if not path.exists():
                path.write_text("an engine was here\n")


# Factories for ``module:factory`` specs: each class takes the engine context itself.
long_list = LongList
unprintable = RaisesUnprintable
raising_name = RaisingName
huge_text = HugeText
surrogate = LoneSurrogate
exits = ExitsInDeposit
generator_exit = GeneratorExitInQuery
hard_exit = HardExitInDeposit
evil_name = EvilName
writes_outside = WritesOutside


def similarity(context):
    return Similarity(context, "similarity", 7.0)


def starts_a_thread(context):
    """A factory that leaves a thread that is not a daemon running for ever."""
    import threading

    stop = threading.Event()
    threading.Thread(target=stop.wait, name="engine-own-thread", daemon=False).start()
    return LatestOnly(context)


class LatestOnly(_Base):
    name = "latest-only"
