"""Devices and loaded executables on IREE's runtime.

A :class:`Device` is one place arrays live: ``CpuDevice(0)``, ``VulkanDevice(0, ...)``,
``CudaDevice(0, ...)``. Each backend module (``cpu.py``, ``vulkan.py``, ``cuda.py``) defines its
subclass and how to enumerate them. The call path is the raw one (``VmVariantList`` +
``vm_context.invoke``): the cheapest way into IREE from Python.

Programs that run on worker threads (local-task; on Vulkan those of that size) are compiled
with IREE's asynchronous calling convention (``FENCED_CALLS_FLAG``; each backend's
``fenced_calls``): the call returns once the work is queued, and ember waits for its fence
on a file descriptor (:func:`wait`), asleep in the kernel. IREE 3.13's own wait, which a
synchronous call makes, spins on the calling thread: on a 2-core machine it took a core
from local-task's two workers and lavapipe's threads (``benchmarks/calls.py``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import threading
import types

import iree.runtime as rt
import numpy as np

from ember import dtypes
from ember.core import ShapedArray
from ember.errors import DeviceLostError, DeviceMemoryError, DeviceMismatchError, RuntimeFailure

_HAL_TYPE_BY_NAME = {
    "bool": rt.HalElementType.BOOL_8, "int8": rt.HalElementType.SINT_8,
    "int16": rt.HalElementType.SINT_16, "int32": rt.HalElementType.SINT_32,
    "int64": rt.HalElementType.SINT_64, "uint8": rt.HalElementType.UINT_8,
    "uint16": rt.HalElementType.UINT_16, "uint32": rt.HalElementType.UINT_32,
    "uint64": rt.HalElementType.UINT_64, "float16": rt.HalElementType.FLOAT_16,
    "bfloat16": rt.HalElementType.BFLOAT_16, "float32": rt.HalElementType.FLOAT_32,
    "float64": rt.HalElementType.FLOAT_64, "complex64": rt.HalElementType.COMPLEX_64,
    "complex128": rt.HalElementType.COMPLEX_128,
}
# Keyed by dtype object: NumPy 2 computes ``dtype.name`` in Python, microseconds a call.
_HAL_TYPE = {dtypes.bfloat16 if k == "bfloat16" else np.dtype(k): v
             for k, v in _HAL_TYPE_BY_NAME.items()}
# The buffer protocol knows no bfloat16 and IREE's mapping wants plain NumPy dtypes: move
# bytes as unsigned integers of the same width (16-byte elements, complex128, as themselves:
# there is no 16-byte integer, and the buffer protocol knows complex numbers).
_RAW = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
        8: np.dtype(np.uint64), 16: np.dtype(np.complex128)}


class Device:
    """One device of a backend, on one IREE HAL driver.

    ``platform`` is the backend name ("cpu", "vulkan", "cuda"), ``id`` its index among the
    backend's devices (``ember.devices(platform)[id]``). Two Device objects with the same
    platform and id are the same device (the CPU has one per driver, local-sync and
    local-task, sharing host memory); arrays on either can be passed to programs loaded on
    the other.

    Example:
        >>> ember.devices("cpu")[0]
        CpuDevice(0)
    """

    platform = "?"

    def __init__(self, driver: str, index: int = 0, name: str = "", create=None):
        self.driver = driver
        self.id = index
        self.name = name
        self._create = create if create is not None else (lambda: rt.get_device(driver))
        self.timeline = threading.local()   # each thread's semaphore for fenced calls
        # The identity checked per call: one shared object per (platform, id).
        self.space = _space(self.platform, index)

    # The HAL device is created when first used, not when listed: IREE 3.13's Vulkan device
    # on Mesa's lavapipe keeps two threads spinning from its creation on (two cores of CPU
    # time while idle), so ember.devices() alone must not create it.
    @functools.cached_property
    def hal(self):
        # one HAL device per Device, whichever thread uses it first
        with _CREATING, _launcher_hidden():
            if "hal" not in self.__dict__:
                try:
                    self.__dict__["hal"] = self._create()
                except Exception as e:  # IREE raises RuntimeError naming what failed
                    from ember.backends import get_backend
                    from ember.backends._drivers import unavailable
                    reason = f"creating the {self.driver} device failed: {e}"
                    raise unavailable(self.platform, reason,
                                      get_backend(self.platform).INSTALL_HINT,
                                      self.id) from None
            return self.__dict__["hal"]

    @functools.cached_property
    def config(self):
        return rt.Config(device=self.hal)

    @functools.cached_property
    def allocator(self):
        return self.hal.allocator

    def __repr__(self):
        cls = type(self).__name__
        return f"{cls}({self.id})" if not self.name else f"{cls}({self.id}, {self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Device) and other.space is self.space

    def __hash__(self):
        return hash(self.space)

    def upload(self, host: np.ndarray) -> rt.HalBufferView:
        """Copy a NumPy array into a new device buffer; DeviceMemoryError if it does not fit."""
        if not host.flags.c_contiguous:
            host = np.ascontiguousarray(host)
        try:
            return self.allocator.allocate_buffer_copy(
                memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
                device=self.hal, buffer=host.view(_RAW[host.dtype.itemsize]),
                element_type=_HAL_TYPE[host.dtype])
        except Exception as e:
            if not out_of_memory(e):
                raise_if_lost(e, self)
                raise
            raise memory_error(e, self, f"cannot allocate {format_bytes(host.nbytes)} for "
                               f"an array {ShapedArray(host.shape, host.dtype).str_short()}",
                               host.nbytes) from None

    def copy(self, bv: rt.HalBufferView) -> rt.HalBufferView:
        """A copy of a buffer view's contents in a new device buffer (a queued device copy)."""
        try:
            buffer = self.allocator.allocate_buffer(
                memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
                allocation_size=max(bv.byte_length, 1))
        except Exception as e:
            if not out_of_memory(e):
                raise_if_lost(e, self)
                raise
            raise memory_error(e, self, f"cannot allocate {format_bytes(bv.byte_length)} "
                               "for a copy of an array", bv.byte_length) from None
        if bv.byte_length:
            semaphore = self.hal.create_semaphore(0)
            try:
                self.hal.queue_copy(bv.get_buffer(), buffer, [], [(semaphore, 1)])
                wait(semaphore, 1)
            except RuntimeError as e:
                raise_if_lost(e, self)
                raise
        return rt.HalBufferView(buffer, bv.shape, bv.element_type)

    def to_host(self, bv: rt.HalBufferView, aval: ShapedArray) -> np.ndarray:
        """Copy a buffer view's contents into a new NumPy array of the aval's dtype."""
        if aval.size == 0:
            return np.zeros(aval.shape, aval.dtype)
        mapped = bv.map()
        return np.array(mapped.asarray(aval.shape, _RAW[aval.dtype.itemsize])).view(aval.dtype)


