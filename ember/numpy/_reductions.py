"""ember.numpy reductions, statistics, sorting (with partitioning and ``lexsort``) and searching
beyond the first cut.

Reductions take NumPy's ``axis`` (None, int, negative, tuple), ``keepdims``, ``dtype``,
``initial=`` and ``where=``. Sorting is stable with NaN last (``ember.sort``). Functions whose
output size depends on the data (``unique``, ``nonzero``, ``argwhere``, ``flatnonzero``,
``where(cond)``) take JAX's ``size=`` and ``fill_value=``: required under ``jit``; outside
it the size is computed on the host. They compact with a stable sort (no gather needed);
``searchsorted`` and ``quantile`` with traced ``q`` compare against every element (O(n*m)),
fine for moderate sizes.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ember import dtypes, lax
from ember.frontend import tracing
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer
from ember.numpy._core import (
    _arg_error,
    _axes,
    _broadcast,
    _const,
    _error,
    _is_concrete,
    _lift,
    _ordered,
    _promote,
    _static_int,
    _sum_dtype,
    _to,
    astype,
    bool_,
)
from ember.numpy._indexing import take
from ember.numpy._shape import _enp, _slice_axis
from ember.rules.lowering import reduce_init

__all__ = [
    "sum", "prod", "max", "amax", "min", "amin", "mean", "all", "any", "average", "var",
    "std", "median", "quantile", "percentile", "nanquantile", "nanpercentile", "nanmedian",
    "ptp", "count_nonzero", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
    "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd", "nancumsum",
    "nancumprod", "nanargmax", "nanargmin", "sort", "sort_complex", "argsort", "partition",
    "argpartition", "lexsort", "searchsorted", "unique", "nonzero", "argwhere", "flatnonzero",
    "where",
]


# --- helpers ----------------------------------------------------------------------------------

def _no_out(out, name):
    if out is not None:
        _error(f"{name}: out= is not supported (ember arrays are immutable); use the result")


def _keep(out, shape, axes, keepdims):
    if keepdims:
        out = lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return out


def _mask(where, x):
    """``where`` broadcast to ``x``'s shape as bools (None when there is no mask)."""
    if where is None or (isinstance(where, bool | np.bool_) and where):
        return None
    w = astype(where, bool_)
    try:
        np.broadcast_shapes(w.shape, x.shape)
    except ValueError:
        _error(f"where= of shape {tuple(w.shape)} cannot be broadcast to the array's shape "
               f"{tuple(x.shape)}")
    return _broadcast(w, x)[0] if w.shape != x.shape else w


def _masked(x, mask, fill):
    return x if mask is None else lax.select(mask, x, _const(fill, x))


def _isnan(x):
    return lax.ne(x, x)


def _float_dtype(x, dtype=None):
    if dtype is not None:
        return dtypes.canonicalize(dtype)
    return dtypes.to_inexact(x.dtype)


def _compute_dtype(dt):
    """Halves are accumulated in float32 (as JAX does for sums, products and means)."""
    return np.dtype(np.float32) if dtypes.is_float(dt) and np.dtype(dt).itemsize < 4 else dt


def _reduce(x, axes, kind):
    fn = {"sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max,
          "min": lax.reduce_min, "and": lax.reduce_and, "or": lax.reduce_or}[kind]
    return fn(x, axes)


def _move_to_end(x, axes):
    """``x`` with ``axes`` moved last and merged into one axis; returns (x, kept shape)."""
    keep = [i for i in range(x.ndim) if i not in axes]
    x = lax.transpose(x, tuple(keep) + tuple(axes))
    kept = tuple(x.shape[:len(keep)])
    n = int(np.prod([x.shape[len(keep) + i] for i in range(len(axes))], dtype=np.int64))
    return lax.reshape(x, kept + (n,)), kept


def _take_last(x, i):
    """``x[..., i]`` for a static i."""
    start = [0] * (x.ndim - 1) + [i]
    limit = list(x.shape[:-1]) + [i + 1]
    return lax.reshape(lax.slice(x, start, limit), x.shape[:-1])


# --- sum, prod, max, min, all, any, mean --------------------------------------------------

def _sum_like(kind, a, axis, dtype, keepdims, initial, where):
    x = _lift(a)
    dt = _sum_dtype(x, dtype)
    x = _to(x, dt)      # a reduction's result is strongly typed, as in JAX
    if dtypes.is_bool(dt):   # a sum of bools as bool is an or, a product an and
        kind = "or" if kind == "sum" else "and"
    axes = _axes(axis, x.ndim)
    x = _masked(x, _mask(where, x), reduce_init(kind, dt) if kind in ("sum", "prod")
                else kind == "and")
    # Halves accumulate in float32 (as JAX's sums): in float16 a sum of ones stops at 2048.
    out = _to(_reduce(_to(x, _compute_dtype(dt)), axes, kind), dt)
    if initial is not None:
        combine = {"sum": lax.add, "prod": lax.mul, "or": lax.bitwise_or,
                   "and": lax.bitwise_and}[kind]
        out = combine(out, _const(initial, out))
    return _keep(out, x.shape, axes, keepdims)


@eager
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,  # noqa: A001
        where=None):
    """Sum over ``axis`` (None: all axes); bools and small integers sum as the default int."""
    _no_out(out, "sum")
    return _sum_like("sum", a, axis, dtype, keepdims, initial, where)


