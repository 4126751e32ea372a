"""The rest of jax.numpy's API (ember/numpy/_selection.py, _manipulation.py, _index_tricks.py,
_statistics.py, _setops.py, _functional.py, _polynomial.py, _window.py, _dtypes.py, ...),
checked against JAX and NumPy computed here, eagerly and under ``ember.jit``, with edge cases
and errors."""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, ConcretizationError, TracingError

pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

rng = np.random.default_rng(17)
X = rng.normal(size=(4, 6)).astype(np.float32)
V = rng.normal(size=(6,)).astype(np.float32)
N = rng.integers(-5, 6, size=(4, 6)).astype(np.int32)
S = rng.normal(size=(40, 3)).astype(np.float32)


def both(f, jf, *args, tol=1e-5):
    """``f`` on ember eagerly and under jit against ``jf`` (the JAX/NumPy oracle)."""
    want = jf(*args)
    close(f(*args), want, tol)
    close(ember.jit(f)(*args), want, tol)


# --- array API spellings ---------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.int32])
def test_array_api_spellings(dt):
    x, v = X.astype(dt) * (3 if dt == np.int32 else 1), V.astype(dt)
    stack = rng.normal(size=(2, 6, 4)).astype(dt)

    def run(m):
        return (m.vecdot(x, v), m.vecdot(x, x, axis=0), m.vecdot(stack, x.T[None], axis=-2),
                m.matvec(x, v), m.matvec(stack, x[0, :4]), m.vecmat(x[:, 0], x),
                m.vecmat(v, stack), m.matrix_transpose(stack), m.permute_dims(stack, (2, 0, 1)),
                m.concat([x, x[:1]]), m.concat([x, v], axis=None), m.unstack(x, axis=-1),
                m.unstack(stack))

    close(run(enp), run(jnp))
    close(ember.jit(lambda: run(enp))(), run(jnp))


def test_bitwise_invert():
    for a in [np.array([0, 7, 255], np.uint8), N, np.array([True, False])]:
        both(enp.bitwise_invert, jnp.bitwise_invert, a)


# --- selection, insertion, deletion ----------------------------------------------------------

def test_compress_and_extract():
    c = np.array([True, False, True, True])
    for axis in [None, 0, 1, -1]:
        cc = c if axis != 1 and axis != -1 else np.r_[c, False, True]
        close(enp.compress(cc, X, axis=axis), jnp.compress(cc, X, axis=axis))
    close(enp.compress(c[:2], X, axis=0), jnp.compress(c[:2], X, axis=0))     # shorter
    close(enp.compress(np.zeros(4, bool), X, axis=0), jnp.compress(np.zeros(4, bool), X, 0))
    close(enp.compress([1, 0, 2], X[0]), jnp.compress(np.array([1, 0, 2]), X[0]))
    for size in [0, 2, 4]:
        close(ember.jit(lambda c, x, s=size: enp.compress(c, x, axis=0, size=s,
                                                          fill_value=-7))(c, X),
              jnp.compress(c, X, axis=0, size=size, fill_value=-7))
    close(enp.extract(N > 0, N), jnp.extract(N > 0, N))
    close(ember.jit(lambda c, x: enp.extract(c, x, size=20, fill_value=9))(N > 0, X),
          jnp.extract(N > 0, X, size=20, fill_value=9))


def test_delete():
    for obj, axis in [(1, 1), (-1, 0), (slice(None, None, 2), 1), (slice(3, 1, -1), None),
                      (np.array([0, 2, 2, -1]), 1), (np.array([True, False, True, False]), 0),
                      (np.array([], np.int32), 0), (np.arange(4), 0)]:
        close(enp.delete(X, obj, axis), jnp.delete(X, obj, axis))
    idx = np.array([4, 0, -1])
    close(ember.jit(lambda x, i: enp.delete(x, i, axis=1, assume_unique_indices=True))(X, idx),
          jnp.delete(X, idx, axis=1, assume_unique_indices=True))


def test_insert():
    for obj, vals, axis in [(1, 9.0, None), (2, V[:4], 1), (np.array([0, 6, 3]), V[:3], 1),
                            (-1, 5, 0), (slice(0, 4, 2), X[:2], 0), (0, V, 0),
                            (np.array([1]), np.array([[1.0], [2.0], [3.0], [4.0]]), 1)]:
        close(enp.insert(X, obj, vals, axis), jnp.insert(X, obj, vals, axis))
    close(enp.insert(N, 3, 2.7, axis=1), jnp.insert(N, 3, 2.7, axis=1))   # cast to a's dtype
    close(ember.jit(lambda x, i, v: enp.insert(x, i, v, axis=0))(X, np.int32(2), V),
          jnp.insert(X, 2, V, axis=0))


