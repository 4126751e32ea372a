"""ember.numpy.linalg's array-API names and tensor solves, and ember.scipy.linalg's LU family,
wrappers, matrix functions and special matrices, against NumPy/SciPy computed in float64 on
the host: stacks of matrices, several sizes, float16/bfloat16 (computed in float32), float64
with x64, singular and empty input, under jit and eagerly, and the errors."""

import contextlib

import ml_dtypes
import numpy as np
import pytest
import scipy.linalg as sl

import ember
import ember.numpy as enp
import ember.scipy.linalg as sla
from ember.errors import ArgumentError, TracingError

LA = enp.linalg
RNG = np.random.default_rng(7)
INF = np.inf


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f64(x):
    return np.asarray(x, np.float64)


def close(got, want, tol=2e-5, dtype=np.float32):
    """``got`` (an ember Array of ``dtype``) within ``tol`` of ``want`` relative to its
    largest finite entry; NaNs and infs where ``want`` has them."""
    assert isinstance(got, ember.Array), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0)))
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=0, atol=tol * scale,
                               equal_nan=True)


def same(got, want, dtype):
    assert isinstance(got, ember.Array), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def check_all(labels, gots, wants, tol=2e-5):
    for label, got, want in zip(labels, gots, wants, strict=True):
        try:
            if isinstance(want, tuple):     # (exact value, dtype)
                same(got, *want)
            else:
                close(got, want, tol)
        except AssertionError as e:
            raise AssertionError(f"{label}: {e}") from None


@contextlib.contextmanager
def x64():
    old = ember.config.enable_x64
    ember.config.update("enable_x64", True)
    try:
        yield
    finally:
        ember.config.update("enable_x64", old)


# --- ember.numpy.linalg: the array API's names, tensorinv, tensorsolve ----------------------

M3 = f32(2, 3, 4)                 # a stack of matrices
SQ = f32(3, 3) + 3 * np.eye(3, dtype=np.float32)
V3 = f32(2, 3)                    # a stack of 3-vectors
IM = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
T6 = f32(6, 6) + 4 * np.eye(6, dtype=np.float32)
MAT_ORDS = ("fro", "nuc", 1, -1, 2, -2, INF, -INF)
VEC_CASES = ((2, None, False), (1, 1, False), (INF, (0, 2), True), (-INF, -1, False),
             (0, None, True), (3, 0, False), (-1.5, (1, 2), False))


def _array_api(m3, sq, v3, im, t6):
    outs = [LA.matrix_norm(m3, ord=o) for o in MAT_ORDS]
    outs += [LA.matrix_norm(m3, keepdims=True), LA.matrix_norm(im, ord=INF)]
    outs += [LA.vector_norm(m3, ord=o, axis=ax, keepdims=kd) for o, ax, kd in VEC_CASES]
    outs += [LA.vector_norm(im, ord=1, axis=1),
             LA.vecdot(m3, m3[0], axis=-2), LA.vecdot(im, im),
             LA.matmul(m3, m3[0].T), LA.matmul(im, im.T, preferred_element_type=np.float32),
             LA.tensordot(m3, m3[0], axes=((1, 2), (0, 1))), LA.tensordot(sq, sq, axes=1),
             LA.matrix_transpose(m3), LA.cross(v3, v3[::-1]), LA.cross(v3.T, sq[:, :2], axis=0),
             LA.outer(v3[0], im[0]), LA.diagonal(m3, offset=1), LA.diagonal(im, offset=-1),
             LA.trace(m3), LA.trace(im, offset=1), LA.trace(m3, dtype=np.float16),
             LA.tensorinv(t6.reshape(6, 2, 3), ind=1), LA.tensorinv(t6.reshape(2, 3, 3, 2)),
             LA.tensorsolve(t6.reshape(2, 3, 6), v3),
             LA.tensorsolve(t6.reshape(6, 2, 3).transpose(1, 0, 2), v3, axes=(1,))]
    return outs


def _array_api_wants(m3, sq, v3, im, t6):
    npl = np.linalg
    wants = [npl.matrix_norm(m3, ord=o) for o in MAT_ORDS]
    wants += [npl.matrix_norm(m3, keepdims=True), npl.matrix_norm(im, ord=INF)]
    wants += [npl.vector_norm(m3, ord=o, axis=ax, keepdims=kd) for o, ax, kd in VEC_CASES]
    wants += [npl.vector_norm(im, ord=1, axis=1),
              np.vecdot(m3, m3[0], axis=-2), (np.vecdot(im, im), np.int32),
              m3 @ m3[0].T, (im @ im.T).astype(np.float32),
              np.tensordot(m3, m3[0], axes=((1, 2), (0, 1))), np.tensordot(sq, sq, axes=1),
              (np.swapaxes(m3, -1, -2), np.float32), npl.cross(v3, v3[::-1]),
              np.cross(v3.T, sq[:, :2], axis=0), np.outer(v3[0], im[0]),
              npl.diagonal(m3, offset=1), (npl.diagonal(im, offset=-1), np.int32),
              npl.trace(m3), (npl.trace(im, offset=1), np.int32), npl.trace(m3),
              npl.tensorinv(t6.reshape(6, 2, 3), ind=1), npl.tensorinv(t6.reshape(2, 3, 3, 2)),
              npl.tensorsolve(t6.reshape(2, 3, 6), v3),
              npl.tensorsolve(t6.reshape(6, 2, 3).transpose(1, 0, 2), v3, axes=(1,))]
    return wants


