"""Batching rules of the indexing ops (ember/dialects/indexing.py): gather, scatter,
dynamic_slice and dynamic_update_slice under vmap, NumPy indexing, x.at[...], take_along_axis,
sort and ember.random under vmap.

The oracle is the per-example function, jitted, run once per example and stacked (plus NumPy
emulations of the ops' documented semantics where they are short)."""

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember import lax

N = 5
RNG = np.random.default_rng(7)


def _take(a, k, axis):
    return a if axis is None else np.take(a, k, axis=axis)


def stacked(jf, args, in_axes, out_axis=0, size=N):
    """Per-example results of ``jf`` stacked along ``out_axis`` (the oracle)."""
    outs = [np.asarray(jf(*[_take(a, k, ax) for a, ax in zip(args, in_axes)]))
            for k in range(size)]
    return np.stack(outs, axis=out_axis)


def batched_arg(per_example, axis, size=N):
    """A batch of ``size`` random examples of ``per_example``'s shape/dtype, stacked at axis
    (or the example itself when axis is None)."""
    if axis is None:
        return per_example
    ex = [_random_like(per_example) for _ in range(size)]
    return np.stack(ex, axis=axis)


def _random_like(a):
    a = np.asarray(a)
    if np.issubdtype(a.dtype, np.integer):
        return RNG.integers(-2, 7, a.shape).astype(a.dtype)    # some out of bounds
    return RNG.standard_normal(a.shape).astype(a.dtype)


def np_gather(x, idx, axes):
    """NumPy emulation of ember.gather (indices clamped, batch dims first)."""
    rest = [d for d in range(x.ndim) if d not in axes]
    out = np.empty(idx.shape[:-1] + tuple(x.shape[d] for d in rest), x.dtype)
    for b in np.ndindex(*idx.shape[:-1]):
        sl = [slice(None)] * x.ndim
        for j, a in enumerate(axes):
            sl[a] = int(np.clip(idx[b + (j,)], 0, x.shape[a] - 1))
        out[b] = x[tuple(sl)]
    return out


def np_scatter_add(x, idx, upd, axes):
    """NumPy emulation of ember.scatter add (out-of-bounds updates dropped)."""
    out = x.copy()
    for b in np.ndindex(*idx.shape[:-1]):
        sl = [slice(None)] * x.ndim
        ok = True
        for j, a in enumerate(axes):
            i = int(idx[b + (j,)])
            ok &= 0 <= i < x.shape[a]
            sl[a] = i
        if ok:
            out[tuple(sl)] += upd[b]
    return out


# --- gather --------------------------------------------------------------------------------

X_G = np.zeros((4, 3, 2), np.float32)           # per-example operand
I_G = np.zeros((5, 1), np.int32)                # per-example indices into axis 1


def _gather_fn(x, i):
    return lax.gather(x, i, (1,))


gather_jit = ember.jit(_gather_fn)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (-1, -1), (2, None),
                                     (None, 1), (None, -1), (1, 2)])
def test_gather(in_axes):
    x, i = batched_arg(X_G, in_axes[0]), batched_arg(I_G, in_axes[1])
    got = np.asarray(ember.vmap(_gather_fn, in_axes=in_axes)(x, i))
    want = stacked(gather_jit, (x, i), in_axes)
    np.testing.assert_array_equal(got, want)
    want_np = np.stack([np_gather(_take(x, k, in_axes[0]), _take(i, k, in_axes[1]), (1,))
                        for k in range(N)])
    np.testing.assert_array_equal(got, want_np)


def test_gather_small_index_dtype_large_batch():
    """The batch index does not fit int8: the indices are widened."""
    n = 300
    x = RNG.standard_normal((n, 3)).astype(np.float32)
    i = RNG.integers(-1, 4, (n, 2, 1)).astype(np.int8)
    got = np.asarray(ember.vmap(lambda x, i: lax.gather(x, i, (0,)))(x, i))
    want = np.stack([np_gather(x[k], i[k], (0,)) for k in range(n)])
    np.testing.assert_array_equal(got, want)


