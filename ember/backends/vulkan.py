"""The Vulkan backend: IREE's ``vulkan-spirv`` target on the ``vulkan`` driver."""

from __future__ import annotations

NAME = "vulkan"


def compiler_flags() -> tuple[str, ...]:
    return ("--iree-hal-target-device=vulkan",)


def fallback_flags() -> tuple[tuple[str, ...], ...]:
    return ()
