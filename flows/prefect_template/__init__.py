"""A migrated, empty Prefect server database per Prefect version, so a run on a fresh cache
folder does not pay for a new SQLite database's migrations.

A new ``PREFECT_HOME`` (every cold run's cache folder has its own) made the server run all of
Prefect's migrations and register every block type before it answered: about 5 s of CPU on
2 cores, half the server's start (measured with ``benchmarks/process_cpu.py``). The database
those steps leave is the same every time for one Prefect version, so it ships here
(``prefect-<version>.db.gz``, 67 kB: what ``prefect server start`` made on an empty home,
with its 54 block types, compacted with ``VACUUM INTO``), and ``seed_database`` copies it
into a home that has no database yet. The server then finds its migrations done; its block
registration is turned off for such a home (``SEEDED_MARKER``), since the types are in.

Nothing is copied when the user chose the database (``PREFECT_API_DATABASE_CONNECTION_URL``
or ``PREFECT_SERVER_DATABASE_CONNECTION_URL``), for another Prefect version (no file ships
for it: the server migrates as before), or when ``ROTBENCH_PREFECT_TEMPLATE=0``. Rebuild for
a new Prefect version: start ``prefect server start`` on an empty ``PREFECT_HOME``, stop it,
``sqlite3 prefect.db "VACUUM INTO 'out.db'"``, and gzip ``out.db`` to
``prefect-<version>.db.gz``.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
SEEDED_MARKER = "rotbench-seeded-database"
"""A file in ``PREFECT_HOME`` saying its database came from the template."""
OFF_ENV = "ROTBENCH_PREFECT_TEMPLATE"
_USER_DB = ("PREFECT_API_DATABASE_CONNECTION_URL", "PREFECT_SERVER_DATABASE_CONNECTION_URL")


def template_path() -> Path | None:
    """The shipped database of the installed Prefect version, or None."""
    try:
        path = FOLDER / f"prefect-{version('prefect')}.db.gz"
    except PackageNotFoundError:
        return None
    return path if path.is_file() else None


def seed_database(home: Path) -> bool:
    """Copy the template into ``home/prefect.db`` when it has no database (atomic: a
    complete file or none). Returns True when ``home``'s database is a seeded one (now or
    earlier), False when the server must migrate and register as usual."""
    if os.environ.get(OFF_ENV, "1").strip() == "0" or any(os.environ.get(k) for k in _USER_DB):
        return False
    database, marker = home / "prefect.db", home / SEEDED_MARKER
    if database.exists():
        return marker.is_file()
    source = template_path()
    if source is None:
        return False
    try:
        home.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=home, prefix=".prefect-db-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out, gzip.open(source, "rb") as src:
                shutil.copyfileobj(src, out)
            marker.write_text(source.name + "\n")
            os.replace(tmp, database)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError:
        return False
    return True


def at_template_head(home: Path) -> bool:
    """True when ``home``'s database was seeded from the template of the installed Prefect
    version (its marker names that file): its migrations are all applied, so the server
    need not load and check them (``PREFECT_API_DATABASE_MIGRATE_ON_START=false``). False
    for any other database, which the server migrates as usual."""
    source = template_path()
    try:
        named = (home / SEEDED_MARKER).read_text().strip()
    except OSError:
        return False
    return source is not None and named == source.name and (home / "prefect.db").is_file()


def seeded_server_env(home: Path, env: dict[str, str]) -> dict[str, str]:
    """The settings a Prefect server on ``home`` starts with, beside ``env`` (its
    environment): ``home`` is seeded first when it has no database (``seed_database``);
    a seeded home then registers no block types (they are in) and, while it is at the
    installed Prefect version's head, checks no migrations (unless ``env`` says). Empty
    when the server must migrate and register as usual."""
    if not seed_database(home):
        return {}
    settings = {"PREFECT_API_BLOCKS_REGISTER_ON_START": "false"}
    if at_template_head(home) and "PREFECT_API_DATABASE_MIGRATE_ON_START" not in env:
        settings["PREFECT_API_DATABASE_MIGRATE_ON_START"] = "false"  # at this version's head
    return settings


__all__ = ["SEEDED_MARKER", "at_template_head", "seed_database", "seeded_server_env",
           "template_path"]
