"""ember.numpy's core: the helpers its modules share (lifting, conversion, promotion,
broadcasting, axes, errors) and the first cut of its functions (creation, arithmetic,
products, shapes, basic indexing).

numpy/__init__.py re-exports it, after which later modules may replace a first-cut
function with a fuller one (``where``, ``_getitem``); the other numpy modules import
this one, never the package, so no numpy module imports another in a cycle.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ember import dtypes, errors, lax
from ember.dialects import OPS as _OPS
from ember.dtypes import (  # noqa
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ember.errors import AxisError, IndexingError, ShapeValueError, TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, current_trace, user_where
from ember.numpy._placement import placed as _placed

pi, e, inf, nan, newaxis = np.pi, np.e, np.inf, np.nan, None


def _is_traced() -> bool:
    return current_trace() is not None


def _lift(x) -> Tracer:
    return current_trace().lift(x)


def _error(msg: str, cls=TracingError):
    raise cls(f"{msg}\n  at {user_where()}")


def _arg_error(msg: str):
    raise errors.ArgumentError(f"{msg}\n  at {user_where()}")


def _is_concrete(*xs) -> bool:
    """Whether none of ``xs`` is traced (their values are known now)."""
    return not builtins.any(isinstance(x, Tracer) for x in xs)


def _static_int(v, what, name) -> int:
    """``v`` as a Python int; a traced or non-integer ``v`` is an error naming ``what``."""
    if isinstance(v, Tracer):
        raise errors.ConcretizationError(f"{name}: {what} must be a static integer, got a "
                                         f"traced value; pass a Python int\n  at {user_where()}")
    try:
        return operator.index(v)
    except TypeError:
        _arg_error(f"{name}: {what} must be an integer, got {v!r}")


def _shape_of(a):
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


# --- conversion, promotion and broadcasting ---------------------------------------------------

def _to(x, dtype, weak=False) -> Tracer:
    """x as a tracer of ``dtype`` (Python scalars become constants of that dtype)."""
    if not isinstance(x, Tracer) and not hasattr(x, "aval"):
        if isinstance(x, int) and not isinstance(x, builtins.bool) and \
                np.dtype(dtype).kind in "iu":
            # A Python int outside the dtype's range wraps, as in JAX (uint8 array + -1,
            # int8 array * 200); NumPy's asarray would raise OverflowError. JAX's limit is
            # the default integer type's range.
            info = np.iinfo(dtypes.default_int())
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} is too large to convert to "
                                    f"{info.dtype.name}")
            bits = 8 * np.dtype(dtype).itemsize
            x = x % (1 << bits)
            if np.dtype(dtype).kind == "i" and x >= 1 << (bits - 1):
                x -= 1 << bits
        x = _lift(np.asarray(x, dtype=dtype))
    return lax.convert_element_type(_lift(x), dtype, weak)


def _const(v, like) -> Tracer:
    """The scalar ``v`` as an array of ``like``'s shape and dtype (lax ops need equal shapes)."""
    c = _to(v, like.dtype)
    return lax.broadcast_in_dim(c, like.shape, ()) if like.shape else c


def _promote(*args):
    dtype, weak = dtypes.result_type(*args)
    return [_to(a, dtype, weak) for a in args]


def _numeric(*xs):
    """JAX's promote_dtypes_numeric on promoted tracers: bools become int32 (under x64 too,
    not the default integer), keeping their weak type."""
    if xs[0].dtype != bool_:
        return list(xs)
    return [_to(x, np.int32, x.weak_type) for x in xs]


def _ordered(name, *xs):
    """Refuse complex operands where an order is needed: the Array API leaves comparisons,
    max, min and sorting of complex numbers undefined (JAX orders them lexicographically);
    ember raises rather than pick an order."""
    for x in xs:
        dt = getattr(x, "dtype", None)
        if (dt is not None and dtypes.is_complex(dt)) or isinstance(x, complex):
            dt = dt if dt is not None else "complex"
            _error(f"{name}: complex numbers have no order ({np.dtype(dt).name} operand); "
                   "compare their real parts (enp.real) or magnitudes (enp.abs)")


def _broadcast(*xs, name=None):
    try:
        shape = np.broadcast_shapes(*(x.shape for x in xs)) if xs else ()
    except ValueError:
        _error(f"{name + ': ' if name else ''}shapes "
               f"{' and '.join(str(tuple(x.shape)) for x in xs)} cannot be broadcast together")
    return [broadcast_to(x, shape) for x in xs]


def _promote_broadcast(*args, name=None):
    return _broadcast(*_promote(*args), name=name)


def _float_args(*args, name=None):
    """Promote, and make integers and bools floating point (for exp, sqrt, /, ...)."""
    return _broadcast(*_promote_inexact(*args), name=name)


def _promote_inexact(*args):
    """JAX's promote_dtypes_inexact: each argument converted straight to the inexact form of
    the promoted dtype (never through the promoted integer type, which can wrap: int8 and
    uint32 promote to int32 without x64, where 4294967295 would become -1)."""
    dtype, weak = dtypes.result_type(*args)
    return [_to(a, dtypes.to_inexact(dtype), weak) for a in args]


