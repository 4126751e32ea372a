"""ember.gather / ember.scatter / dynamic_slice ops and take / take_along_axis / put_along_axis,
against NumPy emulations of JAX's documented out-of-bounds semantics."""

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember import lax
from ember.errors import EmberError


def np_gather(x, idx, axes):
    """NumPy emulation of ember.gather: clamp each index, batch dims first."""
    idx = np.asarray(idx)
    batch = idx.shape[:-1]
    rest = [d for d in range(x.ndim) if d not in axes]
    out = np.empty(batch + tuple(x.shape[d] for d in rest), x.dtype)
    for b in np.ndindex(*batch):
        sl = [slice(None)] * x.ndim
        for j, a in enumerate(axes):
            sl[a] = int(np.clip(idx[b + (j,)], 0, x.shape[a] - 1))
        out[b] = x[tuple(sl)]
    return out


def np_scatter(x, idx, upd, axes, kind):
    """NumPy emulation of ember.scatter: out-of-bounds (or negative) updates dropped,
    duplicates applied in order."""
    out = x.copy()
    idx = np.asarray(idx)
    fn = {"set": lambda o, u: u, "add": np.add, "mul": np.multiply, "min": np.minimum,
          "max": np.maximum}[kind]
    for b in np.ndindex(*idx.shape[:-1]):
        sl = [slice(None)] * x.ndim
        ok = True
        for j, a in enumerate(axes):
            i = int(idx[b + (j,)])
            ok &= 0 <= i < x.shape[a]
            sl[a] = i
        if ok:
            out[tuple(sl)] = fn(out[tuple(sl)], upd[b])
    return out


X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5) - 20
I_ROWS = np.array([[2], [0], [-1], [7], [1]], np.int32)          # one negative, one too big
I_PTS = np.array([[[1, 4], [3, 0]], [[-2, 2], [9, 9]]], np.int32)   # axes (1, 0)


@pytest.fixture(scope="module")
def gathered():
    f = ember.jit(lambda x, a, b: (lax.gather(x, a, (0,)), lax.gather(x, b, (1, 0)),
                                   lax.gather(x[:, :, 0].astype(np.int8), a, (0,))))
    return f(X, I_ROWS, I_PTS)


def test_gather_clamps(gathered):
    g0, g1, g2 = gathered
    np.testing.assert_array_equal(np.asarray(g0), np_gather(X, I_ROWS, (0,)))
    np.testing.assert_array_equal(np.asarray(g1), np_gather(X, I_PTS, (1, 0)))
    np.testing.assert_array_equal(np.asarray(g2),
                                  np_gather(X[:, :, 0].astype(np.int8), I_ROWS, (0,)))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_scatter_kinds_drop_out_of_bounds(dtype):
    x = (X[:, 0, :] % 7).astype(dtype)                       # (3, 5)
    idx = np.array([[0], [2], [2], [-1], [3], [0], [2]], np.int32)
    upd = (np.arange(7 * 5).reshape(7, 5) % 5 + 1).astype(dtype)
    kinds = ("add", "mul", "min", "max")
    f = ember.jit(lambda x, i, u: [lax.scatter(x, i, u, (0,), k) for k in kinds])
    for k, got in zip(kinds, f(x, idx, upd), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np_scatter(x, idx, upd, (0,), k),
                                      err_msg=k)


def test_scatter_set_points_and_bool():
    x = np.zeros((4, 3), np.float32)
    idx = np.array([[0, 2], [3, 1], [4, 0], [1, -1]], np.int32)   # unique; two out of bounds
    upd = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    xb = np.zeros((4, 3), bool)
    f = ember.jit(lambda x, xb, i, u: (lax.scatter(x, i, u, (0, 1)),
                                       lax.scatter(xb, i, u > 1.5, (0, 1), "max")))
    got, gotb = f(x, xb, idx, upd)
    np.testing.assert_array_equal(np.asarray(got), np_scatter(x, idx, upd, (0, 1), "set"))
    np.testing.assert_array_equal(np.asarray(gotb),
                                  np_scatter(xb, idx, upd > 1.5, (0, 1), "max"))


