"""Render a world's sessions as a person would read them, in delivery order."""

from __future__ import annotations

from rotbench.world.generators.registry import GENERATORS
from rotbench.world.models import World


def render_transcript(world: World) -> str:
    """Plain-text transcript: one block per session, in the order the store receives them,
    headed by its day, time and source URI. A document delivered after the day it was
    written (generator 3) is headed ``Delivered day D (written day W, late)``: the truth at a
    checkpoint is what the documents delivered by then imply, by their written days.
    Generator 5 notes a re-delivered document and a forget request under their headings."""
    lines = [
        f"# World seed {world.seed}, {world.days} days "
        f"(generator v{world.generator_version}, fingerprint {world.fingerprint[:12]})"
    ]
    spec = GENERATORS.find(world.generator_version)
    if spec is not None and spec.events:
        lines.append("# Delivery order. Truth at a checkpoint: what the documents delivered "
                     "by then imply, replayed by written (or effective) day.")
    for s in world.sessions:
        lines.append("")
        when = (f"Delivered day {s.arrival} (written day {s.day}, late)" if s.late
                else f"Day {s.day}")
        lines.append(f"## {when} · {s.timestamp} · {s.kind} · {s.document_uri}")
        if s.redelivery_of is not None:
            lines.append(f"   (re-delivered unchanged: {s.redelivery_of})")
        for t in s.turns:
            lines.append(f"{t.role}: {t.text}")
        for f in s.facts:
            if f.effective_day is not None:
                lines.append(f"   (takes effect on day {f.effective_day})")
            if f.until_day is not None:
                lines.append(f"   (temporary, until day {f.until_day})")
            if f.event == "forget":
                lines.append(f"   (forget request: {f.attribute} = {f.value})")
            if f.depends_on is not None:
                lines.append(f"   ({f.tie} on {f.depends_on.attribute} = "
                             f"{f.depends_on.value})")
    return "\n".join(lines) + "\n"