def test_choose():
    idx = np.abs(N) % 3
    ch = [X, -X, X * 2]
    close(enp.choose(idx, ch), jnp.choose(idx, ch))
    close(enp.choose(idx[0], [X, 0.5, V]), jnp.choose(idx[0], [X, 0.5, V]))
    for mode in ["wrap", "clip"]:
        close(ember.jit(lambda i, mode=mode: enp.choose(i, ch, mode=mode))(N),
              jnp.choose(N, ch, mode=mode))


def test_block():
    a, b, c = X[:2, :2], X[:2, 2:], X[2:]
    cases = [[a, b], [[a, b], [c]], [1.0, V], [[[a]], [[a]]], X]
    for arrays in cases:
        close(enp.block(arrays), jnp.block(arrays))
    close(ember.jit(lambda x: enp.block([[x, x], [x, x]]))(a), jnp.block([[a, a], [a, a]]))


def test_diagflat_resize_fill_diagonal():
    for v, k in [(V, 0), (X[:2, :2], 2), (N[0], -1), (np.float32(3.0), 0)]:
        close(enp.diagflat(v, k), jnp.diagflat(v, k))
    for a, shape in [(V, (3, 5)), (N, 4), (X, (2, 2)), (np.zeros(0, np.float32), (2, 3)),
                     (V, (0,))]:
        close(enp.resize(a, shape), jnp.resize(a, shape))
    cube = rng.normal(size=(3, 3, 3)).astype(np.float32)
    for a, val in [(X, 7.0), (X.T, V[:3]), (cube, -1.0), (N, 2.6), (X, V[:1])]:
        close(enp.fill_diagonal(a, val, inplace=False), jnp.fill_diagonal(a, val, inplace=False))
    close(ember.jit(lambda a, v: enp.fill_diagonal(a, v, inplace=False))(X, V),
          jnp.fill_diagonal(X, V, inplace=False))


def test_put_and_place():
    ind = np.array([0, 5, 23, 30, -2])
    vals = np.array([1.0, 2.0], np.float32)
    for mode in [None, "clip", "wrap"]:
        both(lambda a, i, v, mode=mode: enp.put(a, i, v, mode=mode, inplace=False),
             lambda a, i, v, mode=mode: jnp.put(a, i, v, mode=mode, inplace=False), X, ind, vals)
    close(enp.put(N, [1, 2], 9.5, inplace=False), jnp.put(N, np.array([1, 2]), 9.5, inplace=False))
    both(lambda a, m, v: enp.place(a, m, v, inplace=False),
         lambda a, m, v: jnp.place(a, m, v, inplace=False), X, X > 0, vals)
    close(enp.place(N, N < 0, np.array([7, 8, 9]), inplace=False),
          jnp.place(N, N < 0, np.array([7, 8, 9]), inplace=False))


def test_piecewise():
    for x in [X, N]:
        conds = [x < -0.5, x > 0.5]
        for funcs in [[lambda v: v * 2, lambda v: -v], [lambda v: v * 2, 3, lambda v: v + 1],
                      [-1, 1]]:
            close(enp.piecewise(x, conds, funcs), jnp.piecewise(x, conds, funcs))
    close(ember.jit(lambda x: enp.piecewise(x, [x < 0], [lambda v, s: v * s, 1.0], 3.0))(X),
          jnp.piecewise(X, [X < 0], [lambda v, s: v * s, 1.0], 3.0))


# --- index helpers ---------------------------------------------------------------------------

def test_index_helpers():
    close(enp.diag_indices(3), jnp.diag_indices(3))
    close(enp.diag_indices(2, 4), jnp.diag_indices(2, 4))
    close(enp.diag_indices_from(np.ones((3, 3, 3))), jnp.diag_indices_from(np.ones((3, 3, 3))))
    for k in [-1, 0, 2]:
        close(enp.tril_indices_from(X, k), jnp.tril_indices_from(X, k))
        close(enp.triu_indices_from(X, k), jnp.triu_indices_from(X, k))
    rows, cols = np.array([0, 3]), np.array([5, 1, 2])
    close(enp.ix_(rows, cols), jnp.ix_(rows, cols))
    close(enp.asarray(X)[enp.ix_(rows, cols)], X[np.ix_(rows, cols)])
    close(ember.jit(lambda x, r, c: x[enp.ix_(r, c)])(X, rows, cols), X[np.ix_(rows, cols)])
    close(ember.jit(lambda x: x[enp.tril_indices_from(x)])(X), X[np.tril_indices_from(X)])