@eager
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product over ``axis`` (None: all axes)."""
    _no_out(out, "prod")
    return _sum_like("prod", a, axis, dtype, keepdims, initial, where)


def _minmax(name, kind):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, name)
        x = _lift(a)
        _ordered(name, x)
        x = _to(x, x.dtype)     # a reduction's result is strongly typed, as in JAX
        axes = _axes(axis, x.ndim)
        mask = _mask(where, x)
        if initial is None:
            if mask is not None:
                _error(f"{name}: reduction operation {name} does not have an identity, so to "
                       "use a where mask one has to specify 'initial'")
            for ax in axes:
                if x.shape[ax] == 0:
                    _error(f"{name}: zero-size array to reduction operation {name} which has "
                           "no identity")
        out = _reduce(_masked(x, mask, reduce_init(kind, x.dtype)), axes, kind)
        if initial is not None:
            out = (lax.max if kind == "max" else lax.min)(out, _const(initial, out))
        return _keep(out, x.shape, axes, keepdims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}`` over ``axis``; NaN propagates."
    return eager(f)


max = amax = _minmax("max", "max")  # noqa: A001
min = amin = _minmax("min", "min")  # noqa: A001


def _logical(name, kind):
    def f(a, axis=None, out=None, keepdims=False, *, where=None):
        _no_out(out, name)
        x = astype(a, bool_)
        axes = _axes(axis, x.ndim)
        out = _reduce(_masked(x, _mask(where, x), kind == "and"), axes, kind)
        return _keep(out, x.shape, axes, keepdims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: whether {name} elements along ``axis`` are true."
    return eager(f)


all = _logical("all", "and")  # noqa: A001
any = _logical("any", "or")  # noqa: A001


def _count(x, axes, mask, dt):
    """Number of elements reduced over ``axes`` (as ``dt``), per result element."""
    if mask is None:
        n = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
        return n
    return lax.reduce_sum(_to(mask, dt), axes)


def _mean(x, axes, mask, dt, keepdims):
    """Mean in dtype ``dt`` (halves accumulate in float32); result of dtype ``dt``."""
    cdt = _compute_dtype(dt)
    xc = _masked(_to(x, cdt), mask, 0)
    total = lax.reduce_sum(xc, axes)
    count = _count(x, axes, mask, cdt)
    out = lax.div(total, _const(count, total) if not isinstance(count, Tracer) else count)
    return _keep(_to(out, dt), x.shape, axes, keepdims)


@eager
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``; integers are averaged in floating point."""
    _no_out(out, "mean")
    x = _lift(a)
    axes = _axes(axis, x.ndim)
    return _mean(x, axes, _mask(where, x), _float_dtype(x, dtype), keepdims)


# --- var, std, average --------------------------------------------------------------------

def _var(x, axes, mask, dt, ddof, keepdims):
    """Variance in dtype ``dt``; of complex numbers, the mean of |x - mean|^2, real (as
    NumPy's: complex64 gives float32)."""
    cdt = _compute_dtype(dt)
    xc = _to(x, cdt)
    mu = _mean(xc, axes, mask, cdt, True)
    d = lax.sub(xc, lax.broadcast_in_dim(mu, xc.shape, tuple(range(xc.ndim))))
    if dtypes.is_complex(cdt):
        re, im = lax.real(d), lax.imag(d)
        d2 = lax.add(lax.mul(re, re), lax.mul(im, im))
        cdt, dt = dtypes.real_dtype(cdt), dtypes.real_dtype(dt)
    else:
        d2 = lax.mul(d, d)
    sq = _masked(d2, mask, 0)
    total = lax.reduce_sum(sq, axes)
    count = _count(x, axes, mask, cdt)
    if not isinstance(count, Tracer):
        count = _const(count, total)
    denom = lax.sub(count, _const(ddof, count))
    # No degrees of freedom left (ddof >= n): NaN, as JAX's (not inf or a negative value)
    out = lax.select(lax.gt(denom, _const(0, denom)), lax.div(total, denom),
                     _const(np.nan, total))
    return _keep(_to(out, dt), x.shape, axes, keepdims)


@eager
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom (``correction`` too)."""
    _no_out(out, "var")
    if correction is not None:
        ddof = correction
    x = _lift(a)
    axes = _axes(axis, x.ndim)
    return _var(x, axes, _mask(where, x), _float_dtype(x, dtype), ddof, keepdims)


@eager
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Standard deviation over ``axis`` (the square root of :func:`var`)."""
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction)
    return lax.sqrt(v)


