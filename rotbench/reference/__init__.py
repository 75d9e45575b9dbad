"""The reference memory engine, the default system under test.

Modules: ``config`` (every threshold, named and overridable), ``reconcile`` (deposit: claims
into the ledger, retiring what they supersede; ``reread``, ``wording``, ``ties`` and
``corroborate`` hold its rules), ``lookahead`` (asking a model checker
ahead), ``ledger`` (the append-only store), ``query`` (ranking the ledger for a question)
and ``engine`` (``ReferenceEngine``, the same logic behind the ``MemoryEngine`` protocol).
What it perceives comes from ``rotbench.perception``; the stages that run it are in
``rotbench.pipeline``.

This package module imports nothing, so importing one of its modules stays cheap.
"""

ENGINE_VERSION = "0.6.4"
"""Version of the reference engine's decision and ranking logic; enters the cache keys.
Bump it whenever what ``deposit`` decides or what ``query`` returns can change."""
