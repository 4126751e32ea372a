"""NumPy advanced indexing and JAX's x.at[idx] updates on tracers and Arrays, against NumPy
(np.add.at & co. for duplicate indices) and NumPy emulations of JAX's out-of-bounds rules."""

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.errors import EmberError
from ember.numpy import NonConcreteBooleanIndexError

X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
A = np.array([0, 2, -1], np.int32)
B = np.array([[1, 4], [0, -5]], np.int32)

# (name, index builder from the index arrays a, b)
INDICES = {
    "array": lambda a, b: (a,),
    "array_2d_on_last": lambda a, b: (Ellipsis, b),
    "adjacent_after_slice": lambda a, b: (slice(None), a[:2], B[0]),
    "separated_by_slice": lambda a, b: (b % 3, slice(None), B[1]),
    "int_and_array_separated": lambda a, b: (1, slice(None), a),
    "broadcast_column_row": lambda a, b: (a[:, None], slice(1, 3), a[None, :2] + 2),
    "none_and_slices": lambda a, b: (a[:2], None, slice(None, None, -2)),
    "reversed_then_array": lambda a, b: (slice(None, None, -1), b % 4, 2),
    "new_axis_between": lambda a, b: (a[:2], None, a[1:]),
    "lists": lambda a, b: ([0, 1], [1, 2], [3, 4]),
    "all_three": lambda a, b: (a, a, b[0, 0]),
}


def test_advanced_indexing_under_jit():
    names = list(INDICES)
    outs = ember.jit(lambda x, a, b: [x[INDICES[n](a, b)] for n in names])(X, A, B)
    for n, got in zip(names, outs, strict=True):
        want = X[INDICES[n](A, B)]
        assert got.shape == want.shape, (n, got.shape, want.shape)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=n)


@pytest.mark.parametrize("name", ["array", "separated_by_slice", "lists"])
def test_advanced_indexing_on_arrays(name):
    idx = INDICES[name](A, B)
    got = enp.asarray(X)[idx]
    assert isinstance(got, ember.Array)
    np.testing.assert_array_equal(np.asarray(got), X[idx])


def test_boolean_masks_outside_jit_and_constant_under_jit():
    m2 = X[:, :, 0] % 3 == 0
    m1 = np.array([True, False, True, True])
    x = enp.asarray(X)
    for idx in [(m2,), (X > 30,), (slice(None), m1), (1, m1, slice(None, 2)),
                (enp.asarray(m2),), (Ellipsis, X[0, 0] > 1)]:
        host = tuple(np.asarray(i) if isinstance(i, ember.Array) else i for i in idx)
        np.testing.assert_array_equal(np.asarray(x[idx]), X[host])
    got = ember.jit(lambda x: x[m2])(X)               # a NumPy mask is concrete under jit
    np.testing.assert_array_equal(np.asarray(got), X[m2])


def test_traced_boolean_mask_raises():
    with pytest.raises(NonConcreteBooleanIndexError, match="boolean mask"):
        ember.jit(lambda x: x[x > 3])(X)
    with pytest.raises(IndexError):
        ember.jit(lambda x: x.at[x > 3].set(0.0))(X)
    with pytest.raises(IndexError, match="does not match"):
        enp.asarray(X)[np.ones(4, bool)]


def test_index_errors():
    with pytest.raises(IndexError):
        ember.jit(lambda x: x[np.array([0.5])])(X)
    with pytest.raises(IndexError, match="broadcast"):
        ember.jit(lambda x, a: x[a, np.zeros(2, np.int32)])(X, A)
    with pytest.raises(IndexError, match="out of bounds"):
        ember.jit(lambda x, a: x[a, 9])(X, A)


