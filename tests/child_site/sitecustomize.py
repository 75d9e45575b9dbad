"""In a Python process a test started (tests/conftest.py puts this folder first on the
PYTHONPATH it passes on, with ``ROTBENCH_TESTS_VECTORS``): once rotbench's embedder module
is imported, its model loader is the session's caching one (``rotbench_test_vectors``), so
a child ``rotbench run`` (or its warm-up child) whose batch of texts was encoded before on
this machine reads its vectors instead of importing torch and loading MiniLM. Everything
else in the child is as in a user's run: its processes, its warm-up, its cache files and
``model_loads``. Nothing is imported here until that module is."""

from __future__ import annotations

import os
import sys

_TARGET = "rotbench.embedding.embedder"


class _PatchOnImport:
    """A meta-path finder that lets the normal finders find ``_TARGET``, then patches the
    module right after it executes."""

    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        loader, run = spec.loader, spec.loader.exec_module

        def exec_module(module) -> None:
            run(module)
            from pathlib import Path

            import rotbench_test_vectors

            rotbench_test_vectors.patch(module, Path(os.environ[rotbench_test_vectors.ENV]))

        loader.exec_module = exec_module
        return spec


if os.environ.get("ROTBENCH_TESTS_VECTORS"):
    sys.meta_path.insert(0, _PatchOnImport())
