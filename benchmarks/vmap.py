"""``ember.vmap`` against a Python loop, hand-batched code and JAX: ``python -m benchmarks.vmap``.

Run from the repository root (see ``benchmarks/__main__.py`` for why the variables are unset):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.vmap           # ~1 minute
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.vmap --quick

For each per-example function (issue 4, "Measured"), over a batch of 256:

- ``ember.jit(ember.vmap(f))`` (the subject), against
- (a) a Python loop calling ``ember.jit(f)`` once per example (arguments already uploaded, one
  array per example; the results are not stacked, which favours the loop),
- (b) the same function written batched by hand in ``ember.numpy`` under ``ember.jit``,
- (c) ``jax.jit(jax.vmap(f))`` of the same per-example code on ``jax.numpy`` (n/a without JAX).

The per-example functions: a 3-layer MLP forward on one 512-vector (weights shared,
``in_axes=(None, 0)``); the Euclidean distance of two 512-vectors (both batched); the same
distance for all 256x256 pairs of two sets through a nested vmap (the loop makes 65536
calls); Newton's iteration for sqrt in an ``ember.lax.while_loop`` that stops per lane when
``|x*x - a| <= 2e-6 a`` (the inputs span 1e-4..1e4, so lanes need 1 to ~20 steps).

Times are medians of single calls after warm-up, the contenders interleaved in batches
(``benchmarks/timing.py``); inputs are on each executable's device beforehand. The IREE
dispatch count of the vmapped and the hand-batched program is read from IREE's scheduling
statistics (``dispatch-count`` under ``stream-aggregate.execution``) for the same linalg
text ember compiles. Every result is checked against NumPy once; a wrong one shows WRONG and
the exit status is 1. Targets: vmap within 1.2x of hand-batched, >= 50x faster than the
Python loop, no slower than JAX, and no more dispatches than hand-batched (batching must not
break fusion).

Figures (2-core development machine, 2026-12-01, idle; ``this/vmap`` is the other's time
over vmap's):

    case                         vmap         hand-batched  Python loop  jax.vmap     dispatches
    mlp3 512, 256 rows           2.08-2.16 ms 0.98-1.00x    32x          0.94-0.97x   10 vs 10
    distance 2x512, 256 pairs    13.6-14.6 us 0.97-1.03x    111-124x     8.3-9.0x     1 vs 1
    distance 256x256 (nested)    783-806 us   0.98-1.02x    503-515x     7.0-7.1x     1 vs 1
    newton while_loop 256 lanes  6.6 us       7.6-8.8x      1272-1332x   9-14x        1 vs 4

On 2026-12-02 (the same kind of machine, another day): the MLP 1.45 ms, 0.98x hand-batched,
31x the loop (bound at that run's sgemm rate: 43x), JAX 1.07x its time; widths 128, 256 and
1024 gave 21-30x the loop (a call of the width-128 MLP costs 16 us, so the loop is cheap).

Met: no more dispatches than hand-batched everywhere, within 1.2x of hand-batched, 50x the
loop but for the MLP, JAX's speed (the MLP: on 2026-12-02, not on 2026-12-01). Since the
CPU driver follows a program's loop iterations (``ember/backends/cpu.py``), the 256-pair
distance runs on local-sync. A vmapped while_loop whose body is scalar code per lane is an
``ember.map`` (``ember/dialects/control_flow.py``): one dispatch in which each lane runs
its own loop, no condition read back to the host per step.

The MLP: until 2026-12-01 it ran 3.5-4.7 ms here (0.78-0.92x JAX's speed, 22-40x the loop):
IREE 3.13's wait in a synchronous call spun on the calling thread, taking one of the two
cores from local-task's workers in 40% of the calls. Programs for local-task are now
called asynchronously and waited for asleep (``ember/backends/runtime.py``,
``benchmarks/calls.py``): 2.08-2.16 ms, 1.03-1.06x JAX's time. What remains is IREE's matmul
code against XLA's (JAX 0.10 calls YNNPACK for each dot, "__ynn_fusion"): single-threaded
the MLP takes 3.05-3.15 ms in IREE and 2.47-2.58 ms in XLA; and IREE packs the three weight
matrices for its data-tiled matmul on every call (with the weights constant, 0.2 ms less).
The vmapped program is the hand-batched one op for op
(``tests/test_vmap.py::test_vmapped_mlp_lowers_like_hand_batched``), so the gap is not
batching; IREE's ukernels (0.5% faster), data tiling off (15-25% slower),
``--task_worker_spin_us`` (no faster) did not close it.

The loop: 48-53x with data tiling, 32x since the per-example program (three matrix-vector
products) compiles without it (``plan_memory.vector_products_only``): a call went from 0.39
to 0.27 ms (JAX: 0.21 ms), the loop from 99 to 70 ms. 50x that loop would need the batched
MLP in 1.4 ms, 290 GFLOP/s, which the line "bound at OpenBLAS's sgemm rate" puts beside the
machine's sgemm rate of the same run (1024x1024: 296-323 GFLOP/s, about what two cores
reach); JAX's own vmap is 27x its loop of 0.21 ms calls.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchmarks.timing import (
    Table,
    fmt_ratio,
    fmt_time,
    jax_modules,
    log,
    once_ns,
    per_call_ns,
    report_failures,
    steady_ns,
)

BATCH = 256
WIDTH = 512
TOL = 2e-6      # Newton sqrt: a lane stops when |x*x - a| <= TOL * a ...
MAXIT = 60      # ... or after MAXIT steps


# --- the programs, written once against a NumPy-like module ``m`` and a lax-like ``lax`` ----

def mlp(m, lax, params, x):
    """3-layer perceptron with relu between layers on one vector (or, as written, a batch)."""
    (w1, b1), (w2, b2), (w3, b3) = params
    h = m.maximum(x @ w1 + b1, 0.0)
    h = m.maximum(h @ w2 + b2, 0.0)
    return h @ w3 + b3


def mlp_batched(m, lax, params, xs):
    """The same MLP on a (batch, width) matrix: the matmuls batch themselves."""
    return mlp(m, lax, params, xs)


def dist(m, lax, x, y):
    """Euclidean distance of two vectors."""
    d = x - y
    return m.sqrt(m.sum(d * d))


def dist_batched(m, lax, xs, ys):
    """Row-wise distance of two (batch, width) matrices."""
    d = xs - ys
    return m.sqrt(m.sum(d * d, axis=-1))


def pairwise_batched(m, lax, xs, ys):
    """All-pairs distance matrix by broadcasting: out[i, j] = |xs[i] - ys[j]|."""
    d = xs[:, None, :] - ys[None, :, :]
    return m.sqrt(m.sum(d * d, axis=-1))


def _newton_step(a, x):
    return 0.5 * (x + a / x)


def newton_sqrt(m, lax, a):
    """sqrt(a) of a scalar by Newton's iteration in a while_loop with a data-dependent stop."""
    def cond(c):
        x, i = c
        return (m.abs(x * x - a) > TOL * a) & (i < MAXIT)

    def body(c):
        x, i = c
        return _newton_step(a, x), i + 1

    x, _ = lax.while_loop(cond, body, (a, m.zeros_like(a, dtype=m.int32)))
    return x