# --- scatter -------------------------------------------------------------------------------

X_S = np.zeros((4, 3), np.float32)
I_S = np.zeros((6, 1), np.int32)
U_S = np.zeros((6, 3), np.float32)


def _scatter_add(x, i, u):
    return lax.scatter_add(x, i, u, (0,))


def _scatter_set(x, i, u):
    return lax.scatter(x, i, u, (0,))


scatter_add_jit = ember.jit(_scatter_add)
scatter_set_jit = ember.jit(_scatter_set)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (0, 0, 0), (-1, None, -1), (None, -1, 1), (1, 0, None)])
def test_scatter_add(in_axes):
    args = [batched_arg(a, ax) for a, ax in zip((X_S, I_S, U_S), in_axes)]
    got = np.asarray(ember.vmap(_scatter_add, in_axes=in_axes)(*args))
    np.testing.assert_allclose(got, stacked(scatter_add_jit, args, in_axes), rtol=1e-6)
    want_np = np.stack([np_scatter_add(*[_take(a, k, ax) for a, ax in zip(args, in_axes)],
                                       (0,)) for k in range(N)])
    np.testing.assert_allclose(got, want_np, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("in_axes", [(None, 0, 0), (0, None, 1)])
def test_scatter_set_unique(in_axes):
    # Unique in-bounds indices per example (so "set" is deterministic), plus one dropped.
    i = np.stack([np.append(RNG.permutation(4), [9, -1])[:, None] for _ in range(N)],
                 axis=0).astype(np.int32)
    i = i if in_axes[1] is not None else i[0]
    args = [batched_arg(X_S, in_axes[0]), i, batched_arg(U_S, in_axes[2])]
    got = np.asarray(ember.vmap(_scatter_set, in_axes=in_axes)(*args))
    np.testing.assert_array_equal(got, stacked(scatter_set_jit, args, in_axes))


# --- dynamic_slice / dynamic_update_slice --------------------------------------------------

X_D = np.zeros((4, 5), np.float32)
S0 = np.int32(0)


def _dslice(x, s0, s1):
    return lax.dynamic_slice(x, (s0, s1), (2, 3))


def _dslice_row(x, s0, s1):
    return lax.dynamic_slice(x, (s0, s1), (1, 5))     # dimension 1 taken whole


dslice_jit = ember.jit(_dslice)
dslice_row_jit = ember.jit(_dslice_row)

STARTS = np.array([-3, 0, 1, 3, 9], np.int32)        # from the end, clamped at both ends


@pytest.mark.parametrize("fn,jf", [(_dslice, dslice_jit), (_dslice_row, dslice_row_jit)])
@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (0, 0, 0),
                                     (-1, None, 0), (1, 0, None)])
def test_dynamic_slice(fn, jf, in_axes):
    x = batched_arg(X_D, in_axes[0])
    s0 = STARTS if in_axes[1] is not None else np.int32(2)
    s1 = STARTS[::-1].copy() if in_axes[2] is not None else np.int32(1)
    args = (x, s0, s1)
    got = np.asarray(ember.vmap(fn, in_axes=in_axes)(*args))
    np.testing.assert_array_equal(got, stacked(jf, args, in_axes))


def test_dynamic_slice_unsigned_starts():
    x = RNG.standard_normal((N, 6)).astype(np.float32)
    s = np.array([0, 1, 4, 200, 255], np.uint8)
    got = np.asarray(ember.vmap(lambda x, s: lax.dynamic_slice(x, (s,), (3,)))(x, s))
    want = np.stack([x[k, min(int(s[k]), 3):min(int(s[k]), 3) + 3] for k in range(N)])
    np.testing.assert_array_equal(got, want)


def _dus(x, u, s0, s1):
    return lax.dynamic_update_slice(x, u, (s0, s1))


