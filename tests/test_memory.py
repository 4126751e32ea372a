"""Memory planning: liveness and peak, scheduling, rematerialization, donation,
``memory_analysis()`` and ``ember.checkpoint``, checked against NumPy, brute force and IREE's
own statistics."""

import itertools
import warnings

import numpy as np
import pytest

import ember
import ember.numpy as enp
from benchmarks import memory as memory_benchmark
from ember import lax
from ember._mlir import ir
from ember.backends import cpu
from ember.backends.statistics import program_statistics
from ember.errors import (
    ArgumentError,
    DonatedArrayError,
    DonationError,
    DonationWarning,
    MemoryBudgetError,
    MemoryBudgetExceededError,
    MemoryBudgetWarning,
)
from ember.frontend import memory
from ember.passes.liveness import Program
from ember.passes.plan_memory import parse_size

N = 256
MB = N * N * 4     # one N x N float32 buffer


@pytest.fixture(autouse=True)
def _planner_defaults():
    """These tests set budgets themselves: ignore EMBER_MEMORY_BUDGET (the whole suite may be
    run with a tiny one, see the README) and EMBER_NO_MEMORY_PLANNER."""
    saved = dict(ember.config._values)
    ember.config._values.update(memory_budget=None, memory_planner=True,
                                donation_strict=False)
    ember.clear_caches()
    yield
    ember.config._values.update(saved)
    ember.clear_caches()


def _plan(lowered):
    return lowered.memory_plan()


# --- sizes ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, size", [
    ("12 GB", 12 * 10**9), (12e9, 12 * 10**9), ("1.5GiB", 3 * 2**29), ("256MiB", 2**28),
    ("64 kB", 64000), (4096, 4096), ("10", 10), ("2 Mi", 2 * 2**20)])
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("bad", ["lots", "", "12 XB", "-5 MB", 0, -1.0, float("nan"), True,
                                 None, "1.5.2GB"])
def test_bad_sizes(bad):
    with pytest.raises(MemoryBudgetError, match="memory budget"):
        parse_size(bad)


def test_bad_budget_names_where():
    with pytest.raises(MemoryBudgetError, match="memory_budget of f .*'lots' is not a size"):
        def f(x):
            return x
        ember.jit(f, memory_budget="lots")


def test_bad_env_budget(config_value):
    config_value("memory_budget", "lots")
    with pytest.raises(MemoryBudgetError, match="EMBER_MEMORY_BUDGET"):
        ember.jit(lambda x: x + 1).lower(np.ones(3, np.float32)).as_text("optimized")


# --- liveness: the model against a direct count ---------------------------------------------

def _dots(names_and_args, result):
    """A func of N x N dot_generals: [(name, lhs, rhs)], returning ``result``."""
    dot = ('"ember.dot_general"({l}, {r}) {{lhs_batch = array<i64>, lhs_contracting = '
           'array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>}} : '
           '(tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>')
    t = "tensor<256x256xf32>"
    body = "\n".join(f"  %{n} = " + dot.format(l=lhs, r=rhs) for n, lhs, rhs in names_and_args)
    return (f"func.func @f(%x: {t}, %y: {t}) -> {t} {{\n{body}\n  return %{result} : {t}\n}}")


def _parse(text):
    from ember._mlir import new_session
    ctx = new_session().context
    with ctx:
        return ir.Module.parse(text)


def _brute_force_peak(ops, result):
    """The least peak (in buffers) over every topological order, by enumeration."""
    best = None
    names = [n for n, _, _ in ops]
    deps = {n: {a for a in (lhs[1:], rhs[1:]) if a in names} for n, lhs, rhs in ops}
    for order in itertools.permutations(names):
        done = set()
        ok = True
        for n in order:
            if not deps[n] <= done:
                ok = False
                break
            done.add(n)
        if not ok:
            continue
        best = min(best or 99, _count_peak(order, ops, result))
    return best


def _count_peak(order, ops, result):
    """Live buffers, counted directly: a value lives from its op to its last reader, the
    result for the whole program (IREE allocates results before a program runs)."""
    byname = {n: (lhs[1:], rhs[1:]) for n, lhs, rhs in ops}
    pos = {n: i for i, n in enumerate(order)}
    first = {n: (0 if n == result else pos[n]) for n in order}
    last = {n: (len(order) - 1 if n == result else pos[n]) for n in order}
    for n in order:
        for a in byname[n]:
            if a in last:
                last[a] = max(last[a], pos[n])
    return max(sum(1 for n in order if first[n] <= i <= last[n]) for i in range(len(order)))


def _random_dag(rng, size):
    ops = []
    for i in range(size):
        pool = ["%x", "%y"] + [f"%v{j}" for j in range(i)]
        lhs, rhs = rng.choice(pool, 2)
        ops.append((f"v{i}", str(lhs), str(rhs)))
    # Everything feeds the result, so nothing is dead.
    unused = [f"%{n}" for n, _, _ in ops if not any(f"%{n}" in (a, b) for _, a, b in ops)]
    acc = unused[0]
    for k, u in enumerate(unused[1:]):
        ops.append((f"s{k}", acc, u))
        acc = f"%s{k}"
    return ops, acc[1:]


@pytest.mark.parametrize("seed", range(12))
def test_liveness_and_schedule_against_brute_force(seed):
    from ember.passes.plan_memory import model

    rng = np.random.default_rng(seed)
    ops, result = _random_dag(rng, int(rng.integers(3, 6)))
    module = _parse(_dots(ops, result))
    block = module.body.operations[0].regions[0].blocks[0]
    prog = model(block, data_tiling=False)
    written = [n for n, _, _ in ops]
    assert prog.profile(prog.order).peak == _count_peak(written, ops, result) * MB
    scheduled = prog.schedule()
    order = [written[i] for i in scheduled]
    # A valid order, never worse than program order, never better than the optimum.
    assert _count_peak(order, ops, result) * MB == prog.profile(scheduled).peak
    assert _brute_force_peak(ops, result) * MB <= prog.profile(scheduled).peak
    # The pass keeps program order unless the schedule saves 10% of the peak and 64 KiB.
    from ember.passes import make_pass
    with module.context:
        make_pass("ember-plan-memory", "data-tiling=false").run(module)
    plan = _plan_attr(module)
    kept, new = _count_peak(written, ops, result) * MB, _count_peak(order, ops, result) * MB
    assert plan["peak_bytes"] == (new if new <= kept - max(64 * 1024, 0.1 * kept) else kept)


