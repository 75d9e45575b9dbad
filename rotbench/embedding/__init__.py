"""Sentence embeddings behind a content-addressed cache (see ``rotbench.embedding.embedder``).

Importing this package never imports torch; the model loads on the first cache miss.
"""

from rotbench.embedding.embedder import DEFAULT_MODEL_ID, DIM, Embedder, EncodeStats, model_slug
from rotbench.embedding.fake import FAKE_MODEL_ID, hashing_encoder

__all__ = [
    "DEFAULT_MODEL_ID",
    "DIM",
    "FAKE_MODEL_ID",
    "Embedder",
    "EncodeStats",
    "hashing_encoder",
    "model_slug",
]
