"""Known-wrong kernels (and their controls), registered only for the tests that use them."""

from __future__ import annotations

import contextlib
import importlib
import sys


@contextlib.contextmanager
def registered(module: str):
    """Register the kernels of ``module`` (e.g. ``tests.wrong.kernels``) in this process while the
    block runs. The real kernels are discovered first, so only what the module added is removed
    afterwards (registered at import, planted kernels would join every other test's plan)."""
    from suite import registry

    registry.discover()
    before = set(registry.REGISTRY)
    mod = sys.modules.get(module)
    importlib.reload(mod) if mod else importlib.import_module(module)
    try:
        yield
    finally:
        for key in set(registry.REGISTRY) - before:
            del registry.REGISTRY[key]