def _plan_attr(module):
    from ember.passes.plan_memory import Plan
    f = module.body.operations[0]
    return vars(Plan.from_attribute(f.attributes["ember.memory"]))


def test_scheduler_on_a_long_program_is_a_topological_order():
    prog = Program(sizes=[4] * 400, kinds=["temp"] * 400,
                   uses=[[i - 1] if i else [] for i in range(400)],
                   defs=[[i] for i in range(400)], barrier=[False] * 400, order=list(range(400)))
    assert prog.schedule() == list(range(400))


# --- the pass in the pipeline, and IREE's figures -------------------------------------------

X = np.random.default_rng(0).standard_normal((N, N)).astype(np.float32) / 16


def bad_order(x, w):
    """Six large intermediates, all computed before any is reduced."""
    ts = [enp.tanh(x @ (w * (i + 1))) for i in range(6)]
    return sum(t.sum() for t in ts)


def test_schedule_lowers_iree_transient_memory(config_value):
    low = {}
    for on in (False, True):
        config_value("memory_planner", on)
        lowered = ember.jit(bad_order).lower(X, X)
        stats = program_statistics(lowered.as_text("linalg"), lowered.iree_flags(cpu, {})[0])
        low[on] = (stats.transient_memory_size, _plan(lowered))
    (off_bytes, off_plan), (on_bytes, on_plan) = low[False], low[True]
    assert on_plan.scheduled and not off_plan.scheduled
    assert on_plan.temp_bytes < off_plan.temp_bytes
    assert on_bytes <= 0.7 * off_bytes, (on_bytes, off_bytes)
    # ember's prediction is IREE's figure (within 10%) for the planned program.
    assert abs(on_plan.temp_bytes - on_bytes) <= 0.1 * on_bytes


def test_optimized_stage_shows_the_plan():
    text = ember.jit(bad_order).lower(X, X).as_text("optimized")
    assert "ember.memory = {" in text and "peak_bytes" in text and "peak_op" in text
    assert "ember.memory" not in ember.jit(bad_order).lower(X, X).as_text("linalg")


def test_memory_analysis_side_by_side():
    c = ember.jit(bad_order).lower(X, X).compile()
    m = c.memory_analysis()
    assert m.argument_size_in_bytes == 2 * MB
    assert m.output_size_in_bytes == 4
    assert m.alias_size_in_bytes == 0
    assert m.temp_size_in_bytes > 0
    assert m.iree_transient_size_in_bytes == program_statistics(
        c.as_text("linalg"), cpu.compiler_flags()).transient_memory_size
    assert m.peak_size_in_bytes >= m.argument_size_in_bytes + m.temp_size_in_bytes
    assert "tanh" in m.peak_op or "dot_general" in m.peak_op or "reduce" in m.peak_op
    assert "transient (IREE)" in str(m)
    assert c.memory_analysis() is m


# --- results unchanged by the planner -------------------------------------------------------

def _mlp(x, w1, w2):
    h = enp.maximum(x @ w1, 0.0)
    return enp.tanh(h @ w2) + x


def _softmax(x, w, v):
    s = x @ w
    e = enp.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def _layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / enp.sqrt(v + 1e-5) * g + b


def _scan(x, w, b):
    def body(c, row):
        c = c.at[0].add(row) * 0.5
        return c, c.sum()
    return ember.lax.scan(body, w, x)


def _pairwise(x, w, b):
    d = ember.vmap(lambda a: ((a[None, :] - w) ** 2).sum(-1))(x)
    return d.min(axis=1) + b[0]


def _cond(x, w, b):
    big = x @ w
    return ember.lax.cond(big.sum() > 0, lambda: big * 2, lambda: big - b)


def _remat(x, w, b):
    scale = b * 0.5             # a buffer: a region op reads it (a splat would be cloned)
    h = ember.lax.cond(x[0, 0] > 0, lambda: scale @ x, lambda: x @ x)
    h = h @ w
    h = h @ w
    return h + scale


PROGRAMS = [_mlp, _softmax, _layernorm, _scan, _pairwise, _cond, _remat, bad_order]


@pytest.mark.parametrize("fun", PROGRAMS, ids=lambda f: f.__name__)
def test_results_unchanged_at_a_tiny_budget(fun, config_value):
    rng = np.random.default_rng(1)
    shape = (16, 16)
    args = [rng.standard_normal(shape).astype(np.float32) / 4 for _ in range(3)]
    args = args[:2] if fun is bad_order else args
    config_value("memory_planner", False)
    reference = ember.jit(fun)(*args)
    config_value("memory_planner", True)
    config_value("memory_budget", 1)
    lowered = ember.jit(fun).lower(*args)
    got = lowered.compile()(*args)
    for r, g in zip(ember.tree_util.tree_leaves(reference), ember.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-5, atol=1e-6)
    assert _plan(lowered).budget == 1


def test_remat_recomputes_a_cheap_value_under_a_budget():
    x = np.ones((N, N), np.float32) / N
    b = np.full((N, N), 0.5, np.float32)
    free = ember.jit(_remat).lower(x, x, b)
    tight = ember.jit(_remat, memory_budget=int(_plan(free).peak_bytes * 0.9)).lower(x, x, b)
    plan = _plan(tight)
    assert plan.rematerialized >= 1
    assert plan.peak_bytes < _plan(free).peak_bytes
    assert tight.as_text("optimized").count('"ember.mul"') > \
        free.as_text("optimized").count('"ember.mul"')
    # IREE gets the recomputation too (not merged back by CSE), and allocates less.
    iree = [program_statistics(lo.as_text("linalg"), cpu.compiler_flags()).transient_memory_size
            for lo in (free, tight)]
    assert iree[1] < iree[0], iree
    np.testing.assert_allclose(np.asarray(tight.compile()(x, x, b)),
                               np.asarray(free.compile()(x, x, b)), rtol=1e-6)