dus_jit = ember.jit(_dus)
U_D = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize("in_axes", [(0, None, None, None), (None, 0, None, None),
                                     (None, None, 0, None), (0, 0, 0, 0), (-1, None, None, 0),
                                     (None, 1, 0, 0), (1, -1, None, None)])
def test_dynamic_update_slice(in_axes):
    x, u = batched_arg(X_D, in_axes[0]), batched_arg(U_D, in_axes[1])
    s0 = STARTS if in_axes[2] is not None else np.int32(3)
    s1 = STARTS[::-1].copy() if in_axes[3] is not None else np.int32(-1)
    args = (x, u, s0, s1)
    got = np.asarray(ember.vmap(_dus, in_axes=in_axes)(*args))
    np.testing.assert_array_equal(got, stacked(dus_jit, args, in_axes))


def test_dynamic_update_slice_whole_rows():
    """Update as wide as the operand: only the row index is scattered."""
    x = RNG.standard_normal((N, 4, 3)).astype(np.float32)
    u = RNG.standard_normal((N, 1, 3)).astype(np.float32)
    got = np.asarray(ember.vmap(lambda x, u, s: lax.dynamic_update_slice(x, u, (s, 0)))(
        x, u, STARTS))
    want = x.copy()
    for k in range(N):      # JAX's rule: a negative start counts from the end, then clamps
        s = int(STARTS[k])
        r = int(np.clip(s + 4 if s < 0 else s, 0, 3))
        want[k, r] = u[k, 0]
    np.testing.assert_array_equal(got, want)


# --- NumPy indexing and x.at ---------------------------------------------------------------

X_N = np.zeros((6, 3), np.float32)
I_N = np.zeros((4,), np.int32)


def _getitem(x, i):
    return x[i]


def _getitem_scalar(x, i):
    return x[i, 1:]


def _at_add(x, i, v):
    return x.at[i].add(v)


getitem_jit = ember.jit(_getitem)
getitem_scalar_jit = ember.jit(_getitem_scalar)
at_add_jit = ember.jit(_at_add)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (-1, 0)])
def test_numpy_getitem(in_axes):
    x = batched_arg(X_N, in_axes[0])
    i = RNG.integers(-6, 6, (N, 4)).astype(np.int32) if in_axes[1] is not None else \
        np.array([5, -1, 0, 2], np.int32)
    got = np.asarray(ember.vmap(_getitem, in_axes=in_axes)(x, i))
    want = stacked(getitem_jit, (x, i), in_axes)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.stack([_take(x, k, in_axes[0])[_take(i, k, in_axes[1])]
                                                 for k in range(N)]))


def test_numpy_getitem_scalar_index():
    x = RNG.standard_normal((N, 6, 3)).astype(np.float32)
    i = np.array([0, 5, -1, -6, 2], np.int32)
    got = np.asarray(ember.vmap(_getitem_scalar)(x, i))
    np.testing.assert_array_equal(got, stacked(getitem_scalar_jit, (x, i), (0, 0)))
    np.testing.assert_array_equal(got, np.stack([x[k, i[k], 1:] for k in range(N)]))


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, 0, None), (0, None, 0), (1, 0, -1)])
def test_at_add(in_axes):
    x = batched_arg(X_N, in_axes[0])
    i = RNG.integers(-6, 6, (N, 4)).astype(np.int32) if in_axes[1] is not None else \
        np.array([1, 1, -2, 3], np.int32)                # duplicates accumulate
    v = batched_arg(np.zeros((4, 3), np.float32), in_axes[2])
    args = (x, i, v)
    got = np.asarray(ember.vmap(_at_add, in_axes=in_axes)(*args))
    np.testing.assert_allclose(got, stacked(at_add_jit, args, in_axes), rtol=1e-6)
    want = []
    for k in range(N):
        xk, ik, vk = (_take(a, k, ax).copy() for a, ax in zip(args, in_axes))
        np.add.at(xk, ik, vk)
        want.append(xk)
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-5, atol=1e-6)


