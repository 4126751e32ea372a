"""The linear algebra kernels of ember.lax.linalg, ember.numpy.linalg and ember.scipy.linalg:
LU with partial pivoting, triangular solves, blocked Cholesky, Householder QR, Jacobi eigh
and one-sided Jacobi SVD, composed from ember ops (no LAPACK is called), and the drivers
that batch them.

Each algorithm works on one matrix in counted loops (``fori_loop``, one pivot, column or
rotation round per step, as masked whole-matrix updates) and is vmapped over the leading
(batch) axes (:func:`batched`). Float16/bfloat16 and integers are computed in float32
(float64 stays float64; :func:`matrix`) and the callers return the results in the input's
float dtype. The algorithms are the textbook ones, O(n^3) for n x n matrices, in loops of n
steps (Jacobi: sweeps of n - 1 rounds), meant for small and medium matrices.

The kernels are written with lax ops; arithmetic operators and basic indexing (``x + y``,
``x[:, None]``) on traced arrays are the array methods ember.numpy installs, as in JAX's
``lax.linalg``.

Example:
    >>> from ember.lax import _linalg as kernels
    >>> x, out = kernels.matrix(np.eye(3, dtype=np.float16), "inv")
    >>> x.dtype, out
    (dtype('float32'), dtype('float16'))
"""

from __future__ import annotations

import builtins

import numpy as np

from ember import dtypes, lax
from ember.errors import TracingError
from ember.frontend.custom_derivatives import custom_jvp
from ember.frontend.tracing import current_trace, user_where

# --- lax-level helpers ---------------------------------------------------------------------


def error(msg):
    """Raise a TracingError naming the user's line."""
    raise TracingError(f"{msg}\n  at {user_where()}")


def lift(x):
    """``x`` as a tracer of the current trace."""
    return current_trace().lift(x)


def const(v, dtype):
    """The scalar ``v`` as a (strongly typed) 0-d array of ``dtype``."""
    return lift(np.asarray(v, dtype))


def to(x, dtype):
    """``x`` converted to ``dtype`` (strongly typed)."""
    return lax.convert_element_type(x, dtype)


def _is_array(v) -> bool:
    return hasattr(v, "shape") and not isinstance(v, np.generic)


def _broadcast(x, shape):
    """``x`` broadcast to ``shape`` (NumPy's rules)."""
    if x.shape == shape:
        return x
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - x.ndim, len(shape))))


def where(c, x, y):
    """``x`` where ``c`` else ``y``, broadcast; a Python scalar takes the other's dtype."""
    dt = (x if _is_array(x) else y).dtype
    c, x, y = (lift(v) if _is_array(v) else const(v, dt) for v in (c, x, y))
    shape = np.broadcast_shapes(c.shape, x.shape, y.shape)
    return lax.select(_broadcast(c, shape), _broadcast(x, shape), _broadcast(y, shape))


def _axes(axis, ndim):
    return tuple(range(ndim)) if axis is None else \
        tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def _keep(out, shape, axes, keepdims):
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def sum_(x, axis=None, keepdims=False):
    """The sum of ``x`` over ``axis`` (None: all)."""
    axes = _axes(axis, x.ndim)
    return _keep(lax.reduce_sum(x, axes), x.shape, axes, keepdims)


def max_(x, axis=None, keepdims=False):
    """The maximum of ``x`` over ``axis`` (None: all)."""
    axes = _axes(axis, x.ndim)
    return _keep(lax.reduce_max(x, axes), x.shape, axes, keepdims)


def any_(x):
    """Whether any element of the bool ``x`` is set."""
    return lax.reduce_or(x, tuple(range(x.ndim)))


def matmul(a, b):
    """The product of a matrix or vector ``a`` and a matrix or vector ``b``."""
    return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))


def swap(x):
    """The last two axes of ``x`` swapped."""
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return lax.transpose(x, perm)


def move_axis(x, source, dest):
    """``x`` with axis ``source`` moved to ``dest``."""
    order = [i for i in range(x.ndim) if i != source % x.ndim]
    order.insert(dest % x.ndim, source % x.ndim)
    return lax.transpose(x, order)


def eye(n, dtype, m=None):
    """The n x m identity."""
    rows, cols, _ = iotas(n, m)
    return to(lax.eq(rows, cols), dtype)