def test_data_tiling_is_given_up_when_remat_cannot_meet_a_budget():
    """Below what recomputation reaches, the planner gives up IREE's packed operand copies
    (data tiling): the program compiles without them and IREE's own figure follows the
    plan. ember's model without the copies is rougher than with them (exact on 8 of
    benchmarks/memory.py's 9 programs, 40% low on residual_mlp; here one 256 KiB buffer of
    the cond's low, 20%)."""
    rng = np.random.default_rng(2)
    x, w, b = (rng.standard_normal((N, N)).astype(np.float32) / N for _ in range(3))
    free = ember.jit(_remat).lower(x, w, b)
    budget = _plan(free).peak_bytes // 2
    tight = ember.jit(_remat, memory_budget=budget).lower(x, w, b).compile()
    plan = _plan(tight.lowered)
    assert _plan(free).data_tiling and not plan.data_tiling
    flags = memory.planned_flags(tight.lowered._stage("optimized"), cpu.compiler_flags())
    assert "--iree-opt-data-tiling=false" in flags and "--iree-opt-data-tiling=true" not in flags
    before = program_statistics(free.as_text("linalg"), cpu.compiler_flags())
    after = program_statistics(tight.lowered.as_text("linalg"), flags)
    assert after.transient_memory_size < before.transient_memory_size
    m = tight.memory_analysis()
    assert m.iree_transient_size_in_bytes == after.transient_memory_size
    assert abs(m.transient_size_in_bytes - after.transient_memory_size) <= \
        0.25 * after.transient_memory_size
    np.testing.assert_allclose(np.asarray(tight(x, w, b)), np.asarray(free.compile()(x, w, b)),
                               rtol=1e-5, atol=1e-6)


def _tanh_layers(m, ps, x):
    for w, b in ps:
        x = m.tanh(x @ w + b)
    return m.mean(x * x)


