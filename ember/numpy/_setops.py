"""Set operations on the flattened arrays: ``union1d``, ``intersect1d``, ``setdiff1d``,
``setxor1d``, ``isin``, and the Array API's ``unique_all``, ``unique_counts``,
``unique_inverse`` and ``unique_values`` (on ``unique``, in ``_reductions.py``).

The result size depends on the data: as in JAX, outside ``jit`` it is computed on the host,
under ``jit`` a static ``size=`` (with ``fill_value=``) is required.

Example:
    >>> import ember.numpy as enp
    >>> enp.union1d(enp.array([3, 1]), enp.array([2, 1]))
    Array([1, 2, 3], dtype=int32)
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _const,
    _promote,
    _to,
)
from ember.numpy._reductions import _compact, _fill, _sized, _take_first
from ember.numpy._shape import _enp

__all__ = [
    "union1d", "intersect1d", "setdiff1d", "setxor1d", "isin", "unique_all", "unique_counts",
    "unique_inverse", "unique_values",
]


# --- set operations --------------------------------------------------------------------------

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
    pos = lax.broadcasted_iota(dtypes.default_int(), full, 1)
    big = lax.broadcast_in_dim(_to(n, dtypes.default_int()), full, ())
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


@eager
def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Elementwise whether ``element`` is in ``test_elements`` (any shape; NaN is never in);
    negated with ``invert``."""
    e, t = _promote(element, test_elements)
    t = lax.reshape(t, (t.size,))
    full = tuple(e.shape) + (t.shape[0],)
    eq = lax.eq(lax.broadcast_in_dim(e, full, tuple(range(e.ndim))),
                lax.broadcast_in_dim(t, full, (e.ndim,)))
    out = lax.reduce_or(eq, (e.ndim,))
    return lax.bitwise_not(out) if invert else out


# --- the Array API's unique ------------------------------------------------------------------

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
