"""vmap of cond/switch/while_loop/fori_loop/scan/map: batched results equal the per-example
results (a Python loop of the jitted per-example function, or NumPy), stacked."""

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember import lax
from ember.backends import cpu
from ember.backends.statistics import program_statistics

F32 = np.float32
I32 = np.int32


def _stack(per_example, args, in_axes, n, out_axis=0):
    """Per-example outputs (a tuple of arrays, or one array) stacked along ``out_axis``."""
    outs = []
    for k in range(n):
        ex = [a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, in_axes)]
        out = per_example(*ex)
        outs.append(out if isinstance(out, tuple) else (out,))
    stacked = tuple(np.stack([np.asarray(o[i]) for o in outs], axis=out_axis)
                    for i in range(len(outs[0])))
    return stacked if len(stacked) > 1 else stacked[0]


def _check(got, want, rtol=1e-5):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)


# --- cond / switch --------------------------------------------------------------------------

def _cond_fn(x, y):
    # The predicate depends on x; y is read by the branches directly (a closure).
    return lax.cond(x.sum() > 0, lambda: x * 2 + y, lambda: -x)


def _cond_np(x, y):
    return x * 2 + y if x.sum() > 0 else -x


@pytest.mark.parametrize("in_axes", [(0, None), (1, 0)])
def test_cond_batched_predicate(rng, in_axes):
    n = 6
    x = rng.standard_normal((n, 3) if in_axes[0] == 0 else (3, n)).astype(F32)
    y = rng.standard_normal(3 if in_axes[1] is None else (n, 3)).astype(F32)
    f = ember.jit(ember.vmap(_cond_fn, in_axes=in_axes))
    _check(f(x, y), _stack(_cond_np, (x, y), in_axes, n))
    # A batched predicate is a select over both branches (no ember.cond left).
    text = f.lower(x, y).as_text("optimized")
    assert "ember.select" in text and "ember.cond" not in text


def _cond_shared_pred(p, x, w):
    # Batched operand in one branch only: the results must agree on the batch dim.
    return lax.cond(p, lambda v: v * w, lambda v: w + 1, x)


_vcond_shared = ember.jit(ember.vmap(_cond_shared_pred, in_axes=(None, 1, None),
                                     out_axes=1))


def test_cond_unbatched_predicate(rng):
    x = rng.standard_normal((3, 5)).astype(F32)
    w = rng.standard_normal(3).astype(F32)
    for p in (True, False):
        want = _stack(lambda p_, x_, w_: x_ * w_ if p_ else w_ + 1, (p, x, w),
                      (None, 1, None), 5, out_axis=1)
        _check(_vcond_shared(np.bool_(p), x, w), want)
    # An unbatched predicate stays a real branch.
    text = _vcond_shared.lower(np.bool_(True), x, w).as_text("optimized")
    assert "ember.cond" in text and "ember.select" not in text


def _switch_fn(i, x):
    return lax.switch(i, [lambda v: v + 1, lambda v: v * 10, lambda v: enp.sin(v)], x)


def test_switch_batched_index(rng):
    i = np.array([-1, 0, 1, 2, 5, 1], I32)
    x = rng.standard_normal((6, 4)).astype(F32)
    fns = [lambda v: v + 1, lambda v: v * 10, np.sin]
    want = np.stack([fns[min(max(k, 0), 2)](v) for k, v in zip(i, x)])
    _check(ember.vmap(_switch_fn)(i, x), want)


# --- while_loop -----------------------------------------------------------------------------