def test_a_budget_keeps_data_tiling_where_irees_figure_meets_it():
    """Where ember's model needs data tiling given up to meet a budget of a gradient
    program, compile first tries the plan that keeps it, with data tiling from IREE's
    global optimization, and keeps that where IREE's own figure meets the budget (its
    products run packed, faster); below that figure, the plan without data tiling."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(7)
    ps = [(rng.standard_normal((N, N)).astype(np.float32) * 1.2 / 16,
           np.zeros(N, np.float32)) for _ in range(8)]
    x = rng.standard_normal((128, N)).astype(np.float32)
    grad = ember.grad(lambda ps, x: _tanh_layers(enp, ps, x))
    free = ember.jit(grad).lower(ps, x).compile().memory_analysis().iree_transient_size_in_bytes
    returned = sum(w.nbytes + b.nbytes for w, b in ps)

    def lowered(budget, keep=False):
        lo = ember.jit(grad, memory_budget=budget).lower(ps, x)
        lo.keep_data_tiling = keep
        return lo
    kept = lowered(int(returned + 0.5 * (free - returned)), keep=True)
    assert memory.plan_of(kept._stage("optimized")).packing == "kept"
    flags = memory.planned_flags(kept._stage("optimized"), cpu.compiler_flags())
    assert "--iree-global-opt-data-tiling=true" in flags and \
        "--iree-opt-data-tiling=true" not in flags
    figure = program_statistics(kept.as_text("linalg"), flags).transient_memory_size
    assert memory.plan_of(lowered(figure)._stage("optimized")).packing == "given-up"
    want = jax.grad(lambda ps, x: _tanh_layers(jax.numpy, ps, x))(ps, x)
    for budget, packing in ((figure, "kept"), (figure - 1, "given-up")):
        with warnings.catch_warnings():
            warnings.simplefilter("error", MemoryBudgetWarning)
            c = lowered(budget).compile()
        assert memory.plan_of(c.lowered._stage("optimized")).packing == packing
        analysis = c.memory_analysis()
        assert analysis.iree_transient_size_in_bytes <= budget
        assert analysis.data_tiling.startswith("on" if packing == "kept" else "off, given up")
        for g, w in zip(ember.tree_util.tree_leaves(c(ps, x)),
                        jax.tree_util.tree_leaves(want)):
            w = np.asarray(w)
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4,
                                       atol=2e-6 * np.abs(w).max())


def test_matrix_vector_programs_compile_without_data_tiling():
    """IREE's data tiling would copy the matrix argument of a matrix-vector product into a
    packed layout at every call: such programs compile without it (the plan says so, IREE's
    transient memory has no packed copy, ember's prediction follows), matrix products and
    constant matrices keep it, and the results are NumPy's."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((512, 512)) / 24).astype(np.float32)
    x = rng.standard_normal(512).astype(np.float32)
    mv = ember.jit(lambda w, x: enp.tanh(w @ x) @ w).lower(w, x)
    assert not _plan(mv).data_tiling
    flags = memory.planned_flags(mv._stage("optimized"), cpu.compiler_flags())
    assert "--iree-opt-data-tiling=false" in flags
    plain = program_statistics(mv.as_text("linalg"), flags).transient_memory_size
    tiled = program_statistics(mv.as_text("linalg"), cpu.compiler_flags()).transient_memory_size
    assert plain + w.nbytes <= tiled, (plain, tiled)
    c = mv.compile()
    m = c.memory_analysis()
    assert m.iree_transient_size_in_bytes == plain
    assert abs(m.transient_size_in_bytes - plain) <= 0.1 * plain
    assert m.data_tiling == "off, matrix-vector products only"
    np.testing.assert_allclose(np.asarray(c(w, x)), np.tanh(w @ x) @ w, rtol=1e-4, atol=1e-5)
    ws, xs = np.stack([w, 2 * w]), np.stack([x, -x])
    assert not _plan(ember.jit(ember.vmap(lambda w, x: w @ x)).lower(ws, xs)).data_tiling
    assert _plan(ember.jit(lambda a, b: a @ b).lower(w, w)).data_tiling
    assert _plan(ember.jit(lambda v: w @ v).lower(x)).data_tiling          # packed once
    assert _plan(ember.jit(lambda a, v: (a @ v, a @ a)).lower(w, x)).data_tiling


def test_missed_budget_is_reported():
    x = np.ones((N, N), np.float32)
    f = ember.jit(lambda a: (a @ a) @ a, memory_budget="1kB")
    with pytest.warns(MemoryBudgetWarning, match=r"budget of 1000 bytes is missed: IREE's "
                      r"transient memory is \d+ bytes.*and data tiling is off already"):
        c = f.lower(x).compile()
    m = c.memory_analysis()
    assert m.budget_in_bytes == 1000 and m.budget_judged_by == "IREE"
    assert m.budget_missed_in_bytes == m.iree_transient_size_in_bytes - 1000


# --- donation -------------------------------------------------------------------------------

def _pointer(a):
    return a._bv.map().asarray(a.shape, a.dtype).ctypes.data


def sgd(p, g):
    return p - 0.01 * g


def test_donated_buffer_holds_the_result():
    p0 = np.random.default_rng(2).standard_normal((N, N)).astype(np.float32)
    g = np.ones((N, N), np.float32)
    p = ember.device_put(p0)
    where = _pointer(p)
    new = ember.jit(sgd, donate_argnums=0)(p, g)
    np.testing.assert_allclose(np.asarray(new), p0 - 0.01 * g, rtol=1e-6)
    assert _pointer(new) == where
    assert p.is_deleted() and not new.is_deleted()


def test_donation_into_a_pool_program():
    """A large program runs on local-task with IREE's asynchronous calls, the donated buffer
    passed before the fences: it still receives the result."""
    p0 = np.random.default_rng(3).standard_normal((1024, 1024)).astype(np.float32)
    g = np.ones((1024, 1024), np.float32)
    f = ember.jit(sgd, donate_argnums=0)
    p = ember.device_put(p0)
    assert f.lower(p, g).compile().executable.device.driver == "local-task"
    where = _pointer(p)
    new = f(p, g)
    np.testing.assert_allclose(np.asarray(new), p0 - 0.01 * g, rtol=1e-6)
    assert _pointer(new) == where and p.is_deleted()


def test_donation_allocates_no_output_buffer():
    g = np.ones((512, 512), np.float32)
    plain = ember.jit(sgd).lower(g, g).compile().memory_analysis()
    donated = ember.jit(sgd, donate_argnums=0).lower(g, g).compile().memory_analysis()
    assert plain.iree_transient_size_in_bytes == g.nbytes   # the result, written then copied
    assert donated.iree_transient_size_in_bytes == 0
    assert donated.alias_size_in_bytes == g.nbytes and plain.alias_size_in_bytes == 0


def test_using_a_donated_array_raises():
    f = ember.jit(sgd, donate_argnames="p")
    p = ember.device_put(np.ones(8, np.float32))
    f(p, np.ones(8, np.float32))
    with pytest.raises(DonatedArrayError, match="donated to sgd"):
        np.asarray(p)
    with pytest.raises(DonatedArrayError, match="donated"):
        f(p, np.ones(8, np.float32))
    with pytest.raises(DonatedArrayError, match="donated"):
        p + 1
    assert "deleted" in repr(p)
    assert p.shape == (8,)


def test_repeated_donating_calls_take_the_last_signature_path():
    """Calls with the signature of the last one skip flattening and keys (JitFunction._last)
    with donation too: each still donates, and its checks still run."""
    f = ember.jit(sgd, donate_argnums=0)
    g = ember.device_put(np.full(8, 2.0, np.float32))
    p = ember.device_put(np.zeros(8, np.float32))
    for _ in range(3):
        old, p = p, f(p, g)
        assert old.is_deleted() and f._last is not None
        with pytest.raises(DonatedArrayError, match="donated to sgd"):
            f(old, g)
    np.testing.assert_allclose(np.asarray(p), -0.06 * np.ones(8), rtol=1e-6)
    with pytest.raises(DonationError, match="also passed as leaf #1"):
        f(g, g)
    assert not g.is_deleted()
    np.testing.assert_array_equal(np.asarray(g), np.full(8, 2.0, np.float32))


@pytest.mark.parametrize("share", [
    lambda x: x.copy(),
    lambda x: ember.jit(lambda a: (a, a * 2))(x)[0],      # IREE returns the argument's buffer
    lambda x: ember.jit(lambda a: a.reshape(2, 4))(x),
    lambda x: enp.reshape(x, (4, 2)),
    lambda x: ember.jit(lambda a, p: lax.cond(p, lambda: a, lambda: a + 1))(x, True),
    lambda x: ember.jit(lambda a, b: (a, b - 1), donate_argnums=1)(x, np.ones(8, np.float32))[0],
], ids=["copy", "returned", "reshaped", "eager_reshape", "cond", "kept_beside_donated"])
def test_donating_an_array_leaves_the_arrays_made_from_it_as_they_are(share):
    # Was a silently wrong result: these shared the donated buffer, which took the result.
    x = ember.device_put(np.arange(8, dtype=np.float32))
    other = share(x)
    ember.jit(lambda p: p * 100, donate_argnums=0)(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(other).ravel(), np.arange(8, dtype=np.float32))
    with pytest.raises(DonatedArrayError):
        x.copy()


def test_a_branch_returning_an_argument_on_a_later_call_only():
    # Which results are an argument's buffer is found on a program's first call; with an
    # scf.if it is looked at on every call (here the first call computes, the second does not).
    f = ember.jit(lambda a, p: lax.cond(p, lambda: a, lambda: a + 1))
    x = ember.device_put(np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(f(x, False)), np.arange(8) + 1)
    kept = f(x, True)
    ember.jit(lambda p: p * 100, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(kept), np.arange(8, dtype=np.float32))


def test_donation_in_a_loop_and_pytrees():
    @ember.jit
    def step(state, g):
        return {"p": state["p"] - g, "v": state["v"] * 0.5}
    step_d = ember.jit(step.fun, donate_argnums=0)
    state = {"p": ember.device_put(np.zeros(4, np.float32)),
             "v": ember.device_put(np.ones(4, np.float32))}
    for _ in range(3):
        old = state
        state = step_d(state, np.ones(4, np.float32))
        assert old["p"].is_deleted() and old["v"].is_deleted()
    np.testing.assert_allclose(np.asarray(state["p"]), -3 * np.ones(4))
    np.testing.assert_allclose(np.asarray(state["v"]), 0.125 * np.ones(4))


def test_numpy_arguments_may_be_donated():
    x = np.arange(4, dtype=np.float32)
    out = ember.jit(lambda a: a * 2, donate_argnums=0)(x)
    np.testing.assert_allclose(np.asarray(out), x * 2)
    np.testing.assert_allclose(x, np.arange(4))      # the host array is untouched


@pytest.mark.parametrize("fun, why", [
    (lambda p: p.T * 2, "read by ember.transpose"),
    (lambda p: enp.flip(p, 0) + p, "read by ember.rev"),
    (lambda p: p @ p, "read by ember.dot_general"),
    (lambda p: (p * 2, p.sum()), "read by ember.reduce_sum"),
    (lambda p: (p * 2, p + 1), "several results"),
    (lambda p: p.sum(), "no result has its type"),
])
def test_unsafe_donation_is_refused_and_results_are_right(fun, why):
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    expected = ember.jit(fun)(x)
    p = ember.device_put(x)
    with pytest.warns(DonationWarning, match=why):
        got = ember.jit(fun, donate_argnums=0)(p)
    for e, g in zip(ember.tree_util.tree_leaves(expected), ember.tree_util.tree_leaves(got)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
    assert not p.is_deleted()
    np.testing.assert_array_equal(np.asarray(p), x)


def test_donation_strict(config_value):
    config_value("donation_strict", True)
    f = ember.jit(lambda p: p.sum(), donate_argnums=0)
    with pytest.raises(DonationError, match="argument 'p' cannot be reused.*donation_strict"):
        f(np.ones(3, np.float32))


def test_bad_donations():
    def f(a, b):
        return a + b
    with pytest.raises(DonationError, match="both static and donated"):
        ember.jit(f, static_argnums=1, donate_argnums=1)
    with pytest.raises(DonationError, match="both static and donated"):
        ember.jit(f, static_argnames="b", donate_argnames="b")
    with pytest.raises(DonationError, match="'c' is not a parameter"):
        ember.jit(f, donate_argnames="c")
    with pytest.raises(DonationError, match="argument 'a' is a float, not an array"):
        ember.jit(f, donate_argnums=0)(1.0, np.ones(3, np.float32))
    g = ember.jit(f, donate_argnums=(0, 1))
    a = ember.device_put(np.ones(3, np.float32))
    with pytest.raises(DonationError, match="same array is donated twice"), \
            pytest.warns(DonationWarning, match="argument 'b' cannot be reused"):
        g(a, a)
    assert not a.is_deleted()
    h = ember.jit(f, donate_argnums=0)
    with pytest.raises(DonationError, match="also passed as leaf #1"):
        h(a, a)
    assert not a.is_deleted()


# --- checkpoint ------------------------------------------------------------------------------

def test_checkpoint_same_results_and_marked():
    w = np.random.default_rng(3).standard_normal((8, 8)).astype(np.float32)
    block = ember.checkpoint(lambda x: enp.tanh(x @ w) * 2)
    f = ember.jit(lambda x: block(block(x)) + 1)
    x = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
    ref = np.tanh(np.tanh(x @ w) * 2 @ w) * 2 + 1
    np.testing.assert_allclose(np.asarray(f(x)), ref, rtol=1e-5, atol=1e-6)
    assert f.lower(x).as_text("ember").count('ember.checkpoint = "nothing_saveable"') == 2
    np.testing.assert_allclose(np.asarray(block(x)), np.tanh(x @ w) * 2, rtol=1e-5)
    assert ember.remat is ember.checkpoint


def test_checkpoint_under_vmap_and_policies():
    block = ember.checkpoint(lambda x: x @ x.T, policy="dots_saveable")
    assert block.policy == "dots_saveable"
    x = np.random.default_rng(5).standard_normal((3, 4, 4)).astype(np.float32)
    out = ember.jit(ember.vmap(block))(x)
    np.testing.assert_allclose(np.asarray(out), x @ x.transpose(0, 2, 1), rtol=1e-5)

    def everything_saveable():
        pass
    assert ember.checkpoint(lambda x: x, policy=everything_saveable).policy == \
        "everything_saveable"
    with pytest.raises(ArgumentError, match="policy 'save_some' is not supported"):
        ember.checkpoint(lambda x: x, policy="save_some")


def test_checkpoint_is_recomputed_under_a_budget():
    w = np.eye(N, dtype=np.float32)
    block = ember.checkpoint(lambda x: x @ w + 1.0)

    def f(x):
        c = block(x)
        t = (x @ c) @ x
        s = enp.concatenate([t, t, t, t], axis=1).sum()
        return (c * s).sum()

    x = np.ones((N, N), np.float32) / N
    # Unfused: the peak is the concatenation, across which c stays live unused.
    free = ember.jit(f, fusion=False).lower(x)
    tight = ember.jit(f, fusion=False, memory_budget=_plan(free).peak_bytes - 1).lower(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryBudgetWarning)
        got = tight.compile()(x)
    assert tight.as_text("optimized").count("ember.checkpoint") == 2
    assert free.as_text("optimized").count("ember.checkpoint") == 1
    np.testing.assert_allclose(np.asarray(got), np.asarray(free.compile()(x)), rtol=1e-5)


_W = np.linspace(-1, 1, 512 * 512, dtype=np.float32).reshape(512, 512)


def _scan_update(w):
    def body(buf, row):
        buf = buf.at[0].add(row) * 0.999
        return buf, buf[0].sum()
    buf, ys = lax.scan(body, w, w[:16])
    return buf.sum() + ys.sum()


def _step(c, row):                      # a new buffer each step
    return c * 0.5 + row, c.sum()


def _update_row(buf, row):              # the carry's buffer updated in place
    buf = buf.at[0].add(row)
    return buf, buf[0].sum()


@pytest.mark.parametrize("fun", [
    lambda w: lax.fori_loop(0, 4, lambda i, b: b * 0.5 + 1.0, w).sum(),
    lambda w: sum(x.sum() for x in lax.fori_loop(
        0, 4, lambda i, c: (c[0] * 0.5, c[1] + c[0]), (w, w * 2.0))),
    lambda w: lax.while_loop(lambda c: c[1] < 3, lambda c: (enp.tanh(c[0]), c[1] + 1),
                             (w, 0))[0].sum(),
    _scan_update,
    lambda w: lax.scan(_step, w, w[:16])[0],
    lambda w: lax.scan(_step, w * 2.0, w[:16])[0],
    lambda w: lax.scan(_update_row, w, w[:16])[0],
    lambda w: lax.scan(_update_row, w * 2.0, w[:16])[0],
    lambda w: lax.scan(_update_row, w * 2.0, w[:16])[0].sum(),
    lambda w: (lambda t: (lax.scan(_update_row, t, w[:16])[0], t.sum()))(w * 2.0),
    lambda w: lax.cond(w[0, 0] > 0, lambda: w @ w, lambda: w * 3.0).sum(),
    lambda w: (lax.cond(w[0, 0] > 0, lambda: w @ w, lambda: w * 3.0) @ w).sum(),
    lambda w: lax.scan(_update_row, enp.zeros_like(w), w[:16]),
    lambda w: lax.scan(_step, enp.zeros_like(w), w[:16])[0],
    lambda w: lax.fori_loop(0, 4, lambda i, b: b.at[i].set(w[i]), enp.zeros_like(w)),
    lambda w: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 0.5 + w, c[1] + 1),
                             (enp.ones_like(w), 0))[0].sum(),
    lambda w: lax.scan(lambda c, r: (enp.sort(c + r, axis=1), c[0, 0]), w * 2.0, w[:8])[0],
    lambda w: lax.fori_loop(0, 4, lambda i, c: enp.sort(c * 0.5, axis=1), w * 2.0),
    lambda w: lax.fori_loop(0, 4, lambda i, c: enp.sort(c, axis=1), w * 2.0),
], ids=["fori", "fori_two_carries", "while", "scan", "scan_returns_carry",
        "scan_from_temporary", "scan_in_place_from_argument", "scan_in_place_from_temporary",
        "scan_in_place_then_reduced", "scan_in_place_from_a_shared_kernel", "cond_matmul",
        "cond_then_matmul", "scan_in_place_from_zeros", "scan_from_zeros", "fori_from_zeros",
        "while_from_ones", "scan_sorting_a_sum", "fori_sorting_a_product",
        "fori_sorting_its_carry"])