def test_grids_and_concatenators():
    for key in [slice(0, 5), (slice(0, 3), slice(-1, 1, 0.5)), (slice(0, 1, 5j), slice(2))]:
        close(enp.mgrid[key], jnp.mgrid[key])
        close(enp.ogrid[key], jnp.ogrid[key])
    close(enp.r_[1:4, 0, V[:2], [7, 8]], jnp.r_[1:4, 0, V[:2], [7, 8]])
    close(enp.r_[-1:1:5j], jnp.r_[-1:1:5j])
    close(enp.r_["0,2", [1, 2], [3, 4]], jnp.r_["0,2", [1, 2], [3, 4]])
    close(enp.r_["1,2,0", [1, 2], [3, 4]], jnp.r_["1,2,0", [1, 2], [3, 4]])
    close(enp.r_["r", [1, 2]], jnp.r_["r", [1, 2]])
    close(enp.r_["c", 1:3], jnp.r_["c", 1:3])
    close(enp.r_[X, X], jnp.r_[X, X])
    close(enp.c_[V, V], jnp.c_[V, V])
    close(enp.c_[X, X], jnp.c_[X, X])
    close(enp.c_[np.array([[1, 2]]), 0, 0, np.array([[4, 5]])],
          jnp.c_[np.array([[1, 2]]), 0, 0, np.array([[4, 5]])])
    assert enp.s_[1:2, ::3] == np.s_[1:2, ::3] and enp.index_exp[2] == np.index_exp[2]
    close(ember.jit(lambda x: enp.r_[x, 0.0, x])(V), jnp.r_[V, 0.0, V])


# --- histograms ------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [X, N, np.full((5,), 2.0, np.float32)])
def test_histogram(data):
    for bins, rng_, density in [(10, None, None), (3, (-1.0, 2.0), True),
                                (np.array([-3.0, -1.0, 0.0, 5.0]), None, False)]:
        close(enp.histogram_bin_edges(data, bins, rng_),
              jnp.histogram_bin_edges(data, bins, rng_))
        close(enp.histogram(data, bins, rng_, density=density),
              jnp.histogram(data, bins, rng_, density=density))
    w = np.abs(X).ravel()[:data.size].reshape(data.shape)
    close(enp.histogram(data, 4, weights=w, density=True),
          jnp.histogram(data, 4, weights=w, density=True))


def test_histogram_jit():
    both(lambda x: enp.histogram(x, 6), lambda x: jnp.histogram(x, 6), X)
    both(lambda x, w: enp.histogram(x, 3, (0.0, 1.0), w, True),
         lambda x, w: jnp.histogram(x, 3, (0.0, 1.0), w, True), X, X * X)


def test_histogramdd_and_2d():
    for bins, rng_, w, density in [(3, None, None, None), ((2, 3, 4), None, S[:, 0], True),
                                   ([2, np.array([-1.0, 0.0, 1.0]), 3],
                                    [None, (-2.0, 2.0), (0.0, 1.0)], None, False)]:
        close(enp.histogramdd(S, bins, rng_, w, density),
              list(jnp.histogramdd(S, bins, rng_, w, density)), tol=1e-4)
    x, y = S[:, 0], S[:, 1]
    for bins in [4, [2, 5], np.array([-1.0, 0.0, 1.0]), [np.array([-1.0, 1.0]), 3]]:
        close(enp.histogram2d(x, y, bins), jnp.histogram2d(x, y, bins))
    close(enp.histogram2d(x, y, 3, [(-1, 1), (0, 2)], weights=np.abs(x), density=True),
          jnp.histogram2d(x, y, 3, [(-1, 1), (0, 2)], weights=np.abs(x), density=True))
    both(lambda s: enp.histogramdd(s, 2), lambda s: list(jnp.histogramdd(s, 2)), S)


# --- partitioning, sorting, differences ------------------------------------------------------

@pytest.mark.parametrize("a", [X, N, np.array([3, 0, 2, 0, 1], np.uint8)])
def test_partition(a):
    for kth, axis in [(0, -1), (2, -1), (-1, 0), (1, 0)]:
        if a.ndim == 1 and axis == 0 and kth == 1:
            continue
        close(enp.partition(a, kth, axis), jnp.partition(a, kth, axis))
        idx = np.asarray(enp.argpartition(a, kth, axis))
        assert idx.dtype == np.int32
        part = np.take_along_axis(a, idx, axis)
        close(part, np.asarray(jnp.partition(a, kth, axis)))
    close(ember.jit(lambda a: enp.partition(a, 1, 0))(a), jnp.partition(a, 1, 0))


