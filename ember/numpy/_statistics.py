"""Histograms, binning, covariance and correlation: ``histogram`` (with ``histogram2d``,
``histogramdd`` and ``histogram_bin_edges``), ``bincount``, ``digitize``, ``cov``,
``corrcoef``, and the 1-D ``correlate`` and ``convolve``. The averages, variances and
quantiles are reductions (``_reductions.py``).

Where JAX departs from NumPy on purpose, JAX's behaviour is followed and the docstring says so:
``bincount`` needs a static ``length=`` under ``jit`` and clips negative values into bin 0,
``convolve``/``correlate`` compute integers in floating point.

Example:
    >>> import ember.numpy as enp
    >>> enp.histogram(enp.array([0., 1., 1., 4.]), bins=2)
    (Array([3., 1.], dtype=float32), Array([0., 2., 4.], dtype=float32))
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer
from ember.numpy._core import (
    _arg_error,
    _const,
    _error,
    _is_concrete,
    _lift,
    _promote,
    _promote_inexact,
    _shape_of,
    _static_int,
    _to,
    astype,
)
from ember.numpy._index_tricks import ix_
from ember.numpy._shape import _enp, _slice_axis

__all__ = [
    "histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "bincount", "digitize",
    "cov", "corrcoef", "correlate", "convolve",
]


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


# --- counting and binning --------------------------------------------------------------------

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
        h = np.asarray(x)
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


# --- covariance and correlation --------------------------------------------------------------

def _rows(name, v, what, rowvar):
    (v,) = _promote_inexact(v)
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


def _conv(name, a, v, mode, precision, preferred_element_type):
    lax._check_precision(name, precision)
    x, y = _lift(a), _lift(v)
    if x.ndim != 1 or y.ndim != 1:
        _error(f"{name}: only 1-dimensional inputs are supported, got shapes "
               f"{tuple(x.shape)} and {tuple(y.shape)}")
    if preferred_element_type is None:
        x, y = _promote_inexact(x, y)
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
