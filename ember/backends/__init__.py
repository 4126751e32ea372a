"""Compilation targets. Each backend is one module with the same small interface:

``NAME``, ``compiler_flags(**options) -> tuple[str, ...]`` (IREE flags for the target),
``fallback_flags(**options)`` (flag sets to retry with when IREE fails), and the runtime side
(driver and devices). Adding a target (ROCm, Metal) is one new module listed here.
"""

from __future__ import annotations

import importlib

BACKENDS = ("cpu", "vulkan", "cuda")


def get_backend(name: str):
    """The backend module for ``name`` ("cpu", "vulkan", "cuda").

    Example:
        >>> get_backend("cpu").compiler_flags()[0]
        '--iree-hal-target-device=local'
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; backends are {', '.join(BACKENDS)}")
    return importlib.import_module(f"ember.backends.{name}")
