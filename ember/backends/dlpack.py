"""DLPack: ember Arrays exchanged with NumPy, JAX, PyTorch ... (the Array API's
``__dlpack__``, ``__dlpack_device__`` and ``from_dlpack``, standard 2024.12).

Export (``Array.__dlpack__``). An Array on the CPU backend lives in an IREE heap buffer, which
is host memory: it is shared, not copied. A consumer that speaks DLPack 1.x (NumPy 2, which
passes ``max_version``) gets NumPy's capsule of a read-only view over the mapped buffer: the
flag tells it not to write, and the view's mapping retains the IREE buffer, so the capsule
outlives the Array. bfloat16, which NumPy's DLPack does not carry, and consumers of DLPack 0.x
(to which NumPy will not export read-only memory) get IREE's own capsule
(``HalDevice.create_dlpack_capsule``), which retains the buffer too. Arrays on Vulkan or CUDA
are exported as a host copy and say so: ``__dlpack_device__`` is ``(kDLCPU, 0)`` for every
Array, the copy sets DLPack's "is copied" flag, and ``copy=False`` raises DLPackError.

Import (``ember.numpy.from_dlpack``). Host memory that IREE can wrap (C-contiguous, 64-byte
aligned: IREE's CPU code assumes that alignment and its import checks it) becomes the Array's
buffer without a copy (``HalDevice.from_dlpack_capsule``); the producer's memory is kept
alive until the Array's buffer is released. Anything else (NumPy's 16-byte aligned
allocations, strided views, read-only arrays, another device's memory) is read through
``numpy.from_dlpack`` and copied into a new buffer.

Memory shared either way is marked on the Array (``_external``): a jitted call that donates
such an Array gets a copy of it and leaves it alive, so neither side sees the other's results
written into its memory (JAX skips such donations too).
"""

from __future__ import annotations

import enum
import re

import numpy as np

