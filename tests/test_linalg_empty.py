"""ember.numpy.linalg (and ember.lax.linalg) on empty matrices, against JAX run on the same
input (NumPy where JAX raises); cov of no observations; the accuracy of the float32 Cholesky
on an ill-conditioned matrix and of the Jacobi eigh and SVD at 64 x 64, against JAX's own
error on the same input."""

import warnings

import numpy as np
import pytest

import ember
import ember.lax.linalg as lla
import ember.numpy as enp
from ember.errors import TracingError

jnp = pytest.importorskip("jax.numpy")
jla = pytest.importorskip("jax.lax.linalg")

EPS32 = float(np.finfo(np.float32).eps)
SHAPES = [(0, 0), (0, 3), (3, 0), (2, 0, 0), (0, 3, 3), (2, 3, 0)]


def _square(x):
    return x.shape[-1] == x.shape[-2]


def _rhs(x):
    return np.zeros(x.shape[:-1] + (2,), x.dtype)


# (label, the call on a linalg module and a matrix, whether it needs square matrices,
# whether it needs exactly 2 dimensions)
CASES = [
    ("svd", lambda la, x: la.svd(x), False, False),
    ("svd reduced", lambda la, x: la.svd(x, full_matrices=False), False, False),
    ("svd values", lambda la, x: la.svd(x, compute_uv=False), False, False),
    ("svdvals", lambda la, x: la.svdvals(x), False, False),
    ("eigh", lambda la, x: la.eigh(x), True, False),
    ("eigh upper", lambda la, x: la.eigh(x, UPLO="U", symmetrize_input=False), True, False),
    ("eigvalsh", lambda la, x: la.eigvalsh(x), True, False),
    ("pinv", lambda la, x: la.pinv(x), False, False),
    ("norm 2", lambda la, x: la.norm(x, 2, axis=(-2, -1)), False, False),
    ("norm nuc", lambda la, x: la.norm(x, "nuc", axis=(-2, -1), keepdims=True), False, False),
    ("norm fro", lambda la, x: la.norm(x, "fro", axis=(-2, -1)), False, False),
    ("matrix_norm 2", lambda la, x: la.matrix_norm(x, ord=2), False, False),
    ("det", lambda la, x: la.det(x), True, False),
    ("slogdet", lambda la, x: la.slogdet(x), True, False),
    ("inv", lambda la, x: la.inv(x), True, False),
    ("solve", lambda la, x: la.solve(x, _rhs(x)), True, False),
    ("qr", lambda la, x: la.qr(x), False, False),
    ("qr complete", lambda la, x: la.qr(x, mode="complete"), False, False),
    ("qr r", lambda la, x: la.qr(x, mode="r"), False, False),
    ("cholesky", lambda la, x: la.cholesky(x), True, False),
    ("matrix_power 3", lambda la, x: la.matrix_power(x, 3), True, False),
    ("matrix_power 0", lambda la, x: la.matrix_power(x, 0), True, False),
    ("matrix_power -1", lambda la, x: la.matrix_power(x, -1), True, False),
    # JAX's residuals (one per column of b even when m <= n), not NumPy's empty array
    ("lstsq", lambda la, x: la.lstsq(x, _rhs(x)), False, True),
    ("lstsq vector", lambda la, x: la.lstsq(x, np.zeros(x.shape[0], x.dtype)), False, True),
]
LAX_CASES = [
    ("lax svd", lambda la, x: la.svd(x), False),
    ("lax svd reduced", lambda la, x: la.svd(x, full_matrices=False), False),
    ("lax svd values", lambda la, x: la.svd(x, compute_uv=False), False),
    ("lax eigh", lambda la, x: la.eigh(x), True),
    ("lax qr", lambda la, x: la.qr(x), False),
    ("lax cholesky", lambda la, x: la.cholesky(x), True),
]


def _cases(x):
    cases = [(label, lambda x, f=f: f(enp.linalg, x), lambda x, f=f: f(jnp.linalg, x))
             for label, f, square, two_d in CASES
             if (_square(x) or not square) and (x.ndim == 2 or not two_d)]
    cases += [(label, lambda x, f=f: f(lla, x), lambda x, f=f: f(jla, x))
              for label, f, square in LAX_CASES if _square(x) or not square]
    return cases


