"""``jax.lax``'s convenience functions over the core ops: shapes (``expand_dims``,
``squeeze``, ``collapse``, ``broadcast``, ``split``, ...), the ``*_in_dim`` slicers, ``dot``,
``clamp``/``select_n``, ``integer_pow``, ``top_k``, generic reductions (``reduce``) and
``associative_scan``.

Example:
    >>> ember.lax.top_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)
    (Array([4., 3.], dtype=float32), Array([2, 0], dtype=int32))
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ember import dtypes, tree_util
from ember.backends.array import device_put
from ember.errors import TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, current_trace, user_where
from ember.lax import _bits, _indexing, _sort_scan
from ember.lax import _core as lax

__all__ = ["expand_dims", "squeeze", "collapse", "broadcast", "broadcast_to_rank",
           "broadcast_like", "full", "full_like", "empty", "tile", "split", "stack", "unstack",
           "slice_in_dim", "index_in_dim", "dynamic_slice_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "dot",
           "batch_matmul", "clamp", "select_n", "square", "reciprocal", "integer_pow",
           "top_k", "reduce", "reduce_xor", "associative_scan", "cumlogsumexp",
           "stop_gradient", "optimization_barrier"]


def _lift(x):
    return current_trace().lift(x)


def _error(fun, msg):
    raise TracingError(f"{fun}: {msg}\n  at {user_where()}")


def _axis(fun, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        _error(fun, f"axis {axis} is out of range for an operand of rank {ndim}")
    return axis % ndim


# --- shapes ----------------------------------------------------------------------------------

@eager
def expand_dims(array, dimensions):
    """Insert size-1 dimensions at ``dimensions`` (positions in the result).

    Example:
        >>> ember.lax.expand_dims(np.ones(3), (0, 2)).shape
        (1, 3, 1)
    """
    x = _lift(array)
    rank = x.ndim + len(dimensions)
    dims = sorted(_axis("expand_dims", d, rank) for d in dimensions)
    if len(set(dims)) != len(dims):
        _error("expand_dims", f"repeated dimensions {tuple(dimensions)}")
    shape = list(x.shape)
    for d in dims:
        shape.insert(d, 1)
    return lax.reshape(x, tuple(shape))


@eager
def squeeze(array, dimensions):
    """Remove the size-1 ``dimensions``.

    Example:
        >>> ember.lax.squeeze(np.ones((1, 3, 1)), (0, 2)).shape
        (3,)
    """
    x = _lift(array)
    dims = {_axis("squeeze", d, x.ndim) for d in dimensions}
    for d in dims:
        if x.shape[d] != 1:
            _error("squeeze", f"dimension {d} has size {x.shape[d]}, not 1 (shape {x.shape})")
    return lax.reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in dims))


@eager
def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions ``start_dimension`` up to ``stop_dimension`` (exclusive; None: the
    end) into one.

    Example:
        >>> ember.lax.collapse(np.ones((2, 3, 4)), 1).shape
        (2, 12)
    """
    x = _lift(operand)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(x.ndim)
    if hi < lo:
        _error("collapse", f"stop_dimension {stop_dimension} is before start_dimension "
                           f"{start_dimension}")
    merged = int(np.prod(x.shape[lo:hi], dtype=np.int64))
    return lax.reshape(x, x.shape[:lo] + (merged,) + x.shape[hi:])


@eager
def broadcast(operand, sizes):
    """Prepend dimensions of ``sizes``.

    Example:
        >>> ember.lax.broadcast(np.ones(3), (2,)).shape
        (2, 3)
    """
    x = _lift(operand)
    sizes = tuple(sizes)
    return lax.broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes)
                                                                + x.ndim)))


def broadcast_to_rank(x, rank):
    """Prepend size-1 dimensions up to ``rank``.

    Example:
        >>> ember.lax.broadcast_to_rank(np.ones(3), 3).shape
        (1, 1, 3)
    """
    ndim = np.ndim(x)
    return x if ndim >= rank else broadcast(x, (1,) * (rank - ndim))


