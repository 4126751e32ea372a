"""Index arrays and index helpers (NumPy's ``index_tricks``): diagonal and triangle
indices, flat and multi-dimensional index conversion (``unravel_index``,
``ravel_multi_index``), ``ix_``, and the host-side ``mgrid``, ``ogrid``, ``r_``, ``c_``,
``s_`` and ``index_exp``.

Shapes, ``n``, ``k`` and ``m`` are static; the grids and concatenators build their results on
the host.

Example:
    >>> import ember.numpy as enp
    >>> enp.unravel_index(enp.array([5, 7]), (2, 4))
    (Array([1, 1], dtype=int32), Array([1, 3], dtype=int32))
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ember import dtypes, lax
from ember.errors import ConcretizationError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, user_where
from ember.numpy._core import (
    _arg_error,
    _error,
    _promote,
    _static_int,
    _to,
)
from ember.numpy._shape import _enp

__all__ = [
    "diag_indices", "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "unravel_index", "ravel_multi_index", "ix_", "mgrid", "ogrid", "r_",
    "c_", "s_", "index_exp",
]


# --- diagonals and triangles -----------------------------------------------------------------

def _index_arrays(arrays):
    dt = dtypes.default_int()
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


def _tri_indices(name, np_fn, n, k, m):
    try:
        n = operator.index(n)
        k = operator.index(k)
        m = n if m is None else operator.index(m)
    except ConcretizationError:
        raise
    except TypeError as e:
        _error(f"{name}: n, k and m must be static integers ({e})")
    if n < 0 or m < 0:
        _error(f"{name}: n and m must be non-negative, got n={n}, m={m}")
    rows, cols = np_fn(n, k, m)
    dt = dtypes.default_int()
    return _enp().asarray(rows.astype(dt)), _enp().asarray(cols.astype(dt))


def tril_indices(n, k=0, m=None):
    """The (row, column) indices of the lower triangle (at and below the ``k``-th diagonal)
    of an ``n`` x ``m`` array; ``n``, ``k``, ``m`` are static."""
    return _tri_indices("tril_indices", np.tril_indices, n, k, m)


def triu_indices(n, k=0, m=None):
    """The (row, column) indices of the upper triangle (at and above the ``k``-th diagonal)
    of an ``n`` x ``m`` array; ``n``, ``k``, ``m`` are static."""
    return _tri_indices("triu_indices", np.triu_indices, n, k, m)


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


# --- flat and multi-dimensional indices ------------------------------------------------------

def _dims(name, shape):
    try:
        dims = (operator.index(shape),) if np.ndim(shape) == 0 and not isinstance(
            shape, tuple | list) else tuple(operator.index(d) for d in shape)
    except ConcretizationError:
        raise
    except TypeError:
        _error(f"{name}: the shape must be a static int or sequence of ints, got {shape!r}")
    if builtins.any(d < 1 for d in dims):
        _error(f"{name}: dimensions must be positive, got {dims}")
    return dims


def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of the flat ``indices``, one array per
    dimension. As in JAX, ``-size <= i < 0`` count from the end and other out-of-range
    indices are clipped (to the first or last element).

    Example:
        >>> enp.unravel_index(enp.array([5, 7]), (2, 4))
        (Array([1, 1], dtype=int32), Array([1, 3], dtype=int32))
    """
    return _unravel_index(indices, _dims("unravel_index", shape))


@eager
def _unravel_index(indices, dims):
    enp = _enp()
    (x,) = _promote(indices)
    if not dtypes.is_int(x.dtype):
        _error(f"unravel_index: only integer indices are permitted, got {x.dtype}")
    out = [None] * len(dims)
    rest = x
    for i in reversed(range(len(dims))):
        out[i] = enp.remainder(rest, dims[i])
        rest = enp.floor_divide(rest, dims[i])
    res = []
    for s, o in zip(dims, out):
        o = enp.where(enp.less(rest, -1), 0, o) if not dtypes.is_unsigned(x.dtype) else o
        res.append(enp.where(enp.greater(rest, 0), s - 1, o))
    return tuple(res)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices in an array of shape ``dims`` of the coordinate arrays ``multi_index``.
    ``mode``: "raise" (needs concrete indices, as in JAX: use "wrap" or "clip" under jit),
    "wrap" or "clip"; ``order`` "C" or "F".

    Example:
        >>> enp.ravel_multi_index((enp.array([1, 0]), enp.array([2, 3])), (2, 4))
        Array([6, 3], dtype=int32)
    """
    dims = _dims("ravel_multi_index", dims)
    multi_index = tuple(multi_index)
    if len(multi_index) != len(dims):
        _error(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} "
               "dimensions")
    if mode not in ("raise", "wrap", "clip"):
        _error(f"ravel_multi_index: invalid mode={mode!r}; expected 'raise', 'wrap' or 'clip'")
    if order not in ("C", "F"):
        _error(f"ravel_multi_index: invalid order={order!r}; expected 'C' or 'F'")
    for i in multi_index:
        dt = np.dtype(i.dtype) if hasattr(i, "dtype") else np.asarray(i).dtype
        if not np.issubdtype(dt, np.integer):
            _error(f"ravel_multi_index: only integer indices are permitted, got {dt}")
    if mode == "raise":
        if builtins.any(isinstance(i, Tracer) for i in multi_index):
            _error("ravel_multi_index: mode='raise' needs concrete indices to check; under "
                   "jit use mode='wrap' or mode='clip'")
        for i, d in zip(multi_index, dims):
            h = np.asarray(i)
            if np.any((h < 0) | (h >= d)):
                _error(f"ravel_multi_index: invalid entry in coordinates array (an index "
                       f"outside [0, {d}))")
    return _ravel_multi_index(multi_index, dims, mode, order)


@eager
def _ravel_multi_index(multi_index, dims, mode, order):
    enp = _enp()
    idx = _promote(*multi_index) if multi_index else []
    if mode == "clip":
        idx = [enp.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [enp.remainder(i, d) for i, d in zip(idx, dims)]
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    else:
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    if not idx:
        return _to(0, dtypes.default_int())
    out = None
    for i, s in zip(idx, strides):
        term = enp.multiply(i, int(s))
        out = term if out is None else enp.add(out, term)
    return _to(out, out.dtype)


# --- open meshes, grids and concatenators ----------------------------------------------------

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
        return h.astype(dtypes.default_int())
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