def tri(x, k=0, lower=True):
    """``x`` (a stack of matrices) with the elements above (``lower``) or below the k-th
    diagonal zeroed (NumPy's tril and triu)."""
    n, m = x.shape[-2:]
    mask = np.tri(n, m, k if lower else k - 1, dtype=bool)
    mask = lax.broadcast_in_dim(lift(mask if lower else ~mask), x.shape,
                                (x.ndim - 2, x.ndim - 1))
    return lax.select(mask, x, _broadcast(const(0, x.dtype), x.shape))


def diagonal(x):
    """The main diagonal of each matrix of ``x`` (its last two axes), as its last axis."""
    batch = x.shape[:-2]
    k = builtins.min(x.shape[-2:])
    b0 = [0] * len(batch)
    x = lax.slice(x, b0 + [0, 0], list(batch) + [k, k])
    x = lax.reshape(x, batch + (k * k,))
    return lax.slice(x, b0 + [0], list(batch) + [k * k], [1] * len(batch) + [k + 1])


def take(x, index, axis=0):
    """The slices of ``x`` along ``axis`` at the int vector ``index`` (in range)."""
    out = lax.gather(x, lax.reshape(lift(index), (index.shape[0], 1)), (axis,))
    return move_axis(out, 0, axis) if axis else out


def argsort(x):
    """The (int32) order that sorts the vector ``x`` ascending, stably."""
    return lax.sort((x, lax.iota(np.int32, x.shape[0])), dimension=0, num_keys=1)[1]


# --- batching and dtypes -------------------------------------------------------------------

