"""Sorting, cumulative lax ops and searching against NumPy (and JAX for size= fills)."""

import ml_dtypes
import numpy as np
import pytest
from helpers import close
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.numpy as enp
from ember import lax
from ember.errors import EmberError, TracingError

RNG = np.random.default_rng(1)
F = RNG.integers(-3, 4, (4, 9)).astype(np.float32)    # many ties
F[1, 3] = np.nan
F[2, 0] = np.nan
F[3, 5] = -0.0


def eq(got, want, dtype=None):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_argsort_floats_nan_ties(axis):
    def f(x):
        return (enp.sort(x, axis=axis), enp.argsort(x, axis=axis),
                enp.argsort(x, axis=axis, descending=True))
    s, a, d = ember.jit(f)(F)
    eq(s, np.sort(F, axis=axis))
    eq(a, np.argsort(F, axis=axis, kind="stable"), "int32")
    # descending and stable: reverse order of values, equal values keep their order
    flat = F.ravel() if axis is None else F
    ax = 0 if axis is None else axis
    want = np.flip(np.argsort(np.flip(flat, ax), axis=ax, kind="stable"), ax)
    eq(d, flat.shape[ax] - 1 - want)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float16", "int8"])
def test_sort_dtypes(dtype):
    x = RNG.integers(0, 200 if dtype == "uint8" else 5, (3, 17)).astype(dtype)
    if dtype == "int8":
        x = (x - 2).astype(dtype)
    s, a = ember.jit(lambda x: (enp.sort(x, axis=0), enp.argsort(x)))(x)
    eq(s, np.sort(x, axis=0), dtype)
    eq(a, np.argsort(x, kind="stable"))