def test_scatter_dropped_updates_change_nothing():
    """A dropped update goes to index 0 as one that changes nothing there: the value there
    now for a single set, the combiner's identity otherwise (-0.0 stays -0.0 under add, NaN
    stays under min, bfloat16 and points with one component out of bounds alike)."""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    row = np.array([-1.0, -2.0, -3.0], np.float32)
    set_row = ember.jit(lambda x, i, u: lax.scatter(x, i, u[None], (0,)))
    for i in (1, 0, 4, -1, 100):
        got = set_row(x, np.array([[i]], np.int32), row)
        np.testing.assert_array_equal(np.asarray(got),
                                      np_scatter(x, [[i]], row[None], (0,), "set"), err_msg=i)
    z = np.full((2, 3), -0.0, np.float32)
    z[1, 1] = np.nan
    pts = np.array([[0, 5], [1, 1], [-1, 0]], np.int32)        # (0, 5), (-1, 0) dropped
    upd = np.array([1.0, 2.0, 3.0], np.float32)
    kinds = ("add", "mul", "min", "max")
    f = ember.jit(lambda z, zb, i, u: [lax.scatter(z, i, u, (0, 1), k) for k in kinds] +
                  [lax.scatter(zb, i, u.astype(zb.dtype), (0, 1), "add")])
    zb = z.astype(ml_dtypes.bfloat16)
    *outs, outb = f(z, zb, pts, upd)
    for k, got in zip(kinds, outs, strict=True):
        want = np_scatter(z, pts, upd, (0, 1), k)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=k)
        np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want),
                                      err_msg=k)
    wantb = np_scatter(zb, pts, upd.astype(zb.dtype), (0, 1), "add")
    np.testing.assert_array_equal(np.asarray(outb).astype(np.float32),
                                  wantb.astype(np.float32))
    assert np.signbit(np.asarray(outb).astype(np.float32)[0, 0])


def test_dynamic_slice_and_update_clamp():
    x = X[0]                                                     # (4, 5)
    u = -np.ones((2, 3), np.float32)
    f = ember.jit(lambda x, i, j: (lax.dynamic_slice(x, (i, j), (2, 3)),
                                   lax.dynamic_update_slice(x, u, (i, j)),
                                   lax.dynamic_index_in_dim(x, i, 0, keepdims=False)))
    # JAX's rule: a negative start counts from the end, then the start is clamped
    def wrap(i, d):
        return i + d if i < 0 else i
    for i, j in [(0, 0), (1, 2), (3, 4), (-2, 9), (-9, -1)]:
        ci, cj = min(max(wrap(i, 4), 0), 2), min(max(wrap(j, 5), 0), 2)
        s, w, r = f(x, np.int32(i), np.int32(j))
        np.testing.assert_array_equal(np.asarray(s), x[ci:ci + 2, cj:cj + 3])
        want = x.copy()
        want[ci:ci + 2, cj:cj + 3] = u
        np.testing.assert_array_equal(np.asarray(w), want)
        np.testing.assert_array_equal(np.asarray(r), x[min(max(wrap(i, 4), 0), 3)])
        # the same starts as Python ints (wrapped while tracing)
        np.testing.assert_array_equal(np.asarray(lax.dynamic_slice(x, (i, j), (2, 3))),
                                      x[ci:ci + 2, cj:cj + 3])


def test_zero_size_gather_scatter():
    x = np.zeros((0, 3), np.float32)
    idx = np.zeros((0, 1), np.int32)
    f = ember.jit(lambda x, i: (lax.gather(x, i, (0,)),
                                lax.scatter(x, i, np.zeros((0, 3), np.float32), (0,), "add")))
    g, s = f(x, idx)
    assert g.shape == (0, 3) and s.shape == (0, 3)


def test_bad_gather_raises():
    with pytest.raises(EmberError, match="gather"):
        ember.jit(lambda x: lax.gather(x, np.zeros((2, 1), np.float32), (0,)))(X)


# --- take / take_along_axis / put_along_axis ---------------------------------------------