@eager
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over ``axis``; ``weights`` of ``a``'s shape or 1-D along ``axis``."""
    x = _lift(a)
    axes = _axes(axis, x.ndim)
    if weights is None:
        avg = mean(x, axis=axes, keepdims=keepdims)
        if not returned:
            return avg
        n = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
        return avg, lax.broadcast_in_dim(_const(n, avg) if avg.ndim == 0 else
                                         _to(n, avg.dtype), avg.shape, ())
    w = _lift(weights)
    x, w = _promote(x, w)
    if not dtypes.is_float(x.dtype):
        x, w = _to(x, dtypes.to_inexact(x.dtype)), _to(w, dtypes.to_inexact(x.dtype))
    if w.shape != x.shape:
        if axis is None:
            _error(f"average: axis must be specified when shapes of a {tuple(x.shape)} and "
                   f"weights {tuple(w.shape)} differ")
        if w.ndim != len(axes) or tuple(w.shape) != tuple(x.shape[i] for i in axes):
            _error(f"average: shape of weights {tuple(w.shape)} must be consistent with shape "
                   f"of a {tuple(x.shape)} along specified axis {axis}")
        order = sorted(range(len(axes)), key=lambda k: axes[k])
        w = lax.transpose(w, tuple(order))
        w = lax.broadcast_in_dim(w, x.shape, tuple(sorted(axes)))
    cdt = _compute_dtype(x.dtype)
    xc, wc = _to(x, cdt), _to(w, cdt)
    wsum = lax.reduce_sum(wc, axes)
    avg = lax.div(lax.reduce_sum(lax.mul(xc, wc), axes), wsum)
    avg = _keep(_to(avg, x.dtype), x.shape, axes, keepdims)
    if returned:
        return avg, _keep(_to(wsum, x.dtype), x.shape, axes, keepdims)
    return avg


# --- median, quantile, percentile ---------------------------------------------------------

def _prep_sorted(a, axis, nan_skip=False):
    """(sorted values along a last merged axis in a float compute dtype, result dtype,
    kept shape, axes, original shape)."""
    x = _lift(a)
    _ordered("median/quantile", x)
    axes = _axes(axis, x.ndim)
    dt = _float_dtype(x)
    xs, kept = _move_to_end(_to(x, _compute_dtype(dt)), axes)
    return lax.sort(xs, dimension=-1), dt, axes, x.shape


def _restore(out, dt, axes, shape, keepdims, lead=()):
    out = _to(out, dt)
    if keepdims:
        out = lax.reshape(out, tuple(lead) + tuple(1 if i in axes else d
                                                   for i, d in enumerate(shape)))
    return out


@eager
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis``: the mean of the two middle values for even counts; NaN if the
    slice has a NaN."""
    _no_out(out, "median")
    xs, dt, axes, shape = _prep_sorted(a, axis)
    n = xs.shape[-1]
    if n == 0:
        res = lax.broadcast_in_dim(_to(np.nan, xs.dtype), xs.shape[:-1], ())
    else:
        hi = _take_last(xs, n // 2)
        if n % 2:
            res = hi
        else:
            lo = _take_last(xs, n // 2 - 1)
            res = lax.div(lax.add(lo, hi), _const(2, lo))
        last = _take_last(xs, n - 1)     # NaNs sort last
        res = lax.select(_isnan(last), last, res)
    return _restore(res, dt, axes, shape, keepdims)


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, a, q, axis, method, keepdims, scale):
    if method not in _METHODS:
        _error(f"{name}: method={method!r} is not supported; use one of {_METHODS}")
    if not isinstance(q, Tracer) and not hasattr(q, "aval"):
        qh = np.asarray(np.asarray(q, dtype=np.float64) / scale)
        if qh.size and not ((qh >= 0) & (qh <= 1)).all():
            _error(f"{name}: {'Percentiles' if scale == 100 else 'Quantiles'} must be in "
                   f"the range [{0}, {scale}]")
        q = qh
    xs, dt, axes, shape = _prep_sorted(a, axis)
    cdt = xs.dtype
    if isinstance(q, np.ndarray):      # static q, already scaled
        qv = _lift(q.astype(cdt))
    else:                              # traced q
        qv = _to(q, cdt)
        if scale != 1:
            qv = lax.div(qv, _const(scale, qv))
    n = xs.shape[-1]
    lead = tuple(qv.shape)
    rest = xs.shape[:-1]
    if n == 0:
        res = lax.broadcast_in_dim(_to(np.nan, cdt), lead + rest, ())
        return _restore(res, dt, axes, shape, keepdims, lead)
    qb = lax.broadcast_in_dim(qv, lead + rest, tuple(range(len(lead))))
    res = _from_sorted(xs, qb, _const(n - 1, qb), method, lead)
    last = lax.broadcast_in_dim(_take_last(xs, n - 1), res.shape,
                                tuple(range(len(lead), res.ndim)))
    res = lax.select(_isnan(last), last, res)
    return _restore(res, dt, axes, shape, keepdims, lead)


def _from_sorted(xs, qb, top, method, lead):
    """The ``qb``-quantiles (of shape ``lead`` + the leading axes of ``xs``) of ``xs`` sorted
    along its last axis, as JAX computes them: the values at the floor and ceiling of the
    virtual index ``qb * top`` (clipped to [0, top]), combined per ``method`` by JAX's
    formulas (its linear ``lo * (1 - g) + hi * g`` keeps inf where NumPy's lerp gives
    inf - inf = NaN; its nearest takes the lower value at a tie, NumPy the even index)."""
    n = xs.shape[-1]
    full = tuple(qb.shape) + (n,)
    vi = lax.mul(qb, top)
    fl = lax.floor(vi)
    hw = lax.sub(vi, fl)
    zero = _const(0, vi)
    lo = lax.min(lax.max(fl, zero), top)
    hi = lax.min(lax.max(lax.ceil(vi), zero), top)
    pos = lax.broadcasted_iota(np.int32, full, len(full) - 1)
    xb = lax.broadcast_in_dim(xs, full, tuple(range(len(lead), len(full))))

    def gather(idx):   # xs[..., idx] for every q: a one-hot select and max over the axis
        iq = lax.broadcast_in_dim(_to(idx, np.int32), full, tuple(range(len(full) - 1)))
        return lax.reduce_max(lax.select(lax.eq(pos, iq), xb, _const(-np.inf, xb)),
                              (len(full) - 1,))

    if method == "lower":
        return gather(lo)
    if method == "higher":
        return gather(hi)
    va, vb = gather(lo), gather(hi)
    if method == "nearest":
        return lax.select(lax.le(hw, _const(0.5, hw)), va, vb)
    if method == "midpoint":
        return lax.mul(lax.add(va, vb), _const(0.5, va))
    return lax.add(lax.mul(va, lax.sub(_const(1, hw), hw)), lax.mul(vb, hw))


@eager
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    """The ``q``-th quantiles over ``axis`` (NumPy's methods; ``linear`` by default); the
    result has ``q``'s dimensions first."""
    _no_out(out, "quantile")
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, 1)


