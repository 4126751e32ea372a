"""lax functions of the ops in ember/dialects/{math,indexing,bits,sort_scan}.py."""

from __future__ import annotations

__all__: list[str] = []

# --- bits ---
import numpy as _bits_np  # noqa: E402

from ember import dtypes as _bits_dtypes  # noqa: E402
from ember.frontend.eager import eager as _bits_eager  # noqa: E402
from ember.frontend.tracing import bind as _bits_bind  # noqa: E402
from ember.frontend.tracing import current_trace as _bits_current_trace  # noqa: E402

__all__ += ["shift_left", "shift_right_logical", "shift_right_arithmetic",
            "bitcast_convert_type", "population_count", "clz"]


def _bits_shift(op):
    def f(x, y):
        from ember.lax import _binary_operands
        weak = all(_bits_dtypes.dtype_and_weak(v)[1] for v in (x, y))
        x, y = _binary_operands(x, y)
        return _bits_bind(f"ember.{op}", x, y, _weak=weak)[0]
    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"Elementwise ``{op}`` of equal shapes and integer dtypes (the ``ember.{op}`` "
                 "op); shift amounts >= the bit width (read as unsigned) are defined, as in "
                 "``lax``: 0, or the sign fill for ``shift_right_arithmetic``.")
    return _bits_eager(f)


shift_left = _bits_shift("shift_left")
shift_right_logical = _bits_shift("shift_right_logical")
shift_right_arithmetic = _bits_shift("shift_right_arithmetic")


@_bits_eager
def population_count(x):
    """Elementwise number of set bits, in ``x``'s integer dtype."""
    x = _bits_current_trace().lift(x)
    return _bits_bind("ember.population_count", x, _weak=x.weak_type)[0]


@_bits_eager
def clz(x):
    """Elementwise count of leading zero bits, in ``x``'s integer dtype."""
    x = _bits_current_trace().lift(x)
    return _bits_bind("ember.clz", x, _weak=x.weak_type)[0]


@_bits_eager
def bitcast_convert_type(x, new_dtype):
    """Reinterpret the bits of ``x`` as ``new_dtype`` of the same bit width."""
    x = _bits_current_trace().lift(x)
    new_dtype = _bits_np.dtype(new_dtype)
    if x.dtype == new_dtype:
        return x
    return _bits_bind("ember.bitcast_convert_type", x, new_dtype=new_dtype)[0]


# --- sort_scan ---
from ember.frontend.eager import eager as _ss_eager  # noqa: E402
from ember.frontend.tracing import bind as _ss_bind  # noqa: E402
from ember.frontend.tracing import current_trace as _ss_current_trace  # noqa: E402

__all__ += ["sort", "sort_key_val", "cumsum", "cumprod", "cummax", "cummin"]


