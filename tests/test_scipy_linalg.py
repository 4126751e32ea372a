"""ember.scipy.linalg's LU family, wrappers of ember.numpy.linalg, matrix functions and special
matrices against SciPy computed in float64 on the host: stacks of matrices, several sizes,
float16/bfloat16 (computed in float32), float64 with x64, singular input, under jit and
eagerly, and the errors. (The triangular and Cholesky solvers are in test_decompositions.py.)"""

import contextlib

import ml_dtypes
import numpy as np
import pytest
import scipy.linalg as sl
from helpers import check_all, f64, same
from helpers import close_to_scale as close

import ember
import ember.numpy as enp
import ember.scipy.linalg as sla
from ember.errors import ArgumentError, TracingError

RNG = np.random.default_rng(7)


def f32(*shape, rng=RNG):
    """Standard normal entries: from ``RNG`` for the module's inputs, from a test's own
    generator in a test (so its inputs do not depend on which tests ran before)."""
    return rng.standard_normal(shape).astype(np.float32)










@contextlib.contextmanager
def x64():
    old = ember.config.enable_x64
    ember.config.update("enable_x64", True)
    try:
        yield
    finally:
        ember.config.update("enable_x64", old)


M3 = f32(2, 3, 4)                 # a stack of matrices
SQ = f32(3, 3) + 3 * np.eye(3, dtype=np.float32)
V3 = f32(2, 3)                    # a stack of 3-vectors
IM = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
T6 = f32(6, 6) + 4 * np.eye(6, dtype=np.float32)


# --- ember.scipy.linalg: LU -------------------------------------------------------------------

SING3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)


def _lu_family(a, b, square):
    outs = [*sla.lu(a), *sla.lu(a, permute_l=True), *sla.lu_factor(a)]
    if square:
        f = sla.lu_factor(a)
        outs += [sla.lu_solve(f, b, trans=t) for t in (0, 1, 2)]
        outs += [sla.lu_solve(f, b[..., 0])]
    return outs


def _lu_wants(a, b, square):
    stack = a.reshape((-1,) + a.shape[-2:])
    per = [[*sl.lu(m), *sl.lu(m, permute_l=True), *sl.lu_factor(m)] for m in stack]
    if square:
        bs = np.broadcast_to(b, a.shape[:-1] + b.shape[-1:]).reshape((len(stack),) + b.shape[-2:])
        for p, m, r in zip(per, stack, bs, strict=True):
            f = sl.lu_factor(m)
            p += [sl.lu_solve(f, r, trans=t) for t in (0, 1, 2)] + [sl.lu_solve(f, r[:, 0])]
    wants = [np.stack(w).reshape(a.shape[:-2] + w[0].shape) for w in zip(*per, strict=True)]
    wants[6] = (wants[6].astype(np.int32), np.int32)              # the pivots, exactly
    return wants


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_lu_family_matches_scipy(shape):
    """lu (P, L, U and permute_l), lu_factor (LAPACK's pivots, int32) and lu_solve (trans 0,
    1, 2; a vector and a matrix right-hand side) for square, tall, wide and stacked
    matrices; the stack's second matrix is singular."""
    rng = np.random.default_rng(71)
    a = f32(*shape, rng=rng)
    if len(shape) == 3:
        a[1] = SING3
    square = shape[-1] == shape[-2]
    b = f32(shape[-1], 2, rng=rng)
    gots = ember.jit(_lu_family, static_argnums=2)(a, b, square)
    labels = ["P", "L", "U", "PL", "U'", "lu", "piv", "solve", "solve T", "solve H", "vector"]
    wants = _lu_wants(f64(a), f64(b), square)
    if len(shape) == 3:     # the singular matrix's solutions are infs and NaNs: not compared
        gots, wants = gots[:7] + [g[0] for g in gots[7:]], wants[:7] + [w[0] for w in wants[7:]]
    check_all(labels[:len(gots)], gots, wants, 1e-4 if square else 2e-5)


