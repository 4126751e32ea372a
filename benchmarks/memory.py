"""Memory planning: IREE's transient memory and runtime with ember's planner off and on, beside
JAX. ``python -m benchmarks.memory``.

Run from the repository root:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.memory          # ~3 min
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.memory --quick

For each program (issue 8, "Measured"), in one run:

- IREE's ``transient-memory-size`` (from ``--iree-scheduling-dump-statistics-format=json``)
  of the linalg text ember hands IREE, with the planner off (``memory_planner`` False: the
  traced order) and on; ember's own prediction of it (``transient_size_in_bytes`` of
  ``memory_analysis()``: the planned peak of temporaries plus the results, which IREE
  counts in its figure too);
- runtime (median of repeats after warm-up, inputs on the device, the contenders timed
  interleaved) with the planner off and on;
- JAX: ``jax.jit(f).lower(...).compile().memory_analysis().temp_size_in_bytes`` and runtime
  (n/a without JAX);
- measured: the resident memory a process gains over the first three calls of the program,
  from just before the first (arguments already on the device, each result dropped before the
  next call; Linux's peak-RSS counter, reset through ``/proc/self/clear_refs``), ember (planner
  on) and JAX each in fresh processes (the median of three) with glibc's mmap threshold
  pinned at 64 KiB so that a freed buffer leaves the process at once. This counts what the
  compilers' own figures leave out (XLA's YNNPACK scratch, IREE's pooled transient memory,
  the results) and is the same measure for both; n/a off Linux.

Two extra rows: the optimizer-style update ``p - lr * g`` with ``p`` donated (ember and JAX
both donate; each call puts a fresh ``p`` on the device, the undonated ember one too), and
``remat_elementwise`` under a feasible ``memory_budget`` (the planner's predicted peak and
IREE's transient memory against the budget, the runtime against no budget). Results are checked
against the planner-off program once (WRONG otherwise, exit status 1).
A plot (``--plot PATH``) needs matplotlib.

Targets: transient memory with the planner on never above off, >= 30% lower where the order
matters; at or below JAX's temporary bytes; the donated update allocates no output buffer
(transient 0); remat meets a feasible budget at <= 30% extra runtime; ember's prediction
within 10% of IREE's figure.

Figures (2-core development machine, 2026-12-03, idle, four runs): planner on/off 0.50 and
0.54 where order matters, 0.86 for attention, 1.00 elsewhere; prediction 1.00 on 8/8;
IREE's temporaries at or below JAX's reported temporaries on 2/8 (data tiling's packed
copies count in IREE's figure; XLA's YNNPACK scratch does not count in JAX's: it reports 0
bytes for pairwise_min and sum_bad_order; scan_update 3.0 against 2.1 MiB, IREE's figure
being the sum of its allocations, not their peak). Measured (median of 3 processes), ember's
resident memory is at or below JAX's on 7/8 in two runs and 6/8 in two: 0.06x for
pairwise_min, 0.42-0.43x attention, 0.44-0.52x residual_mlp, 0.65-0.90x sum, chain,
layernorm; scan_update 0.95-0.96x (4.05-4.07 against 4.23-4.25 MiB) in two runs and 1.35x
(5.03-5.05 against 3.70-3.74) in two: the program gains 4.0-4.3 MiB in 20 of 21 processes
run alone, 5.0 in one; 5.0-6.1 MiB before ember-split-loop-inits, which lets IREE free the
loop's first carried buffer after the first step (it shared a block with the ys buffer);
6.6 MiB before the carries were pinned. remat_program 1.04-1.33x (5.1 against 3.8-4.9 MiB:
data tiling's packed copies of both operands and the second matmul's result live in one
3 MiB block beside ``h`` and the result; 4 MiB of IREE transient memory without data tiling,
which the planner gives up under a budget). JAX's figure moves by up to 1 MiB between runs
(remat_program 3.8-4.9, layernorm 4.2-4.5), hence the medians. scan_update runs in
4.1-5.0 ms, JAX's 7.2-7.6 ms. Donated sgd: 0 bytes. Remat under a budget 0.88-1.00x the
runtime; data tiling given up (remat_program, not a recomputation) 1.19-1.50x (three runs).
2026-12-05 (an AVX-512 machine, two runs): the same IREE and JAX figures, IREE's temporaries
at or below JAX's on 3/8 (scan_update 0.50 against 0.56 MiB since ember-protect-arguments
copies in one kernel); resident memory 0.01-0.95x JAX's, 8/8; the donated sgd update 0.29
and 0.39 ms, undonated 0.39 and 0.49 ms, JAX's donated 0.83 ms (each call puts a fresh p
on the device; before the donating runner was bound once, donated calls were the slower).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import warnings
from dataclasses import dataclass

import numpy as np

import ember
import ember.numpy as enp
from benchmarks.timing import (
    per_call_samples,
    report_failures,
    resident_gain,
    resident_in_child,
)
from ember.backends import cpu
from ember.backends.statistics import program_statistics

MiB = 2**20


@dataclass
class Api:
    np: object
    lax: object
    vmap: object


def sum_bad_order(m, x, w):
    """Six large matmul results, each reduced only after all are computed."""
    ts = [m.np.tanh(x @ (w * (i + 1))) for i in range(6)]
    return sum(t.sum() for t in ts)


def chain_bad_order(m, x, w):
    """Six matmul products computed first, then multiplied together."""
    ts = [x @ (w + i) for i in range(6)]
    out = [t @ w for t in ts]
    acc = out[0]
    for o in out[1:]:
        acc = acc @ o
    return acc


def residual_mlp(m, x, w):
    """A deep residual MLP forward (8 layers) with large activations."""
    h = x
    for i in range(8):
        h = h + m.np.tanh(h @ (w * (1.0 / (i + 1))))
    return h


def scan_update(m, x, w):
    """A scan that updates a large carried buffer in place, row by row."""
    def body(buf, row):
        buf = buf.at[0].add(row) * 0.999
        return buf, buf[0].sum()
    buf, ys = m.lax.scan(body, w, x[:64])
    return buf.sum() + ys.sum()


def pairwise_min(m, x, w):
    """A vmapped pairwise-distance reduction: for each row of x its nearest row of w."""
    def nearest(a):
        return ((a[None, :] - w) ** 2).sum(-1).min()
    return m.vmap(nearest)(x)


def layernorm_block(m, x, w):
    """Layer normalization then a projection, as in a transformer block."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mu) / m.np.sqrt(var + 1e-5)) @ w