def broadcast_like(arr, like_arr):
    """``arr`` broadcast (NumPy's rules) to ``like_arr``'s shape.

    Example:
        >>> ember.lax.broadcast_like(np.ones(3), np.zeros((2, 3))).shape
        (2, 3)
    """
    return _broadcast_to(_lift(arr), tuple(np.shape(like_arr)), "broadcast_like")


def _broadcast_to(x, shape, fun):
    """``x`` broadcast to ``shape`` by NumPy's rules (dimensions aligned on the right)."""
    nd = len(shape) - x.ndim
    if nd < 0 or builtins.any(d != 1 and d != s for d, s in zip(x.shape, shape[nd:])):
        _error(fun, f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    return lax.broadcast_in_dim(x, shape, tuple(range(nd, len(shape))))


def _shape(fun, shape):
    """``shape`` (an int or a sequence of ints) as a tuple, its dimensions non-negative."""
    try:
        dims = (operator.index(shape),) if np.ndim(shape) == 0 else \
            tuple(operator.index(d) for d in shape)
    except TypeError as e:
        if isinstance(e, TracingError):        # a traced dimension: ConcretizationError
            raise
        _error(fun, f"a shape must be an int or a sequence of ints, got {shape!r}")
    if builtins.any(d < 0 for d in dims):
        _error(fun, f"negative dimensions are not allowed, got shape {dims}")
    return dims


def _full(fun, shape, fill_value, dtype, weak):
    """``shape`` filled with ``fill_value`` as ``dtype`` (weakly typed if ``weak``): a
    concrete scalar outside a trace compiles nothing; an array is broadcast."""
    dt = dtypes.canonicalize(dtype)
    if np.ndim(fill_value) == 0 and not hasattr(fill_value, "aval") and \
            not isinstance(fill_value, Tracer):
        if current_trace() is None:
            out = device_put(np.full(shape, np.asarray(fill_value), dtype=dt))
            if weak:
                out.aval = out.aval._replace(weak_type=True)
            return out
        # (cast as NumPy's full casts: a Python int out of range wraps)
        value = np.asarray(fill_value).astype(dt)
        return lax.broadcast_in_dim(lax.convert_element_type(value, dt, weak), shape, ())
    return _full_array(fun, shape, fill_value, dt, weak)


@eager
def _full_array(fun, shape, fill_value, dtype, weak):
    return _broadcast_to(lax.convert_element_type(fill_value, dtype, weak), shape, fun)


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (its dtype unless ``dtype``).

    Example:
        >>> ember.lax.full((2,), 7, np.int8)
        Array([7, 7], dtype=int8)
    """
    dt, weak = dtypes.dtype_and_weak(fill_value)
    return _full("full", _shape("full", shape), fill_value, dt if dtype is None else dtype,
                 weak and dtype is None)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``.

    Example:
        >>> ember.lax.full_like(np.zeros(2, np.float16), 1.5)
        Array([1.5, 1.5], dtype=float16)
    """
    dt, weak = dtypes.dtype_and_weak(x)
    shape = np.shape(x) if shape is None else _shape("full_like", shape)
    return _full("full_like", shape, fill_value, dt if dtype is None else dtype,
                 weak and dtype is None)


def empty(shape, dtype):
    """An array of ``shape`` and ``dtype`` (zeros: XLA's contents are unspecified).

    Example:
        >>> ember.lax.empty((2,), np.float32).shape
        (2,)
    """
    return full(shape, 0, dtype)


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along dimension ``i`` (one per dimension).

    Example:
        >>> ember.lax.tile(np.arange(2), (3,))
        Array([0, 1, 0, 1, 0, 1], dtype=int32)
    """
    if len(reps) != np.ndim(operand):
        _error("tile", f"reps {tuple(reps)} must have one entry per dimension of the "
                       f"operand (rank {np.ndim(operand)})")
    return _tile(operand, tuple(operator.index(r) for r in reps))


@eager
def _tile(operand, reps):
    x = _lift(operand)
    if builtins.any(r < 0 for r in reps):
        _error("tile", f"reps must be non-negative, got {reps}")
    # Each dimension (r, s) broadcast from (s,), then merged: r copies of the row in turn.
    big = tuple(v for r, s in zip(reps, x.shape) for v in (r, s))
    y = lax.broadcast_in_dim(x, big, tuple(range(1, 2 * x.ndim, 2)))
    return lax.reshape(y, tuple(r * s for r, s in zip(reps, x.shape)))


@eager
def split(operand, sizes, axis=0):
    """Split ``operand`` along ``axis`` into pieces of ``sizes`` (which sum to its size).

    Example:
        >>> [p.shape for p in ember.lax.split(np.ones(5), (2, 3))]
        [(2,), (3,)]
    """
    x = _lift(operand)
    axis = _axis("split", axis, x.ndim)
    sizes = [operator.index(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        _error("split", f"sizes {tuple(sizes)} must be non-negative and sum to the size "
                        f"{x.shape[axis]} of axis {axis}")
    starts = np.cumsum([0] + sizes)
    return [slice_in_dim(x, int(a), int(b), axis=axis) for a, b in zip(starts, starts[1:])]


def stack(operands, axis=0):
    """``operands`` (one shape and dtype) stacked along a new ``axis``.

    Example:
        >>> ember.lax.stack([np.ones(2), np.zeros(2)], 1).shape
        (2, 2)
    """
    xs = [expand_dims(x, (axis,)) for x in operands]
    return lax.concatenate(xs, _axis("stack", axis, np.ndim(operands[0]) + 1))


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple.

    Example:
        >>> len(ember.lax.unstack(np.ones((3, 2))))
        3
    """
    axis = _axis("unstack", axis, np.ndim(x))
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(np.shape(x)[axis]))