def test_lexsort():
    k1, k2 = N % 2, N % 3
    for keys, axis in [([k1[0]], -1), ([k1[0], k2[0]], -1), ([k2, k1], 0), ([X, k1], 1),
                       ((np.array([2.0, np.nan, 1.0]), np.array([1, 1, 1])), -1)]:
        close(enp.lexsort(keys, axis), jnp.lexsort(keys, axis))
    close(enp.lexsort([np.int32(1)]), jnp.lexsort([np.int32(1)]))
    close(ember.jit(lambda a, b: enp.lexsort([a, b]))(X[0], k1[0]), jnp.lexsort([X[0], k1[0]]))


def test_gradient():
    coords = np.cumsum(np.abs(V) + 0.1).astype(np.float32)
    for args, kw in [((V,), {}), ((X,), {}), ((X, 2.0), {}), ((X, 2.0, 0.5), {}),
                     ((X, coords), {"axis": 1}), ((X,), {"axis": -2}), ((N,), {}),
                     ((X[:2],), {"axis": 0}), ((X,), {"axis": ()})]:
        close(enp.gradient(*args, **kw), jnp.gradient(*args, **kw), tol=1e-4)
    close(ember.jit(lambda x, c: enp.gradient(x, c, axis=1))(X, coords),
          jnp.gradient(X, coords, axis=1), tol=1e-4)


def test_unwrap_and_spacing():
    phase = (np.cumsum(rng.uniform(-3, 3, size=(3, 12)), axis=1) % (2 * np.pi)).astype(
        np.float32)
    for kw in [{}, {"axis": 0}, {"discont": 4.0}, {"period": 5.0}]:
        close(enp.unwrap(phase, **kw), jnp.unwrap(phase, **kw), tol=1e-4)
    close(enp.unwrap(np.array([0, 5, 10, 2, 13]), period=6),
          jnp.unwrap(np.array([0, 5, 10, 2, 13]), period=6))
    close(enp.unwrap(np.zeros((2, 0), np.float32)), jnp.unwrap(np.zeros((2, 0), np.float32)))
    special = np.array([1.0, -2.5, 0.0, -0.0, 1e-42, 3e38, np.inf, -np.inf, np.nan], np.float32)
    both(enp.spacing, jnp.spacing, special)
    close(enp.spacing(np.array([1, 1000])), jnp.spacing(np.array([1, 1000])))
    close(enp.spacing(special.astype(np.float16)), jnp.spacing(special.astype(np.float16)))


# --- sets ------------------------------------------------------------------------------------

A1 = np.array([5, 1, 3, 3, 7, 1, -2], np.int32)
A2 = np.array([[3, 9], [1, 1], [4, -2]], np.int32)
F1 = np.array([1.0, np.nan, 2.5, np.nan, 1.0], np.float32)
F2 = np.array([2.5, 0.0, np.nan], np.float32)
E = np.zeros(0, np.int32)


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_operations(name):
    e_op, j_op = getattr(enp, name), getattr(jnp, name)
    for a, b in [(A1, A2), (A2, A1), (F1, F2), (E, A1), (A1, E), (A1, A1), (N[0], V)]:
        close(e_op(a, b), j_op(a, b))
    for size, fill in [(9, None), (2, None), (6, -1)]:
        close(ember.jit(lambda a, b, s=size, f=fill: e_op(a, b, size=s, fill_value=f))(A1, A2),
              j_op(A1, A2, size=size, fill_value=fill))
    if name != "union1d":
        u1, u2 = np.array([4, 1, 9, 3], np.int32), np.array([3, 8, 4], np.int32)
        close(e_op(u1, u2, assume_unique=True), j_op(u1, u2, assume_unique=True))


def test_intersect1d_indices():
    close(enp.intersect1d(A1, A2, return_indices=True),
          jnp.intersect1d(A1, A2, return_indices=True))
    close(ember.jit(lambda a, b: enp.intersect1d(a, b, return_indices=True, size=5))(A1, A2),
          jnp.intersect1d(A1, A2, return_indices=True, size=5))