def _axes(axis, ndim, name="axis"):
    if axis is None:
        return tuple(range(ndim))
    axes = _ints(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            _error(f"{name} {a} is out of bounds for an array of dimension {ndim}", AxisError)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        _error(f"repeated {name} in {axes}", AxisError)
    return tuple(out)


# --- creation -------------------------------------------------------------------------------

def _python_host(a, dtype=None):
    """A nested list / Python scalar as NumPy data of ``dtype``, by default JAX's: the
    promotion of its elements, Python numbers weakly typed (``[1, 2.5]`` is float32,
    ``[np.float16(1), 2]`` float16). A Python int out of the dtype's range raises
    OverflowError (NumPy's, as JAX's), never wraps.
    """
    if dtype is None:
        leaves = []
        _python_leaves(a, leaves)
        # One element per Python type and NumPy dtype decides (a long list of floats: one).
        reps = {}
        for v in leaves:
            python = type(v) in (builtins.bool, int, float, complex)
            reps.setdefault(type(v) if python else np.asarray(v).dtype, v)
        dtype = dtypes.result_type(*reps.values())[0] if reps else dtypes.default_float()
    return np.asarray(a, dtype=dtypes.canonicalize(dtype))


def _python_leaves(a, out) -> None:
    if isinstance(a, list | tuple):
        for v in a:
            _python_leaves(v, out)
    else:
        out.append(a)


def _has_array(a) -> bool:
    if isinstance(a, list | tuple):
        return builtins.any(_has_array(v) for v in a)
    return isinstance(a, Tracer) or hasattr(a, "aval")


def _is_python_data(a) -> bool:
    return isinstance(a, list | tuple | int | float | complex) and not hasattr(a, "dtype")


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """An ember array from a NumPy array, a nested list, a scalar or an ember array (JAX's
    ``asarray``: a Python scalar gives a weakly typed array; ``copy=True`` gives an Array a
    buffer of its own; ``device`` puts the result there).

    Example:
        >>> enp.asarray([1, 2.5]).dtype
        dtype('float32')
    """
    return array(a, dtype, copy=builtins.bool(copy), order=order, device=device)


def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None):  # noqa: A002
    """An ember array from ``object`` (JAX's ``array``): NumPy data, nested lists (of arrays
    too: they are stacked), scalars (a Python number gives a weakly typed array) or ember
    arrays (copied into a buffer of their own unless ``copy=False``); ``ndmin`` leading
    dimensions of 1 are added as needed.

    Example:
        >>> enp.array(1.0)
        Array(1., dtype=float32, weak_type=True)
    """
    if order not in (None, "K", "A", "C"):
        _error(f"array: order={order!r} is not supported; ember arrays are row-major "
               "(order 'C', 'K', 'A' or None)")
    ndmin = operator.index(ndmin)
    x = _array(object, dtype, copy)
    if x.ndim < ndmin:
        x = reshape(x, (1,) * (ndmin - x.ndim) + x.shape)
    if device is not None:
        from ember.backends.array import device_put
        x = device_put(x, device)
    return x


def _array(a, dtype, copy):
    if isinstance(a, list | tuple) and builtins.any(
            isinstance(v, Tracer | list | tuple) or hasattr(v, "aval") for v in a) and \
            builtins.any(_has_array(v) for v in a):
        x = stack([_array(v, None, False) for v in a])      # a list of arrays: stack them
        return x if dtype is None else astype(x, dtype)
    weak = dtype is None and isinstance(a, int | float | complex) and \
        not isinstance(a, builtins.bool)
    if _is_traced() or isinstance(a, Tracer):
        if _is_python_data(a) and not weak:
            a = _python_host(a, dtype)
        x = _lift(a)
        return x if dtype is None else astype(x, dtype)
    from ember.backends.array import device_put
    if hasattr(a, "aval"):
        if dtype is not None:
            return astype(a, dtype)
        return a.copy() if copy else a
    if _is_python_data(a):
        x = device_put(_python_host(a, dtype))
        if weak:
            x.aval = x.aval._replace(weak_type=True)
        return x
    host = np.asarray(a)
    dt, _ = dtypes.dtype_and_weak(host) if dtype is None else (dtypes.canonicalize(dtype), 0)
    return device_put(host.astype(dt, copy=False))


def _ints(x) -> tuple:
    """An int or a sequence (an axis, a shape) as a tuple; a traced value here raises
    ConcretizationError naming the argument it came from."""
    try:
        if isinstance(x, int | np.integer | Tracer) or getattr(x, "ndim", None) == 0:
            return (operator.index(x),)
        return tuple(x)
    except TypeError as e:
        if isinstance(e, errors.EmberError):     # a traced value: ConcretizationError
            raise
        _error(f"expected an int or a sequence of ints (an axis or a shape), got {x!r}")


def _shape_tuple(shape) -> tuple[int, ...]:
    """A shape as a tuple of ints; a traced value here raises ConcretizationError."""
    dims = _ints(shape)
    try:
        return tuple(operator.index(d) for d in dims)
    except TypeError as e:
        if isinstance(e, errors.EmberError):
            raise
        _error(f"a shape must be a sequence of ints, got {shape!r}")


