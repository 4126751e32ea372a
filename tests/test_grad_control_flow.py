"""Differentiation of control flow (cond, switch, fori_loop, scan, map, while_loop) against
JAX's jvp/grad/vjp of the same programs written with jax.lax, and against central finite
differences in float64; JAX's error for reverse mode through a while loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import loop_kernels_in

import ember
import ember.numpy as enp
from ember.dialects.control_flow import WHILE_MESSAGE, ReverseModeError

RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 0.9, size=4).astype(np.float32)
XS = RNG.normal(size=(6, 4)).astype(np.float32)
W = RNG.normal(size=4).astype(np.float32) * 0.5
E = (enp, ember.lax)
J = (jnp, jax.lax)


def close(got, want, tol=2e-5):
    got_leaves = ember.tree_util.tree_leaves(got)
    want_leaves = jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def both(f, *args, argnums=0):
    """grad and jvp (tangent: the arguments themselves) of ``f`` in ember and in JAX."""
    close(ember.grad(lambda *a: f(E, *a), argnums=argnums)(*args),
          jax.grad(lambda *a: f(J, *a), argnums=argnums)(*args))
    close(ember.jvp(lambda *a: f(E, *a), args, args),
          jax.jvp(lambda *a: f(J, *a), args, args))


# --- cond / switch --------------------------------------------------------------------------

def cond_fn(m, x, w):
    np_, lax = m
    # The branches need different residuals (sin/cos of x, x**2; none for the linear one):
    # each returns both branches' residuals, zeros for the other's.
    y, k = lax.cond(np_.sum(x) > 2.0, lambda: (np_.sin(x) * w, 1), lambda: (2.0 * x ** 3, 2))
    z = lax.cond(np_.sum(x) > 2.0, lambda v: v * 3.0, lambda v: v, y)
    return np_.sum(z * k)


@pytest.mark.parametrize("scale", [1.0, 2.5], ids=["false_branch", "true_branch"])
def test_cond(scale):
    both(cond_fn, X * np.float32(scale), W, argnums=(0, 1))


def switch_fn(m, x, i):
    np_, lax = m
    return np_.sum(lax.switch(i, [np_.sin, lambda v: v * v, lambda v: np_.exp(-v) * 2.0], x))


def test_switch_every_branch_and_clamping():
    g = ember.jit(ember.grad(lambda x, i: switch_fn(E, x, i)))
    for i in (-1, 0, 1, 2, 5):
        close(g(X, np.int32(i)), jax.grad(lambda x, i: switch_fn(J, x, i))(X, np.int32(i)))


# --- loops ----------------------------------------------------------------------------------

def fori_fn(m, x, w):
    np_, lax = m
    return np_.sum(lax.fori_loop(0, 5, lambda i, c: np_.sin(c) * w + x * i, x))


def test_fori_loop_static_bounds():
    both(fori_fn, X, W, argnums=(0, 1))


def scan_fn(m, c0, xs, w, reverse):
    np_, lax = m

    def step(carry, x):
        c, n = carry
        c = np_.tanh(c * w + x)
        return (c, n + 1), (c * x, n)
    (c, n), (ys, ns) = lax.scan(step, (c0, 0), xs, reverse=reverse)
    return np_.sum(c) + np_.sum(ys * np_.arange(6.0)[:, None]) + n


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carry_and_ys(reverse):
    args = (X, XS, W)
    close(ember.grad(lambda *a: scan_fn(E, *a, reverse), argnums=(0, 1, 2))(*args),
          jax.grad(lambda *a: scan_fn(J, *a, reverse), argnums=(0, 1, 2))(*args))
    if reverse:
        close(ember.jvp(lambda *a: scan_fn(E, *a, reverse), args, args),
              jax.jvp(lambda *a: scan_fn(J, *a, reverse), args, args))


def test_lax_map_and_vjp():
    def f(m, xs, w):
        np_, lax = m
        return lax.map(lambda x: np_.sin(x * w), xs)
    y, vjp = ember.vjp(lambda xs, w: f(E, xs, w), XS, W)
    yj, vjpj = jax.vjp(lambda xs, w: f(J, xs, w), XS, W)
    close(y, yj)
    close(vjp(XS), vjpj(XS))


def while_fn(m, x, w):
    np_, lax = m
    # A data-dependent trip count: double until the sum passes 10.
    out, _ = lax.while_loop(lambda c: np_.sum(c[0]) < 10.0,
                            lambda c: (c[0] * 2.0 + np_.sin(w), c[1] + 1), (x, 0))
    return np_.sum(out ** 2)


def dynamic_fori_fn(m, x, n):
    np_, lax = m
    return np_.sum(lax.fori_loop(0, n, lambda i, c: np_.sin(c) + x, x))


def test_while_and_dynamic_fori_forward_mode():
    close(ember.jvp(lambda x, w: while_fn(E, x, w), (X, W), (XS[0], XS[1])),
          jax.jvp(lambda x, w: while_fn(J, x, w), (X, W), (XS[0], XS[1])))
    f = ember.jit(lambda x, t, n: ember.jvp(lambda x: dynamic_fori_fn(E, x, n), (x,), (t,)))
    for n in (np.int32(0), np.int32(3)):
        close(f(X, W, n), jax.jvp(lambda x, n=n: dynamic_fori_fn(J, x, n), (X,), (W,)))


def test_reverse_mode_through_a_while_loop_is_jax_error():
    with pytest.raises(ReverseModeError, match="lax.while_loop or lax.fori_loop") as e:
        ember.grad(lambda x, w: while_fn(E, x, w), argnums=1)(X, W)
    assert WHILE_MESSAGE in str(e.value) and "test_grad_control_flow.py" in str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match="fori_loop with static start/stop"):
        ember.grad(lambda x, n: dynamic_fori_fn(E, x, n))(X, np.int32(3))
    # No tangent reaches the loop: reverse mode is fine (as in JAX).
    f = lambda m, x: m[1].while_loop(lambda c: c < 3, lambda c: c + 1, 0) * m[0].sum(x)  # noqa
    close(ember.grad(lambda x: f(E, x))(X), jax.grad(lambda x: f(J, x))(X))


def test_vmapped_while_loop_forward_mode():
    """A while loop vmapped with a per-lane condition becomes an ember.map of per-lane loops
    (before differentiation): its JVP is one map computing values and tangents."""
    ks = np.array([1.0, 3.0, 20.0, 0.5], np.float32)

    def f(m, x):
        np_, lax = m
        return m_vmap(m)(lambda k, x: lax.while_loop(
            lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0, c[1] * np_.cos(c[1])), (k, x))[1],
        )(ks, x)

    def m_vmap(m):
        return ember.vmap if m is E else jax.vmap
    close(ember.jvp(lambda x: f(E, x), (X,), (W,)), jax.jvp(lambda x: f(J, x), (X,), (W,)))
    assert "ember.map" in ember.jit(lambda x: ember.jvp(lambda x: f(E, x), (x,), (x,))).lower(
        X).as_text("optimized")
    with pytest.raises(ReverseModeError, match="lax.while_loop"):
        ember.grad(lambda x: f(E, x).sum())(X)


# --- rows of a carried matrix at the loop index ---------------------------------------------
# Each step reads and writes rows of the carry chosen by the loop index (lu_core's pattern:
# masked selects of whole rows, a pivot swap, elimination below the pivot). Reverse mode
# stacks the masks of every select as residuals: four bool ys of one type, of which IREE gave
# the second and fourth one buffer until ember-split-loop-inits started them apart
# (det's gradient came back zero, the swap's cotangents in the wrong rows).
MAT = RNG.normal(size=(4, 3)).astype(np.float32)
WEIGHTS = RNG.normal(size=(4, 3)).astype(np.float32)


def _rows(m):
    np_, _ = m
    r = np_.arange(4)[:, None]
    return r, lambda c, mask: np_.sum(np_.where(mask, c, 0.0), axis=0)


def masked_swap(m, i, c):          # rows i and 3 - i swapped (the reduced lu_core bug)
    np_, _ = m
    r, pick = _rows(m)
    row_i, row_p = pick(c, r == i), pick(c, r == 3 - i)
    return np_.where(r == i, row_p[None], np_.where(r == 3 - i, row_i[None], c)) * 1.5


def pivot_swap(m, i, c):           # rows i and the argmax of |c[i:, 0]| swapped, then scaled
    np_, _ = m
    r, pick = _rows(m)
    p = np_.argmax(np_.where(r[:, 0] >= i, np_.abs(c[:, 0]), -1.0))
    row_i, row_p = pick(c, r == i), pick(c, r == p)
    c = np_.where(r == i, row_p[None], np_.where(r == p, row_i[None], c))
    return np_.where(r == i, np_.sin(c), c)


def update_slice(m, i, c):         # row i replaced by a function of itself (dynamic slices)
    np_, lax = m
    row = lax.dynamic_slice(c, (i, 0), (1, 3))
    return lax.dynamic_update_slice(c, np_.tanh(row * 2.0) + row * row, (i, 0))


def at_set(m, i, c):               # row i set from the row below (wrapping), .at[i].set
    np_, _ = m
    return c.at[i].set(c[(i + 1) % 4] * c[i] + 0.5)


def read_at(m, i, c):              # row i read by dynamic_slice into every row
    np_, lax = m
    return c * 0.9 + np_.sin(lax.dynamic_index_in_dim(c, i, 0, keepdims=True))


def elimination(m, i, c):          # lu_core's step: pivot swap, then rows below eliminated
    np_, _ = m
    r, pick = _rows(m)
    col = r[:, 0]
    p = np_.argmax(np_.where(col >= i, np_.abs(c[:, 0] + c[:, 1] * (i % 2)), -1.0))
    row_i, row_p = pick(c, r == i), pick(c, r == p)
    c = np_.where(r == i, row_p[None], np_.where(r == p, row_i[None], c))
    piv = np_.sum(np_.where(col == i, c[:, i % 3], 0.0))
    low = np_.where(col > i, c[:, i % 3] / piv, 0.0)
    return c - low[:, None] * row_p[None]


@pytest.mark.parametrize("body", [masked_swap, pivot_swap, update_slice, at_set, read_at,
                                  elimination])
def test_fori_loop_rows_at_the_index(body):
    def f(m, c, w):
        np_, lax = m
        return np_.sum(lax.fori_loop(0, 4, lambda i, c: body(m, i, c), c) * w)
    both(f, MAT, WEIGHTS, argnums=(0, 1))


def test_det_gradient_through_lu(both_x64):
    """ember.numpy.linalg.det's gradient is reverse mode through lu_core's loop (JAX's is its
    closed-form rule: det(a) inv(a).T); slogdet's as well."""
    a = np.random.default_rng(3).normal(size=(4, 4))
    close(ember.grad(enp.linalg.det)(a), jax.grad(jnp.linalg.det)(a), tol=1e-10)
    close(ember.grad(lambda a: enp.linalg.slogdet(a)[1])(a),
          jax.grad(lambda a: jnp.linalg.slogdet(a)[1])(a), tol=1e-10)