def test_control_flow_prediction_matches_iree(fun):
    """Control flow's own buffers (loop carries, branch results, packed operands of the
    matmuls inside) are in ember's prediction: within 1% of IREE's transient memory. A scan
    whose step makes a new buffer and one that updates its carry in place, starting from an
    argument (copied when written into), a temporary (updated in its own buffer, unless
    that buffer is shared with another result of its kernel) or a broadcast of one element
    (a buffer of the loop's own, which IREE made a constant and copied: 3 MiB for the
    in-place scan's 1 MiB carry); a sort in a step, of a value the step computes (a buffer
    of its own) or of the carry."""
    m = ember.jit(fun).lower(_W).compile().memory_analysis()
    assert m.transient_size_in_bytes == pytest.approx(m.iree_transient_size_in_bytes, rel=0.01)


@pytest.mark.parametrize("fun", [
    lambda w: enp.sort(w, axis=1),
    lambda w: enp.sort(w * 2.0, axis=1),
    lambda w: enp.sort(w * 2.0, axis=1).sum(),
    lambda w: enp.sort(w, axis=0),
    lambda w: enp.sort(w.ravel()),
    lambda w: enp.argsort(w, axis=1),
    lambda w: lax.sort((w, w * 2.0), dimension=0, num_keys=1),
    lambda w: enp.sort(w[:, :16] * 2.0, axis=1),
    lambda w: enp.argsort(w[:128, :16], axis=1),
], ids=["rows_of_argument", "rows_of_temporary", "then_reduced", "columns", "flattened",
        "argsort", "key_and_value", "short_rows", "short_argsort"])
