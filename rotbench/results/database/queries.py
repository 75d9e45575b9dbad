"""Example queries over ``reports/rotbench.duckdb`` (schema in
``rotbench.results.database.tables``).

Run one with the DuckDB CLI or from Python::

    import duckdb
    from rotbench.results.database.queries import QUERIES
    con = duckdb.connect("reports/rotbench.duckdb", read_only=True)
    con.sql(QUERIES["current_first_over_time"]).show()

Rates are computed from counts: ``numerator / NULLIF(denominator, 0)`` is NULL for 0/0.
"""

from __future__ import annotations

QUERIES: dict[str, str] = {
    # Pooled current_first of every run and rescore, oldest first.
    "current_first_over_time": """
SELECT r.created_at, r.id AS run_id, r.arm, r.scorer_version, r.trust_policy,
       m.numerator, m.denominator,
       round(100.0 * m.numerator / NULLIF(m.denominator, 0), 1) AS percent
FROM runs r
JOIN metrics m ON m.run_id = r.id
WHERE m.metric = 'current_first' AND m.seed IS NULL
  AND m.channel IS NULL AND m.checkpoint IS NULL
ORDER BY r.created_at, r.id
""",
    # poison_leak_at_k per channel and run, pooled over seeds.
    "poison_leak_by_channel": """
SELECT r.id AS run_id, r.arm, r.trust_policy, m.channel, m.numerator, m.denominator,
       round(100.0 * m.numerator / NULLIF(m.denominator, 0), 1) AS percent
FROM runs r
JOIN metrics m ON m.run_id = r.id
WHERE m.metric = 'poison_leak_at_k' AND m.seed IS NULL AND m.channel IS NOT NULL
ORDER BY r.created_at, r.id, m.channel
""",
    # Hits whose class a rescore changed, beside the source run's class (source must be stored).
    "rescore_class_changes": """
SELECT r.id AS rescore_id, r.origin_run_id, r.scorer_version, h.seed, p.day, p.attribute,
       h.rank, h.text, s.cls AS source_cls, h.cls AS rescored_cls
FROM runs r
JOIN hits h ON h.run_id = r.id
JOIN probes p ON p.run_id = h.run_id AND p.seed = h.seed AND p.probe_index = h.probe_index
JOIN hits s ON s.run_id = r.origin_run_id AND s.seed = h.seed
           AND s.probe_index = h.probe_index AND s.rank = h.rank
WHERE r.origin_run_id IS NOT NULL AND s.cls IS DISTINCT FROM h.cls
ORDER BY r.id, h.seed, p.day, p.attribute, h.rank
""",
}
"""Named example queries: ``current_first_over_time``, ``poison_leak_by_channel``,
``rescore_class_changes``."""
