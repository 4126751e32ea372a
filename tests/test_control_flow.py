"""ember.lax structured control flow against plain Python loops and ifs on NumPy."""

import re

import numpy as np
import pytest
from helpers import count_compiles, loop_kernels_in

import ember
import ember.numpy as enp
from ember import lax
from ember.errors import ConcretizationError, TracingError, UnexpectedTracerError

F32 = np.float32


# --- cond / switch ------------------------------------------------------------------------

@ember.jit
def _cond_pytree(p, x, y):
    # Branches take operands and return a pytree; y is closed over from the outer trace.
    return lax.cond(p, lambda a: {"s": a.sum() + y, "v": a * 2},
                    lambda a: {"s": a.max() - y, "v": -a}, x)


def test_cond_pytree_and_closure(rng):
    x = rng.standard_normal(5).astype(F32)
    y = F32(0.5)
    for p in (True, False):
        out = _cond_pytree(np.bool_(p), x, y)
        want_s = x.sum() + y if p else x.max() - y
        want_v = x * 2 if p else -x
        np.testing.assert_allclose(np.asarray(out["s"]), want_s, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(out["v"]), want_v, rtol=1e-6)


_switch = ember.jit(lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: v * 10,
                                                 lambda v: v - 100], x))


@pytest.mark.parametrize("i", [-3, 0, 1, 2, 7])
def test_switch_clamps_index(i):
    x = np.arange(4, dtype=np.int32)
    want = [x + 1, x * 10, x - 100][min(max(i, 0), 2)]
    np.testing.assert_array_equal(np.asarray(_switch(np.int32(i), x)), want)


def test_cond_eager_on_numpy():
    x = np.arange(3, dtype=F32)
    out = lax.cond(np.bool_(False), lambda a: a + 1, lambda a: a * 3, x)
    np.testing.assert_array_equal(np.asarray(out), x * 3)


def test_cond_integer_predicate_counts_as_nonzero():
    f = ember.jit(lambda n, x: lax.cond(n, lambda: x, lambda: -x))
    x = np.ones(2, F32)
    np.testing.assert_array_equal(np.asarray(f(np.int32(5), x)), x)
    np.testing.assert_array_equal(np.asarray(f(np.int32(0), x)), -x)


# --- loops --------------------------------------------------------------------------------

def _collatz_py(n):
    steps, evens = 0, 0
    while n != 1:
        if n % 2 == 0:
            n, evens = n // 2, evens + 1
        else:
            n = 3 * n + 1
        steps += 1
    return steps, evens


