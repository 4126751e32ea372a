"""ember.numpy.linalg's decompositions and what is built on them (solve, inv, det, slogdet,
cholesky, qr, eigh, svd, pinv, lstsq, matrix_rank, cond, matrix_power, multi_dot) against
NumPy's LAPACK results in float64: stacks of matrices, rectangular shapes, singular,
rank-deficient, empty, tiny and huge input, under jit and eagerly."""

import numpy as np
import pytest
from helpers import close_to_scale as close
from helpers import f64

import ember
import ember.numpy as enp
import ember.scipy.linalg as sla
from ember.errors import TracingError

LA = enp.linalg
RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


A = f32(2, 4, 4)                  # a stack of general square matrices
B = f32(4, 3)                     # right-hand sides, broadcast against the stack
V = f32(4)                        # one right-hand vector
SPD = (A @ A.swapaxes(-1, -2) + 4 * np.eye(4)).astype(np.float32)
TALL, WIDE = f32(5, 3), f32(3, 5)
# Rank 2 of 4: two rows are combinations of the others.
LOW = np.concatenate([f32(2, 4), np.zeros((2, 4), np.float32)])
LOW[2], LOW[3] = LOW[0] + LOW[1], 2 * LOW[0]
SING = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)






def _solvers(a, b, v, spd, sing):
    return (LA.solve(a, b), LA.solve(a[0], v), LA.inv(a), LA.det(a), *LA.slogdet(a),
            LA.det(sing), *LA.slogdet(sing), LA.cholesky(spd), LA.cholesky(spd, upper=True),
            LA.matrix_power(a[0], 3), LA.matrix_power(a[0], -2), LA.matrix_power(a[0], 0),
            LA.multi_dot([v, a[0], a[1], b]))


def test_solvers_match_numpy():
    a, spd = f64(A), f64(SPD)
    wants = (np.linalg.solve(a, f64(B)), np.linalg.solve(a[0], f64(V)), np.linalg.inv(a),
             np.linalg.det(a), *np.linalg.slogdet(a), 0.0, 0.0, -np.inf,
             np.linalg.cholesky(spd), np.linalg.cholesky(spd).swapaxes(-1, -2),
             np.linalg.matrix_power(a[0], 3), np.linalg.matrix_power(a[0], -2), np.eye(4),
             np.linalg.multi_dot([f64(V), a[0], a[1], f64(B)]))
    labels = ("solve", "solve vector", "inv", "det", "slogdet sign", "slogdet log",
              "det singular", "slogdet singular sign", "slogdet singular log", "cholesky",
              "cholesky upper", "matrix_power 3", "matrix_power -2", "matrix_power 0",
              "multi_dot")
    for how, outs in (("jit", ember.jit(_solvers)(A, B, V, SPD, SING)),
                      ("eager", _solvers(A, B, V, SPD, SING))):
        for label, got, want in zip(labels, outs, wants, strict=True):
            try:
                close(got, want, 1e-4)
            except AssertionError as e:
                raise AssertionError(f"{label} ({how}): {e}") from None


def _factorizations(a, tall, wide, spd, low):
    return (*LA.qr(tall), *LA.qr(wide, "complete"), LA.qr(a, "r"), *LA.eigh(spd),
            LA.eigvalsh(spd, UPLO="U"), *LA.svd(tall, full_matrices=False), *LA.svd(wide),
            LA.svdvals(a), LA.svd(low, compute_uv=False), LA.pinv(tall), LA.pinv(low),
            LA.matrix_rank(low), LA.matrix_rank(a), LA.cond(a), LA.norm(a, 2, axis=(1, 2)),
            *LA.lstsq(tall, tall @ wide[:, :2] + 0.1))


def _up_to_sign(got, want):
    """``got``'s columns flipped to the signs of ``want``'s (eigen- and singular vectors are
    unique up to sign)."""
    g = np.asarray(got, np.float64)
    signs = np.sign(np.sum(g * want, axis=-2, keepdims=True))
    return ember.device_put((g * np.where(signs == 0, 1, signs)).astype(np.float32))


