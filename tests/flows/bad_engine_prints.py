"""An engine module that prints on standard output when imported and when depositing, and
writes escape sequences to both of its streams."""

from __future__ import annotations

import os
import sys

from rotbench.contract.engine import Hit

print("hello from the engine module")  # noqa: T201 - the fault under test
os.write(1, b"and straight to descriptor 1\n")


class Chatty:
    name = "chatty"
    version = "0"

    def __init__(self, context) -> None:
        self.context = context
        self.printed = False

    def deposit(self, document) -> None:
        if not self.printed:  # the first document only
            self.printed = True
            print("depositing", document.uri)  # noqa: T201
            print("\x1b[2Jcleared\x1b]0;pwned\x07")  # noqa: T201
            sys.stderr.write("\x1b[31mred on stderr\x9b\n")

    def query(self, question, k):
        return [Hit(text="Alex lives in Lisbon.")]


def chatty(context):
    return Chatty(context)
