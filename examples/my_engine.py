"""A complete engine for rotbench in about 20 lines: the newest thing the user said per slot.

Run it with:  rotbench run --engine examples.my_engine:make_engine
"""

import numpy as np

from rotbench.plugin import Hit


class NewestStatement:
    name, version = "newest-statement", "1.0"

    def __init__(self, context):
        self.context = context  # embedder, perceived claims, a scratch folder of its own
        self.memory = {}  # (user, subject, slot) -> sentence

    def deposit(self, document):
        """Called once per document, in the order documents reach the store."""
        if document.kind == "web_page":
            return  # trust only what happens in the conversation
        for claim in self.context.claims(document):
            if claim.slot and claim.tense == "present" and claim.attribution == "own":
                # document.user: whose memory this is when users share the store (--users)
                self.memory[(document.user, claim.subject, claim.slot)] = claim.sentence

    def query(self, question, k, user=None):
        """The ``k`` best hits for ``question``, best first, from ``user``'s memories."""
        texts = [text for (owner, *_), text in self.memory.items() if owner == user]
        if not texts:
            return []
        vectors = self.context.embedder.encode([question, *texts])
        similarity = vectors[1:] @ vectors[0]
        best = np.argsort(-similarity)[:k]
        return [Hit(text=texts[i], similarity=float(similarity[i])) for i in best]


def make_engine(context):
    return NewestStatement(context)
