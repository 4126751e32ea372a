"""The vector and matrix products NumPy 2 added: ``vecdot`` (also the Array API's),
``matvec`` and ``vecmat``; ``matmul`` and ``dot`` are in ``_core.py``, ``tensordot``,
``einsum`` and ``kron`` in ``_shape.py``.

Example:
    >>> import ember.numpy as enp
    >>> enp.vecdot(enp.array([[1., 2.], [3., 4.]]), enp.array([1., 1.]))
    Array([3., 7.], dtype=float32)
"""

from __future__ import annotations

from ember import lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _axes,
    _error,
    _lift,
)
from ember.numpy._shape import _enp

__all__ = [
    "vecdot", "matvec", "vecmat",
]


@eager
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of vectors along ``axis`` (broadcasting the other dimensions), ``x1``
    conjugated (the Array API's and NumPy's).

    Example:
        >>> enp.vecdot(enp.ones((2, 3)), enp.arange(3.))
        Array([3., 3.], dtype=float32)
    """
    enp = _enp()
    a, b = enp._product_operands("vecdot", x1, x2, precision, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        _error("vecdot: x1 and x2 must be at least 1-dimensional")
    a = enp.conjugate(a)
    (ax1,) = _axes(axis, a.ndim)
    (ax2,) = _axes(axis, b.ndim)
    if a.shape[ax1] != b.shape[ax2]:
        _error(f"vecdot: axes must match; got shapes {tuple(a.shape)} and {tuple(b.shape)} "
               f"with axis={axis}")
    a, b = enp.moveaxis(a, ax1, -1), enp.moveaxis(b, ax2, -1)
    out = enp.matmul(enp.expand_dims(a, -2), enp.expand_dims(b, -1))
    return lax.reshape(out, tuple(out.shape[:-2]))


@eager
def matvec(x1, x2, /):
    """The matrix-vector product of the stacks ``x1`` (..., m, n) and ``x2`` (..., n).

    Example:
        >>> enp.matvec(enp.eye(2), enp.array([1., 2.]))
        Array([1., 2.], dtype=float32)
    """
    enp = _enp()
    a, b = _lift(x1), _lift(x2)
    if a.ndim < 2 or b.ndim < 1:
        _error(f"matvec: x1 must be at least 2-D and x2 at least 1-D, got shapes "
               f"{tuple(a.shape)} and {tuple(b.shape)}")
    out = enp.matmul(a, enp.expand_dims(b, -1))
    return lax.reshape(out, tuple(out.shape[:-1]))


@eager
def vecmat(x1, x2, /):
    """The vector-matrix product of the stacks ``x1`` (..., m) and ``x2`` (..., m, n),
    ``x1`` conjugated (NumPy's).

    Example:
        >>> enp.vecmat(enp.array([1., 2.]), enp.eye(2))
        Array([1., 2.], dtype=float32)
    """
    enp = _enp()
    a, b = _lift(x1), _lift(x2)
    if a.ndim < 1 or b.ndim < 2:
        _error(f"vecmat: x1 must be at least 1-D and x2 at least 2-D, got shapes "
               f"{tuple(a.shape)} and {tuple(b.shape)}")
    out = enp.matmul(enp.expand_dims(enp.conjugate(a), -2), b)
    return lax.reshape(out, tuple(out.shape[:-2]) + (out.shape[-1],))