def test_lax_sort_multi_operand_and_cumulative():
    k1 = RNG.integers(0, 3, 40).astype(np.int32)
    k2 = RNG.integers(0, 3, 40).astype(np.float32)
    v = np.arange(40, dtype=np.int32)

    def f(k1, k2, v):
        return (lax.sort((k1, k2, v), num_keys=2), lax.sort_key_val(k2, v),
                lax.sort(k1), lax.sort((k1, k1), num_keys=1))
    (s1, s2, sv), (kk, kv), only, (d1, d2) = ember.jit(f)(k1, k2, v)
    order = np.lexsort((k2, k1))        # k1 primary, then k2, stable
    eq(s1, k1[order])
    eq(s2, k2[order])
    eq(sv, v[order])
    eq(kk, np.sort(k2))
    eq(kv, np.argsort(k2, kind="stable"))
    eq(only, np.sort(k1))
    eq(d1, np.sort(k1))
    eq(d2, np.sort(k1))

    x = RNG.normal(size=(3, 5)).astype(np.float32)
    x[1, 2] = np.nan
    xi = RNG.integers(-4, 5, (3, 5)).astype(np.int32)

    def g(x, xi):
        return (lax.cumsum(x, axis=1), lax.cumsum(x, axis=0, reverse=True),
                lax.cumprod(xi, axis=1, reverse=True), lax.cummax(x, axis=1),
                lax.cummin(xi, axis=0), lax.cummax(xi > 0, axis=1, reverse=True))
    cs, csr, cpr, cmx, cmn, cb = ember.jit(g)(x, xi)
    np.testing.assert_allclose(np.asarray(cs), np.cumsum(x, 1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(csr), np.flip(np.cumsum(np.flip(x, 0), 0), 0),
                               rtol=1e-6)
    eq(cpr, np.flip(np.cumprod(np.flip(xi, 1), 1), 1))
    eq(cmx, np.maximum.accumulate(x, 1))
    eq(cmn, np.minimum.accumulate(xi, 0))
    eq(cb, np.flip(np.logical_or.accumulate(np.flip(xi > 0, 1), 1), 1))


def test_large_stable_argsort():
    x = RNG.integers(0, 50, 20000).astype(np.float32)
    eq(ember.jit(enp.argsort)(x), np.argsort(x, kind="stable"))


def test_searchsorted():
    a = np.sort(np.array([1, 2, 2, 3, 5, 8, np.nan, np.nan], np.float32))
    v = np.array([[0, 2, 2.5], [8, 9, np.nan]], np.float32)
    perm = RNG.permutation(8).astype(np.int32)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable").astype(np.int32)

    def f(a, v, shuffled, sorter):
        return (enp.searchsorted(a, v), enp.searchsorted(a, v, side="right"),
                enp.searchsorted(shuffled, v, sorter=sorter), enp.searchsorted(a, 2))
    left, r, s, scalar = ember.jit(f)(a, v, shuffled, sorter)
    eq(left, np.searchsorted(a, v), "int32")
    eq(r, np.searchsorted(a, v, side="right"))
    eq(s, np.searchsorted(shuffled, v, sorter=sorter))
    eq(scalar, np.searchsorted(a, 2))


def test_unique():
    x = np.array([[3, 1, 2], [3, 1, 7]], np.int32)
    xf = np.array([np.nan, 1, np.nan, 0.0, 1], np.float32)

    def f(x, xf):
        return (enp.unique(x, size=6, return_index=True, return_inverse=True,
                           return_counts=True),
                enp.unique(xf, size=4, return_counts=True),
                enp.unique(x, size=2), enp.unique(x, size=6, fill_value=-1))
    (u, i, inv, c), (uf, cf), short, filled = ember.jit(f)(x, xf)
    import jax.numpy as jnp
    ju, ji, jinv, jc = jnp.unique(x, size=6, return_index=True, return_inverse=True,
                                  return_counts=True)
    eq(u, ju)
    eq(i, ji)
    eq(c, jc)
    eq(inv, np.unique(x, return_inverse=True)[1])
    juf, jcf = jnp.unique(xf, size=4, return_counts=True)
    eq(uf, juf)
    eq(cf, jcf)
    eq(short, np.unique(x)[:2])
    eq(filled, np.concatenate([np.unique(x), [-1, -1]]))
    # outside jit the size comes from the data
    nu, ni, ninv, nc = np.unique(x, return_index=True, return_inverse=True,
                                 return_counts=True)
    eu, ei, einv, ec = enp.unique(x, return_index=True, return_inverse=True,
                                  return_counts=True)
    for got, want in ((eu, nu), (ei, ni), (einv, ninv), (ec, nc)):
        eq(got, want)
    eq(enp.unique(xf), np.unique(xf))
    eq(enp.unique(np.zeros(0, np.float32)), np.unique(np.zeros(0, np.float32)))


def test_unique_along_an_axis():
    x = RNG.integers(0, 3, (9, 2, 2)).astype(np.int32)
    x[4] = x[1]

    def f(x):
        return (enp.unique(x, axis=0, size=12, return_index=True, return_inverse=True,
                           return_counts=True),
                enp.unique(x, axis=-1, size=1, return_counts=True))
    (u, i, inv, c), (u1, c1) = ember.jit(f)(x)
    nu, ni, ninv, nc = np.unique(x, axis=0, return_index=True, return_inverse=True,
                                 return_counts=True)
    k = len(nu)
    eq(u[:k], nu)
    eq(u[k:], np.broadcast_to(nu[0], (12 - k, 2, 2)))       # filled with the smallest slice
    eq(i[:k], ni)
    eq(c, np.concatenate([nc, np.zeros(12 - k, nc.dtype)]))
    eq(inv, ninv.ravel())
    nu1, nc1 = np.unique(x, axis=-1, return_counts=True)
    eq(u1, nu1[..., :1])
    eq(c1, nc1[:1])
    # outside jit the size comes from the data; rows holding NaNs merge, as in JAX
    xf = np.array([[np.nan, 1], [0, 2], [np.nan, 1]], np.float32)
    got_u, got_c = enp.unique(xf, axis=0, return_counts=True)
    eq(got_u, np.array([[0, 2], [np.nan, 1]], np.float32))
    eq(got_c, [1, 2])
    assert enp.unique(xf, axis=0, equal_nan=False).shape == (3, 2)
    eq(enp.unique(np.zeros((3, 0), np.float32), axis=0), np.zeros((1, 0), np.float32))


def test_unique_counts_when_size_truncates():
    x = np.array([0, 0, 1, 1, 1, 2, 2], np.int32)
    for size in (1, 2, 3):
        _, c = ember.jit(lambda x, s=size: enp.unique(x, size=s, return_counts=True))(x)
        eq(c, np.unique(x, return_counts=True)[1][:size])


def test_nonzero_family():
    x = np.array([[0, 2, 0], [1, 0, 3]], np.int32)

    def f(x):
        return (enp.nonzero(x, size=5), enp.nonzero(x, size=2, fill_value=-1),
                enp.argwhere(x, size=4, fill_value=9), enp.flatnonzero(x, size=4),
                enp.where(x > 1, size=3), enp.where(x > 1, x, -x))
    nz, nz2, aw, fnz, wh, w3 = ember.jit(f)(x)
    r, c = np.nonzero(x)
    eq(nz[0], np.concatenate([r, [0, 0]]))
    eq(nz[1], np.concatenate([c, [0, 0]]))
    eq(nz2[0], r[:2])
    eq(nz2[1], c[:2])
    eq(aw, np.concatenate([np.argwhere(x), [[9, 9]]]))
    eq(fnz, np.concatenate([np.flatnonzero(x), [0]]))
    eq(wh[0], np.concatenate([np.nonzero(x > 1)[0], [0]]))
    eq(w3, np.where(x > 1, x, -x))
    for got, want in zip(enp.nonzero(x), np.nonzero(x)):
        eq(got, want)
    eq(enp.argwhere(x > 0), np.argwhere(x > 0))
    eq(enp.flatnonzero(np.zeros(4, np.float32)), np.flatnonzero(np.zeros(4)))
    eq(enp.nonzero(np.array([True, False, True]), size=4, fill_value=-1)[0],
       np.array([0, 2, -1, -1]))


def test_data_dependent_size_errors():
    for fn in (enp.unique, enp.nonzero, enp.argwhere, enp.flatnonzero, enp.where):
        with pytest.raises(EmberError, match="size="):
            ember.jit(fn)(np.arange(3, dtype=np.int32))
    with pytest.raises(EmberError, match="side"):
        ember.jit(lambda a: enp.searchsorted(a, a, side="middle"))(np.arange(3, dtype=np.float32))


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=12))
def test_sort_hypothesis(values):
    x = np.array(values, np.float32)
    x[x == 3] = np.nan
    eq(enp.argsort(x), np.argsort(x, kind="stable"))
    eq(enp.sort(x), np.sort(x))


