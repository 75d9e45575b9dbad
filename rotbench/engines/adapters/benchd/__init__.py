"""``benchd:<adapter>``: benchd-harness adapters as rotbench engines."""