def test_factorizations_match_numpy():
    a, tall, wide, spd, low = map(f64, (A, TALL, WIDE, SPD, LOW))
    outs = ember.jit(_factorizations)(A, TALL, WIDE, SPD, LOW)
    (q, r, qc, rc, rr, w, v, wu, u1, s1, vh1, u2, s2, vh2, sa, sl, p, pl, rank_low, rank_a,
     cond, n2, x, resid, rank, s) = outs
    # QR: LAPACK's signs, so the factors themselves agree.
    wants = (*np.linalg.qr(tall), *np.linalg.qr(wide, "complete"), np.linalg.qr(a, "r"))
    for got, want in zip((q, r, qc, rc, rr), wants, strict=True):
        close(got, want, 1e-5)
    w_np, v_np = np.linalg.eigh(spd)
    close(w, w_np, 1e-5)
    close(_up_to_sign(v, v_np), v_np, 1e-4)
    close(wu, np.linalg.eigvalsh(np.triu(spd) + np.triu(spd, 1).swapaxes(-1, -2)), 1e-5)
    for (u, s_, vh), m, full in (((u1, s1, vh1), tall, False), ((u2, s2, vh2), wide, True)):
        uu, ss, vv = np.linalg.svd(m, full_matrices=full)
        close(s_, ss, 1e-5)
        k = len(ss)
        close(_up_to_sign(u, uu)[:, :k], uu[:, :k], 1e-4)
        close(_up_to_sign(np.asarray(vh).T, vv.T)[:, :k], vv.T[:, :k], 1e-4)
        assert u.shape == uu.shape and vh.shape == vv.shape
        # The completed columns: orthonormal, U @ diag(S) @ Vh reproduces the matrix.
        u, vh = np.asarray(u, np.float64), np.asarray(vh, np.float64)
        np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-5)
        np.testing.assert_allclose(vh @ vh.T, np.eye(vh.shape[0]), atol=1e-5)
        np.testing.assert_allclose((u[:, :k] * ss) @ vh[:k], m, atol=1e-5)
    close(sa, np.linalg.svd(a, compute_uv=False), 1e-5)
    close(sl, np.linalg.svd(low, compute_uv=False), 1e-5)
    close(p, np.linalg.pinv(tall), 1e-4)
    close(pl, np.linalg.pinv(low, rcond=1e-5), 1e-4)
    assert int(rank_low) == 2 == np.linalg.matrix_rank(LOW)     # float32 tolerance
    assert [int(k) for k in np.asarray(rank_a)] == list(np.linalg.matrix_rank(a))
    close(cond, np.linalg.cond(a), 1e-3)
    close(n2, np.linalg.norm(a, 2, axis=(1, 2)), 1e-5)
    xw, rw, kw, sw = np.linalg.lstsq(tall, tall @ wide[:, :2] + 0.1)
    close(x, xw, 1e-4)
    close(resid, rw, 1e-4)
    assert int(rank) == kw
    close(s, sw, 1e-5)


def test_dtypes_and_special_input():
    """float16 in, float16 out (computed in float32); integers give floats; a matrix that is
    not positive definite gives a NaN triangle and zeros above it (as in JAX); a diagonal
    matrix converges at once."""
    h = (SPD[0] / 4).astype(np.float16)
    close(LA.cholesky(h), np.linalg.cholesky(f64(h)), 3e-3, np.float16)
    close(LA.det(np.array([[2, 1], [1, 3]], np.int32)), 5.0)
    bad = np.asarray(LA.cholesky(np.stack([-SPD[0], SPD[0]])))
    tri = np.tri(bad.shape[-1], dtype=bool)
    assert np.isnan(bad[0][tri]).all() and (bad[0][~tri] == 0).all()
    np.testing.assert_allclose(bad[1], np.linalg.cholesky(SPD[0]), rtol=1e-5, atol=1e-5)
    d = np.diag(np.float32([3, -1, 2]))
    w, v = LA.eigh(d)
    close(w, [-1, 2, 3])
    close(enp.abs(v), np.abs(np.linalg.eigh(d)[1]))


