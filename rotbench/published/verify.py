"""Whether a shipped record equals what a run gives, figure for figure.

``differences`` names every figure, question outcome, behaviour and manifest field that
differs between a shipped record and one built from a fresh run's report; the run's own
identity (run id, instant, command, rotbench's version) is left out, and so is each world
file's digest: it covers every hit's similarity, whose last digits move with how the
texts were batched for the embedder (the question counts, the hit counts and every figure
are compared).
"""

from __future__ import annotations

from rotbench.published.models import Record

FIGURE_FIELDS: tuple[str, ...] = (
    "metrics", "by_channel", "by_kind", "by_evidence", "miss_stages", "family_miss_stages",
    "perception_noise", "worlds", "degraded")
"""The report fields compared (each a figure or the worlds it was measured on)."""

IDENTITY: frozenset[str] = frozenset({"run_id", "created_at", "command", "rotbench_version"})
"""Manifest fields that name one run rather than what it measured."""


def _flat(prefix: str, value: object, out: dict[str, object]) -> None:
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            _flat(f"{prefix}[{i}]", item, out)
    elif isinstance(value, dict) and not {"numerator", "denominator"} <= set(value):
        for key, item in value.items():
            _flat(f"{prefix}.{key}", item, out)
    elif isinstance(value, dict):
        out[prefix] = f"{value['numerator']}/{value['denominator']}"
    else:
        out[prefix] = value


def differences(shipped: Record, fresh: Record) -> list[str]:
    """One line per difference ('metrics.current_first: shipped 93/195, run 94/195'),
    empty when the two records agree on every figure."""
    lines = []
    a: dict[str, object] = {}
    b: dict[str, object] = {}
    for name in FIGURE_FIELDS:
        _flat(name, shipped.report.model_dump(mode="json").get(name), a)
        _flat(name, fresh.report.model_dump(mode="json").get(name), b)
    manifest_a = shipped.manifest.model_dump(mode="json")
    manifest_b = fresh.manifest.model_dump(mode="json")
    for key in manifest_a:
        if key not in IDENTITY:
            a[f"manifest.{key}"], b[f"manifest.{key}"] = manifest_a[key], manifest_b[key]
    for key in sorted(set(a) | set(b)):
        if key.startswith("worlds[") and key.endswith(".sha256"):
            continue
        if a.get(key) != b.get(key):
            lines.append(f"{key}: shipped {a.get(key)!r}, run {b.get(key)!r}")
    for row in sorted(set(shipped.outcomes) | set(fresh.outcomes)):
        x, y = shipped.outcomes.get(row), fresh.outcomes.get(row)
        if x != y:
            moved = (sum(1 for i, j in zip(x, y, strict=True) if i != j)
                     if x is not None and y is not None else "all")
            lines.append(f"outcomes[{row}]: {moved} questions differ")
    if [f.model_dump() for f in shipped.findings] != [f.model_dump() for f in fresh.findings]:
        lines.append("findings: the top behaviours differ")
    return lines