def test_dynamic_out_of_bounds_get_clamps_or_fills():
    i = np.array([-1, -4, 3, 7, 0], np.int32)
    x = X[:, 0, 0]                                            # (3,)
    f = ember.jit(lambda x, i: (x[i], x.at[i].get(), x.at[i].get(mode="fill"),
                                x.at[i].get(mode="fill", fill_value=-2.0)))
    clamp = x[np.clip(np.where(i < 0, i + 3, i), 0, 2)]
    ok = (i >= -3) & (i < 3)
    fill = np.where(ok, x[np.where(ok, i, 0)], np.nan)
    got = f(x, i)
    np.testing.assert_array_equal(np.asarray(got[0]), clamp)
    np.testing.assert_array_equal(np.asarray(got[1]), clamp)
    np.testing.assert_array_equal(np.asarray(got[2]), fill)
    np.testing.assert_array_equal(np.asarray(got[3]), np.where(ok, fill, -2.0))


def test_scalar_traced_index():
    f = ember.jit(lambda x, i: (x[i], x[i, 1:, i], x.at[i].set(0.0)))
    for i in (0, 2, -1, -3):
        g0, g1, s = f(X, np.int32(i))
        np.testing.assert_array_equal(np.asarray(g0), X[i])
        np.testing.assert_array_equal(np.asarray(g1), X[i, 1:, i])
        want = X.copy()
        want[i] = 0
        np.testing.assert_array_equal(np.asarray(s), want)


# --- x.at[idx] updates --------------------------------------------------------------------

DUP = np.array([0, 2, 2, -1, 0, 2], np.int32)


def test_at_updates_accumulate_duplicates():
    y = np.arange(6 * 4 * 5, dtype=np.float32).reshape(6, 4, 5) % 7 + 1

    def f(x, i, y):
        return (x.at[i].add(y), x.at[i].multiply(y), x.at[i].min(y * 10), x.at[i].max(y * 10),
                x.at[i].subtract(y), x.at[i].divide(y), x.at[i, 1:3].add(1.0),
                x.at[:, i[:2], ::2].add(y[0, :2, :3]), x.at[1, :, i].max(100.0))

    got = ember.jit(f)(X, DUP, y)
    wants = []
    for ufunc, v in [(np.add, y), (np.multiply, y), (np.minimum, y * 10),
                     (np.maximum, y * 10), (np.subtract, y), (np.divide, y)]:
        w = X.copy()
        ufunc.at(w, DUP, v)
        wants.append(w)
    w = X.copy()
    np.add.at(w, (DUP, slice(1, 3)), 1.0)
    wants.append(w)
    w = X.copy()
    np.add.at(w, (slice(None), DUP[:2], slice(None, None, 2)), y[0, :2, :3])
    wants.append(w)
    w = X.copy()
    np.maximum.at(w, (1, slice(None), DUP), 100.0)
    wants.append(w)
    for k, (g, w) in enumerate(zip(got, wants, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, err_msg=str(k))


def test_at_set_and_dropped_out_of_bounds():
    i = np.array([1, -1, 5, -7], np.int32)                     # 5 and -7 are out of bounds
    v = np.array([10, 20, 30, 40], np.int32)
    x = np.arange(4, dtype=np.int32)
    f = ember.jit(lambda x, i, v: (x.at[i].set(v), x.at[i].add(v), x.at[i].set(v, mode="clip")))
    s, a, c = f(x, i, v)
    ws, wa = x.copy(), x.copy()
    for k, val in zip(i, v):
        if -4 <= k < 4:
            ws[k] = val
            wa[k] += val
    np.testing.assert_array_equal(np.asarray(s), ws)
    np.testing.assert_array_equal(np.asarray(a), wa)
    wc = x.copy()
    for k, val in zip(np.clip(np.where(i < 0, i + 4, i), 0, 3), v):
        wc[k] = val
    np.testing.assert_array_equal(np.asarray(c), wc)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.float16, np.bool_])
def test_at_dtypes_on_arrays(dtype):
    x = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    i = np.array([[0, 2], [2, 2]], np.int32)
    v = (np.arange(4).reshape(2, 2) % 2).astype(dtype)
    ex = enp.asarray(x)
    got = ex.at[i, 1].add(v) if dtype != np.bool_ else ex.at[i, 1].max(v)
    w = x.copy()
    (np.add if dtype != np.bool_ else np.logical_or).at(w, (i, 1), v)
    assert got.dtype == w.dtype
    np.testing.assert_array_equal(np.asarray(got), w)
    got = ex.at[1:, ::-2].set(x[1:, ::-2][::-1])
    w = x.copy()
    w[1:, ::-2] = x[1:, ::-2][::-1]
    np.testing.assert_array_equal(np.asarray(got), w)


