"""Array creation beyond ``_core.py``'s and ``_shape.py``'s: ``geomspace`` (on
``logspace``), ``copy``, ``empty_like`` and ``diagflat``.

Example:
    >>> import ember.numpy as enp
    >>> enp.geomspace(1, 1000, 4)
    Array([   1.,   10.,  100., 1000.], dtype=float32)
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer
from ember.numpy._core import (
    _axes,
    _const,
    _error,
    _is_concrete,
    _to,
)
from ember.numpy._placement import placed
from ember.numpy._shape import _endpoints, _enp, _float_compute, _linspace_dtype

__all__ = [
    "geomspace", "copy", "empty_like", "diagflat",
]


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
def copy(a, order=None):
    """A copy of ``a`` in a buffer of its own (donating either leaves the other as it is)."""
    return _enp().array(a, copy=True, order=order)


@placed
def empty_like(prototype, dtype=None, shape=None):
    """An array like ``prototype`` (its dtype and shape unless given); ember fills it with
    zeros, as JAX does."""
    return _enp().zeros_like(prototype, dtype, shape)


@eager
def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal.

    Example:
        >>> enp.diagflat(enp.array([[1, 2]]))
        Array([[1, 0], [0, 2]], dtype=int32)
    """
    return _enp().diag(_enp().ravel(v), k)
