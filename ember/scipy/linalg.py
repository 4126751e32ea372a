"""ember.scipy.linalg: ``scipy.linalg`` as JAX's ``jax.scipy.linalg`` has it (stacks of
matrices broadcast): triangular, Cholesky and LU solvers, decompositions (lu, qr, svd, eigh,
polar), the matrix exponential, Sylvester's equation and special matrices, on the kernels
of ember.lax.linalg (``ember/lax/_linalg.py``) and ember.numpy.linalg.

Example:
    >>> import ember.scipy.linalg as sla
    >>> sla.solve_triangular(enp.array([[2.0, 0.0], [1.0, 1.0]]), enp.array([2.0, 3.0]),
    ...                      lower=True)
    Array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ember import dtypes, lax
from ember import numpy as enp
from ember._traceback import user_where
from ember.errors import ArgumentError
from ember.frontend.eager import eager
from ember.lax import _linalg as kernels
from ember.numpy import linalg as _la

__all__: list[str] = [
    "solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor", "lu_solve",
    "det", "inv", "solve", "qr", "svd", "eigh", "expm", "polar", "solve_sylvester",
    "block_diag", "toeplitz", "hankel", "circulant", "companion", "leslie", "hilbert",
    "pascal", "helmert"]


def _bad_argument(msg):
    raise ArgumentError(f"{msg}\n  at {user_where()}")


@eager
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """``x`` with ``op(a) @ x = b`` for triangular ``a`` (its ``lower`` or upper triangle is
    read; ``unit_diagonal``: its diagonal is taken as ones), ``op`` by ``trans``: 0/"N" as is,
    1/"T" and 2/"C" transposed. By substitution, one row per step."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        kernels.error(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return kernels.solve_triangular(a, b, trans in (1, 2, "T", "C"), lower, unit_diagonal,
                                    np.ndim(b) == np.ndim(a) - 1)


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
        low = t if lower else kernels.swap(t)
        y = kernels.triangular_core(low, r, True, False)
        return kernels.triangular_core(kernels.swap(low), y, False, False)
    return kernels.solve_with("cho_solve", c, b, solve, np.ndim(b) == np.ndim(c) - 1)


# --- LU -----------------------------------------------------------------------------------------

@eager
def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """The LU decomposition ``a = P @ L @ U`` of (stacks of) m x n matrices with partial
    pivoting: ``(P, L, U)``, or ``(P @ L, U)`` if ``permute_l``; ``P`` m x m (a permutation
    matrix in ``a``'s float dtype), ``L`` m x k unit lower triangular, ``U`` k x n upper
    triangular, k = min(m, n).

    Example:
        >>> p, l, u = sla.lu(enp.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> u
        Array([[3.       , 4.       ],
               [0.       , 0.6666666]], dtype=float32)
    """
    packed, perm, _, out = kernels.lu(a, "lu")
    m, n = packed.shape[-2:]
    k = builtins.min(m, n)
    low = enp.tril(packed, -1)[..., :, :k] + enp.eye(m, k, dtype=packed.dtype)
    up = enp.triu(packed)[..., :k, :]
    p = enp._to(perm[..., None, :] == lax.iota(np.int32, m)[:, None], packed.dtype)
    if permute_l:
        return enp._to(enp.matmul(p, low), out), enp._to(up, out)
    return enp._to(p, out), enp._to(low, out), enp._to(up, out)