_CREATING = threading.Lock()

# The variables by which IREE's runtime decides that it runs under an MPI launcher: it then
# gives every HAL device it creates an MPI channel provider, which loads libmpi and calls
# MPI_Init itself, a second time in a process whose mpi4py (ember.distributed) has or will
# (device creation, or mpi4py's initialization, then fails). ember's collectives across
# processes are mpi4py's, so its devices are created without them in sight.
_MPI_LAUNCHER_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPIEXEC_HOSTNAME")


@contextlib.contextmanager
def _launcher_hidden():
    saved = {k: os.environ.pop(k) for k in _MPI_LAUNCHER_VARIABLES if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def out_of_memory(e: BaseException) -> bool:
    """Whether an IREE error says an allocation failed (its status RESOURCE_EXHAUSTED: the
    libc allocator, Vulkan's and CUDA's out-of-memory errors all map to it)."""
    return "RESOURCE_EXHAUSTED" in str(e)


def lost_error(e: BaseException, device: Device) -> DeviceLostError | None:
    """The DeviceLostError for IREE's error ``e`` when it says ``device`` was lost (its
    driver's ``VK_ERROR_DEVICE_LOST``), else None."""
    if "DEVICE_LOST" not in str(e):
        return None
    first = str(e).strip().splitlines()[0]
    err = DeviceLostError(
        f"{device!r} was lost (IREE: {first}): its driver gave it up, and its arrays, its "
        "programs and every later call on it fail. Arrays on other devices and on the host "
        "are unaffected; a new process can use the device again")
    err.device = device
    return err


def lost_on_probe(e: BaseException, device: Device) -> DeviceLostError | None:
    """The DeviceLostError for a call that failed with a failed semaphore (IREE's
    ``DATA_LOSS`` from ``hal.fence.await``), when ``device`` turns out to be lost: IREE says
    so for a lost device's submission now and then (under load) without naming the loss, so
    a one-element upload asks the device. None when the upload works (a kernel failed)."""
    if "DATA_LOSS" not in str(e):
        return None
    try:
        device.upload(np.zeros(1, np.float32))
    except DeviceLostError as lost:
        return lost
    except Exception:       # (another failure of the probe says nothing of a loss)
        return None
    return None


def raise_if_lost(e: BaseException, device: Device) -> None:
    """Raise :func:`lost_error` of ``e``, if there is one."""
    if (lost := lost_error(e, device)) is not None:
        raise lost from None


def format_bytes(n: int) -> str:
    """``n`` bytes for people: ``format_bytes(3 << 30)`` is ``'3.0 GiB (3221225472 bytes)'``."""
    size, unit = float(n), "bytes"
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024:
            break
        size, unit = size / 1024, next_unit
    return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit} ({n} bytes)"