def test_four_bool_ys_read_by_a_reverse_scan():
    """The root cause without differentiation: a scan's four stacked masks, read back by a
    reverse scan, against NumPy."""
    def f(x):
        r = enp.arange(4)[:, None]

        def fwd(c, i):
            return c, (r == i, r == 3 - i, r == 3 - i, r == i)
        _, masks = ember.lax.scan(fwd, x, enp.arange(4))

        def back(c, ms):
            a, b, c2, d = ms
            return enp.where(a, c * 2.0, c) + enp.where(b, 1.0, 0.0) - \
                enp.where(c2, 0.5, 0.0) + enp.where(d, 3.0, 0.0), None
        return ember.lax.scan(back, x, masks, reverse=True)[0]

    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    want = x.copy()
    for i in reversed(range(4)):
        a = np.arange(4)[:, None] == i
        b = np.arange(4)[:, None] == 3 - i
        want = np.where(a, want * 2, want) + b * 1.0 - b * 0.5 + a * 3.0
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x)), want)


# --- nesting and composition ----------------------------------------------------------------

def nested_fn(m, x, xs):
    np_, lax = m

    def step(c, x_row):     # cond in scan
        c = lax.cond(np_.sum(c) > 0.0, lambda: np_.sin(c) * x_row, lambda: c * c + x_row)
        return c, np_.sum(c)
    scanned = lambda: lax.scan(step, x, xs)  # noqa: E731  (scan in cond)
    c, ys = lax.cond(np_.sum(x) > 0.0, scanned, lambda: (x * 2.0, np_.zeros(6, x.dtype)))
    return np_.sum(c * c) + np_.sum(ys)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["scan_branch", "plain_branch"])
