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
        # The temporary server of a single CLI run lives only as long as the run and
        # nobody can look at its history afterwards, so it skips recording task runs and
        # events (``rotbench server`` and any server the user runs keep them: see
        # SERVER_TUNING).
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
    # A long-running server keeps every task run and event, so the UI and the API show each
    # stage with its Cached or Completed state. These two services used to be switched off
    # here by mistake (``configure_prefect_env`` turned them off for the temporary server
    # and this server inherited it). The SQLite collisions that once made that look
    # necessary came from the flow's shape, not from the services: a hundred concurrent
    # subflows each created and finished a flow run (API writes racing one another and
    # the recorder on the one SQLite file). A run now makes one flow run whatever its seed
    # count; its stages are task runs, which reach the server as events the recorder
    # writes in batches.
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "true",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED": "true",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE": "500",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
}
"""Environment for ``rotbench server`` (a Prefect server tuned for rotbench's runs)."""

