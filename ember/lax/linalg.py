"""ember.lax.linalg: JAX's ``jax.lax.linalg`` (stacks of matrices, the batch axes leading),
on the kernels of ``ember/lax/_linalg.py`` (which ember.numpy.linalg and ember.scipy.linalg
are built on too).

The results are in JAX's order and conventions, which differ from NumPy's in places:
``eigh`` returns ``(eigenvectors, eigenvalues)``, ``lu`` the packed factors, the pivots and
the permutation, ``triangular_solve`` solves ``x @ a = b`` unless ``left_side``.

Example:
    >>> import ember.lax.linalg as lla
    >>> v, w = lla.eigh(enp.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    Array([1., 3.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.lax import _linalg as kernels

__all__ = ["cholesky", "eigh", "lu", "lu_pivots_to_permutation", "qr", "svd",
           "symmetric_product", "triangular_solve", "tridiagonal_solve"]


def _error(msg):
    kernels.error(f"lax.linalg.{msg}")


def _symmetrized(x, name):
    """``(x + x.T) / 2`` in ``x``'s inexact dtype."""
    x = kernels.lift(x)
    if x.ndim < 2:
        kernels.error(f"{name}: expected an array of at least 2 dimensions, got shape "
                      f"{x.shape}")
    x = kernels.to(x, dtypes.to_inexact(x.dtype))
    return (x + kernels.swap(x)) / 2


def _subset(subset_by_index, k, name):
    """The slice of the ``k`` values (ascending index) that ``subset_by_index`` keeps."""
    if subset_by_index is None:
        return slice(None)
    lo, hi = subset_by_index
    if not 0 <= lo <= hi <= k:
        _error(f"{name}: subset_by_index must be (lo, hi) with 0 <= lo <= hi <= {k}, got "
               f"{subset_by_index!r}")
    return slice(lo, hi)


@eager
def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor ``L`` (``x = L @ L.T``); ``symmetrize_input`` first takes
    ``(x + x.T) / 2``, else the lower triangle is read. Not positive definite: NaNs.

    Example:
        >>> lla.cholesky(enp.array([[4.0, 2.0], [2.0, 5.0]]))
        Array([[2., 0.],
               [1., 2.]], dtype=float32)
    """
    return kernels.cholesky(_symmetrized(x, "cholesky") if symmetrize_input else x)


@eager
def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """``(v, w)``: the eigenvectors (columns of ``v``) and the eigenvalues ``w`` (ascending)
    of symmetric matrices; ``lower`` says which triangle is read when not
    ``symmetrize_input``; ``subset_by_index=(lo, hi)`` keeps the eigenvalues lo..hi-1.
    ``sort_eigenvalues`` and ``implementation`` are accepted (they are always sorted).

    Example:
        >>> v, w = lla.eigh(enp.array([[2.0, 0.0], [0.0, 1.0]]))
        >>> w
        Array([1., 2.], dtype=float32)
    """
    w, v = kernels.eigh(x, "eigh", "L" if lower else "U", symmetrize_input)
    keep = _subset(subset_by_index, w.shape[-1], "eigh")
    return v[..., keep], w[..., keep]


@eager
def lu(x):
    """``(lu, pivots, permutation)`` of (stacks of) m x n matrices, LU with partial pivoting:
    ``lu`` holds ``L`` (unit diagonal not stored) and ``U``; ``pivots`` (int32, min(m, n))
    says row i was swapped with row ``pivots[i]``; ``permutation`` (int32, m) is the row
    order, ``x[permutation] = L @ U``.

    Example:
        >>> lla.lu(enp.array([[1.0, 2.0], [3.0, 4.0]]))[2]
        Array([1, 0], dtype=int32)
    """
    packed, perm, piv, out = kernels.lu(x, "lax.linalg.lu")
    return kernels.to(packed, out), piv, kernels.to(perm, np.int32)


@eager
def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The row permutation (int32, ``permutation_size`` long) that applying the swaps of
    :func:`lu`'s ``pivots`` in order to ``0..permutation_size-1`` gives.

    Example:
        >>> lla.lu_pivots_to_permutation(enp.array([2, 2, 2], dtype=enp.int32), 4)
        Array([2, 0, 1, 3], dtype=int32)
    """
    piv = kernels.lift(pivots)
    if piv.ndim < 1 or piv.dtype != np.int32:
        _error(f"lu_pivots_to_permutation: pivots must be an int32 array of at least one "
               f"dimension, got {piv.aval.str_short()}")
    if permutation_size < piv.shape[-1]:
        _error(f"lu_pivots_to_permutation: permutation_size {permutation_size} is smaller than "
               f"the {piv.shape[-1]} pivots")
    return kernels.batched(lambda p: kernels.pivots_to_permutation(p, permutation_size), piv,
                           rank=1)