def test_decompositions_under_vmap():
    """A vmapped solve and svd equal the stack of per-matrix ones (the loops batch)."""
    got = ember.jit(ember.vmap(LA.solve, in_axes=(0, None)))(A, B)
    close(got, np.linalg.solve(f64(A), f64(B)), 1e-4)
    s = ember.vmap(LA.svdvals, in_axes=2)(np.stack([A[0], A[1]], 2))
    close(s, np.linalg.svd(f64(A), compute_uv=False), 1e-5)


def test_decomposition_errors():
    with pytest.raises(TracingError, match=r"det: .*square.*\(3, 5\)"):
        LA.det(WIDE)
    with pytest.raises(TracingError, match=r"inv: .*at least 2 dimensions.*\(4,\)"):
        LA.inv(V)
    with pytest.raises(TracingError, match=r"solve: .*\(2, 4, 4\).*\(5, 3\)"):
        LA.solve(A, TALL)
    with pytest.raises(TracingError, match=r"qr: mode must be"):
        LA.qr(A, "raw")
    with pytest.raises(TracingError, match=r"eigh: UPLO must be"):
        LA.eigh(SPD, UPLO="X")
    with pytest.raises(TracingError, match=r"multi_dot: array 1 has shape \(2, 4, 4\)"):
        LA.multi_dot([B.T, A, B])


def test_svd_of_odd_sizes():
    """Odd column counts pad the Jacobi rounds with a zero column; at 5 x 5, U and V carried
    apart in the loop failed in IREE's runtime (they are carried stacked now)."""
    for shape in ((5, 5), (7, 2)):
        m = f32(*shape)
        u, s, vh = LA.svd(m, full_matrices=False)
        close(s, np.linalg.svd(f64(m), compute_uv=False), 1e-5)
        np.testing.assert_allclose((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), m,
                                   atol=2e-5)


def test_scipy_linalg_solvers():
    """ember.scipy.linalg against NumPy: triangular solves (lower/upper, transposed, unit
    diagonal; a stack of matrices) and Cholesky solves."""
    tri = f64(A) + 4 * np.eye(4)
    b = f64(B)

    def ref(t, lower, trans, unit):
        t = np.tril(t) if lower else np.triu(t)
        if unit:
            t = t - np.diag(np.diag(t)) + np.eye(4)
        return np.linalg.solve(t.T if trans else t, b)

    for lower, trans, unit in ((True, 0, False), (False, 0, False), (True, "T", False),
                               (False, 1, True)):
        got = sla.solve_triangular(tri.astype(np.float32), np.broadcast_to(B, (2, 4, 3)),
                                   trans=trans, lower=lower, unit_diagonal=unit)
        close(got, np.stack([ref(t, lower, trans, unit) for t in tri]), 1e-5)
    spd = f64(SPD[0])
    for lower in (False, True):
        c = sla.cho_factor(SPD[0], lower=lower)
        close(sla.cho_solve(c, V), np.linalg.solve(spd, f64(V)), 1e-5)
    close(sla.cholesky(SPD[0]), np.linalg.cholesky(spd).T, 1e-5)
    with pytest.raises(TracingError, match=r"solve_triangular: trans must be"):
        sla.solve_triangular(B[:3], B[:3], trans="X")


def test_eigh_symmetrizes_its_input_as_jax():
    """JAX's eigh (and eigvalsh) work on (a + a.T) / 2; symmetrize_input=False reads one
    triangle, as NumPy's. NumPy on the symmetrized matrix and on the triangles is the
    oracle."""
    a = np.random.default_rng(3).standard_normal((2, 4, 4)).astype(np.float32)
    sym = (a + a.swapaxes(-1, -2)) / 2
    for uplo in ("L", "U"):
        close(LA.eigvalsh(a, UPLO=uplo), np.linalg.eigvalsh(f64(sym)), 1e-5)
        close(LA.eigvalsh(a, UPLO=uplo, symmetrize_input=False),
              np.linalg.eigvalsh(f64(a), UPLO=uplo), 1e-5)
    w, v = LA.eigh(a)
    close(v @ (np.asarray(w)[..., None] * np.asarray(v).swapaxes(-1, -2)), sym, 1e-4)


