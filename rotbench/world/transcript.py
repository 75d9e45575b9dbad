"""Render a world's sessions as a person would read them, in day order."""

from __future__ import annotations

from rotbench.world.models import World


def render_transcript(world: World) -> str:
    """Plain-text transcript: one block per session headed by its day, time and source URI."""
    lines = [
        f"# World seed {world.seed}, {world.days} days "
        f"(generator v{world.generator_version}, fingerprint {world.fingerprint[:12]})"
    ]
    for s in world.sessions:
        lines.append("")
        lines.append(f"## Day {s.day} · {s.timestamp} · {s.kind} · {s.document_uri}")
        for t in s.turns:
            lines.append(f"{t.role}: {t.text}")
    return "\n".join(lines) + "\n"