def memory_error(e: BaseException, device: Device, what: str,
                 nbytes: int | None = None) -> DeviceMemoryError:
    """The DeviceMemoryError for IREE's allocation failure ``e`` on ``device``; ``what``
    says what was being allocated (its size, the array or argument)."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    err = DeviceMemoryError(f"out of memory on {device!r}: {what} (IREE: {first})")
    err.device, err.nbytes = device, nbytes
    return err


def argument_memory_error(e: DeviceMemoryError, argument: str) -> DeviceMemoryError:
    """``e`` (from :meth:`Device.upload`) with the argument it was uploading named."""
    err = DeviceMemoryError(f"{argument}: {e}")
    err.device, err.nbytes = e.device, e.nbytes
    return err


def call_failure(e: Exception, device: Device, out_avals, where: str = "") -> Exception:
    """The error for IREE's failure ``e`` of a call: DeviceMemoryError naming the results'
    sizes when an allocation failed (IREE does not say which or how large), DeviceLostError
    when the device was lost, else RuntimeFailure with IREE's text."""
    if not out_of_memory(e):
        return lost_error(e, device) or lost_on_probe(e, device) or RuntimeFailure(
            f"{where}IREE runtime error while running the program: {e}")
    sizes = [(a.nbytes, i, a) for i, a in enumerate(out_avals)]
    total = sum(n for n, _, _ in sizes)
    if sizes:
        n, i, a = max(sizes, key=lambda t: t[0])
        name = "its result" if len(sizes) == 1 else f"its result #{i}"
        results = (f"; the program's results take {format_bytes(total)}, the largest "
                   f"being {name} {a.str_short()} of {format_bytes(n)}")
    else:
        results = ""
    return memory_error(e, device, f"{where}running the program, IREE could not allocate "
                        f"a buffer{results}", total)


@functools.cache
def _space(platform: str, index: int) -> tuple[str, int]:
    return (platform, index)


def get_device(driver: str) -> Device:
    """The default device of a HAL driver ("local-sync", "local-task", "vulkan", "cuda")."""
    from ember.backends import get_backend
    platform = "cpu" if driver.startswith("local") else driver
    backend = get_backend(platform)
    if platform == "cpu":
        return backend.device_for_driver(driver)
    return backend.device(0)


def host_array(x, aval: ShapedArray) -> np.ndarray:
    """NumPy data of the aval's (canonical) dtype for an argument leaf."""
    arr = np.asarray(x)
    if arr.dtype != aval.dtype:
        arr = arr.astype(aval.dtype)
    return arr


_VariantList = rt.VmVariantList
_BufferView = rt.HalBufferView

FENCED_CALLS_FLAG = "--iree-execution-model=async-external"
_ASYNC_PRIMITIVE = rt.ExternalTimepointType.ASYNC_PRIMITIVE
_FD = 1                                # IREE_ASYNC_PRIMITIVE_TYPE_FD


def wait(semaphore: rt.HalSemaphore, value: int) -> None:
    """Block until ``semaphore`` reaches ``value``, asleep on a file descriptor where the
    driver exports one (IREE's own host wait spins); raises RuntimeError if it failed."""
    if semaphore.query() >= value:
        return
    timepoint = rt.HalExternalTimepoint()
    try:
        semaphore.export_timepoint(value, _ASYNC_PRIMITIVE, 0, timepoint)
    except RuntimeError:
        semaphore.wait(value)
        return
    # The Python binding shows the handle union only as its CUDA member: the primitive's
    # type is its first byte and a file descriptor (ours to close) its upper 32 bits.
    handle = timepoint.cuda_event
    if handle & 0xFF != _FD:
        semaphore.wait(value)
        return
    fd = handle >> 32
    try:
        # A failed semaphore never signals the descriptor; query() raises then.
        while not select.select([fd], [], [], 0.05)[0]:
            semaphore.query()
    finally:
        os.close(fd)


def invoker(vm_context, function, device: Device):
    """``invoke(function, args, results)`` for ``function`` of ``vm_context``: back when the
    results are ready, whatever the function's calling convention."""
    if function.reflection.get("iree.abi.model") == "coarse-fences":
        return _fenced(vm_context.invoke, device)
    return vm_context.invoke