def test_nested_scan_in_cond_and_cond_in_scan(sign):
    args = (X * np.float32(sign), XS)
    close(ember.grad(lambda *a: nested_fn(E, *a), argnums=(0, 1))(*args),
          jax.grad(lambda *a: nested_fn(J, *a), argnums=(0, 1))(*args))
    if sign < 0:
        close(ember.jvp(lambda *a: nested_fn(E, *a), args, args),
              jax.jvp(lambda *a: nested_fn(J, *a), args, args))


def test_nested_forward_mode_through_the_scan_branch():
    # (IREE 3.13's runtime failed on it, and on the same program written without derivatives,
    # until ember-split-loop-inits put the loop's results behind barriers in the branch)
    args = (X, XS)
    close(ember.jvp(lambda *a: nested_fn(E, *a), args, args),
          jax.jvp(lambda *a: nested_fn(J, *a), args, args))


def rnn_loss(m, params, xs):
    np_, lax = m
    w, u, b = params

    def step(h, x):
        h = np_.tanh(h @ w + x @ u + b)
        return h, np_.sum(h)
    h, ys = lax.scan(step, np_.zeros(w.shape[0], w.dtype), xs)
    return np_.sum(h ** 2) + np_.mean(ys)


def test_rnn_scan_128_steps_matches_jax_grad():
    """Issue 36's benchmark row 4: an RNN through scan of 128 steps."""
    rng = np.random.default_rng(1)
    params = (rng.normal(size=(16, 16)).astype(np.float32) * 0.3,
              rng.normal(size=(8, 16)).astype(np.float32) * 0.3,
              rng.normal(size=16).astype(np.float32) * 0.1)
    xs = rng.normal(size=(128, 8)).astype(np.float32)
    g = ember.jit(ember.value_and_grad(lambda p, x: rnn_loss(E, p, x)))(params, xs)
    gj = jax.value_and_grad(lambda p, x: rnn_loss(J, p, x))(params, xs)
    close(g, gj, tol=1e-4)


