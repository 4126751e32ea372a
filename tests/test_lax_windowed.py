"""ember.lax's convolutions and reduce_window against direct NumPy loops (and JAX where it is
installed): layouts, strides, padding, both dilations, feature and batch groups, dtypes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
import ember.lax as lax
from ember.errors import TracingError

rng = np.random.default_rng(5)


def _pads(padding, in_shape, window, strides):
    if isinstance(padding, str):
        return lax.padtype_to_pads(in_shape, window, strides, padding)
    return padding


def _dilate_pad(x, dil, pads, fill=0.0):
    """x (lead..., spatial...) dilated by ``dil`` and padded by ``pads`` (negative crops)."""
    nd = len(dil)
    lead = x.shape[:x.ndim - nd]
    shape = lead + tuple((n - 1) * d + 1 if n else 0 for n, d in zip(x.shape[-nd:], dil))
    out = np.full(shape, fill, x.dtype)
    out[(...,) + tuple(slice(None, None, d) for d in dil)] = x
    for i, (lo, hi) in enumerate(pads):
        ax = x.ndim - nd + i
        if lo > 0 or hi > 0:
            widths = [(0, 0)] * x.ndim
            widths[ax] = (max(lo, 0), max(hi, 0))
            out = np.pad(out, widths, constant_values=fill)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(-min(lo, 0), out.shape[ax] - (-min(hi, 0)))
        out = out[tuple(idx)]
    return out


def ref_conv(lhs, rhs, strides, padding, lhs_dil=None, rhs_dil=None, dn=None, fg=1, bg=1):
    """The definition: out[n, o, p] = sum over the group's features c and offsets k of
    x[n, c, p * stride + k * rhs_dil] * w[o, c, k], on the dilated, padded input."""
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dn)
    x, w = lhs.transpose(dn.lhs_spec), rhs.transpose(dn.rhs_spec)
    nd = x.ndim - 2
    lhs_dil, rhs_dil = lhs_dil or (1,) * nd, rhs_dil or (1,) * nd
    span = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dil)]
    pads = _pads(padding, x.shape[2:], span, strides)
    xp = _dilate_pad(x.astype(np.float64), lhs_dil, pads)
    out_sp = [max((n - s) // st + 1, 0) for n, s, st in zip(xp.shape[2:], span, strides)]
    n, o, i = x.shape[0] // bg, w.shape[0], w.shape[1]
    out = np.zeros((n, o, *out_sp))
    for b, oc in itertools.product(range(n), range(o)):
        g = oc // (o // max(fg, bg))
        src = g * n + b if bg > 1 else b
        chans = slice(g * i, (g + 1) * i) if fg > 1 else slice(None)
        for p in itertools.product(*map(range, out_sp)):
            for k in itertools.product(*map(range, w.shape[2:])):
                at = tuple(pp * st + kk * d for pp, st, kk, d in zip(p, strides, k, rhs_dil))
                out[(b, oc) + p] += xp[(src, chans) + at] @ w[(oc, slice(None)) + k]
    return out.transpose(np.argsort(dn.out_spec))


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CONV_CASES = {
    "nchw_same": (_f32(2, 3, 7, 6), _f32(4, 3, 3, 2), dict(window_strides=(1, 1),
                                                           padding="SAME")),
    "nchw_valid_strided": (_f32(2, 3, 7, 6), _f32(4, 3, 3, 2), dict(window_strides=(2, 3),
                                                                    padding="VALID")),
    "nhwc_dilations": (_f32(2, 9, 8, 3), _f32(3, 2, 3, 5), dict(
        window_strides=(2, 1), padding=[(1, 2), (-1, 1)], lhs_dilation=(2, 1),
        rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "odd_layouts": (_f32(5, 2, 6, 3), _f32(3, 2, 4, 3), dict(
        window_strides=(1, 2), padding="SAME_LOWER",
        dimension_numbers=("HNWC", "OHWI", "CWNH"))),
    "1d": (_f32(2, 11, 4), _f32(3, 4, 2), dict(window_strides=(3,), padding="SAME",
                                               dimension_numbers=("NWC", "WIO", "NWC"))),
    "3d": (_f32(1, 2, 4, 5, 3), _f32(2, 2, 2, 3, 2), dict(window_strides=(1, 2, 1),
                                                          padding="VALID")),
    "depthwise": (_f32(2, 3, 6, 6), _f32(6, 1, 3, 3), dict(
        window_strides=(1, 1), padding="SAME", feature_group_count=3)),
    # Channel multipliers 3 and 5: IREE's tiling refused the lowering's old floordiv map.
    "depthwise_multiplier_3": (_f32(1, 8, 4, 4), _f32(24, 1, 2, 2), dict(
        window_strides=(1, 1), padding="VALID", feature_group_count=8)),
    "grouped_multiplier_5": (_f32(2, 4, 5, 5), _f32(20, 1, 3, 3), dict(
        window_strides=(2, 1), padding="SAME", feature_group_count=4)),
    "grouped": (_f32(2, 4, 5, 5), _f32(6, 2, 2, 2), dict(
        window_strides=(1, 1), padding="VALID", feature_group_count=2)),
    "batch_groups": (_f32(4, 2, 6, 5), _f32(6, 2, 3, 2), dict(
        window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    "empty_output": (_f32(1, 2, 2, 2), _f32(3, 2, 3, 3), dict(window_strides=(1, 1),
                                                              padding="VALID")),
}


def _ref_kwargs(kw):
    return dict(strides=kw["window_strides"], padding=kw["padding"],
                lhs_dil=kw.get("lhs_dilation"), rhs_dil=kw.get("rhs_dilation"),
                dn=kw.get("dimension_numbers"), fg=kw.get("feature_group_count", 1),
                bg=kw.get("batch_group_count", 1))


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv_general_dilated_matches_the_definition(name):
    x, w, kw = CONV_CASES[name]
    got = ember.jit(lambda x, w: lax.conv_general_dilated(x, w, **kw))(x, w)
    want = ref_conv(x, w, **_ref_kwargs(kw))
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_conv_dtypes_and_preferred_element_type():
    xi = rng.integers(-5, 5, (1, 2, 5, 5)).astype(np.int32)
    wi = rng.integers(-3, 3, (2, 2, 3, 3)).astype(np.int32)
    got = lax.conv(xi, wi, (1, 1), "SAME")
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), ref_conv(xi, wi, (1, 1), "SAME"))
    x8, w8 = xi.astype(np.int8), wi.astype(np.int8)
    got = lax.conv(x8, w8, (1, 1), "VALID", preferred_element_type=np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), ref_conv(xi, wi, (1, 1), "VALID"))
    xh, wh = _f32(1, 2, 5, 5).astype(np.float16), _f32(2, 2, 3, 3).astype(np.float16)
    got = lax.conv(xh, wh, (1, 1), "SAME")
    assert got.dtype == np.float16
    np.testing.assert_allclose(np.asarray(got, np.float64), ref_conv(xh, wh, (1, 1), "SAME"),
                               rtol=2e-2, atol=2e-2)


def test_conv_with_general_padding_and_transpose():
    x, w = _f32(1, 2, 6, 5), _f32(3, 2, 3, 3)
    got = lax.conv_with_general_padding(x, w, (1, 2), [(2, 0), (1, 1)], (2, 1), (1, 2))
    want = ref_conv(x, w, (1, 2), [(2, 0), (1, 1)], (2, 1), (1, 2))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    # conv_transpose: a convolution of the stride-dilated input with JAX's padding rule; for
    # 'VALID' the output is (in - 1) * stride + kernel, each input pixel spread over it.
    xt, wt = _f32(1, 4, 3, 2), _f32(3, 2, 2, 5)
    got = lax.conv_transpose(xt, wt, (2, 2), "VALID")
    assert got.shape == (1, 9, 6, 5)
    want = np.zeros((1, 9, 6, 5))
    for i, j in itertools.product(range(4), range(3)):
        want[0, 2 * i:2 * i + 3, 2 * j:2 * j + 2] += np.einsum(
            "c,hwco->hwo", xt[0, i, j], wt[::-1, ::-1])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_conv_general_dilated_patches():
    x = _f32(2, 3, 5, 4)
    got = np.asarray(lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "SAME"))
    pads = lax.padtype_to_pads((5, 4), (2, 3), (1, 2), "SAME")
    xp = _dilate_pad(x, (1, 1), pads)
    assert got.shape == (2, 3 * 6, 5, 2)
    for c, (i, j) in itertools.product(range(3), itertools.product(range(2), range(3))):
        np.testing.assert_array_equal(got[:, c * 6 + i * 3 + j], xp[:, c, i:i + 5, j:j + 4:2])


def test_conv_matches_jax():
    jax = pytest.importorskip("jax")
    for name, (x, w, kw) in CONV_CASES.items():
        want = np.asarray(jax.lax.conv_general_dilated(x, w, **kw))
        run = ember.jit(lambda x, w, kw=kw: lax.conv_general_dilated(x, w, **kw))
        got = np.asarray(run(x, w))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
    xt, wt = _f32(1, 4, 3, 2), _f32(3, 2, 2, 5)
    for padding in ("SAME", "VALID", [(1, 0), (0, 2)]):
        for tk in (False, True):
            w_ = wt if not tk else _f32(3, 2, 5, 2)
            want = jax.lax.conv_transpose(xt, w_, (2, 1), padding, transpose_kernel=tk)
            got = lax.conv_transpose(xt, w_, (2, 1), padding, transpose_kernel=tk)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4,
                                       atol=1e-4, err_msg=f"{padding} {tk}")


def test_conv_errors_name_the_problem():
    x, w = _f32(1, 4, 5, 5), _f32(2, 4, 3, 3)
    with pytest.raises(TracingError, match="one dtype"):
        lax.conv(x, w.astype(np.float16), (1, 1), "SAME")
    with pytest.raises(TracingError, match="feature_group_count"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3)
    with pytest.raises(TracingError, match="padding must be"):
        lax.conv(x, w, (1, 1), "FULL")
    with pytest.raises(TracingError, match="lhs_dilation"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(TracingError, match="window_strides"):
        lax.conv(x, w, (1,), "SAME")
    with pytest.raises(TracingError, match="same spatial"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                 dimension_numbers=("NCHW", "OIHX", "NCHW"))


# --- reduce_window -------------------------------------------------------------------------

def ref_reduce_window(x, init, op, window, strides, padding, base=None, wdil=None):
    """XLA's definition: init combined with the window's elements of the operand; padding
    and the holes of a base dilation are not elements."""
    nd = x.ndim
    base, wdil = base or (1,) * nd, wdil or (1,) * nd
    span = [(k - 1) * d + 1 for k, d in zip(window, wdil)]
    dilated = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    pads = _pads(padding, dilated, span, strides)
    xp = _dilate_pad(x, base, pads, fill=init)
    real = _dilate_pad(np.ones(x.shape, bool), base, pads, fill=False)
    out_sp = [max((n - s) // st + 1, 0) for n, s, st in zip(xp.shape, span, strides)]
    out = np.full(out_sp, init, x.dtype)
    for p in itertools.product(*map(range, out_sp)):
        for k in itertools.product(*map(range, window)):
            at = tuple(pp * st + kk * d for pp, st, kk, d in zip(p, strides, k, wdil))
            if real[at]:
                out[p] = op(out[p], xp[at])
    return out


REDUCE_WINDOW_CASES = {
    "maxpool": (lax.max, -np.inf, np.maximum, ((1, 1, 2, 2), (1, 1, 2, 2), "VALID")),
    "avgpool_same": (lax.add, 0.0, np.add, ((1, 3, 3, 1), (1, 2, 2, 1), "SAME")),
    "min_pairs": (lax.min, np.inf, np.minimum, ((2, 1, 2, 2), (1, 1, 1, 3),
                                                [(1, 0), (0, 0), (2, -1), (0, 1)])),
    "dilated": (lax.add, 1.0, np.add, ((1, 2, 2, 1), (1, 1, 2, 1), "VALID", (1, 2, 1, 1),
                                       (1, 1, 2, 1))),
    "product": (lax.mul, 1.0, np.multiply, ((1, 1, 3, 3), (1, 1, 1, 1), "SAME")),
}


@pytest.mark.parametrize("name", sorted(REDUCE_WINDOW_CASES))
def test_reduce_window_matches_loops(name):
    op, init, np_op, args = REDUCE_WINDOW_CASES[name]
    x = (rng.standard_normal((2, 3, 6, 5)) * 0.5 + 1).astype(np.float32)
    got = ember.jit(lambda x: lax.reduce_window(x, init, op, *args))(x)
    want = ref_reduce_window(x, np.float32(init), np_op, *args)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_reduce_window_pytree_and_ints():
    # (value, index) pairs: a windowed argmax with a user computation over a tuple.
    x = rng.integers(0, 9, (3, 8)).astype(np.int32)
    idx = np.broadcast_to(np.arange(8, dtype=np.int32), x.shape)

    def better(a, b):
        take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return ember.numpy.where(take_b, b[0], a[0]), ember.numpy.where(take_b, b[1], a[1])
    vals, where = lax.reduce_window((x, idx), (np.int32(-1), np.int32(99)), better, (1, 3),
                                    (1, 2), "VALID")
    for r, c in itertools.product(range(3), range(3)):
        window = x[r, 2 * c:2 * c + 3]
        assert vals[r, c] == window.max()
        assert where[r, c] == 2 * c + int(np.argmax(window))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduce_window_sums_of_halves_accumulate_in_float32(dtype):
    """A bfloat16 window of 64 values of 0.1 summed to 6.16 in bfloat16 steps; in float32
    it is the float64 sum rounded once."""
    dt = ember.dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    x = (np.full((3, 64), 0.1) + np.arange(3)[:, None]).astype(dt)
    for add in (lax.add, ember.numpy.add):
        got = lax.reduce_window(x, 0.0, add, (1, 64), (1, 1), "VALID")
        assert got.dtype == dt
        want = x.astype(np.float64).sum(1, keepdims=True).astype(dt)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_reduce_window_errors():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(TracingError, match="window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1,))
    with pytest.raises(TracingError, match="window_strides"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (0, 1))
    with pytest.raises(TracingError, match="elementwise"):
        lax.reduce_window(x, 0.0, lambda a, b: (a + b).sum(), (2, 2), (1, 1))


def test_reduce_window_matches_jax():
    jax = pytest.importorskip("jax")
    x = (rng.standard_normal((2, 3, 6, 5)) * 0.5 + 1).astype(np.float32)
    for name, (op, init, _, args) in REDUCE_WINDOW_CASES.items():
        jop = {lax.max: jax.lax.max, lax.add: jax.lax.add, lax.min: jax.lax.min,
               lax.mul: jax.lax.mul}[op]
        want = jax.lax.reduce_window(x, np.float32(init), jop, *args)
        got = lax.reduce_window(x, init, op, *args)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_vmap_of_conv_with_shared_and_per_example_kernels():
    """A shared kernel folds the batch into N; per-example kernels become feature groups."""
    x, w = _f32(5, 2, 3, 7, 6), _f32(5, 4, 3, 3, 2)        # 5 examples of NCHW / OIHW
    kw = dict(window_strides=(2, 1), padding="SAME", rhs_dilation=(1, 2))
    conv = lambda x, w: lax.conv_general_dilated(x, w, **kw)  # noqa: E731
    shared = ember.jit(ember.vmap(conv, in_axes=(0, None)))(x, w[0])
    per = ember.jit(ember.vmap(conv, in_axes=(1, 0), out_axes=2))(x.swapaxes(0, 1), w)
    for e in range(5):
        np.testing.assert_allclose(np.asarray(shared[e]), ref_conv(x[e], w[0], **_ref_kwargs(
            dict(kw))), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(per[:, :, e]), ref_conv(x[e], w[e], **_ref_kwargs(
            dict(kw))), rtol=1e-5, atol=1e-5)