@eager
def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` for :func:`lu_solve`, as LAPACK's getrf: ``lu`` holds ``L`` (unit
    diagonal not stored) below the diagonal and ``U`` on and above it; ``piv`` (int32, from
    0) says that row i was swapped with row ``piv[i]`` at step i.

    Example:
        >>> sla.lu_factor(enp.array([[1.0, 2.0], [3.0, 4.0]]))[1]
        Array([1, 1], dtype=int32)
    """
    packed, _, piv, out = kernels.lu(a, "lu_factor")
    return enp._to(packed, out), piv


@eager
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``x`` with ``a @ x = b`` (``trans`` 0) or ``a.T @ x = b`` (1, or 2: the conjugate
    transpose) from ``lu_factor(a)``'s ``(lu, piv)``. ``b`` is a vector when it is 1-D or,
    as in JAX, has one axis less than ``lu`` and its last axis matches; else a stack of
    matrices. Batch axes broadcast.

    Example:
        >>> a = enp.array([[2.0, 1.0], [1.0, 3.0]])
        >>> sla.lu_solve(sla.lu_factor(a), enp.array([3.0, 5.0]))
        Array([0.8, 1.4], dtype=float32)
    """
    if trans not in (0, 1, 2):
        _bad_argument(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    packed, piv = (enp._lift(v) for v in lu_and_piv)
    n = packed.shape[-1]
    if packed.ndim < 2 or piv.shape != packed.shape[:-2] + (n,) or \
            not dtypes.is_int(piv.dtype):
        kernels.error(f"lu_solve: expected lu_factor's (lu, piv): a stack of square matrices and "
                   f"integer pivots of shape lu.shape[:-1]; got shapes {packed.shape} and "
                   f"{piv.shape} ({piv.dtype})")
    perm = kernels.batched(lambda lu_, p: kernels.pivots_to_permutation(p, n), packed, piv) \
        if packed.ndim > 2 else kernels.pivots_to_permutation(piv, n)
    shape = np.shape(b)
    vector = len(shape) == 1 or (len(shape) == packed.ndim - 1 and shape[-1] == n)

    def solve(t, r, p):
        return kernels.lu_solve_core(t, p, r, trans != 0)
    return kernels.solve_with("lu_solve", packed, b, solve, vector, perm)


# --- on ember.numpy.linalg ---------------------------------------------------------------------

@eager
def det(a, overwrite_a=False, check_finite=True):
    """Determinants of square matrices (``ember.numpy.linalg.det``; 0 x 0: 1).

    Example:
        >>> sla.det(enp.array([[1.0, 2.0], [3.0, 4.0]]))
        Array(-2., dtype=float32)
    """
    return _la.det(a)


@eager
def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of square matrices (``ember.numpy.linalg.inv``; singular: infs/NaNs).

    Example:
        >>> sla.inv(enp.array([[2.0, 0.0], [0.0, 4.0]]))
        Array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    return _la.inv(a)


@eager
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """``x`` with ``a @ x = b``. ``assume_a`` "gen", "sym" or "her": LU with partial
    pivoting (``ember.numpy.linalg.solve``: ``b`` is a vector when 1-D); "pos": Cholesky,
    reading the ``lower`` or (default) upper triangle of ``a`` (``b`` is a vector when it has
    one axis less than ``a``), as JAX does.

    Example:
        >>> sla.solve(enp.array([[4.0, 2.0], [2.0, 5.0]]), enp.array([2.0, 1.0]),
        ...           assume_a="pos")
        Array([0.5, 0. ], dtype=float32)
    """
    if assume_a not in ("gen", "sym", "her", "pos"):
        _bad_argument(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got "
                      f"{assume_a!r}")
    if assume_a != "pos":
        return _la.solve(a, b)
    x, _ = kernels.matrix(a, "solve")
    low = _la.cholesky(kernels.symmetric(x, "L" if lower else "U"))
    return cho_solve((low, True), b)


@eager
def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """The QR decomposition by Householder reflections (LAPACK's signs): ``mode`` "full"
    (``(Q, R)``, Q m x m, R m x n), "economic" (Q m x k, R k x n, k = min(m, n)) or "r"
    (the tuple ``(R,)``, R m x n). Column pivoting is not supported.

    Example:
        >>> sla.qr(enp.array([[3.0, 1.0], [4.0, 2.0]]), mode="r")[0]
        Array([[-5. , -2.2],
               [ 0. , -0.4]], dtype=float32)
    """
    if mode not in ("full", "economic", "r"):
        _bad_argument(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    if pivoting:
        _bad_argument("qr: pivoting=True is not supported; use pivoting=False")
    q, r = _la.qr(a, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


@eager
def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """The singular value decomposition ``(U, S, Vh)`` (``ember.numpy.linalg.svd``, one-sided
    Jacobi whatever ``lapack_driver``); ``compute_uv=False``: S alone.

    Example:
        >>> sla.svd(enp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Array([4., 3.], dtype=float32)
    """
    res = _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(res) if compute_uv else res


@eager
def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True, *,  # noqa: A002
         subset_by_index=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors ``(w, v)`` of symmetric matrices: of
    ``(a + a.T) / 2`` as JAX's, or with ``symmetrize_input=False`` reading the ``lower``
    (default) or upper triangle, as SciPy's; ``eigvals_only``: ``w`` alone;
    ``subset_by_index=(lo, hi)``: only the eigenvalues lo..hi (inclusive, ascending order)
    and their vectors. The generalized problem (``b``) is not supported, as in JAX.

    Example:
        >>> sla.eigh(enp.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
        Array([1., 3.], dtype=float32)
    """
    if b is not None or type != 1 or eigvals is not None:
        _bad_argument("eigh: only the standard problem is supported: b=None, type=1, "
                      "eigvals=None (use subset_by_index)")
    w, v = _la.eigh(a, UPLO="L" if lower else "U", symmetrize_input=symmetrize_input)
    if subset_by_index is not None:
        n = w.shape[-1]
        lo, hi = (operator.index(i) for i in subset_by_index)
        if not 0 <= lo <= hi < n:
            _bad_argument(f"eigh: subset_by_index must be (lo, hi) with 0 <= lo <= hi < {n}, "
                          f"got {tuple(subset_by_index)}")
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]
    return w if eigvals_only else (w, v)


# --- matrix functions -------------------------------------------------------------------------

_PADE = {   # coefficients b_0.. of the [m/m] Pade approximants of exp (Higham 2005)
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# (the largest 1-norm each degree is used for, the degrees) by dtype, as JAX's expm
_PADE_BOUNDS = {
    np.dtype(np.float64): ((1.495585217958292e-002, 2.539398330063230e-001,
                            9.504178996162932e-001, 2.097847961257068e+000, 5.371920351148152),
                           (3, 5, 7, 9, 13)),
    np.dtype(np.float32): ((4.258730016922831e-001, 1.880152677804762e+000, 3.925724783138660),
                           (3, 5, 7)),
}


def _pade(x, m):
    """(U, V): the odd and even parts of the degree-m Pade numerator of exp at ``x``."""
    b = _PADE[m]
    eye = enp.eye(x.shape[-1], dtype=x.dtype)
    x2 = enp.matmul(x, x)
    if m == 13:
        x4 = enp.matmul(x2, x2)
        x6 = enp.matmul(x4, x2)
        u = enp.matmul(x6, b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + \
            b[3] * x2 + b[1] * eye
        v = enp.matmul(x6, b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + \
            b[2] * x2 + b[0] * eye
        return enp.matmul(x, u), v
    powers = [eye, x2]
    while len(powers) <= m // 2:
        powers.append(enp.matmul(powers[-1], x2))
    u = sum(b[2 * i + 1] * p for i, p in enumerate(powers))
    v = sum(b[2 * i] * p for i, p in enumerate(powers))
    return enp.matmul(x, u), v


@eager
def expm(A, *, upper_triangular=False, max_squarings=16):  # noqa: N803
    """The matrix exponential of square matrices by scaling and squaring with Pade
    approximants (Higham 2005), as JAX: the degree and the number of squarings chosen from
    the 1-norm; NaN where more than ``max_squarings`` squarings would be needed. Float16 and
    bfloat16 are computed in float32.

    Example:
        >>> sla.expm(enp.zeros((2, 2)))
        Array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    x, out = kernels.matrix(A, "expm")
    bounds, degrees = _PADE_BOUNDS[x.dtype]
    norm1 = enp.max(enp.sum(enp.abs(x), axis=-2), axis=-1)
    squarings = enp.maximum(0, enp.floor(enp.log2(norm1 / bounds[-1])))
    x = x / (2 ** squarings)[..., None, None]
    which = enp.sum(norm1[..., None] >= enp.asarray(bounds[:-1], x.dtype), axis=-1,
                    dtype=np.int32)
    branches = [lambda y, m=m: _pade(y, m) for m in degrees]
    u, v = kernels.batched(lambda y, i: lax.switch(i, branches, y), x, which) \
        if x.ndim > 2 else lax.switch(which, branches, x)
    if upper_triangular:
        r = solve_triangular(v - u, u + v)
    else:
        r = _la.solve(v - u, u + v)

    def square(r, k):
        return lax.fori_loop(0, enp._to(k, np.int32), lambda _, y: enp.matmul(y, y), r)
    r = kernels.batched(square, r, squarings) if x.ndim > 2 else square(r, squarings)
    r = enp.where((squarings > max_squarings)[..., None, None], np.nan, r)
    return enp._to(r, out)


@eager
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition ``a = U @ P`` (``side`` "right", P n x n) or ``a = P @ U``
    ("left", P m x m) of m x n matrices: ``(U, P)``, U with orthonormal columns (rows if
    n > m), P symmetric positive semidefinite. Computed from the SVD whatever ``method``.

    Example:
        >>> u, p = sla.polar(enp.array([[0.0, 2.0], [3.0, 0.0]]))
        >>> p
        Array([[3., 0.],
               [0., 2.]], dtype=float32)
    """
    if side not in ("right", "left"):
        _bad_argument(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        _bad_argument(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    x, out = kernels.matrix(a, "polar", square=False)
    u, s, vh = _la.svd(x, full_matrices=False)
    v = _la.matrix_transpose(vh)
    if side == "right":
        p = enp.matmul(v * s[..., None, :], vh)
    else:
        p = enp.matmul(u * s[..., None, :], _la.matrix_transpose(u))
    return enp._to(enp.matmul(u, vh), out), enp._to(p, out)


@eager
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):  # noqa: N803
    """``X`` with ``A @ X + X @ B = C`` (A m x m, B n x n, C m x n; batch axes broadcast),
    as one linear system of m n unknowns (``kron(A, I) + kron(I, B.T)``) solved by LU: meant
    for small m n, whatever ``method``. No unique solution (an eigenvalue of A the negative
    of one of B): infs or NaNs.

    Example:
        >>> sla.solve_sylvester(enp.eye(2), 2 * enp.eye(2), enp.ones((2, 2)))
        Array([[0.33333334, 0.33333334],
               [0.33333334, 0.33333334]], dtype=float32)
    """
    if method not in ("schur", "eigen"):
        _bad_argument(f"solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    a, out_a = kernels.matrix(A, "solve_sylvester")
    b, out_b = kernels.matrix(B, "solve_sylvester")
    c = enp._lift(C)
    m, n = a.shape[-1], b.shape[-1]
    if c.ndim < 2 or c.shape[-2:] != (m, n):
        kernels.error(f"solve_sylvester: C must be m x n = {m} x {n} for A {a.shape} and B "
                   f"{b.shape}, got shape {c.shape}")
    a, b = enp._promote(a, b)
    term_a = a[..., :, None, :, None] * enp.eye(n, dtype=a.dtype)[:, None, :]
    term_b = enp.eye(m, dtype=a.dtype)[:, None, :, None] * \
        _la.matrix_transpose(b)[..., None, :, None, :]
    k = term_a + term_b
    k = enp.reshape(k, k.shape[:-4] + (m * n, m * n))
    x = _la.solve(k, enp.reshape(c, c.shape[:-2] + (m * n,))[..., None])
    return enp.reshape(x, x.shape[:-2] + (m, n))


# --- special matrices -------------------------------------------------------------------------

def _vectors(name, *xs):
    """``xs`` lifted, at least 1-D, promoted to one dtype and broadcast to one batch shape
    (all but their last axes)."""
    vs = [enp.atleast_1d(enp._lift(x)) for x in xs]
    try:
        batch = np.broadcast_shapes(*(v.shape[:-1] for v in vs))
    except ValueError:
        kernels.error(f"{name}: batch shapes {' and '.join(str(v.shape[:-1]) for v in vs)} do "
                   "not broadcast")
    return [enp.broadcast_to(v, batch + v.shape[-1:]) for v in enp._promote(*vs)]


def _gathered(parts, index):
    """The matrices ``v[..., index]`` of ``v``, the vectors ``parts`` concatenated, for a
    static (N, M) index array (empty if N or M is 0)."""
    if index.size == 0:
        return enp.zeros(parts[0].shape[:-1] + index.shape, parts[0].dtype)
    v = enp.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]
    return enp.take(v, enp.asarray(index.astype(np.int32)), axis=-1)


@eager
def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default ``c``; its
    first element is ignored): ``A[i, j] = c[i - j]`` for i >= j, ``r[j - i]`` above. Stacks
    of ``c`` and ``r`` (leading axes) give stacks of matrices, their batch axes broadcast.

    Example:
        >>> sla.toeplitz(enp.array([1, 2, 3]), enp.array([1, 4]))
        Array([[1, 4],
               [2, 1],
               [3, 2]], dtype=int32)
    """
    c, r = _vectors("toeplitz", c, c if r is None else r)
    n, m = c.shape[-1], r.shape[-1]
    return _gathered([enp.flip(c, -1), r[..., 1:]], (n - 1) - np.arange(n)[:, None] +
                     np.arange(m))


@eager
def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros; its first
    element is ignored): ``H[i, j] = concatenate([c, r[1:]])[i + j]``. Stacks as for
    :func:`toeplitz`.

    Example:
        >>> sla.hankel(enp.array([1, 2, 3]), enp.array([3, 4]))
        Array([[1, 2],
               [2, 3],
               [3, 4]], dtype=int32)
    """
    if np.ndim(c) == 0 or (r is not None and np.ndim(r) == 0):
        kernels.error("hankel: c and r must be at least 1-D, got a scalar")
    c = enp._lift(c)
    c, r = _vectors("hankel", c, enp.zeros_like(c) if r is None else r)
    n, m = c.shape[-1], r.shape[-1]
    return _gathered([c, r[..., 1:]], np.arange(n)[:, None] + np.arange(m))


@eager
def circulant(c):
    """The circulant matrix with first column ``c``: ``A[i, j] = c[(i - j) % n]``; a stack
    of ``c`` gives a stack of matrices.

    Example:
        >>> sla.circulant(enp.array([1, 2, 3]))
        Array([[1, 3, 2],
               [2, 1, 3],
               [3, 2, 1]], dtype=int32)
    """
    (c,) = _vectors("circulant", c)
    n = c.shape[-1]
    return _gathered([c], (np.arange(n)[:, None] - np.arange(n)) % builtins.max(n, 1))


def _rows(n):
    return lax.broadcasted_iota(np.int32, (n, n), 0), lax.broadcasted_iota(np.int32, (n, n), 1)


@eager
def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree first,
    ``a[0] != 0``, length >= 2): first row ``-a[1:] / a[0]``, ones below the diagonal; a
    stack of ``a`` gives a stack of matrices. Integers give floats.

    Example:
        >>> sla.companion(enp.array([1.0, -3.0, 2.0]))
        Array([[ 3., -2.],
               [ 1.,  0.]], dtype=float32)
    """
    (x,) = enp._promote_inexact(enp.atleast_1d(enp._lift(a)))
    if x.shape[-1] < 2:
        kernels.error(f"companion: a must have at least 2 coefficients along its last axis, got "
                   f"shape {x.shape}")
    m = x.shape[-1] - 1
    r, c = _rows(m)
    first = -x[..., 1:] / x[..., :1]
    return enp.where(r == 0, first[..., None, :], enp._to(r == c + 1, x.dtype))


@eager
def leslie(f, s):
    """The Leslie matrix: fecundities ``f`` (length n >= 2) in the first row, survival rates
    ``s`` (length n - 1) below the diagonal, zeros elsewhere; stacks broadcast.

    Example:
        >>> sla.leslie(enp.array([0.1, 2.0, 1.0]), enp.array([0.2, 0.8]))
        Array([[0.1, 2. , 1. ],
               [0.2, 0. , 0. ],
               [0. , 0.8, 0. ]], dtype=float32)
    """
    f, s = _vectors("leslie", f, s)
    n = f.shape[-1]
    if n < 2 or s.shape[-1] != n - 1:
        kernels.error(f"leslie: f must have n >= 2 elements and s n - 1 along their last axes, "
                   f"got shapes {f.shape} and {s.shape}")
    r, c = _rows(n)
    below = enp.concatenate([s, enp.zeros(s.shape[:-1] + (1,), s.dtype)], axis=-1)
    return enp.where(r == 0, f[..., None, :],
                     enp.where(r == c + 1, below[..., None, :], enp.zeros((), f.dtype)))


def _order(n, name):
    try:
        n = operator.index(n)
    except TypeError:
        _bad_argument(f"{name}: n must be a Python int (static), got {n!r}")
    if n < 0:
        _bad_argument(f"{name}: n must not be negative, got {n}")
    return n


@eager
def hilbert(n):
    """The n x n Hilbert matrix ``1 / (i + j + 1)``, in the default float dtype.

    Example:
        >>> sla.hilbert(2)
        Array([[1.        , 0.5       ],
               [0.5       , 0.33333334]], dtype=float32)
    """
    r, c = _rows(_order(n, "hilbert"))
    return 1 / enp._to(r + c + 1, dtypes.default_float())


@eager
def pascal(n, kind=None):
    """The n x n Pascal matrix: ``kind`` "symmetric" (default, ``binom(i + j, i)``),
    "lower" (``binom(i, j)``) or "upper", as float32 (as JAX; exact up to 2**24, computed in
    integers on the host where JAX uses a gamma-function approximation).

    Example:
        >>> sla.pascal(3)
        Array([[1., 1., 1.],
               [1., 2., 3.],
               [1., 3., 6.]], dtype=float32)
    """
    n = _order(n, "pascal")
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        _bad_argument(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    if kind == "symmetric":
        table = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        table = [[math.comb(i, j) for j in range(n)] for i in range(n)]
    out = np.array(table, np.float64).reshape(n, n).astype(np.float32)
    return enp.asarray(out.T if kind == "upper" else out)


@eager
def helmert(n, full=False):
    """The Helmert matrix: n - 1 rows of orthonormal contrasts, row k - 1 being
    ``(1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1))`` (k ones); ``full`` prepends the row
    ``1 / sqrt(n)``. In the default float dtype.

    Example:
        >>> sla.helmert(2)
        Array([[ 0.70710677, -0.70710677]], dtype=float32)
    """
    n = _order(n, "helmert")
    if n < 1:
        _bad_argument("helmert: n must be a positive integer, got 0")
    ft = dtypes.default_float()
    r = lax.broadcasted_iota(np.int32, (n - 1, n), 0)
    c = lax.broadcasted_iota(np.int32, (n - 1, n), 1)
    k = enp._to(r + 1, ft)
    denom = enp.sqrt(k * (k + 1))
    h = enp.where(c <= r, 1 / denom, enp.where(c == r + 1, -k / denom, enp.zeros((), ft)))
    if full:
        h = enp.concatenate([enp.full((1, n), 1 / np.sqrt(n), ft), h], axis=0)
    return h


@eager
def block_diag(*arrs):
    """The block diagonal matrix of ``arrs`` (each at most 2-D; scalars and vectors are one
    row), promoted to one dtype; no arguments: a 1 x 0 matrix.

    Example:
        >>> sla.block_diag(enp.array([[1, 2]]), 3)
        Array([[1, 2, 0],
               [0, 0, 3]], dtype=int32)
    """
    if not arrs:
        return enp.zeros((1, 0), dtypes.default_float())
    xs = [enp._lift(a) for a in arrs]
    for i, x in enumerate(xs):
        if x.ndim > 2:
            kernels.error(f"block_diag: arguments must have at most 2 dimensions, argument {i} "
                       f"has shape {x.shape}")
    xs = [enp.atleast_2d(x) for x in enp._promote(*xs)]
    total = sum(x.shape[1] for x in xs)
    zero = enp.zeros((), xs[0].dtype)
    rows, start = [], 0
    for x in xs:
        width = x.shape[1]
        rows.append(lax.pad(x, zero, [(0, 0, 0), (start, total - start - width, 0)]))
        start += width
    return enp.concatenate(rows, axis=0)