def test_at_basic_and_masks_and_broadcast_values():
    x = enp.asarray(X)
    m = X[:, :, 0] > 20
    for idx, v in [((1,), 5.0), ((Ellipsis, 0), np.arange(4, dtype=np.float32)),
                   ((m,), -1.0), ((slice(None), None, 2), 3.0), ((), 0.5)]:
        w = X.copy()
        w[idx] = v
        np.testing.assert_array_equal(np.asarray(x.at[idx].set(v)), w, err_msg=repr(idx))
    np.testing.assert_array_equal(np.asarray(x.at[...].add(1.0)), X + 1)


def test_at_zero_size_and_errors():
    e = np.zeros((0, 3), np.float32)
    got = enp.asarray(e).at[np.zeros(0, np.int32)].add(1.0)
    assert got.shape == (0, 3)
    got = enp.asarray(X).at[np.zeros(0, np.int32), 1].set(1.0)
    np.testing.assert_array_equal(np.asarray(got), X)
    with pytest.raises(EmberError, match="cannot update"):
        enp.asarray(X).at[0].set(np.ones(3, np.float32))
    with pytest.raises(EmberError, match="mode"):
        enp.asarray(X).at[0].set(1.0, mode="bogus")


def test_at_float_updates_of_int_arrays_compute_in_the_promoted_type():
    # As JAX: the scatter runs in float32 and the result is cast back, with a FutureWarning
    # (casting the updates first would give 2 + 0 + 0 and 2 * 1).
    x = np.array([2, 2, 3, 5], np.int32)
    i = np.array([0, 0, 3, 1], np.int32)
    f = ember.jit(lambda x, i: (x.at[i].add(0.6), x.at[i].multiply(1.5), x.at[i].set(1.9),
                                x.at[i].min(1.5)))
    with pytest.warns(FutureWarning, match="float32 to dtype=int32"):
        got = f(x, i)
    for g, ufunc, v in zip(got, [np.add, np.multiply], [0.6, 1.5]):
        w = x.astype(np.float32)
        ufunc.at(w, i, np.float32(v))
        assert g.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(g), w.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(got[2]), [1, 1, 3, 1])
    np.testing.assert_array_equal(np.asarray(got[3]), [1, 1, 3, 1])


def test_at_divide_power_and_apply_as_jax():
    x = np.array([2, 4, 3], np.int32)
    xf = np.array([2.0, 3.0, 4.0, 0.5], np.float32)
    i = np.array([0, 0, 2, 9], np.int32)                       # 9 is dropped
    g = ember.jit(lambda x, xf, i: (
        x.at[0].divide(4), x.at[i].power(2), xf.at[i].power(xf[:4]), xf.at[i].divide(2.0),
        xf.at[i].apply(lambda v: v * 3), xf.at[1:3].apply(enp.sin),
        xf.at[i].apply(enp.exp, mode="clip")))(x, xf, i)

    def scattered_ones(like, idx, v):
        d = np.ones(like.shape, np.float32)
        np.multiply.at(d, idx, v)
        return d.astype(like.dtype)

    def applied(a, idx, fn):
        w = a.copy()
        for k in idx:
            w[k] = fn(w[k])
        return w

    ok = i[i < 3]
    wants = [x / scattered_ones(x, [0], 4), x ** scattered_ones(x, ok, 2),
             xf ** scattered_ones(xf, ok, xf[:3]), xf / scattered_ones(xf, ok, 2.0),
             applied(xf, ok, lambda v: v * 3), applied(xf, [1, 2], np.sin),
             applied(xf, np.minimum(i, 3), np.exp)]
    assert g[0].dtype == np.float32 and g[1].dtype == np.int32
    for k, (got, want) in enumerate(zip(g, wants, strict=True)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=str(k))