def _leaves(r):
    return [np.asarray(v) for v in (r if isinstance(r, tuple | list) else [r])]


def _check(label, got, want):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want), (label, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        # ember's ranks are int32 whatever JAX's x64 setting
        wd = np.int32 if w.dtype == np.int64 else w.dtype
        assert (g.shape, g.dtype) == (w.shape, wd), (label, i, g.shape, g.dtype, w.shape, wd)
        np.testing.assert_array_equal(g, w, err_msg=f"{label} [{i}]")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_empty_matrices_match_jax(shape):
    """Every decomposition and what is built on it, eagerly and under jit: JAX's shapes,
    dtypes and values (identities for the full U or Vh of an n x 0 or 0 x n matrix, det 1,
    norms 0)."""
    x = np.zeros(shape, np.float32)
    cases = _cases(x)
    wants = [want(x) for _, _, want in cases]
    jitted = ember.jit(lambda y: [got(y) for _, got, _ in cases])(x)
    for (label, got, _), want, in_jit in zip(cases, wants, jitted, strict=True):
        _check(f"{label} eager", got(x), want)
        _check(f"{label} jit", in_jit, want)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 0), (2, 3, 0)], ids=str)
def test_matrix_rank_of_empty_matrices_is_zero(shape):
    """NumPy's 0 (int32, ember's rank dtype); JAX raises here (the max of no singular
    values), which is no answer to follow."""
    x = np.zeros(shape, np.float32)
    want = np.linalg.matrix_rank(x).astype(np.int32)
    for how, f in (("eager", enp.linalg.matrix_rank), ("jit", ember.jit(enp.linalg.matrix_rank))):
        got = np.asarray(f(x))
        assert (got.shape, got.dtype) == (want.shape, want.dtype), how
        np.testing.assert_array_equal(got, want, err_msg=how)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (2, 0, 3)], ids=str)
def test_smallest_singular_value_norm_of_empty_matrices_is_an_error(shape):
    """NumPy and JAX both raise (the min of no singular values); so does ember, with its
    own error class."""
    x = np.zeros(shape, np.float32)
    for f in (np.linalg.norm, jnp.linalg.norm):
        with pytest.raises(ValueError):
            f(x, -2, axis=(-2, -1))
    with pytest.raises(TracingError, match=r"norm: ord=-2 .* empty"):
        enp.linalg.norm(x, -2, axis=(-2, -1))
    with pytest.raises(TracingError, match=r"norm: ord=-2 .* empty"):
        ember.jit(lambda y: enp.linalg.norm(y, -2, axis=(-2, -1)))(x)