def attention_block(m, x, w):
    """Single-head self attention: softmax(q k^T / sqrt(d)) v."""
    q, k, v = x @ w, x @ (w * 0.5), x @ (w * 0.25)
    s = (q @ k.T) / np.float32(np.sqrt(x.shape[1]))
    e = m.np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def remat_program(m, x, w):
    """A broadcast kept alive across a matmul chain only to be added at the end."""
    scale = m.np.broadcast_to(w[0, 0], x.shape)
    h = m.lax.cond(x[0, 0] > 0, lambda: scale @ x, lambda: x @ x)
    h = h @ w
    h = h @ w
    return h + scale


def remat_elementwise(m, x, w):
    """As remat_program, with a value IREE keeps in a buffer: an elementwise product (a
    broadcast of one element IREE clones into each kernel that reads it instead)."""
    scale = w * 0.5
    h = m.lax.cond(x[0, 0] > 0, lambda: scale @ x, lambda: x @ x)
    h = h @ w
    h = h @ w
    return h + scale


def captured_weights(m, x, w):
    """An MLP whose two weights are constants captured by the function (as a model's
    parameters often are): IREE packs them for its matmuls once, when the module loads
    (``ember/backends/cpu.py``, ``program_flags``), not on every call."""
    w1, w2 = _captured(x.shape[1])
    return m.np.tanh(x @ w1) @ w2


@functools.cache
def _captured(n: int):
    r = np.random.default_rng(7)
    return tuple((r.normal(size=(n, n)) / np.sqrt(n)).astype(np.float32) for _ in range(2))