@ember.jit
def _collatz(n):
    def body(c):
        n, steps, evens = c
        n, evens = lax.cond(n % 2 == 0, lambda: (n // 2, evens + 1), lambda: (3 * n + 1, evens))
        return n, steps + 1, evens
    _, steps, evens = lax.while_loop(lambda c: c[0] != 1, body, (n, 0, 0))
    return steps, evens


@pytest.mark.parametrize("n", [1, 6, 27])
def test_nested_cond_in_while(n):
    steps, evens = _collatz(np.int32(n))
    assert (int(steps), int(evens)) == _collatz_py(n)


@ember.jit
def _fori_static(x):
    return lax.fori_loop(0, 5, lambda i, acc: acc * 0.5 + x[i], enp.zeros((), x.dtype))


@ember.jit
def _fori_dynamic(lo, hi, x):
    # i is a traced int32; the weak int init h promotes to f32 as in JAX.
    return lax.fori_loop(lo, hi, lambda i, c: (c[0] + i * x, c[1] + 1, c[2] + 0.5),
                         (enp.zeros(2, np.float32), 0, 0))


def test_fori_loop_static_bounds(rng):
    x = rng.standard_normal(5).astype(F32)
    acc = F32(0)
    for i in range(5):
        acc = acc * F32(0.5) + x[i]
    np.testing.assert_allclose(np.asarray(_fori_static(x)), acc, rtol=1e-6)


@pytest.mark.parametrize("lo,hi", [(2, 7), (0, 0), (5, 3)])
def test_fori_loop_dynamic_bounds(lo, hi):
    x = np.array([1.0, -2.0], F32)
    acc = np.zeros(2, F32)
    for i in range(lo, hi):
        acc = acc + i * x
    out, count, half = _fori_dynamic(np.int32(lo), np.int32(hi), x)
    np.testing.assert_allclose(np.asarray(out), acc)
    assert count.dtype == np.int32 and int(count) == max(hi - lo, 0)
    assert half.dtype == np.float32 and float(half) == 0.5 * max(hi - lo, 0)


def test_fori_loop_static_becomes_scf_for():
    text = _fori_static.lower(np.zeros(5, F32)).as_text("linalg")
    # no ember op is left (a loop kernel keeps ember's discardable attributes on its empties)
    assert "scf.for" in text and not re.search(r'(^|=)\s*"?ember\.', text, re.M)


@ember.jit
def _scan_pytree(c0, xs, w):
    def f(carry, x):
        s, m = carry["sum"], carry["max"]
        s = s + x["a"] * w            # w: closed over from the outer trace
        m = enp.maximum(m, x["b"].max())
        return {"sum": s, "max": m}, (s, x["b"] * 2)
    return lax.scan(f, c0, xs)


@ember.jit
def _scan_rev(xs):
    return lax.scan(lambda c, x: (c + x, c), np.float32(0), xs, reverse=True)


def test_scan_pytree_carry_and_xs(rng):
    a = rng.standard_normal((4, 3)).astype(F32)
    b = rng.standard_normal((4, 2)).astype(F32)
    w = rng.standard_normal(3).astype(F32)
    c0 = {"sum": np.zeros(3, F32), "max": F32(-np.inf)}
    carry, (ys_s, ys_b) = _scan_pytree(c0, {"a": a, "b": b}, w)
    s, m, want_s, want_b = c0["sum"], c0["max"], [], []
    for i in range(4):
        s = s + a[i] * w
        m = max(m, b[i].max())
        want_s.append(s)
        want_b.append(b[i] * 2)
    np.testing.assert_allclose(np.asarray(carry["sum"]), s, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(carry["max"]), m)
    np.testing.assert_allclose(np.asarray(ys_s), np.stack(want_s), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys_b), np.stack(want_b))


def test_scan_over_empty_rows_and_an_empty_batch():
    """Per-step slices with an empty dimension (xs of shape (4, 0)), and a vmap over a batch
    of 0 (was a raw MLIRError: "offset 1 is out-of-bounds")."""
    f = lambda xs: lax.scan(lambda c, x: (c + x.sum(), x * 2), 1.0, xs)   # noqa: E731
    c, ys = ember.jit(f)(np.zeros((4, 0), np.float32))
    assert float(c) == 1.0 and ys.shape == (4, 0)
    c, ys = ember.vmap(f)(np.zeros((0, 4, 3), np.float32))
    assert c.shape == (0,) and ys.shape == (0, 4, 3)


def test_scan_with_several_stacked_outputs_of_one_type():
    """Each ys is its own buffer: IREE had given ys that start from one tensor.empty one
    buffer, so that (x, c) came back as (c, c). Checked against a Python loop."""
    xs = np.arange(5, dtype=F32) + 10

    def step(c, x):
        return c * 2, (x, c, c * 3, c > 4, c > 8, c > 2, c.astype(np.int32))
    got = ember.jit(lambda c, xs: lax.scan(step, c, xs))(F32(1), xs)
    c, ys = F32(1), []
    for x in xs:
        c, y = step(c, x)
        ys.append(y)
    assert float(got[0]) == c
    for k, (g, want) in enumerate(zip(got[1], zip(*ys), strict=True)):
        np.testing.assert_array_equal(np.asarray(g), np.stack(want), err_msg=str(k))
    lanes = ember.vmap(lambda c: lax.scan(lambda c, x: (c + x, (c, x)), c, xs)[1])(
        np.array([0, 1], F32))
    np.testing.assert_array_equal(np.asarray(lanes[1]), np.stack([xs, xs]))
    np.testing.assert_array_equal(np.asarray(lanes[0]),
                                  np.stack([np.cumsum(xs) - xs, np.cumsum(xs) - xs + 1]))


def test_scan_reverse():
    xs = np.arange(1, 6, dtype=F32)
    c, ys = _scan_rev(xs)
    want, acc = np.zeros(5, F32), F32(0)
    for i in reversed(range(5)):
        want[i] = acc
        acc += xs[i]
    assert float(c) == acc
    np.testing.assert_array_equal(np.asarray(ys), want)


@ember.jit
def _unrolled(xs, start):
    # Every unroll of a 7-step scan (a divisor, a remainder loop, more than the length, True)
    # both ways, with a pytree carry and ys of two kinds; fori_loop's with its index.
    out = []
    for unroll in (1, 2, 3, 7, 9, True):
        for reverse in (False, True):
            out.append(lax.scan(lambda c, x: ((c[0] * 0.5 + x, c[1] + 1), (c[0], x > 0)),
                                (start, 0), xs, reverse=reverse, unroll=unroll))
        out.append(lax.fori_loop(1, 8, lambda i, c: c * 0.5 + i * xs[i - 1], start,
                                 unroll=unroll))
    return out


def test_scan_and_fori_loop_unroll_against_python_loops(rng):
    xs = rng.standard_normal(7).astype(F32)
    start = F32(0.25)
    got = iter(_unrolled(xs, start))
    for _unroll in range(6):
        for reverse in (False, True):
            (c, n), (ys, pos) = next(got)
            acc, want_ys = start, np.zeros(7, F32)
            for i in (reversed(range(7)) if reverse else range(7)):
                want_ys[i] = acc
                acc = acc * F32(0.5) + xs[i]
            assert float(c) == pytest.approx(float(acc), rel=1e-6) and int(n) == 7
            np.testing.assert_allclose(np.asarray(ys), want_ys, rtol=1e-6)
            np.testing.assert_array_equal(np.asarray(pos), xs > 0)
        acc = start
        for i in range(1, 8):
            acc = acc * F32(0.5) + i * xs[i - 1]
        assert float(next(got)) == pytest.approx(float(acc), rel=1e-6)


def test_unroll_makes_fewer_loop_steps():
    f = ember.jit(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, unroll=4))
    text = f.lower(np.zeros(12, F32)).as_text("ember")
    assert re.search(r"length = 3\b", text) and not re.search(r"length = 12\b", text), text
    full = ember.jit(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, unroll=True))
    # (a loop of one step, as JAX's: MLIR's canonicalization inlines it)
    assert re.search(r"length = 1\b", full.lower(np.zeros(12, F32)).as_text("ember"))
    assert "scf.for" not in full.lower(np.zeros(12, F32)).as_text("linalg")


