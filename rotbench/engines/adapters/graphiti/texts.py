"""What Graphiti embeds on the oracle arm, known before the run: for ``warm_for_run``.

On the oracle arm the scripted LLM (``rotbench.engines.adapters.graphiti.llm.ScriptedLLM``) names
every entity by a perceived claim's subject or value and states every fact as the claim's
sentence, and the harness asks the probe questions; those are all Graphiti embeds (node
names, fact texts, search queries). Each is a scripted sentence or question
(``oracle_texts``) or a scripted subject or value (``oracle_names``), whatever the world.
Encoding them in one batch in a child process while the run starts keeps torch and the
model out of the run's process (about 500 MB and 6 s of CPU there), and leaves the engine
no model call of its own; a text missed anyway is encoded when Graphiti asks for it.
Imports nothing of graphiti-core.
"""

from __future__ import annotations

from rotbench.perception.oracle import generator_texts, oracle_names


def warm_texts(arm: str, generator: str) -> list[str]:
    """The texts Graphiti embeds on worlds of ``generator`` on the oracle arm, sorted (none
    on the paid arms: a model names the entities there)."""
    if arm != "oracle":
        return []
    return sorted(set(generator_texts(generator)) | set(oracle_names()))
