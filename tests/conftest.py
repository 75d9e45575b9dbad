"""Test-wide environment: Prefect lives under the project (.prefect/tests, gitignored), with
analytics and telemetry off; the embedding model never touches a hub."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("PREFECT_HOME", str(ROOT / ".prefect" / "tests"))
os.environ.pop("PREFECT_API_URL", None)  # always the temporary server, never a user's
# a busy shared machine can take longer than the default 20 s to boot the temporary server
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")

from rotbench.prefect_env import configure_prefect_env  # noqa: E402

configure_prefect_env()
