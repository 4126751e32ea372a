"""Memory of gradient programs: checkpointing and budgets, ember beside JAX,
``python -m benchmarks.grad_memory`` (issue 37, "Measured").

Run from the repository root (see ``benchmarks/__main__.py`` for why the variables are unset):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.grad_memory --quick
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.grad_memory  # the sizes
                                                                                   # of issue 37

The programs (``jit(grad(loss))``), each written once against a namespace:

1. ``mlp``: 16 layers of ``tanh(h @ w + b)``, width 1024, batch 256 (``--quick``: 256, 128).
2. ``transformer``: 8 pre-LN blocks (4-head attention, GELU MLP of 4x width), sequence 512,
   width 256 (``--quick``: 128, 64); loss the mean square of the output.
3. ``resmlp``, held out (added after the heuristics' last change, never used to develop
   them): 8 residual blocks ``h + gelu(layer_norm(h) @ w1) @ w2``, width 512, hidden 2048,
   batch 512 (``--quick``: 128, 512, 128). ``--programs resmlp`` runs it alone.

Rows: each framework with no checkpoint (``none``), every layer checkpointed with
``nothing_saveable`` (``every``) and with ``dots_saveable`` (``dots``), then ember's
automatic plan (``ember.jit(..., memory_budget=B)``, no hand-placed checkpoint) at budgets
from ember's own ``none`` figure down towards the bytes of the gradients it returns (a floor
no plan can go below), and at each JAX configuration's figure. Memory is IREE's
``transient-memory-size`` for ember (read from the compile itself), which counts the
returned gradients, and for JAX XLA's ``temp_size_in_bytes`` plus its output bytes not
aliased to arguments (``memory_analysis()``), the same measure; time is the median of
single calls, all contenders interleaved (``benchmarks/timing.py``); every gradient is
checked against JAX's (a wrong one shows WRONG, exit status 1). ``met`` says whether
IREE's figure is within the budget. The curve: IREE's temporaries (its figure less the
returned gradients) for n = 4, 8, 16 layers of the MLP, without checkpoints, with every
layer checkpointed, with segments of sqrt(n) layers checkpointed, and the automatic plan at
the tightest budget.

The remat heuristics were developed on other programs (``tests/test_grad_checkpoint.py``,
``tests/test_memory.py``); on 2026-12-07 the ``mlp`` and ``transformer`` were used too
(IREE's CSE and ember-fuse undoing recomputation, ember-auto-checkpoint's policies), so
``resmlp`` is the held-out one.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np

from benchmarks.grad import _close, _f32, _layer_norm, _ready, block, block_params
from benchmarks.timing import fmt_time, jax_modules, log, per_call_ns


@dataclass
class Api:
    np: object
    nn: object
    grad: object
    checkpoint: object
    policies: object


def _apis():
    import ember
    import ember.nn
    import ember.numpy as enp
    out = {"ember": Api(enp, ember.nn, ember.grad, ember.checkpoint,
                        ember.checkpoint_policies)}
    jax, jnp = jax_modules()
    if jax is not None:
        import jax.nn
        out["jax"] = Api(jnp, jax.nn, jax.grad, jax.checkpoint, jax.checkpoint_policies)
    return out


# --- the programs -----------------------------------------------------------------------------

def mlp_layer(m: Api, p, h):
    return m.np.tanh(h @ p[0] + p[1])


def resmlp_layer(m: Api, p, h):
    """A residual MLP block (held out: never used to develop the heuristics)."""
    return h + m.nn.gelu(_layer_norm(m, h, p[0]) @ p[1]) @ p[2]


LAYERS = {"mlp": mlp_layer, "transformer": block, "resmlp": resmlp_layer}


def loss(m: Api, name: str, how: str, params, x, segment: int = 1):
    """The mean square of the program's output; ``how``: "none", "every" (each layer
    checkpointed, nothing_saveable), "dots" (dots_saveable) or "segments" (``segment``
    layers at a time checkpointed, nothing_saveable)."""
    layer = LAYERS[name]

    def run(ps, h):
        for p in ps:
            h = layer(m, p, h)
        return h

    if how == "none":
        h = run(params, x)
    elif how == "segments":
        seg = m.checkpoint(lambda ps, h: run(ps, h), policy=m.policies.nothing_saveable)
        h = x
        for i in range(0, len(params), segment):
            h = seg(params[i:i + segment], h)
    else:
        policy = {"every": m.policies.nothing_saveable, "dots": m.policies.dots_saveable}[how]
        step = m.checkpoint(lambda p, h: layer(m, p, h), policy=policy)
        h = x
        for p in params:
            h = step(p, h)
    return m.np.mean(h * h)


def cases(quick: bool, seed=0):
    rng = np.random.default_rng(seed)
    w, b = (256, 128) if quick else (1024, 256)
    mlp = ([(_f32(rng, (w, w), 1.2 * w ** -0.5), np.zeros(w, np.float32)) for _ in range(16)],
           _f32(rng, (b, w), 1.0))
    s, d = (128, 64) if quick else (512, 256)
    blocks = [block_params(rng, d) for _ in range(8)]
    transformer = (blocks, _f32(rng, (s, d), 1.0))
    b, d = (128, 128) if quick else (512, 512)
    res = [(np.ones(d, np.float32), _f32(rng, (d, 4 * d), d ** -0.5),
            _f32(rng, (4 * d, d), (4 * d) ** -0.5)) for _ in range(8)]
    return {"mlp": (mlp[0], mlp[1]), "transformer": transformer,
            "resmlp": (res, _f32(rng, (b, d), 1.0))}


# --- running them -----------------------------------------------------------------------------

def _ember_compiled(apis, name, how, params, x, budget=None, segment=1):
    """(the compiled gradient program, IREE's transient figure: from the compile when a
    budget asked for it, else from ``memory_analysis``'s own compile with statistics)."""
    import ember
    m = apis["ember"]
    f = ember.jit(m.grad(lambda p, x: loss(m, name, how, p, x, segment)),
                  memory_budget=budget)
    compiled = f.lower(params, x).compile()
    return compiled, compiled.memory_analysis().iree_transient_size_in_bytes


def run_program(name, params, x, apis, jax, quick) -> tuple[list, int]:
    import warnings

    import ember
    m = apis["jax"]
    want = jax.jit(m.grad(lambda p, x: loss(m, name, "none", p, x)))(params, x)
    e_args = ember.tree_util.tree_map(ember.device_put, (params, x))
    j_args = jax.tree_util.tree_map(jax.device_put, (params, x))
    fns, rows, wrong = {}, [], 0
    for how in ("none", "every", "dots"):
        log(f"{name}: {how}")
        j = jax.jit(m.grad(lambda p, x, how=how: loss(m, name, how, p, x)))
        # IREE's figure counts the results (allocated before the program runs): XLA's
        # comparable figure is its temporaries plus its results not aliased to arguments.
        ma = j.lower(params, x).compile().memory_analysis()
        temp = ma.temp_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes
        fns[f"jax {how}"] = lambda j=j: _ready(jax, j(*j_args))
        rows.append((f"jax {how}", temp, None, _close(j(*j_args), want, atol=2e-5)))
        c, figure = _ember_compiled(apis, name, how, params, x)
        fns[f"ember {how}"] = lambda c=c: _ready(jax, c(*e_args))
        rows.append((f"ember {how}", figure, None, _close(c(*e_args), want, atol=2e-5)))
    # From everything saved down to the results alone, the floor no plan goes below.
    base = rows[1][1]
    floor = sum(np.asarray(leaf).nbytes for leaf in jax.tree_util.tree_leaves(want))
    budgets = [("", int(floor + f * (base - floor))) for f in (0.75, 0.5, 0.25, 0.1)]
    budgets += [(f" (= jax {r[0].split()[1]})", r[1]) for r in rows if r[0].startswith("jax")]
    for label, budget in budgets:
        log(f"{name}: budget {budget}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c, figure = _ember_compiled(apis, name, "none", params, x, budget=budget)
        key = f"ember budget {budget / 2**20:.1f} MiB{label}"
        fns[key] = lambda c=c: _ready(jax, c(*e_args))
        rows.append((key, figure, budget, _close(c(*e_args), want, atol=2e-5)))
    times = per_call_ns(fns, inner=2 if quick else 3, batches=3 if quick else 5, warmup=1)
    out = []
    for key, mem, budget, ok in rows:
        wrong += not ok
        out.append((key, mem, budget, ok, times[key], times[key] / times["ember none"]))
    return out, wrong


def curve(apis, quick) -> list:
    """IREE's temporaries (its figure less the returned gradients, a buffer of their own
    allocated before the program runs) for n layers of the MLP: no checkpoints, every layer,
    sqrt(n) segments, and the automatic plan at the tightest budget (the returned bytes)."""
    import warnings
    params, x = cases(quick)["mlp"]
    out = []
    for n in (4, 8, 16):
        seg = int(round(math.sqrt(n)))
        returned = sum(w.nbytes + b.nbytes for w, b in params[:n])
        row = [n]
        for how in ("none", "every", "segments", "auto"):
            log(f"curve: {n} layers, {how}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                figure = _ember_compiled(apis, "mlp", "none" if how == "auto" else how,
                                         params[:n], x, segment=seg,
                                         budget=returned if how == "auto" else None)[1]
            row.append(figure - returned)
        out.append(row)
    return out


def _mib(n) -> str:
    return "n/a" if n is None else f"{n / 2**20:.2f} MiB"


def run(quick: bool = False, programs=()) -> int:
    """All programs and the curve, or only ``programs`` (no curve)."""
    import ember
    apis = _apis()
    if "jax" not in apis:
        print("JAX is not installed (pip install -e .[bench]): nothing to compare with")
        return 1
    jax = __import__("jax")
    ember.config.update("compile_cache", False)
    wrong = 0
    for name, (params, x) in cases(quick).items():
        if programs and name not in programs:
            continue
        rows, bad = run_program(name, params, x, apis, jax, quick)
        wrong += bad
        print(f"\n{name}:\n{'configuration':<40}{'memory':>13}{'budget':>13}{'met':>5}"
              f"{'time':>11}{'x ember none':>14}")
        for key, mem, budget, ok, t, ratio in rows:
            met = "" if budget is None else ("yes" if mem <= budget else "NO")
            print(f"{key:<40}{_mib(mem):>13}{_mib(budget) if budget else '':>13}{met:>5}"
                  f"{fmt_time(t) if ok else 'WRONG':>11}{ratio:>13.2f}x")
    if programs:
        return 1 if wrong else 0
    print(f"\nIREE's temporaries (transient memory less the returned gradients) of the "
          f"MLP's gradient by layers:\n"
          f"{'layers':>7}{'none':>13}{'every':>13}{'sqrt(n) seg':>13}{'auto, min':>13}")
    for n, *figures in curve(apis, quick):
        print(f"{n:>7}" + "".join(f"{_mib(f):>13}" for f in figures))
    return 1 if wrong else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller programs, fewer repeats")
    parser.add_argument("--programs", nargs="+", choices=sorted(LAYERS),
                        help="only these programs, and no curve (default: all, the curve)")
    args = parser.parse_args(argv)
    return run(args.quick, args.programs or ())


if __name__ == "__main__":
    sys.exit(main())
