"""Discrete calculus on sampled data: differences (``diff``, ``ediff1d``), ``gradient``,
phase unwrapping (``unwrap``), integration by the trapezoidal rule (``trapezoid``) and
piecewise-linear interpolation (``interp``).

Example:
    >>> import ember.numpy as enp
    >>> enp.diff(enp.array([1, 4, 9, 16]))
    Array([3, 5, 7], dtype=int32)
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _arg_error,
    _axes,
    _error,
    _is_concrete,
    _lift,
    _promote,
    _promote_inexact,
    astype,
)
from ember.numpy._shape import _enp, _slice_axis

__all__ = [
    "diff", "ediff1d", "gradient", "unwrap", "trapezoid", "interp",
]


# --- differences -----------------------------------------------------------------------------

def _diff1(x, ax):
    n = x.shape[ax]
    hi = _slice_axis(x, ax, builtins.min(1, n), n)
    lo = _slice_axis(x, ax, 0, builtins.max(n - 1, 0))
    return lax.ne(hi, lo) if dtypes.is_bool(x.dtype) else lax.sub(hi, lo)


@eager
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``a[1:] - a[:-1]``, repeated), after
    joining ``prepend``/``append`` (scalars are broadcast to one slice); bools use ``!=``.

    Example:
        >>> enp.diff(enp.array([[1, 3, 6], [0, 5, 5]]), axis=1, prepend=0)
        Array([[1, 2, 3], [0, 5, 0]], dtype=int32)
    """
    x = _lift(a)
    n = operator.index(n)
    if n == 0:
        return x
    if n < 0:
        _error(f"diff: order must be non-negative but got {n}")
    if x.ndim == 0:
        _error("diff: requires input that is at least one dimensional; got a 0-d array")
    (ax,) = _axes(axis, x.ndim)
    def one_slice(e):
        e = _enp().asarray(e)
        if e.ndim == 0:
            e = _enp().broadcast_to(e, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))
        return e

    parts = ([one_slice(prepend)] if prepend is not None else []) + [x] + \
        ([one_slice(append)] if append is not None else [])
    if len(parts) > 1:
        x = _enp().concatenate(parts, axis=ax)
    for _ in range(n):
        x = _diff1(x, ax)
    return x


@eager
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened ``ary``, with ``to_begin`` and
    ``to_end`` (cast to ``ary``'s dtype, as in JAX) joined before and after."""
    x = _enp().ravel(ary)
    if dtypes.is_bool(x.dtype):
        _error("ediff1d: boolean subtract is not supported; use not_equal or logical_xor")
    parts = [_diff1(x, 0)]
    if to_begin is not None:
        parts.insert(0, _enp().ravel(astype(to_begin, x.dtype)))
    if to_end is not None:
        parts.append(_enp().ravel(astype(to_end, x.dtype)))
    return _enp().concatenate(parts) if len(parts) > 1 else parts[0]


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


# --- integration and interpolation -----------------------------------------------------------

@eager
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    (1-D, or of ``y``'s shape) or spaced ``dx`` apart."""
    enp = _enp()
    yv = _lift(y)
    if yv.ndim == 0:
        _error("trapezoid: y must be at least 1-D")
    (ax,) = _axes(axis, yv.ndim)
    if x is None:
        (yv,) = _promote_inexact(yv)
        d = dx
    else:
        yv, xv = _promote_inexact(yv, x)
        if xv.ndim == 1:
            if xv.shape[0] != yv.shape[ax]:
                _error(f"trapezoid: x of shape {tuple(xv.shape)} does not match axis {ax} of "
                       f"y's shape {tuple(yv.shape)}")
            d = diff(xv)
        else:
            d = enp.moveaxis(diff(xv, axis=ax), ax, -1)
    yv = enp.moveaxis(yv, ax, -1)
    n = yv.shape[-1]
    last = yv.ndim - 1
    s = enp.add(_slice_axis(yv, last, builtins.min(1, n), n),
                _slice_axis(yv, last, 0, builtins.max(n - 1, 0)))
    return enp.multiply(0.5, enp.sum(enp.multiply(d, s), axis=-1))


@eager
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) (1-D, ``xp`` increasing)
    at ``x``; ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside ``xp``'s range. With
    ``period``, the points repeat with that period (``xp`` need not be sorted, ``left`` and
    ``right`` are ignored), as in NumPy.

    Example:
        >>> enp.interp(np.array([1., 5.]), np.array([0., 2., 4.]), np.array([0., 1., 0.]),
        ...            period=6)
        Array([0.5, 0. ], dtype=float32)
    """
    enp = _enp()
    xpt, fpt = _lift(xp), _lift(fp)
    if xpt.ndim != 1 or xpt.shape != fpt.shape:
        _error(f"interp: xp and fp must be one-dimensional arrays of equal size, got shapes "
               f"{tuple(xpt.shape)} and {tuple(fpt.shape)}")
    if xpt.shape[0] == 0:
        _error("interp: xp and fp must not be empty")
    xv, xpv = _promote_inexact(x, xpt)
    (fpv,) = _promote_inexact(fpt)
    if period is not None:
        if np.ndim(period) != 0:
            _error(f"interp: period must be a scalar, got shape {np.shape(period)}")
        if _is_concrete(period) and float(period) == 0:
            _error("interp: period must be a non-zero value")
        p = enp.abs(_promote_inexact(period)[0])
        xv, xpv = enp.remainder(xv, p), enp.remainder(xpv, p)
        xpv, fpv = lax.sort_key_val(xpv, fpv)
        xpv = enp.concatenate([xpv[-1:] - p, xpv, xpv[:1] + p])
        fpv = enp.concatenate([fpv[-1:], fpv, fpv[:1]])
        left = right = None
    n = xpv.shape[0]
    i = enp.clip(enp.searchsorted(xpv, xv, side="right"), 1, n - 1)

    def at(v, idx):
        return enp.take(v, idx, mode="clip")

    fp0, fp1 = at(fpv, i - 1), at(fpv, i)
    xp0, xp1 = at(xpv, i - 1), at(xpv, i)
    df, dx = enp.subtract(fp1, fp0), enp.subtract(xp1, xp0)
    delta = enp.subtract(xv, xp0)
    eps = np.spacing(np.asarray(dtypes.finfo(xpv.dtype).eps, np.float64))
    dx0 = enp.less_equal(enp.abs(dx), float(eps))
    f = enp.where(dx0, fp0, enp.add(fp0, enp.multiply(
        enp.divide(delta, enp.where(dx0, 1, dx)), df)))
    first, last = at(fpv, np.int32(0)), at(fpv, np.int32(n - 1))
    f = enp.where(enp.less(xv, at(xpv, np.int32(0))), first if left is None else left, f)
    return enp.where(enp.greater(xv, at(xpv, np.int32(n - 1))),
                     last if right is None else right, f)