def np_take_fill(a, ind, axis, fill):
    """JAX's mode="fill": negative indices count from the end once, others out of range
    read fill."""
    n = a.shape[axis]
    ind = np.asarray(ind)
    ok = (ind >= -n) & (ind < n)
    safe = np.where(ok, ind % max(n, 1), 0)
    out = np.take(a, safe, axis=axis)
    mask_shape = [1] * out.ndim
    mask_shape[axis:axis + ind.ndim] = ind.shape
    return np.where(ok.reshape(mask_shape), out, fill)


def test_take_modes():
    a = X[1]                                                     # (4, 5)
    ind = np.array([[0, -1, 4], [7, -6, 2]], np.int32)
    f = ember.jit(lambda a, i: (enp.take(a, i, axis=1), enp.take(a, i, axis=0, mode="clip"),
                                enp.take(a, i, axis=-1, mode="wrap"), enp.take(a, i),
                                enp.take(a, i, axis=1, fill_value=-1.0)))
    t_fill, t_clip, t_wrap, t_flat, t_fv = f(a, ind)
    np.testing.assert_array_equal(np.asarray(t_fill), np_take_fill(a, ind, 1, np.nan))
    np.testing.assert_array_equal(np.asarray(t_clip), np.take(a, ind, axis=0, mode="clip"))
    np.testing.assert_array_equal(np.asarray(t_wrap), np.take(a, ind, axis=1, mode="wrap"))
    np.testing.assert_array_equal(np.asarray(t_flat), np.take(a.ravel(), ind))
    np.testing.assert_array_equal(np.asarray(t_fv), np_take_fill(a, ind, 1, -1.0))


def test_take_int_fill_and_eager():
    a = np.arange(6, dtype=np.int32)
    ind = np.array([1, 6, -1], np.int32)
    got = enp.take(a, ind)
    np.testing.assert_array_equal(np.asarray(got),
                                  np_take_fill(a, ind, 0, np.iinfo(np.int32).min))
    np.testing.assert_array_equal(np.asarray(enp.take(a, [0, 2], mode="clip")),
                                  np.take(a, [0, 2]))


def test_take_along_axis_and_put_along_axis():
    a = X[2]                                                     # (4, 5)
    ind = np.argsort(a % 3, axis=1).astype(np.int32)[:, :3]      # (4, 3)
    ind0 = np.array([[3, 0, 1, 2, 0]], np.int32)                 # (1, 5), broadcast
    vals = np.float32(-7)
    f = ember.jit(lambda a, i, j: (enp.take_along_axis(a, i, axis=1),
                                   enp.take_along_axis(a, j, axis=0),
                                   enp.put_along_axis(a, i, vals, axis=1, inplace=False)))
    t1, t0, p1 = f(a, ind, ind0)
    np.testing.assert_array_equal(np.asarray(t1), np.take_along_axis(a, ind, axis=1))
    np.testing.assert_array_equal(np.asarray(t0), np.take_along_axis(a, ind0, axis=0))
    want = a.copy()
    np.put_along_axis(want, ind, vals, axis=1)
    np.testing.assert_array_equal(np.asarray(p1), want)


def test_take_errors():
    with pytest.raises(NotImplementedError):
        enp.take(np.arange(3), np.array([0], np.int32), mode="raise")
    with pytest.raises(EmberError, match="axis"):
        enp.take(np.arange(3), np.array([0], np.int32), axis=2)
    with pytest.raises(EmberError, match="inplace"):
        enp.put_along_axis(np.arange(3), np.array([0], np.int32), 1, axis=0)


def test_dynamic_slice_with_a_narrow_negative_start():
    # A traced int8 start -128 counts from the end of a 300-long axis: 172 (the sum had
    # wrapped in int8, and the clamped start read element 0).
    x = np.arange(300, dtype=np.float32)
    f = ember.jit(lambda x, i: (lax.dynamic_slice(x, (i,), (2,)),
                                lax.dynamic_update_slice(x, -x[:2], (i,))))
    got, upd = f(x, np.int8(-128))
    np.testing.assert_array_equal(np.asarray(got), x[172:174])
    want = x.copy()
    want[172:174] = -x[:2]
    np.testing.assert_array_equal(np.asarray(upd), want)