@eager
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    """The ``q``-th percentiles (0..100) over ``axis``; see :func:`quantile`."""
    _no_out(out, "percentile")
    return _quantile("percentile", a, q, axis, interpolation or method, keepdims, 100)


@eager
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median ignoring NaNs (each slice's non-NaN count sets its middle)."""
    _no_out(out, "nanmedian")
    return nanquantile(a, 0.5, axis=axis, keepdims=keepdims)


@eager
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    """Quantiles ignoring NaNs, by any method of :func:`quantile`: per slice, the non-NaN
    count sets the virtual index."""
    _no_out(out, "nanquantile")
    return _nanquantile("nanquantile", a, q, axis, method, keepdims, 1)


@eager
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    """Percentiles ignoring NaNs; see :func:`nanquantile`."""
    _no_out(out, "nanpercentile")
    return _nanquantile("nanpercentile", a, q, axis, method, keepdims, 100)


def _nanquantile(name, a, q, axis, method, keepdims, scale):
    if method not in _METHODS:
        _error(f"{name}: method={method!r} is not supported; use one of {_METHODS}")
    traced = isinstance(q, Tracer) or hasattr(q, "aval")
    if not traced:
        q = np.asarray(np.asarray(q, dtype=np.float64) / scale)
        if q.size and not ((q >= 0) & (q <= 1)).all():
            _error(f"quantiles must be in the range [0, {scale}]")
    xs, dt, axes, shape = _prep_sorted(a, axis)
    lead, rest = tuple(np.shape(q)), xs.shape[:-1]
    cnt = lax.reduce_sum(_to(lax.bitwise_not(_isnan(xs)), xs.dtype), (xs.ndim - 1,))
    if traced:              # a traced q (under jit, or a NumPy/ember array called eagerly)
        qv = _to(q, xs.dtype)
        if scale != 1:
            qv = lax.div(qv, _const(scale, qv))
    else:
        qv = _lift(q.astype(xs.dtype))
    qb = lax.broadcast_in_dim(qv, lead + rest, tuple(range(len(lead))))
    cb = lax.broadcast_in_dim(cnt, lead + rest, tuple(range(len(lead), len(lead + rest))))
    top = lax.max(lax.sub(cb, _const(1, cb)), _const(0, cb))
    res = _from_sorted(xs, qb, top, method, lead)
    res = lax.select(lax.eq(cb, _const(0, cb)), _const(np.nan, res), res)
    return _restore(res, dt, axes, shape, keepdims, lead)


# --- ptp, count_nonzero, cumulative ---------------------------------------------------------

@eager
def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: ``max - min`` over ``axis``."""
    _no_out(out, "ptp")
    x = _lift(a)
    if dtypes.is_bool(x.dtype):
        _error("ptp: numpy boolean subtract is not supported, use bitwise_xor or logical_xor")
    return lax.sub(max(x, axis, keepdims=keepdims), min(x, axis, keepdims=keepdims))


@eager
def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero elements along ``axis`` (as the default int)."""
    x = _lift(a)
    nz = lax.ne(x, _const(0, x)) if not dtypes.is_bool(x.dtype) else x
    return sum(_to(nz, dtypes.default_int()), axis=axis, keepdims=keepdims)


def _cumulative(name, fn, nan_fill=None):
    def f(a, axis=None, dtype=None, out=None):
        _no_out(out, name)
        x = _lift(a)
        if axis is None:
            x, ax = lax.reshape(x, (x.size,)), 0
        else:
            (ax,) = _axes(axis, x.ndim)
        # strongly typed; bools count in the default int, other dtypes are kept (JAX's)
        x = _to(x, dtypes.canonicalize(dtype) if dtype is not None
                else dtypes.default_int() if x.dtype == np.bool_ else x.dtype)
        if nan_fill is not None and dtypes.is_inexact(x.dtype):
            x = lax.select(_isnan(x), _const(nan_fill, x), x)
        if dtypes.is_bool(x.dtype):   # a bool accumulation (dtype=bool) is an or / and
            return (lax.cummax if fn is lax.cumsum else lax.cummin)(x, ax)
        return fn(x, ax) if x.ndim else x     # (lax's accumulate halves in float32)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"NumPy's ``{name}`` along ``axis`` (None: of the flattened array); bools "
                 "accumulate in the default int, float16/bfloat16 in float32, other dtypes "
                 "in their own.")
    return eager(f)


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
nancumsum = _cumulative("nancumsum", lax.cumsum, 0)
nancumprod = _cumulative("nancumprod", lax.cumprod, 1)