def test_sort_prediction_matches_iree(fun):
    """A sort's own buffers are in ember's prediction, within 1% of IREE's transient memory:
    the sorting network's packed operands (twice: a stage writes them anew), a small sort's
    position tiebreak, a network's results unpacked inside a reduction reading them."""
    m = ember.jit(fun).lower(_W).compile().memory_analysis()
    assert m.transient_size_in_bytes == pytest.approx(m.iree_transient_size_in_bytes, rel=0.01)


@pytest.mark.parametrize("init", [enp.zeros_like, lambda w: enp.full_like(w, 2.0)])
def test_a_loop_from_a_splat_updates_a_fresh_buffer_at_each_call(init):
    """A carry starting as a broadcast of one element is computed at each call (not made a
    constant by IREE, ember-split-loop-inits): updated in place, it must start anew."""
    f = ember.jit(lambda w: lax.scan(_update_row, init(w), w[:16])[0])
    expected = np.asarray(init(_W)).copy()
    expected[0] += _W[:16].sum(0)
    for _ in range(3):          # (IREE writing into a constant would change the later calls)
        np.testing.assert_allclose(np.asarray(f(_W)), expected, rtol=1e-5)


@pytest.mark.parametrize("name", [f.__name__ for f in memory_benchmark.PROGRAMS])
def test_prediction_matches_iree_on_the_benchmark_programs(name):
    """ember's prediction of IREE's transient memory (temporaries, packed operand copies,
    control flow's buffers, and the results) is within 10% of IREE's figure on each program of
    benchmarks/memory.py (at 256x256)."""
    fun = next(f for f in memory_benchmark.PROGRAMS if f.__name__ == name)
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal((256, 256)).astype(np.float32) / 16 for _ in range(2))
    m = ember.jit(lambda *a: fun(memory_benchmark.EMBER, *a)).lower(x, w).compile() \
        .memory_analysis()
    assert m.transient_size_in_bytes == pytest.approx(m.iree_transient_size_in_bytes, rel=0.1)


def _three_layers(x, w1, w2, w3, b):
    h = enp.tanh(x @ w1 + b)
    g = enp.tanh(h @ w2 + b)
    return enp.sum((g @ w3) * h, axis=0)


def _deep_loss(ws, x):
    for w in ws:
        x = enp.tanh(x @ w)
    return enp.sum(x * x)