def newton_sqrt_batched(m, lax, a):
    """The same iteration on a vector by hand: loop while any lane is active, freeze the rest."""
    def active(x, i):
        return (m.abs(x * x - a) > TOL * a) & (i < MAXIT)

    def cond(c):
        return m.any(active(*c))

    def body(c):
        x, i = c
        act = active(x, i)
        return m.where(act, _newton_step(a, x), x), m.where(act, i + 1, i)

    x, _ = lax.while_loop(cond, body, (a, m.zeros_like(a, dtype=m.int32)))
    return x


def _pairs(vmap, f):
    return vmap(vmap(f, in_axes=(None, 0)), in_axes=(0, None))


def _all_pairs(x, y):
    rows_y = list(y)  # the same row objects in every pair: each is uploaded once
    return [(xi, yj) for xi in x for yj in rows_y]


@dataclass
class Case:
    name: str
    per_example: Callable          # f(m, lax, *args) on one example
    batched: Callable              # the same, batched by hand
    vmapper: Callable              # (vmap, f) -> batched f, for ember.vmap and jax.vmap alike
    args: list                     # batched NumPy arguments
    loop_items: Callable           # batched NumPy args -> per-example argument tuples
    reference: Callable            # batched NumPy args -> NumPy result
    rtol: float
    atol: float
    flops: int = 0                 # of the batched computation, for a compute-bound case