def test_unique_variants():
    for x in [A2, F1, N]:
        for name in ["unique_all", "unique_counts", "unique_inverse"]:
            got, want = getattr(enp, name)(x), getattr(jnp, name)(x)
            assert got._fields == want._fields
            close(tuple(got), tuple(want))
        close(enp.unique_values(x), jnp.unique_values(x))
    got = ember.jit(lambda x: enp.unique_all(x, size=8, fill_value=0))(A2)
    close(tuple(got), tuple(jnp.unique_all(A2, size=8, fill_value=0)))


# --- bits ------------------------------------------------------------------------------------

def test_packbits_unpackbits():
    bits = rng.integers(0, 2, size=(3, 11)).astype(np.int32)
    for a, axis, order in [(bits, None, "big"), (bits, 1, "little"), (bits > 0, 0, "big"),
                           (bits[:, :8], -1, "big"), (np.zeros(0, np.uint8), None, "big")]:
        close(enp.packbits(a, axis, order), jnp.packbits(a, axis, order))
    u = rng.integers(0, 256, size=(2, 3)).astype(np.uint8)
    for axis, count, order in [(None, None, "big"), (0, 5, "little"), (1, 30, "big"),
                               (1, -3, "big"), (-1, 0, "little")]:
        close(enp.unpackbits(u, axis, count, order), jnp.unpackbits(u, axis, count, order))
    close(ember.jit(lambda u: enp.packbits(enp.unpackbits(u, axis=1), axis=1))(u), u)


# --- functional helpers ----------------------------------------------------------------------

def test_apply_along_and_over_axes():
    cube = rng.normal(size=(2, 3, 4)).astype(np.float32)
    for f, jf in [(lambda v: v * v.sum(), lambda v: v * v.sum()),
                  (lambda v: enp.sum(v), lambda v: jnp.sum(v)),
                  (lambda v: enp.outer(v, v[:2]), lambda v: jnp.outer(v, v[:2]))]:
        for axis in [0, 1, -1]:
            close(enp.apply_along_axis(f, axis, cube), jnp.apply_along_axis(jf, axis, cube),
                  tol=1e-4)
    close(enp.apply_along_axis(lambda v, s: v * s, 1, X, 2.0),
          jnp.apply_along_axis(lambda v, s: v * s, 1, X, 2.0))
    for axes in [[0], [0, 2], [-1, 1]]:
        close(enp.apply_over_axes(enp.sum, cube, axes), jnp.apply_over_axes(jnp.sum, cube, axes))
    close(ember.jit(lambda c: enp.apply_over_axes(enp.max, c, [1]))(cube),
          jnp.apply_over_axes(jnp.max, cube, [1]))


def test_vectorize():
    f = enp.vectorize(lambda a, b: a * b + 1)
    close(f(X, V), jnp.vectorize(lambda a, b: a * b + 1)(X, V))
    close(f(2.0, 3.0), jnp.vectorize(lambda a, b: a * b + 1)(2.0, 3.0))
    dot = enp.vectorize(enp.dot, signature="(n),(n)->()")
    close(dot(X, V), jnp.vectorize(jnp.dot, signature="(n),(n)->()")(X, V))
    mv = enp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    stack = rng.normal(size=(5, 3, 6)).astype(np.float32)
    close(mv(stack, V), jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")(stack, V),
          tol=1e-4)
    pw = enp.vectorize(lambda x, p: x ** p, excluded={1})
    close(pw(X, 2), X ** 2)
    close(ember.jit(lambda x, v: dot(x, v))(X, V), jnp.dot(X, V))


def test_fromfunction():
    for f, shape, dtype in [(lambda i, j: i * 10 + j, (3, 4), float),
                            (lambda i, j: i - j, (2, 5), int),
                            (lambda i: i ** 2, 4, np.float32),
                            (lambda i, j, k: i + j * k, (2, 2, 3), int)]:
        close(enp.fromfunction(f, shape, dtype=dtype), jnp.fromfunction(f, shape, dtype=dtype))
    # Keyword arguments are passed through (JAX's vmap rejects a scalar one): NumPy's result.
    close(enp.fromfunction(lambda i, j, scale: (i + j) * scale, (2, 2), scale=2.0),
          np.fromfunction(lambda i, j, scale: (i + j) * scale, (2, 2), scale=2.0).astype(
              np.float32))


# --- polynomials and windows -----------------------------------------------------------------

P1 = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
P2 = np.array([2.0, 1.0], np.float32)
PI = np.array([1, 2, 3], np.int32)