def test_vmap_of_grad_and_grad_under_jit():
    per_example = ember.vmap(ember.grad(lambda w, x: scan_fn(E, x[0], x, w, False)),
                             in_axes=(None, 0))
    batch = np.stack([XS, XS[::-1] * 0.5])
    close(per_example(W, batch),
          jax.vmap(jax.grad(lambda w, x: scan_fn(J, x[0], x, w, False)), in_axes=(None, 0))(
              W, batch))
    inner = ember.jit(lambda x, w: fori_fn(E, x, w))
    close(ember.jit(ember.grad(inner, argnums=1))(X, W),
          jax.grad(lambda x, w: fori_fn(J, x, w), argnums=1)(X, W))


def test_second_order_through_scan_and_cond():
    def f(m, x):
        np_, lax = m
        c, _ = lax.scan(lambda c, w: (lax.cond(c > 0.0, lambda: np_.sin(c * w),
                                                lambda: c * w), None), x, W)
        return c
    x = np.float32(0.7)
    close(ember.grad(ember.grad(lambda x: f(E, x)))(x),
          jax.grad(jax.grad(lambda x: f(J, x)))(x), tol=1e-4)


# --- finite differences in float64 ----------------------------------------------------------

def _scan_and_conds(m, x, xs, w):
    np_, lax = m
    c, ys = lax.scan(lambda c, r: (lax.cond(np_.sum(c) > 1.0, lambda: np_.sin(c) * r,
                                            lambda: c * c + r), np_.sum(c * r)), x, xs)
    return scan_fn(m, x, xs, w, True) + cond_fn(m, x, w) + np_.sum(c) + np_.sum(ys)