@pytest.mark.parametrize("program", ["forward", "gradient"])
def test_budget_is_judged_by_iree(program, config_value):
    """A budget given to jit is met by IREE's own transient figure (read from the compile
    itself, recomputed here from the final program by a separate compile), or the user is
    told with both numbers; ember plans again, tighter, when IREE exceeds the budget."""
    rng = np.random.default_rng(7)
    x, w1, w2, w3 = (rng.standard_normal((N, N)).astype(np.float32) / 16 for _ in range(4))
    if program == "forward":
        fn, args = _three_layers, (x, w1, w2, w3, rng.standard_normal(N).astype(np.float32))
    else:
        fn, args = ember.grad(_deep_loss), ([w1, w2, w3, w1, w2, w3], x)
    free = ember.jit(fn).lower(*args).compile()
    want = [np.asarray(v) for v in ember.tree_util.tree_leaves(free(*args))]
    unbudgeted = free.memory_analysis().iree_transient_size_in_bytes
    assert free.memory_analysis().budget_judged_by == "ember plan"
    for fraction in (0.9, 0.4):
        budget = int(unbudgeted * fraction)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = ember.jit(fn, memory_budget=budget).lower(*args).compile()
        lowered = c.lowered
        flags = memory.planned_flags(lowered._stage("optimized"), cpu.compiler_flags())
        iree = program_statistics(lowered.as_text("linalg"), flags).transient_memory_size
        m = c.memory_analysis()
        assert m.iree_transient_size_in_bytes == iree and m.budget_judged_by == "IREE"
        assert m.budget_in_bytes == budget and m.budget_missed_in_bytes == max(0, iree - budget)
        missed = [w for w in caught if issubclass(w.category, MemoryBudgetWarning)]
        if iree > budget:
            assert len(missed) == 1 and f"IREE's transient memory is {iree} bytes" in \
                str(missed[0].message) and f"budget of {budget} bytes" in str(missed[0].message)
            # The compile kept is the one of the lowest figure: the first (as planned) or a
            # tighter plan's, which the pipeline then shows.
            if lowered.plan_budget is not None:
                assert lowered.plan_budget < budget
                assert f"budget={lowered.plan_budget}" in lowered.pipeline("optimized")
                assert "planned again" in str(missed[0].message)
            config_value("memory_budget_strict", True)
            with pytest.raises(MemoryBudgetExceededError, match="memory_budget_strict"):
                ember.jit(fn, memory_budget=budget).lower(*args).compile()
            config_value("memory_budget_strict", False)
        else:
            assert not missed, [str(w.message) for w in missed]
        for got, ref in zip(ember.tree_util.tree_leaves(c(*args)), want):
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)
    # The lowest budget is missed by both programs (nothing left to recompute): the
    # branch above that checks the warning ran.
    assert iree > budget


def test_a_missed_budget_plans_again_below_the_models_own_peak(monkeypatch):
    """When IREE's figure exceeds the budget, the next plan's budget is lower by what IREE
    needed beyond the plan's own modelled peak where that is more than the miss: a plan with
    slack under its budget in the model would not change when the budget tightened by the
    miss alone (the 8-block transformer's gradient at 3/4 of the way, issue 37, was compiled
    three times to the same figure). IREE's figure is made larger here, by the test."""
    from ember.backends.statistics import ProgramStatistics
    from ember.frontend import api
    rng = np.random.default_rng(5)
    ws = [rng.standard_normal((N, N)).astype(np.float32) / 16 for _ in range(4)]
    x = rng.standard_normal((N, N)).astype(np.float32)
    fn = ember.grad(_deep_loss)
    free = ember.jit(fn).lower(ws, x).compile().memory_analysis().iree_transient_size_in_bytes
    budget = 2 * free           # the model's plan has slack under it
    real, replans, excess = api.compile_with_statistics, [], free

    def inflated(text, flags, fallbacks):
        vmfb, stats = real(text, flags, fallbacks)
        return vmfb, ProgramStatistics(stats.dispatch_count, stats.executable_count,
                                       budget + excess, stats.raw)
    monkeypatch.setattr(api, "compile_with_statistics", inflated)
    monkeypatch.setattr(api.Lowered, "replan",
                        lambda self, b, real=api.Lowered.replan: (replans.append(b),
                                                                  real(self, b)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryBudgetWarning)
        c = ember.jit(fn, memory_budget=budget).lower(ws, x).compile()
    plan = memory.plan_of(ember.jit(fn, memory_budget=budget).lower(ws, x)._stage("optimized"))
    assert plan.peak_bytes < budget                                 # slack in the model
    assert replans[0] == budget - (budget + excess - plan.peak_bytes)
    assert replans[0] < budget - excess                             # (the miss alone)
    want = [np.asarray(v) for v in ember.tree_util.tree_leaves(ember.jit(fn)(ws, x))]
    for got, ref in zip(ember.tree_util.tree_leaves(c(ws, x)), want):
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)


def _wide_blocks(ws, x):
    for w1, w2 in ws:
        x = x + enp.tanh(x @ w1) @ w2
    return enp.sum(x * x)


