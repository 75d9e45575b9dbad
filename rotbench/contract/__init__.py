"""The contract between rotbench and what plugs into it: the engine and perception protocols,
the context an engine is built with, the model-client seam and the shared extraction types.
It imports nothing else of rotbench; ``rotbench.plugin`` is its public face."""
