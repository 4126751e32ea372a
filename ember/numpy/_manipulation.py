"""Inserting, deleting, joining and reordering, beyond ``_shape.py``'s: ``delete``,
``insert``, ``append``, ``resize``, ``block``, ``trim_zeros``, ``rollaxis``, and the Array API's
spellings ``concat``, ``permute_dims``, ``matrix_transpose`` and ``unstack``.

As in JAX, ``delete`` with a traced index array needs ``assume_unique_indices=True``, and
``trim_zeros``, whose result shape depends on the values, needs a concrete array.

Example:
    >>> import ember.numpy as enp
    >>> enp.insert(enp.arange(3), 1, 9)
    Array([0, 9, 1, 2], dtype=int32)
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ember import dtypes, lax
from ember.errors import ConcretizationError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, user_where
from ember.numpy._core import (
    _arg_error,
    _axes,
    _error,
    _lift,
    _static_int,
)
from ember.numpy._shape import _enp, _slice_axis, _static_take

__all__ = [
    "delete", "insert", "append", "resize", "block", "trim_zeros", "rollaxis", "concat",
    "permute_dims", "matrix_transpose", "unstack",
]


# --- deleting and inserting ------------------------------------------------------------------

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
        idx = enp.asarray(np.arange(*obj.indices(n_input)).astype(dtypes.default_int()))
    else:
        idx = _lift(obj)
    if idx.ndim > 1:
        _error(f"insert: obj must be a slice, a 1-D array or a scalar, got shape "
               f"{tuple(idx.shape)}")
    if not dtypes.is_int(idx.dtype):
        if idx.size == 0:
            idx = enp.astype(idx, dtypes.default_int())
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


# --- joining and resizing --------------------------------------------------------------------

@eager
def append(arr, values, axis=None):
    """``values`` joined after ``arr`` along ``axis`` (None: both flattened)."""
    enp = _enp()
    if axis is None:
        return enp.concatenate([enp.ravel(enp.asarray(arr)), enp.ravel(enp.asarray(values))])
    return enp.concatenate([enp.asarray(arr), enp.asarray(values)], axis=axis)


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


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``"f"`` in ``trim``) and trailing (``"b"``) zeros along
    ``axis`` (None: every axis); along an axis, a slice counts as zero when all of it is. The
    result's shape depends on the values, so ``filt`` must be concrete (as in JAX).

    Example:
        >>> enp.trim_zeros(enp.array([0, 0, 2, 0, 1, 0]))
        Array([2, 0, 1], dtype=int32)
    """
    if isinstance(filt, Tracer):
        filt._concrete("trim_zeros: filt (the result's shape depends on its values)")
    x = _enp().asarray(filt)
    h = np.asarray(x)
    axes = set(range(h.ndim)) if axis is None else set(_axes(axis, h.ndim))
    trim = trim.lower()
    index = []
    for ax in range(h.ndim):
        if ax not in axes or ("f" not in trim and "b" not in trim):
            index.append(slice(None))
            continue
        mask = np.any(h != 0, axis=tuple(i for i in range(h.ndim) if i != ax))
        nz = np.flatnonzero(mask)
        if not nz.size:
            index.append(slice(0, 0))
            continue
        index.append(slice(int(nz[0]) if "f" in trim else None,
                           int(nz[-1]) + 1 if "b" in trim else None))
    return x[tuple(index)]


# --- reordering axes -------------------------------------------------------------------------

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
def rollaxis(a, axis, start=0):
    """Move ``axis`` to before position ``start`` (NumPy's older ``moveaxis``)."""
    x = _lift(a)
    (ax,) = _axes(axis, x.ndim)
    start = operator.index(start)
    if not -x.ndim <= start <= x.ndim:
        _error(f"rollaxis: start={start} must satisfy {-x.ndim} <= start <= {x.ndim}")
    if start < 0:
        start += x.ndim
    if start > ax:
        start -= 1
    return _enp().moveaxis(x, ax, start)