def test_budget_recomputes_a_gradient_programs_activations():
    """Under a budget, the planner recomputes a layer's contraction and its epilogue (a
    fusion of several results: every later use reads the copy) in the backward pass instead
    of keeping its wide activations: IREE's own figure (a separate compile) falls within a
    budget of 0.6 of the unbudgeted figure, and the gradients stay those of the program
    without a budget and JAX's."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(11)
    ws = [(rng.standard_normal((128, 512)).astype(np.float32) / 12,
           rng.standard_normal((512, 128)).astype(np.float32) / 24) for _ in range(6)]
    x = rng.standard_normal((512, 128)).astype(np.float32)
    grad = ember.grad(_wide_blocks)
    free = ember.jit(grad).lower(ws, x).compile()
    budget = int(0.6 * free.memory_analysis().iree_transient_size_in_bytes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryBudgetWarning)
        tight = ember.jit(grad, memory_budget=budget).lower(ws, x).compile()
    lowered = tight.lowered
    flags = memory.planned_flags(lowered._stage("optimized"), cpu.compiler_flags())
    assert program_statistics(lowered.as_text("linalg"), flags).transient_memory_size <= budget
    assert lowered.memory_plan().rematerialized >= 1
    assert any("ember.rematerialized" in line and ('kind = "output"' in line or
                                                   "ember.dot_general" in line)
               for line in lowered.as_text("optimized").splitlines())
    jnp = jax.numpy

    def jax_loss(ws, x):
        for w1, w2 in ws:
            x = x + jnp.tanh(x @ w1) @ w2
        return jnp.sum(x * x)
    want = jax.grad(jax_loss)(ws, x)
    for g, f, w in zip(ember.tree_util.tree_leaves(tight(ws, x)),
                       ember.tree_util.tree_leaves(free(ws, x)), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(f), rtol=1e-6, atol=1e-6)
        w = np.asarray(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-6 * np.abs(w).max())


def _sin_chain(m, ws, x):
    for w in ws:
        x = m.sin(x @ w)
    return m.sum(x * x)


def test_budget_recomputes_a_chain_of_layers():
    """A chain of layers (a program the planner was not tuned on): under a budget the
    planner recomputes several consecutive layers in the backward pass, each copy reading the
    copy of the layer before it (not the kept original, which would stay live), so IREE's
    own figure falls to 0.7 of the unbudgeted one or below; the gradients are JAX's."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    ws = [rng.standard_normal((192, 192)).astype(np.float32) / 14 for _ in range(8)]
    x = rng.standard_normal((96, 192)).astype(np.float32)
    grad = ember.grad(lambda ws, x: _sin_chain(enp, ws, x))
    free = ember.jit(grad).lower(ws, x).compile().memory_analysis().iree_transient_size_in_bytes
    returned = sum(w.nbytes for w in ws)    # the floor: IREE's figure counts the gradients
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryBudgetWarning)
        tight = ember.jit(grad, memory_budget=int(returned + 0.3 * (free - returned))) \
            .lower(ws, x).compile()
    assert tight.memory_analysis().iree_transient_size_in_bytes <= 0.7 * free
    module = _parse(tight.as_text("optimized"))
    copies = [op for op in module.body.operations[0].regions[0].blocks[0].operations
              if "ember.rematerialized" in op.attributes]
    made = {r for op in copies for r in op.results}
    assert any(v in made for op in copies for v in op.operands), "no copy reads a copy"
    want = jax.grad(lambda ws, x: _sin_chain(jax.numpy, ws, x))(ws, x)
    for g, w in zip(tight(ws, x), want):
        w = np.asarray(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-6 * np.abs(w).max())


def _softmax_blocks(m, ws, x):
    for w1, w2 in ws:
        s = x @ w1
        p = m.exp(s - m.max(s, axis=-1, keepdims=True))
        x = x + (p / m.sum(p, axis=-1, keepdims=True)) @ w2
    return m.sum(x * x)


def test_budget_checkpoints_segments_of_layers():
    """Residual blocks whose wide values come from reductions (a softmax), which op-by-op
    rematerialization cannot recompute (it missed this budget at 0.98 of the unbudgeted
    figure): ember-auto-checkpoint checkpoints segments of blocks, IREE's own figure falls
    within a budget of 0.3 of the way from the returned gradients to the unbudgeted figure,
    and the gradients are JAX's."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    ws = [(rng.standard_normal((64, 256)).astype(np.float32) / 8,
           rng.standard_normal((256, 64)).astype(np.float32) / 16) for _ in range(6)]
    x = rng.standard_normal((128, 64)).astype(np.float32)
    grad = ember.grad(lambda ws, x: _softmax_blocks(enp, ws, x))
    free = ember.jit(grad).lower(ws, x).compile().memory_analysis().iree_transient_size_in_bytes
    returned = sum(a.nbytes + b.nbytes for a, b in ws)
    budget = int(returned + 0.3 * (free - returned))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryBudgetWarning)
        tight = ember.jit(grad, memory_budget=budget).lower(ws, x).compile()
    assert tight.memory_analysis().iree_transient_size_in_bytes <= budget
    # The backward pass recomputes the softmax's reductions: only a checkpoint does.
    assert any('"ember.reduce_max"' in line and "ember.rematerialized" in line
               for line in tight.as_text("optimized").splitlines())
    want = jax.grad(lambda ws, x: _softmax_blocks(jax.numpy, ws, x))(ws, x)
    for g, w in zip(ember.tree_util.tree_leaves(tight(ws, x)), jax.tree_util.tree_leaves(want)):
        w = np.asarray(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-6 * np.abs(w).max())


def _activation_blocks(m, nn, ws, x):
    for w1, w2, w3 in ws:
        x = x + nn.softmax(x @ w1, axis=-1) @ w2
        x = x + nn.gelu(x @ w3) @ w2
    return m.sum(x * x)


def test_budget_checkpoints_through_custom_derivatives():
    """ember.nn's softmax and gelu are custom JVPs (JAX's rules); ember-auto-checkpoint puts
    them inside its segments as any op (kept out, they split every block around its
    activations, and no choice met this budget: 2.1x it). IREE's figure within the budget,
    the recomputation marked through the custom rules (CSE had merged their copies back into
    the forward pass), the gradients JAX's."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(8)
    ws = [(rng.standard_normal((64, 256)).astype(np.float32) / 8,
           rng.standard_normal((256, 64)).astype(np.float32) / 16,
           rng.standard_normal((64, 256)).astype(np.float32) / 8) for _ in range(6)]
    x = rng.standard_normal((256, 64)).astype(np.float32)
    grad = ember.grad(lambda ws, x: _activation_blocks(enp, ember.nn, ws, x))
    free = ember.jit(grad).lower(ws, x).compile().memory_analysis().iree_transient_size_in_bytes
    returned = sum(a.nbytes + b.nbytes + c.nbytes for a, b, c in ws)
    budget = int(returned + 0.3 * (free - returned))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryBudgetWarning)
        tight = ember.jit(grad, memory_budget=budget).lower(ws, x).compile()
    assert tight.memory_analysis().iree_transient_size_in_bytes <= budget, (free, budget)
    assert any('"ember.tanh"' in line and "ember.rematerialized" in line
               for line in tight.as_text("optimized").splitlines())
    want = jax.grad(lambda ws, x: _activation_blocks(jax.numpy, jax.nn, ws, x))(ws, x)
    for g, w in zip(ember.tree_util.tree_leaves(tight(ws, x)), jax.tree_util.tree_leaves(want)):
        w = np.asarray(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-6 * np.abs(w).max())
