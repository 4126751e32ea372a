"""ember.lax's convenience functions against NumPy (shapes, slicing, products, top_k, generic
reductions, associative_scan), eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.numpy as enp
from ember.errors import TracingError

rng = np.random.default_rng(9)
X = rng.standard_normal((3, 4, 5)).astype(np.float32)


def test_shape_functions():
    @ember.jit
    def f(x):
        return dict(
            expand=lax.expand_dims(x, (0, -1)), squeeze=lax.squeeze(x[:1, :, :1], (0, 2)),
            collapse=lax.collapse(x, 1), collapse01=lax.collapse(x, 0, 2),
            broadcast=lax.broadcast(x[0], (2,)), rank=lax.broadcast_to_rank(x[0, 0], 3),
            like=lax.broadcast_like(x[0, 0], x), tile=lax.tile(x[0], (2, 1)),
            split=lax.split(x, (1, 2, 0, 1), axis=1), stack=lax.stack([x[0], x[1]], 1),
            unstack=lax.unstack(x, -1), full=lax.full((2, 3), 7, np.int8),
            full_like=lax.full_like(x, 1.5, shape=(2,)), empty=lax.empty((2,), np.float16))
    got = f(X)
    np.testing.assert_array_equal(got["expand"], X[None, ..., None])
    np.testing.assert_array_equal(got["squeeze"], X[0, :, 0])
    np.testing.assert_array_equal(got["collapse"], X.reshape(3, 20))
    np.testing.assert_array_equal(got["collapse01"], X.reshape(12, 5))
    np.testing.assert_array_equal(got["broadcast"], np.broadcast_to(X[0], (2, 4, 5)))
    np.testing.assert_array_equal(got["rank"], X[0, 0].reshape(1, 1, 5))
    np.testing.assert_array_equal(got["like"], np.broadcast_to(X[0, 0], X.shape))
    np.testing.assert_array_equal(got["tile"], np.tile(X[0], (2, 1)))
    for part, want in zip(got["split"], np.split(X, [1, 3, 3], axis=1)):
        np.testing.assert_array_equal(part, want)
    np.testing.assert_array_equal(got["stack"], np.stack([X[0], X[1]], 1))
    assert len(got["unstack"]) == 5
    np.testing.assert_array_equal(got["unstack"][3], X[..., 3])
    assert got["full"].dtype == np.int8 and (np.asarray(got["full"]) == 7).all()
    assert got["full_like"].dtype == np.float32 and got["full_like"].shape == (2,)
    assert got["empty"].dtype == np.float16


@pytest.mark.parametrize("start,limit,stride,axis", [(1, None, 2, 2), (-3, -1, 1, 1),
                                                     (None, 2, 1, 0), (4, 1, 1, 2)])
def test_slice_in_dim_follows_python_slicing(start, limit, stride, axis):
    got = lax.slice_in_dim(X, start, limit, stride, axis)
    idx = [slice(None)] * 3
    idx[axis] = slice(start, limit, stride)
    np.testing.assert_array_equal(got, X[tuple(idx)])


def test_index_and_dynamic_in_dim():
    @ember.jit
    def f(x, i):
        return dict(index=lax.index_in_dim(x, -1, 1, keepdims=False),
                    index_keep=lax.index_in_dim(x, 2, 2),
                    dyn=lax.dynamic_slice_in_dim(x, i, 2, axis=2),
                    upd=lax.dynamic_update_slice_in_dim(x, x[:, :1] * 0, i, 1),
                    upd_index=lax.dynamic_update_index_in_dim(x, x[:, 0] * 0 + 9, i, 1))
    for i in (1, 3, -2):
        got = f(X, np.int32(i))
        np.testing.assert_array_equal(got["index"], X[:, -1])
        np.testing.assert_array_equal(got["index_keep"], X[:, :, 2:3])
        s = min(max(i % 5 if i < 0 else i, 0), 3)        # wrapped, then clamped into range
        np.testing.assert_array_equal(got["dyn"], X[:, :, s:s + 2])
        r = min(max(i % 4 if i < 0 else i, 0), 3)
        want = X.copy()
        want[:, r] = 0
        np.testing.assert_array_equal(got["upd"], want)
        want[:, r] = 9
        np.testing.assert_array_equal(got["upd_index"], want)
    with pytest.raises(TracingError, match="out of bounds"):
        lax.index_in_dim(X, 3, 0)


@pytest.mark.parametrize("allow", [True, False])
def test_allow_negative_indices_as_jax(allow):
    # JAX: with allow_negative_indices=False a negative start is out of bounds (clamped to
    # 0) instead of counting from the end; static and traced starts, every dynamic slicer.
    jlax = pytest.importorskip("jax.lax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    u = np.full((4, 2), -1, np.float32)

    def both(m, i):
        return dict(slice=m.dynamic_slice(x, (0, i), (4, 2), allow_negative_indices=allow),
                    update=m.dynamic_update_slice(x, u, (0, i), allow_negative_indices=allow),
                    in_dim=m.dynamic_slice_in_dim(x, i, 2, 1, allow_negative_indices=allow),
                    index=m.dynamic_index_in_dim(x, i, 1, False, allow_negative_indices=allow),
                    update_in_dim=m.dynamic_update_slice_in_dim(
                        x, u, i, 1, allow_negative_indices=allow),
                    update_index=m.dynamic_update_index_in_dim(
                        x, u[:, 0], i, 1, allow_negative_indices=allow))

    for i in (-5, -2, 3):
        want = both(jlax, jnp.asarray(i, np.int32))   # an array: clamped, not refused
        for got in (both(lax, enp.asarray(i, np.int32)),
                    ember.jit(lambda i: both(lax, i))(np.int32(i))):
            for k in want:
                np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]), k)
        if i >= 0 or allow:
            np.testing.assert_array_equal(both(lax, i)["slice"], want["slice"])
        else:       # a static negative start JAX refuses (a ValueError there)
            with pytest.raises(IndexError, match="allow_negative_indices=False"):
                both(lax, i)
    per_dim = lax.dynamic_slice(x, (0, -2), (1, 2), allow_negative_indices=(False, True))
    np.testing.assert_array_equal(per_dim, x[:1, 4:])


def test_products():
    a, b = rng.standard_normal((4, 3)).astype(np.float32), X[0, :3, :]
    np.testing.assert_allclose(lax.dot(a, b), a @ b, rtol=1e-5)
    np.testing.assert_allclose(lax.dot(a[0], a[1]), a[0] @ a[1], rtol=1e-5)
    np.testing.assert_allclose(lax.dot(a, a[0]), a @ a[0], rtol=1e-5)
    np.testing.assert_allclose(lax.dot(a, b, dimension_numbers=(((1,), (0,)), ((), ()))),
                               a @ b, rtol=1e-5)
    ai = rng.integers(-9, 9, (2, 3)).astype(np.int8)
    got = lax.dot(ai, ai.T, preferred_element_type=np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ai.astype(np.int32) @ ai.T.astype(np.int32))
    np.testing.assert_allclose(lax.batch_matmul(X, X.transpose(0, 2, 1)),
                               X @ X.transpose(0, 2, 1), rtol=1e-5)
    with pytest.raises(TracingError, match="rank 1 or 2"):
        lax.dot(X, X)
    with pytest.raises(TracingError, match="batch dimensions"):
        lax.batch_matmul(X, X[:2])


def test_clamp_select_n_powers():
    x = X[0]
    np.testing.assert_array_equal(lax.clamp(-0.5, x, 0.5), np.clip(x, -0.5, 0.5))
    lo, hi = np.full_like(x, -0.1), np.full_like(x, 0.2)
    np.testing.assert_array_equal(lax.clamp(lo, x, hi), np.clip(x, lo, hi))
    which = rng.integers(0, 3, x.shape).astype(np.int32)
    cases = [x, x * 2, x * 3]
    np.testing.assert_array_equal(lax.select_n(which, *cases), np.choose(which, cases))
    np.testing.assert_array_equal(lax.select_n(x > 0, x, -x), np.where(x > 0, -x, x))
    np.testing.assert_array_equal(lax.select_n(np.int32(1), x, -x), -x)
    n = rng.integers(-5, 5, (6,)).astype(np.int32)
    for p in (0, 1, 2, 5, 7):
        np.testing.assert_array_equal(lax.integer_pow(n, p), n ** p)
    np.testing.assert_allclose(lax.integer_pow(x, -3), x.astype(np.float64) ** -3, rtol=1e-5)
    np.testing.assert_array_equal(lax.square(n), n * n)
    np.testing.assert_allclose(lax.reciprocal(x), 1 / x, rtol=1e-6)
    with pytest.raises(TracingError, match="negative exponent"):
        lax.integer_pow(n, -1)
    with pytest.raises(TracingError, match="scalar or of x's shape"):
        lax.clamp(lo[:2], x, hi)


def test_top_k_orders_descending_with_lower_index_first():
    x = rng.integers(0, 4, (5, 9)).astype(np.float32)          # many ties
    x[1, 3] = np.nan
    vals, idx = lax.top_k(x, 4)
    assert idx.dtype == np.int32
    for r in range(5):
        # NaN is the largest; ties keep the lower index first: a stable sort of -x.
        key = np.where(np.isnan(x[r]), -np.inf, -x[r])
        order = np.argsort(key, kind="stable")[:4]
        np.testing.assert_array_equal(idx[r], order)
        np.testing.assert_array_equal(vals[r], x[r, order])
    v0, i0 = lax.top_k(x, 2, axis=0)
    order = np.argsort(-x[:, 0], kind="stable")[:2]
    np.testing.assert_array_equal(i0[:, 0], order)
    vi, ii = lax.top_k(np.array([3, 249, 200, 5, 249], np.uint8), 3)
    np.testing.assert_array_equal(vi, [249, 249, 200])
    np.testing.assert_array_equal(ii, [1, 4, 2])
    vf, _ = lax.top_k(np.array([-0.0, -2.0, 1.0, -np.inf, 0.5], np.float16), 5)
    np.testing.assert_array_equal(vf, [1.0, 0.5, 0.0, -2.0, -np.inf])
    with pytest.raises(TracingError, match="k=10"):
        lax.top_k(x, 10)


def test_reduce_monoids_and_general_computations():
    x = X
    np.testing.assert_allclose(lax.reduce(x, 0.0, lax.add, (0, 2)), x.sum((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(lax.reduce(x, 1.0, lax.add, (1,)), x.sum(1) + 1, rtol=1e-5)
    np.testing.assert_array_equal(lax.reduce(x, -np.inf, lax.max, (2,)), x.max(2))
    # logaddexp is not one of lax's reducers: the pairwise tree.
    got = lax.reduce(x, -np.inf, enp.logaddexp, (0, 1))
    np.testing.assert_allclose(got, np.logaddexp.reduce(x.reshape(12, 5).astype(np.float64)),
                               rtol=1e-5)
    # Two operands: (max, argmax) with a user computation.
    idx = np.broadcast_to(np.arange(5, dtype=np.int32), x.shape)

    def pick(a, b):
        take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return enp.where(take_b, b[0], a[0]), enp.where(take_b, b[1], a[1])
    v, i = lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)), pick, (2,))
    np.testing.assert_array_equal(v, x.max(2))
    np.testing.assert_array_equal(i, x.argmax(2))
    n = rng.integers(0, 1 << 20, (7, 3)).astype(np.int32)
    np.testing.assert_array_equal(lax.reduce_xor(n, (0,)), np.bitwise_xor.reduce(n, 0))
    np.testing.assert_array_equal(lax.reduce(np.zeros((0, 2), np.float32), 3.0, lax.mul, (0,)),
                                  [3.0, 3.0])


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_associative_scan(n):
    x = rng.standard_normal((n, 3)).astype(np.float32)
    np.testing.assert_allclose(lax.associative_scan(lax.add, x), np.cumsum(x, 0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(lax.associative_scan(lax.max, x, reverse=True, axis=0),
                                  np.maximum.accumulate(x[::-1], 0)[::-1])
    # A non-commutative operation on a pytree: 2x2 matrix products, a Python loop as oracle.
    m = rng.standard_normal((3, n, 2, 2)).astype(np.float32)
    got = lax.associative_scan(lambda a, b: {"m": a["m"] @ b["m"]}, {"m": m}, axis=1)["m"]
    want = np.empty_like(m)
    for r in range(3):
        acc = np.eye(2)
        for t in range(n):
            acc = acc @ m[r, t]
            want[r, t] = acc
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    rev = lax.associative_scan(lambda a, b: a @ b, m, reverse=True, axis=1)
    want = np.empty_like(m)
    for r in range(3):
        acc = np.eye(2)
        for t in reversed(range(n)):     # JAX's: scan the reversed axis, reverse the result
            acc = acc @ m[r, t]
            want[r, t] = acc
    np.testing.assert_allclose(rev, want, rtol=1e-4, atol=1e-5)
    idx = np.arange(n, dtype=np.int32)
    np.testing.assert_array_equal(lax.associative_scan(lambda a, b: b, idx, reverse=True), idx)
    np.testing.assert_array_equal(lax.associative_scan(lambda a, b: a, idx, reverse=True),
                                  np.full(n, n - 1))


def test_cumlogsumexp_is_stable():
    x = np.array([[-1000.0, 0.0, 1.0, 80.0, -5.0]], np.float32)
    want = np.logaddexp.accumulate(x.astype(np.float64), axis=1)
    np.testing.assert_allclose(lax.cumlogsumexp(x, axis=1), want, rtol=1e-6)
    want = np.logaddexp.accumulate(x[:, ::-1].astype(np.float64), axis=1)[:, ::-1]
    np.testing.assert_allclose(lax.cumlogsumexp(x, axis=1, reverse=True), want, rtol=1e-6)


def test_identities():
    assert lax.stop_gradient(X) is X
    assert lax.optimization_barrier((X, 1))[1] == 1


def test_lax_binary_ops_broadcast_a_scalar_operand():
    # As JAX's lax: a Python scalar or rank-0 array beside an array is broadcast to it.
    x = np.arange(1, 4, dtype=np.float32)
    i = np.arange(1, 4, dtype=np.int32)
    got = ember.jit(lambda x, i: (lax.add(x, 2.0), lax.max(0.5 * 3, x), lax.lt(x, np.float32(2)),
                                  lax.pow(x, 2.0), lax.shift_left(i, 2), lax.rem(i * 7, 3),
                                  lax.atan2(1.0, x)))(x, i)
    wants = [x + 2, np.maximum(1.5, x), x < 2, x ** 2, i << 2, (i * 7) % 3, np.arctan2(1, x)]
    for g, w in zip(got, wants, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
    with pytest.raises(TracingError, match="equal shapes"):
        lax.add(x, x[:2])