@pytest.mark.parametrize("f", [_scan_and_conds, lambda m, x, xs, w: fori_fn(m, x, w)],
                         ids=["scans_and_conds", "fori_loop"])
def test_finite_differences_float64(both_x64, f):
    """JAX's check_grads method: a random tangent, the JVP against central differences of
    the float64 function, and the VJP against the JVP (<vjp(u), v> = <u, jvp(v)>)."""
    rng = np.random.default_rng(2)
    args = (rng.uniform(0.2, 0.9, 4), rng.normal(size=(6, 4)), rng.normal(size=4) * 0.5)
    v = tuple(rng.normal(size=np.shape(a)) for a in args)
    eps = 1e-6
    plus = f(J, *[a + eps * t for a, t in zip(args, v)])
    minus = f(J, *[a - eps * t for a, t in zip(args, v)])
    y, t = ember.jvp(lambda *a: f(E, *a), args, v)
    assert np.asarray(t).dtype == np.float64
    np.testing.assert_allclose(np.asarray(t), (plus - minus) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(y), f(J, *args), rtol=1e-12)
    grads = ember.grad(lambda *a: f(E, *a), argnums=(0, 1, 2))(*args)
    np.testing.assert_allclose(sum(np.vdot(np.asarray(g), vi) for g, vi in zip(grads, v)),
                               np.asarray(t), rtol=1e-10)


def test_grad_of_two_scans_from_one_carry():
    # (IREE 3.13 failed to compile it while ember-split-loop-inits started the stacked
    # residuals of the forward scans from constant fills: see _distinct_empties)
    def f(m, x, xs, w):
        np_, lax = m
        c, ys = lax.scan(lambda c, r: (np_.tanh(c * w + r), c * r), x, xs)
        d, _ = lax.scan(lambda c, r: (np_.tanh(c * w + r), None), x, xs)
        return np_.sum(c) + np_.sum(ys) + np_.sum(d)
    close(ember.grad(lambda *a: f(E, *a), argnums=(0, 1, 2))(X, XS, W),
          jax.grad(lambda *a: f(J, *a), argnums=(0, 1, 2))(X, XS, W))


def test_custom_jvp_and_checkpoint_around_control_flow():
    """A custom_jvp function inside a scan body; a checkpointed scan and cond, whose backward
    pass recomputes them (or, saving everything, differentiates copies of them)."""
    @ember.custom_jvp
    def f_e(x):
        return enp.sin(x)
    f_e.defjvp(lambda p, t: (enp.sin(p[0]), 2.0 * t[0]))

    @jax.custom_jvp
    def f_j(x):
        return jnp.sin(x)
    f_j.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * t[0]))

    def g(m, f, x, xs):
        np_, lax = m
        c, ys = lax.scan(lambda c, r: (f(c * r), c * r), x * 1.5, xs)
        z = lax.cond(np_.sum(c) > 0, lambda: np_.cos(c) * 2.0, lambda: c * c)
        return np_.sum(z) + np_.sum(ys ** 2)
    close(ember.grad(lambda x, xs: g(E, f_e, x, xs), argnums=(0, 1))(X, XS),
          jax.grad(lambda x, xs: g(J, f_j, x, xs), argnums=(0, 1))(X, XS))
    for pe, pj in [(None, None), (ember.checkpoint_policies.everything_saveable,
                                  jax.checkpoint_policies.everything_saveable)]:
        fe = ember.checkpoint(lambda *a: g(E, enp.sin, *a), policy=pe)
        fj = jax.checkpoint(lambda *a: g(J, jnp.sin, *a), policy=pj)
        close(ember.grad(fe, argnums=(0, 1))(X, XS), jax.grad(fj, argnums=(0, 1))(X, XS))


