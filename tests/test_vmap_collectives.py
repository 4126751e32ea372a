"""Collectives over named vmap axes (``vmap(..., axis_name=...)`` with ``lax.psum``, ``pmean``,
``pmax``, ``pmin``, ``all_gather``, ``axis_index``, ``axis_size``) against NumPy reductions
over the mapped axis, and JAX's vmap where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.numpy as enp
from ember.errors import UnboundAxisError
from ember.frontend.vmap import VmapError

rng = np.random.default_rng(3)
X = rng.standard_normal((4, 3)).astype(np.float32)
N = rng.integers(-50, 50, (4, 3)).astype(np.int32)


def test_reductions_over_the_mapped_axis():
    f = ember.vmap(lambda x: {"sum": lax.psum(x, "i"), "mean": lax.pmean(x, "i"),
                              "max": lax.pmax(x, "i"), "min": lax.pmin(x, "i"),
                              "centered": x - lax.pmean(x, "i")}, axis_name="i")
    got = f(X)
    for key, want in (("sum", X.sum(0)), ("mean", X.mean(0)), ("max", X.max(0)),
                      ("min", X.min(0))):
        np.testing.assert_allclose(got[key], np.broadcast_to(want, X.shape), rtol=1e-6,
                                   atol=1e-6, err_msg=key)
    np.testing.assert_allclose(got["centered"], X - X.mean(0), rtol=1e-6, atol=1e-6)


def test_mapped_axis_in_the_middle_and_ints():
    x3 = rng.standard_normal((2, 5, 3)).astype(np.float32)
    got = ember.vmap(lambda x: x / lax.psum(x * x, "b"), in_axes=1, out_axes=1,
                     axis_name="b")(x3)
    np.testing.assert_allclose(got, x3 / (x3 * x3).sum(1, keepdims=True), rtol=1e-5)
    s, m = ember.vmap(lambda n: (lax.psum(n, "i"), lax.pmean(n, "i")), axis_name="i")(N)
    assert s.dtype == np.int32 and m.dtype == np.float32          # pmean of ints: floats
    np.testing.assert_array_equal(s, np.broadcast_to(N.sum(0), N.shape))
    np.testing.assert_allclose(m, np.broadcast_to(N.mean(0), N.shape), rtol=1e-6)


def test_shared_operands_and_the_axis_size():
    w = rng.standard_normal(3).astype(np.float32)
    got = ember.vmap(lambda x, w: (lax.psum(w, "i"), lax.pmax(w, "i"), lax.psum(1, "i"),
                                   x * lax.axis_size("i")), in_axes=(0, None),
                     axis_name="i")(X, w)
    np.testing.assert_allclose(got[0], np.broadcast_to(4 * w, (4, 3)), rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.broadcast_to(w, (4, 3)))
    np.testing.assert_array_equal(got[2], [4, 4, 4, 4])
    np.testing.assert_allclose(got[3], X * 4)


def test_collective_results_may_be_unmapped():
    # psum is the same in every example, so out_axes=None is allowed for it (as in JAX) ...
    got = ember.vmap(lambda x: lax.psum(x, "i"), axis_name="i", out_axes=None)(X)
    np.testing.assert_allclose(got, X.sum(0), rtol=1e-6)
    # ... but not for a value that still differs per example.
    with pytest.raises(VmapError, match="out_axes is None"):
        ember.vmap(lambda x: x - lax.psum(x, "i"), axis_name="i", out_axes=None)(X)


@pytest.mark.parametrize("axis,tiled", [(0, False), (1, False), (-1, False), (0, True),
                                        (1, True)])
def test_all_gather(axis, tiled):
    x3 = rng.standard_normal((4, 2, 3)).astype(np.float32)      # 4 examples of (2, 3)
    got = ember.vmap(lambda x: lax.all_gather(x, "i", axis=axis, tiled=tiled),
                     axis_name="i")(x3)
    gathered = np.concatenate(list(x3), axis) if tiled else np.stack(list(x3), axis)
    np.testing.assert_array_equal(got, np.broadcast_to(gathered, (4,) + gathered.shape))
    w = x3[0]
    shared = ember.vmap(lambda x, w: lax.all_gather(w, "i", axis=axis, tiled=tiled),
                        in_axes=(0, None), axis_name="i", out_axes=None)(x3, w)
    want = np.concatenate([w] * 4, axis) if tiled else np.stack([w] * 4, axis)
    np.testing.assert_array_equal(shared, want)


def test_axis_index():
    got = ember.vmap(lambda x: x * 0 + lax.axis_index("i"), axis_name="i", in_axes=1)(X)
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(3.0)[:, None], (3, 4)))
    assert ember.vmap(lambda x: lax.axis_index("i"), axis_name="i")(X).dtype == np.int32


def test_nested_axes():
    y = rng.standard_normal((2, 3, 5)).astype(np.float32)      # "i" of 2, "j" of 3

    def per_example(v):
        return {"j": lax.psum(v, "j"), "i": lax.psum(v, "i"), "ij": lax.psum(v, ("i", "j")),
                "mean_ij": lax.pmean(v, ("j", "i")), "gather_i": lax.all_gather(v, "i"),
                "index": lax.axis_index("i") * 10 + lax.axis_index("j"),
                "size": lax.axis_size(("i", "j"))}
    got = ember.jit(ember.vmap(ember.vmap(per_example, axis_name="j"), axis_name="i"))(y)
    full = (2, 3, 5)
    np.testing.assert_allclose(got["j"], np.broadcast_to(y.sum(1, keepdims=True), full),
                               rtol=1e-5)
    np.testing.assert_allclose(got["i"], np.broadcast_to(y.sum(0, keepdims=True), full),
                               rtol=1e-5)
    np.testing.assert_allclose(got["ij"], np.broadcast_to(y.sum((0, 1)), full), rtol=1e-5)
    np.testing.assert_allclose(got["mean_ij"], np.broadcast_to(y.mean((0, 1)), full),
                               rtol=1e-5)
    np.testing.assert_array_equal(got["gather_i"], np.broadcast_to(
        np.moveaxis(y, 0, 1)[:, None], (3, 2, 2, 5)).swapaxes(0, 1))
    np.testing.assert_array_equal(got["index"], 10 * np.arange(2)[:, None] + np.arange(3))
    np.testing.assert_array_equal(got["size"], np.full((2, 3), 6))


def test_jit_inside_and_control_flow():
    @ember.jit
    def normalize(x):
        return x / lax.psum(enp.abs(x), "i")
    got = ember.vmap(normalize, axis_name="i")(X)
    np.testing.assert_allclose(got, X / np.abs(X).sum(0), rtol=1e-5)

    def branchy(x, flag):
        # A shared predicate: the branch holding the collective still sees the named axis.
        return lax.cond(flag, lambda: lax.psum(x, "i"), lambda: lax.pmax(x, "i"))
    for flag in (True, False):
        got = ember.vmap(branchy, in_axes=(0, None), axis_name="i")(X, flag)
        want = X.sum(0) if flag else X.max(0)
        np.testing.assert_allclose(got, np.broadcast_to(want, X.shape), rtol=1e-5)

    def loop(x):
        # Repeated centering and rescaling: every iteration reads the whole batch.
        def body(_, v):
            v = v - lax.pmean(v, "i")
            return v / lax.pmax(enp.abs(v), "i")
        return lax.fori_loop(0, 3, body, x)
    want = X.copy()
    for _ in range(3):
        want = want - want.mean(0)
        want = want / np.abs(want).max(0)
    np.testing.assert_allclose(ember.vmap(loop, axis_name="i")(X), want, rtol=1e-5, atol=1e-6)


def test_batch_norm_example():
    """The usual use: batch statistics inside a per-example function."""
    def bn(x, scale):
        mu = lax.pmean(x, "batch")
        var = lax.pmean((x - mu) ** 2, "batch")
        return scale * (x - mu) / enp.sqrt(var + 1e-5)
    scale = rng.uniform(0.5, 2, 3).astype(np.float32)
    got = ember.jit(ember.vmap(bn, in_axes=(0, None), axis_name="batch"))(X, scale)
    want = scale * (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_exchanges():
    """ppermute/pshuffle/psum_scatter/all_to_all against the exchange written out in NumPy."""
    x = rng.standard_normal((4, 6)).astype(np.float32)
    pairs = [(0, 2), (1, 0), (2, 3), (3, 1)]
    got = ember.vmap(lambda v: lax.ppermute(v, "i", pairs), axis_name="i")(x)
    want = np.empty_like(x)
    for src, dst in pairs:
        want[dst] = x[src]
    np.testing.assert_array_equal(got, want)
    perm = [3, 0, 2, 1]
    got = ember.vmap(lambda v: lax.pshuffle(v, "i", perm), axis_name="i")(x)
    np.testing.assert_array_equal(got, x[perm])
    sq = x[:, :4]
    got = ember.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(sq)
    np.testing.assert_allclose(got, sq.sum(0), rtol=1e-6)
    z = rng.standard_normal((4, 2, 8)).astype(np.float32)
    got = ember.vmap(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                     axis_name="i")(z)
    np.testing.assert_allclose(got, z.sum(0).reshape(2, 4, 2).transpose(1, 0, 2), rtol=1e-6)
    y = rng.standard_normal((4, 4, 3)).astype(np.float32)
    got = ember.vmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")(y)
    np.testing.assert_array_equal(got, y.transpose(1, 2, 0))      # out[i][:, s] = y[s, i]
    got = ember.vmap(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), axis_name="i")(z)
    want = np.stack([np.concatenate([z[s, :, 2 * i:2 * i + 2] for s in range(4)], 0)
                     for i in range(4)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        ember.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(y), y.transpose(1, 0, 2))
    with pytest.raises(ember.errors.TracingError, match="once as a source"):
        ember.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 0)]), axis_name="i")(x)
    with pytest.raises(ember.errors.TracingError, match="must equal the size 4"):
        ember.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(x)


def test_errors():
    with pytest.raises(UnboundAxisError, match="unbound axis name: 'k'.*'i'"):
        ember.vmap(lambda x: lax.psum(x, "k"), axis_name="i")(X)
    with pytest.raises(UnboundAxisError, match="unbound axis name"):
        ember.jit(lambda x: lax.axis_index("i"))(X)
    with pytest.raises(NameError):                      # JAX's error class too
        lax.pmean(X, "i")
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        ember.vmap(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2, 3]]),
                   axis_name="i")(X)
    with pytest.raises(VmapError, match="axis_name"):
        ember.vmap(lambda x: x, axis_name=3)
    with pytest.raises(ember.errors.TracingError, match="out of range"):
        ember.vmap(lambda x: lax.all_gather(x, "i", axis=3), axis_name="i")(X)


def test_matches_jax():
    jax = pytest.importorskip("jax")
    y = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def f(m, v):
        return (m.lax.psum(v, "j") * m.lax.pmax(v, "i") - m.lax.pmean(v, ("i", "j"))
                + m.lax.axis_index("j"), m.lax.all_gather(v, "i", axis=0, tiled=True),
                m.lax.ppermute(v, "j", [(0, 1), (1, 2), (2, 0)]),
                m.lax.psum_scatter(v[:2], "i"), m.lax.all_to_all(v[:3], "j", 0, 0))

    class M:
        lax = lax
    want = jax.vmap(jax.vmap(lambda v: f(jax, v), axis_name="j"), axis_name="i")(y)
    got = ember.vmap(ember.vmap(lambda v: f(M, v), axis_name="j"), axis_name="i")(y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