def test_polynomial_arithmetic():
    for a, b in [(P1, P2), (P2, P1), (PI, P2), (PI, PI), (P1[:1], P1)]:
        for name in ["polyadd", "polysub", "polymul"]:
            close(getattr(enp, name)(a, b), getattr(jnp, name)(a, b), tol=1e-4)
        close(enp.polydiv(a, b), jnp.polydiv(a, b), tol=1e-4)
    z = np.array([0.0, 0.0, 1.0, 2.0], np.float32)
    close(enp.polymul(z, P2, trim_leading_zeros=True),
          jnp.polymul(z, P2, trim_leading_zeros=True))
    close(enp.polydiv(P1, np.array([1.0, -2.0, 0.5], np.float32), trim_leading_zeros=True),
          jnp.polydiv(P1, np.array([1.0, -2.0, 0.5], np.float32), trim_leading_zeros=True),
          tol=1e-4)
    both(lambda a, b: (enp.polyadd(a, b), enp.polymul(a, b), enp.polydiv(a, b)),
         lambda a, b: (jnp.polyadd(a, b), jnp.polymul(a, b), jnp.polydiv(a, b)), P1, P2,
         tol=1e-4)


def test_polynomial_calculus_and_roots():
    for p in [P1, PI, P2[:1]]:
        for m in [0, 1, 2, 5]:
            close(enp.polyder(p, m), jnp.polyder(p, m), tol=1e-4)
            close(enp.polyint(p, m), jnp.polyint(p, m), tol=1e-4)
    close(enp.polyint(P1, 2, k=np.array([1.0, -3.0])), jnp.polyint(P1, 2, k=np.array([1.0, -3.0])))
    close(enp.polyint(P1, 3, k=2.0), jnp.polyint(P1, 3, k=2.0))
    roots = np.array([1.0, -2.0, 0.5], np.float32)
    both(enp.poly, jnp.poly, roots, tol=1e-4)
    close(enp.poly(np.zeros(0, np.float32)), jnp.poly(np.zeros(0, np.float32)))
    close(enp.poly(PI), jnp.poly(PI))
    sym = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], np.float32)
    close(enp.poly(sym), np.poly(sym).real.astype(np.float32), tol=1e-4)   # real, see docs


def test_polyfit():
    x = np.linspace(-1, 2, 12).astype(np.float32)
    y = (0.5 * x ** 3 - x + 2 + 0.05 * np.sin(9 * x)).astype(np.float32)
    yy = np.stack([y, 2 * y - 1], axis=1)
    for args, kw in [((x, y, 3), {}), ((x, y, 1), {"w": np.abs(x) + 1}), ((x, yy, 2), {}),
                     ((x, y, 2), {"cov": True}), ((x, y, 2), {"cov": "unscaled"}),
                     ((x, yy, 2), {"cov": True})]:
        close(enp.polyfit(*args, **kw), jnp.polyfit(*args, **kw), tol=2e-3)
    c, res, rank, sv, rcond = enp.polyfit(x, y, 2, full=True)
    cj, resj, rankj, svj, rcondj = jnp.polyfit(x, y, 2, full=True)
    close((c, res, sv, rcond), (cj, resj, svj, rcondj), tol=2e-3)
    assert int(rank) == int(rankj)
    close(ember.jit(lambda x, y: enp.polyfit(x, y, 2))(x, y), jnp.polyfit(x, y, 2), tol=2e-3)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
    for M in [0, 1, 2, 7, 10]:
        close(getattr(enp, name)(M), getattr(jnp, name)(M), tol=1e-6)


def test_kaiser():
    # One program for all the windows (each eager call would compile i0 once more).
    cases = [(0, 1.0), (1, 2.0), (6, 0.0), (9, 5.0), (8, 14.0)]
    got = ember.jit(lambda b: [enp.kaiser(M, beta) for M, beta in cases]
                    + [enp.kaiser(7, b)])(np.float32(3.0))
    for (M, beta), g in zip(cases, got):
        close(g, jnp.kaiser(M, beta), tol=1e-5)
    close(got[-1], jnp.kaiser(7, 3.0))


# --- dtypes ----------------------------------------------------------------------------------

DTYPES = [np.bool_, np.int8, np.int32, np.uint16, np.float16, np.float32, ml_dtypes.bfloat16]