def test_lu_dtypes_and_eager():
    """float16/bfloat16 in and out (computed in float32), integers give float32, float64
    with x64; eagerly."""
    a = SQ[:3, :3]
    for dt, tol in ((np.float16, 3e-3), (ml_dtypes.bfloat16, 2e-2)):
        x = a.astype(dt)
        lu, piv = sla.lu_factor(x)
        want_lu, want_piv = sl.lu_factor(f64(x))
        close(lu, want_lu, tol, dt)
        same(piv, want_piv.astype(np.int32), np.int32)
        close(sla.lu_solve((lu, piv), x[:, 0]),
              sl.lu_solve((want_lu, want_piv), f64(x[:, 0])), 10 * tol, dt)
    close(sla.lu(IM[:, :3])[2], sl.lu(f64(IM[:, :3]))[2], 1e-5)
    with x64():
        a64 = f64(SQ)
        p, low, up = sla.lu(a64)
        for got, want in zip((p, low, up), sl.lu(a64), strict=True):
            close(got, want, 1e-12, np.float64)
        close(sla.lu_solve(sla.lu_factor(a64), a64[0], trans=1),
              sl.lu_solve(sl.lu_factor(a64), a64[0], trans=1), 1e-12, np.float64)


# --- ember.scipy.linalg: on ember.numpy.linalg ------------------------------------------------

SPD = (M3[0, :, :3].T @ M3[0, :, :3] + np.eye(3)).astype(np.float32)


def _wrappers(sq, spd, m3, stack):
    rhs = sq[:, :2]
    return [sla.det(stack), sla.inv(sq), sla.solve(sq, rhs), sla.solve(stack, rhs[:, 0][:, None]),
            sla.solve(sq + sq.T, rhs[:, 0], assume_a="sym"),
            sla.solve(enp.triu(spd) - 9 * enp.tril(spd, -1), rhs, assume_a="pos"),
            sla.solve(enp.tril(spd) - 9 * enp.triu(spd, 1), rhs[:, 0], assume_a="pos",
                      lower=True),
            *sla.qr(m3[0]), *sla.qr(m3[0].T, mode="economic"), sla.qr(m3[0], mode="r")[0],
            sla.svd(m3[0], compute_uv=False),
            sla.eigh(spd, eigvals_only=True), sla.eigh(enp.triu(spd) - 9 * enp.tril(spd, -1),
                                                       lower=False, eigvals_only=True,
                                                       symmetrize_input=False),
            sla.eigh(spd, subset_by_index=(1, 2))[0]]


def test_scipy_wrappers_match_scipy():
    """det, inv, solve (assume_a gen/sym/pos reading the lower or upper triangle; a vector
    and matrices; a stack), qr's modes, svd and eigh (triangles, eigvals_only,
    subset_by_index)."""
    stack = np.stack([SQ, SING3])
    gots = ember.jit(_wrappers)(SQ, SPD, M3, stack)
    sq, spd, m3 = f64(SQ), f64(SPD), f64(M3)
    wants = [np.linalg.det(f64(stack)), sl.inv(sq), sl.solve(sq, sq[:, :2]),
             None, sl.solve(sq + sq.T, sq[:, 0], assume_a="sym"),
             sl.solve(spd, sq[:, :2], assume_a="pos"),
             sl.solve(spd, sq[:, 0], assume_a="pos", lower=True),
             *sl.qr(m3[0]), *sl.qr(m3[0].T, mode="economic"), sl.qr(m3[0], mode="r")[0],
             sl.svd(m3[0], compute_uv=False), sl.eigh(spd, eigvals_only=True),
             sl.eigh(spd, eigvals_only=True), sl.eigh(spd, subset_by_index=(1, 2))[0]]
    labels = ["det", "inv", "solve", "solve stack", "solve sym", "solve pos", "solve pos lower",
              "Q", "R", "Q economic", "R economic", "R only", "svd", "eigh", "eigh upper",
              "eigh subset"]
    stacked = gots.pop(3)
    wants.pop(3)
    labels.pop(3)
    check_all(labels, gots, wants, 1e-4)
    assert stacked.shape == (2, 3, 1)
    close(stacked[0], sl.solve(sq, sq[:, :1]), 1e-4)
    assert not np.isfinite(np.asarray(stacked[1])).all()      # singular: infs/NaNs, as JAX
    w, v = sla.eigh(SPD, subset_by_index=(0, 1))             # eagerly; vectors up to sign
    vw = sl.eigh(spd, subset_by_index=(0, 1))[1]
    close(enp.abs(v), np.abs(vw), 1e-4)
    assert isinstance(sla.svd(SQ), tuple) and len(sla.qr(SQ, mode="r")) == 1


# --- matrix functions -------------------------------------------------------------------------

