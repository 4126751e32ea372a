"""ember.numpy.linalg: norms, and decompositions composed from ember ops (LU with partial
pivoting, Cholesky, Householder QR, Jacobi eigh and SVD) with what is built on them (solve,
inv, det, slogdet, pinv, lstsq, matrix_rank, cond, tensorinv, tensorsolve), and the array
API's names (matrix_norm, vector_norm, vecdot, matmul, tensordot, matrix_transpose, cross,
outer, diagonal, trace). Every function takes stacks of matrices (leading batch axes), works
under jit and vmap, and on the CPU, Vulkan and CUDA alike: no LAPACK is called. The
algorithms are the textbook ones, O(n^3) for n x n matrices, in loops of n steps (Jacobi:
sweeps of n - 1 rounds), meant for small and medium matrices.

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
# Composed from ember ops: each algorithm works on one matrix in counted loops (``fori_loop``,
# one pivot, column or rotation round per step, as masked whole-matrix updates) and is
# vmapped over the leading (batch) axes. Float16/bfloat16 and integers are computed in
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


def _matrix(a, name, square=True):
    """``a`` lifted, at least 2-D (square if asked), in its compute dtype; and the dtype the
    results are returned in."""
    enp = _enp()
    x = enp._lift(a)
    if x.ndim < 2:
        _error(f"{name}: expected an array of at least 2 dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        _error(f"{name}: the last 2 dimensions must be square, got shape {x.shape}")
    out = dtypes.to_inexact(x.dtype)
    compute = out if out in (np.float32, np.float64) else np.dtype(np.float32)
    return enp._to(x, compute), out


def _batched(core, *xs, rank=2):
    """``core`` on the matrices of ``xs`` (each with the same leading batch axes: all but the
    last ``rank`` of the first), vmapped over the batch axes."""
    from ember.frontend.vmap import vmap
    f = core
    for _ in range(xs[0].ndim - rank):
        f = vmap(f)
    return f(*xs)


def _iotas(n, m=None):
    """(row index, column index) of an n x m matrix, and the index vector of length n."""
    m = n if m is None else m
    return (lax.broadcasted_iota(np.int32, (n, m), 0), lax.broadcasted_iota(np.int32, (n, m), 1),
            lax.iota(np.int32, n))


def _pick(mask, x, axis):
    """The sum of ``x`` where ``mask``, over ``axis``: one row or column of a matrix, or one
    element of a vector, chosen by a traced index (``where`` keeps NaNs elsewhere out)."""
    enp = _enp()
    return enp.sum(enp.where(mask, x, enp.zeros((), x.dtype)), axis=axis, dtype=x.dtype)


def _lu_core(a):
    """LU of one m x n matrix with partial pivoting, as LAPACK's getrf: (the unit lower and
    upper factors packed in one matrix, the row permutation, its parity as +-1, and the
    pivot row chosen at each of the min(m, n) steps, getrf's ``ipiv`` counted from 0)."""
    enp = _enp()
    m, n = a.shape
    r, c, idx = _iotas(m, n)
    steps = builtins.min(m, n)
    kdx = lax.iota(np.int32, steps)

    def step(k, carry):
        a, perm, sign, piv = carry
        col = _pick(c == k, a, 1)
        p = lax.argmax(enp.where(idx >= k, enp.abs(col), -1), 0)
        row_k, row_p = _pick(r == k, a, 0), _pick(r == p, a, 0)
        a = enp.where(r == k, row_p[None], enp.where(r == p, row_k[None], a))
        perm_k, perm_p = _pick(idx == k, perm, 0), _pick(idx == p, perm, 0)
        perm = enp.where(idx == k, perm_p, enp.where(idx == p, perm_k, perm))
        sign = enp.where(p == k, sign, -sign)
        piv = enp.where(kdx == k, enp._to(p, np.int32), piv)
        col = _pick(c == k, a, 1)
        pivot = _pick(idx == k, col, 0)
        low = enp.where((idx > k) & (pivot != 0), col / pivot, 0)
        a = a - low[:, None] * enp.where(c > k, row_p[None], 0)
        a = enp.where((c == k) & (r > k), low[:, None], a)
        return a, perm, sign, piv

    init = (a, idx, enp.ones((), a.dtype), kdx)
    if steps == 0:      # (argmax has no empty axis to search)
        return init
    return lax.fori_loop(0, steps, step, init)