# --- slicing along one dimension -----------------------------------------------------------

@eager
def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[start:limit:stride]`` along ``axis`` (Python's rules for None and negative
    bounds).

    Example:
        >>> ember.lax.slice_in_dim(np.arange(6), 1, None, 2)
        Array([1, 3, 5], dtype=int32)
    """
    x = _lift(operand)
    axis = _axis("slice_in_dim", axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = builtins.min(builtins.max(start + n if start < 0 else start, 0), n)
    limit = builtins.min(builtins.max(limit + n if limit < 0 else limit, start), n)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return lax.slice(x, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The slice at static ``index`` (negative counts from the end) along ``axis``.

    Example:
        >>> ember.lax.index_in_dim(np.ones((3, 2)), -1, keepdims=False).shape
        (2,)
    """
    axis = _axis("index_in_dim", axis, np.ndim(operand))
    n = np.shape(operand)[axis]
    index = operator.index(index)
    if not -n <= index < n:
        _error("index_in_dim", f"index {index} is out of bounds for axis {axis} of size {n}")
    index %= n
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _starts(x, start, axis):
    zero = np.zeros((), np.int32)
    return [start if d == axis else zero for d in range(np.ndim(x))]


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """``lax.dynamic_slice`` along one ``axis`` at a traced ``start_index`` (clamped into
    range; negative counts from the end unless ``allow_negative_indices`` is False).

    Example:
        >>> ember.lax.dynamic_slice_in_dim(np.arange(6), 4, 3)
        Array([3, 4, 5], dtype=int32)
    """
    axis = _axis("dynamic_slice_in_dim", axis, np.ndim(operand))
    sizes = list(np.shape(operand))
    sizes[axis] = slice_size
    return _indexing.dynamic_slice(operand, _starts(operand, start_index, axis), sizes,
                             allow_negative_indices=allow_negative_indices)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """``lax.dynamic_update_slice`` along one ``axis`` at a traced ``start_index`` (negative
    counts from the end unless ``allow_negative_indices`` is False).

    Example:
        >>> ember.lax.dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, 0)
        Array([0., 1., 1., 0.], dtype=float32)
    """
    axis = _axis("dynamic_update_slice_in_dim", axis, np.ndim(operand))
    return _indexing.dynamic_update_slice(operand, update, _starts(operand, start_index, axis),
                                    allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """Write ``update`` (with or without the size-1 ``axis``) at traced ``index`` along
    ``axis`` (negative counts from the end unless ``allow_negative_indices`` is False).

    Example:
        >>> ember.lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, 0)[1]
        Array([1., 1.], dtype=float32)
    """
    axis = _axis("dynamic_update_index_in_dim", axis, np.ndim(operand))
    if np.ndim(update) == np.ndim(operand) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# --- products, selection, powers -------------------------------------------------------------

@eager
def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Vector/matrix products of operands of rank 1 or 2 (the last axis of ``lhs`` with the
    first of ``rhs``), or ``dot_general`` with ``dimension_numbers``; ``precision`` and
    ``preferred_element_type`` as in ``dot_general``.

    Example:
        >>> ember.lax.dot(np.ones((2, 3)), np.ones(3))
        Array([3., 3.], dtype=float32)
    """
    lhs, rhs = _lift(lhs), _lift(rhs)
    if dimension_numbers is None:
        if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2):
            _error("dot", f"operands must have rank 1 or 2, got shapes {lhs.shape} and "
                          f"{rhs.shape}; use dot_general")
        if lhs.shape[-1] != rhs.shape[0]:
            _error("dot", f"incompatible shapes {lhs.shape} and {rhs.shape}")
        dimension_numbers = (((lhs.ndim - 1,), (0,)), ((), ()))
    return lax.dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


@eager
def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading batch dimensions, which must agree.

    Example:
        >>> ember.lax.batch_matmul(np.ones((4, 2, 3)), np.ones((4, 3, 5))).shape
        (4, 2, 5)
    """
    lhs, rhs = _lift(lhs), _lift(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2 or lhs.shape[:-2] != rhs.shape[:-2] \
            or lhs.shape[-1] != rhs.shape[-2]:
        _error("batch_matmul", f"operands must be stacks of matrices with the same batch "
                               f"dimensions, got shapes {lhs.shape} and {rhs.shape}")
    batch = tuple(range(lhs.ndim - 2))
    return lax.dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)))