def matrix(a, name, square=True):
    """``a`` lifted, at least 2-D (square if asked), in its compute dtype; and the dtype the
    results are returned in."""
    x = lift(a)
    if x.ndim < 2:
        error(f"{name}: expected an array of at least 2 dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        error(f"{name}: the last 2 dimensions must be square, got shape {x.shape}")
    out = dtypes.to_inexact(x.dtype)
    if dtypes.is_complex(out):    # (the kernels are real: converting would drop imag parts)
        error(f"{name}: complex matrices ({out.name}) are not supported yet; ember's linear "
              "algebra kernels are real")
    compute = out if out in (np.float32, np.float64) else np.dtype(np.float32)
    return to(x, compute), out


def batched(core, *xs, rank=2):
    """``core`` on the matrices of ``xs`` (each with the same leading batch axes: all but the
    last ``rank`` of the first), vmapped over the batch axes."""
    from ember.frontend.vmap import vmap
    f = core
    for _ in range(xs[0].ndim - rank):
        f = vmap(f)
    return f(*xs)


def iotas(n, m=None):
    """(row index, column index) of an n x m matrix, and the index vector of length n."""
    m = n if m is None else m
    return (lax.broadcasted_iota(np.int32, (n, m), 0), lax.broadcasted_iota(np.int32, (n, m), 1),
            lax.iota(np.int32, n))


def pick(mask, x, axis):
    """The sum of ``x`` where ``mask``, over ``axis``: one row or column of a matrix, or one
    element of a vector, chosen by a traced index (``where`` keeps NaNs elsewhere out)."""
    return sum_(where(mask, x, const(0, x.dtype)), axis)


# --- LU, triangular solves, Cholesky -------------------------------------------------------

def lu_core(a):
    """LU of one m x n matrix with partial pivoting, as LAPACK's getrf: (the unit lower and
    upper factors packed in one matrix, the row permutation, its parity as +-1, and the
    pivot row chosen at each of the min(m, n) steps, getrf's ``ipiv`` counted from 0)."""
    m, n = a.shape
    r, c, idx = iotas(m, n)
    steps = builtins.min(m, n)
    kdx = lax.iota(np.int32, steps)

    def step(k, carry):
        a, perm, sign, piv = carry
        col = pick(c == k, a, 1)
        p = lax.argmax(where(idx >= k, lax.abs(col), -1), 0)
        row_k, row_p = pick(r == k, a, 0), pick(r == p, a, 0)
        a = where(r == k, row_p[None], where(r == p, row_k[None], a))
        perm_k, perm_p = pick(idx == k, perm, 0), pick(idx == p, perm, 0)
        perm = where(idx == k, perm_p, where(idx == p, perm_k, perm))
        sign = where(p == k, sign, -sign)
        piv = where(kdx == k, to(p, np.int32), piv)
        col = pick(c == k, a, 1)
        pivot = pick(idx == k, col, 0)
        low = where((idx > k) & (pivot != 0), col / pivot, 0)
        a = a - low[:, None] * where(c > k, row_p[None], 0)
        a = where((c == k) & (r > k), low[:, None], a)
        return a, perm, sign, piv

    init = (a, idx, const(1, a.dtype), kdx)
    if steps == 0:      # (argmax has no empty axis to search)
        return init
    return lax.fori_loop(0, steps, step, init)


def lu(a, name):
    """(the packed LU factors, the row permutation, getrf's pivots) of a stack of m x n
    matrices, in their compute dtype; and the dtype the results are returned in."""
    x, out = matrix(a, name, square=False)
    packed, perm, _, piv = batched(lu_core, x)
    return packed, perm, piv, out


def pivots_to_permutation(piv, m):
    """The row permutation (``a[perm] = L @ U``) that getrf's pivots ``piv`` stand for: the
    swaps of rows i and ``piv[i]`` in order, applied to 0..m-1."""
    idx, kdx = lax.iota(np.int32, m), lax.iota(np.int32, piv.shape[0])

    def swap_rows(k, perm):
        p = pick(kdx == k, piv, 0)
        at_k, at_p = pick(idx == k, perm, 0), pick(idx == p, perm, 0)
        return where(idx == k, at_p, where(idx == p, at_k, perm))
    return lax.fori_loop(0, piv.shape[0], swap_rows, idx)


def triangular_core(t, b, lower, unit):
    """``x`` with ``t @ x = b`` for one triangular n x n ``t`` (only its ``lower`` or upper
    triangle is read; a ``unit`` diagonal is not read) and an n x k ``b``: substitution, one
    row of ``x`` per step."""
    n = t.shape[0]
    r, _, idx = iotas(n)

    def step(i, x):
        row = i if lower else n - 1 - i
        ti = pick(r == row, t, 0)
        off = where((idx < row) if lower else (idx > row), ti, 0)
        xi = pick(idx[:, None] == row, b, 0) - matmul(off, x)
        if not unit:
            xi = xi / pick(idx == row, ti, 0)
        return where(idx[:, None] == row, xi[None], x)

    return lax.fori_loop(0, n, step, lax.full_like(b, 0))


def lu_solve_core(lu, perm, b, transposed=False):
    """``x`` with ``a @ x = b`` (``a.T @ x = b`` if ``transposed``) from ``a``'s LU factors
    packed in ``lu`` and its row permutation ``perm`` (``a[perm] = L @ U``)."""
    if not transposed:
        y = triangular_core(lu, take(b, perm), True, True)
        return triangular_core(lu, y, False, False)
    lu_t = swap(lu)
    y = triangular_core(lu_t, b, True, False)
    return take(triangular_core(lu_t, y, False, True), argsort(perm))


def solve_core(a, b):
    """``x`` with ``a @ x = b`` for one square ``a`` by LU with partial pivoting."""
    lu_, perm, _, _ = lu_core(a)
    return lu_solve_core(lu_, perm, b)


def solve_with(name, a, b, solve, vector, *extra):
    """``solve(matrix, rhs, *extra)`` on each square matrix of ``a`` and right-hand side of
    ``b`` (a vector if ``vector``, else a matrix), their batch axes broadcast (and those of
    the arrays ``extra``, which have ``a``'s); the result in the float dtype of both."""
    x, out = matrix(a, name)
    y = lift(b)
    if vector:
        y = lax.expand_dims(y, (y.ndim,))
    rows = y.shape[-2] if y.ndim >= 2 else "no"
    if rows != x.shape[-1]:
        error(f"{name}: a of shape {x.shape} and b of shape {lift(b).shape} do not match "
              f"({x.shape[-1]} equations, {rows} right-hand rows)")
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        error(f"{name}: batch shapes {x.shape[:-2]} of a and {y.shape[:-2]} of b do not "
              "broadcast")
    if dtypes.is_float(y.dtype):
        out = dtypes.canonicalize(dtypes.promote_pairs([(out, False), (y.dtype, False)])[0],
                                  warn=False)
    ct = np.float64 if out == np.float64 else np.float32
    extra = [_broadcast(e, batch + e.shape[x.ndim - 2:]) for e in extra]
    x = _broadcast(to(x, ct), batch + x.shape[-2:])
    y = _broadcast(to(y, ct), batch + y.shape[-2:])
    res = batched(solve, x, y, *extra)
    return to(lax.reshape(res, res.shape[:-1]) if vector else res, out)


def solve_triangular(a, b, transposed, lower, unit_diagonal, vector):
    """``x`` with ``op(a) @ x = b`` for a stack of triangular ``a`` (its ``lower`` or upper
    triangle read, a ``unit_diagonal`` taken as ones), ``op`` transposing if
    ``transposed``; ``b`` a stack of vectors if ``vector``, else of matrices."""
    def solve(t, r):
        if transposed:
            t = swap(t)
        return triangular_core(t, r, lower != transposed, unit_diagonal)
    return solve_with("solve_triangular", a, b, solve, vector)


CHOLESKY_PANEL = 16     # columns per panel of the blocked Cholesky


def cholesky_core(a):
    """The lower Cholesky factor of one matrix, reading its lower triangle (NaN where the
    matrix is not positive definite).

    Right-looking and blocked, as LAPACK's potrf: panels of ``CHOLESKY_PANEL`` columns, in
    each one column per step with its rank-1 update subtracted from the rest of the panel;
    then the panel's product ``P @ P.T`` subtracted from the trailing matrix (one matmul).
    So each pivot is ``a[j, j]`` minus a few partial sums, each rounded as it shrinks.
    Summing all of column j's products first and subtracting once (left-looking, one
    matrix-vector product a column) loses more: the float32 8 x 8 Hilbert matrix got a
    negative pivot, LAPACK's none. A matrix of more than one panel is padded with the
    identity to whole panels. The carry's upper triangle is scratch."""
    n = a.shape[0]
    if n == 0:
        return a
    b = n if n <= CHOLESKY_PANEL else CHOLESKY_PANEL
    size = -(-n // b) * b
    s = a
    if size > n:    # the identity's rows and columns keep the factor of the rest as it is
        s = lax.pad(a, const(0, a.dtype), [(0, size - n, 0)] * 2)
        r, c, _ = iotas(size)
        s = s + to((r == c) & (r >= n), a.dtype)
    _, pc, _ = iotas(size, b)
    _, c, idx = iotas(size)

    def column(j0, jj, panel):
        v = pick(pc == jj, panel, 1)
        col = where(idx >= j0 + jj, v / lax.sqrt(pick(idx == j0 + jj, v, 0)), 0)
        row = lax.dynamic_slice(col, (j0,), (b,))      # (zero left of column jj)
        return where(pc == jj, col[:, None], panel - col[:, None] * row[None])

    def panel_step(k, s):
        j0 = k * b
        panel = lax.dynamic_slice(s, (0, j0), (size, b))
        panel = lax.fori_loop(0, b, lambda jj, p: column(j0, jj, p), panel)
        if size > b:
            s = s - where(c >= j0 + b, matmul(panel, swap(panel)), 0)
        return lax.dynamic_update_slice(s, panel, (0, j0))

    if size == b:       # one panel: no outer loop
        return tri(lax.fori_loop(0, b, lambda jj, p: column(0, jj, p), s))
    s = lax.fori_loop(0, size // b, panel_step, s)
    return tri(s[:n, :n])


def cholesky(a, name="cholesky"):
    """The lower Cholesky factors of a stack of symmetric positive definite matrices (their
    lower triangles read), in the input's float dtype; not positive definite: the factor's
    triangle all NaN, its other entries zero, as in JAX."""
    x, out = matrix(a, name)
    low = batched(cholesky_core, x)
    failed = lax.reduce_or(lax.ne(diagonal(low), diagonal(low)), (low.ndim - 2,))
    n = low.shape[-1]
    low = where(lax.broadcast_in_dim(failed, low.shape, tuple(range(low.ndim - 2)))
                & np.tri(n, dtype=bool), np.nan, low)
    return to(low, out)


def symmetric(x, uplo):
    """The symmetric matrix whose lower (``uplo`` "L") or upper ("U") triangle ``x`` holds."""
    lower = uplo == "L"
    return tri(x, lower=lower) + swap(tri(x, -1 if lower else 1, lower=lower))


# --- QR ------------------------------------------------------------------------------------

def qr_core(a):
    """Householder QR of one m x n matrix with LAPACK's signs (``R[k, k]`` has the opposite
    sign of the column's pivot; a column already zero below the diagonal is left as is):
    (the m x m ``Q``, the m x n ``R``)."""
    m, n = a.shape
    _, c, idx = iotas(m, n)

    def step(k, carry):
        rr, q = carry
        x = pick(c == k, rr, 1)
        x0 = pick(idx == k, x, 0)
        below = where(idx > k, x, 0)
        beta = -lax.copysign(lax.sqrt(x0 * x0 + sum_(below * below)), x0)
        v = where(idx == k, x0 - beta, below)
        scale = where(any_(below != 0), 2 / sum_(v * v), 0)
        rr = rr - scale * v[:, None] * matmul(v, rr)[None]
        q = q - scale * matmul(q, v)[:, None] * v[None]
        return rr, q

    rr, q = lax.fori_loop(0, builtins.min(m, n), step, (a, eye(m, a.dtype)))
    return q, tri(rr, lower=False)


def scaled(x):
    """``x`` times a power of two per matrix that brings its largest magnitude into [0.5, 1),
    and that factor: the sums of squares of the Jacobi and Householder cores then neither
    underflow nor overflow (entries of 1e-20 or 1e20 in float32), as LAPACK's scaling keeps
    them. A power of two, so the scaling and its undoing are exact. (The exponent is read
    from the bits of the largest magnitude, as frexp's, taking a subnormal one as
    2**minexp; the factor is formed from two powers of two, as ldexp's, so that it may be
    subnormal.)"""
    big = lax.max(max_(lax.abs(x), (-2, -1), keepdims=True), const(0, x.dtype))
    info = np.finfo(x.dtype)
    nmant, bias = int(info.nmant), int(info.maxexp) - 1
    ut = np.dtype(f"uint{8 * x.dtype.itemsize}")
    biased = to(lax.shift_right_logical(lax.bitcast_convert_type(big, ut),
                                        _broadcast(const(nmant, ut), big.shape)), np.int32)
    # big = m * 2**e, 0.5 <= m < 1; 0, inf and NaN: e = 0 (frexp's), so the factor is 1
    e = where(lax.is_finite(big) & (big > 0), biased - (bias - 1), 0)
    lo, hi = int(info.minexp), int(info.maxexp) - 1
    s1 = lax.clamp(lo, -e, hi)
    s2 = lax.clamp(lo, -e - s1, hi)

    def pow2(k):            # 2**k by its bits (k in the normal exponent range)
        return lax.bitcast_convert_type(lax.shift_left(to(k + bias, ut), _broadcast(
            const(nmant, ut), k.shape)), x.dtype)
    scale = pow2(s2) * pow2(s1)
    return x * where(lax.is_finite(big) & (big > 0), scale, 1), scale


def qr(a, name, mode):
    """``(q, r)`` of a stack of m x n matrices by Householder QR (``mode`` "reduced": q
    m x k, r k x n, k = min(m, n); "complete": q m x m, r m x n), or ``r`` alone (``mode``
    "r", k x n), in the input's float dtype."""
    x, out = matrix(a, name, square=False)
    m, n = x.shape[-2:]
    k = builtins.min(m, n)
    x, scale = scaled(x)
    q, rr = batched(qr_core, x)
    rr = rr / scale
    if mode != "complete":
        q, rr = q[..., :, :k], rr[..., :k, :]
    if mode == "r":
        return to(rr, out)
    return to(q, out), to(rr, out)


# --- Jacobi eigh and SVD -------------------------------------------------------------------

def round_robin(n):
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


def rotate(x, p, q, back, sin, tau, axis):
    """Rotate the pairs of slices ``(p[i], q[i])`` of ``x`` along ``axis`` at once by the
    angles of ``sin`` (and ``tau = sin / (1 + cos)``): ``x_p, x_q <- cos x_p - sin x_q,
    sin x_p + cos x_q`` (a Jacobi round, by gathers), in Rutishauser's form
    ``x_p - sin (x_q + tau x_p)``, ``x_q + sin (x_p - tau x_q)``: a rotation by a small
    angle is a small correction, where ``cos`` itself would round up to 1 and make every
    rotation stretch its slices (by up to eps / 2 each; in float32, 6 sweeps of a 64 x 64
    matrix grew the eigenvectors' norms by 70 eps and the eigenvalues by twice that)."""
    shape = [1, 1]
    shape[axis] = sin.shape[0]
    sin, tau = lax.reshape(sin, tuple(shape)), lax.reshape(tau, tuple(shape))
    xp, xq = take(x, p, axis), take(x, q, axis)
    both = lax.concatenate([xp - sin * (xq + tau * xp), xq + sin * (xp - tau * xq)], axis)
    return take(both, back, axis)


def jacobi_angle(ratio):
    """``(sin, tau)`` (``tau = sin / (1 + cos)``) of the rotation whose tangent ``t`` is the
    smaller root of ``t**2 + 2 ratio t - 1 = 0`` (Golub and Van Loan's symmetric Schur step);
    ratio = inf (nothing to rotate) gives the identity."""
    a = lax.abs(ratio)
    t = where(ratio >= 0, const(1, a.dtype), const(-1, a.dtype)) / (a + lax.sqrt(1 + a * a))
    t = where(lax.is_finite(ratio), t, 0)
    cos = 1 / lax.sqrt(1 + t * t)
    sin = t * cos
    return sin, sin / (1 + cos)


SWEEPS = 30     # Jacobi sweeps at most (each converges quadratically; 6-12 are typical)


def sweeps(step, n, init, converged, start=lambda s: s, end=lambda c: c):
    """Jacobi sweeps of ``n - 1`` rounds of ``step(ps, qs, back, carry)`` from the state
    ``init``, at least one and at most ``SWEEPS``: each sweep runs from ``start(state)`` and
    its last carry gives the next state, ``end(carry)``, or ends the loop if
    ``converged(carry)``.

    The while loop carries only the sweep count (set to ``SWEEPS`` on convergence) and the
    state, all of it used after the loop: a loop result left unused (as the SVD's measure
    of orthogonality was) made the upstream canonicalization drop it from the scf.while's
    results but not from its operands in some programs ("region branch point has 4
    operands, but region successor needs 6 inputs")."""
    ps, qs, back = (lift(t) for t in round_robin(n))

    def sweep(carry):
        k, state = carry

        def one(r, c):
            return step(*(lax.dynamic_index_in_dim(t, r, 0, keepdims=False)
                          for t in (ps, qs, back)), c)
        last = lax.fori_loop(0, n - 1, one, start(state))
        return where(converged(last), SWEEPS, k + 1), end(last)

    def more(carry):
        return carry[0] < SWEEPS

    return lax.while_loop(more, sweep, (const(0, np.int32), init))[1]


def even(x, axes):
    """``x`` padded with zero rows/columns on ``axes`` to an even size (Jacobi rounds pair
    all indices; a zero pad never mixes into the rest)."""
    n = x.shape[axes[0]]
    if n % 2 == 0:
        return x
    cfg = [(0, 0, 0)] * x.ndim
    for a in axes:
        cfg[a] = (0, 1, 0)
    return lax.pad(x, const(0, x.dtype), cfg)


def eigh_core(a):
    """Eigenvalues (ascending) and eigenvectors of one symmetric matrix by cyclic Jacobi
    rotations in round-robin order (n / 2 disjoint rotations per round)."""
    n = a.shape[0]
    if n == 0:      # (no rounds to index: the sweeps need at least one pair)
        return lax.full((0,), 0, a.dtype), a
    x = even(a, (0, 1))
    m = x.shape[0]
    eps = float(np.finfo(a.dtype).eps)
    tol = eps * lax.sqrt(sum_(x * x))
    r, c, _ = iotas(m)

    def step(p, q, back, carry):
        x, v = carry
        d = diagonal(x)
        apq = lax.gather(x, lax.concatenate([p[:, None], q[:, None]], 1), (0, 1))
        app, aqq = take(d, p), take(d, q)
        sin, tau = jacobi_angle((aqq - app) / (2 * apq))
        x = rotate(rotate(x, p, q, back, sin, tau, 1), p, q, back, sin, tau, 0)
        return x, rotate(v, p, q, back, sin, tau, 1)

    def converged(carry):
        x, _ = carry
        off = where(r == c, 0, x)
        return lax.sqrt(sum_(off * off)) <= tol

    x, v = sweeps(step, m, (x, eye(m, a.dtype)), converged)
    v = v[:n, :n]
    # The eigenvalues as Rayleigh quotients of the vectors, not the diagonal the rotations
    # left: that accumulated each round's rounding (4x JAX's error at 64 x 64 in float32),
    # these are as accurate as LAPACK's for one matmul.
    w = sum_(v * matmul(a, v), 0) / sum_(v * v, 0)
    order = argsort(w)
    return take(w, order), take(v, order, 1)


def eigh(a, name, uplo="L", symmetrize_input=True):
    """``(w, v)``: the eigenvalues (ascending) and eigenvectors (columns) of a stack of
    symmetric matrices, of ``(a + a.T) / 2`` or (not ``symmetrize_input``) of the matrix
    whose ``uplo`` triangle ``a`` holds; in the input's float dtype."""
    x, out = matrix(a, name)
    sym = (x + swap(x)) / 2 if symmetrize_input else symmetric(x, uplo)
    w, v = (eigh_stack.fun if 0 in sym.shape else eigh_stack)(sym)
    return to(w, out), to(v, out)


def inverse_gaps(d):
    """``1 / (d[..., j] - d[..., i])`` at ``[..., i, j]`` off the diagonal, 0 on it (where
    nothing is divided: equal values off it give inf, as JAX's rules do)."""
    off = lift(~np.eye(d.shape[-1], dtype=bool))
    gaps = d[..., None, :] - d[..., :, None]
    return where(off, 1 / where(off, gaps, 1), 0)


@custom_jvp
def eigh_stack(sym):
    """``(w, v)`` of a stack of symmetric matrices (compute dtype), by Jacobi sweeps, with
    the closed-form derivative of JAX's ``eigh_jvp_rule``: the sweeps run in a while loop,
    which reverse mode cannot go through; the rule is linear in the tangent, so reverse
    mode transposes it."""
    return batched(eigh_core, sym)


@eigh_stack.defjvp
def _eigh_jvp(primals, tangents):
    # Nondegenerate perturbation theory: with A = V diag(w) V^T and the symmetric part of dA
    # in the eigenbasis, P = V^T dA V: dw = diag(P), dV = V (F * P), F_ij = 1 / (w_j - w_i).
    (a,), (da,) = primals, tangents
    w, v = eigh_stack(a)
    p = lax.batch_matmul(lax.batch_matmul(swap(v), (da + swap(da)) * 0.5), v)
    return (w, v), (diagonal(p), lax.batch_matmul(v, inverse_gaps(w) * p))


def svd_core(a):
    """One-sided (Hestenes) Jacobi SVD of one m x n matrix, m >= n: rotate pairs of columns
    until all are orthogonal; (U with orthogonal columns of norms S, V), unsorted.

    U and V get the same column rotations and are carried stacked as one matrix: IREE 3.13's
    runtime rejected the copies between them when the loop carried them apart ("indirect
    buffer reference slot 0 is out range of the declared binding capacity")."""
    rows, n = a.shape
    if n == 0:      # (no rounds to index: the sweeps need at least one pair)
        return a, lax.full((0, 0), 0, a.dtype)
    x = even(a, (1,))
    m = x.shape[1]
    eps = float(np.finfo(a.dtype).eps)

    def step(p, q, back, carry):
        uv, worst = carry
        up, uq = take(uv[:rows], p, 1), take(uv[:rows], q, 1)
        alpha, beta = sum_(up * up, 0), sum_(uq * uq, 0)
        gamma = sum_(up * uq, 0)
        sin, tau = jacobi_angle((beta - alpha) / (2 * gamma))
        off = lax.abs(gamma) / lax.sqrt(alpha * beta)
        worst = lax.max(worst, max_(where(gamma == 0, 0, off)))
        return rotate(uv, p, q, back, sin, tau, 1), worst

    def converged(carry):
        return carry[1] <= eps

    def start(uv):      # each sweep measures its own least orthogonal pair
        return uv, const(0, a.dtype)

    uv = sweeps(step, m, lax.concatenate([x, eye(m, a.dtype)], 0), converged, start,
                lambda carry: carry[0])
    return uv[:rows, :n], uv[rows:rows + n, :n]


def orthonormal_completion(u, full):
    """``u`` (m x k, m >= k, orthonormal or zero columns) with its zero columns replaced and,
    if ``full``, m - k columns appended so that it is orthonormal: the Householder Q of ``u``
    with each column's sign fixed to match ``u``."""
    k = u.shape[-1]
    if k == 0:      # nothing to complete from: the identity
        m = u.shape[-2]
        return lax.broadcast_in_dim(eye(m, u.dtype), u.shape[:-1] + (m,),
                                    (u.ndim - 2, u.ndim - 1)) if full else u
    q, rr = batched(qr_core, u)
    d = diagonal(rr)[..., :k]
    signs = where(d < 0, const(-1, u.dtype), const(1, u.dtype))
    head = q[..., :, :k] * signs[..., None, :]
    return lax.concatenate([head, q[..., :, k:]], head.ndim - 1) if full else head


def singular(x):
    """(U-ish, S, V) of the tall form of ``x`` (its transpose when wide), S descending, U's
    columns normalized (zero where S is 0)."""
    x, scale = scaled(x)
    u, v = batched(svd_core, x)
    s = lax.sqrt(sum_(u * u, -2))
    if s.shape[-1] > 1:     # (one column: nothing to sort, and IREE 3.13 fails on the gather)
        def descending(u, s, v):
            order = argsort(-s)
            return take(u, order, 1), take(s, order), take(v, order, 1)
        u, s, v = batched(descending, u, s, v, rank=2)
    return u / where(s > 0, s, 1)[..., None, :], s / scale[..., 0], v


def svd(a, name, full_matrices=True, compute_uv=True):
    """``(u, s, vh)`` (``s`` alone without ``compute_uv``) of a stack of matrices by
    one-sided Jacobi rotations, ``s`` descending, in the input's float dtype."""
    x, out = matrix(a, name, square=False)
    m, n = x.shape[-2:]
    empty = 0 in x.shape
    if not compute_uv:
        return to((svdvals_stack.fun if empty else svdvals_stack)(x), out)
    u, s, vh = (svd_stack.fun if empty else svd_stack)(x)
    # Full matrices: the reduced factor completed (its derivative is the completion's, a
    # Householder QR in counted loops, which both modes go through; JAX's rule refuses
    # full U and V of non-square matrices).
    if full_matrices and m > n:
        u = orthonormal_completion(u, True)
    elif full_matrices and m < n:
        vh = swap(orthonormal_completion(swap(vh), True))
    return to(u, out), to(s, out), to(vh, out)


@custom_jvp
def svd_stack(x):
    """The reduced ``(u, s, vh)`` of a stack of m x n matrices (compute dtype), by one-sided
    Jacobi sweeps (on the transpose of wide ones), with the closed-form derivative of JAX's
    ``svd_jvp_rule`` (the sweeps run in a while loop, which reverse mode cannot go
    through)."""
    wide = x.shape[-2] < x.shape[-1]
    u, s, v = singular(swap(x) if wide else x)
    u = orthonormal_completion(u, False)
    if wide:
        u, v = v, u
    return u, s, swap(v)


@custom_jvp
def svdvals_stack(x):
    """The singular values (descending) of a stack of matrices (compute dtype), with the
    derivative of :func:`svd_stack`'s rule."""
    return singular(swap(x) if x.shape[-2] < x.shape[-1] else x)[1]


def _svd_tangents(x, dx, u, s, vh):
    """(du, ds, dvh) of the reduced SVD ``x = u diag(s) vh`` along ``dx`` (JAX's
    svd_jvp_rule for real matrices; equal singular values give inf, zero ones inf in the
    non-square terms, as JAX's)."""
    v = swap(vh)
    p = lax.batch_matmul(lax.batch_matmul(swap(u), dx), v)        # dx in the singular bases
    ds = diagonal(p)
    row, col = s[..., None, :], s[..., :, None]
    # F_ij = 1 / (s_j^2 - s_i^2) off the diagonal
    f = inverse_gaps(s * s)
    ps, sp = p * row, col * p
    du = lax.batch_matmul(u, f * (ps + swap(ps)))
    dv = lax.batch_matmul(v, f * (sp + swap(sp)))
    m, n = x.shape[-2:]
    if m > n:       # the part of dx v outside u's span
        dxv = lax.batch_matmul(dx, v)
        du = du + (dxv - lax.batch_matmul(u, lax.batch_matmul(swap(u), dxv))) / row
    if n > m:       # the part of dx^T u outside v's span
        dxu = lax.batch_matmul(swap(dx), u)
        dv = dv + (dxu - lax.batch_matmul(v, lax.batch_matmul(vh, dxu))) / row
    return du, ds, swap(dv)


@svd_stack.defjvp
def _svd_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    u, s, vh = svd_stack(x)
    return (u, s, vh), _svd_tangents(x, dx, u, s, vh)


@svdvals_stack.defjvp
def _svdvals_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    u, s, vh = svd_stack.fun(x)
    # ds = diag(u^T dx v), without forming the off-diagonal products
    return s, sum_(u * lax.batch_matmul(dx, swap(vh)), -2)
