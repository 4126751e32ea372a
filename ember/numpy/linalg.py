"""ember.numpy.linalg: norms, the decompositions (LU with partial pivoting, Cholesky,
Householder QR, Jacobi eigh and SVD: the kernels of ember.lax.linalg, in
``ember/lax/_linalg.py``) with what is built on them (solve, inv, det, slogdet, pinv, lstsq,
matrix_rank, cond, tensorinv, tensorsolve), and the array API's names (matrix_norm,
vector_norm, vecdot, matmul, tensordot, matrix_transpose, cross, outer, diagonal, trace).
Every function takes stacks of matrices (leading batch axes), works under jit and vmap, and
on the CPU, Vulkan and CUDA alike: no LAPACK is called. The algorithms are the textbook
ones, O(n^3) for n x n matrices, in loops of n steps (Jacobi: sweeps of n - 1 rounds), meant
for small and medium matrices.

Example:
    >>> import ember.numpy as enp
    >>> enp.linalg.norm(enp.ones((2, 2)), ord="fro")
    Array(2., dtype=float32)
"""

from __future__ import annotations

import builtins
import operator
import sys
from typing import NamedTuple

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.lax import _linalg as kernels

__all__ = ["norm", "cholesky", "solve", "inv", "det", "slogdet", "qr", "eigh", "eigvalsh", "svd",
           "svdvals", "cond", "pinv", "matrix_rank", "lstsq", "matrix_power", "multi_dot",
           "matrix_norm", "vector_norm", "vecdot", "matmul", "tensordot", "matrix_transpose",
           "cross", "outer", "diagonal", "trace", "tensorinv", "tensorsolve"]


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
    (``sum(|x|**p)**(1/p)``). Matrix ``ord``: None/'fro', 1, -1, inf, -inf, and from the
    singular values 2 (the largest), -2 (the smallest) and 'nuc' (their sum). Integers are
    computed in floating point.
    """
    enp = _enp()
    x = enp._lift(x)
    x = enp._to(x, dtypes.to_inexact(x.dtype))
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
    if dtypes.is_complex(x.dtype):     # |x|^2 = re^2 + im^2, real
        re, im = lax.real(x), lax.imag(x)
        return enp.sqrt(enp.sum(lax.add(lax.mul(re, re), lax.mul(im, im)), axis=axes,
                                keepdims=keepdims))
    return enp.sqrt(enp.sum(lax.mul(x, x), axis=axes, keepdims=keepdims))


def _vector_norm(x, ord, axes, keepdims):  # noqa: A002
    enp = _enp()
    if isinstance(ord, str):
        _error(f"norm: invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return _l2(x, axes, keepdims)
    a = enp.abs(x)
    if _is_inf(ord, 1):
        return enp.max(a, axis=axes, keepdims=keepdims, initial=0)
    if _is_inf(ord, -1):
        return enp.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        nz = enp._to(lax.ne(x, enp._const(0, x)), a.dtype)
        return enp.sum(nz, axis=axes, keepdims=keepdims)
    if ord == 1:
        return enp.sum(a, axis=axes, keepdims=keepdims)
    p = float(ord)
    s = enp.sum(enp.power(a, enp._to(p, a.dtype)), axis=axes, keepdims=keepdims)
    return enp.power(s, enp._to(1.0 / p, a.dtype))


def _matrix_norm(x, ord, axes, keepdims):  # noqa: A002
    enp = _enp()
    r, c = axes
    if ord is None or ord == "fro":
        return _l2(x, axes, keepdims)
    if ord in ("nuc", 2, -2):
        s = svdvals(enp.moveaxis(x, (r, c), (-2, -1)))
        if s.shape[-1] == 0 and ord == -2:
            _error(f"norm: ord=-2 (the smallest singular value) of empty matrices, shape "
                   f"{x.shape}")
        if ord == "nuc" or s.shape[-1] == 0:    # (the largest of none is 0, as in NumPy)
            out = enp.sum(s, -1)
        else:
            out = s[..., 0] if ord == 2 else s[..., -1]
        return enp.expand_dims(out, (r, c)) if keepdims else out
    a = enp.abs(x)
    if ord in (1, -1):
        inner, outer = r, c
    elif _is_inf(ord, 1) or _is_inf(ord, -1):
        inner, outer = c, r
    else:
        _error(f"norm: invalid norm order {ord!r} for matrices")
    reduce = enp.max if (ord == 1 or _is_inf(ord, 1)) else enp.min
    s = enp.sum(a, axis=inner, keepdims=True)
    # the max of no column sums is 0, as in NumPy and JAX (their min of none is an error)
    empty_max = {"initial": 0} if reduce is enp.max else {}
    out = reduce(s, axis=outer, keepdims=True, **empty_max)
    if not keepdims:
        out = enp.squeeze(out, axis=(r, c))
    return out


# --- decompositions ---------------------------------------------------------------------------
# On the kernels of ember/lax/_linalg.py: each algorithm works on one matrix in counted loops
# and is vmapped over the leading (batch) axes. Float16/bfloat16 and integers are computed in
# float32 (float64 stays float64) and the results come back in the input's float dtype.

class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


@eager
def cholesky(a, *, upper=False):
    """The Cholesky factor ``L`` (lower, ``a = L @ L.T``; ``upper=True``: ``U = L.T``) of
    symmetric positive definite matrices, reading the lower triangle of ``a`` as NumPy does
    (JAX symmetrizes first: the same on symmetric input). Not positive definite: the factor's
    triangle all NaN, its other entries zero, as in JAX.

    Example:
        >>> enp.linalg.cholesky(enp.array([[4.0, 2.0], [2.0, 5.0]]))
        Array([[2., 0.],
               [1., 2.]], dtype=float32)
    """
    low = kernels.cholesky(a, "cholesky")
    return kernels.swap(low) if upper else low


@eager
def solve(a, b):
    """``x`` with ``a @ x = b`` by LU with partial pivoting. ``b`` is a vector when it is 1-D,
    else a stack of matrices (NumPy 2's rule); batch axes broadcast.

    Example:
        >>> enp.linalg.solve(enp.array([[2.0, 1.0], [1.0, 3.0]]), enp.array([3.0, 5.0]))
        Array([0.8, 1.4], dtype=float32)
    """
    return kernels.solve_with("solve", a, b, kernels.solve_core, np.ndim(b) == 1)


@eager
def inv(a):
    """The inverse of square matrices (LU with partial pivoting; singular: infs/NaNs, as in
    JAX).

    Example:
        >>> enp.linalg.inv(enp.array([[2.0, 0.0], [0.0, 4.0]]))
        Array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    enp = _enp()
    x, out = kernels.matrix(a, "inv")
    eye = enp.broadcast_to(enp.eye(x.shape[-1], dtype=x.dtype), x.shape)
    return enp._to(kernels.batched(kernels.solve_core, x, eye), out)


def _lu_diagonal(x):
    lu, _, sign, _ = kernels.batched(kernels.lu_core, x)
    return _enp().diagonal(lu, axis1=-2, axis2=-1), sign


@eager
def det(a):
    """Determinants of square matrices, from their LU factors.

    Example:
        >>> enp.linalg.det(enp.array([[1.0, 2.0], [3.0, 4.0]]))
        Array(-2., dtype=float32)
    """
    enp = _enp()
    x, out = kernels.matrix(a, "det")
    d, sign = _lu_diagonal(x)
    return enp._to(sign * enp.prod(d, axis=-1), out)


@eager
def slogdet(a):
    """``(sign, logabsdet)`` of square matrices: the determinant is ``sign * exp(logabsdet)``
    without overflow (a singular matrix: sign 0, logabsdet -inf).

    Example:
        >>> enp.linalg.slogdet(enp.array([[1.0, 2.0], [3.0, 4.0]]))
        SlogdetResult(sign=Array(-1., dtype=float32), logabsdet=Array(0.6931472, dtype=float32))
    """
    enp = _enp()
    x, out = kernels.matrix(a, "slogdet")
    d, sign = _lu_diagonal(x)
    sign = sign * enp.prod(enp.sign(d), axis=-1)
    return SlogdetResult(enp._to(sign, out), enp._to(enp.sum(enp.log(enp.abs(d)), axis=-1), out))


@eager
def qr(a, mode="reduced"):
    """QR decomposition by Householder reflections (LAPACK's signs, as NumPy and JAX):
    ``mode`` "reduced" (Q m x k, R k x n with k = min(m, n)), "complete" (Q m x m, R m x n)
    or "r" (R only, k x n).

    Example:
        >>> q, r = enp.linalg.qr(enp.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> r
        Array([[-5. , -2.2],
               [ 0. , -0.4]], dtype=float32)
    """
    if mode not in ("reduced", "complete", "r"):
        _error(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    res = kernels.qr(a, "qr", mode)
    return res if mode == "r" else QRResult(*res)


@eager
def eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices, by Jacobi
    rotations. As JAX's: the matrix is first symmetrized, ``(a + a.T) / 2``, so that a
    matrix symmetric up to rounding gives one answer; ``symmetrize_input=False`` reads only
    the lower (``UPLO="L"``, the default) or upper triangle, as NumPy does.

    Example:
        >>> w, v = enp.linalg.eigh(enp.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w
        Array([1., 3.], dtype=float32)
    """
    uplo = "L" if UPLO is None else UPLO
    if uplo not in ("L", "U"):
        _error(f"eigh: UPLO must be 'L' or 'U', got {uplo!r}")
    return EighResult(*kernels.eigh(a, "eigh", uplo, symmetrize_input))


@eager
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803
    """The eigenvalues (ascending) of symmetric matrices (see :func:`eigh`)."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


@eager
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition ``a = U @ diag(S) @ Vh``, S descending, by one-sided
    Jacobi rotations (accurate even for tiny singular values); ``full_matrices`` gives square
    U and Vh, else k = min(m, n) columns/rows; ``compute_uv=False`` returns S alone.
    ``hermitian`` is accepted and not needed.

    Example:
        >>> enp.linalg.svd(enp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Array([4., 3.], dtype=float32)
    """
    res = kernels.svd(a, "svd", full_matrices, compute_uv)
    return SVDResult(*res) if compute_uv else res


@eager
def svdvals(x):
    """The singular values, descending (``svd(x, compute_uv=False)``)."""
    return svd(x, compute_uv=False)


@eager
def cond(x, p=None):
    """The condition number of matrices in the norm ``p`` (None/2: the ratio of the largest
    to the smallest singular value; -2 its inverse; else ``norm(x, p) * norm(inv(x), p)``,
    square matrices only). A singular matrix without NaNs has condition number inf, as in
    NumPy and JAX.

    Example:
        >>> enp.linalg.cond(enp.array([[1.0, 2.0], [2.0, 4.0]]), "fro")
        Array(inf, dtype=float32)
    """
    enp = _enp()
    a = enp._lift(x)
    if a.ndim < 2 or 0 in a.shape[-2:]:
        _error(f"cond: x must be a non-empty matrix or stack of matrices, got shape {a.shape}")
    if p is None or p in (2, -2):
        s = svdvals(a)
        r = s[..., 0] / s[..., -1]
        return 1 / r if p == -2 else r
    if a.shape[-1] != a.shape[-2]:
        _error(f"cond: for p={p!r} x must be square, got shape {a.shape}")
    r = norm(a, p, axis=(-2, -1)) * norm(inv(a), p, axis=(-2, -1))
    return enp.where(enp.isnan(r) & ~enp.any(enp.isnan(a), axis=(-2, -1)), np.inf, r)


def _cutoff(s, m, n, rtol):
    """Singular values at or below this count as zero: ``rtol`` (default max(m, n) * eps)
    times the largest."""
    enp = _enp()
    if rtol is None:
        rtol = builtins.max(m, n) * float(np.finfo(s.dtype).eps)
    rtol = enp._to(rtol, s.dtype)
    return (rtol[..., None] if rtol.ndim else rtol) * s[..., :1]


@eager
def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse from the SVD, singular values at or below
    ``rtol * max(S)`` (default ``max(m, n) * eps``; ``rcond`` is its old name) dropped.

    Example:
        >>> enp.linalg.pinv(enp.array([[1.0, 2.0], [2.0, 4.0]]))
        Array([[0.04, 0.08],
               [0.08, 0.16]], dtype=float32)
    """
    enp = _enp()
    if rcond is not None:
        if rtol is not None:
            _error("pinv: pass rtol or rcond, not both")
        rtol = rcond
    x, out = kernels.matrix(a, "pinv", square=False)
    u, s, vh = svd(x, full_matrices=False)
    keep = s > _cutoff(s, *x.shape[-2:], rtol)
    s_inv = enp.where(keep, 1 / enp.where(keep, s, 1), 0)
    res = enp.matmul(enp.swapaxes(vh, -1, -2) * s_inv[..., None, :], enp.swapaxes(u, -1, -2))
    return enp._to(res, out)


@eager
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):  # noqa: N803
    """The number of singular values above ``tol`` (absolute) or ``rtol * max(S)`` (default
    ``max(m, n) * eps``). A vector's rank is 1 unless it is all zero."""
    enp = _enp()
    x = enp._lift(M)
    if x.ndim < 2:
        return enp._to(enp.any(x != 0), np.int32)
    s = svdvals(x)
    # (an empty matrix: rank 0, as NumPy; JAX raises, taking the max of no singular values)
    cut = _cutoff(s, *x.shape[-2:], rtol) if tol is None else enp._to(tol, s.dtype)
    return enp.sum(s > cut, axis=-1, dtype=np.int32)


@eager
def lstsq(a, b, rcond=None):
    """Least squares ``x`` minimizing ``|b - a @ x|`` (2-D ``a``; 1- or 2-D ``b``) through the
    SVD, singular values at or below ``rcond * max(S)`` (default ``max(m, n) * eps``) dropped:
    ``(x, residuals, rank, S)``. The residuals (squared norms of the columns of
    ``b - a @ x``) are always returned, as JAX does under jit (NumPy returns an empty array
    when the rank is below n or m <= n)."""
    enp = _enp()
    x, out = kernels.matrix(a, "lstsq", square=False)
    y = enp._to(enp._lift(b), x.dtype)
    if x.ndim != 2 or y.ndim not in (1, 2):
        _error(f"lstsq: a must be 2-D and b 1- or 2-D, got shapes {x.shape} and {y.shape}")
    if y.shape[0] != x.shape[0]:
        _error(f"lstsq: a of shape {x.shape} and b of shape {y.shape} have different numbers "
               "of rows")
    vector = y.ndim == 1
    y = y[:, None] if vector else y
    u, s, vh = svd(x, full_matrices=False)
    keep = (s > 0) & (s > _cutoff(s, *x.shape, rcond))
    s_inv = enp.where(keep, 1 / enp.where(keep, s, 1), 0)
    sol = enp.matmul(enp.swapaxes(vh, -1, -2), s_inv[:, None] * enp.matmul(u.T, y))
    resid = enp.sum((y - enp.matmul(x, sol)) ** 2, axis=0)
    rank = enp.sum(keep, dtype=np.int32)
    sol = sol[:, 0] if vector else sol
    return enp._to(sol, out), enp._to(resid, out), rank, enp._to(s, out)


@eager
def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring (``n`` < 0: of its inverse;
    0: the identity)."""
    enp = _enp()
    x = enp._lift(a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        _error(f"matrix_power: expected square matrices, got shape {x.shape}")
    n = operator.index(n)
    if n == 0:
        return enp.broadcast_to(enp.eye(x.shape[-1], dtype=x.dtype), x.shape)
    if n < 0:
        x, n = inv(x), -n
    return enp._by_squaring(x, n, enp.matmul)


@eager
def multi_dot(arrays):
    """The product of the matrices in ``arrays`` in the cheapest order (chosen by dynamic
    programming over their static shapes, as NumPy does); the first may be 1-D (a row) and
    the last 1-D (a column)."""
    enp = _enp()
    xs = [enp._lift(x) for x in arrays]
    if len(xs) < 2:
        _error(f"multi_dot: expected at least two arrays, got {len(xs)}")
    first, last = xs[0].ndim == 1, xs[-1].ndim == 1
    if first:
        xs[0] = xs[0][None, :]
    if last:
        xs[-1] = xs[-1][:, None]
    for i, x in enumerate(xs):
        if x.ndim != 2:
            _error(f"multi_dot: array {i} has shape {x.shape}; expected 2-D (1-D first or "
                   "last)")
    dims = [xs[0].shape[0]] + [x.shape[1] for x in xs]
    k = len(xs)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j], split[i][j] = builtins.min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s)
                for s in range(i, j))

    def product(i, j):
        if i == j:
            return xs[i]
        s = split[i][j]
        return enp.matmul(product(i, s), product(s + 1, j))

    out = product(0, k - 1)
    if first:
        out = out[0]
    if last:
        out = out[..., 0]
    return out


# --- the array API's linalg names, and tensor solves --------------------------------------------

@eager
def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """The norm of each matrix of ``x`` (its last two axes), as :func:`norm` with
    ``axis=(-2, -1)``: ``ord`` 'fro' (default), 'nuc', 1, -1, 2, -2, inf or -inf.

    Example:
        >>> enp.linalg.matrix_norm(enp.ones((2, 3, 3)), ord=1)
        Array([3., 3.], dtype=float32)
    """
    a = _enp()._lift(x)
    if a.ndim < 2:
        _error(f"matrix_norm: x must have at least 2 dimensions, got shape {a.shape}")
    return norm(a, ord=ord, axis=(-2, -1), keepdims=keepdims)


@eager
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The vector norm of ``x`` over ``axis`` (None: all of it, flattened; a tuple: those axes
    as one vector): ``ord`` 2 (default), 1, inf, -inf, 0 (count of nonzeros) or any other p.
    Integers are computed in floating point, as NumPy does.

    Example:
        >>> enp.linalg.vector_norm(enp.array([[3.0, 4.0], [0.0, 0.0]]), axis=1)
        Array([5., 0.], dtype=float32)
    """
    enp = _enp()
    a = enp._lift(x)
    a = enp._to(a, dtypes.to_inexact(a.dtype))
    if isinstance(ord, str):
        _error(f"vector_norm: invalid norm order {ord!r} for vectors; use a number or "
               "enp.inf")
    return _vector_norm(a, ord, enp._axes(axis, a.ndim), keepdims)


@eager
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of the vectors of ``x1`` and ``x2`` along ``axis``, the other axes
    broadcast (``ember.numpy.vecdot``). ``precision`` is accepted and not needed.

    Example:
        >>> enp.linalg.vecdot(enp.array([[1, 2], [3, 4]]), enp.array([1, 1]))
        Array([3, 7], dtype=int32)
    """
    return _enp().vecdot(x1, x2, axis=axis, precision=precision,
                         preferred_element_type=preferred_element_type)


@eager
def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """The matrix product (``ember.numpy.matmul``); ``preferred_element_type`` is the dtype
    the product is accumulated and returned in. ``precision`` is accepted and not needed.

    Example:
        >>> enp.linalg.matmul(enp.ones((2, 3)), enp.ones(3))
        Array([3., 3.], dtype=float32)
    """
    return _enp().matmul(x1, x2, precision=precision,
                         preferred_element_type=preferred_element_type)


@eager
def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """The tensor product summed over ``axes`` (``ember.numpy.tensordot``).

    Example:
        >>> enp.linalg.tensordot(enp.ones((2, 3)), enp.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    return _enp().tensordot(x1, x2, axes, precision=precision,
                            preferred_element_type=preferred_element_type)


@eager
def matrix_transpose(x, /):
    """Each matrix of ``x`` transposed: its last two axes swapped
    (``ember.numpy.matrix_transpose``).

    Example:
        >>> enp.linalg.matrix_transpose(enp.ones((2, 3, 4))).shape
        (2, 4, 3)
    """
    return _enp().matrix_transpose(x)


@eager
def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``, the other axes broadcast (the array
    API's version of ``ember.numpy.cross``: 2-vectors are not accepted).

    Example:
        >>> enp.linalg.cross(enp.array([1.0, 0.0, 0.0]), enp.array([0.0, 1.0, 0.0]))
        Array([0., 0., 1.], dtype=float32)
    """
    enp = _enp()
    a, b = enp._lift(x1), enp._lift(x2)
    for name, v in (("x1", a), ("x2", b)):
        if not -v.ndim <= axis < v.ndim or v.shape[axis] != 3:
            _error(f"cross: {name} of shape {v.shape} has no axis {axis} of size 3; "
                   "both arguments must be (stacks of) 3-vectors")
    return enp.cross(a, b, axis=axis)


@eager
def outer(x1, x2, /):
    """The outer product of two 1-D arrays.

    Example:
        >>> enp.linalg.outer(enp.array([1, 2]), enp.array([1, 10, 100]))
        Array([[  1,  10, 100],
               [  2,  20, 200]], dtype=int32)
    """
    enp = _enp()
    a, b = enp._lift(x1), enp._lift(x2)
    if a.ndim != 1 or b.ndim != 1:
        _error(f"outer: x1 and x2 must be 1-D, got shapes {a.shape} and {b.shape}; use "
               "enp.outer to flatten them")
    return enp.outer(a, b)


def _stack_of_matrices(x, name):
    a = _enp()._lift(x)
    if a.ndim < 2:
        _error(f"{name}: x must have at least 2 dimensions, got shape {a.shape}")
    return a


@eager
def diagonal(x, /, *, offset=0):
    """The ``offset`` diagonal of each matrix of ``x`` (its last two axes).

    Example:
        >>> enp.linalg.diagonal(enp.array([[1, 2], [3, 4]]))
        Array([1, 4], dtype=int32)
    """
    return _enp().diagonal(_stack_of_matrices(x, "diagonal"), offset, -2, -1)


@eager
def trace(x, /, *, offset=0, dtype=None):
    """The sum of the ``offset`` diagonal of each matrix of ``x`` (its last two axes).

    Example:
        >>> enp.linalg.trace(enp.array([[1, 2], [3, 4]]))
        Array(5, dtype=int32)
    """
    return _enp().trace(_stack_of_matrices(x, "trace"), offset, -2, -1, dtype)


@eager
def tensorinv(a, ind=2):
    """The inverse of ``a`` for :func:`tensordot` over ``ind`` axes: ``a`` of shape
    ``I + J`` (``len(I) == ind``, ``prod(I) == prod(J)``) gives ``J + I``.

    Example:
        >>> enp.linalg.tensorinv(2 * enp.eye(6).reshape(6, 2, 3), ind=1).shape
        (2, 3, 6)
    """
    enp = _enp()
    x = enp._lift(a)
    ind = operator.index(ind)
    if ind <= 0:
        _error(f"tensorinv: ind must be a positive integer, got {ind}")
    head, tail = x.shape[:ind], x.shape[ind:]
    rows, cols = int(np.prod(head)), int(np.prod(tail))
    if rows != cols:
        _error(f"tensorinv: the product of the first ind={ind} dimensions of a ({rows}) must "
               f"equal that of the others ({cols}); got shape {x.shape}")
    return enp.reshape(inv(enp.reshape(x, (rows, cols))), tail + head)


@eager
def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) == b``: ``a`` (its ``axes`` moved to the end
    first) of shape ``b.shape + x.shape``, ``prod(x.shape) == b.size``.

    Example:
        >>> enp.linalg.tensorsolve(enp.eye(6).reshape(2, 3, 6), enp.ones((2, 3))).shape
        (6,)
    """
    enp = _enp()
    x, y = enp._lift(a), enp._lift(b)
    if axes is not None:
        axes = enp._axes(axes, x.ndim, "axes")
        x = enp.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    out = x.shape[y.ndim:]
    if x.shape[:y.ndim] != y.shape:
        _error(f"tensorsolve: the leading dimensions of a {x.shape} (after moving axes to the "
               f"end) must be the shape of b {y.shape}")
    if int(np.prod(out)) != int(np.prod(y.shape)):
        _error(f"tensorsolve: a of shape {x.shape} and b of shape {y.shape}: the trailing "
               f"dimensions of a must have prod(b.shape) = {int(np.prod(y.shape))} elements")
    size = int(np.prod(y.shape))
    return enp.reshape(solve(enp.reshape(x, (size, size)), enp.reshape(y, (size,))), out)
