"""Importing graphiti-core so that it stays offline and reads nothing it was not given.

Two things graphiti-core 0.31 does on its own, and how this module stops them:

- Telemetry is on unless ``GRAPHITI_TELEMETRY_ENABLED`` says otherwise: building a
  ``Graphiti`` resolves its analytics host and writes an anonymous id under
  ``~/.cache/graphiti/``. The variable is set to ``false`` for the import, and the package's
  own check (``graphiti_core.telemetry.telemetry.is_telemetry_enabled``) is replaced by one
  that always answers False, so no later change of the environment turns it back on.
- Two of its modules call python-dotenv's ``load_dotenv()`` when imported, which reads a
  ``.env`` found in the working directory or above the package (e.g. a repository holding the
  virtualenv) into ``os.environ``. ``load_dotenv`` is a no-op while the package is imported.

The environment is restored afterwards; the import happens once per process, under a lock.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType

TELEMETRY_VARIABLE = "GRAPHITI_TELEMETRY_ENABLED"
_LOCK = threading.Lock()
_DONE: list[ModuleType] = []


def _no_dotenv(*args: object, **kwargs: object) -> bool:
    """Stand-in for ``dotenv.load_dotenv`` while graphiti-core is imported: reads nothing."""
    return False


def _telemetry_off() -> bool:
    return False


def import_graphiti() -> ModuleType:
    """Import graphiti-core (and the Kuzu driver) with telemetry off and no ``.env`` read;
    returns the ``graphiti_core`` module. Raises ImportError when the extra is missing
    (``pip install 'rotbench[graphiti]'``)."""
    with _LOCK:
        if _DONE:
            return _DONE[0]
        import dotenv

        saved = os.environ.get(TELEMETRY_VARIABLE)
        os.environ[TELEMETRY_VARIABLE] = "false"
        real_load = dotenv.load_dotenv
        dotenv.load_dotenv = _no_dotenv
        try:
            import graphiti_core
            import graphiti_core.driver.kuzu_driver  # noqa: F401 - imported under the guard
            import graphiti_core.graphiti  # noqa: F401
            import graphiti_core.helpers  # noqa: F401
            import graphiti_core.telemetry.telemetry as telemetry
        finally:
            dotenv.load_dotenv = real_load
            if saved is None:
                os.environ.pop(TELEMETRY_VARIABLE, None)
            else:
                os.environ[TELEMETRY_VARIABLE] = saved
        telemetry.is_telemetry_enabled = _telemetry_off
        _DONE.append(graphiti_core)
        return graphiti_core
