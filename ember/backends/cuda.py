"""The CUDA backend: IREE's ``cuda`` target on the ``cuda`` driver.

Compiling needs no GPU and no CUDA installation (IREE emits PTX itself); loading and running
need the NVIDIA driver (``libcuda.so``).
"""

from __future__ import annotations

import functools

from ember.backends._drivers import device_at, enumerate_devices
from ember.backends.runtime import Device
from ember.errors import TargetOptionError

NAME = "cuda"
OPTIONS = {"arch": "cuda_arch"}
# Not before they have run on a GPU: Vulkan's GPU codegen fails on them (vulkan.py).
DISPATCH_REGIONS = False
# Its signed division is unchecked on a GPU: ember divides magnitudes itself. IREE's CUDA
# driver loads no dispatch of more than 16 bindings (IREE_HAL_CUDA_MAX_DISPATCH_BINDING_COUNT;
# its compiler does not check it).
TRAITS = {"float64": True, "exact_division": False, "outer_reductions": True,
          "exact_rounding": True, "loop_chunks": True, "max_bindings": 16}
INSTALL_HINT = ("Install the NVIDIA driver (it provides libcuda.so) on a machine with an "
                "NVIDIA GPU; the CUDA toolkit is not needed.")

# The one place the default architecture lives. sm_80 PTX runs on newer GPUs (Hopper
# included) through the driver's JIT; IREE 3.13 has no sm_90 target.
DEFAULT_ARCH = "sm_80"
# Checked: each fails in IREE 3.13 with "missing GPU target in #hal.executable.target".
# Remove names here when IREE gains them.
# IREE quirk: see tests/test_iree_quirks.py::test_cuda_sm_90_is_missing
BROKEN_ARCHS = frozenset({"sm_90", "sm_90a", "hopper", "h100"})


class CudaDevice(Device):
    """An NVIDIA GPU on IREE's CUDA driver (``ember.devices("cuda")``).

    Example:
        >>> ember.devices("cuda")
        [CudaDevice(0, 'NVIDIA H200')]
    """

    platform = "cuda"


def compiler_flags(arch: str = DEFAULT_ARCH) -> tuple[str, ...]:
    """IREE flags for CUDA; ``arch`` is an NVIDIA architecture ("sm_80", "sm_89", "ampere").

    Example:
        >>> compiler_flags()[:2]
        ('--iree-hal-target-device=cuda', '--iree-cuda-target=sm_80')
    """
    if arch.lower() in BROKEN_ARCHS:
        raise TargetOptionError(
            f"CUDA architecture {arch!r} does not compile in IREE 3.13 (\"missing GPU target "
            f"in #hal.executable.target\"). Use {DEFAULT_ARCH!r} (the default): its PTX runs "
            "on Hopper GPUs too, through the driver's JIT.")
    # IREE demotes 64-bit types by default (float64 was computed in float32 without a
    # word); ember's dtypes are already canonical, and PTX has float64.
    flags = ("--iree-hal-target-device=cuda", f"--iree-cuda-target={arch}",
             "--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false")
    if arch != DEFAULT_ARCH:
        from ember.backends.compiler import check_target
        check_target(flags, f"the CUDA architecture {arch!r}")
    return flags


def fallback_flags(arch: str = DEFAULT_ARCH) -> tuple[tuple[str, ...], ...]:
    return ()


@functools.cache
def _enumerated():
    return enumerate_devices("cuda", CudaDevice)


def devices() -> list[CudaDevice]:
    return list(_enumerated()[0])


def device(index: int = 0) -> CudaDevice:
    return device_at(_enumerated(), NAME, INSTALL_HINT, index)


def fenced_calls(largest_tensor_bytes: int, iterations: int | None = None) -> bool:
    """Synchronous calls: IREE's asynchronous ones (``runtime.FENCED_CALLS_FLAG``) have not
    run on a GPU here yet."""
    return False


def runtime_device(dev: CudaDevice | None, largest_tensor_bytes: int,
                   iterations: int | None = None) -> CudaDevice:
    return dev if dev is not None else device(0)


# Checked by compiling (no GPU here): IREE 3.13 demotes float64 for CUDA, and its demotion
# fails on complex128 constants ("'complex.constant' op requires attribute"); a complex
# scan (iree_linalg_ext.scan on complex<f32>) beside another dispatch crashes its CUDA
# compiler (SIGSEGV: cumsum(x) + sum(x)); a real scan there compiles.
# IREE quirk: see tests/test_iree_quirks.py::test_cuda_complex128_constants_fail
_NO_C128 = ("IREE 3.13 demotes 64-bit floats for CUDA and fails on complex128 constants; use "
            "complex64, or the CPU backend")
_COMPLEX_SCAN = ("IREE 3.13's CUDA compiler crashes on a complex scan next to another "
                 "dispatch; scan the real and imaginary parts (cumsum), or use the CPU backend")


def unsupported(**options) -> dict[str, str]:
    """dtype name -> why it is refused: complex128 (the other ember dtypes run)."""
    return {"complex128": _NO_C128}


def unsupported_ops(**options) -> dict[tuple[str, str], str]:
    """(ember op, operand dtype name) -> why it is refused: complex scans."""
    return {(op, "complex64"): _COMPLEX_SCAN for op in ("ember.cumsum", "ember.cumprod")}


def program_flags(flags, module) -> tuple[str, ...]:
    """``flags`` for this program: the target's, whatever the program (see the CPU's)."""
    return tuple(flags)
