"""Engines that misbehave, for the harness's failure tests (loaded as module:factory)."""

from __future__ import annotations

import time

from rotbench.engines.protocol import Hit


class _Base:
    version = "0"

    def __init__(self, context) -> None:
        self.context = context

    def deposit(self, document) -> None:
        return None


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
