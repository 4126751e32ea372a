"""Selecting elements and placing values: by a condition (``compress``, ``extract``,
``select``, ``piecewise``, ``place``), by an index array (``choose``, ``put``) and on the
diagonal (``fill_diagonal``).

``compress`` and ``extract`` have a result size that depends on the data: as in JAX, outside
``jit`` it is computed on the host, under ``jit`` a static ``size=`` (with ``fill_value=``) is
required. ``fill_diagonal``, ``put`` and ``place`` are functional (``inplace=False``, as in
JAX).

Example:
    >>> import ember.numpy as enp
    >>> enp.compress(enp.array([True, False, True]), enp.arange(3) * 10)
    Array([ 0, 20], dtype=int32)
"""

from __future__ import annotations

import builtins

import numpy as np

from ember import dtypes, lax
from ember.errors import ConcretizationError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, user_where
from ember.numpy._core import (
    _arg_error,
    _axes,
    _broadcast,
    _error,
    _is_concrete,
    _lift,
    _promote,
    _to,
    astype,
    bool_,
)
from ember.numpy._manipulation import _tile_to_size
from ember.numpy._reductions import _compact, _sized
from ember.numpy._shape import _enp, _slice_axis

__all__ = [
    "compress", "extract", "select", "piecewise", "choose", "place", "put", "fill_diagonal",
]


# --- by a condition --------------------------------------------------------------------------

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


@eager
def select(condlist, choicelist, default=0):
    """Elementwise, the entry of ``choicelist`` whose condition is the first true one in
    ``condlist``, else ``default`` (everything broadcast together).

    Example:
        >>> x = enp.arange(6)
        >>> enp.select([x < 2, x > 3], [x, x ** 2], -1)
        Array([ 0,  1, -1, -1, 16, 25], dtype=int32)
    """
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        _error(f"select: condlist must have length equal to choicelist ({len(condlist)} vs "
               f"{len(choicelist)})")
    if not condlist:
        _error("select: condlist must be non-empty")
    choices = _promote(default, *choicelist)
    conds = [astype(c, bool_) for c in condlist]
    everything = _broadcast(*conds, *choices, name="select")
    conds, choices = everything[:len(conds)], everything[len(conds):]
    out = choices[0]
    for c, v in reversed(list(zip(conds, choices[1:]))):
        out = lax.select(c, v, out)
    return out


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


# --- by an index array -----------------------------------------------------------------------

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


# --- on the diagonal -------------------------------------------------------------------------

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
