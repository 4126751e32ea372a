"""More of NumPy's API, as ``jax.numpy`` has it: differences, closeness tests, selection,
interpolation, counting, statistics, index arithmetic, polynomials, convolutions and
floating-point decomposition.

Everything is composed from existing ember.numpy and ember.lax functions. Where JAX departs
from NumPy on purpose, JAX's behaviour is followed and the docstring says so: ``bincount``
needs a static ``length=`` under ``jit`` and clips negative values into bin 0,
``nanargmax``/``nanargmin`` return -1 for an all-NaN slice, ``unravel_index`` clips
out-of-range indices, ``convolve``/``correlate`` compute integers in floating point,
``isclose`` compares integers exactly, and ``ravel_multi_index(mode="raise")`` needs concrete
indices.

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
from ember.errors import ConcretizationError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer
from ember.numpy import (
    _axes,
    _broadcast,
    _const,
    _error,
    _lift,
    _numeric,
    _promote,
    _promote_broadcast,
    _promote_inexact,
    _to,
    astype,
    bool_,
)
from ember.numpy._placement import placed
from ember.numpy._shape import _endpoints, _enp, _float_compute, _linspace_dtype, _slice_axis

__all__ = [
    "diff", "ediff1d", "isclose", "allclose", "array_equal", "array_equiv", "append", "copy",
    "empty_like", "select", "interp", "nanargmax", "nanargmin", "real", "imag", "rollaxis",
    "bincount", "digitize", "isin", "cov", "corrcoef", "polyval", "geomspace", "trapezoid",
    "tril_indices", "triu_indices", "unravel_index", "ravel_multi_index", "vander",
    "convolve", "correlate", "ldexp", "frexp", "modf", "gcd", "lcm", "angle", "trim_zeros",
]


def _inexact(*args):
    """Promote (JAX's lattice, no broadcasting), then make integers and bools floats."""
    return _promote_inexact(*args)


def _is_concrete(x) -> bool:
    return not isinstance(x, Tracer)


def _host(x) -> np.ndarray:
    return np.asarray(x)


# --- differences ----------------------------------------------------------------------------

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


# --- comparisons ----------------------------------------------------------------------------

@eager
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|``; infinities are close only to themselves,
    NaNs only with ``equal_nan``. Integers compare exactly (as in JAX)."""
    x, y = _promote_broadcast(a, b, name="isclose")
    if not dtypes.is_inexact(x.dtype):
        return lax.eq(x, y)
    real = dtypes.real_dtype(x.dtype)      # complex numbers: by their magnitudes
    rt = _enp().broadcast_to(_to(rtol, real), x.shape)
    at = _enp().broadcast_to(_to(atol, real), x.shape)
    out = lax.le(lax.abs(lax.sub(x, y)), lax.add(at, lax.mul(rt, lax.abs(y))))
    if dtypes.is_complex(x.dtype):      # a part infinite (or NaN): only equal values are close
        isfinite = _enp().isfinite
        either_inf = lax.bitwise_not(lax.bitwise_and(isfinite(x), isfinite(y)))
    else:
        inf = _const(np.inf, x)
        either_inf = lax.bitwise_or(lax.eq(lax.abs(x), inf), lax.eq(lax.abs(y), inf))
    out = lax.select(either_inf, lax.eq(x, y), out)
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return out


@eager
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`), as a 0-d bool
    array."""
    return _enp().all(isclose(a, b, rtol, atol, equal_nan))


def _shape_of(a):
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def _false():
    return _enp().asarray(np.bool_(False))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements (NaNs equal with
    ``equal_nan``), as a 0-d bool array."""
    if _shape_of(a1) != _shape_of(a2):
        return _false()
    return _array_equal(a1, a2, bool(equal_nan))


@eager
def _array_equal(a1, a2, equal_nan):
    x, y = _promote(a1, a2)
    eq = lax.eq(x, y)
    if equal_nan and dtypes.is_inexact(x.dtype):
        eq = lax.bitwise_or(eq, lax.bitwise_and(lax.ne(x, x), lax.ne(y, y)))
    return _enp().all(eq)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere, as a 0-d bool
    array (False when they do not broadcast)."""
    try:
        np.broadcast_shapes(_shape_of(a1), _shape_of(a2))
    except ValueError:
        return _false()
    return _array_equiv(a1, a2)


@eager
def _array_equiv(a1, a2):
    return _enp().all(_enp().equal(a1, a2))


# --- joining, copying, selecting ------------------------------------------------------------

@eager
def append(arr, values, axis=None):
    """``values`` joined after ``arr`` along ``axis`` (None: both flattened)."""
    enp = _enp()
    if axis is None:
        return enp.concatenate([enp.ravel(enp.asarray(arr)), enp.ravel(enp.asarray(values))])
    return enp.concatenate([enp.asarray(arr), enp.asarray(values)], axis=axis)


@eager
def copy(a, order=None):
    """A copy of ``a`` in a buffer of its own (donating either leaves the other as it is)."""
    return _enp().array(a, copy=True, order=order)


@placed
def empty_like(prototype, dtype=None, shape=None):
    """An array like ``prototype`` (its dtype and shape unless given); ember fills it with
    zeros, as JAX does."""
    return _enp().zeros_like(prototype, dtype, shape)


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


# --- interpolation --------------------------------------------------------------------------

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
    xv, xpv = _inexact(x, xpt)
    (fpv,) = _inexact(fpt)
    if period is not None:
        if np.ndim(period) != 0:
            _error(f"interp: period must be a scalar, got shape {np.shape(period)}")
        if _is_concrete(period) and float(period) == 0:
            _error("interp: period must be a non-zero value")
        p = enp.abs(_inexact(period)[0])
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


# --- nan-aware arg-reductions ---------------------------------------------------------------

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


# --- real, imag, angle ---------------------------------------------------------------------

@eager
def real(val):
    """The real part of ``val`` (float32 of complex64; real arrays are their own real part).

    Example:
        >>> enp.real(enp.array([1 + 2j, 3 - 1j]))
        Array([1., 3.], dtype=float32)
    """
    x = _lift(val)
    return lax.real(x) if dtypes.is_complex(x.dtype) else x


@eager
def imag(val):
    """The imaginary part of ``val`` (float32 of complex64; zeros for real arrays).

    Example:
        >>> enp.imag(enp.array([1 + 2j, 3 - 1j]))
        Array([ 2., -1.], dtype=float32)
    """
    x = _lift(val)
    return lax.imag(x) if dtypes.is_complex(x.dtype) else _enp().zeros_like(x)


@eager
def angle(z, deg=False):
    """The counterclockwise angle of ``z`` from the positive real axis, atan2(imag, real),
    in radians (degrees with ``deg``). As in JAX, the result of real input is the default
    float dtype unless ``z`` is a floating array (of 1 or more dimensions), which keeps its
    dtype; complex64 gives float32.

    Example:
        >>> enp.angle(enp.array([-2.0, 1j, 3.0]))
        Array([3.1415927, 1.5707964, 0.       ], dtype=float32)
    """
    enp = _enp()
    x = _lift(z)
    if dtypes.is_complex(x.dtype):
        out = enp.arctan2(lax.imag(x), lax.real(x))
        return enp.degrees(out) if deg else out
    dt = np.dtype(x.dtype)
    if not dtypes.is_float(dt) or x.ndim == 0:
        dt = dtypes.default_float()
    re = lax.convert_element_type(x, dt)
    out = enp.arctan2(lax.broadcast_in_dim(_to(0, re.dtype), re.shape, ()), re)
    return enp.degrees(out) if deg else out


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
    h = _host(x)
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


# --- counting and searching -----------------------------------------------------------------

def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts of each value of the non-negative 1-D integer ``x`` (sums of ``weights`` when
    given). As in JAX: under ``jit`` the static ``length=`` is required (it overrides
    ``minlength``); negative values count in bin 0 and values ``>= length`` are dropped.

    Example:
        >>> enp.bincount(enp.array([0, 1, 1, 3]), length=5)
        Array([1, 2, 0, 1, 0], dtype=int32)
    """
    dt = np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
    if not np.issubdtype(dt, np.integer) and dt != np.bool_:    # bools count as 0 and 1
        _error(f"bincount: x must have an integer or boolean type, got {dt}")
    if len(_shape_of(x)) != 1:
        _error(f"bincount: only 1-dimensional input is supported, got shape {_shape_of(x)}")
    minlength = operator.index(minlength)
    if minlength < 0:
        _error(f"bincount: minlength must be non-negative, got {minlength}")
    if length is None:
        if not _is_concrete(x):
            _error("bincount: the length of the result depends on the values of x, so under "
                   "jit it needs a static length= argument (e.g. bincount(x, length=n))")
        h = _host(x)
        length = builtins.max(minlength, int(h.max()) + 1 if h.size else 0)
    else:
        length = operator.index(length)
        if length < 0:
            _error(f"bincount: length must be non-negative, got {length}")
    if weights is not None and _shape_of(weights) != _shape_of(x):
        _error(f"bincount: shape of weights {_shape_of(weights)} must match shape of x "
               f"{_shape_of(x)}")
    return _bincount(x, weights, length)


@eager
def _bincount(x, weights, length):
    xi = _lift(x)
    if dtypes.is_bool(xi.dtype):
        xi = lax.convert_element_type(xi, np.int32)
    if weights is None:
        w = lax.broadcast_in_dim(_to(1, dtypes.default_int()), xi.shape, ())
    else:
        w = _lift(weights)
        w = _to(w, w.dtype)
    zero = lax.broadcast_in_dim(_to(0, w.dtype), (length,), ())
    if length == 0 or xi.shape[0] == 0:
        return zero
    idx = lax.max(xi, _const(0, xi)) if not dtypes.is_unsigned(xi.dtype) else xi
    return zero.at[idx].add(w)


@eager
def digitize(x, bins, right=False):
    """Index of the bin of ``bins`` (1-D, increasing or decreasing) each ``x`` falls in:
    ``bins[i-1] <= x < bins[i]`` (``<`` and ``<=`` swapped with ``right``)."""
    enp = _enp()
    xv, b = _lift(x), _lift(bins)
    if b.ndim != 1:
        _error(f"digitize: bins must be a 1-dimensional array, got shape {tuple(b.shape)}")
    n = b.shape[0]
    if n == 0:      # int32, as searchsorted's indices (JAX's)
        return lax.broadcast_in_dim(_to(0, np.int32), xv.shape, ())
    side = "left" if right else "right"
    inc = enp.searchsorted(b, xv, side=side)
    dec = enp.subtract(n, enp.searchsorted(lax.rev(b, (0,)), xv, side=side))
    first, last = _slice_axis(b, 0, 0, 1), _slice_axis(b, 0, n - 1, n)
    increasing = lax.reshape(lax.ge(last, first), ())
    return enp.where(increasing, inc, dec)


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


# --- statistics -----------------------------------------------------------------------------

def _rows(name, v, what, rowvar):
    (v,) = _inexact(v)
    if v.ndim > 2:
        _error(f"{name}: {what} has more than 2 dimensions (shape {tuple(v.shape)})")
    v = _enp().atleast_2d(v)
    if not rowvar and v.shape[0] != 1:
        v = lax.transpose(v, (1, 0))
    return v


def _check_weights(w, nobs, what):
    w = _lift(w)
    if w.ndim > 1:
        _error(f"cov: cannot handle multidimensional {what} (shape {tuple(w.shape)})")
    if w.ndim == 0 or w.shape[0] != nobs:
        _error(f"cov: incompatible numbers of samples ({nobs}) and {what} "
               f"(shape {tuple(w.shape)})")
    return w


@eager
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns with
    ``rowvar=False``), with ``y``'s appended; ``ddof`` (default 1, 0 with ``bias``),
    frequency and analytic weights as NumPy. A single variable gives a 0-d result."""
    enp = _enp()
    X = _rows("cov", m, "m", rowvar)
    if X.shape[0] == 0:
        return lax.broadcast_in_dim(_to(0, X.dtype), (0, 0), ())
    if y is not None:
        X = enp.concatenate([X, _rows("cov", y, "y", rowvar)], axis=0)
    if X.shape[1] == 0:     # no observations: NaN (NumPy's 0 / 0, JAX's explicit case)
        shape = () if X.shape[0] == 1 else (X.shape[0],) * 2
        return lax.broadcast_in_dim(_to(np.nan, X.dtype), shape, ())
    if ddof is None:
        ddof = 1 if not bias else 0
    nobs = X.shape[1]
    w = None
    if fweights is not None:
        fw = _check_weights(fweights, nobs, "fweights")
        if not dtypes.is_int(fw.dtype):
            _error(f"cov: fweights must be integer, got {fw.dtype}")
        w = enp.abs(fw)
    aw = None
    if aweights is not None:
        aw = enp.abs(_check_weights(aweights, nobs, "aweights"))
        w = aw if w is None else enp.multiply(w, aw)
    if w is None:
        avg = enp.mean(X, axis=1)
        f = nobs - ddof
    else:
        w = _to(w, X.dtype)
        w_sum = enp.sum(w)
        avg = enp.divide(enp.sum(enp.multiply(X, w), axis=1), w_sum)
        if ddof == 0:
            f = w_sum
        elif aw is None:
            f = enp.subtract(w_sum, ddof)
        else:
            f = enp.subtract(w_sum, enp.divide(enp.multiply(
                ddof, enp.sum(enp.multiply(w, _to(aw, X.dtype)))), w_sum))
    X = enp.subtract(X, enp.expand_dims(avg, 1))
    XT = lax.transpose(X if w is None else enp.multiply(X, w), (1, 0))
    return enp.squeeze(enp.divide(enp.dot(X, XT), f))


@eager
def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients of the rows of ``x`` (and ``y``), clipped to
    [-1, 1]; see :func:`cov`."""
    enp = _enp()
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return enp.divide(c, c)
    std = enp.sqrt(enp.diagonal(c))
    c = enp.divide(enp.divide(c, enp.expand_dims(std, 1)), enp.expand_dims(std, 0))
    return enp.clip(c, -1, 1)


# --- polynomials, sequences, integration ----------------------------------------------------

@eager
def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients ``p`` (highest power first, along axis 0) at ``x``,
    by Horner's rule.

    Example:
        >>> enp.polyval(enp.array([2, 5, 1]), 3)    # 2*3**2 + 5*3 + 1
        Array(34, dtype=int32)
    """
    pa, xa = _promote(p, x)
    if pa.ndim == 0:
        _error("polyval: p must be at least 1-D (the coefficients along axis 0)")
    enp = _enp()
    try:
        shape = np.broadcast_shapes(pa.shape[1:], xa.shape)
    except ValueError:
        _error(f"polyval: coefficients of shape {tuple(pa.shape)} do not broadcast with x of "
               f"shape {tuple(xa.shape)}")
    y = enp.broadcast_to(_to(0, xa.dtype, xa.weak_type), shape)
    for i in range(pa.shape[0]):
        y = enp.add(enp.multiply(y, xa), lax.reshape(_slice_axis(pa, 0, i, i + 1),
                                                     pa.shape[1:]))
    return y


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop`` (both of one
    sign, neither zero; the endpoints are exact).

    Example:
        >>> enp.geomspace(1, 1000, 4)
        Array([   1.,   10.,  100., 1000.], dtype=float32)
    """
    num = operator.index(num) if not isinstance(num, Tracer) else \
        num._concrete("geomspace num")
    if num < 0:
        _error(f"geomspace: number of samples, {num}, must be non-negative")
    for v in (start, stop):
        if _is_concrete(v) and not hasattr(v, "aval"):
            h = np.asarray(v)
            if np.any(h == 0):
                _error("geomspace: geometric sequence cannot include zero")
    if builtins.all(_is_concrete(v) and not hasattr(v, "aval") for v in (start, stop)):
        if np.any(np.sign(np.asarray(start)) != np.sign(np.asarray(stop))):
            _error("geomspace: start and stop of opposite signs need complex numbers, which "
                   "ember does not support")
    return _geomspace(start, stop, num, bool(endpoint), dtype, axis)


@eager
def _geomspace(start, stop, num, endpoint, dtype, axis):
    enp = _enp()
    dt = _linspace_dtype(start, stop, dtype)
    ct = _float_compute(dt)
    a, b, bshape = _endpoints(start, stop, ct, "geomspace")
    sign = lax.sign(a)
    y = enp.logspace(enp.log10(lax.div(a, sign)), enp.log10(lax.div(b, sign)), num,
                     endpoint=endpoint, base=10.0, dtype=ct, axis=0)
    full = (num,) + tuple(bshape)
    bc = lambda v: lax.broadcast_in_dim(v, full, tuple(range(1, len(full))))  # noqa: E731
    y = lax.mul(y, bc(sign))
    if num:
        i = lax.broadcasted_iota(dtypes.int32, full, 0)
        y = lax.select(lax.eq(i, _const(0, i)), bc(a), y)
        if endpoint and num > 1:
            y = lax.select(lax.eq(i, _const(num - 1, i)), bc(b), y)
    (ax,) = _axes(axis, len(full))
    return _to(enp.moveaxis(y, 0, ax), dtypes.canonicalize(dt))


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
        (yv,) = _inexact(yv)
        d = dx
    else:
        yv, xv = _inexact(yv, x)
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


# --- index arithmetic -----------------------------------------------------------------------

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
            h = _host(i)
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


# --- vander, convolve, correlate ------------------------------------------------------------

@eager
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x**0`` (reversed with
    ``increasing``), as exact products; ``N`` defaults to ``len(x)``."""
    xv = _lift(x)
    if xv.ndim != 1:
        _error(f"vander: x must be a one-dimensional array, got shape {tuple(xv.shape)}")
    n = xv.shape[0]
    N = n if N is None else operator.index(N)
    if N < 0:
        _error(f"vander: N must be non-negative, got {N}")
    dt, _ = dtypes.result_type(xv, np.zeros((), np.int32))
    xv = _to(xv, dt)
    if N == 0:
        return lax.broadcast_in_dim(_to(0, dt), (n, 0), ())
    ones = lax.broadcast_in_dim(_to(1, dt), (n, 1), ())
    base = lax.concatenate([ones, lax.broadcast_in_dim(xv, (n, N - 1), (0,))], 1)
    out = lax.cumprod(base, 1)
    return out if increasing else lax.rev(out, (1,))


def _conv(name, a, v, mode, precision, preferred_element_type):
    lax._check_precision(name, precision)
    x, y = _lift(a), _lift(v)
    if x.ndim != 1 or y.ndim != 1:
        _error(f"{name}: only 1-dimensional inputs are supported, got shapes "
               f"{tuple(x.shape)} and {tuple(y.shape)}")
    if preferred_element_type is None:
        x, y = _inexact(x, y)
    else:   # the products accumulate in it, as in JAX
        x, y = (astype(v, preferred_element_type) for v in _promote(x, y))
    if x.shape[0] == 0 or y.shape[0] == 0:
        _error(f"{name}: inputs cannot be empty, got shapes {tuple(x.shape)} and "
               f"{tuple(y.shape)}")
    if mode not in ("full", "same", "valid"):
        _error(f"{name}: mode must be one of 'full', 'same', 'valid', got {mode!r}")
    flip_out = False
    if x.shape[0] < y.shape[0]:
        x, y = y, x
        flip_out = name == "correlate"
    if name == "convolve":
        y = lax.rev(y, (0,))
    w = y.shape[0]
    pad = {"valid": (0, 0), "same": (w // 2, w - w // 2 - 1), "full": (w - 1, w - 1)}[mode]
    xp = lax.pad(x, _to(0, x.dtype), [(pad[0], pad[1], 0)])
    L = xp.shape[0]
    out_len = L - w + 1
    # windows[j, k] = xp[k + j]: w copies of xp laid out in rows of length L + 1.
    flat = lax.reshape(lax.broadcast_in_dim(xp, (w, L), (1,)), (w * L,))
    flat = lax.pad(flat, _to(0, x.dtype), [(0, w, 0)])
    windows = lax.slice(lax.reshape(flat, (w, L + 1)), (0, 0), (w, out_len))
    out = lax.dot_general(y, windows, (((0,), (0,)), ((), ())))
    return lax.rev(out, (0,)) if flip_out else out


@eager
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of the 1-D ``a`` and ``v`` (``mode`` "full", "same" or
    "valid"); integers are computed in floating point, as in JAX."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


@eager
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of the 1-D ``a`` and ``v``: ``c[k] = sum_n a[n + k] * conj(v[n])``
    (``mode`` "valid", "same" or "full"); integers in floating point, as in JAX."""
    return _conv("correlate", a, _enp().conjugate(v), mode, precision, preferred_element_type)


# --- floating-point decomposition, gcd, lcm -------------------------------------------------

_UINT = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _fparams(dt):
    info = dtypes.finfo(dt)
    nmant, minexp, maxexp = int(info.nmant), int(info.minexp), int(info.maxexp)
    nexp = np.dtype(dt).itemsize * 8 - 1 - nmant
    return nmant, minexp, maxexp, nexp, 1 - minexp


def _uconst(v, like):
    return lax.broadcast_in_dim(_lift(np.asarray(v, like.dtype)), like.shape, ())


def _frexp(x):
    """(mantissa, int32 exponent, mask of 0/inf/NaN) of ``x`` by its bits, so that subnormal
    inputs decompose exactly even where the backend flushes them to zero in arithmetic."""
    dt = x.dtype
    nmant, minexp, _, nexp, bias = _fparams(dt)
    ut = _UINT[np.dtype(dt).itemsize]
    width = 8 * ut.itemsize
    b = lax.bitcast_convert_type(x, ut)
    sign = lax.bitwise_and(b, _uconst(1 << (width - 1), b))
    mag = lax.bitwise_and(b, _uconst((1 << (width - 1)) - 1, b))
    frac_mask = (1 << nmant) - 1
    ef = lax.shift_right_logical(mag, _uconst(nmant, mag))
    f = lax.bitwise_and(mag, _uconst(frac_mask, mag))
    i32 = np.dtype(np.int32)
    e_normal = lax.sub(_to(ef, i32), _const(bias - 1, _to(ef, i32)))
    # A subnormal: f = 2**p * 1.xxx with p the position of its highest set bit (counted in
    # 32 bits at least: IREE's SPIR-V lowering has no 16-bit ctlz).
    wide = _to(f, np.dtype(np.uint32)) if width < 32 else f
    p = lax.sub(_const(max(width, 32) - 1, _to(ef, i32)), _to(lax.clz(wide), i32))
    e_sub = lax.add(p, _const(minexp - nmant + 1, p))
    shift = _to(lax.max(lax.sub(_const(nmant, p), p), _const(0, p)), ut)
    f_sub = lax.bitwise_and(lax.shift_left(f, shift), _uconst(frac_mask, f))
    is_sub = lax.eq(ef, _uconst(0, ef))
    e = lax.select(is_sub, e_sub, e_normal)
    fm = lax.select(is_sub, f_sub, f)
    mb = lax.bitwise_or(lax.bitwise_or(sign, fm), _uconst((bias - 1) << nmant, b))
    m = lax.bitcast_convert_type(mb, dt)
    special = lax.bitwise_or(lax.eq(mag, _uconst(0, mag)),
                             lax.eq(ef, _uconst((1 << nexp) - 1, ef)))
    return lax.select(special, x, m), lax.select(special, _const(0, e), e), special


@eager
def frexp(x):
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent``, ``0.5 <= |mantissa| <
    1`` (0, inf and NaN keep ``x`` and exponent 0); the exponent is int32."""
    (x,) = _inexact(x)
    m, e, special = _frexp(x)
    # JAX's derivative of the mantissa, t * 2**-e, through a term that is +0 in value (the
    # bits carry none; see ldexp); 0, inf and NaN are their own mantissas already.
    _, minexp, maxexp, _, _ = _fparams(x.dtype)
    k = lax.max(lax.min(lax.neg(e), _const(maxexp - 1, e)), _const(minexp, e))
    slope = lax.mul(lax.sub(lax.stop_gradient(x), x), _pow2(k, x.dtype))
    return lax.select(special, m, lax.sub(m, slope)), e


def _pow2(k, dt):
    """2**k for int32 ``k`` within the normal exponent range of ``dt``, exactly (by bits)."""
    nmant, _, _, _, bias = _fparams(dt)
    ut = _UINT[np.dtype(dt).itemsize]
    biased = _to(lax.add(k, _const(bias, k)), ut)
    return lax.bitcast_convert_type(lax.shift_left(biased, _uconst(nmant, biased)), dt)


@eager
def ldexp(x1, x2):
    """``x1 * 2**x2`` elementwise (``x2`` integer): exact, overflowing to infinity; a subnormal
    result is rounded once, or flushed to zero where the backend flushes subnormals (the
    CPU does)."""
    (x,) = _inexact(x1)
    (n,) = _numeric(*_promote(x2))      # a bool exponent is 0 or 1, as in JAX
    if not dtypes.is_int(n.dtype):
        _error(f"ldexp: x2 must be an integer array, got {n.dtype}")
    x, n = _broadcast(x, n, name="ldexp")
    dt = x.dtype
    _, minexp, maxexp, _, _ = _fparams(dt)
    big = 4096
    if dtypes.is_unsigned(n.dtype):
        n = lax.min(n, _const(big, n))
    elif n.dtype.itemsize > 2:
        n = lax.max(lax.min(n, _const(big, n)), _const(-big, n))
    n = _to(n, np.int32)
    m, e, special = _frexp(x)
    total = lax.add(lax.add(e, n), _const(-1, e))        # x == (2 m) * 2**total
    lo, hi = _const(minexp, total), _const(maxexp - 1, total)
    s1 = lax.max(lax.min(total, hi), lo)
    s2 = lax.max(lax.min(lax.sub(total, s1), hi), lo)
    r = lax.mul(lax.mul(lax.mul(m, _const(2, m)), _pow2(s2, dt)), _pow2(s1, dt))
    # The mantissa comes from the bits, which carry no derivative: x enters once more through
    # a term that is +0 in value (stop_gradient(x) - x, times 2**n) and has JAX's slope 2**n
    # (its ldexp is x1 * 2**x2). Subtracting +0 keeps r's value, -0.0 included.
    scale = _pow2(lax.max(lax.min(n, hi), lo), dt)
    r = lax.sub(r, lax.mul(lax.sub(lax.stop_gradient(x), x), scale))
    return lax.select(special, x, r)


@eager
def modf(x):
    """``(fractional, integral)`` parts of ``x``, both with ``x``'s sign (NumPy's values for
    infinities: fractional part 0)."""
    enp = _enp()
    (x,) = _inexact(x)
    whole = enp.trunc(x)
    frac = lax.sub(x, whole)
    frac = lax.select(lax.eq(lax.abs(x), _const(np.inf, x)), _const(0, x), frac)
    return enp.copysign(frac, x), whole


def _int_pair(name, x1, x2):
    x, y = _promote_broadcast(x1, x2, name=name)
    if not dtypes.is_int(x.dtype):
        _error(f"{name}: arguments must be integers, got {x.dtype}")
    return x, y


def _gcd(x, y):
    """Euclid's algorithm, elementwise. Signed integers run on -|x| and -|y|, which never
    overflow (|INT_MIN| does, and the loop never ended on it); the result is negated back
    (gcd(INT_MIN, 0) wraps to INT_MIN, as NumPy's)."""
    enp = _enp()
    signed = not dtypes.is_unsigned(x.dtype)

    def cond(c):
        return enp.any(lax.ne(c[1], _const(0, c[1])))

    def body(c):
        a, b = c
        nz = lax.ne(b, _const(0, b))
        safe = lax.select(nz, b, _const(1, b))
        a, b = lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe), _const(0, b))
        swap = lax.gt(a, b) if signed else lax.lt(a, b)      # the larger magnitude first
        return lax.select(swap, b, a), lax.select(swap, a, b)

    if signed:
        x, y = (lax.neg(enp.abs(v)) for v in (x, y))
        return lax.neg(lax.while_loop(cond, body, (x, y))[0])
    return lax.while_loop(cond, body, (x, y))[0]


@eager
def gcd(x1, x2):
    """Greatest common divisor of ``|x1|`` and ``|x2|``, elementwise (integers; gcd(0, 0) is
    0)."""
    return _gcd(*_int_pair("gcd", x1, x2))


@eager
def lcm(x1, x2):
    """Least common multiple of ``|x1|`` and ``|x2|``, elementwise (integers; 0 if either is
    0)."""
    enp = _enp()
    x, y = _int_pair("lcm", x1, x2)
    d = _gcd(x, y)
    zero = lax.eq(d, _const(0, d))
    safe = lax.select(zero, _const(1, d), d)
    # |x| * (|y| / gcd), wrapping on overflow as NumPy's and JAX's (the sign of the wrap too)
    return lax.select(zero, _const(0, d), lax.mul(enp.abs(x), enp.abs(lax.div(y, safe))))