def _like(v, x):
    v = _lift(v)
    return v if v.shape == x.shape else lax.broadcast_in_dim(v, x.shape, ())


@eager
def clamp(min, x, max):  # noqa: A002 (JAX's names)
    """``x`` limited to [``min``, ``max``] (scalars or ``x``'s shape).

    Example:
        >>> ember.lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    x = _lift(x)
    lo, x_, hi = lax._match_scalars(min, x, max)
    for name, v in (("min", lo), ("max", hi)):
        if v.shape not in ((), x.shape):
            _error("clamp", f"{name} must be a scalar or of x's shape {x.shape}, got "
                            f"{v.shape}")
    return lax.min(lax.max(x_, _like(lo, x)), _like(hi, x))


@eager
def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` bool (two cases) or int32, a scalar or of the
    cases' shape.

    Example:
        >>> ember.lax.select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0))
        Array([0., 2., 1.], dtype=float32)
    """
    if not cases:
        _error("select_n", "needs at least one case")
    cases = [_lift(c) for c in cases]
    which = _lift(which)
    if which.shape not in ((), cases[0].shape):
        _error("select_n", f"which must be a scalar or of the cases' shape {cases[0].shape}")
    which = _like(which, cases[0])
    if which.dtype == np.bool_:
        if len(cases) > 2:
            _error("select_n", "a bool which selects between two cases")
        return cases[0] if len(cases) == 1 else lax.select(which, cases[1], cases[0])
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        out = lax.select(lax.eq(which, _like(lax.convert_element_type(i, which.dtype), which)),
                         c, out)
    return out