@eager
def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """``(q, r)``: Householder QR with LAPACK's signs; ``full_matrices`` gives an m x m
    ``q``, else m x k (k = min(m, n)). Column pivoting is not supported.

    Example:
        >>> q, r = lla.qr(enp.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> r
        Array([[-5. , -2.2],
               [ 0. , -0.4]], dtype=float32)
    """
    if pivoting:
        _error("qr: pivoting=True (column pivoting, LAPACK's geqp3) is not supported; use "
               "pivoting=False")
    return kernels.qr(x, "qr", "complete" if full_matrices else "reduced")


@eager
def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """``(u, s, vh)`` (or ``s`` without ``compute_uv``), ``s`` descending;
    ``subset_by_index=(lo, hi)`` keeps singular values lo..hi-1 (with
    ``full_matrices=False``). ``algorithm`` is accepted (one-sided Jacobi is used).

    Example:
        >>> lla.svd(enp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Array([4., 3.], dtype=float32)
    """
    x = kernels.lift(x)
    k = min(x.shape[-2:]) if x.ndim >= 2 else 0
    if subset_by_index is not None and full_matrices:
        _error("svd: subset_by_index needs full_matrices=False")
    keep = _subset(subset_by_index, k, "svd")
    if not compute_uv:
        return kernels.svd(x, "svd", compute_uv=False)[..., keep]
    u, s, vh = kernels.svd(x, "svd", full_matrices)
    if subset_by_index is None:
        return u, s, vh
    return u[..., keep], s[..., keep], vh[..., keep, :]


@eager
def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """``alpha * a @ a.T + beta * c``; ``symmetrize_output`` mirrors the lower triangle onto
    the upper one.

    Example:
        >>> lla.symmetric_product(enp.array([[1.0, 2.0]]), enp.array([[1.0]]), beta=2.0)
        Array([[7.]], dtype=float32)
    """
    a, c = kernels.lift(a_matrix), kernels.lift(c_matrix)
    out = alpha * lax.batch_matmul(a, kernels.swap(a)) + beta * c
    if symmetrize_output:
        out = kernels.tri(out) + kernels.swap(kernels.tri(out, -1))
    return out


@eager
def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """``x`` with ``op(a) @ x = b`` if ``left_side`` else ``x @ op(a) = b``, for triangular
    ``a`` (its ``lower`` or upper triangle read, the diagonal taken as ones if
    ``unit_diagonal``); ``op`` transposes if ``transpose_a``. ``b`` is a stack of matrices.

    Example:
        >>> a = enp.array([[2.0, 0.0], [1.0, 1.0]])
        >>> lla.triangular_solve(a, enp.array([[2.0, 3.0]]), lower=True)
        Array([[-0.5,  3. ]], dtype=float32)
    """
    b = kernels.lift(b)
    if b.ndim < 2:
        _error(f"triangular_solve: b must have at least 2 dimensions, got shape {b.shape}")
    vector = b.ndim == np.ndim(a) - 1
    if left_side:
        return kernels.solve_triangular(a, b, transpose_a, lower, unit_diagonal, vector)
    # x @ op(a) = b is op(a).T @ x.T = b.T
    xt = kernels.solve_triangular(a, kernels.swap(b), not transpose_a, lower, unit_diagonal,
                                  vector)
    return kernels.swap(xt)


