"""A deterministic stand-in encoder for fast tests: hashed bag of words.

Each lower-cased word (letters, digits, apostrophes) adds 1 to one of ``DIM`` dimensions
chosen by sha256, so the cosine of two short sentences is about shared words / sqrt(n1 * n2):
"The user's home city is Tallinn." vs "... is Porto." = 5/6 = 0.83, barring hash collisions.
No torch, no model, same output in every process.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from rotbench.embedding.embedder import DIM

FAKE_MODEL_ID = "rotbench/hashed-bag-of-words-384"
"""Model id to pair with ``hashing_encoder`` (keeps its vectors apart from the real model's)."""

_WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    """The words ``hashing_encoder`` counts, in order."""
    return _WORD.findall(text.lower())


def hashing_encoder(texts: list[str]) -> np.ndarray:
    """Texts -> (n, DIM) float32 bag-of-words counts (unnormalised; the Embedder normalises)."""
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in words(text):
            digest = hashlib.sha256(word.encode()).digest()
            out[row, int.from_bytes(digest[:4], "big") % DIM] += 1.0
    return out
