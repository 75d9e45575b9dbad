"""``mem0-raw`` and ``mem0``: the mem0 adapter and its paid-arm estimate."""
