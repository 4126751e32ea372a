"""Polynomials as 1-D coefficient arrays, highest power first: construction from roots
(``poly``), arithmetic (``polyadd``, ``polysub``, ``polymul``, ``polydiv``), calculus
(``polyder``, ``polyint``), evaluation (``polyval``), least-squares fitting (``polyfit``) and
the Vandermonde matrix (``vander``).

Example:
    >>> import ember.numpy as enp
    >>> enp.polyval(enp.array([2, 5, 1]), 3)    # 2*3**2 + 5*3 + 1
    Array(34, dtype=int32)
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
    _error,
    _lift,
    _promote,
    _promote_inexact,
    _static_int,
    _to,
)
from ember.numpy._shape import _enp, _slice_axis

__all__ = [
    "poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyval",
    "polyfit", "vander",
]


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
