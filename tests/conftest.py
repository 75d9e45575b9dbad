"""Test-wide environment: Prefect lives in a temporary folder outside the working tree
(unless PREFECT_HOME is set), with analytics and telemetry off; the embedding model never
touches a hub."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# one folder per user under the system's temporary folder: kept between sessions (the
# temporary server's database is created once), never in the working tree or HOME
os.environ.setdefault("PREFECT_HOME", str(Path(tempfile.gettempdir())
                                          / f"rotbench-tests-{os.getuid()}" / "prefect"))
os.environ.pop("PREFECT_API_URL", None)  # always the temporary server, never a user's
# On a busy 2-core machine the temporary server can take longer than Prefect's 20 s default.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
# Prefect creates its home but not missing parents.
Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)

from flows.prefect_env import configure_prefect_env  # noqa: E402

configure_prefect_env()


import pytest  # noqa: E402

from rotbench.results import Report, write_report  # noqa: E402
from rotbench.testing.synthetic import synthetic_report  # noqa: E402


@pytest.fixture(scope="session")
def small_report() -> Report:
    """A scored 1-world synthetic report under scorer v2 (84 probes); no engine, no model."""
    return synthetic_report((7,), scorer="v2")


@pytest.fixture()
def saved(tmp_path: Path, small_report: Report) -> Path:
    """``small_report`` written to ``<tmp>/reports/<run-id>.json``."""
    return write_report(small_report, tmp_path / "reports" / f"{small_report.run_id}.json")
