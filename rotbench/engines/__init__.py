"""Engines under test: the protocol they implement (``protocol``), what the harness hands them
(``context``), the registry (``registry``, entry points ``rotbench.engines``; ``builtin`` lists
rotbench's own), baselines (``transcript_rag``, ``latest_wins``), adapters for peer engines
(``mem0_engine``, ``particles_engine``, ``benchd_bridge``) and their cost estimates
(``estimate``, ``mem0_estimate``). The reference engine is ``rotbench.reference``; engine
authors import ``rotbench.plugin``.

This package module imports nothing.
"""