# --- bitonic network (sorts whose quadratic work exceeds EXT_SORT_MAX_WORK) -------------------

def _ties_nans(shape, dtype=np.float32):
    x = RNG.integers(-20, 20, shape).astype(dtype)
    x[RNG.random(shape) < 0.05] = np.nan
    x[RNG.random(shape) < 0.05] = -0.0
    x[RNG.random(shape) < 0.02] = -np.nan      # sign bit set: must not become padding NaN
    return x


def _sorts(x):
    return (enp.sort(x), enp.argsort(x), enp.argsort(x, descending=True),
            enp.sort(x, descending=True))


_sorts_jit = ember.jit(_sorts)


@pytest.mark.parametrize("n", [1000, 70000])
def test_bitonic_sort_argsort_not_power_of_two(n):
    x = _ties_nans(n)
    s, a, d, sd = _sorts_jit(x)
    stable = np.argsort(x, kind="stable")
    eq(a, stable, "int32")
    # stable down to the bits: -0.0 / 0.0 and the NaNs keep their order, no padding leaks in
    eq(np.asarray(s).view(np.uint32), x[stable].view(np.uint32))
    want = np.flip(np.argsort(np.flip(x), kind="stable"))
    eq(d, n - 1 - want)
    eq(sd, np.flip(np.sort(x)))


def test_bitonic_multi_operand_ties_nans():
    n = 3000
    k1 = _ties_nans(n)
    k2 = RNG.integers(-3, 3, n).astype(np.int8)
    v1 = RNG.normal(size=n).astype(ml_dtypes.bfloat16)
    v2 = RNG.integers(0, 256, n).astype(np.uint8)
    v3 = RNG.random(n) < 0.5
    out = ember.jit(lambda *a: lax.sort(a, dimension=0, num_keys=2))(k1, k2, v1, v2, v3)
    order = np.lexsort((k2, k1))        # k1 primary (NaN last, -0.0 == 0.0), k2, stable
    for got, want in zip(out, (k1, k2, v1, v2, v3)):
        eq(np.asarray(got).view(np.uint8), want[order].view(np.uint8))