from ember import dtypes
from ember.backends import runtime
from ember.core import ShapedArray
from ember.errors import ArgumentError, ConcretizationError, DLPackError, NoDLPackError


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (those the Array API standard lists), as ``__dlpack_device__``
    reports them.

    Example:
        >>> ember.device_put(np.ones(2)).__dlpack_device__()
        (<DLDeviceType.kDLCPU: 1>, 0)
    """

    kDLCPU = 1
    kDLCUDA = 2
    kDLCPUPinned = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLCUDAManaged = 13
    kDLOneAPI = 14


_CPU = (DLDeviceType.kDLCPU, 0)
# IREE's element types back to ember's dtypes: whatever dtypes the runtime knows.
_DTYPE_OF_HAL = {int(hal): dt for dt, hal in runtime._HAL_TYPE.items()}


def _numpy_carries(dtype: np.dtype) -> bool:
    """Whether NumPy's DLPack carries ``dtype`` (bool, integers, floats, complex; not the
    ml_dtypes types such as bfloat16)."""
    return dtype.kind in "biufc"


# --- export ----------------------------------------------------------------------------------

def dlpack_device(array) -> tuple[DLDeviceType, int]:
    """``Array.__dlpack_device__``: ``(kDLCPU, 0)``: a CPU Array's buffer is host memory, and
    an Array on another device is exported as a host copy."""
    array._live_bv()            # a donated Array: DonatedArrayError
    return _CPU


def export(array, stream=None, max_version=None, dl_device=None, copy=None):
    """``Array.__dlpack__``: a DLPack capsule of ``array`` (see the module's docstring)."""
    bv = array._live_bv()
    if stream is not None:
        raise DLPackError(f"__dlpack__: stream={stream!r}, but ember Arrays are exported as "
                          "host (kDLCPU) memory, which has no streams: pass stream=None")
    if dl_device is not None:
        try:
            kind, index = dl_device
            wanted = (DLDeviceType(int(kind)), int(index))
        except (TypeError, ValueError):
            wanted = None
        if wanted != _CPU:
            raise DLPackError(f"__dlpack__: dl_device={dl_device!r} is not a device ember "
                              "exports to; ember Arrays are exported as host memory, "
                              "dl_device=(1, 0) (kDLCPU)")
    shared = array.device.platform == "cpu"     # the buffer itself is host memory
    if copy is False and not shared:
        raise DLPackError(
            f"__dlpack__(copy=False): this {array.aval.str_short()} Array is on "
            f"{array.device!r}, whose memory DLPack consumers cannot read; exporting it "
            "needs a copy to the host (copy=None or True)")
    copying = bool(copy) or not shared
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if _numpy_carries(array.dtype) and (versioned or copying):
        view = _mapped_view(array, bv) if shared else array._ember_host()
        # NumPy negotiates the version, copies when asked (setting the "is copied" flag)
        # and flags the shared view read-only.
        capsule = view.__dlpack__(max_version=max_version, copy=copying or None)
    else:
        if copying:
            bv = _host_buffer_copy(array, bv)
            hal = _cpu_device().hal
        else:
            hal = array.device.hal
        capsule = hal.create_dlpack_capsule(bv, int(DLDeviceType.kDLCPU), 0)
    if not copying:
        array._external = True
    return capsule


def _mapped_view(array, bv) -> np.ndarray:
    """A read-only NumPy view of a CPU Array's buffer (no copy); the view holds the mapping,
    which retains the IREE buffer."""
    if array.size == 0:
        return np.zeros(array.shape, array.dtype)       # no memory to share
    raw = bv.map().asarray((bv.byte_length,), np.dtype(np.uint8))
    view = raw[:array.nbytes].view(array.dtype).reshape(array.shape)
    view.flags.writeable = False
    return view


def _host_buffer_copy(array, bv):
    """A copy of ``array``'s data in a new buffer of the CPU device."""
    if array.device.platform == "cpu":
        return array.device.copy(bv)
    return _cpu_device().upload(array._ember_host())


def _cpu_device():
    from ember.backends import get_backend
    return get_backend("cpu").device(0)


# --- import ----------------------------------------------------------------------------------

def from_dlpack(x, device=None, copy=None):
    """The ember Array of ``x``, an object with ``__dlpack__`` (``ember.numpy.from_dlpack``'s
    work; see the module's docstring)."""
    from ember.backends.array import Array, device_put
    target = _resolve_device(device)
    if isinstance(x, Array):
        return _from_array(x, target, copy)
    if hasattr(x, "_trace") and hasattr(x, "aval"):      # an ember Tracer
        raise ConcretizationError(
            "from_dlpack needs a concrete array: it exchanges memory with other libraries, "
            "and a traced value inside jit/vmap has none. Pass the traced value on as it is, "
            "or call from_dlpack outside the traced function")
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise NoDLPackError(
            f"from_dlpack: a {type(x).__name__} has no __dlpack__ and __dlpack_device__ "
            "methods, so it cannot be exchanged through DLPack; use ember.numpy.asarray")
    target = target or _cpu_device()
    on_host = target.platform == "cpu"
    kind = x.__dlpack_device__()[0]
    why = None                     # why the memory cannot be shared, when it cannot
    if int(kind) != DLDeviceType.kDLCPU:
        why = f"its memory is on a DLPack device of type {_device_name(kind)}, not the host"
    elif not on_host:
        why = f"it is host memory and the Array is to be on {target!r}"
    if why is None:
        shared, why = _wrap(x, target)
        if shared is not None:
            canonical = dtypes.canonicalize(shared.dtype)
            if canonical == shared.dtype:
                if copy:
                    return Array(target.copy(shared._bv), target, shared.aval)
                shared._external = True
                return shared
            why = (f"its dtype {shared.dtype} is computed as {canonical} while 64-bit types "
                   "are off (ember.config.update('enable_x64', True) keeps it)")
            if copy is False:
                raise _copy_needed(x, why)
            host = _mapped_view(shared, shared._bv)
            return device_put(host.astype(canonical), target)
    if copy is False:
        raise _copy_needed(x, why)
    host = _numpy_import(x, kind)
    return device_put(host.astype(dtypes.canonicalize(host.dtype), copy=False), target)


def _from_array(x, target, copy):
    """from_dlpack of an ember Array: the Array itself (no memory changes hands), a copy, or
    the Array put on ``target``."""
    from ember.backends.array import Array, device_put
    bv = x._live_bv()
    if target is None or target == x.device:
        if copy:
            return Array(x.device.copy(bv), x.device, x.aval)
        return x
    if copy is False:
        raise DLPackError(f"from_dlpack(copy=False): the Array is on {x.device!r}; putting "
                          f"it on {target!r} needs a copy (copy=None or True)")
    return device_put(x, target)


def _wrap(x, target):
    """(Array on ``target`` over ``x``'s memory, None) when IREE can wrap the memory, else
    (None, why not)."""
    from ember.backends.array import Array
    try:
        capsule = x.__dlpack__()        # IREE reads DLPack 0.x capsules
    except BufferError as e:            # NumPy: a read-only array has no 0.x capsule
        return None, f"its producer would not share it ({e})"
    try:
        bv = target.hal.from_dlpack_capsule(capsule)
    except (ValueError, IndexError, RuntimeError) as e:
        # Not 64-byte aligned, strided, or an offset: IREE says which (after its source line).
        said = re.sub(r"^.*?[\w/]+\.c:\d+: [A-Z_]+; ", "", str(e).splitlines()[0])
        return None, f"IREE cannot wrap it ({said})"
    dtype = _DTYPE_OF_HAL.get(int(bv.element_type))
    if dtype is None:
        return None, "ember has no dtype for its elements"
    return Array(bv, target, ShapedArray(tuple(bv.shape), dtype)), None


def _numpy_import(x, kind) -> np.ndarray:
    """``x`` as NumPy data through NumPy's DLPack (asking the producer for host memory when
    its memory is elsewhere); bfloat16, which NumPy's DLPack lacks, through ``__array__``."""
    device = None if int(kind) == DLDeviceType.kDLCPU else "cpu"
    try:
        return np.from_dlpack(x, device=device)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        if hasattr(x, "__array__"):
            return np.asarray(x)
        raise DLPackError(f"from_dlpack: NumPy cannot read this {type(x).__name__} ({e}), "
                          "and IREE cannot wrap its memory as it is") from None


def _copy_needed(x, why: str) -> DLPackError:
    return DLPackError(f"from_dlpack(copy=False): the memory of this {type(x).__name__} "
                       f"cannot be shared: {why}; a copy is needed (copy=None or True)")


def _device_name(kind) -> str:
    try:
        return f"{DLDeviceType(int(kind)).name} ({int(kind)})"
    except ValueError:
        return str(int(kind))


def _resolve_device(device):
    """The ember Device that ``device`` (None, a Device, a backend name) names."""
    if device is None:
        return None
    from ember.backends import get_backend
    from ember.backends.runtime import Device
    if isinstance(device, str):
        return get_backend(device).device(0)
    if isinstance(device, Device):
        return device
    raise ArgumentError(f"from_dlpack: device must be an ember device (ember.devices()) or a "
                        f"backend name, got {type(device).__name__}")
