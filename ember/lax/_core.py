"""ember.lax's core: one function per ember op (elementwise ops made from the dialect's
table, conversions, shapes, reductions, products), and the operand rules they share.

lax/__init__.py re-exports it; the other lax modules import it (never the package), so
no lax module imports another in a cycle.
"""

from __future__ import annotations

import builtins
import enum
import warnings

import numpy as np

from ember import dtypes
from ember._traceback import user_stacklevel as _user_stacklevel
from ember.dialects import OPS
from ember.errors import TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, bind, current_trace, user_where

_BITWISE = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "bitwise_not": "not"}


def _is_weak(x) -> bool:
    return dtypes.dtype_and_weak(x)[1]


def _as_tracer(x) -> Tracer:
    return current_trace().lift(x)


def _match_scalars(*xs):
    """Lift Python scalars to the dtype of the array operands (lax's weak-type rule)."""
    arrays = [x for x in xs if hasattr(x, "dtype") and not isinstance(x, np.generic)]
    if not arrays:
        return [_as_tracer(x) for x in xs]
    dtype = arrays[0].dtype
    out = []
    for x in xs:
        if hasattr(x, "dtype") and not isinstance(x, np.generic):
            out.append(_as_tracer(x))
        else:
            out.append(_as_tracer(np.asarray(x, dtype=dtype)))
    return out


def _binary_operands(x, y):
    """Both operands as tracers of one dtype (see _match_scalars), a rank-0 one broadcast to
    the other's shape, as JAX's lax binary ops take ``lax.add(x, 2.0)``."""
    x, y = _match_scalars(x, y)
    if x.ndim == 0 and y.ndim:
        x = broadcast_in_dim(x, y.shape, ())
    elif y.ndim == 0 and x.ndim:
        y = broadcast_in_dim(y, x.shape, ())
    return x, y