def _f32(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cases(seed: int = 0) -> list[Case]:
    rng = np.random.default_rng(seed)
    params = [(_f32(rng, (WIDTH, WIDTH), 1 / np.sqrt(WIDTH)), _f32(rng, (WIDTH,), 0.1))
              for _ in range(3)]
    xs, ys = _f32(rng, (BATCH, WIDTH)), _f32(rng, (BATCH, WIDTH))
    a = np.exp(rng.uniform(np.log(1e-4), np.log(1e4), BATCH)).astype(np.float32)
    return [
        Case(f"mlp3 {WIDTH} relu, x {BATCH}", mlp, mlp_batched,
             lambda vmap, f: vmap(f, in_axes=(None, 0)), [params, xs],
             lambda p, x: [(p, xi) for xi in x],
             lambda p, x: mlp(np, None, p, x), 1e-4, 1e-4, flops=3 * 2 * BATCH * WIDTH**2),
        Case(f"distance of 2 x {WIDTH}, {BATCH} pairs", dist, dist_batched,
             lambda vmap, f: vmap(f), [xs, ys],
             lambda x, y: list(zip(x, y)),
             lambda x, y: dist_batched(np, None, x, y), 1e-5, 1e-5),
        Case(f"distance, {BATCH}x{BATCH} pairs (nested vmap)", dist, pairwise_batched,
             _pairs, [xs, ys],
             _all_pairs,
             lambda x, y: pairwise_batched(np, None, x, y), 1e-5, 1e-5),
        Case(f"newton sqrt while_loop, {BATCH} lanes", newton_sqrt, newton_sqrt_batched,
             lambda vmap, f: vmap(f), [a],
             lambda x: [(xi,) for xi in x],
             np.sqrt, 1e-5, 0),
    ]


# --- measuring --------------------------------------------------------------------------------

def sgemm_flops_per_ns() -> float:
    """NumPy's (OpenBLAS's) float32 matmul rate on this machine now, in GFLOP/s: the best of
    several 1024x1024 products, each timed on its own."""
    a = np.ones((1024, 1024), np.float32)
    np.dot(a, a)
    best = min(once_ns(lambda: np.dot(a, a))[0] for _ in range(20))
    return 2 * 1024**3 / best


def dispatch_count(jf, args) -> int:
    """IREE's ``dispatch-count`` for the linalg text ember compiles for ``jf(*args)``."""
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics

    text = jf.lower(*args).as_text("linalg")
    return program_statistics(text, cpu.compiler_flags(), cpu.fallback_flags()).dispatch_count


class Report:
    def __init__(self):
        self.table = Table(["case", "implementation", "median", "this/vmap", "dispatches"],
                           "<<>>>")
        self.failures: list[str] = []
        self.targets: list[str] = []
        self._case = None

    def row(self, case, impl, ns, vmap_ns=None, dispatches=None, *, note=None):
        """A row; with ``vmap_ns`` also this time over the vmapped time (> 1: vmap is faster)."""
        if case != self._case:
            self.table.section()
        show = case if case != self._case else ""
        self._case = case
        if impl.startswith("ember.jit(ember.vmap"):
            ratio = ""
        elif vmap_ns is None or ns is None or note:
            ratio = "n/a"
        else:
            ratio = fmt_ratio(ns / vmap_ns)
        self.table.add(show, impl, note or fmt_time(ns), ratio,
                       "" if dispatches is None else str(dispatches))

    def check(self, what, got, want, rtol, atol) -> bool:
        try:
            np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)
            return True
        except AssertionError as e:
            self.failures.append(f"{what}: result differs from NumPy:{e}")
            return False


