"""``ember.Array``: a device-resident array, the result of every ember computation."""

from __future__ import annotations

import numpy as np

from ember.backends.runtime import Device
from ember.core import ShapedArray
from ember.errors import DeviceMismatchError, DonatedArrayError


class Array:
    """An array living on an IREE device.

    Passed back into a jitted function it is handed to IREE as is, with no host copy.
    ``np.asarray(a)`` copies it to the host (once; the copy is cached). ``a.device`` is where
    it lives (``CpuDevice(0)``, ``VulkanDevice(0, ...)``); ``ember.device_put`` moves it.

    Example:
        >>> y = ember.jit(lambda x: x * 2)(np.arange(3.0))
        >>> y.shape, np.asarray(y)
        ((3,), array([0., 2., 4.], dtype=float32))
    """

    # _external (set only when true): the buffer's memory is shared with another library
    # through DLPack (ember.backends.dlpack), so a donating call must not write into it.
    __slots__ = ("_bv", "device", "aval", "_host", "_donated_to", "_external", "__weakref__")
    __array_priority__ = 100

    def __init__(self, bv, device: Device, aval: ShapedArray):
        self._bv = bv
        self.device = device
        self.aval = aval
        self._host = None

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.aval.nbytes)

    def _live_bv(self):
        """The buffer view, or DonatedArrayError once the array was donated."""
        if self._bv is None:
            raise DonatedArrayError(
                f"this {self.aval.str_short()} Array was donated to {self._donated_to} (its "
                "buffer now holds a result of that call) and cannot be used any more; use "
                "the call's result, or do not donate it")
        return self._bv

    def _ember_host(self) -> np.ndarray:
        bv = self._live_bv()
        if self._host is None:
            self._host = self.device.to_host(bv, self.aval)
            self._host.flags.writeable = False
        return self._host

    def __array__(self, dtype=None, copy=None):
        host = self._ember_host()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            return host.astype(dtype)
        return host.copy() if copy else host

    def __reduce__(self):
        # Pickled as its host data, weak type included; unpickled onto the default device
        # (as a jax.Array unpickles onto its default device).
        return _unpickle, (np.array(self._ember_host()), self.aval.weak_type)

    def __deepcopy__(self, memo):
        return self.copy()

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the array (the Array API's protocol): ``np.from_dlpack(a)``,
        ``jax.numpy.from_dlpack(a)``, ``torch.from_dlpack(a)``. A CPU Array's memory is
        shared, not copied (read-only where the consumer's DLPack version can say so); an
        Array on another device is exported as a host copy, and ``copy=False`` then raises
        DLPackError. The capsule keeps the memory alive after the Array is gone.

        Example:
            >>> a = ember.device_put(np.arange(3.0))
            >>> np.from_dlpack(a)
            array([0., 1., 2.], dtype=float32)
        """
        from ember.backends import dlpack
        return dlpack.export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """``(kDLCPU, 0)``: where ``__dlpack__`` exports the array (its own memory on the CPU
        backend, a host copy from other devices).

        Example:
            >>> ember.device_put(np.ones(2)).__dlpack_device__()
            (<DLDeviceType.kDLCPU: 1>, 0)
        """
        from ember.backends import dlpack
        return dlpack.dlpack_device(self)

    def is_deleted(self) -> bool:
        """True once the array was donated to a jitted call (as in JAX)."""
        return self._bv is None

    def _mark_donated(self, where: str) -> None:
        """Delete the array: its buffer was donated to the jitted function ``where``."""
        self._bv = None
        self._host = None
        self._donated_to = where
        # The runtime passes an Array's buffer without looking at it; a deleted array takes
        # the path of host data instead, which reads it through _ember_host and raises.
        self.__class__ = _DeletedArray

    def block_until_ready(self) -> Array:
        """Results are ready when a call returns (IREE's synchronous ABI); kept for JAX code."""
        return self

    def tolist(self):
        return self._ember_host().tolist()

    def item(self, *args):
        return self._ember_host().item(*args)

    def __bool__(self):
        return bool(self._ember_host())

    def __int__(self):
        return int(self._ember_host())

    def __float__(self):
        return float(self._ember_host())

    def __complex__(self):
        return complex(self._ember_host())

    def __index__(self):
        return int(self._ember_host().__index__())

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        body = np.array2string(self._ember_host(), separator=", ", prefix="Array(")
        dt = self.dtype.name + (", weak_type=True" if self.weak_type else "")
        shape = f"shape={self.shape}, " if self.size == 0 else ""       # as JAX's
        return f"Array({body}, {shape}dtype={dt})"

    def __str__(self):
        return str(self._ember_host())

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self._ember_host().item(), spec)
        return str(self)

    __hash__ = None  # arrays are mutable-looking values, as in NumPy and JAX


class _DeletedArray(Array):
    """An Array whose buffer was donated (see ``Array._mark_donated``)."""

    __slots__ = ()

    def __repr__(self):
        return f"<deleted Array {self.aval.str_short()}: donated to {self._donated_to}>"

    __str__ = __repr__


def _unpickle(host: np.ndarray, weak: bool) -> Array:
    x = device_put(host)
    if weak:
        x.aval = x.aval._replace(weak_type=True)
    return x


def device_put(x, device=None):
    """Copy a NumPy array (or scalar, or Array, or a pytree of them, as ``jax.device_put``)
    to ``device``: a Device from ``ember.devices()`` or a backend name ("cpu", "vulkan",
    "cuda": its first device); by default the default backend's first device. An Array
    already there is returned as is; an Array on another device is copied through the host
    (the one explicit transfer: programs never move arrays between devices by themselves).

    Example:
        >>> a = ember.device_put(np.arange(4, dtype=np.float32))
        >>> v = ember.device_put(a, ember.devices("vulkan")[0])
        >>> v.device
        VulkanDevice(0, 'llvmpipe ...')
        >>> w, b = ember.device_put((np.ones((4, 3)), np.zeros(3)))
    """
    from ember import tree_util
    from ember.backends import default_backend, get_backend, runtime

    if device is None:
        if isinstance(x, Array):
            return x
        device = get_backend(default_backend()).device(0)
    elif isinstance(device, str):
        device = get_backend(device).device(0)
    elif not isinstance(device, Device):
        raise TypeError(f"ember.device_put: device must be an ember device (ember.devices()) "
                        f"or a backend name, got {type(device).__name__}")
    if isinstance(x, Array):
        if x.device.space is device.space:
            return x
        return Array(device.upload(x._ember_host()), device, x.aval)
    if not isinstance(x, np.ndarray):
        leaves, tree = tree_util.tree_flatten(x)
        if not tree_util.treedef_is_strict_leaf(tree):
            return tree_util.tree_unflatten(tree, [device_put(a, device) for a in leaves])
    aval = runtime.canonical_aval(np.asarray(x))
    host = runtime.host_array(np.asarray(x), aval)
    return Array(device.upload(host), device, aval._replace(weak_type=False))


def device_of_arrays(leaves, name: str) -> Device | None:
    """The one device the ``Array`` leaves live on (None without any); ``name`` (the function
    called) is in the error for Arrays on several devices, which are never copied silently.

    Example:
        >>> device_of_arrays([ember.device_put(x), 1.0], "f")
        CpuDevice(0)
    """
    devices = {x.device for x in leaves if type(x) is Array}
    if len(devices) > 1:
        where = ", ".join(f"#{i} on {x.device!r}" for i, x in enumerate(leaves)
                          if type(x) is Array)
        raise DeviceMismatchError(
            f"{name} got arrays on different devices ({where}); ember never copies arrays "
            "between devices implicitly: move them to one device with "
            "ember.device_put(x, device)")
    return devices.pop() if devices else None
