"""Dynamic shapes: compile time over ragged sizes, and the dynamic program's speed against the
static one: ``python -m benchmarks.dynamic`` (about two minutes; ``--quick`` fewer sizes).

1. Twenty ragged batch sizes of one MLP (784 -> 512 -> 512 -> 10, softmax; batch sizes drawn
   from 1-512 with a fixed seed), called once each, in one process: ember with its
   automatic dynamic shapes (the default), ember compiling every size (``dynamic_shapes=
   False``), ember told the batch axis (``dynamic_axes={"x": 0}``: the first call compiles
   the dynamic program), and ``jax.jit``. The figure is the total time of the twenty first
   calls (trace, compile, run), the compile worker started beforehand and the disk cache
   off.
2. Steady state of the dynamic executable against a static compile at the same size, on
   programs of the project's benchmark set (MLP, softmax, layernorm with scale and shift,
   a GELU block, an elementwise chain) and on programs held out of everything tuned
   (attention scores, an RMS norm with a residual, a masked mean, a two-layer tanh MLP
   returning its hidden layer); each at a batch size the dynamic program was not compiled
   at (8 and 1024 rows; "static" where that size's program is not the dynamic one's, so it
   compiles on its own). Ratios are dynamic / static, timed in interleaved batches
   (``benchmarks.timing``). (A size called ``ember.frontend.api.HOT_CALLS`` times is
   compiled on its own in the background; that is turned off here.)

Every result is checked against NumPy once.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ember
import ember.nn as enn
import ember.numpy as enp
from benchmarks.timing import per_call_ns
from ember.backends import compiler
from ember.frontend import api


def _mlp(ws, x, np_=enp, softmax=enn.softmax):
    for w in ws[:-1]:
        x = np_.tanh(x @ w)
    return softmax(x @ ws[-1], -1)


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def ragged(sizes, rng):
    ws = [rng.standard_normal(s).astype(np.float32) * 0.05
          for s in ((784, 512), (512, 512), (512, 10))]
    xs = [rng.standard_normal((n, 784)).astype(np.float32) for n in sizes]
    want = [_mlp(ws, x, np, _np_softmax) for x in xs]
    results = {}
    for name, options in (("ember, dynamic shapes", {}),
                          ("ember, dynamic_axes", {"dynamic_axes": {"x": 0}}),
                          ("ember, every size", {"dynamic_shapes": False})):
        f = ember.jit(_mlp, **options)
        t0 = time.perf_counter()
        outs = [np.asarray(f(ws, x)) for x in xs]
        results[name] = time.perf_counter() - t0
        for o, w in zip(outs, want):
            np.testing.assert_allclose(o, w, rtol=1e-4, atol=1e-6)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        results["jax.jit"] = None
    else:
        jf = jax.jit(lambda ws, x: _mlp(ws, x, jnp, jax.nn.softmax))
        t0 = time.perf_counter()
        outs = [np.asarray(jf(ws, x)) for x in xs]
        results["jax.jit"] = time.perf_counter() - t0
        for o, w in zip(outs, want):
            np.testing.assert_allclose(o, w, rtol=1e-4, atol=1e-6)
    return results


def _programs(rng):
    """name -> (function, NumPy oracle, weights, argument maker by batch size, held out)."""
    d = 256
    w1, w2 = (rng.standard_normal((d, d)).astype(np.float32) * 0.05 for _ in range(2))
    g, b = rng.standard_normal(d).astype(np.float32), rng.standard_normal(d).astype(np.float32)

    def layernorm(x, g, b, np_=enp):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np_.sqrt(v + 1e-5) * g + b

    def gelu_block(x, w1, w2, np_=enp):
        h = x @ w1
        h = 0.5 * h * (1 + np_.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
        return x + h @ w2

    def chain(x, np_=enp):
        for _ in range(5):
            x = np_.sin(x) * 1.1 + np_.cos(x) * 0.3
        return x

    def attention(q, k, np_=enp, softmax=enn.softmax):
        return softmax(q @ k.T / 16.0, -1) @ k

    def rms_residual(x, g, np_=enp):
        y = x * (1.0 / np_.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)) * g
        return x + y

    def masked_mean(x, mask, np_=enp):
        return (x * mask[:, None]).sum(-1) / d

    def tanh2(x, w1, w2, np_=enp):
        h = np_.tanh(x @ w1)
        return np_.tanh(h @ w2), h

    row = lambda n: [rng.standard_normal((n, d)).astype(np.float32)]   # noqa: E731
    return {
        "mlp": (lambda x, w1, w2: _mlp([w1, w2], x),
                lambda x, w1, w2: _mlp([w1, w2], x, np, _np_softmax), [w1, w2], row, False),
        "softmax": (lambda x: enn.softmax(x, -1), lambda x: _np_softmax(x, -1), [], row,
                    False),
        "layernorm (scale, shift)": (layernorm, lambda x, g, b: layernorm(x, g, b, np),
                                     [g, b], row, False),
        "gelu block": (gelu_block, lambda x, a, c: gelu_block(x, a, c, np), [w1, w2], row,
                       False),
        "sin/cos chain": (chain, lambda x: chain(x, np), [], row, False),
        "attention scores": (attention, lambda q, k: attention(q, k, np, _np_softmax),
                             [rng.standard_normal((128, d)).astype(np.float32)], row, True),
        "rms norm + residual": (rms_residual, lambda x, g: rms_residual(x, g, np), [g], row,
                                True),
        "masked mean": (masked_mean, lambda x, m: masked_mean(x, m, np), [],
                        lambda n: [rng.standard_normal((n, d)).astype(np.float32),
                                   (rng.random(n) > 0.5).astype(np.float32)], True),
        "two tanh layers": (tanh2, lambda x, a, c: tanh2(x, a, c, np), [w1, w2], row, True),
    }


def _outs(x):
    return x if isinstance(x, tuple) else (x,)


def _call(f, args):
    return lambda: [o.block_until_ready() for o in _outs(f(*args))]


def steady(rng, compiled_at, run_at, quick):
    """(name, held out, {batch size: dynamic / static time or None}) of each program; None
    where the size did not run the dynamic program (its program differs)."""
    rows = []
    for name, (fn, oracle, weights, make, held_out) in _programs(rng).items():
        dyn = ember.jit(fn)
        for n in compiled_at:        # the static compile, then the dynamic one
            dyn(*make(n), *weights)
        ratios = {}
        for n in run_at:
            args = [enp.asarray(a) for a in make(n) + weights]
            static = ember.jit(fn, dynamic_shapes=False)
            want = _outs(oracle(*[np.asarray(a) for a in args]))
            for f in (dyn, static):
                for o, w in zip(_outs(f(*args)), want):
                    np.testing.assert_allclose(np.asarray(o), w, rtol=2e-4, atol=1e-5)
            # the size ran a dynamic executable, not a compile of its own
            compiled = list(dyn._cache.values())[-1]
            dynamic = [c for fam in dyn._shapes._families.values() for _, c in fam.dynamic]
            if not any(compiled.vmfb is c.vmfb for c in dynamic):
                ratios[n] = None
                continue
            times = per_call_ns({"dynamic": _call(dyn, args), "static": _call(static, args)},
                                inner=5 if quick else 10, batches=6 if quick else 12,
                                warmup=3)
            ratios[n] = times["dynamic"] / times["static"]
        rows.append((name, held_out, ratios))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    a = parser.parse_args()
    ember.config.update("compile_cache", False)
    compiler.start_worker()
    rng = np.random.default_rng(0)
    sizes = [int(n) for n in rng.integers(1, 513, 10 if a.quick else 20)]
    print(f"1. {len(sizes)} ragged batch sizes of an MLP (784-512-512-10), first calls in all")
    totals = ragged(sizes, rng)
    for name, t in totals.items():
        print(f"   {name:24s} {'n/a' if t is None else f'{t:6.2f} s'}")
    jax_t = totals.get("jax.jit")
    if jax_t:
        print("   ember / JAX: " + ", ".join(f"{k[7:]} {t / jax_t:.2f}x"
                                            for k, t in totals.items() if k != "jax.jit"))
    compiled_at, run_at = (512, 768), (8, 1024)
    print(f"2. steady state, dynamic executable / static compile at the same size (dynamic "
          f"program compiled at {compiled_at[0]} then {compiled_at[1]} rows of 256)")
    api.HOT_CALLS = 1 << 62      # (the dynamic program itself, not a hot size's own compile)
    rows = steady(rng, compiled_at, run_at, a.quick)
    for held in (False, True):
        print("   held out of tuning:" if held else "   the benchmark set's programs:")
        print("     " + " " * 26 + "".join(f"{f'{n} rows':>10s}" for n in run_at))
        ratios = []
        for name, h, by_size in rows:
            if h == held:
                print(f"     {name:26s}" + "".join(
                    f"{'static' if r is None else f'{r:.2f}x':>10s}"
                    for r in by_size.values()))
                ratios += [r for r in by_size.values() if r is not None]
        if ratios:
            print(f"     geomean {np.exp(np.mean(np.log(ratios))):.2f}x, "
                  f"worst {max(ratios):.2f}x")


if __name__ == "__main__":
    main()