@eager
def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """``x`` with ``A @ x = b`` for the tridiagonal ``A`` of sub-, main and super-diagonals
    ``dl``, ``d``, ``du`` (each ``(..., m)``; ``dl[..., 0]`` and ``du[..., m-1]`` unused) and
    ``b`` of shape ``(..., m, n)``, by Gaussian elimination with partial pivoting (LAPACK's
    gtsv, what JAX runs on the CPU).

    Example:
        >>> lla.tridiagonal_solve(enp.array([0.0, 1.0]), enp.array([0.0, 1.0]),
        ...                       enp.array([1.0, 0.0]), enp.array([[2.0], [3.0]]))
        Array([[3.],
               [2.]], dtype=float32)
    """
    if perturb_singular:
        _error("tridiagonal_solve: perturb_singular=True is not supported")
    dl, d, du, b = (kernels.lift(v) for v in (dl, d, du, b))
    if b.ndim < 2 or any(v.shape != b.shape[:-1] for v in (dl, d, du)):
        _error(f"tridiagonal_solve: expected dl, d, du of shape (..., m) and b of shape "
               f"(..., m, n); got {dl.shape}, {d.shape}, {du.shape} and {b.shape}")
    out = dtypes.canonicalize(dtypes.result_type(dl, d, du, b)[0], warn=False)
    if not np.issubdtype(out, np.floating):
        _error(f"tridiagonal_solve: expected floating-point arrays, got {out}")
    dl, d, du = (kernels.move_axis(kernels.to(v, out), -1, 0) for v in (dl, d, du))
    b = kernels.move_axis(kernels.to(b, out), -2, 0)
    m = d.shape[0]
    zero = lax.full_like(d[0], 0)
    # Forward elimination: the carry is row i as the steps before left it (its diagonal,
    # superdiagonal and right-hand side); each step eliminates dl[i + 1], swapping rows i and
    # i + 1 when |dl[i + 1]| > |d[i]|, and emits row i's final (d, du, second
    # superdiagonal fill-in, b).
    def eliminate(row, below):
        d0, u0, b0 = row
        l1, d1, u1, b1 = below
        swap = lax.abs(d0) < lax.abs(l1)
        fact = kernels.where(swap, d0 / l1, l1 / d0)
        keep_row = (d0, u0, zero, b0)
        swap_row = (l1, d1, u1, b1)
        done = tuple(kernels.where(swap if k.ndim == swap.ndim else swap[..., None], s, k)
                     for k, s in zip(keep_row, swap_row))
        f = fact[..., None]
        nxt = (kernels.where(swap, u0 - fact * d1, d1 - fact * u0),
               kernels.where(swap, -fact * u1, u1),
               kernels.where(swap[..., None], b0 - f * b1, b1 - f * b0))
        return nxt, done

    if m > 1:
        du_below = lax.concatenate([du[1:-1], zero[None]], 0)   # du[m-1] is unused
        last, rows = lax.scan(eliminate, (d[0], du[0], b[0]), (dl[1:], d[1:], du_below, b[1:]))
        rows = tuple(lax.concatenate([r, v[None]], 0)
                     for r, v in zip(rows, (last[0], zero, zero, last[2])))
    else:
        rows = (d, zero[None], zero[None], b)

    # Back substitution, from the last row up.
    def substitute(after, row):
        x1, x2 = after
        dd, u1, u2, bb = row
        x = (bb - u1[..., None] * x1 - u2[..., None] * x2) / dd[..., None]
        return (x, x1), x

    z = lax.full_like(b[0], 0)
    _, x = lax.scan(substitute, (z, z), rows, reverse=True)
    return kernels.move_axis(x, 0, -2)
