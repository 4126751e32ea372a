"""Long float sums and contractions against float64 NumPy (ember-tree-reductions).

IREE's CPU code adds a reduction into one accumulator per result element (per vector lane
when a contiguous length is a multiple of the vector width): a float32 sum of 65535 elements
was 8.6e-6 off and a (2, 10^6) @ (10^6, 2) product 3.6e-5 off, where XLA's tree reductions
give 5e-8 and 4e-7. Summed in blocks, float32 results stay within 2e-6 at every length here.
The data have a nonzero mean, so that the error of a running total shows.
"""

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as enp

RNG = np.random.default_rng(34)
F32 = 2e-6     # what blocked summation keeps of float32 here (measured: at most 4e-7)


def rel_err(got, want):
    got = np.asarray(got, np.float64)
    return float(np.max(np.abs(got - want) / np.abs(want)))


def stats(x):
    return x.sum(), x.mean(), x.var(), x.std()


@pytest.mark.parametrize("n", [1000, 4000, 59999, 60000, 65535, 100003, 10**6])
def test_float32_sum_mean_var_of_a_long_vector(n):
    x = RNG.uniform(0.0, 1.0, n).astype(np.float32)
    want = stats(x.astype(np.float64))
    got = ember.jit(stats)(x)
    for name, g, w in zip(["sum", "mean", "var", "std"], got, want):
        assert rel_err(g, w) <= F32, (name, n, rel_err(g, w))


@pytest.mark.parametrize("shape,axis", [((3, 65535), 1), ((40003, 3), 0), ((300, 333), None)])
def test_float32_sums_along_long_axes(shape, axis):
    x = RNG.uniform(0.5, 1.5, shape).astype(np.float32)
    w = x.astype(np.float64)
    got = ember.jit(lambda v: (v.sum(axis), v.mean(axis), (v * v).sum(axis)))(x)
    for g, want in zip(got, (w.sum(axis), w.mean(axis), (w * w).sum(axis))):
        assert rel_err(g, want) <= F32, (shape, axis, rel_err(g, want))


@pytest.mark.parametrize("dtype,tol", [(np.float16, 1e-3), (ml_dtypes.bfloat16, 8e-3)])
def test_half_sums_round_once(dtype, tol):
    """Halves sum in float32 and round once: within one rounding of the float64 sum."""
    x = RNG.uniform(0.0, 1.0, 65535).astype(dtype)
    w = x.astype(np.float64)
    got = ember.jit(lambda v: (v.sum(), v.mean()))(x)
    assert rel_err(got[0], w.sum()) <= tol
    assert rel_err(got[1], w.mean()) <= tol


@pytest.mark.parametrize("k", [1000, 4096, 65537, 10**6])
def test_float32_matmul_with_a_long_contraction(k):
    a = RNG.uniform(0.0, 1.0, (2, k)).astype(np.float32)
    b = RNG.uniform(0.0, 1.0, (k, 2)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert rel_err(ember.jit(lambda p, q: p @ q)(a, b), want) <= F32


def test_float32_dots_einsums_and_batched_products():
    k = 300007
    u, v = (RNG.uniform(0.0, 1.0, k).astype(np.float32) for _ in range(2))
    m = RNG.uniform(0.0, 1.0, (5, k)).astype(np.float32)
    a = RNG.uniform(0.0, 1.0, (3, 2, 40000)).astype(np.float32)
    b = RNG.uniform(0.0, 1.0, (3, 40000, 4)).astype(np.float32)
    c = RNG.uniform(0.0, 1.0, (2, 300, 200)).astype(np.float32)
    d = RNG.uniform(0.0, 1.0, (300, 200, 3)).astype(np.float32)

    def f(u, v, m, a, b, c, d):
        return (enp.dot(u, v), m @ v, enp.einsum("bik,bkj->bij", a, b),
                enp.einsum("ikl,klj->ij", c, d), enp.tensordot(c, d, 2))

    w = [x.astype(np.float64) for x in (u, v, m, a, b, c, d)]
    want = (w[0] @ w[1], w[2] @ w[1], w[3] @ w[4], np.einsum("ikl,klj->ij", w[5], w[6]),
            np.tensordot(w[5], w[6], 2))
    got = ember.jit(f)(u, v, m, a, b, c, d)
    for i, (g, x) in enumerate(zip(got, want)):
        assert rel_err(g, x) <= F32, (i, rel_err(g, x))


@pytest.mark.parametrize("dtype,tol", [(np.float16, 1e-3), (ml_dtypes.bfloat16, 8e-3)])
def test_half_matmul_with_a_long_contraction(dtype, tol):
    """Half products accumulate in float32 and round once."""
    a = RNG.uniform(0.0, 1.0, (2, 10**5)).astype(dtype)
    b = RNG.uniform(0.0, 1.0, (10**5, 2)).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert rel_err(ember.jit(lambda p, q: p @ q)(a, b), want) <= tol


def test_float64_sum_and_matmul(both_x64):
    x = RNG.uniform(0.0, 1.0, 10**6)
    a, b = RNG.uniform(0.0, 1.0, (2, 10**6)), RNG.uniform(0.0, 1.0, (10**6, 2))
    got = ember.jit(lambda v, p, q: (v.sum(), p @ q))(x, a, b)
    assert np.asarray(got[0]).dtype == np.float64
    assert rel_err(got[0], np.sum(x)) <= 1e-14
    assert rel_err(got[1], a @ b) <= 1e-14
