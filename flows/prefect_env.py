"""Environment for Prefect on machines with no network, set before ``import prefect``.

- analytics and telemetry off (``PREFECT_SERVER_ANALYTICS_ENABLED=false``, ``DO_NOT_TRACK=1``);
- ``PREFECT_HOME`` inside the run's cache folder (``<cache>/prefect-home``) unless the user
  set one: rotbench writes only where the user pointed it, never into the working tree, the
  install folder or ``$HOME``;
- the temporary server's event persister and task-run recorder off (see below);
- Prefect's own INFO logging off the terminal unless the user chose a level;
- no model hub access for the embedding model (``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

PREFECT_HOME_DIR = "prefect-home"
"""The folder under the cache folder that is Prefect's home (its database, logs, settings)
when the user set no ``PREFECT_HOME``."""


def prefect_home(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The Prefect home a run on ``cache_dir`` uses (``$PREFECT_HOME`` when the user set
    one), worked out without setting or writing anything."""
    if os.environ.get("PREFECT_HOME"):
        return Path(os.environ["PREFECT_HOME"])
    if cache_dir is None:
        cache_dir = os.environ.get("ROTBENCH_CACHE_DIR") or "cache"
    return (Path(cache_dir) / PREFECT_HOME_DIR).resolve()


def configure_prefect_env(cache_dir: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Set the variables above (never overriding the user's); returns what it set.
    ``cache_dir``: the run's cache folder (default: ``$ROTBENCH_CACHE_DIR`` or ``./cache``);
    Prefect's home goes under it, as an absolute path."""
    wanted = {
        "PREFECT_HOME": str(prefect_home(cache_dir)),  # the user's own is kept
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
        # nor does it evaluate automations (none is ever set on it): the triggers service's
        # loops are the one perpetual work of a temporary server a run never asks for
        "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    applied = {}
    if os.environ.get("PREFECT_HOME") == "":  # empty is unset, as ``prefect_home`` reads it
        del os.environ["PREFECT_HOME"]  # (Prefect would take the working folder)
    for key, value in wanted.items():
        if key not in os.environ:
            os.environ[key] = value
            applied[key] = value
    bundle = _plain_http_ca_bundle()
    if bundle is not None:
        os.environ["PREFECT_API_SSL_CERT_FILE"] = applied["PREFECT_API_SSL_CERT_FILE"] = bundle
    return applied


def _plain_http_ca_bundle() -> str | None:
    """A one-certificate CA file for Prefect's API client when its API is plain HTTP.

    Prefect builds a verifying TLS context for every API client it creates, two per task
    run, and loading certifi's whole bundle costs about 25 ms each time (measured on these
    machines: 0.4 ms with one certificate). A plain-HTTP API (the temporary loopback server
    a CLI run starts, or an ``http://`` URL) never uses it, so a one-certificate file taken
    from certifi's bundle is enough. Nothing is changed when the user set
    ``PREFECT_API_SSL_CERT_FILE`` or the API is HTTPS. Returns the file's path, or None.
    """
    url = os.environ.get("PREFECT_API_URL", "")
    if "PREFECT_API_SSL_CERT_FILE" in os.environ or (url and not url.startswith("http://")):
        return None
    import re

    try:
        import certifi  # httpx's own dependency (Prefect's client is httpx)
    except ImportError:
        return None
    path = Path(os.environ["PREFECT_HOME"]) / "plain-http-ca.pem"
    try:
        if not path.is_file():
            text = Path(certifi.where()).read_text()
            first = re.search(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n",
                              text, re.S)
            if first is None:
                return None
            from rotbench._util.atomic import write_atomic

            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, first.group(0).encode())
    except OSError:
        return None
    return str(path)


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
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "true",  # a user's automations work here
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
}
"""Environment for ``rotbench server`` (a Prefect server tuned for rotbench's runs)."""

