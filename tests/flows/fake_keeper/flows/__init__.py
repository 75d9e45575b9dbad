"""A stand-in ``flows`` package for the kept-server tests: its ``kept_server`` is the real
keeper with a stand-in server; every other module is the real one (``__path__``)."""

from pathlib import Path

__path__.append(str(Path(__file__).resolve().parents[4] / "flows"))  # noqa: F821
