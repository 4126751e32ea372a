"""Operators and NumPy-style methods shared by tracers (inside jit) and Arrays (outside).

The methods mirror ``numpy.ndarray``'s, with NumPy's positional argument order, as far as
``ember.numpy`` has the function: ``x.sum(axis, dtype, out, keepdims)``, ``x.argmax(axis)``,
``x.clip(min, max)``, ``x.reshape(2, 3)``, ``x.T``, ``x.mT``, ``x.item()`` (outside jit), ...
Arrays are immutable, as in JAX: ``x.sort()`` returns a sorted copy, and ``x[i] = v`` /
``x.fill(v)`` raise an error pointing to ``x.at[i].set(v)``.
"""

from __future__ import annotations

import numpy as np

from ember.errors import EmberError


class ImmutableArrayError(EmberError, TypeError):
    """An in-place update (``x[i] = v``, ``x.fill(v)``) of an immutable ember array."""


class UnsupportedMethodError(EmberError, NotImplementedError):
    """An ``ndarray`` method or argument ember has no equivalent for."""


def _np():
    import ember.numpy as enp
    return enp


def _where() -> str:
    from ember._traceback import user_where
    return user_where()


def _is_tracer(x) -> bool:
    from ember.frontend.tracing import Tracer
    return isinstance(x, Tracer)


def _binop(name, reflected=False):
    scalar_argument = name in _SCALAR_ARGUMENT_OPS

    def op(self, other):
        fn = getattr(_np(), name)
        if scalar_argument and type(other) in (int, float) and type(self) is _array_type():
            other = _weak_scalar(self, other)
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = f"__{'r' if reflected else ''}{name}__"
    return op


# Operators whose Python scalar operand is an argument of the eager program, not a constant
# in it (as JAX passes it): ``a + i`` for 500 values of i compiled 500 programs (one per
# value, each about a second), now one. Not ``**`` (an int exponent is unrolled), nor the
# operators whose scalar often configures the op (shifts, ``//``, ``%``).
_SCALAR_ARGUMENT_OPS = frozenset({"add", "subtract", "multiply", "divide"})


def _array_type():
    from ember.backends.array import Array
    return Array


# Uploaded weak scalars by (device memory space, type, value): a loop's ``x * lr`` uploads
# its scalar once (an upload is about 15 us). Dropped whole when full.
_SCALARS: dict = {}
_MAX_SCALARS = 256


def _weak_scalar(array, x):
    """``x`` (a Python int or float) as a weak-typed 0-d Array on ``array``'s device, as it
    would be passed to a jitted function; ``x`` itself inside a trace (a constant there) and
    for an int its weak dtype cannot hold (the op's own rules report or convert it)."""
    from ember.frontend import tracing

    if tracing._TRACES.items:
        return x
    device = array.device
    key = (device.space, type(x), x if type(x) is int else x.hex())   # -0.0, nan: by bits
    hit = _SCALARS.get(key)
    if hit is not None:
        return hit
    from ember.dtypes import dtype_and_weak

    dtype, _ = dtype_and_weak(x)
    if type(x) is int and not np.iinfo(dtype).min <= x <= np.iinfo(dtype).max:
        return x
    aval = _shaped(dtype)
    out = type(array)(device.upload(np.asarray(x, dtype)), device, aval)
    if len(_SCALARS) >= _MAX_SCALARS:
        _SCALARS.clear()
    _SCALARS[key] = out
    return out


def _shaped(dtype):
    from ember.core import ShapedArray
    return ShapedArray((), dtype, True)


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}

# Methods whose ember.numpy function takes NumPy's method arguments in NumPy's order after
# the array: ``x.name(*args, **kw)`` is ``ember.numpy.name(x, *args, **kw)``.
_FORWARDED = ("sum", "prod", "max", "min", "mean", "std", "var", "all", "any", "cumsum",
              "cumprod", "ptp", "swapaxes", "squeeze", "repeat", "searchsorted", "diagonal",
              "trace", "argsort", "nonzero")