@_placed
def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (a scalar or an array broadcast to it);
    weakly typed when ``dtype`` is None and ``fill_value`` is (a Python scalar), as in JAX."""
    shape = _shape_tuple(shape)
    if builtins.any(d < 0 for d in shape):
        _error(f"full: negative dimensions are not allowed, got shape {shape}")
    if _is_scalar_value(fill_value):
        dt, weak = dtypes.dtype_and_weak(fill_value)
        return _full_scalar(shape, fill_value, dt if dtype is None else dtype,
                           weak and dtype is None)
    return _full_array(shape, fill_value, dtype)


def _is_scalar_value(x) -> bool:
    return np.ndim(x) == 0 and not isinstance(x, Tracer) and not hasattr(x, "aval")


def _full_scalar(shape, fill_value, dtype, weak: bool):
    """``shape`` filled with the concrete scalar ``fill_value`` as ``dtype``, weakly typed or
    not; outside a trace without compiling anything."""
    dt = dtypes.canonicalize(dtype)
    if not _is_traced():
        out = asarray(np.full(shape, np.asarray(fill_value), dtype=dt))
        return _weakly(out) if weak else out
    return lax.broadcast_in_dim(_to(fill_value, dt, weak), shape, ())


def _weakly(x):
    """``x`` (a Tracer or an ember.Array) weakly typed."""
    if isinstance(x, Tracer):
        return lax.convert_element_type(x, x.dtype, True)
    x.aval = x.aval._replace(weak_type=True)
    return x


@eager
def _full_array(shape, fill_value, dtype):
    x = _lift(fill_value)
    if dtype is not None:
        x = _to(x, dtypes.canonicalize(dtype))
    return _broadcast_to(x, shape, "full")


def _broadcast_to(x, shape, name):
    shape = tuple(shape)
    nd = len(shape) - x.ndim
    if nd < 0 or builtins.any(d != 1 and d != s for d, s in zip(x.shape, shape[nd:])):
        _error(f"{name}: cannot broadcast an array of shape {x.shape} to shape {shape}")
    return lax.broadcast_in_dim(x, shape, tuple(range(nd, len(shape))))


@_placed
def zeros(shape, dtype=None):
    return full(shape, 0, dtype or dtypes.default_float())


@_placed
def ones(shape, dtype=None):
    return full(shape, 1, dtype or dtypes.default_float())


@_placed
def empty(shape, dtype=None):
    return zeros(shape, dtype)


@_placed
def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


@_placed
def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


@_placed
def full_like(a, fill_value, dtype=None, shape=None):
    """An array of ``a``'s shape (or ``shape``) filled with ``fill_value``: of ``a``'s dtype
    and weak type when ``dtype`` is None (as in JAX).

    Example:
        >>> enp.full_like(enp.ones(3, enp.int8), 7, shape=(2, 2))
        Array([[7, 7],
               [7, 7]], dtype=int8)
    """
    dt, weak = dtypes.dtype_and_weak(a)
    weak = weak and dtype is None
    dtype = dt if dtype is None else dtype
    shape = np.shape(a) if shape is None else _shape_tuple(shape)
    if _is_scalar_value(fill_value):
        return _full_scalar(shape, fill_value, dtype, weak)
    out = full(shape, fill_value, dtype)
    return _weakly(out) if weak else out


@_placed
def eye(N, M=None, k=0, dtype=None):
    """A 2-D array with ones on the k-th diagonal."""
    M = N if M is None else M
    dt = dtypes.canonicalize(dtype or dtypes.default_float())
    if not _is_traced():
        return asarray(np.eye(N, M, k, dtype=dt))
    rows = lax.broadcasted_iota(int32, (N, M), 0)
    cols = lax.broadcasted_iota(int32, (N, M), 1)
    return _to(lax.eq(lax.add(rows, _const(k, rows)), cols), dt)


# --- elementwise ----------------------------------------------------------------------------

def _binary(name, lax_fn, *, floats=False, doc=None, ordered=False):
    def f(x1, x2):
        xs = _float_args(x1, x2, name=name) if floats else _promote_broadcast(x1, x2, name=name)
        if ordered:
            _ordered(name, *xs)
        return lax_fn(*xs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc or f"NumPy's ``{name}``, elementwise with broadcasting."
    return eager(f)


def _unary(name, lax_fn, *, floats=False, doc=None):
    def f(x):
        (x,) = _float_args(x) if floats else _promote(x)
        return lax_fn(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: {doc}" if doc else f"NumPy's ``{name}``, elementwise."
    return eager(f)


add = _binary("add", lambda x, y: lax.bitwise_or(x, y) if x.dtype == bool_ else lax.add(x, y))
lax.windowed.SUM_COMPUTATIONS.add(add)     # reduce_window(x, 0, enp.add, ...) is a sum
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply",
                   lambda x, y: lax.bitwise_and(x, y) if x.dtype == bool_ else lax.mul(x, y))
divide = true_divide = _binary("divide", lax.div, floats=True)
maximum = _binary("maximum", lax.max, ordered=True)
minimum = _binary("minimum", lax.min, ordered=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt, ordered=True)
less_equal = _binary("less_equal", lax.le, ordered=True)
greater = _binary("greater", lax.gt, ordered=True)
greater_equal = _binary("greater_equal", lax.ge, ordered=True)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)


@eager
def logical_and(x1, x2):
    return lax.bitwise_and(*_broadcast(astype(x1, bool_), astype(x2, bool_), name="logical_and"))


@eager
def logical_or(x1, x2):
    return lax.bitwise_or(*_broadcast(astype(x1, bool_), astype(x2, bool_), name="logical_or"))


@eager
def logical_xor(x1, x2):
    return lax.bitwise_xor(*_broadcast(astype(x1, bool_), astype(x2, bool_), name="logical_xor"))


@eager
def logical_not(x):
    return lax.bitwise_not(astype(x, bool_))


@eager
def invert(x):
    (x,) = _promote(x)
    return lax.bitwise_not(x)


bitwise_not = invert


@eager
def floor_divide(x1, x2):
    """``x1 // x2``: division rounded toward minus infinity (NumPy semantics)."""
    x, y = _promote_broadcast(x1, x2, name="floor_divide")
    x, y = _numeric(x, y)     # bools are int32 numbers here, as in JAX
    if dtypes.is_unsigned(x.dtype):
        return _weak_as(lax.div(x, y), x, y)
    if dtypes.is_int(x.dtype):
        # JAX's: one less where the signs differ and the division is inexact (so x // 0,
        # whose quotient is -1 and remainder x, is -2 for x != 0)
        q, r = lax.div(x, y), lax.rem(x, y)
        fix = lax.bitwise_and(lax.ne(r, _const(0, r)), lax.ne(lax.sign(x), lax.sign(y)))
        return _weak_as(lax.select(fix, lax.sub(q, _const(1, q)), q), x, y)
    return _weak_as(_float_divmod(x, y)[0], x, y)


