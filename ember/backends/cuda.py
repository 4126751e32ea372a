"""The CUDA backend: IREE's ``cuda`` target on the ``cuda`` driver."""

from __future__ import annotations

NAME = "cuda"

# sm_80 PTX runs on newer GPUs through the driver's JIT; IREE 3.13 has no sm_90 target.
DEFAULT_ARCH = "sm_80"


def compiler_flags(arch: str = DEFAULT_ARCH) -> tuple[str, ...]:
    return ("--iree-hal-target-device=cuda", f"--iree-cuda-target={arch}")


def fallback_flags(arch: str = DEFAULT_ARCH) -> tuple[tuple[str, ...], ...]:
    return ()