def test_bad_unroll_is_refused():
    with pytest.raises(TracingError, match="unroll must be a positive int"):
        ember.jit(lambda xs: lax.scan(lambda c, x: (c, x), 0.0, xs, unroll=0))(np.zeros(3, F32))
    with pytest.raises(TracingError, match="unroll needs a trip count"):
        ember.jit(lambda n, x: lax.fori_loop(0, n, lambda i, c: c + 1, x, unroll=2))(
            np.int32(3), F32(0))


@pytest.fixture(params=[None, 0, 7], ids=["default", "no-chunks", "run-ahead-7"])
def run_ahead(request):
    """ember.config.loop_run_ahead set for one test (None: the default, 32), then restored."""
    saved = ember.config.loop_run_ahead
    if request.param is not None:
        ember.config.update("loop_run_ahead", request.param)
    yield ember.config.loop_run_ahead
    ember.config.update("loop_run_ahead", saved)


def _long_loops(xs, lo, hi):
    def step(c, x):
        c = c * 0.5 + x
        return c, c.sum()
    fwd = lax.scan(step, enp.zeros(3, np.float32), xs)
    rev = lax.scan(step, enp.zeros(3, np.float32), xs, reverse=True)
    fori = lax.fori_loop(lo, hi, lambda i, c: (c[0] * 0.5 + xs[i % xs.shape[0]], c[1] + i),
                         (enp.zeros(3, np.float32), 0))
    return fwd, rev, fori


def test_long_loops_run_in_chunks(rng, run_ahead, config_value):
    """Loops longer than loop_run_ahead run in chunks the host waits for (see
    ember/dialects/control_flow.py): the same results as one loop, for a length that is not a
    multiple of the chunk, in reverse, and from a negative start. (Loop kernels off: these
    steps would each run as one, with no host loop.)"""
    config_value("loop_kernels", False)
    xs = rng.standard_normal((70, 3)).astype(F32)
    lo, hi = np.int32(-5), np.int32(66)
    lowered = ember.jit(_long_loops).lower(xs, lo, hi)
    assert ("util.optimization_barrier" in lowered.as_text("linalg")) == (run_ahead > 0)
    (c, ys), (rc, rys), (fc, fi) = lowered.compile()(xs, lo, hi)

    def numpy_scan(order):
        acc, out = np.zeros(3, F32), np.zeros(70, F32)
        for t in order:
            acc = acc * F32(0.5) + xs[t]
            out[t] = acc.sum()
        return acc, out
    for (got_c, got_ys), order in [((c, ys), range(70)), ((rc, rys), reversed(range(70)))]:
        want_c, want_ys = numpy_scan(order)
        np.testing.assert_allclose(np.asarray(got_c), want_c, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(got_ys), want_ys, rtol=1e-5, atol=1e-6)
    acc = np.zeros(3, F32)
    for i in range(lo, hi):
        acc = acc * F32(0.5) + xs[i % 70]
    np.testing.assert_allclose(np.asarray(fc), acc, rtol=1e-5)
    assert int(fi) == sum(range(lo, hi))