def _unary(name):
    def f(x):
        x = _as_tracer(x)
        return bind(f"ember.{name}", x, _weak=x.weak_type)[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` (the ``ember.{name}`` op)."
    return eager(f)


def _binary(name, op):
    def f(x, y):
        weak = _is_weak(x) and _is_weak(y)     # (a bool result is never weak: see bind)
        x, y = _binary_operands(x, y)
        return bind(f"ember.{op}", x, y, _weak=weak)[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise ``{name}`` of equal shapes and dtypes, a scalar broadcast (the "
                 f"``ember.{op}`` op).")
    return eager(f)


# lax.<op> for every elementwise op of the dialect, named as the op, but for those whose lax
# function has a name or arguments of its own (below, and in _bits.py): a new elementwise op
# needs no edit here.
_OWN_FUNCTION = {"and", "or", "xor", "not", "round", "select", "convert", "real", "imag",
                 "complex", "conj", "shift_left", "shift_right_logical",
                 "shift_right_arithmetic", "population_count", "clz", "bitcast_convert_type"}
for _full, _op in OPS.items():
    _n = _full.split(".", 1)[1]
    if _op.family == "elementwise" and _n not in _OWN_FUNCTION:
        globals()[_n] = _unary(_n) if _op.num_operands == 1 else _binary(_n, _n)
for _n, _op in _BITWISE.items():
    globals()[_n] = _unary(_op) if _op == "not" else _binary(_n, _op)
not_ = globals()["bitwise_not"]
logistic = globals()["logistic"]


@eager
def real(x):
    """The real part of a complex array (complex64 -> float32), as JAX's ``lax.real``.

    Example:
        >>> ember.lax.real(np.array([1 + 2j], np.complex64))
        Array([1.], dtype=float32)
    """
    x = _as_tracer(x)
    return bind("ember.real", x, _weak=x.weak_type)[0]


@eager
def imag(x):
    """The imaginary part of a complex array (complex64 -> float32), as JAX's ``lax.imag``.

    Example:
        >>> ember.lax.imag(np.array([1 + 2j], np.complex64))
        Array([2.], dtype=float32)
    """
    x = _as_tracer(x)
    return bind("ember.imag", x, _weak=x.weak_type)[0]


@eager
def complex(x, y):  # noqa: A001
    """``x + y i`` from two float32 (float64) arrays of one shape and dtype, as JAX's
    ``lax.complex``: complex64 (complex128); a scalar is broadcast.

    Example:
        >>> ember.lax.complex(np.float32(1), np.float32(2))
        Array(1.+2.j, dtype=complex64)
    """
    weak = _is_weak(x) and _is_weak(y)
    x, y = _binary_operands(x, y)
    return bind("ember.complex", x, y, _weak=weak)[0]


@eager
def conj(x):
    """The complex conjugate; a real array becomes complex first, as in JAX's ``lax.conj``.

    Example:
        >>> ember.lax.conj(np.array([1 + 2j], np.complex64))
        Array([1.-2.j], dtype=complex64)
    """
    x = _as_tracer(x)
    if not dtypes.is_complex(x.dtype):
        x = convert_element_type(x, dtypes.complex_dtype(dtypes.to_inexact(x.dtype)),
                                 x.weak_type)
    return bind("ember.conj", x, _weak=x.weak_type)[0]


@eager
def round(x, rounding_method="away_from_zero"):  # noqa: A001
    """Round to integral values: half away from zero (default) or to nearest even.
    ``rounding_method`` is a :class:`RoundingMethod` or its int, as in JAX, or ember's
    names "away_from_zero" and "to_nearest_even"."""
    x = _as_tracer(x)
    if not isinstance(rounding_method, str):
        try:
            rounding_method = RoundingMethod(rounding_method).name.lower()
        except ValueError:
            raise TracingError(f"lax.round: rounding_method must be a RoundingMethod (0 or 1) "
                               f"or 'away_from_zero'/'to_nearest_even', got "
                               f"{rounding_method!r}\n  at {user_where()}") from None
    return bind("ember.round", x, rounding_method=rounding_method, _weak=x.weak_type)[0]


class RoundingMethod(enum.IntEnum):
    """``lax.RoundingMethod``: how :func:`round` breaks ties, as JAX's enum.

    Example:
        >>> ember.lax.round(np.float32(2.5), ember.lax.RoundingMethod.TO_NEAREST_EVEN)
        Array(2., dtype=float32)
    """

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


@eager
def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false``; all of one shape."""
    weak = _is_weak(on_true) and _is_weak(on_false)
    on_true, on_false = _match_scalars(on_true, on_false)
    return bind("ember.select", pred, on_true, on_false, _weak=weak)[0]


@eager
def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Convert to ``new_dtype`` (canonicalized: float64 becomes float32 unless x64 is on).
    Complex to real keeps the real part, with NumPy's ``ComplexWarning`` (as JAX's)."""
    x = _as_tracer(x)
    new_dtype = dtypes.canonicalize(new_dtype)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype) and \
            not dtypes.is_bool(new_dtype):
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=_user_stacklevel())
    if x.dtype == new_dtype and x.weak_type == weak_type:
        return x
    if x.dtype == new_dtype:
        return Tracer(x._trace, x.value, x.aval._replace(weak_type=weak_type), x.origin)
    return bind("ember.convert", x, new_dtype=new_dtype, _weak=weak_type)[0]


@eager
def iota(dtype, size: int):
    """``0, 1, ..., size - 1``."""
    return broadcasted_iota(dtype, (size,), 0)


@eager
def broadcasted_iota(dtype, shape, dimension: int):
    """Indices along ``dimension`` broadcast to ``shape``."""
    return bind("ember.iota", shape=tuple(shape), dimension=dimension,
                dtype=dtypes.canonicalize(dtype))[0]


@eager
def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand dimension i goes to ``broadcast_dimensions[i]``."""
    x = _as_tracer(x)
    if tuple(shape) == x.shape:
        return x
    return bind("ember.broadcast_in_dim", x, shape=tuple(shape),
                broadcast_dimensions=tuple(broadcast_dimensions), _weak=x.weak_type)[0]


@eager
def reshape(x, new_sizes):
    """Reshape in row-major order."""
    x = _as_tracer(x)
    if tuple(new_sizes) == x.shape:
        return x
    return bind("ember.reshape", x, new_sizes=tuple(new_sizes), _weak=x.weak_type)[0]


@eager
def transpose(x, permutation):
    """Permute the axes: result axis i is operand axis ``permutation[i]``."""
    x = _as_tracer(x)
    if tuple(permutation) == tuple(range(x.ndim)):
        return x
    return bind("ember.transpose", x, permutation=tuple(permutation), _weak=x.weak_type)[0]


def _reducer(op):
    def f(x, axes):
        x = _as_tracer(x)
        axes = tuple(sorted(axes))
        if not axes:
            return x
        dt = x.dtype
        if op == "reduce_sum" and dtypes.is_float(dt) and dt.itemsize < 4:
            # halves accumulate in float32, as XLA's do (in float16 50000 ones summed to 32768)
            wide = bind(f"ember.{op}", convert_element_type(x, np.float32), axes=axes,
                        _weak=x.weak_type)[0]
            return convert_element_type(wide, dt)
        return bind(f"ember.{op}", x, axes=axes, _weak=x.weak_type)[0]
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"``{op}`` over ``axes`` (the ``ember.{op}`` op)."
    return eager(f)


reduce_sum = _reducer("reduce_sum")
reduce_prod = _reducer("reduce_prod")
reduce_max = _reducer("reduce_max")
reduce_min = _reducer("reduce_min")
reduce_and = _reducer("reduce_and")
reduce_or = _reducer("reduce_or")


@eager
def argmax(x, axis: int, index_dtype=np.int32):
    """Index of the first maximum along ``axis`` (NaN counts as the maximum, as in NumPy)."""
    return bind("ember.argmax", x, axis=axis, index_dtype=dtypes.canonicalize(index_dtype))[0]


@eager
def argmin(x, axis: int, index_dtype=np.int32):
    """Index of the first minimum along ``axis`` (NaN counts as the minimum, as in NumPy)."""
    return bind("ember.argmin", x, axis=axis, index_dtype=dtypes.canonicalize(index_dtype))[0]


class Precision(enum.Enum):
    """``lax.Precision``, the ``precision=`` of products and convolutions. Its names are
    accepted everywhere JAX accepts them; ember computes float32 products in float32 on every
    backend, so each is HIGHEST's precision.

    Example:
        >>> ember.lax.Precision("highest")
        <Precision.HIGHEST: 2>
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "tensorfloat32": cls.HIGH, "highest": cls.HIGHEST,
                 "float32": cls.HIGHEST}
        return names.get(value.lower()) if isinstance(value, str) else None


def _check_precision(fun: str, precision):
    """Refuse a ``precision=`` JAX would refuse (None, a Precision, one of its names, or a
    pair of them for the two operands)."""
    pair = isinstance(precision, tuple | list) and len(precision) == 2
    for p in precision if pair else (precision,):
        if p is not None and not isinstance(p, Precision) and (
                not isinstance(p, str) or Precision._missing_(p) is None):
            raise TracingError(f"{fun}: precision must be None, a lax.Precision, one of "
                               f"{[m.name.lower() for m in Precision]} or a pair of them, got "
                               f"{precision!r}\n  at {user_where()}")


@eager
def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """``lax.dot_general``: ``dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``; result dims are batch, lhs free, rhs free. With
    ``preferred_element_type`` the operands are converted to it first, so the products are
    computed and accumulated in it (int8 operands give int32 sums).

    Example:
        >>> a = np.full((2, 2), 100, np.int8)
        >>> ember.lax.dot_general(a, a, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
        Array([[20000, 20000],
               [20000, 20000]], dtype=int32)
    """
    _check_precision("dot_general", precision)
    (lc, rc), (lb, rb) = dimension_numbers
    weak = _is_weak(lhs) and _is_weak(rhs)
    lhs, rhs = _match_scalars(lhs, rhs)
    if preferred_element_type is not None:
        pet = dtypes.canonicalize(preferred_element_type)
        lhs, rhs = convert_element_type(lhs, pet), convert_element_type(rhs, pet)
        weak = False
    if lhs.dtype == np.bool_ and rhs.dtype == np.bool_:
        # A bool product is an or of ands (NumPy, JAX): counted in int32, then nonzero.
        n = dot_general(convert_element_type(lhs, np.int32), convert_element_type(
            rhs, np.int32), dimension_numbers)
        zero = broadcast_in_dim(convert_element_type(0, np.int32), n.shape, ())
        return bind("ember.ne", n, zero)[0]
    return bind("ember.dot_general", lhs, rhs, lhs_contracting=tuple(lc),
                rhs_contracting=tuple(rc), lhs_batch=tuple(lb), rhs_batch=tuple(rb),
                _weak=weak)[0]


@eager
def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001
    """Static slice ``x[start:limit:strides]`` per dimension."""
    x = _as_tracer(x)
    strides = tuple(strides) if strides is not None else (1,) * x.ndim
    if (tuple(start_indices) == (0,) * x.ndim and tuple(limit_indices) == x.shape
            and builtins.all(s == 1 for s in strides)):
        return x
    return bind("ember.slice", x, start_indices=tuple(start_indices),
                limit_indices=tuple(limit_indices), strides=strides, _weak=x.weak_type)[0]


@eager
def concatenate(operands, dimension: int):
    """Concatenate arrays of one dtype along ``dimension``."""
    xs = [_as_tracer(x) for x in operands]
    if len(xs) == 1:
        return xs[0]
    return bind("ember.concatenate", *xs, dimension=dimension,
                _weak=builtins.all(x.weak_type for x in xs))[0]


@eager
def pad(x, padding_value, padding_config):
    """Pad with a scalar: ``padding_config`` is ``[(low, high, interior), ...]``."""
    x, padding_value = _match_scalars(x, padding_value)
    low, high, interior = zip(*padding_config) if padding_config else ((), (), ())
    return bind("ember.pad", x, padding_value, low=tuple(low), high=tuple(high),
                interior=tuple(interior), _weak=x.weak_type)[0]


@eager
def rev(x, dimensions):
    """Reverse ``x`` along ``dimensions``."""
    x = _as_tracer(x)
    if not dimensions:
        return x
    return bind("ember.rev", x, dimensions=tuple(dimensions), _weak=x.weak_type)[0]
