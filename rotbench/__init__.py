"""rotbench: a memory-rot benchmark for agent-memory engines."""

__version__ = "0.1.0"