def sgd_update(m, p, g):
    """An optimizer-style in-place update; ``p`` is donated."""
    return p - 0.01 * g


PROGRAMS = [sum_bad_order, chain_bad_order, residual_mlp, scan_update, pairwise_min,
            layernorm_block, attention_block, remat_program, captured_weights]
ORDER_MATTERS = {"sum_bad_order", "chain_bad_order"}


def _medians_ms(fns: dict, repeats: int) -> dict:
    """Median ms per call of each function, timed interleaved (see benchmarks/timing.py)."""
    live = {k: f for k, f in fns.items() if f is not None}      # JAX's are None without it
    samples = per_call_samples(live, inner=1, batches=repeats, warmup=2)
    return {k: statistics.median(samples[k]) / 1e6 if k in samples else None for k in fns}


def _ember_side(fun, args, planner: bool, budget=None, donate=(), fresh=False):
    """(IREE's transient memory, the plan, a function running it once, its result);
    ``fresh`` (implied by ``donate``): each run puts its first argument on the device anew."""
    ember.config.update("memory_planner", planner)
    lowered = ember.jit(lambda *a: fun(EMBER, *a), memory_budget=budget,
                        donate_argnums=donate).lower(*args)
    flags, fallbacks = lowered.iree_flags(cpu, {})
    stats = program_statistics(lowered.as_text("linalg"), flags, fallbacks=fallbacks)
    compiled = lowered.compile()
    dev = [ember.device_put(a) for a in args]
    out = compiled(*dev)
    if donate or fresh:
        def run():
            compiled(ember.device_put(args[0]), *dev[1:]).block_until_ready()
    else:
        def run():
            ember.tree_util.tree_map(lambda a: a.block_until_ready(), compiled(*dev))
    run.program = lowered.as_text("linalg")
    return stats.transient_memory_size, lowered.memory_plan(), run, out


def _jax_side(jax, fun, args, donate=()):
    """(JAX's temporary bytes, a function running it once), or (None, None) without JAX."""
    if jax is None:
        return None, None
    m = Api(jax.numpy, jax.lax, jax.vmap)
    jf = jax.jit(lambda *a: fun(m, *a), donate_argnums=donate)
    temp = jf.lower(*args).compile().memory_analysis().temp_size_in_bytes
    dev = [jax.device_put(a) for a in args]
    if donate:
        return temp, lambda: jax.block_until_ready(jf(jax.device_put(args[0]), *dev[1:]))
    return temp, lambda: jax.block_until_ready(jf(*dev))


EMBER = Api(enp, ember.lax, ember.vmap)


def _inputs(n: int):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    return x, w


def _resident_child(which: str, name: str, n: int) -> int:
    """In this (fresh) process: the resident bytes gained over three calls of program
    ``name`` compiled by ``which`` ("ember" or "jax"), from just before the first call."""
    fun = next(f for f in PROGRAMS if f.__name__ == name)
    args = _inputs(n)
    if which == "jax":
        import jax
        jax.config.update("jax_platforms", "cpu")
        _, run = _jax_side(jax, fun, args)
    else:
        compiled = ember.jit(lambda *a: fun(EMBER, *a)).lower(*args).compile()
        dev = [ember.device_put(a) for a in args]

        def run():                               # its result is dropped before the next call
            ember.tree_util.tree_map(lambda a: a.block_until_ready(), compiled(*dev))
    return resident_gain(run)


def resident_growth(which: str, name: str, n: int) -> int | None:
    """``_resident_child`` run in a fresh process (None off Linux, or when it fails)."""
    return resident_in_child("benchmarks.memory", which, name, "--n", str(n))


