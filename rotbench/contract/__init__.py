"""The contract between rotbench and what plugs into it, one floor below everything else.

- ``engine``: the protocol an engine under test implements and the shapes it exchanges
  (``Document``, ``Hit``, ``Provenance``, ``MemoryEngine``, ``AsOfEngine``).
- ``context``: what the harness hands an engine's factory (``EngineContext``).
- ``perception``: the seams that read documents and judge claim pairs (``Extractor``,
  ``Checker``, ``Claim``, ``ClaimDraft``, ...).
- ``model_client``: the one place a model call can leave the process (``ModelClient``).
- ``extraction``: what an extraction hands on (``DocumentClaims``, ``Extraction``),
  ``lineage_of``, ``world_documents``, ``extract_document`` and ``CONVERSATION``.
- ``registry``: the registry's descriptor of an engine (``EngineInfo``) and ``EngineError``.
- ``estimate``: what an engine's estimate hook returns (``StageEstimate``) and the token
  heuristic (``approx_tokens``).

It imports only ``rotbench.world.models`` (the world's shapes) and libraries; every stage,
engine and perception module imports from here, never the other way. ``rotbench.plugin`` is
its public face for engine authors.
"""
