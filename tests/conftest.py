"""Test-wide environment: Prefect lives under the project (.prefect/tests, gitignored), with
analytics and telemetry off; the embedding model never touches a hub."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("PREFECT_HOME", str(ROOT / ".prefect" / "tests"))
os.environ.pop("PREFECT_API_URL", None)  # always the temporary server, never a user's
# On a busy 2-core machine the temporary server can take longer than Prefect's 20 s default.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
# Prefect creates its home but not missing parents (.prefect/ in a fresh clone).
Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)

from rotbench.prefect_env import configure_prefect_env  # noqa: E402

configure_prefect_env()