def _expm_inputs(dtype):
    """Matrices whose 1-norms reach each Pade degree and several squarings (float32: 3, 5, 7
    then squarings; float64: 3, 5, 7, 9, 13), a nilpotent one."""
    base = np.random.default_rng(72 if dtype == np.float32 else 73).standard_normal((4, 4))
    base /= np.abs(base).sum(0).max()
    norms = (0.01, 0.6, 1.5, 3.0, 30.0) if dtype == np.float32 else \
        (0.01, 0.2, 0.9, 2.0, 5.0, 80.0)
    mats = [base * s for s in norms] + [np.triu(base, 1) * 3]
    return np.stack(mats).astype(dtype)


def test_expm_matches_scipy():
    a = _expm_inputs(np.float32)
    got, tri, capped = ember.jit(lambda x: (sla.expm(x), sla.expm(x[-1], upper_triangular=True),
                                            sla.expm(x, max_squarings=1)))(a)
    want = sl.expm(f64(a))
    for i in range(len(a)):     # each relative to its own size
        close(got[i], want[i], 1e-4 if i == 4 else 1e-5)
    close(tri, want[-1], 1e-6)
    capped = np.asarray(capped)
    assert np.isnan(capped[-2]).all() and np.isfinite(capped[:-2]).all()   # 30: 3 squarings
    h = a[2].astype(np.float16)
    close(sla.expm(h), sl.expm(f64(h)), 3e-3, np.float16)
    with x64():
        a64 = _expm_inputs(np.float64)
        got, want = sla.expm(a64), sl.expm(a64)
        for i in range(len(a64)):
            close(got[i], want[i], 1e-12, np.float64)


def test_polar_and_sylvester_match_scipy():
    rng = np.random.default_rng(74)
    tall, wide = f32(5, 3, rng=rng), f32(3, 5, rng=rng)
    outs = ember.jit(lambda t, w, a, b, c: [*sla.polar(t), *sla.polar(w, "left"),
                                            *sla.polar(t, method="svd"),
                                            sla.solve_sylvester(a, b, c)])(
        tall, wide, SQ, T6[:2, :2], M3[0, :, :2])
    wants = [*sl.polar(f64(tall)), *sl.polar(f64(wide), "left"), *sl.polar(f64(tall)),
             sl.solve_sylvester(f64(SQ), f64(T6[:2, :2]), f64(M3[0, :, :2]))]
    check_all(["U", "P", "U left", "P left", "U svd", "P svd", "sylvester"], outs, wants, 1e-4)
    # A stack of Sylvester equations, the shared B broadcast.
    a = np.stack([SQ, SQ.T])
    close(sla.solve_sylvester(a, T6[:2, :2], M3[:, :, :2]),
          np.stack([sl.solve_sylvester(f64(x), f64(T6[:2, :2]), f64(c))
                    for x, c in zip(a, M3[:, :, :2], strict=True)]), 1e-4)


# --- special matrices -------------------------------------------------------------------------

C3, R4 = f32(3), f32(4)
IC = np.arange(1, 5, dtype=np.int32)


def _special(c3, r4, ic, stack):
    return [sla.toeplitz(c3), sla.toeplitz(c3, r4), sla.toeplitz(ic, c3),
            sla.hankel(c3), sla.hankel(c3, r4), sla.hankel(ic, ic[:2]),
            sla.circulant(r4), sla.circulant(ic), sla.companion(r4), sla.companion(ic),
            sla.leslie(r4, c3), sla.leslie(ic, ic[:3]),
            sla.block_diag(c3, stack[0], 2.0), sla.block_diag(ic, ic[:2, None]),
            sla.toeplitz(stack, r4), sla.hankel(stack[:, 0], stack), sla.circulant(stack),
            sla.companion(stack), sla.leslie(stack[0], stack[:, 1:]), sla.toeplitz(r4[:0])]