def _fenced(invoke, device: Device):
    """``invoke`` for a function of the asynchronous convention: its fences appended to the
    arguments, and back when its results are ready. Each thread signals a semaphore of its
    own, so a value is never reached by another thread's call."""
    timeline = device.timeline

    def call(function, args, results):
        semaphore = getattr(timeline, "semaphore", None)
        if semaphore is None:
            semaphore = timeline.semaphore = device.hal.create_semaphore(0)
            # The call waits for nothing: a fence at the value the semaphore starts at.
            # (An empty HalFence(0) in a VmVariantList crashes IREE 3.13 when freed.)
            timeline.ready = rt.HalFence.create_at(semaphore, 0)
            timeline.value = 0
        value = timeline.value = timeline.value + 1
        args.push_ref(timeline.ready)
        args.push_ref(rt.HalFence.create_at(semaphore, value))
        try:
            invoke(function, args, results)
            wait(semaphore, value)
        except BaseException:
            # A failed semaphore stays failed; after an interrupt the call may still run
            # and signal its value after a later call's.
            timeline.semaphore = None
            raise
    return call


class Executable:
    """A compiled module loaded on a device, called with flat lists of buffer views."""

    def __init__(self, vmfb: bytes, device: Device, function: str = "main", *,
                 devices: list[Device] | None = None):
        """``devices``: the devices of a program of several (``ember.pmap``), device ``d``
        of the program being ``devices[d]``; ``device`` is then ``devices[0]``."""
        self.device = device
        self.vmfb = vmfb
        instance = device.config.vm_instance
        self.vm_module = rt.VmModule.copy_buffer(instance, vmfb)
        try:
            if devices is None:
                self.context = rt.SystemContext(vm_modules=[self.vm_module],
                                                config=device.config)
            else:
                # One HAL module holding every device: IREE binds the program's device
                # ember_device_<d> to the d-th of them.
                hal = rt.create_hal_module(instance, devices=[d.hal for d in devices])
                self.context = types.SimpleNamespace(vm_context=rt.VmContext(
                    instance, modules=[hal, self.vm_module]))
        except RuntimeError as e:
            raise_if_lost(e, device)
            raise
        except (IndexError, ValueError) as e:
            # IREE checks the buffers a dispatch binds only here, when the module is loaded
            # (an IndexError from the HAL module, a ValueError from the Vulkan driver);
            # ember's passes keep its programs within the limit (ember-limit-bindings).
            if "binding count" not in str(e) and "storage buffers" not in str(e):
                raise
            raise RuntimeFailure(
                f"IREE cannot load this program on {device!r}: one of its dispatches binds "
                f"more buffers than the device allows ({str(e).splitlines()[0]}). ember keeps "
                "its fusions within the limit, so this is an ember bug: please report it with "
                "the program") from e
        self.vm_context = self.context.vm_context
        self.function = self.vm_module.lookup_function(function)
        if self.function is None:
            raise RuntimeFailure(f"compiled module has no function {function!r}")
        self.reflection = self.function.reflection
        self.invoke = invoker(self.vm_context, self.function, device)

    def runner(self, in_avals, out_avals, array_type, branches: bool = True,
               in_devices=None, out_devices=None):
        """``run(leaves)``: call the function on argument leaves (``array_type`` instances are
        passed as their buffers, anything else is uploaded); results come back as
        ``array_type(buffer_view, device, aval)``. The per-call hot path, with everything it
        looks up bound once (about 0.7 us of the 5 us a small call takes).

        An ``array_type`` leaf on another device raises DeviceMismatchError: a program never
        copies an array between devices behind the caller's back.

        IREE hands back an argument's own buffer for a result that is the argument or a
        reshape of it; such a result is copied (as XLA copies a returned parameter), so that
        donating either Array later cannot change the other. Which results those are is
        fixed for a program without branches (``branches`` False: no scf.if or switch): it is
        found on the first call, and later calls check nothing unless there were any (a
        check costs about 1.5 us, on a 9 us call).

        ``in_devices``/``out_devices``: for a program of several devices, the device of
        each argument and result (by default the executable's one device)."""
        if in_devices is not None:
            return self._multi_device_runner(in_avals, out_avals, array_type, in_devices,
                                             out_devices)
        variant_list, buffer_view = _VariantList, _BufferView
        invoke, function, device = self.invoke, self.function, self.device
        space, upload = device.space, device.upload
        n_in, n_out = len(in_avals), len(out_avals)
        out0 = out_avals[0] if n_out == 1 else None
        pairs = alias_pairs(in_avals, out_avals)
        check = [bool(pairs)]        # look for results in arguments' buffers next call
        first = [True]

        def run(leaves):
            args = variant_list(n_in)
            push = args.push_ref
            for j, (leaf, aval) in enumerate(zip(leaves, in_avals)):
                if type(leaf) is array_type:
                    if leaf.device.space is not space:
                        raise device_mismatch(leaves, array_type, device)
                    push(leaf._bv)
                else:
                    try:
                        push(upload(host_array(leaf, aval)))
                    except DeviceMemoryError as e:
                        raise argument_memory_error(e, f"argument #{j}") from None
            results = variant_list(n_out)
            try:
                invoke(function, args, results)
            except Exception as e:
                raise call_failure(e, device, out_avals) from None
            get = results.get_as_object
            if out0 is not None:
                outs = [array_type(get(0, buffer_view), device, out0)]
            else:
                outs = [array_type(get(i, buffer_view), device, aval)
                        for i, aval in enumerate(out_avals)]
            if check[0]:
                # The first call looks at uploaded arguments too: a result found in one is
                # in an Array argument's buffer when the call is given an Array.
                views = [args.get_as_object(j, buffer_view) if first[0] else
                         x._bv if type(x) is array_type else None for j, x in enumerate(leaves)]
                found = unalias(outs, pairs, views)
                check[0], first[0] = branches or found, False
            return outs
        return run

    def _multi_device_runner(self, in_avals, out_avals, array_type, in_devices, out_devices):
        """The runner of a program of several devices: each argument is uploaded to (or, an
        Array, must live on) its own device, each result is an Array on its own."""
        invoke, function = self.invoke, self.function
        pairs = alias_pairs(in_avals, out_avals)

        def run(leaves):
            args = _VariantList(len(in_avals))
            for j, (leaf, aval, device) in enumerate(zip(leaves, in_avals, in_devices)):
                if type(leaf) is array_type:
                    if leaf.device.space is not device.space:
                        raise device_mismatch([None] * j + [leaf], array_type, device)
                    args.push_ref(leaf._bv)
                else:
                    try:
                        args.push_ref(device.upload(host_array(leaf, aval)))
                    except DeviceMemoryError as e:
                        raise argument_memory_error(e, f"argument #{j}") from None
            results = _VariantList(len(out_avals))
            try:
                invoke(function, args, results)
            except Exception as e:
                raise call_failure(e, self.device, out_avals) from None
            outs = [array_type(results.get_as_object(i, _BufferView), device, aval)
                    for i, (aval, device) in enumerate(zip(out_avals, out_devices))]
            # A result in an argument's buffer gets a copy of its own (see runner).
            unalias(outs, pairs, [args.get_as_object(j, _BufferView) for j in range(len(leaves))])
            return outs
        return run