def _carries(x):
    """Loops whose carries IREE updates in place where ember-pin-loop-carries lets it, and
    loops whose carries share a buffer with something else, which it must not update."""
    n = x.shape[0]
    base, zeros = x * 3.0, enp.zeros_like(x)

    def whiles(body, init):                         # fori_loop's body as a while_loop
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, body(c[0], c[1])),
                              (0, init))[1]
    return {
        "from_constant": lax.fori_loop(0, n, lambda i, b: b.at[i].set(x[i] * 2.0), zeros),
        "from_argument": lax.fori_loop(0, n, lambda i, b: b.at[i].add(1.0), x),
        "init_used_after": (lax.fori_loop(0, n, lambda i, b: b.at[i].add(x[0]), base), base),
        "one_init_two_carries": lax.fori_loop(
            0, n, lambda i, c: (c[0].at[i].add(1.0), c[1]), (x, x)),
        "carry_passed_twice": lax.fori_loop(
            0, n, lambda i, c: (c[0].at[i % 3].add(1.0), c[0]), (base, base)),
        "swapped": lax.fori_loop(0, n, lambda i, c: (c[1].at[i].add(1.0), c[0]), (zeros, base)),
        "passes_on_argument": lax.fori_loop(
            0, n, lambda i, c: (x, c[0].at[i].add(1.0)), (base, base)),
        "passes_on_outside": lax.fori_loop(
            0, n, lambda i, c: (base, c[0].at[i].add(1.0)), (zeros, zeros)),
        "scan_argument_also_xs": lax.scan(lambda b, r: (b.at[0].add(r), b[0].sum()), x, x),
        # a carry made anew by each step beside a ys buffer (ember-split-loop-inits)
        "scan_decays_argument": lax.scan(lambda b, r: (b.at[0].add(r) * 0.5, b[0].sum()), x, x),
        "scan_decays_computed": lax.scan(lambda b, r: (b * 0.5 + r, b.sum()), x * 2.0, x),
        "scan_two_carries": lax.scan(
            lambda c, r: ((c[0] * 0.5 + r, c[1].at[0].add(r)), c[0].sum() + c[1][0].sum()),
            (x * 2.0, x * 1.5), x),
        "while_from_argument": whiles(lambda i, b: b.at[i].add(1.0), x),
        "while_init_used_after": (whiles(lambda i, b: b.at[i].add(x[0]), base), base),
        "while_swapped": whiles(lambda i, c: (c[1].at[i].add(1.0), c[0]), (zeros, base)),
        "while_passes_on_argument": whiles(lambda i, c: (x, c[0].at[i].add(1.0)), (base, base)),
        "while_reads_carry": lax.while_loop(lambda b: b[0, 1] < 30.0,
                                            lambda b: b.at[0].add(2.0), x),
    }


def _carries_numpy(x):
    n = x.shape[0]
    base, zeros = x * 3, np.zeros_like(x)

    def fori(body, c):
        for i in range(n):
            c = body(i, c)
        return c

    def at(b, i, v):
        b = b.copy()
        b[i] += v
        return b

    def scan(body, c):
        ys = []
        for r in x:
            c, y = body(c, r)
            ys.append(y)
        return c, np.array(ys, F32)

    w = x.copy()
    while w[0, 1] < 30:
        w[0] += 2
    return {
        "from_constant": x * 2,
        "from_argument": x + 1,
        "init_used_after": (fori(lambda i, b: at(b, i, x[0]), base), base),
        "one_init_two_carries": (x + 1, x),
        "carry_passed_twice": fori(lambda i, c: (at(c[0], i % 3, 1), c[0]), (base, base)),
        "swapped": fori(lambda i, c: (at(c[1], i, 1), c[0]), (zeros, base)),
        "passes_on_argument": fori(lambda i, c: (x, at(c[0], i, 1)), (base, base)),
        "passes_on_outside": fori(lambda i, c: (base, at(c[0], i, 1)), (zeros, zeros)),
        "scan_argument_also_xs": scan(lambda b, r: (at(b, 0, r), b[0].sum()), x),
        "scan_decays_argument": scan(lambda b, r: (at(b, 0, r) * F32(0.5), b[0].sum()), x),
        "scan_decays_computed": scan(lambda b, r: (b * F32(0.5) + r, b.sum()), x * F32(2)),
        "scan_two_carries": scan(lambda c, r: ((c[0] * F32(0.5) + r, at(c[1], 0, r)),
                                               c[0].sum() + c[1][0].sum()),
                                 (x * F32(2), x * F32(1.5))),
        "while_from_argument": x + 1,
        "while_init_used_after": (fori(lambda i, b: at(b, i, x[0]), base), base),
        "while_swapped": fori(lambda i, c: (at(c[1], i, 1), c[0]), (zeros, base)),
        "while_passes_on_argument": fori(lambda i, c: (x, at(c[0], i, 1)), (base, base)),
        "while_reads_carry": w,
    }