def _weak_as(r, x, y):
    """``r`` weakly typed when both operands are (a Python float with an int array, as in
    JAX): the constants of a formula would make it strong."""
    if x.weak_type and y.weak_type and not r.weak_type:
        return lax.convert_element_type(r, r.dtype, True)
    return r


def _int_fix(r, y):
    zero = _const(0, r)
    return lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))


def _float_divmod(x, y):
    """NumPy's ``npy_divmod``: (floor quotient, remainder with the divisor's sign)."""
    zero, one = _const(0, x), _const(1, x)
    neg_zero = _const(-0.0, x)
    mod = lax.rem(x, y)
    quot = lax.div(x, y)
    div = lax.div(lax.sub(x, mod), y)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(y, zero), lax.lt(mod, zero)))
    mod = lax.select(fix, lax.add(mod, y), mod)
    div = lax.select(fix, lax.sub(div, one), div)
    # A zero remainder takes the divisor's sign.
    mod = lax.select(lax.eq(mod, zero), lax.select(lax.lt(y, zero), neg_zero, zero), mod)
    floordiv = lax.floor(div)
    floordiv = lax.select(lax.gt(lax.sub(div, floordiv), _const(0.5, x)),
                          lax.add(floordiv, one), floordiv)
    # A zero quotient has the sign of x / y, -0.0 / 1.0 included (NumPy's copysign).
    floordiv = lax.select(lax.eq(div, zero), lax.select(lax.signbit(quot), neg_zero, zero),
                          floordiv)
    # Division by zero: x / 0 (inf or nan), as NumPy.
    floordiv = lax.select(lax.eq(y, zero), quot, floordiv)
    return floordiv, mod


@eager
def remainder(x1, x2):
    """``x1 % x2``: the result has the sign of the divisor (NumPy semantics)."""
    x, y = _promote_broadcast(x1, x2, name="remainder")
    x, y = _numeric(x, y)     # bools are int32 numbers here, as in JAX
    if dtypes.is_unsigned(x.dtype):
        return _weak_as(lax.rem(x, _nonzero(y)), x, y)
    if dtypes.is_int(x.dtype):
        r = lax.rem(x, _nonzero(y))
        return _weak_as(lax.select(_int_fix(r, y), lax.add(r, y), r), x, y)
    return _weak_as(_float_divmod(x, y)[1], x, y)


def _nonzero(y):
    """An integer divisor with zeros replaced by 1: x % 0 is 0, as in JAX (NumPy warns and
    gives 0; C leaves it undefined)."""
    return lax.select(lax.eq(y, _const(0, y)), _const(1, y), y)


mod = remainder


@eager
def fmod(x1, x2):
    """C's fmod: the result has the sign of the dividend (an integer one by 0 is 0)."""
    x, y = _promote_broadcast(x1, x2, name="fmod")
    x, y = _numeric(x, y)     # bools are int32 numbers here, as in JAX
    return _weak_as(lax.rem(x, y) if dtypes.is_float(x.dtype) else lax.rem(x, _nonzero(y)),
                    x, y)


def power(x1, x2):
    """``x1 ** x2``. Integer powers are exact (by repeated squaring), as in NumPy. A concrete
    integer exponent (a Python int, a NumPy integer scalar) keeps ``x1``'s dtype, as in JAX
    (``power(int8_array, np.int32(3))`` is int8)."""
    n = _static_exponent(x2)
    if n is not None:
        return _integer_pow(x1, n)
    return _power(x1, x2)


def _static_exponent(x2):
    """``x2`` as a Python int if it is a concrete integer scalar (not a bool), else None."""
    if isinstance(x2, int) and not isinstance(x2, builtins.bool):
        return x2
    if isinstance(x2, np.generic | np.ndarray) and np.ndim(x2) == 0 and \
            np.asarray(x2).dtype.kind in "iu":
        return int(x2)
    return None


@eager
def _integer_pow(x, n):
    (x,) = _numeric(*_promote(x))      # bools are int32 numbers here, as in JAX
    if n < 0:
        if not dtypes.is_inexact(x.dtype):
            _error("integers to negative integer powers are not allowed")
        return _weak_as(lax.div(_const(1, x), _integer_pow(x, -n)), x, x)
    return _by_squaring(x, n, lax.mul) if n else _weak_as(ones_like(x), x, x)


