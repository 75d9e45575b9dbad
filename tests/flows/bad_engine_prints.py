"""An engine module that prints on standard output when imported and when depositing."""

from __future__ import annotations

import os

from rotbench.contract.engine import Hit

print("hello from the engine module")  # noqa: T201 - the fault under test
os.write(1, b"and straight to descriptor 1\n")


class Chatty:
    name = "chatty"
    version = "0"

    def __init__(self, context) -> None:
        self.context = context

    def deposit(self, document) -> None:
        if document.day == 0:
            print("depositing", document.uri)  # noqa: T201

    def query(self, question, k):
        return [Hit(text="Alex lives in Lisbon.")]


def chatty(context):
    return Chatty(context)