@eager
def square(x):
    """``x * x``.

    Example:
        >>> ember.lax.square(np.float32(3))
        Array(9., dtype=float32)
    """
    x = _lift(x)
    return lax.mul(x, x)


@eager
def reciprocal(x):
    """``1 / x``.

    Example:
        >>> ember.lax.reciprocal(np.float32(4))
        Array(0.25, dtype=float32)
    """
    return integer_pow(x, -1)


@eager
def integer_pow(x, y):
    """``x ** y`` for a static Python int ``y``, by repeated multiplication (a negative ``y``
    needs a float ``x``).

    Example:
        >>> ember.lax.integer_pow(np.int32(3), 3)
        Array(27, dtype=int32)
    """
    x, y = _lift(x), operator.index(y)
    if y < 0 and not dtypes.is_float(x.dtype):
        _error("integer_pow", f"a negative exponent {y} needs a float operand, got {x.dtype}")
    if y == 0:
        return lax.broadcast_in_dim(lax.convert_element_type(1, x.dtype), x.shape, ())
    p, n = None, builtins.abs(y)
    while n:                # repeated squaring over the bits of |y|
        if n & 1:
            p = x if p is None else lax.mul(p, x)
        n >>= 1
        if n:
            x = lax.mul(x, x)
    return p if y > 0 else lax.div(_like(lax.convert_element_type(1, x.dtype), x), p)


# --- top_k, reductions, scans ---------------------------------------------------------------