def install(cls) -> None:
    """Give ``cls`` NumPy's operators, properties and methods (``.T .reshape .sum ...``)."""
    for dunder, fn in _BINOPS.items():
        setattr(cls, f"__{dunder}__", _binop(fn))
        setattr(cls, f"__r{dunder}__", _binop(fn, reflected=True))
    for dunder, fn in _COMPARE.items():
        setattr(cls, f"__{dunder}__", _binop(fn))
    cls.__neg__ = lambda self: _np().negative(self)
    cls.__pos__ = lambda self: _np().positive(self)
    cls.__abs__ = lambda self: _np().absolute(self)
    cls.__invert__ = lambda self: _np().invert(self)
    cls.__round__ = lambda self, ndigits=None: _np().round(self, ndigits or 0)
    cls.__getitem__ = lambda self, idx: _np()._getitem(self, idx)
    cls.__setitem__ = _setitem
    cls.__len__ = _len
    cls.__iter__ = _iter
    cls.__contains__ = _contains
    cls.at = property(_at, doc="JAX's functional updates: ``x.at[idx].set(y)``, ``.add``, "
                      "``.subtract``, ``.multiply``, ``.divide``, ``.min``, ``.max``, ``.get``.")

    # properties
    cls.T = property(lambda self: _np().transpose(self), doc="The axes reversed.")
    cls.mT = property(_mT, doc="The last two axes swapped (matrix transpose).")
    cls.real = property(lambda self: self, doc="The real part: the array itself.")
    cls.imag = property(lambda self: _np().zeros_like(self), doc="The imaginary part: zeros.")
    cls.itemsize = property(lambda self: self.aval.dtype.itemsize)
    cls.nbytes = property(lambda self: self.aval.nbytes)

    # the Array API's protocol
    cls.__array_namespace__ = _array_namespace
    cls.to_device = _to_device

    # methods
    for name in _FORWARDED:
        setattr(cls, name, _method(name))
    for fn in (argmax, argmin, clip, round, conj, conjugate, astype, reshape, transpose,
               ravel, flatten, take, sort, dot, item, tolist, copy, view, fill):
        setattr(cls, fn.__name__, fn)


def _array_namespace(self, /, *, api_version=None):
    """The Array API namespace of ember arrays: ``ember.numpy`` (standard 2024.12)."""
    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"ember.numpy implements the Array API 2024.12, not {api_version!r}")
    return _np()


def _to_device(self, device, /, *, stream=None):
    """The array on ``device`` (``ember.device_put``)."""
    if stream is not None:
        raise ValueError("ember.Array.to_device: streams are not supported (stream=None)")
    from ember.backends.array import device_put
    return device_put(self, device)


# --- operators and protocols -------------------------------------------------------------------

def _at(self):
    from ember.numpy._indexing import _IndexUpdateHelper
    return _IndexUpdateHelper(self)


def _setitem(self, idx, value):
    raise ImmutableArrayError(
        f"'{type(self).__name__}' object does not support item assignment: ember arrays are "
        f"immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` (or another .at[] "
        f"method: .add, .multiply, .min, .max, ...)\n  at {_where()}")


def _len(self):
    if not self.shape:
        raise TypeError("len() of unsized object")
    return self.shape[0]


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    if _is_tracer(self):
        return (self[i] for i in range(self.shape[0]))
    return _iter_concrete(self)


def _iter_concrete(self):
    # Rows come from the (cached) host copy: indexing the device array row by row would
    # compile one program per row index.
    from ember.backends.array import device_put
    host = np.asarray(self)
    for row in host:
        a = device_put(row)
        if self.weak_type:
            a.aval = a.aval._replace(weak_type=True)
        yield a


def _contains(self, value):
    return bool(_np().any(_np().equal(self, value)))


def _mT(self):
    if len(self.shape) < 2:
        _np()._error(f"mT: the array must be at least two-dimensional, got shape {self.shape}")
    return _np().swapaxes(self, -1, -2)


# --- methods ---------------------------------------------------------------------------------

