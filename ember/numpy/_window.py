"""Window functions of ``M`` points (``M`` static), in the default float dtype:
``bartlett``, ``blackman``, ``hamming``, ``hanning`` and ``kaiser``.

Example:
    >>> import ember.numpy as enp
    >>> enp.bartlett(5)
    Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
"""

from __future__ import annotations

import builtins

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _static_int,
)
from ember.numpy._shape import _enp

__all__ = [
    "bartlett", "blackman", "hamming", "hanning", "kaiser",
]


def _points(name, M):
    M = _static_int(M, "M", name)
    dt = dtypes.default_float()
    if M <= 1:
        return None, _enp().ones((builtins.max(M, 0),), dt)
    return lax.iota(dt, M), M


def _cosine_window(name, M, terms):
    n, M = _points(name, M)
    if n is None:
        return M
    enp = _enp()
    out = None
    for i, c in enumerate(terms):
        t = c if i == 0 else c * enp.cos(2 * i * np.pi * n / (M - 1))
        out = t if out is None else out + t
    return out


@eager
def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points.

    Example:
        >>> enp.bartlett(5)
        Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    n, M = _points("bartlett", M)
    if n is None:
        return M
    return 1 - _enp().abs(2 * n + 1 - M) / (M - 1)


@eager
def blackman(M):
    """The Blackman window of ``M`` points.

    Example:
        >>> enp.blackman(3)
        Array([-1.3877788e-17,  1.0000000e+00, -1.3877788e-17], dtype=float32)
    """
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


@eager
def hamming(M):
    """The Hamming window of ``M`` points.

    Example:
        >>> enp.hamming(3)
        Array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _cosine_window("hamming", M, (0.54, -0.46))


@eager
def hanning(M):
    """The Hann window of ``M`` points.

    Example:
        >>> enp.hanning(3)
        Array([0., 1., 0.], dtype=float32)
    """
    return _cosine_window("hanning", M, (0.5, -0.5))


@eager
def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``.

    Example:
        >>> enp.kaiser(3, 0.0)
        Array([1., 1., 1.], dtype=float32)
    """
    n, M = _points("kaiser", M)
    if n is None:
        return M
    enp = _enp()
    alpha = 0.5 * (M - 1)
    return enp.i0(beta * enp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / enp.i0(beta)