@eager
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's ``cumulative_sum`` (``axis`` may be None for 1-D input only); small
    integers accumulate in the default int as ``sum`` (``cumsum`` keeps them, as in JAX)."""
    y = cumsum(x, axis=axis, dtype=_sum_dtype(_lift(x), dtype))
    return _with_initial(y, axis, 0) if include_initial else y


@eager
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's ``cumulative_prod``; small integers accumulate in the default int as
    ``prod`` (``cumprod`` keeps them, as in JAX).

    Example:
        >>> enp.cumulative_prod(enp.asarray([1, 2, 3], enp.uint8), include_initial=True)
        Array([1, 1, 2, 6], dtype=uint32)
    """
    y = cumprod(x, axis=axis, dtype=_sum_dtype(_lift(x), dtype))
    return _with_initial(y, axis, 1) if include_initial else y


def _with_initial(y, axis, value):
    ax = 0 if axis is None else _axes(axis, y.ndim)[0]
    cfg = [(1 if i == ax else 0, 0, 0) for i in range(y.ndim)]
    return lax.pad(y, _to(value, y.dtype), cfg)


# --- nan-reductions -------------------------------------------------------------------------

@eager
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero."""
    _no_out(out, "nansum")
    x = _lift(a)
    if dtypes.is_inexact(x.dtype):
        x = lax.select(_isnan(x), _const(0, x), x)
    return sum(x, axis, dtype, None, keepdims, initial, where)


@eager
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaNs as one."""
    _no_out(out, "nanprod")
    x = _lift(a)
    if dtypes.is_inexact(x.dtype):
        x = lax.select(_isnan(x), _const(1, x), x)
    return prod(x, axis, dtype, None, keepdims, initial, where)


def _notnan_mask(x, where):
    mask = _mask(where, x)
    if dtypes.is_inexact(x.dtype):
        ok = lax.bitwise_not(_isnan(x))
        mask = ok if mask is None else lax.bitwise_and(mask, ok)
    return mask


@eager
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Mean over the non-NaN elements (NaN where there are none)."""
    _no_out(out, "nanmean")
    x = _lift(a)
    axes = _axes(axis, x.ndim)
    return _mean(x, axes, _notnan_mask(x, where), _float_dtype(x, dtype), keepdims)


@eager
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    """Variance over the non-NaN elements."""
    _no_out(out, "nanvar")
    x = _lift(a)
    axes = _axes(axis, x.ndim)
    mask = _notnan_mask(x, where)
    if mask is not None and dtypes.is_inexact(x.dtype):
        x = lax.select(_isnan(x), _const(0, x), x)
    return _var(x, axes, mask, _float_dtype(x, dtype), ddof, keepdims)


@eager
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    """Standard deviation over the non-NaN elements."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where))


def _nanminmax(name, kind):
    plain = max if kind == "max" else min

    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, name)
        x = _lift(a)
        _ordered(name, x)
        if not dtypes.is_float(x.dtype):
            return plain(x, axis, None, keepdims, initial, where)
        nan = _isnan(x)
        y = lax.select(nan, _const(reduce_init(kind, x.dtype), x), x)
        res = plain(y, axis, None, keepdims, initial, where)
        mask = _mask(where, x)
        valid = lax.bitwise_not(nan) if mask is None else \
            lax.bitwise_and(lax.bitwise_not(nan), mask)
        any_valid = any(valid, axis, keepdims=keepdims)
        if initial is not None:
            return res
        return lax.select(any_valid, res, _const(np.nan, res))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: ``{kind}`` ignoring NaNs (NaN for an all-NaN slice)."
    return eager(f)


nanmax = _nanminmax("nanmax", "max")
nanmin = _nanminmax("nanmin", "min")


def _nanarg(name, kind):
    def f(a, axis=None, out=None, keepdims=None):
        enp = _enp()
        if out is not None:
            _error(f"{name}: out= is not supported (ember arrays are immutable)")
        x = _lift(a)
        keepdims = bool(keepdims)
        plain = enp.argmax if kind == "max" else enp.argmin
        if not dtypes.is_float(x.dtype):
            return plain(x, axis=axis, keepdims=keepdims)
        shape = x.shape
        if axis is None:
            x, ax = lax.reshape(x, (x.size,)), 0
        else:
            (ax,) = _axes(axis, x.ndim)
        if x.shape[ax] == 0:
            _error(f"{name}: attempt to get {name[3:]} of an empty sequence")
        nan = lax.ne(x, x)
        y = lax.select(nan, _const(-np.inf if kind == "max" else np.inf, x), x)
        ext = (enp.max if kind == "max" else enp.min)(y, axis=ax, keepdims=True)
        hit = lax.bitwise_and(lax.eq(y, enp.broadcast_to(ext, y.shape)), lax.bitwise_not(nan))
        idx = enp.argmax(astype(hit, np.int8), axis=ax)
        res = enp.where(enp.all(nan, axis=ax), -1, idx)
        if keepdims:
            res = lax.reshape(res, (1,) * len(shape) if axis is None else
                              tuple(1 if i == ax else d for i, d in enumerate(shape)))
        return res
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Index of the first {kind}imum along ``axis`` ignoring NaNs; -1 for an "
                 "all-NaN slice (as in JAX; NumPy raises).")
    return eager(f)


