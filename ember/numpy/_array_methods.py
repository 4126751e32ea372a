"""The operators and NumPy-style methods of ember arrays that ``ember.numpy`` implements,
installed onto ``ember.Array`` and the tracer class when ``ember.numpy`` is imported (as
JAX's ``jax/_src/numpy/array_methods.py`` does); what needs only the frontend (immutability,
``len``, iteration, ``item``, ``copy``) is installed by ``ember.frontend.array_methods``.

The methods mirror ``numpy.ndarray``'s, with NumPy's positional argument order, as far as
``ember.numpy`` has the function: ``x.sum(axis, dtype, out, keepdims)``, ``x.argmax(axis)``,
``x.clip(min, max)``, ``x.reshape(2, 3)``, ``x.T``, ``x.mT``, ``x[i]``, ``x.at[i].set(v)``,
``x + y``, ...

Example:
    >>> enp.arange(6).reshape(2, 3).sum(axis=0)
    Array([3, 5, 7], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from ember import lax
from ember.backends.array import Array
from ember.frontend.array_methods import UnsupportedMethodError, operator_method
from ember.frontend.tracing import Tracer, user_where


def _np():
    # (at call time: this module is imported while ember.numpy itself is)
    import ember.numpy as enp
    return enp


def _numpy_operator(fn_name, reflected=False):
    """The operator method calling ``ember.numpy.<fn_name>`` (looked up at each call)."""
    def fn(x, y):
        return getattr(_np(), fn_name)(x, y)
    return operator_method(fn, fn_name, reflected)


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
    """Give ``cls`` NumPy's operators, properties and methods (``+ [] .T .reshape .sum``...).

    Example:
        >>> install(ember.Array)     # (done when ember.numpy is imported)
    """
    for dunder, fn in _BINOPS.items():
        setattr(cls, f"__{dunder}__", _numpy_operator(fn))
        setattr(cls, f"__r{dunder}__", _numpy_operator(fn, reflected=True))
    for dunder, fn in _COMPARE.items():
        setattr(cls, f"__{dunder}__", _numpy_operator(fn))
    cls.__neg__ = lambda self: _np().negative(self)
    cls.__pos__ = lambda self: _np().positive(self)
    cls.__abs__ = lambda self: _np().absolute(self)
    cls.__invert__ = lambda self: _np().invert(self)
    cls.__round__ = lambda self, ndigits=None: _np().round(self, ndigits or 0)
    cls.__getitem__ = lambda self, idx: _np()._getitem(self, idx)
    cls.__contains__ = _contains
    cls.at = property(_at, doc="JAX's functional updates: ``x.at[idx].set(y)``, ``.add``, "
                      "``.subtract``, ``.multiply``, ``.divide``, ``.min``, ``.max``, ``.get``.")

    # properties
    cls.T = property(lambda self: _np().transpose(self), doc="The axes reversed.")
    cls.mT = property(_mT, doc="The last two axes swapped (matrix transpose).")
    cls.real = property(lambda self: _np().real(self),
                        doc="The real part (the array itself for real dtypes).")
    cls.imag = property(lambda self: _np().imag(self),
                        doc="The imaginary part (zeros for real dtypes).")

    # the Array API's namespace
    cls.__array_namespace__ = _array_namespace

    # methods
    for name in _FORWARDED:
        setattr(cls, name, _method(name))
    for fn in (argmax, argmin, clip, round, conj, conjugate, astype, reshape, transpose,
               ravel, flatten, take, sort, dot, view):
        setattr(cls, fn.__name__, fn)


def _array_namespace(self, /, *, api_version=None):
    """The Array API namespace of ember arrays: ``ember.numpy`` (standard 2024.12)."""
    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"ember.numpy implements the Array API 2024.12, not {api_version!r}")
    return _np()


def _at(self):
    from ember.numpy._indexing import _IndexUpdateHelper
    return _IndexUpdateHelper(self)


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
    """The complex conjugate (the array itself for real dtypes)."""
    return _np().conjugate(self)


def conjugate(self):
    """The complex conjugate (the array itself for real dtypes)."""
    return _np().conjugate(self)


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


def view(self, dtype=None, type=None):  # noqa: A002
    """The bits reinterpreted as ``dtype`` of the same itemsize (``bitcast_convert_type``)."""
    if type is not None:
        raise UnsupportedMethodError(f"view: type= is not supported by ember arrays\n  at "
                                     f"{user_where()}")
    if dtype is None:
        return self
    from ember import dtypes
    new = dtypes.canonicalize(dtype)
    if new.itemsize != self.dtype.itemsize or np.dtype(bool) in (new, self.dtype):
        raise UnsupportedMethodError(
            f"view: reinterpreting {self.dtype.name} as {new.name} is not supported; ember "
            f"views only between non-bool dtypes of the same itemsize (use .astype to convert "
            f"values)\n  at {user_where()}")
    return lax.bitcast_convert_type(self, new)


install(Array)
install(Tracer)