def test_bitonic_batch_dims_and_dtypes():
    x = _ties_nans((3, 700, 4))
    y = _ties_nans((600, 5))
    u = RNG.integers(0, 2 ** 32, (2, 1000), dtype=np.uint64).astype(np.uint32)
    i8 = RNG.integers(-128, 128, 4096).astype(np.int8)            # a power of two: no padding
    b = RNG.random(999) < 0.3
    h = _ties_nans(800, np.float16)
    bf = _ties_nans(800).astype(ml_dtypes.bfloat16)

    def f(x, y, u, i8, b, h, bf):
        return (enp.sort(x, axis=1), enp.argsort(x, axis=1), enp.argsort(y, axis=0),
                enp.sort(u), enp.sort(i8), enp.sort(b), enp.argsort(h), enp.sort(bf),
                lax.sort((u, u), num_keys=1))
    xs, xa, ya, us, i8s, bs, ha, bfs, (uk, uv) = ember.jit(f)(x, y, u, i8, b, h, bf)
    eq(xs, np.sort(x, axis=1))
    eq(xa, np.argsort(x, axis=1, kind="stable"))
    eq(ya, np.argsort(y, axis=0, kind="stable"))
    eq(us, np.sort(u), "uint32")
    eq(i8s, np.sort(i8), "int8")
    eq(bs, np.sort(b), "bool")
    eq(ha, np.argsort(h, kind="stable"))
    eq(np.asarray(bfs).astype(np.float32), np.sort(bf.astype(np.float32)))
    eq(uk, np.sort(u))
    eq(uv, np.sort(u))


@settings(max_examples=5, deadline=None)
@given(st.integers(1, 3), st.integers(190, 600))
def test_bitonic_hypothesis(rows, n):
    x = RNG.integers(-5, 5, (rows, n)).astype(np.float32)
    x[x == 4] = np.nan
    eq(enp.argsort(x, axis=1), np.argsort(x, axis=1, kind="stable"))


def test_sort_of_a_column_gathered_by_a_permutation():
    # ember-fuse had put the gather into a kernel reading the sliced column, which IREE
    # failed to compile for int32 ("LLVM Translation failed").
    x = RNG.integers(0, 5, (7, 2)).astype(np.int32)
    p = RNG.permutation(7).astype(np.int32)
    eq(ember.jit(lambda x, p: enp.sort(x[:, 1][p]))(x, p), np.sort(x[:, 1][p]))


def test_two_uniques_of_one_array_in_one_program():
    x = np.array([[3, 1, 2], [3, 1, 7]], np.int32)
    a, b = ember.jit(lambda x: (enp.unique(x, size=2), enp.unique(x, size=6, fill_value=-1)))(x)
    eq(a, np.unique(x)[:2])
    eq(b, np.concatenate([np.unique(x), [-1, -1]]))


def test_sorts_sharing_operands_in_one_program():
    # The sorts work in place: CSE had merged the clones of an operand two sorts share (their
    # tiebreak positions too), so the second sorted what the first had permuted; a constant
    # key had its clone folded away (IREE: "write affecting operations on global resources").
    x = RNG.uniform(size=(4, 5)).astype(np.float32)
    key = np.round(x * 3)                 # ties, broken by the second key
    outs = ember.jit(lambda x: [lax.sort((key, x * s), dimension=1, num_keys=2)[1]
                                for s in (1.0, 2.0, -1.0)])(x)
    for s, got in zip((1.0, 2.0, -1.0), outs):
        order = np.lexsort((x * s, key), axis=1)
        eq(got, np.take_along_axis(x * s, order, 1))


