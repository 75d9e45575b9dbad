"""Deprecated old home of the reference engine and the engine protocol (layout-codemod: skip).

Kept for one release so engines written against it keep working: ``rotbench.engine.protocol``
still gives ``Document``, ``Hit``, ``MemoryEngine``, ... Engine authors now import
``rotbench.plugin``; the reference engine is ``rotbench.reference``. Importing this module
warns (DeprecationWarning).

A single module, not a package, so that ``git`` sees ``rotbench/engine/*.py`` as moved: the
``protocol`` submodule is registered in ``sys.modules`` here, which is where ``import
rotbench.engine.protocol`` looks once ``rotbench.engine`` is loaded.
"""

import sys
import types
import warnings

warnings.warn(
    "rotbench.engine and rotbench.engine.protocol are deprecated and will be removed in the "
    "next release: engine authors import Document, Hit, MemoryEngine, ... from "
    "rotbench.plugin; the reference engine lives in rotbench.reference",
    DeprecationWarning,
    stacklevel=2,
)

from rotbench import plugin as _plugin  # noqa: E402
from rotbench.reference import ENGINE_VERSION  # noqa: E402

protocol = types.ModuleType(__name__ + ".protocol", "Deprecated: use ``rotbench.plugin``.")
for _name in ("AsOfEngine", "Document", "Hit", "MemoryEngine", "Provenance"):
    setattr(protocol, _name, getattr(_plugin, _name))
sys.modules[protocol.__name__] = protocol

__all__ = ["ENGINE_VERSION", "protocol"]
