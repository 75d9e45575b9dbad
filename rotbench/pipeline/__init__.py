"""The pipeline's stages, one module each, in the order a run takes them:

generate -> extract -> index -> deposit -> probe -> score

(``ingest_probe`` replaces deposit + probe for an engine other than the reference one, which
reads documents itself; ``real_pairs`` runs once per run, after the worlds.) Each stage is a
plain typed function; which stages run, in what order and under which cache keys is the
run's plan (``rotbench.run.plan``), and ``flows/`` runs them as Prefect tasks. The stages
reach an engine through the engine host (``rotbench.engines.host``).

This package module imports nothing.
"""