# --- cov and corrcoef without observations ----------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 0), (1, 0), (0,), (3, 0)], ids=str)
@pytest.mark.parametrize("name", ["cov", "corrcoef"])
def test_cov_of_no_observations_is_nan(name, shape):
    """NumPy (0 / 0, with a warning) and JAX (an explicit case) give NaN, not -0."""
    x = np.zeros(shape, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(getattr(jnp, name)(x))
        np.testing.assert_array_equal(np.asarray(getattr(np, name)(x), np.float32), want)
    for how, f in (("eager", getattr(enp, name)), ("jit", ember.jit(getattr(enp, name)))):
        got = np.asarray(f(x))
        assert (got.shape, got.dtype) == (want.shape, want.dtype), how
        np.testing.assert_array_equal(got, want, err_msg=how)


# --- accuracy ------------------------------------------------------------------------------------

def _reconstruction_error(low, a64):
    low = np.asarray(low, np.float64)
    return np.linalg.norm(low @ np.swapaxes(low, -1, -2) - a64) / np.linalg.norm(a64)


def test_float32_cholesky_of_the_8x8_hilbert_matrix_is_as_robust_as_lapack():
    """Condition number 1.5e10 (after rounding to float32, 1.4e9): LAPACK's potrf, under
    JAX, still finds positive pivots on most CPUs, and so does ember (its left-looking
    version, one matrix-vector product a column, got a negative last pivot: all NaN). On an
    AVX-512 CPU (Rocket Lake) LAPACK's own float32 potrf fails too (JAX's result is NaN,
    SciPy's raises): there the bound is that of a backward-stable factorization, n eps."""
    i = np.arange(8)
    h64 = 1.0 / (i[:, None] + i[None] + 1)
    h = h64.astype(np.float32)
    bound = 3 * _reconstruction_error(jnp.linalg.cholesky(h), h64)
    if not np.isfinite(bound):
        bound = len(h) * EPS32
    for how, f in (("eager", enp.linalg.cholesky), ("jit", ember.jit(enp.linalg.cholesky))):
        low = f(h)
        assert np.all(np.isfinite(np.asarray(low))), how
        assert _reconstruction_error(low, h64) <= bound, how


@pytest.mark.parametrize("shape", [(40, 40), (3, 32, 32), (5, 5)], ids=str)
def test_blocked_cholesky_matches_jax_and_reads_the_lower_triangle(shape):
    """Several panels (40: padded to whole panels), a stack of exactly two, and one: the
    reconstruction error within a small factor of JAX's; NaNs in the upper triangle are
    not read (NumPy's convention)."""
    rng = np.random.default_rng(1)
    n = shape[-1]
    g = rng.standard_normal(shape)
    a64 = g @ np.swapaxes(g, -1, -2) / n + 0.5 * np.eye(n)
    a = a64.astype(np.float32)
    a64 = a.astype(np.float64)
    bound = 3 * max(_reconstruction_error(jnp.linalg.cholesky(a), a64), EPS32)
    upper_nan = np.where(np.triu(np.ones((n, n), bool), 1), np.float32(np.nan), a)
    low = ember.jit(enp.linalg.cholesky)(upper_nan)
    assert _reconstruction_error(low, a64) <= bound
    np.testing.assert_array_equal(np.triu(np.asarray(low), 1), 0)
    not_pd = a.copy()
    not_pd[..., n - 1, n - 1] = -1
    bad = np.asarray(ember.jit(enp.linalg.cholesky)(not_pd))
    np.testing.assert_array_equal(np.isnan(bad), np.isnan(np.asarray(jnp.linalg.cholesky(
        not_pd))))


def _eigh_errors(w, v, a64):
    w, v = np.asarray(w, np.float64), np.asarray(v, np.float64)
    w64 = np.linalg.eigvalsh(a64)
    n = a64.shape[0]
    return (np.abs(w - w64).max() / np.abs(w64).max(),
            np.abs(v.T @ v - np.eye(n)).max(),
            np.linalg.norm(v * w @ v.T - a64) / np.linalg.norm(a64))


def _svd_errors(u, s, vh, a64):
    u, s, vh = (np.asarray(t, np.float64) for t in (u, s, vh))
    s64 = np.linalg.svd(a64, compute_uv=False)
    n = a64.shape[0]
    return (np.abs(s - s64).max() / s64[0],
            max(np.abs(u.T @ u - np.eye(n)).max(), np.abs(vh @ vh.T - np.eye(n)).max()),
            np.linalg.norm(u * s @ vh - a64) / np.linalg.norm(a64))


def test_jacobi_eigh_and_svd_at_64x64_are_as_accurate_as_lapack():
    """float32 64 x 64: the eigenvalues and singular values, the orthogonality of the
    vectors and the reconstruction, each within a small factor of JAX's (LAPACK's) error on
    the same matrix. (Rotations as ``cos x_p - sin x_q`` stretched the vectors by about
    70 eps over the sweeps, the values 10-40x JAX's error.)"""
    rng = np.random.default_rng(5)
    g = rng.standard_normal((64, 64)).astype(np.float32)
    a = (g + g.T) / 2
    a64 = a.astype(np.float64)
    (w, v), (u, s, vh) = ember.jit(lambda x: (enp.linalg.eigh(x), enp.linalg.svd(x)))(a)
    names = ("values", "orthogonality", "reconstruction")
    for kind, got, want in (
            ("eigh", _eigh_errors(w, v, a64), _eigh_errors(*jnp.linalg.eigh(a), a64)),
            ("svd", _svd_errors(u, s, vh, a64), _svd_errors(*jnp.linalg.svd(a), a64))):
        for name, e, ej in zip(names, got, want, strict=True):
            assert e <= 3 * max(ej, EPS32), (kind, name, e, ej)
