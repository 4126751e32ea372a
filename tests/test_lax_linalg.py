"""ember.lax.linalg against jax.lax.linalg (run on the same inputs) and float64 NumPy."""

import numpy as np
import pytest

import ember
import ember.lax.linalg as lla
from ember import errors

jla = pytest.importorskip("jax.lax.linalg")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 4, 4)).astype(np.float32)
SPD = A @ A.transpose(0, 2, 1) + 4 * np.eye(4, dtype=np.float32)


def _same(got, want, tol=1e-4):
    got, want = ember.tree_util.tree_leaves(got), list(want) if isinstance(
        want, tuple | list) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("symmetrize_input", [True, False])
def test_cholesky(symmetrize_input):
    x = SPD + np.triu(np.ones((4, 4), np.float32), 1)          # not symmetric
    _same(lla.cholesky(x, symmetrize_input=symmetrize_input),
          jla.cholesky(x, symmetrize_input=symmetrize_input))


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_returns_vectors_then_values(lower):
    x = SPD + np.triu(np.ones((4, 4), np.float32), 1)
    v, w = lla.eigh(x, lower=lower, symmetrize_input=False)
    jv, jw = jla.eigh(x, lower=lower, symmetrize_input=False)
    _same(w, jw)
    _same(np.abs(np.asarray(v)), np.abs(np.asarray(jv)))     # columns up to sign
    # JAX's CPU eigh has no subset_by_index; the subset is the slice of the full result
    sv, sw = lla.eigh(SPD, subset_by_index=(1, 3))
    _same(sw, np.asarray(jla.eigh(SPD)[1])[..., 1:3])
    assert sv.shape == (2, 4, 2)


@pytest.mark.parametrize("shape", [(2, 4, 4), (2, 4, 3), (3, 5)])
def test_lu_packed_pivots_permutation(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    _same(lla.lu(x), jla.lu(x))


def test_lu_pivots_to_permutation():
    piv = np.array([[2, 2, 3], [1, 2, 2]], np.int32)
    _same(lla.lu_pivots_to_permutation(piv, 5), jla.lu_pivots_to_permutation(piv, 5))
    with pytest.raises(errors.TracingError, match="smaller than"):
        lla.lu_pivots_to_permutation(piv, 2)


@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr(full_matrices):
    x = A[:, :, :3]
    _same(lla.qr(x, full_matrices=full_matrices), jla.qr(x, full_matrices=full_matrices))
    with pytest.raises(errors.TracingError, match="pivoting"):
        lla.qr(x, pivoting=True)


def test_svd():
    x = A[:, :3]
    _same(lla.svd(x, compute_uv=False), jla.svd(x, compute_uv=False))
    u, s, vh = lla.svd(x, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u * s[..., None, :] @ vh), x, atol=1e-5)
    _same(lla.svd(x, full_matrices=False, compute_uv=False, subset_by_index=(0, 2)),
          np.asarray(jla.svd(x, compute_uv=False))[..., :2])
    with pytest.raises(errors.TracingError, match="full_matrices=False"):
        lla.svd(x, subset_by_index=(0, 2))


@pytest.mark.parametrize("symmetrize_output", [False, True])
def test_symmetric_product(symmetrize_output):
    c = RNG.standard_normal((2, 4, 4)).astype(np.float32)
    kw = dict(alpha=0.5, beta=2.0, symmetrize_output=symmetrize_output)
    _same(lla.symmetric_product(A, c, **kw), jla.symmetric_product(A, c, **kw))


@pytest.mark.parametrize("kw", [dict(left_side=True, lower=True),
                                dict(left_side=True, lower=True, transpose_a=True),
                                dict(left_side=True, lower=False),
                                dict(lower=True),
                                dict(lower=False, transpose_a=True),
                                dict(lower=True, transpose_a=True, unit_diagonal=True)])
def test_triangular_solve(kw):
    t = np.tril(A) + 3 * np.eye(4, dtype=np.float32)
    t = t if kw["lower"] else t.transpose(0, 2, 1)
    b = RNG.standard_normal((2, 4, 3) if kw.get("left_side") else (2, 3, 4)).astype(np.float32)
    _same(lla.triangular_solve(t, b, **kw), jla.triangular_solve(t, b, **kw))


def _tridiagonal(dl, d, du):
    m = d.shape[-1]
    out = np.zeros(d.shape + (m,))
    i = np.arange(m)
    out[..., i, i] = d
    out[..., i[1:], i[:-1]] = dl[..., 1:]
    out[..., i[:-1], i[1:]] = du[..., :-1]
    return out


def test_tridiagonal_solve_pivots_as_lapack():
    """Rows whose diagonal is 0 or tiny need the row swaps of LAPACK's gtsv (what JAX runs on
    the CPU): without them the elimination divides by zero."""
    m = 7
    dl, d, du = (RNG.standard_normal((3, m)).astype(np.float32) for _ in range(3))
    dl[:, 0] = 5.0                                     # unused entries, ignored
    du[:, -1] = 5.0
    d[0, 0], d[1, 2], d[2, m - 1] = 0.0, 1e-7, 0.0
    b = RNG.standard_normal((3, m, 2)).astype(np.float32)
    want = np.linalg.solve(_tridiagonal(dl, d, du), b.astype(np.float64))
    for got in (lla.tridiagonal_solve(dl, d, du, b),
                ember.jit(lla.tridiagonal_solve)(dl, d, du, b)):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    jax_err = np.abs(np.asarray(jla.tridiagonal_solve(dl, d, du, b)) - want).max()
    assert np.abs(np.asarray(got) - want).max() <= 4 * jax_err + 1e-6


def test_tridiagonal_solve_small_and_bad_shapes():
    d = np.array([[2.0]], np.float32)
    np.testing.assert_allclose(np.asarray(lla.tridiagonal_solve(d * 0, d, d * 0, d[..., None])),
                               [[[1.0]]])
    with pytest.raises(errors.TracingError, match=r"\(\.\.\., m, n\)"):
        lla.tridiagonal_solve(d, d, d, d)