def unrolled_scans_fn(m, x, xs):
    # scan's unroll (3 of 6 steps: two loop steps; 4: a loop step and a loop of 2 left over;
    # True: no loop), forward and reversed, each with its ys used
    np_, lax = m
    total = 0.0
    for unroll in (3, 4, True):
        for reverse in (False, True):
            c, ys = lax.scan(lambda c, r: (np_.sin(c) * r + c, c * r), x, xs, reverse=reverse,
                             unroll=unroll)
            total = total + np_.sum(c) + np_.sum(ys * ys)
    return total


def test_unrolled_scans():
    both(unrolled_scans_fn, X, XS, argnums=(0, 1))


def _rnn(m, lax_, reverse, w, xs):
    def step(h, x):
        h = m.tanh(h @ w + x)
        return h, h.sum()
    h, ys = lax_.scan(step, m.zeros(8, np.float32), xs, reverse=reverse)
    return m.mean(h * h) + m.sum(ys * m.arange(ys.shape[0], dtype=np.float32))


def _counted(m, lax_, lo, hi, w, xs):
    return m.sum(lax_.fori_loop(lo, hi, lambda i, h: m.tanh(h @ w + xs[i % 4]),
                                m.ones(8, np.float32)) ** 2)


@pytest.mark.parametrize("reverse", [False, True])
def test_loop_kernels_as_jax(reverse):
    """An RNN's scan of 8 lanes and its backward pass (a scan too) each run as one kernel
    (ember-loop-kernels): values and gradients are JAX's."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((8, 8)) / 3).astype(np.float32)
    xs = rng.standard_normal((30, 8)).astype(np.float32)

    def fun(m, lax_):
        return lambda w, xs: _rnn(m, lax_, reverse, w, xs)
    lowered = ember.jit(ember.value_and_grad(fun(enp, ember.lax), argnums=(0, 1))).lower(w, xs)
    assert loop_kernels_in(lowered) == 2
    got = lowered.compile()(w, xs)
    want = jax.value_and_grad(fun(jnp, jax.lax), argnums=(0, 1))(w, xs)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("case", [
    ("scan", 24, 8, False), ("scan", 20, 4, True), ("scan", 17, 1, False),
    ("for", (3, 35), 8, None), ("for", (0, 18), 2, None)],
    ids=["scan_24", "reversed_20", "scan_17", "for_3_35", "for_0_18"])
def test_unrolled_loops_as_jax(case, config_value):
    """ember-unroll-scans runs k steps of a long loop with a small step in each step of its
    host loop (the backward pass's scan too): values and gradients are JAX's, and the
    loops of the optimized program have ``n / k`` steps (a length with no power of two up
    to 8 dividing it stays rolled). Loop kernels off: these steps would each run as one."""
    config_value("loop_kernels", False)
    kind, n, k, reverse = case
    rng = np.random.default_rng(4)
    w = (rng.standard_normal((8, 8)) / 3).astype(np.float32)
    if kind == "scan":
        xs = rng.standard_normal((n, 8)).astype(np.float32)

        def fun(m, lax_):
            return lambda w, xs: _rnn(m, lax_, reverse, w, xs)
        steps = [f"length = {n // k} :"]
    else:
        xs = rng.standard_normal((4, 8)).astype(np.float32)

        def fun(m, lax_):
            return lambda w, xs: _counted(m, lax_, *n, w, xs)
        lo, hi = n
        # (reverse mode differentiates a for of constant bounds as a scan)
        steps = [f"length = {(hi - lo) // k} :"]
        forward = ember.jit(fun(enp, ember.lax)).lower(w, xs)
        assert f"value = dense<{lo + (hi - lo) // k}>" in forward.as_text("optimized")
        np.testing.assert_allclose(np.asarray(forward.compile()(w, xs)),
                                   np.asarray(fun(jnp, jax.lax)(w, jnp.asarray(xs))), rtol=2e-5)
    lowered = ember.jit(ember.value_and_grad(fun(enp, ember.lax), argnums=(0, 1))).lower(w, xs)
    text = lowered.as_text("optimized")
    for s in steps:
        assert s in text, s
    got = lowered.compile()(w, xs)
    want = jax.value_and_grad(fun(jnp, jax.lax), argnums=(0, 1))(w, xs)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-5)