def test_array_api_functions_match_numpy():
    args = (M3, SQ, V3, IM, T6)
    gots = ember.jit(_array_api)(*args)
    wants = _array_api_wants(*(f64(a) if a.dtype == np.float32 else a for a in args))
    labels = [f"matrix_norm {o}" for o in MAT_ORDS] + ["matrix_norm keepdims", "int inf"]
    labels += [f"vector_norm {c}" for c in VEC_CASES]
    labels += ["vector_norm int", "vecdot", "vecdot int", "matmul", "matmul preferred",
               "tensordot pairs", "tensordot 1", "matrix_transpose", "cross", "cross axis 0",
               "outer", "diagonal", "diagonal int", "trace", "trace int", "trace float16",
               "tensorinv 1", "tensorinv 2", "tensorsolve", "tensorsolve axes"]
    trace16 = gots.pop(labels.index("trace float16"))
    wants.pop(labels.index("trace float16"))
    labels.remove("trace float16")
    check_all(labels, gots, wants, 1e-4)
    close(trace16, np.trace(f64(M3), axis1=-2, axis2=-1), 3e-3, np.float16)
    # Eagerly, and integers in floating point as NumPy (JAX's vector_norm keeps ints).
    close(LA.vector_norm(IM, ord=INF), np.linalg.vector_norm(IM, ord=INF))
    close(LA.matrix_norm(M3, ord="nuc"), np.linalg.matrix_norm(f64(M3), ord="nuc"), 1e-5)
    close(LA.vector_norm(np.zeros((0,), np.float32), ord=INF), 0.0)      # JAX's initial=0


def test_empty_determinant_inverse_and_solve():
    """0 x 0 matrices: det 1 (as NumPy and JAX), inv and solve empty, eagerly and under jit;
    a stack of them too."""
    e, e3 = np.zeros((0, 0), np.float32), np.zeros((3, 0, 0), np.float32)
    b = np.zeros((0,), np.float32)
    for how, f in (("eager", lambda g: g), ("jit", ember.jit)):
        check_all([f"det {how}", f"det stack {how}", f"inv {how}", f"solve {how}",
                   f"slogdet {how}", f"scipy det {how}", f"lu_factor {how}"],
                  [f(LA.det)(e), f(LA.det)(e3), f(LA.inv)(e3), f(LA.solve)(e, b),
                   f(LA.slogdet)(e)[1], f(sla.det)(e), f(sla.lu_factor)(e)[1]],
                  [1.0, np.ones(3), np.zeros((3, 0, 0)), np.zeros((0,)), 0.0, 1.0,
                   (np.zeros((0,), np.int32), np.int32)])


def test_cond_of_singular_matrices_is_inf():
    """NumPy and JAX give inf for every p on a singular matrix (the NaNs of its inverse's
    norm are turned into inf); a matrix with NaNs keeps NaN."""
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], np.float32)
    nan = np.array([[np.nan, 1.0], [0.0, 1.0]], np.float32)
    ps = ("fro", -1, INF)           # (1 and -INF take the same paths as -1 and INF)
    outs = ember.jit(lambda s, n: [LA.cond(s, p) for p in ps] + [LA.cond(n, "fro")])(sing, nan)
    for p, got in zip(ps, outs, strict=False):
        want = np.linalg.cond(f64(sing), p)
        assert np.isinf(np.asarray(got)[0]), (p, got)
        close(got[1:], want[1:], 1e-5)
    assert np.isnan(np.asarray(outs[-1]))


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
    a = f32(*shape)
    if len(shape) == 3:
        a[1] = SING3
    square = shape[-1] == shape[-2]
    b = f32(shape[-1], 2)
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
    base = RNG.standard_normal((4, 4))
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
    tall, wide = f32(5, 3), f32(3, 5)
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
    stack = f32(2, 3)
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
    (lambda: LA.matrix_norm(V3[0]), TracingError, r"matrix_norm: .*at least 2.*\(3,\)"),
    (lambda: LA.vector_norm(V3, ord="fro"), TracingError, r"vector_norm: invalid norm order"),
    (lambda: LA.cross(M3, M3), TracingError, r"cross: x1 of shape \(2, 3, 4\).*size 3"),
    (lambda: LA.outer(M3, V3[0]), TracingError, r"outer: x1 and x2 must be 1-D"),
    (lambda: LA.diagonal(V3[0]), TracingError, r"diagonal: x must have at least 2"),
    (lambda: LA.trace(V3[0]), TracingError, r"trace: x must have at least 2"),
    (lambda: LA.tensorinv(M3, ind=1), TracingError, r"tensorinv: the product of the first"),
    (lambda: LA.tensorinv(M3, ind=0), TracingError, r"tensorinv: ind must be a positive"),
    (lambda: LA.tensorsolve(T6, V3), TracingError, r"tensorsolve: the leading dimensions"),
    (lambda: LA.cond(M3, 1), TracingError, r"cond: for p=1 x must be square"),
    (lambda: LA.cond(np.zeros((0, 0), np.float32)), TracingError, r"cond: .*non-empty"),
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
    (lambda: sla.toeplitz(f32(2, 3), f32(3, 4)), TracingError, r"toeplitz: batch shapes"),
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


def test_tensorsolve_with_several_axes_as_numpy():
    a = np.transpose((3 * np.eye(6) + np.tri(6, k=-1)).astype(np.float32).reshape(2, 3, 2, 3),
                     (2, 0, 3, 1)).copy()
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(enp.linalg.tensorsolve(a, b, axes=(0, 2))),
                               np.linalg.tensorsolve(a, b, axes=(0, 2)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_max_norms_of_empty_matrices_are_zero(shape):
    x = np.zeros(shape, np.float32)
    for o in (1, np.inf):
        assert float(enp.linalg.norm(x, o)) == np.linalg.norm(x, o) == 0.0