def alias_pairs(in_avals, out_avals) -> list[tuple[int, int]]:
    """(result, argument) pairs where the result may be the argument's buffer: only a result
    of an argument's size can be (the argument as it is, or reshaped)."""
    return [(i, j) for i, o in enumerate(out_avals) for j, a in enumerate(in_avals)
            if o.nbytes and o.nbytes == a.nbytes]


def unalias(outs, pairs, views) -> bool:
    """For each (result, argument) pair, give the result Array ``outs[i]`` a copy of its own
    (on its device) when its buffer is argument ``j``'s (``views[j]``, None: not to look
    at); whether any was."""
    found = False
    for i, j in pairs:
        if views[j] is not None and outs[i]._bv.get_buffer() == views[j].get_buffer():
            outs[i]._bv = outs[i].device.copy(outs[i]._bv)
            found = True
    return found


def device_mismatch(leaves, array_type, device: Device) -> DeviceMismatchError:
    """The error for ``leaves`` holding an ``array_type`` on another device than ``device``."""
    where = [(i, x.device) for i, x in enumerate(leaves)
             if type(x) is array_type and x.device.space is not device.space]
    i, other = where[0]
    return DeviceMismatchError(
        f"argument #{i} is an ember.Array on {other!r}, but the program was compiled for "
        f"{device!r}. ember never copies arrays between devices implicitly: move it with "
        f"ember.device_put(x, ember.devices({device.platform!r})[{device.id}]) or compile "
        f"for its backend with ember.jit(f, backend={other.platform!r}).",
        index=i, device=other, expected=device)


def canonical_aval(x) -> ShapedArray:
    dtype, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(tuple(np.shape(x)), dtype, weak)