def _triangular_core(t, b, lower, unit):
    """``x`` with ``t @ x = b`` for one triangular n x n ``t`` (only its ``lower`` or upper
    triangle is read; a ``unit`` diagonal is not read) and an n x k ``b``: substitution, one
    row of ``x`` per step."""
    enp = _enp()
    n = t.shape[0]
    r, _, idx = _iotas(n)

    def step(i, x):
        row = i if lower else n - 1 - i
        ti = _pick(r == row, t, 0)
        off = enp.where((idx < row) if lower else (idx > row), ti, 0)
        xi = _pick(idx[:, None] == row, b, 0) - enp.matmul(off, x)
        if not unit:
            xi = xi / _pick(idx == row, ti, 0)
        return enp.where(idx[:, None] == row, xi[None], x)

    return lax.fori_loop(0, n, step, enp.zeros_like(b))


_CHOLESKY_PANEL = 16     # columns per panel of the blocked Cholesky


def _cholesky_core(a):
    """The lower Cholesky factor of one matrix, reading its lower triangle (NaN where the
    matrix is not positive definite).

    Right-looking and blocked, as LAPACK's potrf: panels of ``_CHOLESKY_PANEL`` columns, in
    each one column per step with its rank-1 update subtracted from the rest of the panel;
    then the panel's product ``P @ P.T`` subtracted from the trailing matrix (one matmul).
    So each pivot is ``a[j, j]`` minus a few partial sums, each rounded as it shrinks.
    Summing all of column j's products first and subtracting once (left-looking, one
    matrix-vector product a column) loses more: the float32 8 x 8 Hilbert matrix got a
    negative pivot, LAPACK's none. A matrix of more than one panel is padded with the
    identity to whole panels. The carry's upper triangle is scratch."""
    enp = _enp()
    n = a.shape[0]
    if n == 0:
        return a
    b = n if n <= _CHOLESKY_PANEL else _CHOLESKY_PANEL
    size = -(-n // b) * b
    s = a
    if size > n:    # the identity's rows and columns keep the factor of the rest as it is
        s = lax.pad(a, enp.zeros((), a.dtype), [(0, size - n, 0)] * 2)
        s = s + enp.diag((lax.iota(np.int32, size) >= n).astype(a.dtype))
    _, pc, _ = _iotas(size, b)
    _, c, idx = _iotas(size)

    def column(j0, jj, panel):
        v = _pick(pc == jj, panel, 1)
        col = enp.where(idx >= j0 + jj, v / enp.sqrt(_pick(idx == j0 + jj, v, 0)), 0)
        row = lax.dynamic_slice(col, (j0,), (b,))      # (zero left of column jj)
        return enp.where(pc == jj, col[:, None], panel - col[:, None] * row[None])

    def panel_step(k, s):
        j0 = k * b
        panel = lax.dynamic_slice(s, (0, j0), (size, b))
        panel = lax.fori_loop(0, b, lambda jj, p: column(j0, jj, p), panel)
        if size > b:
            s = s - enp.where(c >= j0 + b, enp.matmul(panel, panel.T), 0)
        return lax.dynamic_update_slice(s, panel, (0, j0))

    if size == b:       # one panel: no outer loop
        return enp.tril(lax.fori_loop(0, b, lambda jj, p: column(0, jj, p), s))
    s = lax.fori_loop(0, size // b, panel_step, s)
    return enp.tril(s[:n, :n])


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
    enp = _enp()
    x, out = _matrix(a, "cholesky")
    low = _batched(_cholesky_core, x)
    failed = enp.any(enp.isnan(enp.diagonal(low, axis1=-2, axis2=-1)), axis=-1)
    n = low.shape[-1]
    low = enp.where(failed[..., None, None] & np.tri(n, dtype=bool), np.nan, low)
    return enp._to(enp.swapaxes(low, -1, -2) if upper else low, out)


def _lu_solve_core(lu, perm, b, transposed=False):
    """``x`` with ``a @ x = b`` (``a.T @ x = b`` if ``transposed``) from ``a``'s LU factors
    packed in ``lu`` and its row permutation ``perm`` (``a[perm] = L @ U``)."""
    enp = _enp()
    if not transposed:
        y = _triangular_core(lu, enp.take(b, perm, axis=0), True, True)
        return _triangular_core(lu, y, False, False)
    lu_t = enp.swapaxes(lu, -1, -2)
    y = _triangular_core(lu_t, b, True, False)
    return enp.take(_triangular_core(lu_t, y, False, True), enp.argsort(perm), axis=0)


def _solve_core(a, b):
    lu, perm, _, _ = _lu_core(a)
    return _lu_solve_core(lu, perm, b)


def _solve_with(name, a, b, solve, vector, *extra):
    """``solve(matrix, rhs, *extra)`` on each square matrix of ``a`` and right-hand side of
    ``b`` (a vector if ``vector``, else a matrix), their batch axes broadcast (and those of
    the arrays ``extra``, which have ``a``'s); the result in the float dtype of both."""
    enp = _enp()
    x, out = _matrix(a, name)
    y = enp._lift(b)
    if vector:
        y = y[..., None]
    rows = y.shape[-2] if y.ndim >= 2 else "no"
    if rows != x.shape[-1]:
        _error(f"{name}: a of shape {x.shape} and b of shape {enp._lift(b).shape} do not match "
               f"({x.shape[-1]} equations, {rows} right-hand rows)")
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        _error(f"{name}: batch shapes {x.shape[:-2]} of a and {y.shape[:-2]} of b do not "
               "broadcast")
    if dtypes.is_float(y.dtype):
        out = enp.result_type(out, y.dtype)
    ct = np.float64 if out == np.float64 else np.float32
    extra = [enp.broadcast_to(e, batch + e.shape[x.ndim - 2:]) for e in extra]
    x = enp.broadcast_to(enp._to(x, ct), batch + x.shape[-2:])
    y = enp.broadcast_to(enp._to(y, ct), batch + y.shape[-2:])
    res = _batched(solve, x, y, *extra)
    return enp._to(res[..., 0] if vector else res, out)


@eager
def solve(a, b):
    """``x`` with ``a @ x = b`` by LU with partial pivoting. ``b`` is a vector when it is 1-D,
    else a stack of matrices (NumPy 2's rule); batch axes broadcast.

    Example:
        >>> enp.linalg.solve(enp.array([[2.0, 1.0], [1.0, 3.0]]), enp.array([3.0, 5.0]))
        Array([0.8, 1.4], dtype=float32)
    """
    return _solve_with("solve", a, b, _solve_core, np.ndim(b) == 1)


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
    x, out = _matrix(a, "inv")
    eye = enp.broadcast_to(enp.eye(x.shape[-1], dtype=x.dtype), x.shape)
    return enp._to(_batched(_solve_core, x, eye), out)


def _lu_diagonal(x):
    lu, _, sign, _ = _batched(_lu_core, x)
    return _enp().diagonal(lu, axis1=-2, axis2=-1), sign


@eager
def det(a):
    """Determinants of square matrices, from their LU factors.

    Example:
        >>> enp.linalg.det(enp.array([[1.0, 2.0], [3.0, 4.0]]))
        Array(-2., dtype=float32)
    """
    enp = _enp()
    x, out = _matrix(a, "det")
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
    x, out = _matrix(a, "slogdet")
    d, sign = _lu_diagonal(x)
    sign = sign * enp.prod(enp.sign(d), axis=-1)
    return SlogdetResult(enp._to(sign, out), enp._to(enp.sum(enp.log(enp.abs(d)), axis=-1), out))


def _qr_core(a):
    """Householder QR of one m x n matrix with LAPACK's signs (``R[k, k]`` has the opposite
    sign of the column's pivot; a column already zero below the diagonal is left as is):
    (the m x m ``Q``, the m x n ``R``)."""
    enp = _enp()
    m, n = a.shape
    _, c, idx = _iotas(m, n)

    def step(k, carry):
        rr, q = carry
        x = _pick(c == k, rr, 1)
        x0 = _pick(idx == k, x, 0)
        below = enp.where(idx > k, x, 0)
        beta = -enp.copysign(enp.sqrt(x0 * x0 + enp.sum(below * below)), x0)
        v = enp.where(idx == k, x0 - beta, below)
        scale = enp.where(enp.any(below != 0), 2 / enp.sum(v * v), 0)
        rr = rr - scale * v[:, None] * enp.matmul(v, rr)[None]
        q = q - scale * enp.matmul(q, v)[:, None] * v[None]
        return rr, q

    rr, q = lax.fori_loop(0, builtins.min(m, n), step, (a, enp.eye(m, dtype=a.dtype)))
    return q, enp.triu(rr)


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
    enp = _enp()
    if mode not in ("reduced", "complete", "r"):
        _error(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    x, out = _matrix(a, "qr", square=False)
    m, n = x.shape[-2:]
    k = builtins.min(m, n)
    x, scale = _scaled(x)
    q, rr = _batched(_qr_core, x)
    rr = rr / scale
    if mode != "complete":
        q, rr = q[..., :, :k], rr[..., :k, :]
    if mode == "r":
        return enp._to(rr, out)
    return QRResult(enp._to(q, out), enp._to(rr, out))


def _round_robin(n):
    """The rounds of a round-robin tournament of ``n`` (even) players: (n - 1, n / 2) arrays
    of the first and second of each pair, each pair of indices once in all, and for each round
    the permutation that puts [firsts..., seconds...] back in index order."""
    players = list(range(n))
    ps, qs, back = [], [], []
    for _ in range(n - 1):
        pairs = [tuple(sorted((players[i], players[n - 1 - i]))) for i in range(n // 2)]
        p, q = [a for a, _ in pairs], [b for _, b in pairs]
        ps.append(p)
        qs.append(q)
        back.append(np.argsort(p + q))
        players = [players[0], players[-1], *players[1:-1]]
    return (np.array(ps, np.int32), np.array(qs, np.int32), np.array(back, np.int32))


def _rotate(x, p, q, back, sin, tau, axis):
    """Rotate the pairs of slices ``(p[i], q[i])`` of ``x`` along ``axis`` at once by the
    angles of ``sin`` (and ``tau = sin / (1 + cos)``): ``x_p, x_q <- cos x_p - sin x_q,
    sin x_p + cos x_q`` (a Jacobi round, by gathers), in Rutishauser's form
    ``x_p - sin (x_q + tau x_p)``, ``x_q + sin (x_p - tau x_q)``: a rotation by a small
    angle is a small correction, where ``cos`` itself would round up to 1 and make every
    rotation stretch its slices (by up to eps / 2 each; in float32, 6 sweeps of a 64 x 64
    matrix grew the eigenvectors' norms by 70 eps and the eigenvalues by twice that)."""
    enp = _enp()
    shape = [1, 1]
    shape[axis] = -1
    sin, tau = enp.reshape(sin, shape), enp.reshape(tau, shape)
    xp, xq = enp.take(x, p, axis=axis), enp.take(x, q, axis=axis)
    both = enp.concatenate([xp - sin * (xq + tau * xp), xq + sin * (xp - tau * xq)], axis=axis)
    return enp.take(both, back, axis=axis)


def _jacobi_angle(ratio):
    """``(sin, tau)`` (``tau = sin / (1 + cos)``) of the rotation whose tangent ``t`` is the
    smaller root of ``t**2 + 2 ratio t - 1 = 0`` (Golub and Van Loan's symmetric Schur step);
    ratio = inf (nothing to rotate) gives the identity."""
    enp = _enp()
    a = enp.abs(ratio)
    t = enp.where(ratio >= 0, 1.0, -1.0) / (a + enp.sqrt(1 + a * a))
    t = enp.where(enp.isfinite(ratio), t, 0)
    cos = 1 / enp.sqrt(1 + t * t)
    sin = t * cos
    return sin, sin / (1 + cos)


_SWEEPS = 30     # Jacobi sweeps at most (each converges quadratically; 6-12 are typical)


def _sweeps(step, n, init, converged, start=lambda s: s, end=lambda c: c):
    """Jacobi sweeps of ``n - 1`` rounds of ``step(ps, qs, back, carry)`` from the state
    ``init``, at least one and at most ``_SWEEPS``: each sweep runs from ``start(state)`` and
    its last carry gives the next state, ``end(carry)``, or ends the loop if
    ``converged(carry)``.

    The while loop carries only the sweep count (set to ``_SWEEPS`` on convergence) and the
    state, all of it used after the loop: a loop result left unused (as the SVD's measure
    of orthogonality was) made the upstream canonicalization drop it from the scf.while's results
    but not from its operands in some programs ("region branch point has 4 operands, but
    region successor needs 6 inputs")."""
    enp = _enp()
    ps, qs, back = (enp.asarray(t) for t in _round_robin(n))

    def sweep(carry):
        k, state = carry

        def one(r, c):
            return step(ps[r], qs[r], back[r], c)
        last = lax.fori_loop(0, n - 1, one, start(state))
        return enp.where(converged(last), _SWEEPS, k + 1), end(last)

    def more(carry):
        return carry[0] < _SWEEPS

    return lax.while_loop(more, sweep, (enp.zeros((), np.int32), init))[1]


def _even(x, axes):
    """``x`` padded with zero rows/columns on ``axes`` to an even size (Jacobi rounds pair
    all indices; a zero pad never mixes into the rest)."""
    n = x.shape[axes[0]]
    if n % 2 == 0:
        return x
    cfg = [(0, 0, 0)] * x.ndim
    for a in axes:
        cfg[a] = (0, 1, 0)
    return lax.pad(x, _enp().zeros((), x.dtype), cfg)


def _eigh_core(a):
    """Eigenvalues (ascending) and eigenvectors of one symmetric matrix by cyclic Jacobi
    rotations in round-robin order (n / 2 disjoint rotations per round)."""
    enp = _enp()
    n = a.shape[0]
    if n == 0:      # (no rounds to index: the sweeps need at least one pair)
        return enp.zeros((0,), a.dtype), a
    x = _even(a, (0, 1))
    m = x.shape[0]
    eps = float(np.finfo(a.dtype).eps)
    tol = eps * enp.sqrt(enp.sum(x * x))
    r, c, _ = _iotas(m)

    def step(p, q, back, carry):
        x, v = carry
        d = enp.diagonal(x)
        app, aqq, apq = enp.take(d, p), enp.take(d, q), x[p, q]
        sin, tau = _jacobi_angle((aqq - app) / (2 * apq))
        x = _rotate(_rotate(x, p, q, back, sin, tau, 1), p, q, back, sin, tau, 0)
        return x, _rotate(v, p, q, back, sin, tau, 1)

    def converged(carry):
        x, _ = carry
        off = enp.where(r == c, 0, x)
        return enp.sqrt(enp.sum(off * off)) <= tol

    x, v = _sweeps(step, m, (x, enp.eye(m, dtype=a.dtype)), converged)
    v = v[:n, :n]
    # The eigenvalues as Rayleigh quotients of the vectors, not the diagonal the rotations
    # left: that accumulated each round's rounding (4x JAX's error at 64 x 64 in float32),
    # these are as accurate as LAPACK's for one matmul.
    w = enp.sum(v * enp.matmul(a, v), 0) / enp.sum(v * v, 0)
    order = enp.argsort(w)
    return enp.take(w, order), enp.take(v, order, axis=1)


def _symmetric(x, uplo):
    """The symmetric matrix whose lower (``uplo`` "L") or upper ("U") triangle ``x`` holds."""
    enp = _enp()
    k = -1 if uplo == "L" else 1
    tri = enp.tril if uplo == "L" else enp.triu
    return tri(x) + enp.swapaxes(tri(x, k), -1, -2)


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
    enp = _enp()
    x, out = _matrix(a, "eigh")
    uplo = "L" if UPLO is None else UPLO
    if uplo not in ("L", "U"):
        _error(f"eigh: UPLO must be 'L' or 'U', got {uplo!r}")
    sym = (x + enp.swapaxes(x, -1, -2)) / 2 if symmetrize_input else _symmetric(x, uplo)
    w, v = _batched(_eigh_core, sym)
    return EighResult(enp._to(w, out), enp._to(v, out))


@eager
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803
    """The eigenvalues (ascending) of symmetric matrices (see :func:`eigh`)."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def _svd_core(a):
    """One-sided (Hestenes) Jacobi SVD of one m x n matrix, m >= n: rotate pairs of columns
    until all are orthogonal; (U with orthogonal columns of norms S, V), unsorted.

    U and V get the same column rotations and are carried stacked as one matrix: IREE 3.13's
    runtime rejected the copies between them when the loop carried them apart ("indirect
    buffer reference slot 0 is out range of the declared binding capacity")."""
    enp = _enp()
    rows, n = a.shape
    if n == 0:      # (no rounds to index: the sweeps need at least one pair)
        return a, enp.zeros((0, 0), a.dtype)
    x = _even(a, (1,))
    m = x.shape[1]
    eps = float(np.finfo(a.dtype).eps)

    def step(p, q, back, carry):
        uv, worst = carry
        up, uq = enp.take(uv[:rows], p, axis=1), enp.take(uv[:rows], q, axis=1)
        alpha, beta = enp.sum(up * up, 0), enp.sum(uq * uq, 0)
        gamma = enp.sum(up * uq, 0)
        sin, tau = _jacobi_angle((beta - alpha) / (2 * gamma))
        off = enp.abs(gamma) / enp.sqrt(alpha * beta)
        worst = enp.maximum(worst, enp.max(enp.where(gamma == 0, 0, off)))
        return _rotate(uv, p, q, back, sin, tau, 1), worst

    def converged(carry):
        return carry[1] <= eps

    def start(uv):      # each sweep measures its own least orthogonal pair
        return uv, enp.zeros((), a.dtype)

    uv = _sweeps(step, m, enp.concatenate([x, enp.eye(m, dtype=a.dtype)]), converged, start,
                 lambda carry: carry[0])
    return uv[:rows, :n], uv[rows:rows + n, :n]


def _orthonormal_completion(u, full):
    """``u`` (m x k, m >= k, orthonormal or zero columns) with its zero columns replaced and,
    if ``full``, m - k columns appended so that it is orthonormal: the Householder Q of ``u``
    with each column's sign fixed to match ``u``."""
    enp = _enp()
    k = u.shape[-1]
    if k == 0:      # nothing to complete from: the identity
        m = u.shape[-2]
        return enp.broadcast_to(enp.eye(m, dtype=u.dtype), u.shape[:-1] + (m,)) if full else u
    q, rr = _batched(_qr_core, u)
    d = enp.diagonal(rr, axis1=-2, axis2=-1)[..., :k]
    signs = enp.where(d < 0, -1.0, 1.0).astype(u.dtype)
    head = q[..., :, :k] * signs[..., None, :]
    return enp.concatenate([head, q[..., :, k:]], axis=-1) if full else head


def _scaled(x):
    """``x`` times a power of two per matrix that brings its largest magnitude into [0.5, 1),
    and that factor: the sums of squares of the Jacobi and Householder cores then neither
    underflow nor overflow (entries of 1e-20 or 1e20 in float32), as LAPACK's scaling keeps
    them. A power of two, so the scaling and its undoing are exact."""
    enp = _enp()
    big = enp.max(enp.abs(x), axis=(-2, -1), keepdims=True, initial=0)
    _, e = enp.frexp(big)
    scale = enp.ldexp(enp.ones((), x.dtype), -e)
    return x * enp.where(enp.isfinite(big) & (big > 0), scale, 1), scale


def _singular(x):
    """(U-ish, S, V) of the tall form of ``x`` (its transpose when wide), S descending, U's
    columns normalized (zero where S is 0)."""
    enp = _enp()
    x, scale = _scaled(x)
    u, v = _batched(_svd_core, x)
    s = enp.sqrt(enp.sum(u * u, axis=-2))
    if s.shape[-1] > 1:     # (one column: nothing to sort, and IREE 3.13 fails on the gather)
        order = enp.argsort(-s, axis=-1)
        s = enp.take_along_axis(s, order, axis=-1)
        u = enp.take_along_axis(u, order[..., None, :], axis=-1)
        v = enp.take_along_axis(v, order[..., None, :], axis=-1)
    return u / enp.where(s > 0, s, 1)[..., None, :], s / scale[..., 0], v


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
    enp = _enp()
    x, out = _matrix(a, "svd", square=False)
    wide = x.shape[-2] < x.shape[-1]
    u, s, v = _singular(enp.swapaxes(x, -1, -2) if wide else x)
    if not compute_uv:
        return enp._to(s, out)
    u = _orthonormal_completion(u, full_matrices)
    if wide:
        u, v = v, u
    return SVDResult(enp._to(u, out), enp._to(s, out), enp._to(enp.swapaxes(v, -1, -2), out))


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
    x, out = _matrix(a, "pinv", square=False)
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
    x, out = _matrix(a, "lstsq", square=False)
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
