"""Environment for Prefect on machines with no network, set before ``import prefect``.

- analytics and telemetry off (``PREFECT_SERVER_ANALYTICS_ENABLED=false``, ``DO_NOT_TRACK=1``);
- ``PREFECT_HOME`` inside the project (``<project>/.prefect``) unless the user set one;
- the temporary server's event persister and task-run recorder off (see below);
- Prefect's own INFO logging off the terminal unless the user chose a level;
- no model hub access for the embedding model (``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The checkout this package runs from (holds pyproject.toml), else the working dir."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def configure_prefect_env() -> dict[str, str]:
    """Set the variables above (never overriding the user's); returns what it set."""
    wanted = {
        "PREFECT_HOME": str(project_root() / ".prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
        "PREFECT_LOGGING_LOG_PRINTS": "false",
        "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "false",
        # The temporary server's event persister and task-run recorder write every task
        # event into its SQLite file; their writes collide with flow-run writes and each
        # collision costs a 2 s client retry. The run's own records are the report and
        # DuckDB, so these two services are off unless the user turns them on.
        "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
        "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    applied = {}
    for key, value in wanted.items():
        if key not in os.environ:
            os.environ[key] = value
            applied[key] = value
    return applied


SERVER_TUNING: dict[str, str] = {
    # A long-running server keeps its task-run and event history (the UI shows it), but
    # writes it in batches: one SQLite write per task event collides with flow-run writes
    # and costs the client a 2 s retry each time (measured: warm run 6.4 s -> 2.5 s).
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "500",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE": "500",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
}
"""Environment for ``rotbench server`` (a Prefect server tuned for rotbench's runs)."""