def test_isdtype_issubdtype():
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", np.float32, ("bool", "real floating")]
    for d in DTYPES:
        for k in kinds:
            assert enp.isdtype(d, k) == jnp.isdtype(d, k), (d, k)
        for cls in [enp.generic, enp.number, enp.integer, enp.signedinteger,
                    enp.unsignedinteger, enp.inexact, enp.floating, enp.complexfloating,
                    np.float32, np.int8, np.bool_]:
            assert enp.issubdtype(d, cls) == jnp.issubdtype(d, cls), (d, cls)
    assert enp.isdtype(enp.float32, "real floating") and enp.issubdtype(enp.int8, enp.integer)
    assert enp.dtype("float32") == np.float32 and enp.dtype is np.dtype
    assert enp.issubdtype(np.dtype("float32"), "float32")


def test_real_and_complex_queries():
    for x in [1, 1.5, 1j, None, np.ones(2), np.ones(2, np.complex64), enp.ones(2), "s",
              np.complex64(1), [1.0, 2.0]]:
        assert enp.iscomplexobj(x) == jnp.iscomplexobj(x), x
        assert enp.isrealobj(x) == jnp.isrealobj(x), x
    for x in [X, N, np.array([True])]:
        both(enp.isreal, jnp.isreal, x)
        both(enp.iscomplex, jnp.iscomplex, x)


# --- errors ----------------------------------------------------------------------------------