def _fmt_mib(b):
    return "n/a" if b is None else f"{b / MiB:8.2f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller shapes")
    parser.add_argument("--plot", help="write a bar chart of transient memory to this path")
    parser.add_argument("--resident", nargs=2, metavar=("WHICH", "PROGRAM"),
                        help=argparse.SUPPRESS)       # the child of resident_growth
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    n = args.n or (256 if args.quick else 512)
    if args.resident:
        print(_resident_child(*args.resident, n))
        return 0
    repeats = 5 if args.quick else 40
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        jax = None
    x, w = _inputs(n)
    saved = ember.config.memory_planner
    failures = []
    rows = []
    header = (f"{'program':<18}{'IREE off':>9}{'IREE on':>9}{'ember':>9}{'IREE tmp':>9}"
              f"{'JAX tmp':>9}{'on/off':>8}{'ms off':>9}{'ms on':>9}{'ms JAX':>9}  check")
    print(f"memory planner benchmark, {n}x{n} float32 (MiB; ember = its prediction of IREE's "
          "transient memory, temporaries and results, with the planner on; IREE tmp = IREE on "
          "less the results, JAX's temp_size_in_bytes counts no results either)")
    print(header)
    try:
        for fun in PROGRAMS:
            off, _, run_off, ref = _ember_side(fun, (x, w), False)
            on, plan, run_on, got = _ember_side(fun, (x, w), True)
            ok = all(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)
                     for a, b in zip(ember.tree_util.tree_leaves(ref),
                                     ember.tree_util.tree_leaves(got)))
            jt, run_jax = _jax_side(jax, fun, (x, w))
            same = run_on.program == run_off.program    # the planner changed nothing
            ms = _medians_ms({"off": run_off, "on": None if same else run_on, "jax": run_jax},
                             repeats)
            ms_off, ms_on, jms = ms["off"], ms["off"] if same else ms["on"], ms["jax"]
            iree_tmp = on - plan.result_bytes      # less the results
            rows.append((fun.__name__, off, on, plan.transient_bytes, jt, iree_tmp))
            ratio = on / off if off else 1.0
            print(f"{fun.__name__:<18}{_fmt_mib(off)}{_fmt_mib(on)}{_fmt_mib(plan.transient_bytes)}"
                  f"{_fmt_mib(iree_tmp)}{_fmt_mib(jt)}{ratio:8.2f}{ms_off:9.2f}{ms_on:9.2f}"
                  f"{'n/a' if jms is None else f'{jms:9.2f}':>9}  {'ok' if ok else 'WRONG'}"
                  f"{'  (same program)' if same else ''}")
            if not ok:
                failures.append(fun.__name__)

        # Donation: the optimizer-style update.
        plain, _, run_plain, _ = _ember_side(sgd_update, (x, w), True, fresh=True)
        donated, dplan, run_don, out = _ember_side(sgd_update, (x, w), True, donate=(0,))
        ok = np.allclose(np.asarray(out), x - 0.01 * w, rtol=1e-6)
        jt, run_jax = _jax_side(jax, sgd_update, (x, w), donate=(0,))
        ms = _medians_ms({"plain": run_plain, "donated": run_don, "jax": run_jax}, repeats)
        ms_plain, ms_don, jms = ms["plain"], ms["donated"], ms["jax"]
        print(f"{'sgd (p donated)':<18}{_fmt_mib(plain)}{_fmt_mib(donated)}"
              f"{_fmt_mib(dplan.transient_bytes)}"
              f"{_fmt_mib(donated - dplan.result_bytes)}"
              f"{_fmt_mib(jt)}{'':>8}{ms_plain:9.2f}{ms_don:9.2f}"
              f"{'n/a' if jms is None else f'{jms:9.2f}':>9}  {'ok' if ok else 'WRONG'}"
              f"   (IREE off = not donated, on = donated; aliased "
              f"{dplan.alias_bytes / MiB:.2f} MiB)")
        if not ok:
            failures.append("sgd")

        # Remat under a feasible budget: half a MiB below the peak, which recomputing the
        # 1 MiB ``scale`` after the matmuls meets in ember's plan.
        tf, free_plan, run_free, ref = _ember_side(remat_elementwise, (x, w), True)
        budget = free_plan.peak_bytes - MiB // 2
        tr, rplan, run_tight, got = _ember_side(remat_elementwise, (x, w), True,
                                                budget=budget)
        ms = _medians_ms({"free": run_free, "tight": run_tight}, repeats)
        ms_free, ms_tight = ms["free"], ms["tight"]
        ok = np.allclose(np.asarray(got), np.asarray(ref), rtol=1e-5)
        print(f"\nremat ({remat_elementwise.__name__}): budget {budget / MiB:.2f} MiB; "
              f"planned peak {free_plan.peak_bytes / MiB:.2f} -> {rplan.peak_bytes / MiB:.2f} "
              f"MiB (missed by {rplan.budget_missed} bytes, "
              f"{rplan.rematerialized} values recomputed); IREE transient "
              f"{tf / MiB:.2f} -> {tr / MiB:.2f} MiB; runtime {ms_free:.2f} -> "
              f"{ms_tight:.2f} ms ({ms_tight / ms_free:.2f}x)  {'ok' if ok else 'WRONG'}")
        if not ok:
            failures.append("remat")

        # A budget recomputation cannot meet: the planner gives up data tiling's packed
        # operand copies (IREE's matmuls run slower without them).
        tf, free_plan, run_free, ref = _ember_side(remat_program, (x, w), True)
        budget = free_plan.peak_bytes // 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ember.errors.MemoryBudgetWarning)
            tr, rplan, run_tight, got = _ember_side(remat_program, (x, w), True, budget=budget)
        ms = _medians_ms({"free": run_free, "tight": run_tight}, repeats)
        ok = np.allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-5)
        print(f"data tiling given up ({remat_program.__name__}): budget {budget / MiB:.2f} MiB; "
              f"planned peak {free_plan.peak_bytes / MiB:.2f} -> {rplan.peak_bytes / MiB:.2f} "
              f"MiB (data tiling {'on' if rplan.data_tiling else 'off'}); IREE transient "
              f"{tf / MiB:.2f} -> {tr / MiB:.2f} MiB (predicted {rplan.transient_bytes / MiB:.2f});"
              f" runtime {ms['free']:.2f} -> {ms['tight']:.2f} ms "
              f"({ms['tight'] / ms['free']:.2f}x)  {'ok' if ok else 'WRONG'}")
        if not ok:
            failures.append("data tiling")
    finally:
        ember.config.update("memory_planner", saved)

    fair = [r for r in rows if r[4] is not None]
    print(f"\nIREE's temporaries at or below JAX's: {sum(r[5] <= r[4] for r in fair)}/{len(fair)}")

    print("\nmeasured: resident memory gained over the first 3 calls, in a fresh process "
          "(MiB, the median of 3 processes; results, scratch and pools included)")
    print(f"{'program':<18}{'ember':>9}{'JAX':>9}{'ember/JAX':>11}")
    measured = []
    for name, *_ in rows:
        e = resident_growth("ember", name, n)
        j = resident_growth("jax", name, n) if jax else None
        ratio = f"{e / j:11.2f}" if e is not None and j else f"{'n/a':>11}"
        print(f"{name:<18}{_fmt_mib(e)}{_fmt_mib(j)}{ratio}")
        if e is not None and j is not None:
            measured.append(e <= j)
    if measured:
        print(f"measured resident memory at or below JAX's: {sum(measured)}/{len(measured)}")
    print("prediction vs IREE (planner on): " + ", ".join(
        f"{name} {plan / on:.2f}" if on else f"{name} {plan}/{on}"
        for name, _, on, plan, _, _ in rows))
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("--plot: matplotlib is not installed")
        else:
            names = [r[0] for r in rows]
            pos = np.arange(len(rows))
            fig, ax = plt.subplots(figsize=(10, 4))
            for k, (label, col) in enumerate([("IREE, planner off", 1),
                                              ("IREE, planner on", 2), ("JAX temp", 4)]):
                ax.bar(pos + (k - 1) * 0.27, [(r[col] or 0) / MiB for r in rows], 0.27,
                       label=label)
            ax.set_xticks(pos, names, rotation=30, ha="right")
            ax.set_ylabel("MiB")
            ax.legend()
            fig.tight_layout()
            fig.savefig(args.plot)
            print(f"plot written to {args.plot}")
    return report_failures(failures)


if __name__ == "__main__":
    sys.exit(main())
