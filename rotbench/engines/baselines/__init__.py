"""The baseline engines rotbench ships (no model calls): ``transcript-rag`` and ``latest-wins``."""
