"""A plug-in engine module whose import never ends, loaded as
``tests.engines.isolation_slow_import:sound``."""

from __future__ import annotations

import time

from tests.engines.isolation_engines import Sound

time.sleep(3600)


def sound(context):
    return Sound(context)
