"""The ``rotbench`` command line (typer)."""
