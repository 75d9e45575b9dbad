"""The runs a results database holds: which there are, and the list ``rotbench runs``
prints (with the three headline figures of each)."""

from __future__ import annotations

from typing import Any


def has_column(con, table: str, column: str) -> bool:
    """Whether table ``table`` of the database has a column ``column``."""
    return bool(con.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_name = ? AND column_name = ?", [table, column]).fetchone()[0])


def run_ids(con) -> list[str]:
    """Every run id in the database, newest first ([] when ``runs`` has no ``id``)."""
    if not has_column(con, "runs", "id"):
        return []
    return [r[0] for r in con.execute("SELECT id FROM runs ORDER BY created_at DESC").fetchall()]


HEADLINE = ("current_first", "stale_over_current", "poison_leak_at_k")


def list_runs(con, arm: str | None = None, engine: str | None = None,
              limit: int | None = None) -> list[dict[str, Any]]:
    """The runs in the database, newest first, as plain dicts: id, created_at (ISO UTC),
    arm, noise (the noisy arm's profile name, from the run's selection; None on the other
    arms), users (the users of its store: ``--users``, 1 for a single-user run), engine,
    engine_version, engine_source, generator (its version, None when the run did not record
    one), seeds, scorer, degraded (False when the database
    predates the marking), and per headline metric ``{numerator, denominator, value}``
    (None when the run lacks it). ``engine`` matches the name or the source."""
    degraded = "r.degraded" if has_column(con, "runs", "degraded") else "NULL"
    source = "r.engine_source" if has_column(con, "runs", "engine_source") else "NULL"
    where, params = [], []
    if arm is not None:
        where.append("r.arm = ?")
        params.append(arm)
    if engine is not None:
        where.append(f"(r.engine = ? OR {source} = ?)")
        params += [engine, engine]
    sql = (f"SELECT r.id, r.created_at, r.arm, r.engine, r.engine_version, {source}, r.seeds, "
           f"r.generator_version, r.scorer_version, {degraded}, "
           "json_extract_string(r.selection, '$.noise'), "
           "json_array_length(r.selection, '$.users') FROM runs r"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY r.created_at DESC, r.id DESC"
           + (f" LIMIT {int(limit)}" if limit is not None else ""))
    rows = con.execute(sql, params).fetchall()
    ids = [r[0] for r in rows]
    figures: dict[tuple[str, str], tuple[int, int]] = {}
    if ids:
        for run_id, metric, n, d in con.execute(
                "SELECT run_id, metric, numerator, denominator FROM metrics WHERE seed IS NULL "
                "AND channel IS NULL AND checkpoint IS NULL AND metric IN (?, ?, ?) "
                "AND run_id IN (SELECT unnest(?))", [*HEADLINE, ids]).fetchall():
            figures[(run_id, metric)] = (n, d)
    out = []
    for (run_id, created, arm_, eng, version, src, seeds, generator, scorer, bad, noise,
         users) in rows:
        entry: dict[str, Any] = {
            "id": run_id, "created_at": created.isoformat() + "Z" if created else None,
            "arm": arm_, "noise": noise, "users": max(1, users or 0), "engine": eng,
            "engine_version": version, "engine_source": src, "generator": generator,
            "seeds": list(seeds or []), "scorer": scorer, "degraded": bool(bad)}
        for metric in HEADLINE:
            got = figures.get((run_id, metric))
            entry[metric] = None if got is None else {
                "numerator": got[0], "denominator": got[1],
                "value": got[0] / got[1] if got[1] else None}
        out.append(entry)
    return out