def _put(tree, device):
    import ember
    from ember import tree_util
    return tree_util.tree_map(lambda x: ember.device_put(x, device), tree)


def run_case(rep: Report, case: Case, jax, jnp, quick: bool) -> None:
    import ember
    import ember.lax as elax
    import ember.numpy as enp
    from ember import tree_util

    name, args = case.name, case.args
    want = case.reference(*args)
    fns: dict[str, Callable[[], object]] = {}
    ok: dict[str, bool] = {}
    notes: dict[str, str] = {}
    disp: dict[str, int | None] = {}

    # ember.vmap (may raise NotImplementedError while a batching rule is missing).
    def per_example(*a):
        return case.per_example(enp, elax, *a)
    vmapped = ember.jit(case.vmapper(ember.vmap, per_example))
    log(f"{name}: ember vmap compile")
    try:
        out = vmapped(*args)
    except NotImplementedError as e:
        notes["vmap"] = "n/a (no rule yet)"
        log(f"{name}: ember.vmap: NotImplementedError: {str(e).splitlines()[0]}")
    else:
        ok["vmap"] = rep.check(f"ember vmap {name}", out, want, case.rtol, case.atol)
        vargs = _put(args, out.device)
        fns["vmap"] = lambda: vmapped(*vargs)
        disp["vmap"] = dispatch_count(vmapped, args)

    # (b) hand-batched ember.
    hand = ember.jit(lambda *a: case.batched(enp, elax, *a))
    log(f"{name}: ember hand-batched compile")
    out = hand(*args)
    ok["hand"] = rep.check(f"ember hand-batched {name}", out, want, case.rtol, case.atol)
    hargs = _put(args, out.device)
    fns["hand"] = lambda: hand(*hargs)
    disp["hand"] = dispatch_count(hand, args)

    # (c) jax.jit(jax.vmap(f)).
    if jax is not None:
        jv = jax.jit(case.vmapper(jax.vmap, lambda *a: case.per_example(jnp, jax.lax, *a)))
        jargs = jax.device_put(args)
        log(f"{name}: jax compile")
        ok["jax"] = rep.check(f"jax vmap {name}", jv(*jargs), want, case.rtol, case.atol)
        fns["jax"] = lambda: jv(*jargs).block_until_ready()

    # (a) Python loop of the jitted per-example function, per-example inputs uploaded.
    single = ember.jit(per_example)
    items = case.loop_items(*args)
    log(f"{name}: ember per-example compile, uploading {len(items)} examples")
    dev = single(*items[0]).device
    uploaded: dict[int, tuple] = {}

    def up(x):  # upload each distinct array once (shared weights, rows the nested case reuses)
        if id(x) not in uploaded:
            uploaded[id(x)] = (x, ember.device_put(x, dev))
        return uploaded[id(x)][1]
    litems = [tree_util.tree_map(up, it) for it in items]

    def loop():
        return [single(*it) for it in litems]
    got = np.stack([np.asarray(r) for r in loop()]).reshape(np.shape(want))
    ok["loop"] = rep.check(f"ember Python loop {name}", got, want, case.rtol, case.atol)

    # Time the fast contenders interleaved; the loop on its own.
    for fn in fns.values():  # the first calls after compiling can be slow
        fn()
    per = {k: once_ns(fn)[0] for k, fn in fns.items()}
    budget = 0.05e9 if quick else 0.25e9  # ns per batch of the slowest contender
    inner = int(min(2000, max(3, budget / max(max(per.values()), 1))))
    batches = 3 if quick else 7
    log(f"{name}: timing {', '.join(fns)} ({batches} batches of {inner} calls)")
    t = per_call_ns(fns, inner, batches, warmup=min(inner, 20))
    loop_once = once_ns(loop)[0]
    repeats = max(3, min(15 if not quick else 5, int(2e9 / loop_once)))
    log(f"{name}: timing the Python loop ({repeats} repeats of {loop_once / 1e6:.0f} ms)")
    t["loop"] = steady_ns(loop, repeats, warmup=1)

    v = t.get("vmap")
    n = len(items)
    rep.row(name, "ember.jit(ember.vmap(f))", v, dispatches=disp.get("vmap"),
            note=notes.get("vmap") or (None if ok.get("vmap", True) else "WRONG"))
    rep.row(name, "ember hand-batched (jit)", t["hand"], v, disp["hand"],
            note=None if ok["hand"] else "WRONG")
    rep.row(name, f"Python loop of ember.jit(f), {n} calls", t["loop"], v,
            note=None if ok["loop"] else "WRONG")
    rep.row(name, "jax.jit(jax.vmap(f))", t.get("jax"), v,
            note=None if ok.get("jax", True) else "WRONG")

    # Targets.
    if v is None or not ok.get("vmap"):
        rep.targets.append(f"{name}: vmap {notes.get('vmap', 'WRONG')}: targets not judged")
        return
    r_hand = v / t["hand"]
    r_loop = t["loop"] / v
    parts = [f"{r_hand:.2f}x hand-batched (<= 1.2x: {'MET' if r_hand <= 1.2 else 'MISSED'})",
             f"{r_loop:.0f}x faster than the loop (>= 50x: "
             f"{'MET' if r_loop >= 50 else 'MISSED'})"]
    if case.flops:
        # No batched program beats the machine's matmul rate: at OpenBLAS's sgemm rate,
        # measured now, the loop can be at most this many times slower.
        rate = sgemm_flops_per_ns()
        parts[-1] += (f" (bound at OpenBLAS's sgemm rate here, {rate:.0f} GFLOP/s: "
                      f"{t['loop'] * rate / case.flops:.0f}x)")
    if t.get("jax") is not None:
        r_jax = v / t["jax"]
        parts.append(f"{r_jax:.2f}x JAX (<= 1x: {'MET' if r_jax <= 1 else 'MISSED'})")
    else:
        parts.append("JAX n/a")
    # The target is that batching keeps fusion: as many dispatches as hand-batched, or fewer
    # (a batched while_loop takes several steps per iteration, see dialects/control_flow.py).
    kept = disp["vmap"] <= disp["hand"]
    parts.append(f"dispatches {disp['vmap']} vs {disp['hand']} (<=: "
                 f"{'MET' if kept else 'MISSED'})")
    rep.targets.append(f"{name}: " + "; ".join(parts))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vmap",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-jax", action="store_true", help="skip JAX even if installed")
    args = parser.parse_args(argv)

    from benchmarks.__main__ import header
    jax, jnp = (None, None) if args.no_jax else jax_modules()
    header(jax, "skipped (--no-jax)" if args.no_jax else "not installed (JAX rows n/a)")
    t0 = time.perf_counter()
    rep = Report()
    for case in cases():
        run_case(rep, case, jax, jnp, args.quick)
    print(rep.table.render())
    print()
    print("this/vmap > 1: ember.vmap is faster than this; dispatches: IREE's dispatch-count "
          "of the compiled program.")
    for line in rep.targets:
        print(line)
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"NOTE: load average {load:.1f} on {os.cpu_count()} cores: times (not ratios) "
              "are inflated, rerun on an idle machine")
    print(f"total {time.perf_counter() - t0:.1f} s")
    return report_failures(rep.failures)


if __name__ == "__main__":
    sys.exit(main())
