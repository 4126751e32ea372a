"""The Vulkan backend: IREE's ``vulkan-spirv`` target on the ``vulkan`` driver.

Readback goes through a staging buffer: mapping a device buffer directly (``to_host``) fails
on Mesa's lavapipe ("minImportedHostPointerAlignment"), and allocating the staging buffer per
readback costs milliseconds, so staging buffers are kept per size class and reused.
"""

from __future__ import annotations

import atexit
import functools
import gc
import threading
from dataclasses import dataclass

import iree.runtime as rt
import numpy as np

from ember.backends._drivers import device_at, enumerate_devices
from ember.backends._vulkan_features import device_features
from ember.backends.runtime import _RAW, Device, raise_if_lost, wait
from ember.dialects import OPS
from ember.errors import TargetOptionError

NAME = "vulkan"
OPTIONS = {"target": "vulkan_target"}
# IREE 3.13's SPIR-V codegen fails on a region of chained reductions ("write affecting
# operations on global resources are restricted to workgroup distributed contexts").
DISPATCH_REGIONS = False
# The generic targets have no float64 (a float64 program is refused there: unsupported());
# IREE's SPIR-V lowering of signed division goes through abs (wrong at INT32_MIN), and its
# dispatch of a leading-axis reduction fused with its consumers computes wrongly.
# Its drivers may reassociate float adds (Mesa's NIR does, for SPIR-V values without
# NoContraction, which IREE never emits): (x + 2**23) - 2**23 gave x on lavapipe.
# loop_chunks False: a host loop run in chunks (ember-to-linalg's run-ahead) lost a chunk of
# steps in its carry on lavapipe from 64 steps up (the host's read between chunks).
# max_bindings: the HAL module's 32 (cpu.py), and lavapipe's 32 storage buffers a pipeline
# ("pipeline_layouts[0] declares 34 storage buffers, exceeding device limit 32").
TRAITS = {"float64": False, "exact_division": False, "outer_reductions": False,
          "exact_rounding": False, "loop_chunks": False, "max_bindings": 32}
INSTALL_HINT = ("Install a Vulkan loader and driver, e.g. on Debian/Ubuntu (as root): "
                "apt-get install -y libvulkan1 mesa-vulkan-drivers (Mesa's lavapipe runs "
                "Vulkan on the CPU), or your GPU vendor's Vulkan driver.")

# IREE's generic Vulkan profile; "generic" names it too.
DEFAULT_TARGET = "vp_android_baseline_2022"
# Target names checked to compile with IREE 3.13. IREE segfaults on a name it does not
# know (checked: "generic", "bogus"), so nothing else reaches it.
# IREE quirk: see tests/test_iree_quirks.py::test_unknown_vulkan_target_crashes
KNOWN_TARGETS = frozenset({
    DEFAULT_TARGET, "ampere", "turing", "pascal", "ada", "sm_80", "sm_86", "rtx4090",
    "rdna2", "rdna3", "cdna3", "gfx1100", "rx7900xtx", "valhall", "valhall4", "adreno"})

# "lavapipe": the generic profile plus the SPIR-V capabilities Mesa's lavapipe (llvmpipe)
# device has. With them float16 and float64 give right results there (checked: elementwise
# f16/f64 multiply on llvmpipe, Mesa 22.3; and the op test suite).
LAVAPIPE_FEATURES = ",".join([
    "spirv:v1.3", "cap:Shader", "cap:Float16", "cap:Float64", "cap:Int16", "cap:Int8",
    "cap:StorageBuffer16BitAccess", "cap:StorageBuffer8BitAccess",
    "ext:SPV_KHR_16bit_storage", "ext:SPV_KHR_8bit_storage",
    "ext:SPV_KHR_storage_buffer_storage_class"])
PROFILES = {"lavapipe": (DEFAULT_TARGET, LAVAPIPE_FEATURES)}

# Checked on lavapipe with the generic target (DESIGN.md): f16 compiles and runs but gives
# wrong results (IREE packs it into 32-bit storage); f64 is silently demoted to f32 by IREE,
# or, with demotion off, fails inside IREE ("failed to convert SPIR-V type"). Both targets
# compute integers in 32 bits ("compute = fp32|int32"): IREE emulates i64 add/mul/compare
# but fails on i64 division ("failed to legalize operation 'arith.divsi'"), so 64-bit
# integers are refused as a whole. i8 and bf16 give right results.
_NO_I64 = ("the Vulkan target computes integers in 32 bits and IREE cannot emulate every "
           "64-bit integer op on it (division fails); use int32, or the CPU backend")
