"""The rest of ``jax.numpy``'s API: array-API spellings, index helpers, insertion and deletion,
histograms, set operations, partitioning, bit packing, polynomials, window functions and
dtype queries.

Everything is composed from existing ember.numpy and ember.lax functions. Functions whose
result size depends on the data (``compress``, ``extract``, ``delete`` with an index array,
the set operations) follow JAX: outside ``jit`` the size is computed on the host, under
``jit`` a static ``size=`` (with ``fill_value=``) is required. ``fill_diagonal``, ``put`` and
``place`` are functional (``inplace=False``, as in JAX). Host-side helpers (``mgrid``,
``ogrid``, ``r_``, ``c_``, ``s_``, ``index_exp``, dtype queries and the abstract dtype
classes) build their results on the host.

Example:
    >>> import ember.numpy as enp
    >>> enp.vecdot(enp.array([[1., 2.], [3., 4.]]), enp.array([1., 1.]))
    Array([3., 7.], dtype=float32)
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from collections import namedtuple

import numpy as np

from ember import dtypes, lax
from ember.errors import ArgumentError, ConcretizationError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, user_where
from ember.numpy import _axes, _const, _error, _lift, _promote, _promote_inexact, _to
from ember.numpy._reductions import _compact, _fill, _need_size, _take_first
from ember.numpy._shape import _enp, _slice_axis, _static_take

__all__ = [
    # array API spellings and linear algebra
    "vecdot", "vecmat", "matvec", "matrix_transpose", "permute_dims", "concat", "unstack",
    "bitwise_invert",
    # selection, insertion, deletion
    "compress", "extract", "delete", "insert", "choose", "block", "diagflat", "resize",
    "fill_diagonal", "put", "place", "piecewise",
    # index helpers
    "diag_indices", "diag_indices_from", "tril_indices_from", "triu_indices_from", "ix_",
    "mgrid", "ogrid", "r_", "c_", "s_", "index_exp",
    # histograms, sorting, differences
    "histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "partition",
    "argpartition", "lexsort", "gradient", "unwrap", "spacing",
    # sets
    "setdiff1d", "union1d", "intersect1d", "setxor1d", "unique_all", "unique_counts",
    "unique_inverse", "unique_values",
    # bits
    "packbits", "unpackbits",
    # functional helpers
    "apply_along_axis", "apply_over_axes", "vectorize", "fromfunction",
    # polynomials and windows
    "poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyfit",
    "bartlett", "blackman", "hamming", "hanning", "kaiser",
    # dtypes
    "isdtype", "issubdtype", "iscomplexobj", "isrealobj", "isreal", "iscomplex", "dtype",
    "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
    "complexfloating", "character", "flexible",
]


def _arg_error(msg: str):
    raise ArgumentError(f"{msg}\n  at {user_where()}")


def _is_concrete(*xs) -> bool:
    return not builtins.any(isinstance(x, Tracer) for x in xs)


def _static_int(v, what, name) -> int:
    if isinstance(v, Tracer):
        raise ConcretizationError(f"{name}: {what} must be a static integer, got a traced "
                                  f"value; pass a Python int\n  at {user_where()}")
    try:
        return operator.index(v)
    except TypeError:
        _arg_error(f"{name}: {what} must be an integer, got {v!r}")


def _sized(name, size, args, host_size):
    """The static result size: ``size`` if given, else computed on the host from concrete
    ``args`` (``host_size(*numpy_args)``); traced data without ``size`` is an error."""
    if size is not None:
        size = _static_int(size, "size", name)
        if size < 0:
            _arg_error(f"{name}: size must be non-negative, got {size}")
        return size
    if not _is_concrete(*args):
        _need_size(name, None)
    return int(host_size(*(np.asarray(a) for a in args)))


def _default_int():
    return dtypes.default_int()


# --- array API spellings ---------------------------------------------------------------------

@eager
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of vectors along ``axis`` (broadcasting the other dimensions), ``x1``
    conjugated (the Array API's and NumPy's).

    Example:
        >>> enp.vecdot(enp.ones((2, 3)), enp.arange(3.))
        Array([3., 3.], dtype=float32)
    """
    enp = _enp()
    a, b = enp._product_operands("vecdot", x1, x2, precision, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        _error("vecdot: x1 and x2 must be at least 1-dimensional")
    a = enp.conjugate(a)
    (ax1,) = _axes(axis, a.ndim)
    (ax2,) = _axes(axis, b.ndim)
    if a.shape[ax1] != b.shape[ax2]:
        _error(f"vecdot: axes must match; got shapes {tuple(a.shape)} and {tuple(b.shape)} "
               f"with axis={axis}")
    a, b = enp.moveaxis(a, ax1, -1), enp.moveaxis(b, ax2, -1)
    out = enp.matmul(enp.expand_dims(a, -2), enp.expand_dims(b, -1))
    return lax.reshape(out, tuple(out.shape[:-2]))


@eager
def matvec(x1, x2, /):
    """The matrix-vector product of the stacks ``x1`` (..., m, n) and ``x2`` (..., n).

    Example:
        >>> enp.matvec(enp.eye(2), enp.array([1., 2.]))
        Array([1., 2.], dtype=float32)
    """
    enp = _enp()
    a, b = _lift(x1), _lift(x2)
    if a.ndim < 2 or b.ndim < 1:
        _error(f"matvec: x1 must be at least 2-D and x2 at least 1-D, got shapes "
               f"{tuple(a.shape)} and {tuple(b.shape)}")
    out = enp.matmul(a, enp.expand_dims(b, -1))
    return lax.reshape(out, tuple(out.shape[:-1]))


@eager
def vecmat(x1, x2, /):
    """The vector-matrix product of the stacks ``x1`` (..., m) and ``x2`` (..., m, n),
    ``x1`` conjugated (NumPy's).

    Example:
        >>> enp.vecmat(enp.array([1., 2.]), enp.eye(2))
        Array([1., 2.], dtype=float32)
    """
    enp = _enp()
    a, b = _lift(x1), _lift(x2)
    if a.ndim < 1 or b.ndim < 2:
        _error(f"vecmat: x1 must be at least 1-D and x2 at least 2-D, got shapes "
               f"{tuple(a.shape)} and {tuple(b.shape)}")
    out = enp.matmul(enp.expand_dims(enp.conjugate(a), -2), b)
    return lax.reshape(out, tuple(out.shape[:-2]) + (out.shape[-1],))


@eager
def matrix_transpose(x, /):
    """Swap the last two axes of ``x`` (at least 2-D).

    Example:
        >>> enp.matrix_transpose(enp.ones((5, 2, 3))).shape
        (5, 3, 2)
    """
    a = _lift(x)
    if a.ndim < 2:
        _error(f"matrix_transpose: x must be at least 2-dimensional, got shape "
               f"{tuple(a.shape)}")
    return _enp().swapaxes(a, -1, -2)


@eager
def permute_dims(a, /, axes):
    """``transpose(a, axes)``, the array API's name.

    Example:
        >>> enp.permute_dims(enp.ones((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    return _enp().transpose(a, axes)


@eager
def concat(arrays, /, *, axis=0):
    """``concatenate(arrays, axis)``, the array API's name (``axis=None`` flattens first).

    Example:
        >>> enp.concat([enp.zeros(2), enp.ones(1)])
        Array([0., 0., 1.], dtype=float32)
    """
    if axis is None:
        return _enp().concatenate([_enp().ravel(x) for x in arrays])
    return _enp().concatenate(arrays, axis=axis)


@eager
def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple.

    Example:
        >>> enp.unstack(enp.arange(4).reshape(2, 2))
        (Array([0, 1], dtype=int32), Array([2, 3], dtype=int32))
    """
    a = _lift(x)
    if a.ndim == 0:
        _error("unstack: x must be at least 1-dimensional, got a 0-d array")
    (ax,) = _axes(axis, a.ndim)
    rest = tuple(d for i, d in enumerate(a.shape) if i != ax)
    return tuple(lax.reshape(_slice_axis(a, ax, i, i + 1), rest) for i in range(a.shape[ax]))


@eager
def bitwise_invert(x, /):
    """``invert(x)``: bitwise NOT of integers, logical NOT of bools.

    Example:
        >>> enp.bitwise_invert(enp.array([0, 1], dtype=enp.uint8))
        Array([255, 254], dtype=uint8)
    """
    return _enp().invert(x)


# --- selection, insertion, deletion ----------------------------------------------------------

def _condition_1d(name, condition):
    c = condition if isinstance(condition, Tracer) else np.asarray(condition)
    if c.ndim != 1:
        _error(f"{name}: condition must be a 1-D array, got shape {tuple(c.shape)}")
    return c


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (the flattened ``a`` if None) where the 1-D
    ``condition`` is true. Under ``jit`` a static ``size=`` is required: the result is cut
    or padded with ``fill_value`` to ``size`` slices (JAX's semantics).

    Example:
        >>> enp.compress(enp.array([True, False, True]), enp.arange(3) * 10)
        Array([ 0, 20], dtype=int32)
    """
    if out is not None:
        _arg_error("compress: out= is not supported (ember arrays are immutable)")
    c = _condition_1d("compress", condition)
    shape = np.shape(a) if not isinstance(a, Tracer) else tuple(a.shape)
    if axis is None:
        n = int(np.prod(shape))
    else:
        (ax,) = _axes(axis, len(shape))
        n = shape[ax]
    if _is_concrete(condition) and np.asarray(c)[n:].astype(np.bool_).any():
        _error("compress: condition contains entries that are out of bounds of a's axis")
    size = _sized("compress", size, (condition,),
                  lambda h: np.count_nonzero(h.astype(np.bool_)[:n]))
    if size > n:
        _error(f"compress: size must not be greater than the size of the array axis; got "
               f"size={size} for a.shape[axis]={n}")
    return _compress(condition, a, axis, size, fill_value)


@eager
def _compress(condition, a, axis, size, fill_value):
    enp = _enp()
    c = enp.astype(condition, np.bool_)
    x = enp.ravel(a) if axis is None else enp.moveaxis(a, axis, 0)
    n = builtins.min(x.shape[0], c.shape[0])
    x, c = _slice_axis(x, 0, 0, n), _slice_axis(c, 0, 0, n)
    mask = lax.broadcast_in_dim(c, tuple(x.shape), (0,))
    x = lax.select(mask, x, lax.broadcast_in_dim(_to(fill_value, x.dtype), x.shape, ()))
    (rows,) = _compact(c, [lax.iota(np.int32, n)], n)
    out = enp.take(x, lax.slice(rows, (0,), (size,)), axis=0)
    return out if axis is None else enp.moveaxis(out, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened ``arr`` where the flattened ``condition`` is true
    (``compress(ravel(condition), ravel(arr))``); ``size=``/``fill_value=`` as there.

    Example:
        >>> enp.extract(enp.arange(4) % 2 == 1, enp.arange(4))
        Array([1, 3], dtype=int32)
    """
    return compress(_enp().ravel(condition), _enp().ravel(arr), size=size,
                    fill_value=fill_value)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` (an int, a slice, an integer array or a boolean
    mask) along ``axis`` (the flattened ``arr`` if None). As in JAX, a traced index array
    needs ``assume_unique_indices=True``; otherwise ``obj`` must be concrete.

    Example:
        >>> enp.delete(enp.arange(5), enp.array([0, 3]))
        Array([1, 2, 4], dtype=int32)
    """
    enp = _enp()
    x = enp.ravel(arr) if axis is None else enp.asarray(arr)
    (ax,) = _axes(0 if axis is None else axis, x.ndim)
    n = x.shape[ax]
    if isinstance(obj, slice):
        return _delete_static(x, np.arange(n)[obj], ax)
    if not isinstance(obj, Tracer) and np.ndim(obj) == 0 and \
            np.asarray(obj).dtype.kind in "iu":
        i = operator.index(obj)
        if not -n <= i < n:
            _error(f"delete: index {i} is out of bounds for axis {ax} with size {n}")
        return _delete_static(x, np.array([i % n]), ax)
    dt = np.dtype(obj.dtype) if hasattr(obj, "dtype") else np.asarray(obj).dtype
    if dt.kind in "iu" and assume_unique_indices:
        return _delete_unique(x, obj, ax)
    if isinstance(obj, Tracer):
        raise ConcretizationError(
            "delete: a traced index array needs assume_unique_indices=True (or pass obj as a "
            f"concrete array or a slice)\n  at {user_where()}")
    h = np.asarray(obj)
    if h.dtype == np.bool_:
        if h.shape != (n,):
            _error(f"delete: a boolean obj must be 1-D with the length {n} of the axis, got "
                   f"shape {h.shape}")
        return _delete_static(x, np.flatnonzero(h), ax)
    if h.dtype.kind not in "iu":
        _error(f"delete: obj must be integer or bool, got dtype {h.dtype}")
    if h.size and (h.min() < -n or h.max() >= n):
        _error(f"delete: an index in obj is out of bounds for axis {ax} with size {n}")
    return _delete_static(x, h.ravel() % n if n else h.ravel(), ax)


def _delete_static(x, drop, ax):
    keep = np.setdiff1d(np.arange(x.shape[ax]), drop)
    return _eager_static_take(x, tuple(int(i) for i in keep), ax)


@eager
def _eager_static_take(x, keep, ax):
    return _static_take(_lift(x), keep, ax)


@eager
def _delete_unique(x, obj, ax):
    enp = _enp()
    n = x.shape[ax]
    o = enp.ravel(obj)
    o = enp.clip(enp.where(o < 0, o + n, o), 0, n)
    o = enp.sort(o)
    o = o - enp.arange(o.shape[0], dtype=o.dtype)
    i = enp.arange(n - o.shape[0], dtype=o.dtype)
    i = i + enp.sum(i[None, :] >= o[:, None], axis=0, dtype=o.dtype)
    return enp.take(x, i, axis=ax)


@eager
def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the index or indices ``obj`` (an int, a slice
    or a 1-D integer array; traced indices work) along ``axis`` (flattened if None).

    Example:
        >>> enp.insert(enp.arange(3), 1, 9)
        Array([0, 9, 1, 2], dtype=int32)
    """
    enp = _enp()
    a = enp.ravel(arr) if axis is None else _lift(arr)
    (ax,) = _axes(0 if axis is None else axis, a.ndim)
    n_input = a.shape[ax]
    if isinstance(obj, slice):
        idx = enp.asarray(np.arange(*obj.indices(n_input)).astype(_default_int()))
    else:
        idx = _lift(obj)
    if idx.ndim > 1:
        _error(f"insert: obj must be a slice, a 1-D array or a scalar, got shape "
               f"{tuple(idx.shape)}")
    if not dtypes.is_int(idx.dtype):
        if idx.size == 0:
            idx = enp.astype(idx, _default_int())
        else:
            _error(f"insert: the index array must be integer typed, got {idx.dtype}")
    v = enp.astype(values, a.dtype)
    v = lax.reshape(v, (1,) * builtins.max(a.ndim - v.ndim, 0) + tuple(v.shape))
    if idx.size == 1:
        index = lax.reshape(idx, ())
        if idx.ndim == 0:
            v = enp.moveaxis(v, 0, ax)
        idx = lax.broadcast_in_dim(index, (v.shape[ax],), ())
    n_insert = np.broadcast_shapes(tuple(idx.shape), (v.shape[ax],))[0]
    idx = enp.broadcast_to(idx, (n_insert,))
    out_shape = list(a.shape)
    out_shape[ax] += n_insert
    out = enp.zeros(tuple(out_shape), a.dtype)
    idx = enp.clip(enp.where(idx < 0, idx + n_input, idx), 0, n_input)
    values_ind = idx.at[enp.argsort(idx)].add(enp.arange(n_insert, dtype=idx.dtype))
    arr_mask = enp.ones(n_input + n_insert, dtype=np.bool_).at[values_ind].set(False)
    (arr_ind,) = enp.nonzero(arr_mask, size=n_input)
    pre = (slice(None),) * ax
    vshape = list(out_shape)
    vshape[ax] = n_insert
    out = out.at[pre + (values_ind,)].set(enp.broadcast_to(v, tuple(vshape)))
    return out.at[pre + (arr_ind,)].set(a)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for each index ``i`` of the broadcast arrays. ``mode``: "raise"
    (needs a concrete ``a``, as in JAX), "wrap" or "clip".

    Example:
        >>> enp.choose(enp.array([0, 1, 0]), [enp.zeros(3), enp.ones(3)])
        Array([0., 1., 0.], dtype=float32)
    """
    if out is not None:
        _arg_error("choose: out= is not supported (ember arrays are immutable)")
    if mode not in ("raise", "wrap", "clip"):
        _arg_error(f"choose: mode={mode!r} not understood; use 'raise', 'wrap' or 'clip'")
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ConcretizationError("choose: mode='raise' needs a concrete index array; "
                                      f"under jit use mode='wrap' or 'clip'\n  at "
                                      f"{user_where()}")
        h = np.asarray(a)
        if h.dtype.kind in "iu" and h.size and (h.min() < 0 or h.max() >= n):
            _error(f"choose: invalid entry in the index array (must be in [0, {n}))")
    return _choose(a, tuple(choices), mode)


@eager
def _choose(a, choices, mode):
    enp = _enp()
    idx = _lift(a)
    if not dtypes.is_int(idx.dtype):
        _error(f"choose: the index array must be integer typed, got {idx.dtype}")
    n = len(choices)
    if mode == "wrap":
        idx = enp.remainder(idx, n)
    elif mode == "clip":
        idx = enp.clip(idx, 0, n - 1)
    idx, *cs = enp.broadcast_arrays(idx, *_promote(*choices))
    stacked = enp.stack(cs)
    return enp.take_along_axis(stacked, enp.expand_dims(idx, 0), axis=0)[0]


def _block_depth(x, name="block"):
    if isinstance(x, tuple):
        _arg_error(f"{name}: arrays is a tuple; only lists may be used to arrange blocks")
    if not isinstance(x, list):
        return 0, np.ndim(x) if not isinstance(x, Tracer) else x.ndim
    if not x:
        _error(f"{name}: lists cannot be empty")
    depths = [_block_depth(e, name) for e in x]
    if len({d for d, _ in depths}) > 1:
        _error(f"{name}: list depths are mismatched; every leaf must be nested equally deep")
    return depths[0][0] + 1, builtins.max(nd for _, nd in depths)


@eager
def block(arrays):
    """Assemble an array from nested lists of blocks: the innermost lists are joined along
    the last axis, the next ones along the second-to-last, and so on.

    Example:
        >>> enp.block([[enp.eye(2), enp.zeros((2, 1))], [enp.ones((1, 3))]]).shape
        (3, 3)
    """
    enp = _enp()
    depth, leaf_nd = _block_depth(arrays)
    nd = builtins.max(depth, leaf_nd)

    def build(x, level):
        if isinstance(x, list):
            return enp.concatenate([build(e, level + 1) for e in x], axis=level - depth)
        x = enp.asarray(x)
        return lax.reshape(x, (1,) * (nd - x.ndim) + tuple(x.shape))

    return build(arrays, 0)


@eager
def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal.

    Example:
        >>> enp.diagflat(enp.array([[1, 2]]))
        Array([[1, 0], [0, 2]], dtype=int32)
    """
    return _enp().diag(_enp().ravel(v), k)


def _tile_to_size(x, size):
    """The 1-D ``x`` repeated and cut to ``size`` elements."""
    reps = -(-size // x.shape[0])
    return lax.slice(_enp().tile(x, reps), (0,), (size,)) if reps != 1 or size != \
        x.shape[0] else x


def resize(a, new_shape):
    """An array of ``new_shape`` filled with the flattened ``a``, repeated as needed (zeros
    when ``a`` is empty).

    Example:
        >>> enp.resize(enp.array([1, 2, 3]), (2, 2))
        Array([[1, 2], [3, 1]], dtype=int32)
    """
    shape = (new_shape,) if np.ndim(new_shape) == 0 and not isinstance(
        new_shape, tuple | list) else tuple(new_shape)
    shape = tuple(_static_int(d, "new_shape", "resize") for d in shape)
    if builtins.any(d < 0 for d in shape):
        _error(f"resize: all elements of new_shape must be non-negative, got {shape}")
    return _resize(a, shape)


@eager
def _resize(a, shape):
    enp = _enp()
    x = enp.ravel(a)
    size = math.prod(shape)
    if x.size == 0 or size == 0:
        return enp.zeros(shape, x.dtype)
    return lax.reshape(_tile_to_size(x, size), shape)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal (``a[i, i, ..., i]``) set to ``val`` (a scalar, or an
    array repeated along the diagonal). Functional, as in JAX: pass ``inplace=False``.

    Example:
        >>> enp.fill_diagonal(enp.zeros((2, 2)), 5.0, inplace=False)
        Array([[5., 0.], [0., 5.]], dtype=float32)
    """
    if inplace:
        _arg_error("fill_diagonal: ember arrays are immutable; pass inplace=False to get the "
                   "updated array back")
    if wrap:
        _arg_error("fill_diagonal: wrap=True is not supported (as in JAX); use wrap=False")
    return _fill_diagonal(a, val)


@eager
def _fill_diagonal(a, val):
    enp = _enp()
    x, v = _lift(a), enp.asarray(val)
    if x.ndim < 2:
        _error(f"fill_diagonal: the array must be at least 2-D, got shape {tuple(x.shape)}")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        _error(f"fill_diagonal: all dimensions of the array must be equal, got shape "
               f"{tuple(x.shape)}")
    n = builtins.min(x.shape)
    idx = (np.arange(n),) * x.ndim
    if v.ndim:
        v = _tile_to_size(enp.ravel(v), n) if v.size else v
    return x.at[idx].set(v)


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed). Functional,
    as in JAX: pass ``inplace=False``. ``mode``: None (JAX's default), "clip" or "wrap".

    Example:
        >>> enp.put(enp.zeros(4), enp.array([0, 2]), 1.0, inplace=False)
        Array([1., 0., 1., 0.], dtype=float32)
    """
    if inplace:
        _arg_error("put: ember arrays are immutable; pass inplace=False to get the updated "
                   "array back")
    if mode == "raise":
        _arg_error("put: mode='raise' is not supported (as in JAX); use 'clip' or 'wrap'")
    if mode not in (None, "clip", "wrap"):
        _arg_error(f"put: mode should be one of None, 'wrap' or 'clip'; got {mode!r}")
    return _put(a, ind, v, mode)


@eager
def _put(a, ind, v, mode):
    enp = _enp()
    x = _lift(a)
    i, vals = enp.ravel(ind), enp.ravel(v)
    if not x.size or not i.size or not vals.size:
        return x
    vals = _tile_to_size(vals, i.shape[0])
    if mode == "clip":
        i = enp.clip(i, 0, x.size - 1)
    elif mode == "wrap":
        i = enp.remainder(i, x.size)
    flat = enp.ravel(x).at[enp.ravel_multi_index(enp.unravel_index(i, x.shape), x.shape,
                                                 mode="clip")]
    return lax.reshape(flat.set(vals, mode="drop"), tuple(x.shape))


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with the elements where ``mask`` is true replaced, in order, by ``vals``
    (repeated as needed). Functional, as in JAX: pass ``inplace=False``.

    Example:
        >>> enp.place(enp.arange(4), enp.arange(4) > 1, enp.array([9]), inplace=False)
        Array([0, 1, 9, 9], dtype=int32)
    """
    if inplace:
        _arg_error("place: ember arrays are immutable; pass inplace=False to get the updated "
                   "array back")
    if np.size(vals) == 0:
        _error("place: cannot place values from an empty array")
    if np.size(arr) != np.size(mask):
        _error(f"place: arr and mask must be the same size, got {np.size(arr)} and "
               f"{np.size(mask)}")
    return _place(arr, mask, vals)


@eager
def _place(arr, mask, vals):
    enp = _enp()
    x = _lift(arr)
    if not x.size:
        return x
    m = enp.ravel(mask)
    (idx,) = enp.nonzero(m, size=m.shape[0], fill_value=m.shape[0])
    v = _tile_to_size(enp.ravel(vals), idx.shape[0])
    return lax.reshape(enp.ravel(x).at[idx].set(v, mode="drop"), tuple(x.shape))


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x, *args, **kw)`` (or the constant ``funclist[i]``) where
    ``condlist[i]``; a later condition wins; one extra function is the default. The result
    has ``x``'s dtype, as in JAX.

    Example:
        >>> x = enp.array([-1., 2.])
        >>> enp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 10])
        Array([ 1., 20.], dtype=float32)
    """
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        _error(f"piecewise: with {nc} condition(s), either {nc} or {nc + 1} functions are "
               f"expected; got {nf}")
    return _piecewise(x, list(condlist), tuple(funclist), args, kw)


@eager
def _piecewise(x, condlist, funclist, args, kw):
    enp = _enp()
    xv = enp.asarray(x)

    def value(f):
        r = f(xv, *args, **kw) if callable(f) else f
        return enp.broadcast_to(enp.astype(r, xv.dtype), tuple(xv.shape))

    out = value(funclist[0])
    for c, f in zip(condlist, funclist[1:]):
        out = enp.where(enp.astype(c, np.bool_), value(f), out)
    return out


# --- index helpers ---------------------------------------------------------------------------

def _index_arrays(arrays):
    dt = _default_int()
    return tuple(_enp().asarray(np.asarray(i).astype(dt)) for i in arrays)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``n`` x ... x ``n`` array (``ndim``
    dimensions), one ``arange(n)`` per dimension; ``n`` and ``ndim`` are static.

    Example:
        >>> enp.diag_indices(2)
        (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    n = _static_int(n, "n", "diag_indices")
    ndim = _static_int(ndim, "ndim", "diag_indices")
    if n < 0 or ndim < 0:
        _error(f"diag_indices: n and ndim must be non-negative, got n={n}, ndim={ndim}")
    return _index_arrays(np.diag_indices(n, ndim))


def diag_indices_from(arr):
    """``diag_indices`` for the (square, at least 2-D) shape of ``arr``.

    Example:
        >>> enp.diag_indices_from(enp.ones((2, 2)))
        (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    shape = np.shape(arr) if not isinstance(arr, Tracer) else tuple(arr.shape)
    if len(shape) < 2:
        _error(f"diag_indices_from: input array must be at least 2-d, got shape {shape}")
    if len(set(shape)) != 1:
        _error(f"diag_indices_from: all dimensions of input must be of equal length, got "
               f"shape {shape}")
    return diag_indices(shape[0], len(shape))


def _tri_from(name, fn, arr, k):
    shape = np.shape(arr) if not isinstance(arr, Tracer) else tuple(arr.shape)
    if len(shape) != 2:
        _error(f"{name}: input array must be 2-D, got shape {shape}")
    return fn(shape[0], k=k, m=shape[1])


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of the 2-D ``arr``.

    Example:
        >>> enp.tril_indices_from(enp.ones((2, 2)))
        (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
    """
    return _tri_from("tril_indices_from", _enp().tril_indices, arr, k)


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of the 2-D ``arr``.

    Example:
        >>> enp.triu_indices_from(enp.ones((2, 2)))
        (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    return _tri_from("triu_indices_from", _enp().triu_indices, arr, k)


@eager
def ix_(*args):
    """An open mesh from 1-D integer (or concrete boolean) sequences: the ``i``-th array is
    reshaped to extend along axis ``i`` only, for outer indexing.

    Example:
        >>> r, c = enp.ix_(enp.array([0, 1]), enp.array([2, 4]))
        >>> r.shape, c.shape
        ((2, 1), (1, 2))
    """
    out = []
    n = len(args)
    for i, a in enumerate(args):
        x = _enp().asarray(a)
        if x.ndim != 1:
            _error(f"ix_: arguments must be 1-D, got an argument of shape {tuple(x.shape)}")
        if dtypes.is_bool(x.dtype):
            _error("ix_: boolean arguments are not supported; use nonzero(mask) first")
        shape = [1] * n
        shape[i] = x.shape[0]
        out.append(lax.reshape(x, tuple(shape)))
    return tuple(out)


def _host_default(h):
    """Host grid data as ember's default int/float dtypes."""
    if h.dtype.kind in "iub":
        return h.astype(_default_int())
    return h.astype(dtypes.default_float())


def _slice_bounds(s, name):
    for v in (s.start, s.stop, s.step):
        if isinstance(v, Tracer):
            raise ConcretizationError(f"{name}: slice bounds must be static, got a traced "
                                      f"value\n  at {user_where()}")


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: dense or open mesh grids from slices (a complex step
    ``5j`` means 5 points, endpoint included), built on the host."""

    def __init__(self, sparse, name):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        for s in keys:
            if not isinstance(s, slice):
                _arg_error(f"{self.name}: expected slices, got {s!r}")
            _slice_bounds(s, self.name)
        grid = (np.ogrid if self.sparse else np.mgrid)[key]
        if isinstance(grid, tuple | list):
            return [_enp().asarray(_host_default(np.asarray(g))) for g in grid]
        return _enp().asarray(_host_default(np.asarray(grid)))

    def __repr__(self):
        return f"ember.numpy.{self.name}"


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _AxisConcat:
    """``r_[...]`` / ``c_[...]``: concatenation by index syntax (NumPy's and JAX's rules:
    slices become ranges, a leading string sets "axis,ndmin,trans1d" or "r"/"c")."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        enp = _enp()
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError:
                    _arg_error(f"{self.name}: could not understand directive {directive!r}")
        axis, ndmin, trans1d, matrix = params
        out = []
        for item in items:
            if isinstance(item, slice):
                _slice_bounds(item, self.name)
                new = enp.asarray(_host_default(np.r_[item]))
                item_ndim = 0
            elif isinstance(item, str):
                _arg_error(f"{self.name}: a string directive must be placed at the beginning")
            else:
                new = enp.asarray(item)
                item_ndim = new.ndim
            if new.ndim < ndmin:
                new = enp.reshape(new, (1,) * (ndmin - new.ndim) + tuple(new.shape))
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shifts = ndmin - builtins.abs(ndmin + trans1d + 1) % ndmin
                new = enp.transpose(new, order[shifts:] + order[:shifts])
            out.append(new)
        res = enp.concatenate(out, axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = enp.expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0

    def __repr__(self):
        return f"ember.numpy.{self.name}"


r_ = _AxisConcat(0, 1, -1, "r_")
c_ = _AxisConcat(-1, 2, 0, "c_")
s_ = np.s_
index_exp = np.index_exp


# --- histograms ------------------------------------------------------------------------------

def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The edges of ``histogram``'s bins: ``bins`` (static int) equal bins over ``range``
    (default: ``a``'s min and max; a zero-width range is widened by 0.5 each side), or the
    given 1-D edges as ``a``'s inexact dtype.

    Example:
        >>> enp.histogram_bin_edges(enp.array([0., 1., 4.]), bins=2)
        Array([0., 2., 4.], dtype=float32)
    """
    if isinstance(bins, str):
        _arg_error("histogram_bin_edges: string values for bins are not supported (as in "
                   "JAX); pass an int or an array of edges")
    if np.ndim(bins) == 1 or (isinstance(bins, Tracer) and bins.ndim == 1):
        return _edges_array(a, bins)
    nbins = _static_int(bins, "bins", "histogram_bin_edges")
    if nbins < 1:
        _error(f"histogram_bin_edges: bins must be a positive integer, got {nbins}")
    if range is not None and np.shape(range) != (2,):
        _error(f"histogram_bin_edges: range must be None or a pair of scalars, got {range!r}")
    return _edges_int(a, nbins, range)


@eager
def _edges_array(a, bins):
    (x,) = _promote_inexact(a)
    return _enp().astype(bins, x.dtype)


@eager
def _edges_int(a, nbins, range):  # noqa: A002
    enp = _enp()
    (x,) = _promote_inexact(a)
    if range is None:
        if x.size == 0:
            lo, hi = enp.asarray(0.0, x.dtype), enp.asarray(1.0, x.dtype)
        else:
            lo, hi = enp.min(x), enp.max(x)
    else:
        lo, hi = (enp.astype(r, x.dtype) for r in range)
    same = enp.equal(lo, hi)
    lo, hi = enp.where(same, lo - 0.5, lo), enp.where(same, hi + 0.5, hi)
    t = lax.iota(x.dtype, nbins + 1) / nbins     # JAX's linspace: lo * (1 - t) + hi * t
    return lo * (1 - t) + hi * t


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The histogram of the values of ``a`` (flattened): counts (float, or sums of
    ``weights``) per bin, and the bin edges. The last bin includes its right edge; values
    outside the bins are not counted. ``density`` normalizes to a probability density.

    Example:
        >>> enp.histogram(enp.array([0., 1., 1., 4.]), bins=2)
        (Array([3., 1.], dtype=float32), Array([0., 2., 4.], dtype=float32))
    """
    if weights is not None and np.shape(weights) != np.shape(a):
        _error(f"histogram: weights should have the same shape as a, got "
               f"{np.shape(weights)} and {np.shape(a)}")
    edges = histogram_bin_edges(a, bins, range)
    return _histogram(a, edges, weights, bool(density))


@eager
def _histogram(a, edges, weights, density):
    enp = _enp()
    if weights is None:
        (x,) = _promote_inexact(a)
        w = enp.ones_like(x)
    else:
        x, w = _promote_inexact(a, weights)
    x, w = enp.ravel(x), enp.ravel(w)
    n = edges.shape[0]
    idx = enp.searchsorted(edges, x, side="right")
    idx = enp.where(x == edges[-1], n - 1, idx)
    counts = enp.zeros(n, w.dtype).at[idx].add(w)[1:]
    if density:
        counts = counts / enp.diff(edges) / counts.sum()
    return counts, enp.astype(edges, x.dtype)


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The ``D``-dimensional histogram of the ``(N, D)`` ``sample``: counts (ints, or sums of
    ``weights``; floats with ``density``) and the list of ``D`` edge arrays. ``bins``: an
    int, or one int / edge array per dimension; ``range``: None or one pair (or None) per
    dimension.

    Example:
        >>> h, edges = enp.histogramdd(enp.array([[0., 0.], [1., 1.]]), bins=2)
        >>> h
        Array([[1, 0], [0, 1]], dtype=int32)
    """
    shape = np.shape(sample) if not isinstance(sample, Tracer) else tuple(sample.shape)
    if len(shape) != 2:
        _error(f"histogramdd: sample must be a 2-D (N, D) array, got shape {shape}")
    d = shape[1]
    if weights is not None and np.shape(weights) != shape[:1]:
        _error(f"histogramdd: there should be one weight per sample, got weights of shape "
               f"{np.shape(weights)} for sample shape {shape}")
    if range is not None and (len(range) != d or builtins.any(
            r is not None and np.shape(r) != (2,) for r in range)):
        _error(f"histogramdd: for sample of shape {shape}, range must be a sequence of {d} "
               f"pairs or Nones; got {range!r}")
    if isinstance(bins, int | np.integer):
        per_dim = [bins] * d
    else:
        per_dim = list(bins)
        if len(per_dim) != d:
            _error(f"histogramdd: there should be one bins entry per dimension ({d}), got "
                   f"{len(per_dim)}")
    col = [_enp().take(sample, i, axis=1) for i in builtins.range(d)]
    edges = [histogram_bin_edges(col[i], per_dim[i], None if range is None else range[i])
             for i in builtins.range(d)]
    return _histogramdd(sample, edges, weights, bool(density))


@eager
def _histogramdd(sample, edges, weights, density):
    enp = _enp()
    if weights is None:
        (x,) = _promote_inexact(sample)
    else:
        x, weights = _promote_inexact(sample, weights)
    idx = []
    for i, e in enumerate(edges):
        c = x[:, i]
        j = enp.searchsorted(e, c, side="right")
        idx.append(enp.where(c == e[-1], j - 1, j))
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = enp.ravel_multi_index(tuple(idx), nbins, mode="clip")
    hist = enp.bincount(flat, weights, length=math.prod(nbins))
    hist = lax.reshape(hist, nbins)[(slice(1, -1),) * len(edges)]
    if density:
        hist = enp.astype(hist, x.dtype)
        hist = hist / hist.sum()
        for norm in ix_(*(enp.diff(e) for e in edges)):
            hist = hist / norm
    return hist, [enp.astype(e, x.dtype) for e in edges]


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """The 2-D histogram of the points ``(x, y)``: counts and the x and y edges (see
    ``histogramdd``; ``bins`` may also be one edge array used for both).

    Example:
        >>> h, xe, ye = enp.histogram2d(enp.array([0., 1.]), enp.array([0., 1.]), bins=2)
        >>> h
        Array([[1, 0], [0, 1]], dtype=int32)
    """
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):
        bins = [bins, bins]
    sample = _enp().stack(_promote(x, y) if _is_traced_any(x, y) else
                          [_enp().asarray(x), _enp().asarray(y)], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


def _is_traced_any(*xs):
    return not _is_concrete(*xs)


# --- sorting, partitioning, differences ------------------------------------------------------

def _partition_parts(name, a, kth, axis):
    x = _lift(a)
    (ax,) = _axes(axis, x.ndim)
    n = x.shape[ax]
    k = _static_int(kth, "kth", name)
    if not -n <= k < n:
        _error(f"{name}: kth {k} is out of bounds for an axis of size {n}")
    return x, ax, k % n


@eager
def partition(a, kth, axis=-1):
    """``a`` rearranged along ``axis`` so that the element at ``kth`` is where sorting puts
    it, smaller ones before it and larger ones after. As in JAX: the first ``kth + 1`` are
    ascending and the rest descending.

    Example:
        >>> enp.partition(enp.array([3, 1, 4, 1, 5]), 2)
        Array([1, 1, 3, 5, 4], dtype=int32)
    """
    return _partitioned("partition", a, kth, axis, _enp().sort)


@eager
def argpartition(a, kth, axis=-1):
    """Indices that ``partition`` ``a`` along ``axis`` (same order as ``partition``).

    Example:
        >>> enp.argpartition(enp.array([3, 1, 4, 1, 5]), 2)
        Array([1, 3, 0, 4, 2], dtype=int32)
    """
    # int32 indices under x64 too, as JAX's (from lax.top_k)
    idx = _partitioned("argpartition", a, kth, axis, _enp().argsort)
    return lax.convert_element_type(idx, np.int32)


def _partitioned(name, a, kth, axis, sort):
    """``sort(a)`` along ``axis`` with the part after ``kth`` reversed (JAX's layout)."""
    x, ax, k = _partition_parts(name, a, kth, axis)
    s = sort(x, axis=ax)
    n = x.shape[ax]
    return lax.concatenate([_slice_axis(s, ax, 0, k + 1),
                            lax.rev(_slice_axis(s, ax, k + 1, n), (ax,))], ax)


@eager
def lexsort(keys, axis=-1):
    """Indices that sort by several keys: the last key is the primary one (stable).

    Example:
        >>> enp.lexsort([enp.array([1, 0, 1]), enp.array([0, 0, 1])])
        Array([1, 0, 2], dtype=int32)
    """
    ks = [_lift(k) for k in keys]
    if not ks:
        _error("lexsort: need a sequence of keys with len > 0")
    if len({tuple(k.shape) for k in ks}) > 1:
        _error(f"lexsort: all keys need to be the same shape, got "
               f"{[tuple(k.shape) for k in ks]}")
    shape = tuple(ks[0].shape)
    if not shape:
        return _to(0, _default_int())
    (ax,) = _axes(axis, len(shape))
    iota = lax.broadcasted_iota(_default_int(), shape, ax)
    return lax.sort(tuple(ks[::-1]) + (iota,), dimension=ax, num_keys=len(ks))[-1]


@eager
def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of ``f`` by second-order central differences inside and one-sided ones
    at the edges, along each ``axis``; spacings are scalars or coordinate arrays. One array
    per axis (a list), or the array itself for a single axis.

    Example:
        >>> enp.gradient(enp.array([1., 4., 9., 16.]))
        Array([3., 4., 6., 7.], dtype=float32)
    """
    enp = _enp()
    if edge_order is not None:
        _arg_error("gradient: edge_order is not supported (as in JAX); leave it None")
    a, *spacing_ = _promote_inexact(f, *varargs)
    axes = _axes(axis, a.ndim)
    if not axes:
        return []
    if builtins.min(a.shape[i] for i in axes) < 2:
        _error("gradient: the array is too small to calculate a numerical gradient; at "
               "least 2 elements are required along each axis")
    if not spacing_:
        dx = [1.0] * len(axes)
    elif len(spacing_) == 1:
        dx = spacing_ * len(axes)
    elif len(spacing_) == len(axes):
        dx = spacing_
    else:
        _error(f"gradient: invalid number of spacing arguments {len(spacing_)} for "
               f"{len(axes)} axes")

    def along(h, ax):
        n = a.shape[ax]

        def sl(x, lo, hi):
            return _slice_axis(x, ax if x.ndim == a.ndim else 0, lo, hi)

        upper = enp.subtract(sl(a, 1, 2), sl(a, 0, 1))
        lower = enp.subtract(sl(a, n - 1, n), sl(a, n - 2, n - 1))
        if np.ndim(h) == 0:
            inner = enp.subtract(sl(a, 2, n), sl(a, 0, n - 2)) * 0.5 / h
            upper, lower = upper / h, lower / h
        elif np.ndim(h) == 1:
            if h.shape[0] != n:
                _error("gradient: spacing arrays must have the same length as the dimension "
                       "along which the gradient is calculated")
            h = lax.reshape(h, tuple(n if i == ax else 1 for i in builtins.range(a.ndim)))
            upper = upper / (sl(h, 1, 2) - sl(h, 0, 1))
            lower = lower / (sl(h, n - 1, n) - sl(h, n - 2, n - 1))
            dx1 = sl(h, 1, n - 1) - sl(h, 0, n - 2)
            dx2 = sl(h, 2, n) - sl(h, 1, n - 1)
            inner = (-dx2 / (dx1 * (dx1 + dx2)) * sl(a, 0, n - 2)
                     + (dx2 - dx1) / (dx1 * dx2) * sl(a, 1, n - 1)
                     + dx1 / (dx2 * (dx1 + dx2)) * sl(a, 2, n))
        else:
            _error("gradient: spacing arrays must be 1-D arrays or scalars")
        return enp.concatenate([upper, inner, lower], axis=ax)

    grads = [along(h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads


@eager
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Unwrap the phase ``p``: jumps larger than ``discont`` (default ``period / 2``) along
    ``axis`` are replaced by their ``period``-complement.

    Example:
        >>> enp.unwrap(enp.array([0., 3., 6.5]))
        Array([0.       , 3.       , 0.2168147], dtype=float32)
    """
    enp = _enp()
    x, per = _promote(p, period)
    (ax,) = _axes(axis, x.ndim)
    if x.shape[ax] == 0:
        return x
    if discont is None:
        discont = per / 2
    interval = per // 2 if dtypes.is_int(x.dtype) else per / 2
    dd = enp.diff(x, axis=ax)
    ddmod = enp.mod(dd + interval, per) - interval
    ddmod = enp.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correct = enp.where(enp.abs(dd) < discont, 0, ddmod - dd)
    n = x.shape[ax]
    return enp.concatenate([_slice_axis(x, ax, 0, 1),
                            _slice_axis(x, ax, 1, n) + enp.cumsum(correct, axis=ax)], axis=ax)


@eager
def spacing(x, /):
    """The distance from ``x`` to the next representable number away from zero (the
    smallest subnormal, signed, where that distance rounds to 0).

    Example:
        >>> enp.spacing(enp.float32(1.0))
        Array(1.1920929e-07, dtype=float32)
    """
    enp = _enp()
    (a,) = _promote_inexact(x)
    inf = _const(np.inf, a)
    if a.dtype == np.float16:
        return lax.sub(enp.nextafter(a, inf), a)
    r = lax.sub(enp.nextafter(a, enp.copysign(inf, a)), a)
    tiny = _const(float(np.finfo(a.dtype).smallest_subnormal), a)
    return enp.where(r == 0, enp.copysign(tiny, a), r)


# --- sets ------------------------------------------------------------------------------------

def _set_args(name, ar1, ar2):
    x, y = _promote(ar1, ar2)
    return lax.reshape(x, (x.size,)), lax.reshape(y, (y.size,))


def _sorted_runs(x):
    """``x`` sorted, and a mask of the first element of each run of equal values."""
    s = lax.sort(x)
    n = s.shape[0]
    if n == 0:
        return s, lax.broadcast_in_dim(_to(True, np.bool_), (0,), ())
    prev = lax.concatenate([lax.slice(s, (0,), (1,)), lax.slice(s, (0,), (n - 1,))], 0)
    differ = lax.ne(s, prev)
    if dtypes.is_float(s.dtype):   # NaNs are one value, as unique's equal_nan=True
        differ = lax.bitwise_and(differ, lax.bitwise_not(
            lax.bitwise_and(lax.ne(s, s), lax.ne(prev, prev))))
    first = lax.eq(lax.iota(np.int32, n), _const(0, lax.iota(np.int32, n)))
    return s, lax.bitwise_or(differ, first)


def _select_fill(values, mask, size, fill_value):
    """The ``values`` where ``mask``, in order, cut or padded to ``size``; padding is
    ``fill_value`` or, by default, the first selected value (0 if there is none)."""
    (out,) = _compact(mask, [values], size)
    count = lax.reduce_sum(_to(mask, np.int32), (0,)) if mask.shape[0] else _to(0, np.int32)
    if fill_value is None:
        if size == 0:
            return out
        first = _take_first(out)
        fill_value = lax.select(lax.gt(count, _to(0, np.int32)), first, _const(0, first))
    return _fill(out, count, fill_value)


def _isin(x, y):
    return _enp().isin(x, y) if y.shape[0] else lax.broadcast_in_dim(
        _to(False, np.bool_), tuple(x.shape), ())


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values in either array (flattened). Under ``jit`` a static
    ``size=`` is required (padding: ``fill_value``, default the smallest value).

    Example:
        >>> enp.union1d(enp.array([3, 1]), enp.array([2, 1]))
        Array([1, 2, 3], dtype=int32)
    """
    size = _sized("union1d", size, (ar1, ar2), lambda a, b: np.union1d(a, b).size)
    return _set_op("union", ar1, ar2, False, size, fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values in both arrays (flattened); with ``return_indices``, also
    the index of each value's first occurrence in ``ar1`` and ``ar2``. Under ``jit`` a
    static ``size=`` is required (value padding: ``fill_value``, default the smallest value;
    index padding: the array sizes, as in JAX).

    Example:
        >>> enp.intersect1d(enp.array([3, 1, 2]), enp.array([2, 3, 5]))
        Array([2, 3], dtype=int32)
    """
    size = _sized("intersect1d", size, (ar1, ar2), lambda a, b: np.intersect1d(a, b).size)
    if return_indices:
        return _intersect_indices(ar1, ar2, size, fill_value)
    return _set_op("intersect", ar1, ar2, bool(assume_unique), size, fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` that are not in ``ar2`` (with ``assume_unique``:
    ``ar1``'s values not in ``ar2``, in ``ar1``'s order). Under ``jit`` a static ``size=``
    is required (padding: ``fill_value``, default 0 as in JAX).

    Example:
        >>> enp.setdiff1d(enp.array([3, 1, 2, 1]), enp.array([2]))
        Array([1, 3], dtype=int32)
    """
    size = _sized("setdiff1d", size, (ar1, ar2),
                  lambda a, b: np.setdiff1d(a, b, assume_unique=bool(assume_unique)).size)
    return _set_op("diff", ar1, ar2, bool(assume_unique), size,
                   0 if fill_value is None else fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays. Under ``jit`` a static
    ``size=`` is required (padding: ``fill_value``, default the smallest value).

    Example:
        >>> enp.setxor1d(enp.array([1, 2, 3]), enp.array([2, 3, 4]))
        Array([1, 4], dtype=int32)
    """
    size = _sized("setxor1d", size, (ar1, ar2), lambda a, b: np.setxor1d(a, b).size)
    return _set_op("xor", ar1, ar2, bool(assume_unique), size, fill_value)


@eager
def _set_op(kind, ar1, ar2, assume_unique, size, fill_value):
    if kind == "diff":    # ar1's dtype, as in JAX
        x, y = _enp().ravel(ar1), _enp().ravel(ar2)
    else:
        x, y = _set_args(kind, ar1, ar2)
    if kind == "diff" and assume_unique:
        return _select_fill(x, lax.bitwise_not(_isin(x, y)), size, fill_value)
    if kind in ("union", "xor"):
        s, first = _sorted_runs(lax.concatenate([x, y], 0))
        if kind == "xor":
            first = lax.bitwise_and(first, lax.ne(_isin(s, x), _isin(s, y)))
            if dtypes.is_float(s.dtype) and s.shape[0]:
                first = _xor_nans(s, first, x, y)
        return _select_fill(s, first, size, fill_value)
    s, first = _sorted_runs(x)
    inside = _isin(s, y)
    keep = lax.bitwise_and(first, inside if kind == "intersect" else lax.bitwise_not(inside))
    return _select_fill(s, keep, size, fill_value)


def _xor_nans(s, keep, x, y):
    """NaN is never equal to NaN in JAX's setxor1d: one NaN from each array that has one."""
    enp = _enp()
    nan = enp.isnan(s)
    count = enp.any(enp.isnan(x)).astype(np.int32) + enp.any(enp.isnan(y)).astype(np.int32)
    return enp.where(nan, nan & (enp.cumsum(nan.astype(np.int32)) <= count), keep)


def _first_index(values, arr):
    """For each of ``values``, the index of its first occurrence in ``arr`` (``arr.size``
    where absent)."""
    n = arr.shape[0]
    full = tuple(values.shape) + (n,)
    eq = lax.eq(lax.broadcast_in_dim(values, full, (0,)), lax.broadcast_in_dim(arr, full, (1,)))
    pos = lax.broadcasted_iota(_default_int(), full, 1)
    big = lax.broadcast_in_dim(_to(n, _default_int()), full, ())
    return lax.reduce_min(lax.select(eq, pos, big), (1,))


@eager
def _intersect_indices(ar1, ar2, size, fill_value):
    x, y = _set_args("intersect1d", ar1, ar2)
    s, first = _sorted_runs(x)
    keep = lax.bitwise_and(first, _isin(s, y))
    vals = _select_fill(s, keep, size, fill_value)
    (raw,) = _compact(keep, [s], size)
    count = lax.reduce_sum(_to(keep, np.int32), (0,)) if keep.shape[0] else _to(0, np.int32)
    i1 = _fill(_first_index(raw, x), count, x.shape[0])
    i2 = _fill(_first_index(raw, y), count, y.shape[0])
    return vals, i1, i2


UniqueAllResult = namedtuple("UniqueAllResult",
                             ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x, /, *, size=None, fill_value=None):
    """The array API's ``unique``: values, first indices, inverse indices (``x``'s shape)
    and counts, as a named tuple. NaNs are not merged (``equal_nan=False``, as in JAX).

    Example:
        >>> enp.unique_all(enp.array([2, 1, 2])).counts
        Array([1, 2], dtype=int32)
    """
    return UniqueAllResult(*_enp().unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, equal_nan=False, size=size,
                                          fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    """The unique values of ``x`` and their counts, as a named tuple.

    Example:
        >>> enp.unique_counts(enp.array([2, 1, 2])).values
        Array([1, 2], dtype=int32)
    """
    return UniqueCountsResult(*_enp().unique(x, return_counts=True, equal_nan=False,
                                             size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The unique values of ``x`` and the inverse indices (``x``'s shape), as a named tuple.

    Example:
        >>> enp.unique_inverse(enp.array([2, 1, 2])).inverse_indices
        Array([1, 0, 1], dtype=int32)
    """
    return UniqueInverseResult(*_enp().unique(x, return_inverse=True, equal_nan=False,
                                              size=size, fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of ``x`` (NaNs not merged).

    Example:
        >>> enp.unique_values(enp.array([2, 1, 2]))
        Array([1, 2], dtype=int32)
    """
    return _enp().unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --- bits ------------------------------------------------------------------------------------

def _bitorder(name, bitorder):
    if bitorder not in ("little", "big"):
        _arg_error(f"{name}: bitorder must be either 'little' or 'big', got {bitorder!r}")


@eager
def packbits(a, axis=None, bitorder="big"):
    """The elements of ``a`` (non-zero is 1) packed 8 to a ``uint8`` along ``axis`` (the
    flattened ``a`` if None), zero-padded to a multiple of 8.

    Example:
        >>> enp.packbits(enp.array([1, 0, 1]))
        Array([160], dtype=uint8)
    """
    enp = _enp()
    _bitorder("packbits", bitorder)
    x = _lift(a)
    if not (dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype)):
        _error(f"packbits: expected an integer or boolean array, got {x.dtype}")
    x = enp.astype(enp.not_equal(x, 0), np.uint8)
    if axis is None:
        x, axis = enp.ravel(x), 0
    (ax,) = _axes(axis, x.ndim)
    x = enp.swapaxes(x, ax, -1)
    rem = x.shape[-1] % 8
    if rem:
        x = lax.pad(x, _to(0, np.uint8), [(0, 0, 0)] * (x.ndim - 1) + [(0, 8 - rem, 0)])
    x = lax.reshape(x, tuple(x.shape[:-1]) + (x.shape[-1] // 8, 8))
    bits = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    packed = enp.sum(enp.left_shift(x, bits), axis=-1, dtype=np.uint8)
    return enp.swapaxes(packed, ax, -1)


@eager
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the ``uint8`` array ``a`` as a ``uint8`` array of 0s and 1s, along
    ``axis`` (flattened if None); ``count`` keeps that many bits (padding with zeros).

    Example:
        >>> enp.unpackbits(enp.array([160], dtype=enp.uint8))
        Array([1, 0, 1, 0, 0, 0, 0, 0], dtype=uint8)
    """
    enp = _enp()
    _bitorder("unpackbits", bitorder)
    x = _lift(a)
    if x.dtype != np.uint8:
        _error(f"unpackbits: expected an array of uint8, got {x.dtype}")
    bits = (np.uint8(1) << np.arange(8, dtype=np.uint8)).astype(np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        x, axis = enp.ravel(x), 0
    (ax,) = _axes(axis, x.ndim)
    x = enp.swapaxes(x, ax, -1)
    un = enp.astype(enp.bitwise_and(enp.expand_dims(x, -1), bits) > 0, np.uint8)
    un = lax.reshape(un, tuple(un.shape[:-2]) + (un.shape[-2] * 8,))
    if count is not None:
        count = _static_int(count, "count", "unpackbits")
        if count > un.shape[-1]:
            un = lax.pad(un, _to(0, np.uint8),
                         [(0, 0, 0)] * (un.ndim - 1) + [(0, count - un.shape[-1], 0)])
        else:
            un = _slice_axis(un, un.ndim - 1, 0, builtins.max(count, 0) if count >= 0
                             else builtins.max(un.shape[-1] + count, 0))
    return enp.swapaxes(un, ax, -1)


# --- functional helpers ----------------------------------------------------------------------

def _vmap():
    from ember.frontend.vmap import vmap
    return vmap


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (by ``ember.vmap``);
    the function's output dimensions replace ``axis``.

    Example:
        >>> enp.apply_along_axis(enp.sum, 1, enp.ones((2, 3)))
        Array([3., 3.], dtype=float32)
    """
    x = _enp().asarray(arr)
    (ax,) = _axes(axis, x.ndim)
    vmap = _vmap()

    def func(v):
        return func1d(v, *args, **kwargs)

    for i in builtins.range(1, x.ndim - ax):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in builtins.range(ax):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(x)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each of ``axes`` in turn; a result with one dimension
    fewer gets it back (size 1), so the rank is kept.

    Example:
        >>> enp.apply_over_axes(enp.sum, enp.ones((2, 3)), [0, 1])
        Array([[6.]], dtype=float32)
    """
    x = _enp().asarray(a)
    for ax in ([axes] if np.ndim(axes) == 0 else axes):
        b = func(x, ax)
        if b.ndim == x.ndim:
            x = b
        elif b.ndim == x.ndim - 1:
            x = _enp().expand_dims(b, ax)
        else:
            _error("apply_over_axes: the function is not returning an array of the correct "
                   "shape (the same rank, or one less)")
    return x


_DIM = r"\w+"


def _parse_signature(name, signature):
    import re
    arg = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
    args = rf"{arg}(?:,{arg})*"
    sig = signature.replace(" ", "")
    if not re.fullmatch(rf"{args}->{args}", sig):
        _arg_error(f"{name}: not a valid gufunc signature: {signature!r}")
    ins, outs = sig.split("->")

    def parse(part):
        return [tuple(re.findall(_DIM, g)) for g in re.findall(arg, part)]

    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` made to broadcast over its array arguments, by ``ember.vmap`` over the loop
    dimensions. ``signature`` (NumPy's gufunc form, e.g. ``"(n),(n)->()"``) names the core
    dimensions each call sees; ``excluded`` (positions or keyword names) are passed through.
    Keyword arguments are passed through unchanged.

    Example:
        >>> f = enp.vectorize(lambda x, y: enp.dot(x, y), signature="(n),(n)->()")
        >>> f(enp.ones((4, 3)), enp.arange(3.)).shape
        (4,)
    """
    if not callable(pyfunc):
        _arg_error(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
    in_core = _parse_signature("vectorize", signature)[0] if signature is not None else None

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        enp = _enp()
        fixed = {i: a for i, a in enumerate(args) if i in excluded}
        kw = dict(kwargs)
        free_idx = [i for i in builtins.range(len(args)) if i not in excluded]
        free = [enp.asarray(args[i]) for i in free_idx]
        cores = in_core if in_core is not None else [()] * len(free)
        if len(cores) != len(free):
            _error(f"vectorize: the signature has {len(cores)} inputs but {len(free)} "
                   "arguments were given")
        sizes = {}
        loops = []
        for x, core in zip(free, cores):
            if x.ndim < len(core):
                _error(f"vectorize: an argument of shape {tuple(x.shape)} has fewer "
                       f"dimensions than its core dimensions {core}")
            for dname, d in zip(core, x.shape[x.ndim - len(core):]):
                if sizes.setdefault(dname, d) != d:
                    _error(f"vectorize: inconsistent size for core dimension {dname!r}: "
                           f"{sizes[dname]} vs {d}")
            loops.append(tuple(x.shape[:x.ndim - len(core)]))
        try:
            loop = np.broadcast_shapes(*loops) if loops else ()
        except ValueError:
            _error(f"vectorize: loop dimensions {loops} cannot be broadcast together")
        free = [enp.broadcast_to(x, loop + tuple(x.shape[x.ndim - len(c):]))
                for x, c in zip(free, cores)]

        def call(*xs):
            full = dict(fixed)
            full.update(zip(free_idx, xs))
            return pyfunc(*(full[i] for i in builtins.range(len(args))), **kw)

        f = call
        for _ in loop:
            f = _vmap()(f)
        return f(*free)

    return wrapped


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` applied to the index grids of ``shape`` (by ``ember.vmap``, as in JAX:
    the function sees one index per call); ``kwargs`` are passed through unbatched.
    ``dtype=float`` means ember's default float.

    Example:
        >>> enp.fromfunction(lambda i, j: i + j, (2, 2), dtype=int)
        Array([[0, 1], [1, 2]], dtype=int32)
    """
    shape = (shape,) if np.ndim(shape) == 0 and not isinstance(shape, tuple | list) \
        else tuple(shape)
    shape = tuple(_static_int(d, "shape", "fromfunction") for d in shape)
    dt = dtypes.default_float() if dtype is float else \
        _default_int() if dtype is int else np.dtype(dtype)
    f = functools.partial(function, **kwargs) if kwargs else function
    for i in builtins.range(len(shape)):
        in_axes = tuple(0 if i == j else None for j in builtins.range(len(shape)))
        f = _vmap()(f, in_axes=in_axes[::-1])
    return f(*(_enp().arange(s, dtype=dt) for s in shape))


# --- polynomials -----------------------------------------------------------------------------

def _poly1d(name, *ps, inexact=True):
    ps = _promote_inexact(*ps) if inexact else _promote(*ps)
    for p in ps:
        if p.ndim != 1:
            _error(f"{name}: polynomial coefficients must be 1-D arrays, got shape "
                   f"{tuple(p.shape)}")
    return ps


@eager
def poly(seq_of_zeros):
    """The coefficients (highest power first) of the monic polynomial with the given roots;
    for a square matrix, of its characteristic polynomial (computed without eigenvalues, by
    the Faddeev-LeVerrier recursion, so the result is real where NumPy's and JAX's would be
    complex-typed).

    Example:
        >>> enp.poly(enp.array([1., 2.]))
        Array([ 1., -3.,  2.], dtype=float32)
    """
    enp = _enp()
    (z,) = _promote_inexact(seq_of_zeros)
    if z.ndim == 0:
        z = lax.reshape(z, (1,))
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        return _charpoly(z)
    if z.ndim != 1:
        _error(f"poly: input must be 1-D or a non-empty square 2-D array, got shape "
               f"{tuple(z.shape)}")
    a = enp.ones((1,), z.dtype)
    if z.shape[0] == 0:
        return enp.ones((), z.dtype)
    for k in builtins.range(z.shape[0]):
        a = enp.convolve(a, enp.stack([enp.ones((), z.dtype), -z[k]]), mode="full")
    return a


def _charpoly(a):
    enp = _enp()
    n = a.shape[0]
    eye = enp.eye(n, dtype=a.dtype)
    coeffs = [enp.ones((), a.dtype)]
    m = enp.zeros_like(a)
    for k in builtins.range(1, n + 1):
        m = enp.matmul(a, m) + coeffs[-1] * eye
        coeffs.append(-enp.trace(enp.matmul(a, m)) / k)
    return enp.stack(coeffs)


def _pad_front(p, n):
    return lax.pad(p, _to(0, p.dtype), [(n - p.shape[0], 0, 0)]) if p.shape[0] < n else p


@eager
def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest power first).

    Example:
        >>> enp.polyadd(enp.array([1, 2]), enp.array([1, 0, 0]))
        Array([1, 1, 2], dtype=int32)
    """
    p, q = _poly1d("polyadd", a1, a2, inexact=False)
    n = builtins.max(p.shape[0], q.shape[0])
    return _enp().add(_pad_front(p, n), _pad_front(q, n))


@eager
def polysub(a1, a2):
    """The difference of two polynomials (coefficients highest power first).

    Example:
        >>> enp.polysub(enp.array([1, 2]), enp.array([1, 0, 0]))
        Array([-1,  1,  2], dtype=int32)
    """
    p, q = _poly1d("polysub", a1, a2, inexact=False)
    return polyadd(p, _enp().negative(q))


def _trim_front(name, p):
    if isinstance(p, Tracer):
        raise ConcretizationError(f"{name}: trim_leading_zeros=True needs concrete "
                                  f"coefficients\n  at {user_where()}")
    h = np.asarray(p)
    nz = np.flatnonzero(h)
    return p[int(nz[0]):] if nz.size else p[:0]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full convolution, in floating point as in JAX);
    ``trim_leading_zeros`` (concrete inputs only) drops leading zero coefficients first.

    Example:
        >>> enp.polymul(enp.array([1, 1]), enp.array([1, -1]))
        Array([ 1.,  0., -1.], dtype=float32)
    """
    if trim_leading_zeros and (np.size(a1) > 1 or np.size(a2) > 1):
        a1 = _trim_front("polymul", _enp().asarray(a1))
        a2 = _trim_front("polymul", _enp().asarray(a2))
    return _polymul(a1, a2)


@eager
def _polymul(a1, a2):
    enp = _enp()
    p, q = _poly1d("polymul", a1, a2)
    if p.shape[0] == 0:
        p = enp.zeros(1, q.dtype)
    if q.shape[0] == 0:
        q = enp.zeros(1, p.dtype)
    return enp.convolve(p, q, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """The quotient and remainder of polynomial division (remainder as long as ``u``, as in
    JAX; ``trim_leading_zeros``, concrete inputs only, trims its near-zero leading terms).

    Example:
        >>> q, r = enp.polydiv(enp.array([1., -3., 2.]), enp.array([1., -1.]))
        >>> q
        Array([ 1., -2.], dtype=float32)
    """
    q, r = _polydiv(u, v)
    if trim_leading_zeros:
        if isinstance(r, Tracer):
            raise ConcretizationError("polydiv: trim_leading_zeros=True needs concrete "
                                      f"inputs\n  at {user_where()}")
        h = np.asarray(r)
        big = np.flatnonzero(np.abs(h) > np.sqrt(np.finfo(h.dtype).eps))
        r = r[int(big[0]):] if big.size else r[:0]
    return q, r


@eager
def _polydiv(u, v):
    enp = _enp()
    a, b = _poly1d("polydiv", u, v)
    m, n = a.shape[0] - 1, b.shape[0] - 1
    if n < 0:
        _error("polydiv: the divisor v must have at least one coefficient")
    scale = 1.0 / b[0]
    q = enp.zeros(builtins.max(m - n + 1, 1), a.dtype)
    for k in builtins.range(0, m - n + 1):
        d = scale * a[k]
        q = q.at[k].set(d)
        a = a.at[k:k + n + 1].add(-d * b)
    return q, a


@eager
def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial (coefficients highest power first).

    Example:
        >>> enp.polyder(enp.array([1., 2., 3.]))
        Array([2., 2.], dtype=float32)
    """
    enp = _enp()
    m = _static_int(m, "m", "polyder")
    (c,) = _poly1d("polyder", p)
    if m < 0:
        _error(f"polyder: the order of the derivative must be non-negative, got {m}")
    if m == 0:
        return c
    n = c.shape[0]
    coeff = np.prod(np.arange(m, builtins.max(n, m))[None] - np.arange(m)[:, None], axis=0)
    return _slice_axis(c, 0, 0, builtins.max(n - m, 0)) * enp.asarray(
        coeff[::-1].astype(c.dtype))


@eager
def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (a
    scalar, or one per integration, the first being the last one added).

    Example:
        >>> enp.polyint(enp.array([3., 2.]), k=1.)
        Array([1.5, 2. , 1. ], dtype=float32)
    """
    enp = _enp()
    m = _static_int(m, "m", "polyint")
    c, kk = _promote_inexact(p, 0 if k is None else k)
    if c.ndim != 1:
        _error(f"polyint: polynomial coefficients must be a 1-D array, got shape "
               f"{tuple(c.shape)}")
    if m < 0:
        _error(f"polyint: the order of the integral must be non-negative, got {m}")
    kk = enp.atleast_1d(kk)
    if kk.shape[0] == 1:
        kk = enp.broadcast_to(kk, (m,))
    if tuple(kk.shape) != (m,):
        _error(f"polyint: k must be a scalar or a 1-D array of length 1 or m={m}, got shape "
               f"{tuple(kk.shape)}")
    if m == 0:
        return c
    grid = np.arange(c.shape[0] + m)[None] - np.arange(m)[:, None]
    coeff = np.maximum(1, grid).prod(0)[::-1].astype(c.dtype)
    return enp.concatenate([c, kk]) / enp.asarray(coeff)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial fit of degree ``deg`` to the points ``(x, y)`` (``y``
    1-D, or 2-D for several fits); with weights ``w``. ``full`` also returns residuals,
    rank, singular values and rcond; ``cov`` the scaled (or "unscaled") covariance.

    Example:
        >>> enp.polyfit(enp.array([0., 1., 2.]), enp.array([1., 3., 5.]), 1)
        Array([2., 1.], dtype=float32)
    """
    deg = _static_int(deg, "deg", "polyfit")
    if deg < 0:
        _error(f"polyfit: expected deg >= 0, got {deg}")
    xs, ys = np.shape(x), np.shape(y)
    if len(xs) != 1 or xs[0] == 0:
        _error(f"polyfit: expected a non-empty 1-D vector for x, got shape {xs}")
    if len(ys) not in (1, 2) or ys[0] != xs[0]:
        _error(f"polyfit: y must be 1-D or 2-D with as many rows as x has elements, got "
               f"shapes {xs} and {ys}")
    if w is not None and np.shape(w) != xs:
        _error(f"polyfit: w must be a 1-D array of the length of x, got shape {np.shape(w)}")
    if cov and cov != "unscaled" and xs[0] <= deg + 1:
        _error("polyfit: the number of data points must exceed deg + 1 to scale the "
               "covariance matrix")
    return _polyfit(x, y, deg, rcond, bool(full), w, cov)


@eager
def _polyfit(x, y, deg, rcond, full, w, cov):
    enp = _enp()
    xv, yv = _promote_inexact(x, y)
    order = deg + 1
    if rcond is None:
        rcond = xv.shape[0] * float(np.finfo(xv.dtype).eps)
    lhs = enp.vander(xv, order)
    rhs = yv
    if w is not None:
        (wv,) = _promote_inexact(w)
        lhs = lhs * wv[:, None]
        rhs = rhs * (wv[:, None] if rhs.ndim == 2 else wv)
    scale = enp.sqrt(enp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = enp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, enp.asarray(rcond, xv.dtype)
    if cov:
        vbase = enp.linalg.inv(enp.matmul(lhs.T, lhs)) / enp.outer(scale, scale)
        fac = enp.ones((), xv.dtype) if cov == "unscaled" else resids / (xv.shape[0] - order)
        if yv.ndim == 1:
            return c, vbase * enp.atleast_1d(fac)[None]
        return c, vbase[:, :, None] * enp.atleast_1d(fac)[None, None, :]
    return c


# --- window functions ------------------------------------------------------------------------

def _window(name, M):
    M = _static_int(M, "M", name)
    dt = dtypes.default_float()
    if M <= 1:
        return None, _enp().ones((builtins.max(M, 0),), dt)
    return lax.iota(dt, M), M


def _cosine_window(name, M, terms):
    n, M = _window(name, M)
    if n is None:
        return M
    enp = _enp()
    out = None
    for i, c in enumerate(terms):
        t = c if i == 0 else c * enp.cos(2 * i * np.pi * n / (M - 1))
        out = t if out is None else out + t
    return out


@eager
def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points.

    Example:
        >>> enp.bartlett(5)
        Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    n, M = _window("bartlett", M)
    if n is None:
        return M
    return 1 - _enp().abs(2 * n + 1 - M) / (M - 1)


@eager
def blackman(M):
    """The Blackman window of ``M`` points.

    Example:
        >>> enp.blackman(3)
        Array([-1.3877788e-17,  1.0000000e+00, -1.3877788e-17], dtype=float32)
    """
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


@eager
def hamming(M):
    """The Hamming window of ``M`` points.

    Example:
        >>> enp.hamming(3)
        Array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _cosine_window("hamming", M, (0.54, -0.46))


@eager
def hanning(M):
    """The Hann window of ``M`` points.

    Example:
        >>> enp.hanning(3)
        Array([0., 1., 0.], dtype=float32)
    """
    return _cosine_window("hanning", M, (0.5, -0.5))


@eager
def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``.

    Example:
        >>> enp.kaiser(3, 0.0)
        Array([1., 1., 1.], dtype=float32)
    """
    n, M = _window("kaiser", M)
    if n is None:
        return M
    enp = _enp()
    alpha = 0.5 * (M - 1)
    return enp.i0(beta * enp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / enp.i0(beta)


# --- dtypes ----------------------------------------------------------------------------------

dtype = np.dtype
generic, number, integer, inexact = np.generic, np.number, np.integer, np.inexact
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
floating, complexfloating = np.floating, np.complexfloating
character, flexible = np.character, np.flexible


_EXTENDED_FLOATS = tuple(np.dtype(t) for t in (dtypes.bfloat16,)) + tuple(
    np.dtype(t) for t in dtypes.SUPPORTED if np.dtype(t).kind == "V")
_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d in _EXTENDED_FLOATS,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d in _EXTENDED_FLOATS,
}


def _dtype_of(x, name, what):
    if isinstance(x, type) and issubclass(x, np.generic):
        return np.dtype(x)
    try:
        return np.dtype(getattr(x, "dtype", x))
    except TypeError:
        _arg_error(f"{name}: {what} must be a dtype, got {x!r}")


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name ("bool", "signed integer",
    "unsigned integer", "integral", "real floating", "complex floating", "numeric"), or a
    tuple of these. ``bfloat16`` is a real floating type, as in JAX.

    Example:
        >>> enp.isdtype(enp.float32, "real floating")
        True
    """
    d = _dtype_of(dtype, "isdtype", "dtype")
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            if k not in _KINDS:
                _arg_error(f"isdtype: unrecognized kind {k!r}; expected one of "
                           f"{list(_KINDS)} or a dtype")
            if _KINDS[k](d):
                return True
        elif d == _dtype_of(k, "isdtype", "kind"):
            return True
    return False


def issubdtype(arg1, arg2):
    """Whether ``arg1`` is a dtype below ``arg2`` in NumPy's type hierarchy (``bfloat16``
    counts as ``floating``, as in JAX).

    Example:
        >>> enp.issubdtype(enp.int8, enp.integer)
        True
    """
    d = _dtype_of(arg1, "issubdtype", "arg1")
    if d in _EXTENDED_FLOATS:
        if isinstance(arg2, type) and issubclass(arg2, np.generic):
            return arg2 in (np.floating, np.inexact, np.number, np.generic)
        return d == _dtype_of(arg2, "issubdtype", "arg2")
    if isinstance(arg2, type) and issubclass(arg2, np.generic):
        return bool(np.issubdtype(d, arg2))
    return bool(np.issubdtype(d, _dtype_of(arg2, "issubdtype", "arg2")))


def iscomplexobj(x):
    """Whether ``x`` has a complex type (a Python complex, a complex NumPy or ember array).

    Example:
        >>> enp.iscomplexobj(enp.ones(2))
        False
    """
    if isinstance(x, complex | np.complexfloating):
        return True
    if x is None or isinstance(x, builtins.bool | int | float | str | np.generic):
        return False
    d = getattr(x, "dtype", None)
    d = np.asarray(x).dtype if d is None else _dtype_of(d, "iscomplexobj", "x")
    return d.kind == "c"


def isrealobj(x):
    """``not iscomplexobj(x)``.

    Example:
        >>> enp.isrealobj(enp.ones(2))
        True
    """
    return not iscomplexobj(x)


@eager
def isreal(x):
    """Elementwise whether the imaginary part is zero (always, for real arrays).

    Example:
        >>> enp.isreal(enp.array([1., 2.]))
        Array([ True,  True], dtype=bool)
    """
    return _enp().equal(_enp().imag(x), 0)


@eager
def iscomplex(x):
    """Elementwise whether the imaginary part is non-zero (never, for real arrays).

    Example:
        >>> enp.iscomplex(enp.array([1., 2.]))
        Array([False, False], dtype=bool)
    """
    return _enp().not_equal(_enp().imag(x), 0)