ERRORS = [
    (lambda: enp.vecdot(X, V[:4]), TracingError, "vecdot: axes must match"),
    (lambda: enp.matvec(V, V), TracingError, "matvec"),
    (lambda: enp.matrix_transpose(V), TracingError, "matrix_transpose"),
    (lambda: enp.unstack(np.float32(1)), TracingError, "unstack"),
    (lambda: enp.compress(np.ones((2, 2), bool), X), TracingError, "1-D"),
    (lambda: enp.compress(np.r_[np.ones(4, bool), True], X, axis=0), TracingError,
     "out of bounds"),
    (lambda: enp.compress(np.ones(4, bool), X, axis=0, size=5), TracingError, "size"),
    (lambda: ember.jit(lambda c, x: enp.compress(c, x))(np.ones(4, bool), X), TracingError,
     "size="),
    (lambda: enp.compress(np.ones(4, bool), X, out=X), ArgumentError, "out="),
    (lambda: enp.delete(X, 9, axis=0), TracingError, "out of bounds"),
    (lambda: enp.delete(X, np.array([1.5])), TracingError, "integer or bool"),
    (lambda: ember.jit(lambda x, i: enp.delete(x, i))(X, np.array([1])), ConcretizationError,
     "assume_unique_indices"),
    (lambda: enp.insert(X, np.ones((2, 2), np.int32), 1.0), TracingError, "1-D"),
    (lambda: enp.insert(X, np.array([0.5]), 1.0), TracingError, "integer"),
    (lambda: enp.choose(np.array([0, 3]), [V[:2], V[:2]]), TracingError, "invalid entry"),
    (lambda: enp.choose(np.array([0, 1]), [V[:2]], mode="bad"), ArgumentError, "mode"),
    (lambda: ember.jit(lambda i: enp.choose(i, [V, V]))(np.zeros(6, np.int32)),
     ConcretizationError, "mode='wrap'"),
    (lambda: enp.block([[X], X]), TracingError, "depths"),
    (lambda: enp.block([]), TracingError, "empty"),
    (lambda: enp.block((X, X)), ArgumentError, "tuple"),
    (lambda: enp.resize(V, (-1, 2)), TracingError, "non-negative"),
    (lambda: enp.fill_diagonal(X, 1.0), ArgumentError, "inplace=False"),
    (lambda: enp.fill_diagonal(X, 1.0, wrap=True, inplace=False), ArgumentError, "wrap"),
    (lambda: enp.fill_diagonal(V, 1.0, inplace=False), TracingError, "2-D"),
    (lambda: enp.fill_diagonal(np.ones((2, 3, 3)), 1.0, inplace=False), TracingError, "equal"),
    (lambda: enp.put(X, [0], 1.0), ArgumentError, "inplace=False"),
    (lambda: enp.put(X, [0], 1.0, mode="raise", inplace=False), ArgumentError, "raise"),
    (lambda: enp.place(X, X > 0, np.zeros(0), inplace=False), TracingError, "empty"),
    (lambda: enp.place(X, V > 0, V, inplace=False), TracingError, "same size"),
    (lambda: enp.piecewise(X, [X > 0], [1, 2, 3]), TracingError, "functions"),
    (lambda: enp.diag_indices_from(X), TracingError, "equal length"),
    (lambda: enp.tril_indices_from(V), TracingError, "2-D"),
    (lambda: enp.ix_(X), TracingError, "1-D"),
    (lambda: enp.mgrid[1], ArgumentError, "slices"),
    (lambda: enp.r_["bad", V], ArgumentError, "directive"),
    (lambda: enp.histogram(X, "auto"), ArgumentError, "string"),
    (lambda: enp.histogram(X, 0), TracingError, "positive"),
    (lambda: enp.histogram(X, 3, weights=V), TracingError, "weights"),
    (lambda: enp.histogram(X, 3, range=(1.0,)), TracingError, "range"),
    (lambda: ember.jit(lambda b: enp.histogram(X, b))(np.int32(3)), ConcretizationError,
     "bins"),
    (lambda: enp.histogramdd(V), TracingError, "2-D"),
    (lambda: enp.histogramdd(S, [2, 3]), TracingError, "per dimension"),
    (lambda: enp.partition(V, 6), TracingError, "out of bounds"),
    (lambda: enp.lexsort([]), TracingError, "len > 0"),
    (lambda: enp.lexsort([V, X]), TracingError, "same shape"),
    (lambda: enp.gradient(np.ones((1, 3))), TracingError, "at least 2"),
    (lambda: enp.gradient(X, V[:2], axis=1), TracingError, "same length"),
    (lambda: enp.gradient(X, 1.0, 2.0, 3.0), TracingError, "spacing arguments"),
    (lambda: enp.gradient(X, edge_order=2), ArgumentError, "edge_order"),
    (lambda: ember.jit(lambda a, b: enp.union1d(a, b))(A1, A1), TracingError, "size="),
    (lambda: enp.setdiff1d(A1, A1, size=-1), ArgumentError, "non-negative"),
    (lambda: enp.packbits(X), TracingError, "integer or boolean"),
    (lambda: enp.packbits(N, bitorder="middle"), ArgumentError, "bitorder"),
    (lambda: enp.unpackbits(N), TracingError, "uint8"),
    (lambda: enp.apply_over_axes(lambda a, ax: a[None], X, [0]), TracingError, "shape"),
    (lambda: enp.vectorize(enp.dot, signature="(n),(n)->()")(X, V[:3]), TracingError,
     "inconsistent size"),
    (lambda: enp.vectorize(enp.dot, signature="(n)(n)->()"), ArgumentError, "signature"),
    (lambda: enp.vectorize(3), ArgumentError, "callable"),
    (lambda: enp.polyder(P1, -1), TracingError, "non-negative"),
    (lambda: enp.polyint(P1, 2, k=np.ones(3)), TracingError, "k must be"),
    (lambda: enp.polyadd(X, P1), TracingError, "1-D"),
    (lambda: enp.polyfit(X, X, 1), TracingError, "1-D vector"),
    (lambda: enp.polyfit(P1, P1, -1), TracingError, "deg"),
    (lambda: enp.polyfit(P1, P1, 3, cov=True), TracingError, "exceed"),
    (lambda: ember.jit(lambda p: enp.polymul(p, p, trim_leading_zeros=True))(P1),
     ConcretizationError, "concrete"),
    (lambda: enp.poly(X), TracingError, "square"),
    (lambda: ember.jit(lambda m: enp.hanning(m))(np.int32(4)), ConcretizationError, "M"),
    (lambda: enp.kaiser(2.5, 1.0), ArgumentError, "integer"),
    (lambda: enp.isdtype(np.float32, "floaty"), ArgumentError, "unrecognized kind"),
    (lambda: enp.issubdtype(object(), np.floating), ArgumentError, "dtype"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, cls, fragment = ERRORS[i]
    with pytest.raises(cls, match=fragment):
        fn()


def test_preferred_element_type_is_where_products_accumulate():
    # int8 products of 100 * 100 wrapped when the result was cast after the product.
    a = np.full(10, 100, np.int8)
    b = np.array([100, -100, 100], np.int8)
    wide = a.astype(np.int64)
    got = ember.jit(lambda a, b: (
        enp.einsum("i,i->", a, a, preferred_element_type=np.int32),
        enp.vecdot(a[:8], a[:8], preferred_element_type=np.int32),
        enp.convolve(b, a[:2], preferred_element_type=np.int32),
        enp.correlate(b, a[:2], mode="full", preferred_element_type=np.int32)))(a, b)
    wants = [wide @ wide, wide[:8] @ wide[:8], np.convolve(b.astype(np.int64), wide[:2]),
             np.correlate(b.astype(np.int64), wide[:2], mode="full")]
    for g, w in zip(got, wants, strict=True):
        assert g.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(g), w)