_GENERIC_ONLY = {
    "float16": "float16 compiles for the generic Vulkan target but gives wrong results "
               "(checked on lavapipe); use float32 or bfloat16, or a target with 16-bit "
               "storage (ember.config.update('vulkan_target', 'lavapipe') on Mesa's lavapipe)",
    "float64": "the generic Vulkan target has no 64-bit floats (IREE would silently demote "
               "them to float32); use float32, a target with Float64 ('lavapipe'), or the "
               "CPU backend",
    "complex128": "the generic Vulkan target has no 64-bit floats, the parts of complex128; "
                  "use complex64, a target with Float64 ('lavapipe'), or the CPU backend",
}

# IREE quirk: see tests/test_iree_quirks.py::test_vulkan_narrow_unsigned_ops_fail
_NARROW_UNSIGNED_DIV = ("IREE 3.13 cannot compile unsigned division of 8- and 16-bit "
                       "integers for Vulkan (\"bitwidth emulation is not implemented yet on "
                       "unsigned op pattern\"); convert to uint32 first")
UNSUPPORTED_OPS = {(op, dt): _NARROW_UNSIGNED_DIV
                   for op in ("ember.div", "ember.rem") for dt in ("uint8", "uint16")}
_NARROW_UNSIGNED_COMPARE = ("IREE 3.13 cannot compile unsigned comparisons of 8- and 16-bit "
                            "integers for the generic Vulkan target (\"bitwidth emulation is "
                            "not implemented yet on unsigned op\"); convert to uint32 first, "
                            "or use a target with 8- and 16-bit storage ('lavapipe')")
_GENERIC_ONLY_OPS = {(op, dt): _NARROW_UNSIGNED_COMPARE
                     for op in ("ember.lt", "ember.le", "ember.gt", "ember.ge")
                     for dt in ("uint8", "uint16")}
_NARROW_SIGNED_DIV = ("IREE 3.13's emulation of 8- and 16-bit integers on the generic Vulkan "
                      "target divides wrongly (100 // 7 gave -1 as int8 on lavapipe); convert "
                      "to int32 first, or use a target with 8- and 16-bit storage ('lavapipe')")
_GENERIC_ONLY_OPS.update({(op, dt): _NARROW_SIGNED_DIV for op in ("ember.div", "ember.rem")
                          for dt in ("int8", "int16")})
# IREE quirk: see tests/test_iree_quirks.py::test_vulkan_float64_math_fails
# float64 math that IREE 3.13's SPIR-V lowering takes in float32 only ("'spirv.GL.Exp' op
# operand must be 16/32-bit float") or through ops it cannot convert (bitcasts, copysign).
_NO_F64_MATH = ("IREE 3.13 cannot compile this float64 function for Vulkan (its SPIR-V "
                "lowering has it for 16/32-bit floats only); compute it in float32 or on the CPU")
_F64_MATH_OPS = {(name, "float64"): _NO_F64_MATH for name, op in OPS.items()
                 if "f64_math" in op.traits}
# complex128 functions computed on float64 parts with those functions (or a sign bit's
# bitcast: sqrt): "failed to legalize operation 'arith.bitcast'" (checked on lavapipe).
# complex64 gives NumPy's values there (within lavapipe's float32 exp/sin: ~30 ulps).
_NO_C128_MATH = ("IREE 3.13 cannot compile this complex128 function for Vulkan (it computes "
                 "on float64 parts with functions the SPIR-V lowering has for 16/32-bit "
                 "floats only); use complex64, or the CPU backend")
