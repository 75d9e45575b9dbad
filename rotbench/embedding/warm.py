"""``python -m rotbench.embedding.warm CACHE_DIR [MODEL_ID]``: encode texts in a child process.

Reads a JSON list of texts on stdin and makes sure each is in the embedding cache under
``CACHE_DIR`` (``Embedder.ensure``: the misses, in the order given, as one batch and one new
shard). Prints the ``EncodeStats`` as JSON. ``Embedder.start_warming`` runs this so that a
run's main process never has to import torch when the texts it needs are known up front.
Exit status 2 on bad input (one line on stderr).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from rotbench._util.lifetime import die_with_parent


def main(argv: list[str]) -> int:
    """Run the warm-up; returns the exit status."""
    parent = os.getppid()
    die_with_parent()  # SIGTERM: an abandoned warm-up ends
    if os.getppid() != parent:  # the parent died before the signal was armed
        return 1
    if not 1 <= len(argv) <= 2:
        print("usage: python -m rotbench.embedding.warm CACHE_DIR [MODEL_ID] < texts.json",
              file=sys.stderr)
        return 2
    try:
        texts = json.load(sys.stdin)
    except ValueError as exc:
        print(f"stdin: not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        print("stdin: expected a JSON list of strings", file=sys.stderr)
        return 2
    from rotbench.embedding.embedder import DEFAULT_MODEL_ID, Embedder

    embedder = Embedder(Path(argv[0]), argv[1] if len(argv) > 1 else DEFAULT_MODEL_ID)
    print(embedder.ensure(texts).model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