def _by_squaring(x, n: int, mul):
    """``x`` to the power ``n`` > 0 under the product ``mul`` (elementwise, matrix), by
    repeated squaring."""
    acc = None
    while n:
        if n & 1:
            acc = x if acc is None else mul(acc, x)
        n >>= 1
        if n:
            x = mul(x, x)
    return acc


@eager
def _power(x1, x2):
    x, y = _promote_broadcast(x1, x2, name="power")
    if dtypes.is_inexact(x.dtype):
        return lax.pow(x, y)
    x, y = _numeric(x, y)     # bools are int32 numbers here, as in JAX
    # Exact integer power by squaring over the exponent's bits.
    one = _const(1, x)
    acc, base = one, x
    for bit in range(x.dtype.itemsize * 8 - (0 if dtypes.is_unsigned(x.dtype) else 1)):
        set_ = lax.ne(lax.bitwise_and(y, _const(np.array(1 << bit, y.dtype), y)), _const(0, y))
        acc = lax.select(set_, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
    if not dtypes.is_unsigned(x.dtype):
        # A negative exponent: 1 ** y is 1, (-1) ** y is +-1, anything else 0 (as JAX's).
        odd = lax.ne(lax.bitwise_and(y, _const(1, y)), _const(0, y))
        minus_one = lax.select(odd, lax.neg(one), one)
        frac = lax.select(lax.eq(x, one), one, lax.select(lax.eq(x, lax.neg(one)), minus_one,
                                                          lax.sub(one, one)))
        acc = lax.select(lax.lt(y, _const(0, y)), frac, acc)
    return acc


negative = _unary("negative", lambda x: lax.sub(_const(0, x), x)
                  if dtypes.is_unsigned(x.dtype) else lax.neg(x))    # unsigned: wraps
positive = eager(lambda x: _promote(x)[0])


@eager
def absolute(x):
    (x,) = _promote(x)
    return x if dtypes.is_unsigned(x.dtype) or x.dtype == bool_ else lax.abs(x)


abs = absolute  # noqa: A001


@eager
def sign(x):
    """NumPy's ``sign``, elementwise: -1, 0 or 1 (+0.0 for both zeros, as NumPy and the
    Array API; ``lax.sign`` keeps -0.0, as JAX's), NaN for NaN.

    Example:
        >>> enp.sign(enp.asarray([-2.0, -0.0, 3.0]))
        Array([-1.,  0.,  1.], dtype=float32)
    """
    (x,) = _promote(x)
    y = lax.sign(x)
    if dtypes.is_float(x.dtype):
        y = lax.select(lax.eq(x, _const(0, x)), _const(0, x), y)
    return y


# The function of each op declared with NumPy names (``define(..., numpy=...)``: exp, sin,
# arcsin, cbrt, ...): the op on operands made inexact. A new op with a NumPy name needs no
# edit here.
for _op in _OPS.values():
    if _op.numpy:
        _f = _unary(_op.numpy[0], getattr(lax, _op.short_name), floats=True,
                    doc=f"{_op.doc} Integers and bools become the default float dtype.")
        for _n in _op.numpy:
            globals()[_n] = _f


def _real_only(name, x):
    """Refuse a complex operand of a function NumPy defines for real numbers only."""
    if dtypes.is_complex(x.dtype):
        _error(f"{name}: not defined for complex numbers ({x.dtype.name} operand), as in "
               "NumPy; apply it to enp.real(x) and enp.imag(x)")


def _rounding(name, fn):
    def f(x):
        (x,) = _promote(x)
        _real_only(name, x)
        return fn(x) if dtypes.is_float(x.dtype) else x
    f.__name__ = name
    return eager(f)


floor = _rounding("floor", lax.floor)
ceil = _rounding("ceil", lax.ceil)


@eager
def rint(x):
    """Round half to even; integers and bools become the default float dtype (float64 under
    x64, whatever their width), as in JAX."""
    (x,) = _promote(x)
    if dtypes.is_complex(x.dtype):        # each part, as NumPy's
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    if not dtypes.is_float(x.dtype):
        return _to(x, dtypes.default_float())
    return lax.round(x, "to_nearest_even")


@eager
def round(a, decimals=0):  # noqa: A001
    """Round half to even, to ``decimals`` decimals, as NumPy does (complex numbers: each
    part)."""
    (x,) = _promote(a)
    if dtypes.is_complex(x.dtype):
        return lax.complex(round(lax.real(x), decimals), round(lax.imag(x), decimals))
    if not dtypes.is_float(x.dtype):
        return x if decimals >= 0 or x.dtype == bool_ else _round_int(x, 10 ** -decimals)
    if decimals == 0:
        return lax.round(x, "to_nearest_even")
    half = x.dtype if x.dtype.itemsize < 4 else None
    if half is not None:        # scaled in float32, as JAX: 25.02 * 10 in float16 is 250.1
        x = lax.convert_element_type(x, np.float32)
    scale = _const(10.0 ** decimals, x)
    out = lax.div(lax.round(lax.mul(x, scale), "to_nearest_even"), scale)
    return out if half is None else lax.convert_element_type(out, half)


around = round


def _round_int(x, s: int):
    """An integer array rounded to a multiple of ``s``, half to even (NumPy's result; JAX
    refuses negative decimals for integers)."""
    if s > np.iinfo(x.dtype).max:
        return full_like(x, 0)
    q = floor_divide(x, s)
    r = lax.sub(x, lax.mul(q, _const(s, x)))    # 0 <= r < s
    sc = _const(s, x)
    rest = lax.sub(sc, r)       # r > s / 2 as r > s - r: r + r can overflow (int8: 75 + 75)
    odd = lax.ne(lax.rem(q, _const(2, q)), _const(0, q))
    up = lax.bitwise_or(lax.gt(r, rest), lax.bitwise_and(lax.eq(r, rest), odd))
    return lax.mul(lax.select(up, lax.add(q, _const(1, q)), q), sc)


@eager
def square(x):
    """``x * x``; bools become int32 (under x64 too), as in JAX."""
    (x,) = _numeric(*_promote(x))
    return lax.mul(x, x)


@eager
def reciprocal(x):
    """``1 / x``; integers and bools become the default float dtype, as in JAX."""
    (x,) = _promote_inexact(x)
    return lax.div(_const(1, x), x)


@eager
def conjugate(x):
    """The complex conjugate (``x`` itself for real dtypes).

    Example:
        >>> enp.conj(enp.array([1 + 2j, 3 - 1j]))
        Array([1.-2.j, 3.+1.j], dtype=complex64)
    """
    (x,) = _promote(x)
    return lax.conj(x) if dtypes.is_complex(x.dtype) else x


conj = conjugate


@eager
def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y``, with broadcasting (the 3-argument form)."""
    if x is None or y is None:
        _error("where(condition) without x and y needs a size= argument; it is not "
               "supported yet: use where(condition, x, y)")
    x, y = _promote(x, y)
    c, x, y = _broadcast(astype(condition, bool_), x, y, name="where")
    return lax.select(c, x, y)


@eager
def clip(a, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002
    """Limit values to ``[min, max]`` (the Array API's and JAX's names; NumPy's older
    ``a_min``/``a_max`` keywords too).

    Example:
        >>> enp.clip(enp.arange(5), min=1, max=3)
        Array([1, 1, 2, 3, 3], dtype=int32)
    """
    for old, new, name in ((a_min, min, "min"), (a_max, max, "max")):
        if old is not None and new is not None:
            _error(f"clip: pass a_{name} or {name}, not both")
    a_min = a_min if min is None else min
    a_max = a_max if max is None else max
    _ordered("clip", *(v for v in (a, a_min, a_max) if v is not None))
    x = a
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x


# --- reductions -----------------------------------------------------------------------------

def _reduction(x, axis, keepdims, lax_fn):
    x = _lift(x)
    axes = _axes(axis, x.ndim)
    out = lax_fn(x, axes)
    if keepdims:
        out = lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtypes.canonicalize(dtype)
    # Narrower than the default int: summed in it (its unsigned twin), as in JAX (x64: 64 bits)
    wide = dtypes.default_int()
    if x.dtype == bool_ or (dtypes.is_int(x.dtype) and x.dtype.itemsize < wide.itemsize):
        return np.dtype(f"uint{8 * wide.itemsize}") if dtypes.is_unsigned(x.dtype) else wide
    return x.dtype


def _argreduce(lax_fn):
    def f(a, axis=None, keepdims=False):
        x = _lift(a)
        if axis is None:
            x, ax = reshape(x, (-1,)), 0
        else:
            (ax,) = _axes(axis, x.ndim)
        _ordered(lax_fn.__name__, x)
        if x.shape[ax] == 0:
            _error(f"attempt to get {lax_fn.__name__} of an empty sequence")
        out = lax_fn(x, ax, dtypes.default_int())
        if keepdims:
            shape = [1] * len(a.shape) if axis is None else \
                [1 if i == ax else d for i, d in enumerate(x.shape)]
            out = lax.reshape(out, tuple(shape))
        return out
    f.__name__ = lax_fn.__name__
    f.__doc__ = f"NumPy's ``{lax_fn.__name__}``: index of the first extreme value."
    return eager(f)


argmax = _argreduce(lax.argmax)
argmin = _argreduce(lax.argmin)

# --- linear algebra -------------------------------------------------------------------------


def _product_operands(fun, x1, x2, precision, preferred_element_type):
    """The operands of a product promoted, then converted to ``preferred_element_type``
    (the products are computed and accumulated in it, as in JAX)."""
    lax._check_precision(fun, precision)
    a, b = _promote(x1, x2)
    if preferred_element_type is None:
        return a, b
    return _to(a, preferred_element_type), _to(b, preferred_element_type)


@eager
def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's rules (1-D operands, broadcast batch dimensions);
    ``preferred_element_type`` is the dtype the products are computed in and returned in.

    Example:
        >>> a = np.full((2, 2), 100, np.int8)
        >>> enp.matmul(a, a, preferred_element_type=np.int32)
        Array([[20000, 20000],
               [20000, 20000]], dtype=int32)
    """
    a, b = _product_operands("matmul", x1, x2, precision, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        _error("matmul: input operand does not have enough dimensions (scalars are not "
               "allowed; use multiply)")
    a1, b1 = a.ndim == 1, b.ndim == 1
    if (a1 and b.ndim <= 2) or (b1 and a.ndim <= 2):
        # vector @ matrix, matrix @ vector, vector @ vector: one contraction, no unit
        # dimensions (which would batch, under vmap, into a 3-D contraction).
        if a.shape[-1] != b.shape[0]:
            _error(f"matmul: contracting dimensions differ: {tuple(x1.shape)} @ "
                   f"{tuple(x2.shape)} ({a.shape[-1]} != {b.shape[0]})")
        return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    if a1:
        a = lax.reshape(a, (1,) + a.shape)
    if b1:
        b = lax.reshape(b, b.shape + (1,))
    if a.shape[-1] != b.shape[-2]:
        _error(f"matmul: contracting dimensions differ: {tuple(x1.shape)} @ "
               f"{tuple(x2.shape)} ({a.shape[-1]} != {b.shape[-2]})")
    if b.ndim == 2:       # weights shared by every batch row: one plain contraction
        out = lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    else:
        try:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            _error(f"matmul: batch dimensions of {tuple(x1.shape)} and {tuple(x2.shape)} do "
                   "not broadcast")
        a = broadcast_to(a, batch + a.shape[-2:])
        b = broadcast_to(b, batch + b.shape[-2:])
        nb = len(batch)
        out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))
    if a1:
        out = lax.reshape(out, out.shape[:-2] + out.shape[-1:])
    if b1:
        out = lax.reshape(out, out.shape[:-1])
    return out