def test_take_along_axis_and_sort():
    x = RNG.standard_normal((N, 4, 6)).astype(np.float32)

    def f(x):
        order = enp.argsort(x, axis=-1)
        return enp.take_along_axis(x, order, axis=-1), enp.sort(x, axis=0)

    got_t, got_s = ember.vmap(f, in_axes=1, out_axes=(0, -1))(x)
    for k in range(4):
        np.testing.assert_array_equal(np.asarray(got_t)[k], np.sort(x[:, k], axis=-1))
    np.testing.assert_array_equal(np.asarray(got_s), np.moveaxis(np.sort(x, axis=0), 1, -1))


# --- nested vmap, under jit, unbatched args ------------------------------------------------

def test_nested_vmap_gather_under_jit():
    """outer over the operands, inner over the indices: x[b] indexed by i[c] for every b, c."""
    x = RNG.standard_normal((3, 6, 2)).astype(np.float32)
    i = RNG.integers(-1, 7, (4, 5)).astype(np.int32)
    inner = ember.vmap(_getitem, in_axes=(None, 0))
    f = ember.jit(ember.vmap(inner, in_axes=(0, None)))
    got = np.asarray(f(x, i))
    want = np.stack([np.stack([x[b][np.clip(i[c], -6, 5)] for c in range(4)])
                     for b in range(3)])
    np.testing.assert_array_equal(got, want)


def test_vmap_inside_jit_with_closure_and_unbatched_starts():
    table = RNG.standard_normal((8, 4)).astype(np.float32)

    @ember.jit
    def f(table, xs, s):
        # table unbatched, xs batched, s unbatched: the update path keeps dynamic slices.
        def one(x):
            row = lax.dynamic_slice(table, (s, 0), (1, 4))[0]
            return lax.dynamic_update_slice(x, row[None, :2], (0, s))
        return ember.vmap(one)(xs)

    xs = RNG.standard_normal((N, 3, 4)).astype(np.float32)
    got = np.asarray(f(table, xs, np.int32(1)))
    want = xs.copy()
    want[:, 0, 1:3] = table[1, :2]
    np.testing.assert_array_equal(got, want)


# --- ember.random under vmap ---------------------------------------------------------------

KEYS = np.asarray(ember.random.split(ember.random.key(42), 8))


@pytest.mark.parametrize("name,fn", [
    ("uniform", lambda k: ember.random.uniform(k, (3,))),
    ("normal", lambda k: ember.random.normal(k, (2, 2))),
    ("randint", lambda k: ember.random.randint(k, (4,), 0, 10)),
    ("permutation", lambda k: ember.random.permutation(k, 6)),
    ("split", lambda k: ember.random.split(k, 3)),
])
def test_random_under_vmap(name, fn):
    got = np.asarray(ember.vmap(fn)(KEYS))
    want = np.stack([np.asarray(fn(KEYS[k])) for k in range(len(KEYS))])
    np.testing.assert_array_equal(got, want)
    if name == "permutation":
        assert all(sorted(row) == list(range(6)) for row in got.tolist())


def test_random_keys_on_last_axis_and_shared_key():
    keys_t = np.ascontiguousarray(KEYS.T)                         # (2, 8): batch axis -1
    got = np.asarray(ember.vmap(lambda k: ember.random.uniform(k, (3,)), in_axes=-1)(keys_t))
    want = np.stack([np.asarray(ember.random.uniform(KEYS[k], (3,))) for k in range(8)])
    np.testing.assert_array_equal(got, want)
    # An unbatched key with batched data: every example sees the same draw.
    xs = RNG.standard_normal((N, 3)).astype(np.float32)
    out = np.asarray(ember.vmap(lambda k, x: x + ember.random.normal(k, (3,)),
                                in_axes=(None, 0))(KEYS[0], xs))
    noise = np.asarray(ember.random.normal(KEYS[0], (3,)))
    np.testing.assert_allclose(out, xs + noise, rtol=1e-6)
