"""ember.scipy.linalg: the triangular and Cholesky solvers of ``scipy.linalg`` (as JAX's
``jax.scipy.linalg``: stacks of matrices broadcast), on the cores of ember.numpy.linalg.

Example:
    >>> import ember.scipy.linalg as sla
    >>> sla.solve_triangular(enp.array([[2.0, 0.0], [1.0, 1.0]]), enp.array([2.0, 3.0]),
    ...                      lower=True)
    Array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ember import numpy as enp
from ember.frontend.eager import eager
from ember.numpy import linalg as _la

__all__: list[str] = ["solve_triangular", "cholesky", "cho_factor", "cho_solve"]


@eager
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """``x`` with ``op(a) @ x = b`` for triangular ``a`` (its ``lower`` or upper triangle is
    read; ``unit_diagonal``: its diagonal is taken as ones), ``op`` by ``trans``: 0/"N" as is,
    1/"T" and 2/"C" transposed. By substitution, one row per step."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        _la._error(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    transposed = trans in (1, 2, "T", "C")

    def solve(t, r):
        if transposed:
            t = enp.swapaxes(t, -1, -2)
        return _la._triangular_core(t, r, lower != transposed, unit_diagonal)
    return _la._solve_with("solve_triangular", a, b, solve, np.ndim(b) == np.ndim(a) - 1)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of symmetric positive definite matrices: upper (``a = U.T @ U``,
    scipy's default) or ``lower``."""
    return _la.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for :func:`cho_solve`: the Cholesky factor and which triangle it is (a
    Python bool, static for ``cho_solve``)."""
    return cholesky(a, lower=lower), lower


@eager
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``x`` with ``a @ x = b`` from ``cho_factor(a)``'s ``(c, lower)``: two triangular
    solves."""
    c, lower = c_and_lower

    def solve(t, r):
        low = t if lower else enp.swapaxes(t, -1, -2)
        y = _la._triangular_core(low, r, True, False)
        return _la._triangular_core(enp.swapaxes(low, -1, -2), y, False, False)
    return _la._solve_with("cho_solve", c, b, solve, np.ndim(b) == np.ndim(c) - 1)
