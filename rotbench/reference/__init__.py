"""The reference memory engine, the default system under test.

Modules: ``protocol`` (what every engine implements), ``perception`` (extractor and checker
seams), ``oracle`` (scripted perception), ``extract`` / ``reconcile`` / ``query`` (the plain
stage functions the pipeline wires together), ``ledger`` (the append-only store) and
``reference`` (``ReferenceEngine``, the same logic behind the ``MemoryEngine`` protocol).

This package module imports nothing, so importing ``rotbench.engines.protocol`` stays cheap.
"""

ENGINE_VERSION = "0.3.0"
"""Version of the reference engine's decision and ranking logic; enters the cache keys.
Bump it whenever what ``deposit`` decides or what ``query`` returns can change."""
