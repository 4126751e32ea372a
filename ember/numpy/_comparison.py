"""Closeness and equality of arrays: ``isclose`` (elementwise), ``allclose``,
``array_equal`` and ``array_equiv`` (0-d bool results). Integers compare exactly in
``isclose``, as in JAX.

Example:
    >>> import ember.numpy as enp
    >>> enp.isclose(enp.array([1.0, 2.0]), enp.array([1.0, 2.1]))
    Array([ True, False], dtype=bool)
"""

from __future__ import annotations

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _const,
    _promote,
    _promote_broadcast,
    _shape_of,
    _to,
)
from ember.numpy._shape import _enp

__all__ = [
    "isclose", "allclose", "array_equal", "array_equiv",
]


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