def test_empty_determinant_inverse_and_solve():
    """0 x 0 matrices: det 1 (as NumPy and JAX), inv and solve empty, eagerly and under jit;
    a stack of them too; scipy.linalg's det and lu_factor as well."""
    e, e3 = np.zeros((0, 0), np.float32), np.zeros((3, 0, 0), np.float32)
    b = np.zeros((0,), np.float32)
    for how, f in (("eager", lambda g: g), ("jit", ember.jit)):
        got = [f(LA.det)(e), f(LA.det)(e3), f(LA.inv)(e3), f(LA.solve)(e, b),
               f(LA.slogdet)(e)[1], f(sla.det)(e)]
        want = [1.0, np.ones(3), np.zeros((3, 0, 0)), np.zeros((0,)), 0.0, 1.0]
        labels = ["det", "det stack", "inv", "solve", "slogdet", "scipy det"]
        for label, g, w in zip(labels, got, want, strict=True):
            try:
                close(g, w)
            except AssertionError as err:
                raise AssertionError(f"{label} {how}: {err}") from None
        piv = f(sla.lu_factor)(e)[1]       # the pivots: exactly, int32
        assert isinstance(piv, ember.Array) and piv.dtype == np.int32, (how, piv)
        np.testing.assert_array_equal(np.asarray(piv), np.zeros((0,), np.int32))


def test_cond_of_singular_matrices_is_inf():
    """NumPy and JAX give inf for every p on a singular matrix (the NaNs of its inverse's
    norm are turned into inf); a matrix with NaNs keeps NaN."""
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], np.float32)
    nan = np.array([[np.nan, 1.0], [0.0, 1.0]], np.float32)
    ps = ("fro", -1, np.inf)        # (1 and -inf take the same paths as -1 and inf)
    outs = ember.jit(lambda s, n: [LA.cond(s, p) for p in ps] + [LA.cond(n, "fro")])(sing, nan)
    for p, got in zip(ps, outs, strict=False):
        want = np.linalg.cond(f64(sing), p)
        assert np.isinf(np.asarray(got)[0]), (p, got)
        close(got[1:], want[1:], 1e-5)
    assert np.isnan(np.asarray(outs[-1]))


@pytest.mark.parametrize("call, match", [
    (lambda: LA.cond(np.ones((2, 3, 4), np.float32), 1), r"cond: for p=1 x must be square"),
    (lambda: LA.cond(np.zeros((0, 0), np.float32)), r"cond: .*non-empty"),
])
def test_cond_errors(call, match):
    with pytest.raises(TracingError, match=match):
        call()


@pytest.mark.parametrize("scale", [1e-20, 1e20, 2.0 ** 60])
def test_svd_and_qr_of_tiny_and_huge_matrices(scale):
    """Sums of squares of entries of 1e-20 underflow in float32 and those of 1e20 overflow:
    the matrix is scaled by a power of two first (as LAPACK scales), so the singular values,
    R and what is built on them (rank, cond, pinv, the 2-norm) come out as for the matrix
    of moderate entries, scaled; float64 NumPy is the oracle."""
    a64 = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0]]) * scale
    a = a64.astype(np.float32)
    np.testing.assert_allclose(np.asarray(enp.linalg.svd(a, compute_uv=False)),
                               np.linalg.svd(a64, compute_uv=False), rtol=1e-5)
    u, s, vh = (np.asarray(v) for v in enp.linalg.svd(a, full_matrices=False))
    np.testing.assert_allclose((u * s) @ vh, a64, rtol=1e-5, atol=1e-6 * scale)
    r = np.asarray(enp.linalg.qr(a.T)[1])
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a64.T)[1]), rtol=1e-5,
                               atol=1e-6 * scale)
    assert int(enp.linalg.matrix_rank(a)) == 2
    np.testing.assert_allclose(float(enp.linalg.cond(a)), np.linalg.cond(a64), rtol=1e-4)
    np.testing.assert_allclose(float(enp.linalg.norm(a, 2)), np.linalg.norm(a64, 2), rtol=1e-5)
    want = np.linalg.pinv(a64)
    np.testing.assert_allclose(np.asarray(enp.linalg.pinv(a)), want, rtol=1e-4,
                               atol=1e-5 * np.abs(want).max())