def test_loop_carries_updated_in_place_share_nothing(run_ahead):
    """ember-pin-loop-carries lets IREE update a carry in place only when its buffer is the
    loop's own: the results match NumPy on every call, in one program and under chunks (9
    steps against run-ahead 7), for fori_loop, scan and while_loop, and neither the argument
    nor a constant changes."""
    x0 = np.arange(36, dtype=F32).reshape(9, 4)
    lowered = ember.jit(_carries).lower(x0)
    text = lowered.as_text("linalg")
    assert "flow.tensor.barrier" in text
    assert re.search(r"util.optimization_barrier %\S+ : tensor", text)    # split loop inits
    compiled, want = lowered.compile(), _carries_numpy(x0)
    for _ in range(2):                               # a constant written into shows at call 2
        x = ember.device_put(x0)
        got = compiled(x)
        np.testing.assert_array_equal(np.asarray(x), x0)
        for name, value in want.items():
            for g, w in zip(ember.tree_util.tree_leaves(got[name]),
                            ember.tree_util.tree_leaves(value)):
                np.testing.assert_array_equal(np.asarray(g), w, err_msg=name)


@pytest.mark.parametrize("bad", [-1, 2.5, "32", True])
def test_loop_run_ahead_must_be_a_step_count(bad):
    with pytest.raises(ValueError, match="loop_run_ahead must be a number of loop steps"):
        ember.config.update("loop_run_ahead", bad)


def test_map_eager():
    xs = np.arange(6, dtype=np.int32).reshape(3, 2)
    out = lax.map(lambda r: r * r.sum(), xs)
    np.testing.assert_array_equal(np.asarray(out), np.stack([r * r.sum() for r in xs]))


# --- errors -------------------------------------------------------------------------------

def _trace(f, *args):
    return ember.jit(f).lower(*args)


def test_cond_branch_dtype_mismatch_names_both():
    x = np.zeros(3, F32)
    with pytest.raises(TracingError, match=r"true_fun output has type f32\[3\] but false_fun "
                                           r"output has type i32\[3\]"):
        _trace(lambda p, x: lax.cond(p, lambda: x, lambda: x.astype(np.int32)), True, x)


def test_cond_branch_structure_and_shape_mismatch():
    x = np.zeros(3, F32)
    with pytest.raises(TracingError, match="same pytree structure"):
        _trace(lambda p, x: lax.cond(p, lambda: (x,), lambda: x), True, x)
    with pytest.raises(TracingError, match=r"\[1\] has type f32\[3\] .* f32\[2\] \(the shapes"):
        _trace(lambda p, x: lax.cond(p, lambda: (x, x), lambda: (x, x[:2])), True, x)


def test_cond_predicate_must_be_scalar():
    with pytest.raises(TracingError, match="predicate must be a scalar"):
        _trace(lambda x: lax.cond(x > 0, lambda: x, lambda: x), np.zeros(3, F32))


def test_loop_carry_mismatch():
    x = np.zeros(3, F32)
    with pytest.raises(TracingError, match=r"init_val has type f32\[3\] but body_fun output "
                                           r"has type f32\[\]"):
        _trace(lambda x: lax.while_loop(lambda c: True, lambda c: c.sum(), x), x)
    with pytest.raises(TracingError, match="i32"):
        _trace(lambda x: lax.fori_loop(0, 3, lambda i, c: i, x), x)
    with pytest.raises(TracingError, match="cond_fun must return a scalar bool"):
        _trace(lambda x: lax.while_loop(lambda c: c, lambda c: c, x), x)
    with pytest.raises(TracingError, match="init has type"):
        _trace(lambda x: lax.scan(lambda c, v: (c + v, v), np.int32(0), x), x)
    with pytest.raises(TracingError, match="disagree on the length"):
        _trace(lambda x: lax.scan(lambda c, v: (c, v), 0, (x, x[:2])), x)


def test_python_if_on_tracer_points_to_lax_cond():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError, match=r"ember\.lax\.cond.*while_loop"):
        _trace(f, np.zeros(3, F32))


def test_verify_rejects_bad_yield_types(verify):
    verify("""
    func.func @f(%p: tensor<i1>, %x: tensor<3xf32>, %y: tensor<3xi32>) -> tensor<3xf32> {
      %0 = "ember.cond"(%p) ({
        "ember.yield"(%x) : (tensor<3xf32>) -> ()
      }, {
        "ember.yield"(%y) : (tensor<3xi32>) -> ()
      }) : (tensor<i1>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }""", "regions yield different types")


def test_escaped_tracer_is_reported():
    box = []

    def f(p, x):
        lax.cond(p, lambda: box.append(x * 2) or x, lambda: x)
        return box[0] + 1
    with pytest.raises(TracingError, match="escaped"):
        _trace(f, True, np.zeros(2, F32))


def test_control_flow_errors_name_the_users_line():
    f = ember.jit(lambda x: lax.scan(lambda c, r: (c.astype(np.int32), r), x, x[None]))
    with pytest.raises(TracingError, match=r"(?s)f carry output has type i32\[3\].*\n  at "
                       r".*test_control_flow.py:\d+"):
        f(np.ones(3, F32))