@eager
def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's ``dot``: sum over the last axis of ``a`` and the second-to-last of ``b``
    (``preferred_element_type`` as in ``matmul``)."""
    x, y = _product_operands("dot", a, b, precision, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    yc = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[yc]:
        _error(f"dot: shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim "
               f"{x.ndim - 1}) != {y.shape[yc]} (dim {yc})")
    return lax.dot_general(x, y, (((x.ndim - 1,), (yc,)), ((), ())))


@eager
def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened ``a`` and ``b``, ``a`` conjugated (NumPy's).

    Example:
        >>> enp.vdot(enp.array([1j, 2]), enp.array([1j, 1]))
        Array(3.+0.j, dtype=complex64)
    """
    return dot(conjugate(ravel(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


@eager
def inner(a, b, *, precision=None, preferred_element_type=None):
    """The sum over the last axes of ``a`` and ``b`` (``preferred_element_type`` as in
    ``matmul``)."""
    x, y = _product_operands("inner", a, b, precision, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    return lax.dot_general(x, y, (((x.ndim - 1,), (y.ndim - 1,)), ((), ())))


@eager
def outer(a, b):
    x, y = _promote(ravel(a), ravel(b))
    return multiply(lax.reshape(x, (x.shape[0], 1)), lax.reshape(y, (1, y.shape[0])))


# --- shapes ---------------------------------------------------------------------------------

@eager
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Reshape; one dimension may be -1. ``order`` "C" reads and writes the elements row-major,
    "F" column-major ("A" is "C": ember arrays are row-major), as NumPy's ``reshape``.
    ``copy`` (the Array API's) has no effect: ember arrays never share a buffer. ``newshape``
    is NumPy's older name of ``shape``.

    Example:
        >>> enp.reshape(enp.arange(6), (2, 3), order="F")
        Array([[0, 2, 4],
               [1, 3, 5]], dtype=int32)
    """
    x = _lift(a)
    if shape is not None and newshape is not None:
        _error("reshape: pass shape or newshape, not both")
    newshape = _ints(shape if shape is not None else newshape)
    if _order(order, "reshape", ("C", "F", "A")):
        return transpose(reshape(transpose(x), tuple(reversed(newshape))))
    if builtins.sum(1 for d in newshape if d == -1) > 1:
        _error("reshape: can only specify one unknown dimension")
    if -1 in newshape:
        known = int(np.prod([d for d in newshape if d != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            _error(f"cannot reshape array of size {x.size} into shape {newshape}")
        newshape = tuple(x.size // known if d == -1 else d for d in newshape)
    if int(np.prod(newshape, dtype=np.int64)) != x.size:
        _error(f"cannot reshape array of size {x.size} into shape {newshape}")
    return lax.reshape(x, newshape)


@eager
def ravel(a, order="C"):
    """The elements as a 1-D array, row-major (``order`` "C", "A" or "K") or column-major
    ("F")."""
    return reshape(a, (-1,), "F" if _order(order, "ravel", ("C", "F", "A", "K")) else "C")


def _order(order, name, allowed) -> bool:
    """Whether ``order`` (one of ``allowed``) reads column-major."""
    if order not in allowed:
        _error(f"{name}: order must be one of {', '.join(map(repr, allowed))}, got {order!r}")
    return order == "F"


@eager
def transpose(a, axes=None):
    """Permute axes (reverse them by default)."""
    x = _lift(a)
    perm = tuple(reversed(range(x.ndim))) if axes is None else _axes(axes, x.ndim)
    if len(perm) != x.ndim:
        _error(f"transpose: axes {axes} don't match array of dimension {x.ndim}")
    return lax.transpose(x, perm)


@eager
def swapaxes(a, axis1, axis2):
    x = _lift(a)
    perm = list(range(x.ndim))
    i, j = _axes(axis1, x.ndim)[0], _axes(axis2, x.ndim)[0]
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(x, perm)


@eager
def squeeze(a, axis=None):
    """Remove axes of length one."""
    x = _lift(a)
    axes = tuple(i for i, d in enumerate(x.shape) if d == 1) if axis is None else \
        _axes(axis, x.ndim)
    for i in axes:
        if x.shape[i] != 1:
            _error(f"cannot select an axis to squeeze out which has size not equal to one "
                   f"(axis {i} of shape {x.shape})", ShapeValueError)
    return lax.reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


@eager
def expand_dims(a, axis):
    """Insert axes of length one at ``axis`` (an int or a tuple)."""
    x = _lift(a)
    axes = _ints(axis)
    ndim = x.ndim + len(axes)
    axes = _axes(axes, ndim)
    shape = iter(x.shape)
    return lax.reshape(x, tuple(1 if i in axes else next(shape) for i in range(ndim)))


@eager
def broadcast_to(array, shape):
    """Broadcast to ``shape`` with NumPy's rules."""
    x = _lift(array)
    shape = _ints(shape)
    if x.shape == shape:
        return x
    nd = len(shape) - x.ndim
    if nd < 0 or builtins.any(d != 1 and d != s for d, s in zip(x.shape, shape[nd:])):
        _error(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    return lax.broadcast_in_dim(x, shape, tuple(range(nd, len(shape))))


@eager
def broadcast_arrays(*args):
    return _broadcast(*[_lift(a) for a in args])


@eager
def concatenate(arrays, axis=0, *, dtype=None):
    """Join arrays along an existing axis (converted to ``dtype`` first, if given)."""
    if not len(arrays):
        _error("need at least one array to concatenate")
    xs = _promote(*arrays)
    if dtype is not None:
        xs = [_to(x, dtype) for x in xs]
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if xs[0].ndim == 0:
        _error("zero-dimensional arrays cannot be concatenated")
    (ax,) = _axes(axis, xs[0].ndim)
    for x in xs:
        if x.ndim != xs[0].ndim or builtins.any(
                x.shape[i] != xs[0].shape[i] for i in range(x.ndim) if i != ax):
            _error(f"concatenate: all input dimensions except axis {ax} must match, got "
                   f"shapes {[tuple(v.shape) for v in xs]}")
    return lax.concatenate(xs, ax)


@eager
def stack(arrays, axis=0, *, dtype=None):
    """Join arrays along a new axis (converted to ``dtype`` first, if given)."""
    xs = [_lift(a) for a in arrays]
    if not xs:
        _error("need at least one array to stack")
    if builtins.any(x.shape != xs[0].shape for x in xs):
        _error(f"all input arrays must have the same shape, got {[x.shape for x in xs]}")
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis, dtype=dtype)


@_placed
@eager
def astype(x, dtype, /, *, copy=True):
    """``x`` converted to ``dtype`` (the Array API's ``astype``: ``copy`` is accepted and has
    no effect, since ember arrays never share a buffer; ``device=`` puts the result there).

    Example:
        >>> enp.astype(enp.arange(3), enp.float32)
        Array([0., 1., 2.], dtype=float32)
    """
    return lax.convert_element_type(_lift(x), dtypes.canonicalize(dtype))


def shape(a):
    return tuple(np.shape(a)) if not hasattr(a, "shape") else tuple(a.shape)


def ndim(a):
    return len(shape(a))


def size(a):
    return int(np.prod(shape(a), dtype=np.int64))


def isscalar(x):
    return np.isscalar(x)


# --- indexing -------------------------------------------------------------------------------

@eager
def _getitem(x, idx):
    """Basic indexing: ints, slices (any step), None and Ellipsis."""
    x = _lift(x)
    idx = idx if isinstance(idx, tuple) else (idx,)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        _error("an index can only have a single ellipsis ('...')")
    n_real = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if n_real > x.ndim:
        _error(f"too many indices for array: array is {x.ndim}-dimensional, but {n_real} "
               "were indexed")
    if Ellipsis in [i for i in idx if not isinstance(i, Tracer | np.ndarray)]:
        k = [j for j, i in enumerate(idx) if i is Ellipsis][0]
        idx = idx[:k] + (slice(None),) * (x.ndim - n_real) + idx[k + 1:]
    else:
        idx = idx + (slice(None),) * (x.ndim - n_real)
    start, limit, strides, rev_dims, out_shape, dim = [], [], [], [], [], 0
    for i in idx:
        if i is None:
            out_shape.append(1)
            continue
        d = x.shape[dim]
        if isinstance(i, slice):
            s, e, st = i.indices(d)
            n = len(range(s, e, st))
            if st > 0:
                start.append(s), limit.append(s + (n - 1) * st + 1 if n else s)
                strides.append(st)
            else:
                # Reverse the dimension first, then take a positive-step slice of it: element
                # s - k*|st| of x is element (d-1-s) + k*|st| of the reversed dimension.
                first = d - 1 - s if n else 0
                start.append(first), limit.append(first + (n - 1) * -st + 1 if n else 0)
                strides.append(-st)
                rev_dims.append(dim)
            out_shape.append(n)
        elif isinstance(i, Tracer) or hasattr(i, "aval") or isinstance(i, np.ndarray | list):
            _error("indexing with arrays (advanced indexing) is not supported yet; use basic "
                   "indices (ints, slices, None, ...)")
        else:
            try:
                k = operator.index(i)
            except TypeError:
                _error(f"invalid index {i!r} of type {type(i).__name__}")
            if not -d <= k < d:
                raise IndexingError(f"index {k} is out of bounds for axis {dim} with size {d}")
            k %= d
            start.append(k), limit.append(k + 1), strides.append(1)
        dim += 1
    if rev_dims:
        x = lax.rev(x, rev_dims)
    y = lax.slice(x, start, limit, strides)
    return lax.reshape(y, tuple(out_shape))
