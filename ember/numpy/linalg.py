"""ember.numpy.linalg: norms (composed from reductions; no decompositions yet).

Example:
    >>> import ember.numpy as enp
    >>> enp.linalg.norm(enp.ones((2, 2)), ord="fro")
    Array(2., dtype=float32)
"""

from __future__ import annotations

import sys

import numpy as np

from ember import dtypes, lax
from ember.errors import EmberError
from ember.frontend.eager import eager

__all__ = ["norm", "UnsupportedNormError"]


class UnsupportedNormError(EmberError, NotImplementedError):
    """A matrix norm that needs a singular value decomposition ('nuc', 2, -2)."""


def _enp():
    return sys.modules["ember.numpy"]


def _error(msg):
    _enp()._error(msg)


def _is_inf(o, sign):
    return not isinstance(o, str) and o is not None and np.isinf(o) and np.sign(o) == sign


@eager
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """Vector and matrix norms, as ``numpy.linalg.norm``.

    Vector ``ord``: None/2, 1, inf, -inf, 0 (count of nonzeros) and any other p
    (``sum(|x|**p)**(1/p)``). Matrix ``ord``: None/'fro', 1, -1, inf, -inf; 'nuc', 2 and -2 need
    an SVD and raise :class:`UnsupportedNormError`. Integers are computed in floating point.
    """
    enp = _enp()
    x = enp._lift(x)
    if not dtypes.is_float(x.dtype):
        x = enp._to(x, dtypes.default_float())
    nd = x.ndim
    if axis is None:
        if ord is None:
            return _l2(x, tuple(range(nd)), keepdims)
        if nd not in (1, 2):
            _error(f"norm: improper number of dimensions to norm: shape {x.shape} with "
                   f"ord={ord!r} needs axis")
        axes = tuple(range(nd))
    else:
        axes = enp._axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    _error(f"norm: improper number of dimensions to norm: axis {axis} for shape {x.shape}")


def _l2(x, axes, keepdims):
    enp = _enp()
    return enp.sqrt(enp.sum(lax.mul(x, x), axis=axes, keepdims=keepdims))


def _vector_norm(x, ord, axes, keepdims):  # noqa: A002
    enp = _enp()
    if isinstance(ord, str):
        _error(f"norm: invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return _l2(x, axes, keepdims)
    a = enp.abs(x)
    if _is_inf(ord, 1):
        return enp.max(a, axis=axes, keepdims=keepdims)
    if _is_inf(ord, -1):
        return enp.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        nz = enp._to(lax.ne(x, enp._const(0, x)), x.dtype)
        return enp.sum(nz, axis=axes, keepdims=keepdims)
    if ord == 1:
        return enp.sum(a, axis=axes, keepdims=keepdims)
    p = float(ord)
    s = enp.sum(enp.power(a, enp._to(p, x.dtype)), axis=axes, keepdims=keepdims)
    return enp.power(s, enp._to(1.0 / p, x.dtype))


def _matrix_norm(x, ord, axes, keepdims):  # noqa: A002
    enp = _enp()
    r, c = axes
    if ord is None or ord == "fro":
        return _l2(x, axes, keepdims)
    if ord in ("nuc", 2, -2):
        raise UnsupportedNormError(
            f"ember.numpy.linalg.norm: matrix norm ord={ord!r} needs a singular value "
            "decomposition, which ember does not have yet; supported matrix ords are None, "
            "'fro', 1, -1, inf and -inf")
    a = enp.abs(x)
    if ord in (1, -1):
        inner, outer = r, c
    elif _is_inf(ord, 1) or _is_inf(ord, -1):
        inner, outer = c, r
    else:
        _error(f"norm: invalid norm order {ord!r} for matrices")
    reduce = enp.max if (ord == 1 or _is_inf(ord, 1)) else enp.min
    s = enp.sum(a, axis=inner, keepdims=True)
    out = reduce(s, axis=outer, keepdims=True)
    if not keepdims:
        out = enp.squeeze(out, axis=(r, c))
    return out