nanargmax = _nanarg("nanargmax", "max")
nanargmin = _nanarg("nanargmin", "min")


# --- sorting ----------------------------------------------------------------------------------

def _sort_axis(a, axis):
    x = _lift(a)
    if axis is None:
        return lax.reshape(x, (x.size,)), 0
    if x.ndim == 0:
        _error(f"sort: axis {axis} is out of bounds for an array of dimension 0")
    return x, _axes(axis, x.ndim)[0]


@eager
def sort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """Sorted copy along ``axis`` (None: flattened); NaN last (first when descending)."""
    if order is not None:
        _error("sort: order= (structured arrays) is not supported")
    x, ax = _sort_axis(a, axis)
    _ordered("sort", x)
    if descending:
        return lax.rev(lax.sort(lax.rev(x, (ax,)), dimension=ax), (ax,))
    return lax.sort(x, dimension=ax)


@eager
def sort_complex(a):
    """``a`` sorted along its last axis in NumPy's order of complex numbers (by real part,
    then imaginary part), as complex numbers (real input is converted, as NumPy's).
    ``sort`` refuses complex numbers, which have no order of their own.

    Example:
        >>> enp.sort_complex(enp.array([1 + 2j, 1 - 1j, -3j]))
        Array([ 0.-3.j,  1.-1.j,  1.+2.j], dtype=complex64)
    """
    x = _lift(a)
    if not dtypes.is_complex(x.dtype):
        x = _to(x, dtypes.complex_dtype(dtypes.to_inexact(x.dtype)))
    if x.ndim == 0:
        _error("sort_complex: axis -1 is out of bounds for an array of dimension 0")
    return lax.sort((lax.real(x), lax.imag(x), x), dimension=x.ndim - 1, num_keys=2)[2]


@eager
def argsort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """Indices that sort ``a`` along ``axis``, stably (equal elements keep their order)."""
    if order is not None:
        _error("argsort: order= (structured arrays) is not supported")
    x, ax = _sort_axis(a, axis)
    _ordered("argsort", x)
    idt = dtypes.default_int()
    iota = lax.broadcasted_iota(idt, x.shape, ax)
    if descending:
        _, idx = lax.sort((lax.rev(x, (ax,)), iota), dimension=ax, num_keys=1)
        last = _const(x.shape[ax] - 1, idx)
        return lax.sub(last, lax.rev(idx, (ax,)))
    return lax.sort((x, iota), dimension=ax, num_keys=1)[1]


def _lt_nan_last(a, b):
    """a < b in the sort order (NaN after everything)."""
    if not dtypes.is_float(a.dtype):
        return lax.lt(a, b)
    return lax.bitwise_or(lax.lt(a, b), lax.bitwise_and(_isnan(b),
                                                        lax.bitwise_not(_isnan(a))))