@eager
def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` in descending order and their int32 indices;
    ties keep the lower index first, NaN counts as the largest.

    Example:
        >>> ember.lax.top_k(np.array([1.0, 3.0, 3.0, 2.0]), 2)
        (Array([3., 3.], dtype=float32), Array([1, 2], dtype=int32))
    """
    x = _lift(operand)
    if x.ndim == 0:
        _error("top_k", "the operand must have at least one dimension")
    axis = _axis("top_k", axis, x.ndim)
    k = operator.index(k)
    if not 0 <= k <= x.shape[axis]:
        _error("top_k", f"k={k} must be in [0, {x.shape[axis]}] (the size of axis {axis})")
    idx = lax.broadcasted_iota(np.int32, x.shape, axis)
    _, vals, perm = _sort_scan.sort((_descending_key(x), x, idx), dimension=axis, num_keys=1)
    return slice_in_dim(vals, 0, k, axis=axis), slice_in_dim(perm, 0, k, axis=axis)


def _descending_key(x):
    """An integer key whose ascending order is ``x``'s descending total order (floats: NaN
    first, -0.0 after 0.0), so a stable ascending sort keeps the lower index first."""
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.uint8)
    if dtypes.is_float(x.dtype):
        bits = 8 * np.dtype(x.dtype).itemsize
        i = _bits.bitcast_convert_type(x, np.dtype(f"int{bits}"))
        negative = _bits.shift_right_arithmetic(i, _like(lax.convert_element_type(
            bits - 1, i.dtype), i))
        low = _like(lax.convert_element_type(2 ** (bits - 1) - 1, i.dtype), i)
        x = lax.bitwise_xor(i, lax.bitwise_and(negative, low))   # ascending as ints
    return lax.bitwise_not(x)


def _monoids():
    return {lax.add: (lax.reduce_sum, 0), lax.mul: (lax.reduce_prod, 1),
            lax.max: (lax.reduce_max, None), lax.min: (lax.reduce_min, None),
            lax.bitwise_and: (lax.reduce_and, None), lax.bitwise_or: (lax.reduce_or, None)}


def _fold(computation, tree, xs):
    """Combine the entries of the leading axis of each ``xs`` by ``computation`` pairwise
    (log2 of the size steps, as a tree); the result has no leading axis."""
    while xs[0].shape[0] > 1:
        n = xs[0].shape[0]
        even = [slice_in_dim(x, 0, n - n % 2, 2) for x in xs]
        odd = [slice_in_dim(x, 1, n, 2) for x in xs]
        pair = tree_util.tree_leaves(computation(tree_util.tree_unflatten(tree, even),
                                                 tree_util.tree_unflatten(tree, odd)))
        pair = [lax.convert_element_type(p, x.dtype) for p, x in zip(pair, xs)]
        xs = pair if n % 2 == 0 else [lax.concatenate([p, slice_in_dim(x, n - 1, n)], 0)
                                      for p, x in zip(pair, xs)]
    return [squeeze(x, (0,)) for x in xs]


@eager
def reduce(operands, init_values, computation, dimensions):
    """Reduce ``operands`` (a pytree of arrays of one shape) over ``dimensions`` with
    ``computation`` (a function of two pytrees like ``init_values``, elementwise). ``lax``'s
    own reducers are used for ``lax.add/mul/max/min/bitwise_and/bitwise_or``; any other
    computation is applied as a tree of pairwise steps, which is exact for associative
    computations (the order of combination is unspecified, as in XLA).

    Example:
        >>> ember.lax.reduce(np.arange(5.0), 0.0, ember.lax.add, (0,))
        Array(10., dtype=float32)
    """
    xs, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        _error("reduce", "operands and init_values must have the same structure")
    xs = [_lift(x) for x in xs]
    inits = [lax.convert_element_type(_lift(v), x.dtype) for v, x in zip(inits, xs)]
    if any(x.shape != xs[0].shape for x in xs) or any(v.ndim for v in inits):
        _error("reduce", "the operands must have one shape and each init value must be a "
                         "scalar")
    dims = sorted({_axis("reduce", d, xs[0].ndim) for d in dimensions})
    rest = [d for d in range(xs[0].ndim) if d not in dims]
    monoid = _monoids().get(computation) if len(xs) == 1 else None
    if monoid is not None and (xs[0].dtype == np.bool_ or monoid[0] not in (
            lax.reduce_and, lax.reduce_or)):
        out = [monoid[0](xs[0], tuple(dims))]
    else:
        n = int(np.prod([xs[0].shape[d] for d in dims], dtype=np.int64))
        flat = [lax.reshape(lax.transpose(x, (*dims, *rest)),
                            (n, *(x.shape[d] for d in rest))) for x in xs]
        if n == 0:
            return tree_util.tree_unflatten(tree, [
                lax.broadcast_in_dim(v, flat[0].shape[1:], ()) for v in inits])
        out = _fold(computation, tree, flat)
    out = tree_util.tree_leaves(computation(
        tree_util.tree_unflatten(tree, [lax.broadcast_in_dim(v, out[0].shape, ())
                                        for v in inits]), tree_util.tree_unflatten(tree, out)))
    return tree_util.tree_unflatten(tree, [lax.convert_element_type(o, x.dtype)
                                           for o, x in zip(out, xs)])


def reduce_xor(operand, axes):
    """The bitwise xor of ``operand`` (bool or integer) over ``axes``.

    Example:
        >>> ember.lax.reduce_xor(np.array([1, 3, 4]), (0,))
        Array(6, dtype=int32)
    """
    return reduce(operand, np.zeros((), np.dtype(getattr(operand, "dtype", np.int32))),
                  lax.bitwise_xor, axes)


def _interleave(a, b, axis):
    """a0 b0 a1 b1 ... along ``axis`` (``a`` as long as ``b`` or one longer)."""
    nb = b.shape[axis]
    pairs = lax.concatenate([expand_dims(slice_in_dim(a, 0, nb, axis=axis), (axis + 1,)),
                             expand_dims(b, (axis + 1,))], axis + 1)
    out = collapse(pairs, axis, axis + 2)
    if a.shape[axis] > nb:
        out = lax.concatenate([out, slice_in_dim(a, nb, nb + 1, axis=axis)], axis)
    return out


@eager
def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of ``elems`` (a pytree of arrays with one size along ``axis``) with the
    associative ``fn`` in O(log n) parallel steps (JAX's odd/even recursion): entry ``i`` is
    ``fn(... fn(elems[0], elems[1]) ..., elems[i])``; with ``reverse``, the scan of the
    reversed elements, reversed (``fn(... fn(elems[n-1], elems[n-2]) ..., elems[i])``, as
    JAX's).

    Example:
        >>> ember.lax.associative_scan(ember.lax.add, np.arange(5))
        Array([ 0,  1,  3,  6, 10], dtype=int32)
    """
    xs, tree = tree_util.tree_flatten(elems)
    xs = [_lift(x) for x in xs]
    if not xs:
        _error("associative_scan", "elems has no arrays")
    axis = _axis("associative_scan", axis, xs[0].ndim)
    n = xs[0].shape[axis]
    if any(x.shape[axis] != n for x in xs):
        _error("associative_scan", f"every array of elems needs size {n} along axis {axis}")
    if reverse:
        xs = [lax.rev(x, (axis,)) for x in xs]

    # With reverse, as JAX: the scan of the reversed elements, reversed (fn then sees the
    # later element first).
    def combine(a, b):
        out = tree_util.tree_leaves(fn(tree_util.tree_unflatten(tree, a),
                                       tree_util.tree_unflatten(tree, b)))
        return [lax.convert_element_type(o, x.dtype) for o, x in zip(out, a)]

    def scan(xs):
        n = xs[0].shape[axis]
        if n < 2:
            return xs
        pairs = combine([slice_in_dim(x, 0, n - 1, 2, axis) for x in xs],
                        [slice_in_dim(x, 1, n, 2, axis) for x in xs])
        odd = scan(pairs)                          # prefixes ending at 1, 3, 5, ...
        m = odd[0].shape[axis]
        rest = combine([slice_in_dim(o, 0, m - 1 if n % 2 == 0 else m, axis=axis)
                        for o in odd], [slice_in_dim(x, 2, n, 2, axis) for x in xs])
        even = [lax.concatenate([slice_in_dim(x, 0, 1, axis=axis), r], axis)
                for x, r in zip(xs, rest)]           # prefixes ending at 0, 2, 4, ...
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(xs)
    if reverse:
        out = [lax.rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)


@eager
def cumlogsumexp(operand, axis=0, reverse=False):
    """Cumulative ``log(sum(exp(x)))`` along ``axis``, stable at any scale (a scan of
    ``logaddexp``).

    Example:
        >>> ember.lax.cumlogsumexp(np.array([0.0, 0.0]))
        Array([0.       , 0.6931472], dtype=float32)
    """
    x = _lift(operand)
    if not dtypes.is_float(x.dtype):
        x = lax.convert_element_type(x, dtypes.to_inexact(x.dtype), x.weak_type)
    return associative_scan(_logaddexp, x, reverse=reverse, axis=axis)


def _logaddexp(x, y):
    """``log(exp(x) + exp(y))`` of one dtype without overflow (NaNs and infinities as
    NumPy's); halves computed in float32, where the sum does not cancel against the max."""
    dt = x.dtype
    if dt.itemsize < 4:
        x, y = lax.convert_element_type(x, np.float32), lax.convert_element_type(y, np.float32)
    amax, delta = lax.max(x, y), lax.sub(x, y)
    r = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta)))))
    return lax.convert_element_type(lax.select(lax.ne(delta, delta), lax.add(x, y), r), dt)


def stop_gradient(x):
    """``x`` (a pytree of arrays) with a zero derivative, as ``jax.lax.stop_gradient``.

    Example:
        >>> ember.grad(lambda x: x * ember.lax.stop_gradient(x))(np.float32(3))
        Array(3., dtype=float32)
    """
    from ember.frontend.autodiff import stop_gradient as _stop
    return _stop(x)


def optimization_barrier(operand, /):
    """``operand`` unchanged (a scheduling hint in XLA; kept for JAX code).

    Example:
        >>> ember.lax.optimization_barrier((1, 2))
        (1, 2)
    """
    return operand