@pytest.mark.parametrize("name", ["unique_values_and_inverse", "two_argsorts", "sort_and_argsort"])
def test_sorts_of_one_computed_value_in_one_program(name):
    """Several sorts of one value computed twice in a program (CSE merges the two
    computations after lowering): each sort permutes a copy of its own. IREE merged the
    clones of one value for two sorts, and the second sorted what the first had permuted
    (unique_inverse gave wrong indices beside unique_values)."""
    x = np.array([-1, 5, 5, 16, 7, 2, 9, -6], np.int32)
    funs = {
        "unique_values_and_inverse": (
            lambda x: (enp.unique_values(x % 4, size=4),
                       enp.unique_inverse(x % 4, size=4).inverse_indices),
            lambda x: (np.unique(x % 4), np.unique(x % 4, return_inverse=True)[1])),
        "two_argsorts": (
            lambda x: (enp.argsort(x * 3, stable=True), enp.argsort(-(x * 3), stable=True)),
            lambda x: (np.argsort(x * 3, kind="stable"), np.argsort(-(x * 3), kind="stable"))),
        "sort_and_argsort": (
            lambda x: (enp.sort(x % 5), enp.argsort(x % 5, stable=True), enp.sort(x % 5)[::-1]),
            lambda x: (np.sort(x % 5), np.argsort(x % 5, kind="stable"), np.sort(x % 5)[::-1])),
    }
    fun, ref = funs[name]
    got, want = ember.jit(fun)(x), ref(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        np.testing.assert_array_equal(g[:len(w)], w)


# --- partition, lexsort, JAX's index dtypes under x64 (against JAX) -------------------------

# ember warns when it narrows 64-bit NumPy input (x64 off), as JAX does: not what these
# tests check.
_ignore_narrowing = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_PRNG = np.random.default_rng(17)
X = _PRNG.normal(size=(4, 6)).astype(np.float32)
V = _PRNG.normal(size=(6,)).astype(np.float32)
N = _PRNG.integers(-5, 6, size=(4, 6)).astype(np.int32)


@_ignore_narrowing
@pytest.mark.parametrize("a", [X, N, np.array([3, 0, 2, 0, 1], np.uint8)])
def test_partition(a, jnp):
    for kth, axis in [(0, -1), (2, -1), (-1, 0), (1, 0)]:
        if a.ndim == 1 and axis == 0 and kth == 1:
            continue
        close(enp.partition(a, kth, axis), jnp.partition(a, kth, axis))
        idx = np.asarray(enp.argpartition(a, kth, axis))
        assert idx.dtype == np.int32
        part = np.take_along_axis(a, idx, axis)
        close(part, np.asarray(jnp.partition(a, kth, axis)))
    close(ember.jit(lambda a: enp.partition(a, 1, 0))(a), jnp.partition(a, 1, 0))


@_ignore_narrowing
def test_lexsort(jnp):
    k1, k2 = N % 2, N % 3
    for keys, axis in [([k1[0]], -1), ([k1[0], k2[0]], -1), ([k2, k1], 0), ([X, k1], 1),
                       ((np.array([2.0, np.nan, 1.0]), np.array([1, 1, 1])), -1)]:
        close(enp.lexsort(keys, axis), jnp.lexsort(keys, axis))
    close(enp.lexsort([np.int32(1)]), jnp.lexsort([np.int32(1)]))
    close(ember.jit(lambda a, b: enp.lexsort([a, b]))(X[0], k1[0]), jnp.lexsort([X[0], k1[0]]))


PARTITION_ERRORS = [
    (lambda: enp.partition(V, 6), TracingError, "out of bounds"),
    (lambda: enp.lexsort([]), TracingError, "len > 0"),
    (lambda: enp.lexsort([V, X]), TracingError, "same shape"),
]


@pytest.mark.parametrize("call, error, match", PARTITION_ERRORS)
def test_partition_and_lexsort_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@_ignore_narrowing
def test_x64_index_results_are_int32(both_x64, jnp):
    # JAX's searchsorted indices are int32 for any axis that fits (digitize's too), and
    # argpartition's come from lax.top_k (int32); ember gave the default int (int64).
    a = np.array([1.0, 3.0, 5.0, 7.0])
    v = np.array([2.0, 6.0, 7.0])
    for f in [lambda m: m.searchsorted(a, v), lambda m: m.searchsorted(a, v, side="right"),
              lambda m: m.searchsorted(a, v, sorter=np.arange(4)),
              lambda m: m.searchsorted(a.astype(np.int32), np.int32(3)),
              lambda m: m.digitize(v, a), lambda m: m.digitize(v, a[::-1], right=True),
              lambda m: m.digitize(v, np.array([]))]:
        close(f(enp), f(jnp), 1e-6)
        close(ember.jit(lambda f=f: f(enp))(), f(jnp), 1e-6)
    # argpartition: JAX's dtype; its order past kth differs (ember's matches partition's).
    p = np.array([5.0, 2.0, 9.0, 1.0])
    for got in (enp.argpartition(p, 1), ember.jit(lambda: enp.argpartition(p, 1))()):
        assert got.dtype == jnp.argpartition(p, 1).dtype
        close(p[np.asarray(got)], jnp.partition(p, 1), 1e-6)