def _collatz(n):
    def body(c):
        m, k = c
        m = lax.cond(m % 2 == 0, lambda: m // 2, lambda: 3 * m + 1)
        return m, k + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


def _collatz_py(n):
    k = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return np.int32(k)


_vcollatz = ember.jit(ember.vmap(_collatz))


def test_while_batched_condition():
    # Lanes need different trip counts (0 for n=1). The loop is scalar code per lane (with a
    # cond inside): an ember.map whose lanes each run their own loop in one dispatch.
    n = np.array([1, 2, 3, 6, 7, 27, 97], I32)
    _check(_vcollatz(n), np.array([_collatz_py(int(v)) for v in n], I32))
    lowered = _vcollatz.lower(n)
    assert "ember.map" in lowered.as_text("optimized")
    assert "ember.reduce_or" not in lowered.as_text("optimized")
    stats = program_statistics(lowered.as_text("linalg"), cpu.compiler_flags())
    assert stats.dispatch_count == 1


def _lanes(x, k, s):
    """Scalar code per lane: a uint32 counter, a bool flipped each step, a cond and a
    fori_loop in the body, a value read from outside (``s``)."""
    def cond(c):
        v, i, flag = c
        return (v > s) & (i < k)

    def body(c):
        v, i, flag = c
        v = lax.cond(flag, lambda: v * 0.5, lambda: v - 1.0)
        v = lax.fori_loop(0, 2, lambda j, u: u + 0.25 * j, v)
        return v, i + np.uint32(1), enp.logical_not(flag)
    return lax.while_loop(cond, body, (x, np.uint32(0), True))


def _lanes_py(x, k, s):
    v, i, flag = F32(x), 0, True
    while v > s and i < k:
        v = v * F32(0.5) if flag else v - F32(1.0)
        v = v + F32(0.0) + F32(0.25)
        i, flag = i + 1, not flag
    return F32(v), np.uint32(i), np.bool_(flag)


@pytest.mark.parametrize("in_axes", [(0, 0, None), (0, None, 0), (None, 0, 0)])
def test_while_per_lane_equals_a_python_loop(rng, in_axes):
    n = 9
    x = rng.uniform(-2, 40, n).astype(F32)
    k = rng.integers(0, 12, n).astype(np.uint32)
    s = rng.uniform(-1, 3, n).astype(F32)
    args = [a if ax == 0 else a[0] for a, ax in zip((x, k, s), in_axes)]
    f = ember.jit(ember.vmap(_lanes, in_axes=in_axes))
    _check(f(*args), _stack(_lanes_py, args, in_axes, n))
    assert "ember.map" in f.lower(*args).as_text("optimized")


def test_while_per_lane_nested_and_under_vmap_of_jit(rng):
    # Pairwise (x by the inner vmap, k by the outer): a map of a map, over a 5x4 grid.
    x = rng.uniform(0, 30, 4).astype(F32)
    k = rng.integers(0, 9, 5).astype(np.uint32)
    s = F32(1.5)
    f = ember.jit(ember.vmap(ember.vmap(_lanes, in_axes=(0, None, None)),
                             in_axes=(None, 0, None)))
    want = tuple(np.stack([np.stack([_lanes_py(a, b, s)[i] for a in x]) for b in k])
                 for i in range(3))
    _check(f(x, k, s), want)
    text = f.lower(x, k, s).as_text("optimized")
    assert text.count('"ember.map"') == 1 and "tensor<5x4xf32>" in text
    # vmap of a jitted per-example function, outside jit: the ember.call is inlined first.
    g = ember.vmap(ember.jit(_lanes), in_axes=(0, 0, None))
    _check(g(x, k[:4], s), _stack(_lanes_py, (x, k[:4], s), (0, 0, None), 4))


def test_while_batched_condition_on_vectors_freezes_lanes(rng):
    # The condition reduces a per-example vector: no scalar code per lane, so the loop runs
    # while any lane's condition holds and lanes that are done stay frozen.
    def grow(x, lim):
        return lax.while_loop(lambda v: v.sum() < lim, lambda v: v * 1.5 + 0.1, x)

    def grow_np(x, lim):
        while x.sum() < lim:
            x = x * F32(1.5) + F32(0.1)
        return x

    x = rng.uniform(0.1, 1, (6, 3)).astype(F32)
    lim = np.array([0.5, 3, 10, 40, 2, 100], F32)
    f = ember.jit(ember.vmap(grow))
    _check(f(x, lim), _stack(grow_np, (x, lim), (0, 0), 6))
    text = f.lower(x, lim).as_text("optimized")
    assert "ember.reduce_or" in text and "ember.map" not in text


_MAP_OK = """
func.func @f(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %0 = "ember.map"(%x, %s) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "ember.mul"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("old, new, message", [
    (None, None, None),
    ("%b: tensor<f32>)", "%b: tensor<f32>, %c: tensor<f32>)", "block arguments"),
    ('"ember.mul"(%a, %b)', '"ember.mul"(%a, %s)', "reads a value from outside"),
    ('"ember.yield"(%1) : (tensor<f32>) -> ()', '"ember.yield"() : () -> ()', "yields"),
    ("tensor<f32>) -> tensor<4xf32>", "tensor<3xf32>) -> tensor<4xf32>", "different shapes"),
])
def test_map_verifier(old, new, message, verify):
    """ember-verify checks a map's region against its operands and results."""
    verify(_MAP_OK if old is None else _MAP_OK.replace(old, new), message)


def _halve_until(x, lim):
    # Unbatched condition (a counter against a shared bound), batched carry.
    def body(c):
        i, v = c
        return i + 1, v * 0.5 + enp.cos(v)
    return lax.while_loop(lambda c: c[0] < lim, body, (0, x))[1]


def test_while_unbatched_condition(rng):
    x = rng.standard_normal((4, 5)).astype(F32)
    lim = np.int32(3)
    f = ember.jit(ember.vmap(_halve_until, in_axes=(1, None), out_axes=1))
    jf = ember.jit(_halve_until)
    _check(f(x, lim), _stack(jf, (x, lim), (1, None), 5, out_axis=1))
    text = f.lower(x, lim).as_text("optimized")
    assert "ember.while" in text and "ember.reduce_or" not in text


# --- fori_loop ------------------------------------------------------------------------------

def _fori_capture(x, s):
    # The carry starts unbatched and becomes batched through the captured x.
    return lax.fori_loop(0, 4, lambda i, c: c * s + x * i, enp.zeros(3, F32))


def _fori_capture_np(x, s):
    c = np.zeros(3, F32)
    for i in range(4):
        c = c * s + x * F32(i)
    return c


@pytest.mark.parametrize("in_axes", [(0, None), (1, 0)])
def test_fori_loop_unbatched_bounds(rng, in_axes):
    n = 5
    x = rng.standard_normal((n, 3) if in_axes[0] == 0 else (3, n)).astype(F32)
    s = F32(0.5) if in_axes[1] is None else rng.uniform(0.1, 1, n).astype(F32)
    f = ember.jit(ember.vmap(_fori_capture, in_axes=in_axes))
    _check(f(x, s), _stack(_fori_capture_np, (x, s), in_axes, n))


def _fori_bounds(lo, hi, x):
    return lax.fori_loop(lo, hi, lambda i, c: c * 1.5 + i, x)


def _fori_bounds_np(lo, hi, x):
    for i in range(lo, hi):
        x = x * F32(1.5) + F32(i)
    return x


def test_fori_loop_batched_bounds(rng):
    lo = np.array([0, 2, 3, 5, 1], I32)
    hi = np.array([4, 2, 6, 1, 3], I32)
    x = rng.standard_normal((5, 2)).astype(F32)
    f = ember.jit(ember.vmap(_fori_bounds, in_axes=(0, 0, 0)))
    _check(f(lo, hi, x), _stack(_fori_bounds_np, (lo, hi, x), (0, 0, 0), 5))
    # Only the upper bound batched, the carry shared.
    f2 = ember.jit(ember.vmap(_fori_bounds, in_axes=(None, 0, None)))
    _check(f2(I32(1), hi, x[0]), _stack(_fori_bounds_np, (I32(1), hi, x[0]),
                                        (None, 0, None), 5))


# --- scan / map -----------------------------------------------------------------------------

def _scan_fn(c0, xs, w):
    def step(c, x):
        c = enp.tanh(c * w + x)
        return c, c.sum() + x
    return lax.scan(step, c0, xs, reverse=True)


def _scan_np(c0, xs, w):
    c, ys = c0, [None] * len(xs)
    for t in reversed(range(len(xs))):
        c = np.tanh(c * w + xs[t])
        ys[t] = c.sum() + xs[t]
    return c, np.stack(ys)


@pytest.mark.parametrize("in_axes", [(None, 0, None), (0, 1, 0)])
def test_scan(rng, in_axes):
    n, length = 4, 5
    c0 = rng.standard_normal(3 if in_axes[0] is None else (n, 3)).astype(F32)
    shape = [length, 3]
    shape.insert(in_axes[1], n)
    xs = rng.standard_normal(shape).astype(F32)
    w = rng.standard_normal(3 if in_axes[2] is None else (n, 3)).astype(F32)
    f = ember.jit(ember.vmap(_scan_fn, in_axes=in_axes))
    _check(f(c0, xs, w), _stack(_scan_np, (c0, xs, w), in_axes, n), rtol=1e-4)


def test_scan_unbatched_xs_batched_carry(rng):
    # xs shared; only the carry is batched, so ys are batched through it.
    c0 = rng.standard_normal((4, 3)).astype(F32)
    xs = rng.standard_normal((5, 3)).astype(F32)
    w = rng.standard_normal(3).astype(F32)
    f = ember.vmap(_scan_fn, in_axes=(0, None, None), out_axes=(0, 1))
    c, ys = _stack(_scan_np, (c0, xs, w), (0, None, None), 4)
    _check(f(c0, xs, w), (c, np.moveaxis(ys, 0, 1)), rtol=1e-4)


def test_map(rng):
    xs = rng.standard_normal((3, 4, 5)).astype(F32)
    f = ember.vmap(lambda x: lax.map(lambda r: r.max() - r, x), in_axes=2)
    want = np.stack([xs[:, :, k].max(axis=1, keepdims=True) - xs[:, :, k]
                     for k in range(5)])
    _check(f(xs), want)


# --- composition ----------------------------------------------------------------------------

def test_nested_vmap_cond(rng):
    # Pairwise: x batched by the inner vmap, y by the outer one.
    x = rng.standard_normal((4, 3)).astype(F32)
    y = rng.standard_normal((5, 3)).astype(F32)
    f = ember.jit(ember.vmap(ember.vmap(_cond_fn, in_axes=(0, None)), in_axes=(None, 0)))
    want = np.stack([np.stack([_cond_np(a, b) for a in x]) for b in y])
    _check(f(x, y), want)


def test_nested_vmap_while_in_scan():
    # A while loop with a batched condition inside a scan body, vmapped twice.
    def f(n, m):
        def step(c, k):
            return c + _collatz(k + n), c
        return lax.scan(step, 0, m)

    n = np.array([1, 4, 6], I32)
    m = np.array([[1, 2, 5], [3, 4, 8]], I32)
    got = ember.jit(ember.vmap(ember.vmap(f, in_axes=(0, None)), in_axes=(None, 0)))(n, m)

    def ref(n_, m_):
        c, ys = 0, []
        for k in m_:
            ys.append(c)
            c += int(_collatz_py(int(k + n_)))
        return np.int32(c), np.array(ys, I32)
    want = tuple(np.stack([np.stack([ref(a, b)[i] for a in n]) for b in m]) for i in range(2))
    _check(got, want)


def test_vmap_of_jit(rng):
    # vmap of a jitted per-example function (the ember.call is inlined, then batched).
    x = rng.standard_normal((6, 3)).astype(F32)
    y = rng.standard_normal(3).astype(F32)
    jf = ember.jit(_cond_fn)
    _check(ember.vmap(jf, in_axes=(0, None))(x, y), _stack(jf, (x, y), (0, None), 6))