def _method(name):
    def m(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = f"``ember.numpy.{name}(self, ...)``, with ndarray.{name}'s arguments."
    return m


def _no_out(out, name):
    if out is not None:
        _np()._error(f"{name}: out= is not supported (ember arrays are immutable); use the "
                     "result")


def argmax(self, axis=None, out=None, *, keepdims=False):
    """Index of the largest element (along ``axis``)."""
    _no_out(out, "argmax")
    return _np().argmax(self, axis, keepdims=keepdims)


def argmin(self, axis=None, out=None, *, keepdims=False):
    """Index of the smallest element (along ``axis``)."""
    _no_out(out, "argmin")
    return _np().argmin(self, axis, keepdims=keepdims)


def clip(self, min=None, max=None, out=None):  # noqa: A002
    """Values limited to ``[min, max]``."""
    _no_out(out, "clip")
    return _np().clip(self, min, max)


def round(self, decimals=0, out=None):  # noqa: A001
    """Rounded half to even, to ``decimals`` decimals."""
    _no_out(out, "round")
    return _np().round(self, decimals)


def conj(self):
    """The complex conjugate: the array itself (ember arrays are real)."""
    return self


def conjugate(self):
    """The complex conjugate: the array itself (ember arrays are real)."""
    return self


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """The array converted to ``dtype`` (64-bit types narrowed unless x64 is enabled)."""
    return _np().astype(self, dtype)


def reshape(self, *shape, order="C", copy=None):
    """The array reshaped to ``shape`` (a tuple or separate ints; one may be -1)."""
    if not shape:
        _np()._error("reshape: a new shape is required, e.g. x.reshape(2, 3) or "
                     "x.reshape((2, 3))")
    return _np().reshape(self, shape[0] if len(shape) == 1 else shape, order)


def transpose(self, *axes):
    """The axes permuted: reversed, or in the order given (a tuple or separate ints)."""
    return _np().transpose(self, None if not axes else axes[0] if len(axes) == 1 else axes)


def ravel(self, order="C"):
    """The array as 1-D (order 'F' reads it column-major)."""
    return _np().ravel(self, order)


def flatten(self, order="C"):
    """The array as 1-D (a copy in NumPy; ember arrays are immutable, so like ravel)."""
    return _np().ravel(self, order)


def take(self, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements at ``indices`` (along ``axis``; of the flattened array by default)."""
    _no_out(out, "take")
    return _np().take(self, indices, axis=axis, mode=mode, fill_value=fill_value)


def sort(self, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """A sorted copy along ``axis`` (as in JAX: the array itself is unchanged)."""
    return _np().sort(self, axis, kind, order, stable=stable, descending=descending)


def dot(self, b, out=None):
    """``ember.numpy.dot(self, b)``."""
    _no_out(out, "dot")
    return _np().dot(self, b)


def item(self, *args):
    """The element (at a flat index, or an index tuple) as a Python scalar (not under jit)."""
    if _is_tracer(self):
        self._concrete("a Python scalar (.item())")
    return np.asarray(self).item(*args)


def tolist(self):
    """The array as nested Python lists of Python scalars (not under jit)."""
    if _is_tracer(self):
        self._concrete("a Python list (.tolist())")
    return np.asarray(self).tolist()


def copy(self, order="C"):
    """A copy in a buffer of its own (so that donating either leaves the other as it is)."""
    if _is_tracer(self):
        return self
    from ember.backends.array import Array
    return Array(self.device.copy(self._live_bv()), self.device, self.aval)


def view(self, dtype=None, type=None):  # noqa: A002
    """The bits reinterpreted as ``dtype`` of the same itemsize (``bitcast_convert_type``)."""
    if type is not None:
        raise UnsupportedMethodError(f"view: type= is not supported by ember arrays\n  at "
                                     f"{_where()}")
    if dtype is None:
        return self
    from ember import dtypes
    new = dtypes.canonicalize(dtype)
    if new.itemsize != self.dtype.itemsize or np.dtype(bool) in (new, self.dtype):
        raise UnsupportedMethodError(
            f"view: reinterpreting {self.dtype.name} as {new.name} is not supported; ember "
            f"views only between non-bool dtypes of the same itemsize (use .astype to convert "
            f"values)\n  at {_where()}")
    from ember import lax
    return lax.bitcast_convert_type(self, new)


def fill(self, value):
    """Not supported: ember arrays are immutable."""
    raise ImmutableArrayError(
        f"'{type(self).__name__}' object does not support fill(): ember arrays are immutable. "
        f"Use ``x = ember.numpy.full_like(x, value)`` or ``x = x.at[...].set(value)``\n  at "
        f"{_where()}")