@eager
def searchsorted(a, v, side="left", sorter=None, *, method=None):
    """Indices where ``v``'s elements would go in the sorted 1-D ``a`` to keep it sorted
    (NaN sorts last, as in NumPy); compares every pair (O(len(a) * v.size))."""
    if side not in ("left", "right"):
        _error(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x, y = _promote(_lift(a), _lift(v))
    if x.ndim != 1:
        _error(f"searchsorted: a must be 1-D, got shape {tuple(x.shape)}")
    if sorter is not None:   # x[sorter] == x sorted by the inverse permutation of sorter
        s = _lift(sorter)
        inv = argsort(s)
        x = lax.sort((inv, x), num_keys=1)[1]
    n = x.shape[0]
    full = tuple(y.shape) + (n,)
    xb = lax.broadcast_in_dim(x, full, (len(full) - 1,))
    yb = lax.broadcast_in_dim(y, full, tuple(range(y.ndim)))
    before = _lt_nan_last(xb, yb) if side == "left" else \
        lax.bitwise_not(_lt_nan_last(yb, xb))
    return lax.reduce_sum(_to(before, _index_dtype(n)), (len(full) - 1,))


def _index_dtype(n: int):
    """JAX's dtype for indices into an axis of ``n``: int32 (under x64 too) unless ``n`` is
    too long for it."""
    return np.dtype(np.int32) if n <= np.iinfo(np.int32).max else dtypes.default_int()


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
        return _to(0, dtypes.default_int())
    (ax,) = _axes(axis, len(shape))
    iota = lax.broadcasted_iota(dtypes.default_int(), shape, ax)
    return lax.sort(tuple(ks[::-1]) + (iota,), dimension=ax, num_keys=len(ks))[-1]


# --- data-dependent sizes: compaction by a stable sort --------------------------------------

def _need_size(name, size):
    if size is None:
        _error(f"{name}: the size of the result depends on the data, so under jit it needs a "
               f"static size= argument (e.g. {name}(x, size=n)); outside jit it is computed "
               "for you")
    return operator.index(size)


def _host_or_size(fn, name, a, size, host_size):
    """Call ``fn`` with ``size``: outside jit a missing size is computed from the data."""
    if size is None and not tracing._TRACES:
        size = host_size(np.asarray(a))
    elif size is None:
        _need_size(name, None)
    return fn(operator.index(size))


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


def _compact(mask, values, size):
    """The elements of each 1-D ``values`` where ``mask``, in order, first; cut or padded
    (with zeros) to ``size``."""
    n = mask.shape[0]
    outs = lax.sort([lax.bitwise_not(mask)] + list(values), num_keys=1)[1:] if n else \
        list(values)
    res = []
    for o in outs:
        if size <= n:
            o = lax.slice(o, (0,), (size,))
        else:
            o = lax.pad(o, _to(0, o.dtype), [(0, size - n, 0)])
        res.append(o)
    return res


def _fill(values, count, fill):
    """``values`` (1-D) with entries at positions >= count replaced by ``fill``."""
    pos = lax.iota(np.int32, values.shape[0])
    keep = lax.lt(pos, lax.broadcast_in_dim(_to(count, np.int32), values.shape, ()))
    f = fill if isinstance(fill, Tracer) else _to(fill, values.dtype)
    f = _to(f, values.dtype)
    if f.ndim == 0:
        f = lax.broadcast_in_dim(f, values.shape, ())
    return lax.select(keep, values, f)


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one array per dimension. ``size`` (static) pads with
    ``fill_value`` (default 0) or truncates; required under jit."""
    return _host_or_size(lambda s: _nonzero(a, size=s, fill_value=fill_value), "nonzero", a,
                         size, lambda h: int(np.count_nonzero(h)))


@eager
def _nonzero(a, *, size, fill_value=None):
    x = _lift(a)
    if x.ndim == 0:
        _error("nonzero: calling nonzero on 0d arrays is not allowed; use atleast_1d(a)")
    flat = lax.reshape(x, (x.size,))
    mask = flat if dtypes.is_bool(flat.dtype) else lax.ne(flat, _const(0, flat))
    idt = dtypes.default_int()
    (idx,) = _compact(mask, [lax.iota(idt, x.size)], size)
    count = lax.reduce_sum(_to(mask, np.int32), (0,))
    fills = fill_value if isinstance(fill_value, tuple | list) else \
        (0 if fill_value is None else fill_value,) * x.ndim
    if len(fills) != x.ndim:
        _error(f"nonzero: fill_value must be a scalar or a tuple of length {x.ndim}, got "
               f"{fill_value!r}")
    out, stride = [], 1
    strides = []
    for d in reversed(x.shape):
        strides.append(stride)
        stride *= d
    strides = strides[::-1]
    for i, (d, st, fv) in enumerate(zip(x.shape, strides, fills)):
        coord = lax.div(idx, _const(st, idx)) if st != 1 else idx
        if i > 0:
            coord = lax.rem(coord, _const(d, coord))
        out.append(_fill(coord, count, fv))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened ``a``."""
    return _host_or_size(lambda s: _flatnonzero(a, size=s, fill_value=fill_value),
                         "flatnonzero", a, size, lambda h: int(np.count_nonzero(h)))


@eager
def _flatnonzero(a, *, size, fill_value=None):
    x = _lift(a)
    return _nonzero(lax.reshape(x, (x.size,)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements as an (N, ndim) array."""
    return _host_or_size(lambda s: _argwhere(a, size=s, fill_value=fill_value), "argwhere",
                         a, size, lambda h: int(np.count_nonzero(h)))


@eager
def _argwhere(a, *, size, fill_value=None):
    x = _lift(a)
    if x.ndim == 0:
        flat = _nonzero(lax.reshape(x, (1,)), size=size, fill_value=fill_value)[0]
        return lax.slice(lax.reshape(flat, (size, 1)), (0, 0), (size, 0))
    cols = _nonzero(x, size=size, fill_value=fill_value)
    return lax.concatenate([lax.reshape(c, (size, 1)) for c in cols], 1)


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """``x`` where ``condition`` else ``y``, with broadcasting; with ``condition`` alone, the
    indices of its non-zero elements (``nonzero``, with ``size=`` / ``fill_value=``)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        _error("where: either both or neither of x and y should be given")
    return _where3(condition, x, y)


@eager
def _where3(condition, x, y):
    x, y = _promote(x, y)
    c, x, y = _broadcast(astype(condition, bool_), x, y, name="where")
    return lax.select(c, x, y)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None):
    """Sorted unique elements of the flattened ``ar`` (NaNs collapse into one), or with
    ``axis`` its unique slices along that axis (rows for ``axis=0``, in lexicographic
    order), optionally with first indices, the inverse (``ar``'s shape; with ``axis``, one
    index per slice) and counts. ``size`` (static, required under jit) pads with
    ``fill_value`` (default: the smallest element or slice; index fill: its index; count
    fill: 0) or truncates.

    Example:
        >>> enp.unique(enp.array([[3, 1], [1, 2], [3, 1]]), axis=0)
        Array([[1, 2],
               [3, 1]], dtype=int32)
    """
    if axis is not None:
        (axis,) = _axes(axis, np.ndim(ar))

    def host_size(h):
        if axis is None:
            return int(np.unique(h, equal_nan=equal_nan).size)
        # NumPy does not merge slices holding NaNs along an axis; JAX (and ember) do.
        m = np.moveaxis(h, axis, 0)
        rows = m.reshape(m.shape[0], math.prod(m.shape[1:])).tolist()
        merged = "nan"      # stands for every NaN when they are equal

        def key(v):
            return merged if equal_nan and v != v else v
        return len({tuple(key(v) for v in r) for r in rows})

    return _host_or_size(
        lambda s: _unique(ar, bool(return_index), bool(return_inverse), bool(return_counts),
                          bool(equal_nan), axis, size=s, fill_value=fill_value),
        "unique", ar, size, host_size)


@eager
def _unique(ar, return_index, return_inverse, return_counts, equal_nan, axis, *, size,
            fill_value=None):
    x = _lift(ar)
    # The flattened array's inverse has the array's shape; along an axis, one per slice.
    inv_shape = x.shape if axis is None else (x.shape[axis],)
    if axis is None:
        x, axis = lax.reshape(x, (x.size,)), 0
    order = (axis, *[d for d in range(x.ndim) if d != axis])
    x = lax.transpose(x, order)
    n, rest = x.shape[0], tuple(x.shape[1:])
    rows = lax.reshape(x, (n, math.prod(rest)))     # the slices along axis, one per row
    idt = dtypes.default_int()
    iota = lax.iota(idt, n)
    columns = [lax.reshape(lax.slice_in_dim(rows, j, j + 1, axis=1), (n,))
               for j in range(rows.shape[1])]
    if dtypes.is_complex(rows.dtype):   # NumPy's order of complex numbers: real, then imag
        columns = [part for c in columns for part in (lax.real(c), lax.imag(c))]
    if len(columns) == 1 and n:
        srt, perm = lax.sort((columns[0], iota), num_keys=1)
        srt = lax.reshape(srt, (n, 1))
    else:
        # Rows in lexicographic order: stable sorts by each column, the last first (one sort
        # of every column at once gave IREE a dispatch with more than its 32 bindings).
        perm = iota
        for column in reversed(columns if n > 1 else ()):
            _, perm = lax.sort((take(column, perm), perm), num_keys=1)
        srt = take(rows, perm, axis=0)
    if n:
        prev = lax.concatenate([lax.slice_in_dim(srt, 0, 1), lax.slice_in_dim(srt, 0, n - 1)],
                               0)
        d = lax.ne(srt, prev)
        if dtypes.is_inexact(srt.dtype) and equal_nan:
            d = lax.bitwise_and(d, lax.bitwise_not(lax.bitwise_and(_isnan(srt), _isnan(prev))))
        mask = lax.bitwise_or(lax.reduce_or(d, (1,)), lax.eq(iota, _const(0, iota)))
    else:
        mask = lax.broadcast_in_dim(_to(True, bool_), (0,), ())
    # One start more than size: the count of the last unique kept when size truncates.
    # The sorted values ride along when there is one column (the flattened array).
    one = [lax.reshape(srt, (n,))] if len(columns) == 1 and n else []
    *one, idx, start = _compact(mask, [*one, perm, iota], size + 1)
    nxt = lax.slice(start, (1,), (size + 1,))
    *one, idx, start = [lax.slice(v, (0,), (size,)) for v in (*one, idx, start)]
    count = lax.reduce_sum(_to(mask, np.int32), (0,)) if n else _to(0, np.int32)
    if one:
        vals = lax.reshape(one[0], (size, 1))
    elif n:
        vals = take(rows, idx, axis=0)
    else:
        vals = lax.broadcast_in_dim(_to(0, rows.dtype), (size, rows.shape[1]), ())
    if size:
        keep = lax.lt(lax.iota(np.int32, size), lax.broadcast_in_dim(count, (size,), ()))
        if fill_value is not None:
            fill = lax.broadcast_in_dim(_to(fill_value, rows.dtype), vals.shape, ())
        elif n:     # the smallest slice
            fill = lax.broadcast_in_dim(lax.slice_in_dim(srt, 0, 1), vals.shape, (0, 1))
        else:
            fill = vals
        vals = lax.select(lax.broadcast_in_dim(keep, vals.shape, (0,)), vals, fill)
        if n:
            idx = _fill(idx, count, _take_first(perm))
    vals = lax.transpose(lax.reshape(vals, (size,) + rest), tuple(np.argsort(order)))
    outs = [vals]
    if return_index:
        outs.append(idx)
    if return_inverse:
        if n:
            pos = lax.sub(lax.cumsum(_to(mask, idt), 0), _const(1, iota))
            inv = lax.sort((perm, pos), num_keys=1)[1]
        else:
            inv = iota
        outs.append(lax.reshape(inv, inv_shape))
    if return_counts:
        def past_count(v, offset):     # positions past the uniques count from n
            pos = lax.iota(np.int32, size)
            if offset:
                pos = lax.add(pos, _const(offset, pos))
            return lax.select(lax.lt(pos, lax.broadcast_in_dim(count, (size,), ())), v,
                              lax.broadcast_in_dim(_to(n, idt), (size,), ()))
        outs.append(lax.sub(past_count(nxt, 1), past_count(start, 0)))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _take_first(x):
    return lax.reshape(lax.slice(x, (0,), (1,)), ())