def test_tracer_leaked_from_a_finished_trace_is_reported():
    # As JAX's UnexpectedTracerError: before, the stale tracer became an argument of the new
    # program that no caller passed, and IREE failed at the call.
    x = np.ones(3, F32)
    leak = []
    ember.jit(lambda a: leak.append(a) or a * 2)(x)
    with pytest.raises(UnexpectedTracerError, match=r"f32\[3\] escaped from <lambda>, traced by "
                       r"ember.jit.*test_control_flow.py"):
        ember.jit(lambda b: b + leak[0])(x)
    with pytest.raises(UnexpectedTracerError):
        leak[0] + 1

    def outer(a):
        store = []
        ember.vmap(lambda r: store.append(r) or r)(a)
        return store[0] * 2
    with pytest.raises(UnexpectedTracerError, match="traced by ember.vmap"):
        ember.jit(outer)(np.ones((2, 3), F32))


_LEAKED = None


def _leaks_into_a_global(a):
    global _LEAKED
    _LEAKED = a * 2
    return a + 1


def test_leaked_tracer_made_concrete_is_unexpected_not_static():
    """np.asarray, bool, float of a tracer stored in a global inside jit and read after the
    trace: it had said "mark it static", which cannot help. Now UnexpectedTracerError
    naming the function it came from (JAX says TracerArrayConversionError for np.asarray)."""
    ember.jit(_leaks_into_a_global)(np.ones(3, F32))
    for use in (np.asarray, bool, float, lambda t: enp.arange(t)):
        with pytest.raises(UnexpectedTracerError,
                           match=r"escaped from _leaks_into_a_global, traced by ember.jit"):
            use(_LEAKED)
    # Inside the trace that made it, the same use is still a ConcretizationError.
    with pytest.raises(ConcretizationError, match="mark it static"):
        ember.jit(lambda a: np.asarray(a))(np.ones(3, F32))

@ember.jit
def _nested_jit_in_scan(xs, k):
    inner = ember.jit(lambda v: v * k)          # a nested jit closing over k, inside a region
    return lax.scan(lambda c, x: (c + inner(x), inner(x) > 0), np.float32(0), xs)


def test_nested_jit_inside_scan_body():
    xs = np.array([1.0, -2.0, 3.0], F32)
    c, ys = _nested_jit_in_scan(xs, F32(2))
    assert float(c) == float((xs * 2).sum())
    np.testing.assert_array_equal(np.asarray(ys), xs * 2 > 0)


def test_simplify_folds_inside_regions_and_drops_dead_loops():
    def f(x):
        lax.while_loop(lambda c: c < 10, lambda c: c + 1, 0)   # unused: removed
        return lax.cond(x.sum() > 0, lambda: x + (2.0 * 3.0), lambda: x)
    text = ember.jit(f).lower(np.zeros(2, F32)).as_text("optimized")
    assert "ember.while" not in text and "ember.cond" in text
    assert "6.0" in text or "6.000000e+00" in text