_F64_MATH_OPS.update({(f"ember.{name}", "complex128"): _NO_C128_MATH for name in (
    "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "pow",
    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")})


# The narrowest storage IREE's known targets have (``storage = b64|b32|b16|b8`` in their
# target attribute; the generic profile has b32 only, Adreno b16). Narrower values are kept
# in 32-bit words there.
_NARROWEST_STORAGE = {DEFAULT_TARGET: 32, "adreno": 16}


@dataclass(frozen=True)
class Target:
    """A Vulkan target as ember reads it: IREE's name and features, and what it can run."""

    name: str
    features: str | None = None
    float16: bool = False
    float64: bool = False
    narrow_ops: bool = False     # 8/16-bit storage, so IREE does not emulate narrow integers
    storage_bits: int = 8        # the narrowest element width stored as itself


def resolve(target: str | None = "host") -> Target:
    """The Target that a ``vulkan_target`` name means. "host" (the default): the first
    Vulkan device's own capabilities, read from the Vulkan loader (the generic profile
    where there is none); "generic": IREE's baseline profile; "lavapipe": the generic
    profile plus Mesa's lavapipe capabilities; otherwise one of IREE's known targets.

    Example:
        >>> resolve("generic").storage_bits
        32
    """
    if target in (None, "host"):
        found = device_features()
        if not found:
            return resolve("generic")
        f = found[0]
        return Target(DEFAULT_TARGET, f.spirv_features(), float16=f.float16 and f.storage16,
                      float64=f.float64, narrow_ops=f.storage8 and f.storage16,
                      storage_bits=8 if f.storage8 else 16 if f.storage16 else 32)
    if target == "generic":
        target = DEFAULT_TARGET
    if target in PROFILES:
        name, features = PROFILES[target]
        return Target(name, features, float16=True, float64=True, narrow_ops=True)
    if target not in KNOWN_TARGETS:
        known = sorted(KNOWN_TARGETS | set(PROFILES) | {"generic", "host"})
        raise TargetOptionError(
            f"unknown Vulkan target {target!r}; ember knows {', '.join(known)} "
            "(IREE 3.13 crashes on names it does not know, so ember checks them first)")
    return Target(target, storage_bits=_NARROWEST_STORAGE.get(target, 8))


def unsupported_ops(target: str | None = "host") -> dict[tuple[str, str], str]:
    """(ember op, operand dtype name) -> why that op is refused on this Vulkan target."""
    out = {**UNSUPPORTED_OPS, **_F64_MATH_OPS}
    if not resolve(target).narrow_ops:
        out.update(_GENERIC_ONLY_OPS)
    return out


def unsupported(target: str | None = "host") -> dict[str, str]:
    """dtype name -> why programs using it are refused on this Vulkan target.

    Example:
        >>> sorted(unsupported("lavapipe"))
        ['int64', 'uint64']
    """
    t = resolve(target)
    out = {"int64": _NO_I64, "uint64": _NO_I64}
    # complex128's parts are float64
    out.update({k: v for k, v in _GENERIC_ONLY.items()
                if not getattr(t, "float64" if k == "complex128" else k)})
    return out


def unsupported_values(target: str | None = "host"):
    """A rule for arrays this target cannot hold, or None: without 8-bit (16-bit) storage
    IREE keeps such values in 32-bit words and loses the last partial word of a buffer
    whose size is not a multiple of 4 bytes (checked on lavapipe: `x > 0` on 7 floats gave
    False for the 5th and 6th; a sort of 5 int8 values gave zeros)."""
    bits = resolve(target).storage_bits
    if bits == 8:
        return None

    def rule(itemsize: int, nbytes: int) -> str | None:
        if itemsize * 8 >= bits or nbytes % 4 == 0:
            return None
        return (f"this Vulkan target has no {8 * itemsize}-bit storage, so IREE 3.13 keeps "
                "such values in 32-bit words and loses the last partial word of a buffer "
                "whose size is not a multiple of 4 bytes (wrong results); pad the array to "
                "a multiple of 4 bytes, use a 32-bit dtype, or a target with 8- and 16-bit "
                "storage (ember.config.update('vulkan_target', 'host') on a device that has it)")
    return rule


STAGING_CACHE_MAX_BYTES = 64 << 20   # larger readbacks allocate their own staging buffer


class VulkanDevice(Device):
    """A Vulkan device (``ember.devices("vulkan")``).

    Example:
        >>> ember.devices("vulkan")
        [VulkanDevice(0, 'llvmpipe (LLVM 15.0.6, 256 bits) (llvmpipe Mesa 22.3.6 ...)')]
    """

    platform = "vulkan"

    def __init__(self, driver, index=0, name="", create=None):
        super().__init__(driver, index, name, create)
        self._staging: dict[int, rt.HalBuffer] = {}
        self._semaphore = None       # the readback copies' timeline, made with the first
        self._tick = 0
        self._lock = threading.Lock()

    def _staging_buffer(self, nbytes: int) -> rt.HalBuffer:
        size = max(4096, 1 << (nbytes - 1).bit_length())
        buf = self._staging.get(size)
        if buf is None:
            buf = self.allocator.allocate_buffer(
                memory_type=rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE,
                allowed_usage=rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED,
                allocation_size=size)
            if size <= STAGING_CACHE_MAX_BYTES:
                self._staging[size] = buf
        return buf

    def to_host(self, bv: rt.HalBufferView, aval) -> np.ndarray:
        """Queue a copy into a (reused) host-visible staging buffer, wait, map, copy out."""
        if aval.size == 0:
            return np.zeros(aval.shape, aval.dtype)
        src = bv.get_buffer()
        with self._lock:
            staging = self._staging_buffer(src.byte_length())
            if self._semaphore is None:
                self._semaphore = self.hal.create_semaphore(0)
            self._tick += 1
            try:
                self.hal.queue_copy(src, staging, [], [(self._semaphore, self._tick)])
                wait(self._semaphore, self._tick)
            except RuntimeError as e:
                raise_if_lost(e, self)
                raise
            raw = staging.map().asarray((aval.size,), _RAW[aval.dtype.itemsize])
            return np.array(raw).view(aval.dtype).reshape(aval.shape)


# IREE would silently narrow 64-bit types to 32 bits (changing the program's signature);
# ember's dtypes are already what the user asked for, and legality refuses what cannot run.
_NO_DEMOTION = ("--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false")
# Fills (a splat constant, a scalar made a tensor) as dispatches rather than IREE's fill
# commands: Mesa's lavapipe lost the device (VK_ERROR_DEVICE_LOST, for the rest of the
# process) within a few hundred calls of a program with two host loops that fill, with IREE's
# own iree-benchmark-module as with ember; with the fills as dispatches, never.
_FILLS_AS_DISPATCHES = ("--iree-stream-emulate-memset",)


def compiler_flags(target: str | None = "host") -> tuple[str, ...]:
    """IREE flags for Vulkan; ``target`` as in resolve(): "host" (this machine's first Vulkan
    device), "generic" (IREE's baseline profile, which every Vulkan 1.1 compute device runs),
    "lavapipe", or an IREE Vulkan target name.

    Example:
        >>> compiler_flags("generic")[:2]
        ('--iree-hal-target-device=vulkan', '--iree-vulkan-target=vp_android_baseline_2022')
    """
    t = resolve(target)
    features = () if t.features is None else (f"--iree-vulkan-target-features={t.features}",)
    return ("--iree-hal-target-device=vulkan", f"--iree-vulkan-target={t.name}",
            *features) + _NO_DEMOTION + _FILLS_AS_DISPATCHES


def fallback_flags(target: str | None = "host") -> tuple[tuple[str, ...], ...]:
    return ()


@functools.cache
def _enumerated():
    found = enumerate_devices("vulkan", VulkanDevice)
    atexit.register(_release, found[0])
    return found


def _release(found) -> None:
    """Free staging buffers and semaphores while the Vulkan device still exists: left to
    interpreter teardown they can outlive it."""
    for dev in found:
        dev._staging.clear()
        dev._semaphore = None
        dev.timeline.__dict__.clear()    # this thread's semaphore of fenced calls
    gc.collect()


def devices() -> list[VulkanDevice]:
    return list(_enumerated()[0])


def device(index: int = 0) -> VulkanDevice:
    return device_at(_enumerated(), NAME, INSTALL_HINT, index)


def fenced_calls(largest_tensor_bytes: int, iterations: int | None = None) -> bool:
    """Whether such a program is compiled for IREE's asynchronous calls
    (``runtime.FENCED_CALLS_FLAG``): those the CPU would run on its pool. A synchronous
    call's spinning wait slowed lavapipe's threads on a large program (the MLP 56 -> 48 ms,
    ``benchmarks/calls.py``); on a small one the fence cost more (x + 1: 77 -> 96 us)."""
    from ember.backends import cpu
    return cpu.driver_for(largest_tensor_bytes, iterations) == "local-task"


def runtime_device(dev: VulkanDevice | None, largest_tensor_bytes: int,
                   iterations: int | None = None) -> VulkanDevice:
    return dev if dev is not None else device(0)


def program_flags(flags, module) -> tuple[str, ...]:
    """``flags`` for this program: the target's, whatever the program (see the CPU's)."""
    return tuple(flags)