@_ss_eager
def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort ``operand`` (an array, or a sequence of arrays of one shape) along ``dimension``.

    The first ``num_keys`` operands are the keys, compared lexicographically; the others are
    permuted along. Ascending, stable (``is_stable`` is accepted for JAX compatibility), NaN
    after every number, -0.0 equal to 0.0. A sequence in gives a tuple out.

    Example:
        >>> keys, perm = ember.lax.sort((x, ember.lax.iota(np.int32, 4)), num_keys=1)
    """
    single = not isinstance(operand, list | tuple)
    lift = _ss_current_trace().lift
    xs = [lift(operand)] if single else [lift(x) for x in operand]
    if not xs:
        raise ValueError("sort needs at least one operand")
    ndim = xs[0].ndim
    dim = dimension + ndim if dimension < 0 and ndim else dimension
    # A complex value operand travels as its two parts (the sort moves words of at most 64
    # bits); complex keys have no order, which the op's rule reports.
    parts = [i >= num_keys and _bits_dtypes.is_complex(x.dtype) for i, x in enumerate(xs)]
    flat = []
    for x, split in zip(xs, parts):
        flat += [_ss_bind("ember.real", x)[0], _ss_bind("ember.imag", x)[0]] if split else [x]
    sorted_ = iter(_ss_bind("ember.sort", *flat, dimension=dim, num_keys=num_keys))
    outs = [_ss_bind("ember.complex", next(sorted_), next(sorted_))[0] if split
            else next(sorted_) for split in parts]
    outs = [o if not x.weak_type else _ss_weak(o) for o, x in zip(outs, xs)]
    return outs[0] if single else tuple(outs)


def _ss_weak(x):
    from ember.frontend.tracing import Tracer
    return Tracer(x._trace, x.value, x.aval._replace(weak_type=True), x.origin)


def sort_key_val(keys, values, dimension: int = -1):
    """Sort ``keys`` along ``dimension`` and permute ``values`` with them."""
    return sort((keys, values), dimension=dimension, num_keys=1)


def _ss_cumulative(name):
    def f(operand, axis: int = 0, reverse: bool = False):
        x = _ss_current_trace().lift(operand)
        ax = axis + x.ndim if axis < 0 else axis
        # Sums and products of halves accumulate in float32, as XLA's (in bfloat16 a running
        # sum of 0.1 stalls at 32), rounded once.
        half = name in ("cumsum", "cumprod") and _bits_dtypes.is_float(x.dtype) and \
            x.dtype.itemsize < 4
        if half:
            from ember.lax import convert_element_type
            x32 = convert_element_type(x, _bits_np.float32)
            out = _ss_bind(f"ember.{name}", x32, axis=ax, reverse=bool(reverse))[0]
            return convert_element_type(out, x.dtype, x.weak_type)
        return _ss_bind(f"ember.{name}", x, axis=ax, reverse=bool(reverse),
                        _weak=x.weak_type)[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Inclusive cumulative ``{name[3:]}`` of ``operand`` along ``axis`` (from the "
                 "end when ``reverse``); the ``ember.{name}`` op.".replace("{name}", name))
    return _ss_eager(f)


cumsum = _ss_cumulative("cumsum")
cumprod = _ss_cumulative("cumprod")
cummax = _ss_cumulative("cummax")
cummin = _ss_cumulative("cummin")

# --- math ---
from ember.frontend.eager import eager as _math_eager  # noqa: E402
from ember.frontend.tracing import bind as _math_bind  # noqa: E402
from ember.frontend.tracing import current_trace as _math_current_trace  # noqa: E402

_MATH_UNARY = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt",
               "exp2", "log2", "erfc", "erf_inv", "lgamma", "digamma", "signbit")
__all__ += list(_MATH_UNARY) + ["nextafter", "copysign"]


def _math_unary(name):
    def f(x):
        x = _math_current_trace().lift(x)
        return _math_bind(f"ember.{name}", x, _weak=x.weak_type and name != "signbit")[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` of a float array (the ``ember.{name}`` op)."
    return _math_eager(f)


def _math_binary(name):
    def f(x, y):
        from ember.lax import _binary_operands, _is_weak
        weak = _is_weak(x) and _is_weak(y)
        x, y = _binary_operands(x, y)
        return _math_bind(f"ember.{name}", x, y, _weak=weak)[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise ``{name}`` of float arrays of equal shape and dtype (the "
                 f"``ember.{name}`` op).")
    return _math_eager(f)


for _math_name in _MATH_UNARY:
    globals()[_math_name] = _math_unary(_math_name)
nextafter = _math_binary("nextafter")
copysign = _math_binary("copysign")

# --- indexing ---
from ember.frontend.eager import eager as _ix_eager  # noqa: E402
from ember.frontend.tracing import bind as _ix_bind  # noqa: E402
from ember.frontend.tracing import current_trace as _ix_current_trace  # noqa: E402

__all__ += ["gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
            "dynamic_slice", "dynamic_update_slice", "dynamic_index_in_dim"]


@_ix_eager
def gather(operand, indices, axes):
    """``ember.gather``: ``result[b..., r...] = operand`` at ``indices[b..., j]`` along
    ``axes[j]`` and ``r`` along the other dimensions. Out-of-bounds indices are clamped
    into ``[0, size - 1]`` (JAX's ``clip`` mode); negative indices do not wrap here."""
    lift = _ix_current_trace().lift
    x = lift(operand)
    return _ix_bind("ember.gather", x, lift(indices), axes=tuple(axes), _weak=x.weak_type)[0]


@_ix_eager
def scatter(operand, indices, updates, axes, kind: str = "set"):
    """``ember.scatter``: ``operand`` with ``updates[b..., r...]`` combined (``kind``: set,
    add, mul, min, max) into the element ``gather(operand, indices, axes)`` reads. Updates
    at an out-of-bounds (or negative) index are dropped, as in JAX; duplicates all apply."""
    lift = _ix_current_trace().lift
    x = lift(operand)
    return _ix_bind("ember.scatter", x, lift(indices), lift(updates), axes=tuple(axes),
                    kind=kind, _weak=x.weak_type)[0]


def scatter_add(operand, indices, updates, axes):
    """``scatter`` with ``kind="add"``: duplicate indices accumulate."""
    return scatter(operand, indices, updates, axes, "add")


def scatter_mul(operand, indices, updates, axes):
    """``scatter`` with ``kind="mul"``."""
    return scatter(operand, indices, updates, axes, "mul")


def scatter_min(operand, indices, updates, axes):
    """``scatter`` with ``kind="min"``."""
    return scatter(operand, indices, updates, axes, "min")


def scatter_max(operand, indices, updates, axes):
    """``scatter`` with ``kind="max"``."""
    return scatter(operand, indices, updates, axes, "max")


def _ix_starts(starts, shape, allow_negative_indices=True):
    """Start indices as scalar arrays; a negative one counts from the end of its dimension
    where ``allow_negative_indices`` (a bool, or one per dimension) says so, as in JAX, and
    is out of bounds elsewhere (then the op clamps it to 0)."""
    import numpy as np

    from ember import dtypes, lax
    lift = _ix_current_trace().lift
    if isinstance(allow_negative_indices, bool | np.bool_):
        allow = [bool(allow_negative_indices)] * len(shape)
    else:
        allow = [bool(a) for a in allow_negative_indices]
        if len(allow) != len(shape):
            raise TypeError(f"allow_negative_indices must be a bool or one bool per dimension "
                            f"({len(shape)}), got {allow_negative_indices!r}")
    out = []
    for s, d, negative in zip(starts, shape, allow):
        known = isinstance(s, int | np.integer) and not isinstance(s, bool)
        if known:
            if s < 0 and not negative:
                from ember.errors import IndexingError
                from ember.frontend.tracing import user_where
                raise IndexingError(f"start index {s} is out of bounds for a dimension of size "
                                    f"{d} with allow_negative_indices=False (as in JAX)\n  at "
                                    f"{user_where()}")
            s = int(s) + d if s < 0 else int(s)
        s = lift(s if hasattr(s, "dtype") and not isinstance(s, np.generic)
                 else np.asarray(s, dtype=np.int32))
        if s.shape != ():
            raise TypeError(f"start indices must be scalars, got shape {s.shape}")
        if negative and not known and dtypes.is_int(s.dtype) and \
                not dtypes.is_unsigned(s.dtype):
            if np.iinfo(s.dtype).max < d:     # s + d would wrap (an int8 start, d > 127)
                s = lax.convert_element_type(s, np.int32)
            zero = lax.convert_element_type(0, s.dtype)
            s = lax.select(lax.lt(s, zero), lax.add(s, lax.convert_element_type(d, s.dtype)), s)
        out.append(s)
    return out


@_ix_eager
def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """``lax.dynamic_slice``: a static-size slice at dynamic starts, each clamped so that
    the slice fits (``[0, dim - size]``); a negative start counts from the end, as in JAX,
    unless ``allow_negative_indices`` (a bool, or one per dimension) is False: then it is
    out of bounds, clamped to 0."""
    x = _ix_current_trace().lift(operand)
    starts = _ix_starts(start_indices, x.shape, allow_negative_indices)
    return _ix_bind("ember.dynamic_slice", x, *starts,
                    slice_sizes=tuple(int(s) for s in slice_sizes), _weak=x.weak_type)[0]


@_ix_eager
def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``lax.dynamic_update_slice``: ``operand`` with ``update`` written at dynamic starts,
    each clamped so that the update fits; negative starts as in :func:`dynamic_slice`."""
    lift = _ix_current_trace().lift
    x = lift(operand)
    u = lift(update)
    starts = _ix_starts(start_indices, x.shape, allow_negative_indices)
    return _ix_bind("ember.dynamic_update_slice", x, u, *starts, _weak=x.weak_type)[0]


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """``operand``'s slice at dynamic ``index`` along ``axis`` (clamped; a negative index
    counts from the end unless ``allow_negative_indices`` is False)."""
    from ember import lax
    x = _ix_current_trace().lift(operand) if _ix_current_trace() else operand
    axis = axis % x.ndim
    starts = [0] * x.ndim
    starts[axis] = index
    sizes = list(x.shape)
    sizes[axis] = 1
    y = dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)
    if keepdims:
        return y
    return lax.reshape(y, tuple(d for i, d in enumerate(y.shape) if i != axis))
