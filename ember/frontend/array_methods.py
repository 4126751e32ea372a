"""The methods of tracers (inside jit) and Arrays (outside) that need only the frontend:
``len``, iteration, ``item``/``tolist`` (outside jit), ``copy``, ``to_device``, and the
refusals of in-place updates (arrays are immutable, as in JAX: ``x[i] = v`` / ``x.fill(v)``
raise an error pointing to ``x.at[i].set(v)``); and :func:`operator_method`, the operators'
handling of a Python scalar operand. The operators and NumPy's methods themselves
(``+``, ``x[i]``, ``x.sum()``, ``x.reshape``, ``x.T``, ...) are ``ember.numpy``'s, which
installs them when it is imported (``ember/numpy/_array_methods.py``).
"""

from __future__ import annotations

import numpy as np

from ember.errors import EmberError


class ImmutableArrayError(EmberError, TypeError):
    """An in-place update (``x[i] = v``, ``x.fill(v)``) of an immutable ember array."""


class UnsupportedMethodError(EmberError, NotImplementedError):
    """An ``ndarray`` method or argument ember has no equivalent for."""



def _where() -> str:
    from ember._traceback import user_where
    return user_where()


def _is_tracer(x) -> bool:
    from ember.frontend.tracing import Tracer
    return isinstance(x, Tracer)


def operator_method(fn, name, reflected=False):
    """The operator method ``self op other`` calling ``fn(self, other)`` (``fn(other, self)``
    if ``reflected``), where ``name`` is NumPy's name of ``fn``: for + - * / a Python scalar
    operand of an Array is passed as a weak-typed argument of the eager program.

    Example:
        >>> Array.__add__ = operator_method(ember.numpy.add, "add")
    """
    scalar_argument = name in _SCALAR_ARGUMENT_OPS

    def op(self, other):
        if scalar_argument and type(other) in (int, float, complex) and \
                type(self) is _array_type():
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
    """``x`` (a Python int, float or complex) as a weak-typed 0-d Array on ``array``'s device, as it
    would be passed to a jitted function; ``x`` itself inside a trace (a constant there) and
    for an int its weak dtype cannot hold (the op's own rules report or convert it)."""
    from ember.frontend import tracing

    if tracing._TRACES.items:
        return x
    device = array.device
    # -0.0, nan: by bits
    key = (device.space, type(x), x if type(x) is int else
           (x.real.hex(), x.imag.hex()) if type(x) is complex else x.hex())
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


def install(cls) -> None:
    """Give ``cls`` the methods that need only the frontend (``len``, iteration, ``.item``,
    ``.copy``, ``.to_device``, the refusals of ``x[i] = v`` and ``.fill``); ember.numpy
    installs the operators and NumPy's methods.

    Example:
        >>> install(ember.Array)     # (done when ember is imported)
    """
    cls.__setitem__ = _setitem
    cls.__len__ = _len
    cls.__iter__ = _iter
    cls.itemsize = property(lambda self: self.aval.dtype.itemsize)
    cls.nbytes = property(lambda self: self.aval.nbytes)
    cls.to_device = _to_device
    for fn in (item, tolist, copy, fill):
        setattr(cls, fn.__name__, fn)


def _to_device(self, device, /, *, stream=None):
    """The array on ``device`` (``ember.device_put``)."""
    if stream is not None:
        raise ValueError("ember.Array.to_device: streams are not supported (stream=None)")
    from ember.backends.array import device_put
    return device_put(self, device)


# --- protocols and methods ---------------------------------------------------------------------

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


def fill(self, value):
    """Not supported: ember arrays are immutable."""
    raise ImmutableArrayError(
        f"'{type(self).__name__}' object does not support fill(): ember arrays are immutable. "
        f"Use ``x = ember.numpy.full_like(x, value)`` or ``x = x.at[...].set(value)``\n  at "
        f"{_where()}")
