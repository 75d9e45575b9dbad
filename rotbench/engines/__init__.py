"""Engines under test: the registry (``registry``, entry points ``rotbench.engines``;
``builtin`` lists rotbench's own), where engines run (``sandbox``) and their traces
(``trace``), the engine host that every call to an engine goes through (``host/``: the
guard, the worker processes, the confinement), the baselines (``baselines/``) and one folder
per peer adapter with its paid-arm estimate beside it (``adapters/<peer>/``). The protocol
they implement and what the harness hands them are the contract (``rotbench.contract``);
engine authors import ``rotbench.plugin``.

This package module imports nothing.
"""