def test_special_matrices_match_scipy():
    """toeplitz, hankel, circulant, companion, leslie, block_diag on vectors (ints stay ints
    where SciPy keeps them) and on stacks (a matrix per row, batch axes broadcast, as JAX),
    against SciPy applied row by row."""
    stack = f32(2, 3, rng=np.random.default_rng(75))
    gots = ember.jit(_special)(C3, R4, IC, stack)
    c3, r4, st = f64(C3), f64(R4), f64(stack)
    i32 = lambda m: (m.astype(np.int32), np.int32)      # noqa: E731
    wants = [sl.toeplitz(c3), sl.toeplitz(c3, r4), sl.toeplitz(IC, c3),
             sl.hankel(c3), sl.hankel(c3, r4), i32(sl.hankel(IC, IC[:2])),
             sl.circulant(r4), i32(sl.circulant(IC)), sl.companion(r4), sl.companion(IC),
             sl.leslie(r4, c3), i32(sl.leslie(IC, IC[:3])),
             sl.block_diag(c3, st[0], 2.0), i32(sl.block_diag(IC, IC[:2, None])),
             np.stack([sl.toeplitz(s, r4) for s in st]),
             np.stack([sl.hankel(st[:, 0], s) for s in st]),
             np.stack([sl.circulant(s) for s in st]),
             np.stack([sl.companion(s) for s in st]),
             np.stack([sl.leslie(st[0], s[1:]) for s in st]), np.zeros((0, 0))]
    labels = ["toeplitz", "toeplitz r", "toeplitz int", "hankel", "hankel r", "hankel int",
              "circulant", "circulant int", "companion", "companion int", "leslie", "leslie int",
              "block_diag", "block_diag int", "toeplitz stack", "hankel stack",
              "circulant stack", "companion stack", "leslie stack", "toeplitz empty"]
    check_all(labels, gots, wants, 1e-5)
    assert gots[2].dtype == np.float32       # int and float promote as JAX


def test_static_special_matrices():
    for n in (1, 4):
        close(sla.hilbert(n), sl.hilbert(n), 1e-6)
        for kind in ("symmetric", "lower", "upper"):
            close(sla.pascal(n, kind), sl.pascal(n, kind))
        close(sla.helmert(n), sl.helmert(n), 1e-6)
        close(sla.helmert(n, full=True), sl.helmert(n, full=True), 1e-6)
    close(sla.pascal(30), sl.pascal(30, exact=False), 1e-7)     # exact where JAX rounds
    close(sla.block_diag(), np.zeros((1, 0)))


# --- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: sla.lu(V3[0]), TracingError, r"lu: expected an array of at least 2"),
    (lambda: sla.lu_solve(sla.lu_factor(SQ), V3[0], trans=3), ArgumentError,
     r"lu_solve: trans must be"),
    (lambda: sla.lu_solve((SQ, np.zeros(2, np.int32)), V3[0]), TracingError,
     r"lu_solve: expected lu_factor's \(lu, piv\)"),
    (lambda: sla.lu_solve((SQ, np.zeros(3, np.int32)), R4), TracingError,
     r"lu_solve: a of shape \(3, 3\) and b of shape \(4,\) do not match"),
    (lambda: sla.solve(SQ, V3[0], assume_a="banded"), ArgumentError, r"solve: assume_a must"),
    (lambda: sla.qr(SQ, mode="raw"), ArgumentError, r"qr: mode must be"),
    (lambda: sla.qr(SQ, pivoting=True), ArgumentError, r"qr: pivoting=True is not supported"),
    (lambda: sla.eigh(SQ, SQ), ArgumentError, r"eigh: only the standard problem"),
    (lambda: sla.eigh(SQ, subset_by_index=(2, 3)), ArgumentError, r"eigh: subset_by_index"),
    (lambda: sla.expm(M3), TracingError, r"expm: the last 2 dimensions must be square"),
    (lambda: sla.polar(SQ, side="up"), ArgumentError, r"polar: side must be"),
    (lambda: sla.solve_sylvester(SQ, SQ, M3), TracingError, r"solve_sylvester: C must be"),
    (lambda: sla.toeplitz(V3, M3[0]), TracingError, r"toeplitz: batch shapes"),
    (lambda: sla.hankel(1.0), TracingError, r"hankel: c and r must be at least 1-D"),
    (lambda: sla.companion(C3[:1]), TracingError, r"companion: a must have at least 2"),
    (lambda: sla.leslie(C3, C3), TracingError, r"leslie: f must have n >= 2"),
    (lambda: sla.block_diag(M3), TracingError, r"block_diag: .*argument 0 has shape"),
    (lambda: sla.pascal(3, "diagonal"), ArgumentError, r"pascal: kind must be"),
    (lambda: sla.helmert(0), ArgumentError, r"helmert: n must be a positive"),
    (lambda: sla.hilbert(2.5), ArgumentError, r"hilbert: n must be a Python int"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