@pytest.mark.parametrize("batch_size", [1, 3, 5, 16])
def test_map_with_batch_size(batch_size):
    # JAX's lax.map(..., batch_size=): vmapped over batch_size rows per step, the rows left
    # over in one more vmapped call; oracle: NumPy over the rows.
    xs = np.arange(30, dtype=F32).reshape(10, 3)
    f = ember.jit(lambda x: lax.map(lambda r: (r.sum(), enp.sin(r) * 2), x,
                                    batch_size=batch_size))
    total, doubled = f(xs)
    np.testing.assert_allclose(np.asarray(total), xs.sum(1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(doubled), np.sin(xs) * 2, rtol=1e-6)


@pytest.mark.fast
def test_scan_unroll_config(config_value):
    """``ember.config`` ``scan_unroll`` (EMBER_SCAN_UNROLL) bounds the steps of a scan that
    ember-unroll-scans runs in one loop step; 1 keeps every loop rolled. The results are a
    Python loop's either way. (Loop kernels off: this step would run as one.)"""
    xs = np.arange(32, dtype=F32)
    config_value("loop_kernels", False)

    def f(xs):
        return lax.scan(lambda c, x: (c * F32(0.5) + x, c), F32(1), xs)
    want_ys, c = [], F32(1)
    for x in xs:
        want_ys.append(c)
        c = c * F32(0.5) + x
    for unroll, length in ((8, 4), (2, 16), (1, 32)):
        config_value("scan_unroll", unroll)
        lowered = ember.jit(f).lower(xs)
        assert f"length = {length} :" in lowered.as_text("optimized")
        got_c, got_ys = lowered.compile()(xs)
        np.testing.assert_allclose(np.asarray(got_c), c, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(got_ys), want_ys, rtol=1e-6)




def _swap_scan(xs):
    def step(c, x):
        a, b, n, p, q = c
        return (b, a + F32(0.5) * b * x, n + 1, q, p), (a * b).sum() * x + p
    return lax.scan(step, (enp.ones(3, F32), enp.full(3, 0.25, F32), enp.int32(0),
                           enp.arange(3, dtype=F32), enp.full(3, -1.0, F32)), xs, reverse=True)


def _swap_scan_loop(xs):
    a, b, n, p, q = np.ones(3, F32), np.full(3, 0.25, F32), 0, np.arange(3, dtype=F32), \
        np.full(3, -1.0, F32)
    ys = [None] * len(xs)
    for t in reversed(range(len(xs))):
        x = xs[t]
        ys[t] = (a * b).sum() * x + p
        a, b, n, p, q = b, a + F32(0.5) * b * x, n + 1, q, p
    return (a, b, n, p, q), np.stack(ys)


def _products(n, ms):
    def step(i, c):
        c = (c @ ms[i % 3]).T * F32(0.5) + ms[0].sum(0)
        return lax.dynamic_update_slice(c, c[1:3] * F32(0.5), (i % 3, 0))
    return lax.fori_loop(1, n, step, enp.eye(4, dtype=F32))


def _products_loop(n, ms):
    c = np.eye(4, dtype=F32)
    for i in range(1, int(n)):
        c = (c @ ms[i % 3]).T * F32(0.5) + ms[0].sum(0)
        c[i % 3:i % 3 + 2] = c[1:3] * F32(0.5)
    return c


def _cube_roots(v):
    def cond(c):
        x, i = c
        return (enp.abs(x * x * x - v).max() > F32(1e-4)) & (i < 50)
    return lax.while_loop(cond, lambda c: (c[0] - (c[0] ** 3 - v) / (3 * c[0] ** 2), c[1] + 1),
                          (enp.ones_like(v), 0))


def _cube_roots_loop(v):
    x, i = np.ones_like(v), 0
    while np.abs(x * x * x - v).max() > F32(1e-4) and i < 50:
        x, i = x - (x ** 3 - v) / (3 * x ** 2), i + 1
    return x, i


def _beside(x, xs):
    # values of the carry's and the step's types outside the loop too (CSE must not merge
    # the kernel's empty tensors with theirs)
    c, ys = lax.scan(lambda c, r: (c * F32(0.5) + r, c + r), x * 2, xs)
    return c + (x + 1), ys, xs * 3


def _beside_loop(x, xs):
    c, ys = x * 2, []
    for r in xs:
        ys.append(c + r)
        c = c * F32(0.5) + r
    return c + (x + 1), np.stack(ys), xs * 3


def test_loop_step_with_a_mask_array_stays_valid_ir(config_value):
    """A step that makes a boolean array of another shape than its consumers (a one-hot mask
    broadcast over a batch) is not made a kernel: IREE stores a kernel's i1 arrays as i8 and
    leaves the scalar writes into them as i1, which its verifier rejects (with IREE's
    verifier off, as jit compiles, such a program compiled anyway). With the verifier on it
    compiles first time, as the Python loop computes."""
    idx = (np.arange(16).reshape(4, 4) % 5).astype(np.int32)

    def step(i, c, xp):
        m = idx == i
        return xp.where(m, c * 2, c) + xp.where(m, F32(1), F32(0)) * c[::-1]
    c = (np.random.default_rng(0).standard_normal((2, 4, 4)) * 0.3).astype(F32)
    want = c
    for i in range(4):
        want = step(i, want, np)
    config_value("compile_verify", True)
    config_value("compile_cache", False)
    lowered = ember.jit(lambda c: lax.fori_loop(0, 4, lambda i, c: step(i, c, enp), c)).lower(c)
    got = lowered.compile()(c)
    assert lowered.dispatch_regions is not False
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def _decay_scan(xs, xp):
    """ys of c <- 0.9 c + x over the rows of ``xs``, from zeros (``xp``: enp traces a scan,
    np runs a Python loop)."""
    if xp is np:
        c, ys = np.zeros(xs.shape[1], F32), []
        for x in xs:
            c = c * F32(0.9) + x
            ys.append(c)
        return np.stack(ys)
    return lax.scan(lambda c, x: (c * 0.9 + x, c * 0.9 + x), enp.zeros(xs.shape[1], F32),
                    xs)[1]


_XS = np.random.default_rng(4).standard_normal((300, 4)).astype(F32)


@pytest.mark.parametrize("make_xs", [
    lambda x, xp: xp.where(x > 0, x, F32(0)),                  # elementwise
    lambda x, xp: (x.reshape(4, 300) * F32(2)).T,              # transposed
    lambda x, xp: xp.concatenate([x, x * F32(2)]),
    lambda x, xp: x[np.arange(300)[::-3]],                     # a gather
], ids=["where", "transpose", "concatenate", "gather"])
def test_kernel_reading_values_made_outside_compiles_first_time(make_xs, monkeypatch,
                                                                config_value):
    """A kernel reads its xs from an op outside it. IREE pulled such producers into the
    kernel's dispatch region, where the producer is the op IREE distributes to workgroups,
    and failed ("write affecting operations on global resources"): the program compiled
    five times, the last without regions, and ran as a host loop. They now stay outside,
    behind a barrier (tests/mlir/loop_kernels.mlir): one compile, a kernel, the Python
    loop's values."""
    calls = count_compiles(monkeypatch)
    config_value("compile_cache", False)
    lowered = ember.jit(lambda x: _decay_scan(make_xs(x, enp), enp)).lower(_XS)
    got = lowered.compile()(_XS)
    assert len(calls) == 1 and loop_kernels_in(lowered) == 1
    np.testing.assert_allclose(np.asarray(got), _decay_scan(make_xs(_XS, np), np),
                               rtol=1e-5, atol=1e-5)


def test_batched_tridiagonal_solve_compiles_first_time(monkeypatch, config_value):
    """A batched tridiagonal_solve's back substitution is a kernel reading rows that a
    gather-like generic put in order outside it (the case above, found in the suite): one
    compile, SciPy's solutions."""
    from scipy.linalg import solve_banded
    rng = np.random.default_rng(0)
    dl, d, du = (rng.standard_normal((3, 7)).astype(F32) for _ in range(3))
    d += 4
    b = rng.standard_normal((3, 7, 2)).astype(F32)
    calls = count_compiles(monkeypatch)
    config_value("compile_cache", False)
    lowered = ember.jit(lax.linalg.tridiagonal_solve).lower(dl, d, du, b)
    got = np.asarray(lowered.compile()(dl, d, du, b))
    assert len(calls) == 1 and loop_kernels_in(lowered) >= 1
    for i in range(3):
        bands = np.stack([np.r_[0, du[i, :-1]], d[i], np.r_[dl[i, 1:], 0]])
        np.testing.assert_allclose(got[i], solve_banded((1, 1), bands, b[i]), rtol=2e-5,
                                   atol=2e-6)


@pytest.mark.parametrize("case", ["swap_scan", "products", "while", "beside"])
def test_loop_kernels_as_python_loops(case, config_value):
    """A loop whose step computes little runs as one kernel (ember-loop-kernels): its
    carries passed on to each other (two swapped), an integer counter, reversed ys, a
    product, a transpose, a broadcast sum, a dynamic row read and a dynamic update of two
    rows in the step, traced bounds,
    a while loop's condition; results are a Python loop's, and the same program with loop
    kernels off (each step on the host) agrees."""
    rng = np.random.default_rng(7)
    if case == "swap_scan":
        args = (rng.standard_normal((50, 3)).astype(F32),)
        fun, loop = _swap_scan, _swap_scan_loop
    elif case == "products":
        args = (np.int32(40), (rng.standard_normal((3, 4, 4)) / 2).astype(F32))
        fun, loop = _products, _products_loop
    elif case == "while":
        args = ((rng.random(64) * 10 + 1).astype(F32),)
        fun, loop = _cube_roots, _cube_roots_loop
    else:
        args = (rng.standard_normal(4).astype(F32), rng.standard_normal((6, 4)).astype(F32))
        fun, loop = _beside, _beside_loop
    lowered = ember.jit(fun).lower(*args)
    want = loop(*args)
    compiled = lowered.compile()
    got = compiled(*args)
    # (after the compile: should IREE refuse the kernel, jit lowers the program again without)
    assert loop_kernels_in(lowered) == 1
    # IREE's memory: the results, each aligned to 64 bytes, and at most one starting copy of
    # the carries (a scan's ys written in place, not allocated twice; the step's values on
    # the stack); ember's model says as much
    memory = compiled.memory_analysis()

    def aligned(leaves):
        return sum(-(-np.asarray(r).nbytes // 64) * 64 for r in leaves)
    results = aligned(ember.tree_util.tree_leaves(got))
    carries = aligned(ember.tree_util.tree_leaves(
        {"swap_scan": got[0], "products": got, "while": got, "beside": got[0]}[case]))
    assert memory.iree_transient_size_in_bytes <= results + carries + 128
    assert memory.transient_size_in_bytes <= results + carries + 128
    # (IREE contracts a * b + c into one rounding, the Python loop rounds twice)
    for g, w in zip(ember.tree_util.tree_leaves(got), ember.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6 * np.abs(w).max())
    config_value("loop_kernels", False)
    host = ember.jit(fun).lower(*args)
    assert loop_kernels_in(host) == 0
    for g, h in zip(ember.tree_util.tree_leaves(got),
                    ember.tree_util.tree_leaves(host.compile()(*args))):
        h = np.asarray(h)
        np.testing.assert_allclose(np.asarray(g), h, rtol=1e-5, atol=1e-6 * np.abs(h).max())
