"""Gradients: ``ember.jit(ember.value_and_grad(f))`` against ``jax.jit(jax.value_and_grad(f))``,
``python -m benchmarks.grad`` (issue 36, "Measured").

Run from the repository root (see ``benchmarks/__main__.py`` for why the variables are unset):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.grad           # minutes
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.grad --quick

The programs, each written once against a namespace (``ember.numpy`` or ``jax.numpy``):

1. ``mlp``: a 3-layer MLP training step (784-512-512-10, tanh), softmax cross-entropy, batch 128.
2. ``transformer``: a pre-LN transformer block (4-head attention, GELU MLP of width 1024) on a
   (256, 256) sequence, loss the mean square of its output.
3. ``per_example``: per-example gradients of a small MLP (64-128-10) with ``vmap(grad)``,
   batch 256; beside it the same gradients written batched by hand (``hand``).
4. ``rnn``: a tanh RNN (width 128) through ``lax.scan`` of 128 steps, batch 16.
5. ``conv``: a small conv net (3x3 conv of 16 channels, relu, 2x2 max pool, dense) on 32 images
   of 28x28.

For each: steady-state time of one call (medians of single calls, the contenders interleaved
in batches, inputs on the device beforehand: ``benchmarks/timing.py``), cold compile (first
call, caches off), IREE's transient memory (``--iree-scheduling-dump-statistics-format=json``,
``transient-memory-size``) beside XLA's ``memory_analysis().temp_size_in_bytes``; every
gradient is checked against JAX's (float32 tolerance) and a wrong one shows WRONG (exit
status 1). Targets: time <= 1.0x JAX's on at least 4 of 5 and geomean <= 1.0x; ``vmap(grad)``
within 1.2x of the hand-batched program.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np

from benchmarks.timing import (
    fmt_ratio,
    fmt_time,
    jax_modules,
    log,
    once_ns,
    per_call_ns,
)


@dataclass
class Api:
    """The functions a program uses, from one framework."""

    np: object
    lax: object
    nn: object
    value_and_grad: object
    grad: object
    vmap: object


# --- the programs -----------------------------------------------------------------------------

def _dense(m, p, x):
    return x @ p[0] + p[1]


def mlp_loss(m: Api, params, x, labels):
    h = x
    for layer in params[:-1]:
        h = m.np.tanh(_dense(m, layer, h))
    logits = _dense(m, params[-1], h)
    logp = m.nn.log_softmax(logits, axis=-1)
    return -m.np.mean(m.np.sum(logp * labels, axis=-1))


def mlp_step(m: Api, params, x, labels):
    return m.value_and_grad(lambda p: mlp_loss(m, p, x, labels))(params)


def _layer_norm(m, x, scale):
    mean = m.np.mean(x, axis=-1, keepdims=True)
    var = m.np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / m.np.sqrt(var + 1e-5) * scale


def block(m, p, x, heads=4):
    """A pre-LN transformer block (``m``: a namespace with ``np`` and ``nn``)."""
    s, d = x.shape
    h = _layer_norm(m, x, p["ln1"])
    q, k, v = (m.np.reshape(h @ p[n], (s, heads, d // heads)).transpose(1, 0, 2)
               for n in ("wq", "wk", "wv"))
    att = m.nn.softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d // heads), axis=-1)
    x = x + (att @ v).transpose(1, 0, 2).reshape(s, d) @ p["wo"]
    h = _layer_norm(m, x, p["ln2"])
    return x + m.nn.gelu(h @ p["w1"]) @ p["w2"]


def block_params(rng, d):
    """The parameters of ``block`` of width ``d``."""
    p = {n: _f32(rng, (d, d), d ** -0.5) for n in ("wq", "wk", "wv", "wo")}
    p.update(ln1=np.ones(d, np.float32), ln2=np.ones(d, np.float32),
             w1=_f32(rng, (d, 4 * d), d ** -0.5), w2=_f32(rng, (4 * d, d), (4 * d) ** -0.5))
    return p


def block_loss(m: Api, p, x, heads=4):
    return m.np.mean(block(m, p, x, heads) ** 2)


def block_step(m: Api, p, x):
    return m.value_and_grad(lambda p: block_loss(m, p, x))(p)


def small_loss(m: Api, p, x, y):
    h = m.np.tanh(x @ p[0])
    return m.np.sum((h @ p[1] - y) ** 2)


def per_example(m: Api, p, xs, ys):
    return m.vmap(m.grad(lambda p, x, y: small_loss(m, p, x, y)), in_axes=(None, 0, 0))(p, xs, ys)


def per_example_hand(m: Api, p, xs, ys):
    """The per-example gradients of small_loss, batched by hand (what vmap(grad) should be)."""
    h = m.np.tanh(xs @ p[0])                 # (B, H)
    r = 2.0 * (h @ p[1] - ys)                # (B, O)
    g1 = m.np.einsum("bh,bo->bho", h, r)
    dh = (r @ p[1].T) * (1.0 - h * h)        # (B, H)
    g0 = m.np.einsum("bi,bh->bih", xs, dh)
    return g0, g1


def rnn_loss(m: Api, p, xs):
    def step(h, x):
        h = m.np.tanh(h @ p["wh"] + x @ p["wx"])
        return h, h
    h0 = m.np.zeros((xs.shape[1], p["wh"].shape[0]), xs.dtype)
    _, hs = m.lax.scan(step, h0, xs)
    return m.np.mean(hs ** 2)


def rnn_step(m: Api, p, xs):
    return m.value_and_grad(lambda p: rnn_loss(m, p, xs))(p)


def conv_loss(m: Api, p, x, labels):
    y = m.lax.conv_general_dilated(x, p["k"], (1, 1), "SAME",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = m.np.maximum(y, 0.0)
    y = m.lax.reduce_window(y, -m.np.inf, m.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    logits = y.reshape(y.shape[0], -1) @ p["w"]
    return -m.np.mean(m.np.sum(m.nn.log_softmax(logits, axis=-1) * labels, axis=-1))


def conv_step(m: Api, p, x, labels):
    return m.value_and_grad(lambda p: conv_loss(m, p, x, labels))(p)


def _f32(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _one_hot(rng, n, k):
    return np.eye(k, dtype=np.float32)[rng.integers(0, k, n)]


def cases(seed=0):
    rng = np.random.default_rng(seed)
    sizes = [784, 512, 512, 10]
    mlp_p = [(_f32(rng, (a, b), a ** -0.5), np.zeros(b, np.float32))
             for a, b in zip(sizes, sizes[1:])]
    d = 256
    blk = block_params(rng, d)
    small = (_f32(rng, (64, 128), 0.125), _f32(rng, (128, 10), 0.09))
    rnn = {"wh": _f32(rng, (128, 128), 128 ** -0.5), "wx": _f32(rng, (32, 128), 32 ** -0.5)}
    cnn = {"k": _f32(rng, (3, 3, 1, 16), 1 / 3), "w": _f32(rng, (14 * 14 * 16, 10), 0.02)}
    return {
        "mlp": (mlp_step, (mlp_p, _f32(rng, (128, 784), 1.0), _one_hot(rng, 128, 10))),
        "transformer": (block_step, (blk, _f32(rng, (256, d), 1.0))),
        "per_example": (per_example, (small, _f32(rng, (256, 64), 1.0),
                                      _f32(rng, (256, 10), 1.0))),
        "rnn": (rnn_step, (rnn, _f32(rng, (128, 16, 32), 1.0))),
        "conv": (conv_step, (cnn, _f32(rng, (32, 28, 28, 1), 1.0), _one_hot(rng, 32, 10))),
    }


# --- running them -----------------------------------------------------------------------------

def _apis():
    import ember
    import ember.lax
    import ember.nn
    import ember.numpy as enp
    out = {"ember": Api(enp, ember.lax, ember.nn, ember.value_and_grad, ember.grad,
                        ember.vmap)}
    jax, jnp = jax_modules()
    if jax is not None:
        import jax.nn
        out["jax"] = Api(jnp, jax.lax, jax.nn, jax.value_and_grad, jax.grad, jax.vmap)
    return out


def _iree_transient(fun, args) -> int | None:
    import ember
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics
    lowered = ember.jit(fun).lower(*args)
    flags, fallbacks = lowered.iree_flags(cpu, {})
    return program_statistics(lowered.as_text("linalg"), flags,
                              fallbacks=fallbacks).transient_memory_size


def _close(got, want, atol=2e-4) -> bool:
    import jax
    g, w = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    return len(g) == len(w) and all(
        np.allclose(np.asarray(a), np.asarray(b), rtol=2e-3, atol=atol) for a, b in zip(g, w))


def run(quick: bool = False) -> int:
    import ember
    apis = _apis()
    if "jax" not in apis:
        print("JAX is not installed (pip install -e .[bench]): nothing to compare with")
        return 1
    jax = __import__("jax")
    ember.config.update("compile_cache", False)
    rows, failures = [], 0
    for name, (fun, args) in cases().items():
        log(f"{name}: compiling")
        row = _measure(name, fun, args, apis, jax, quick)
        failures += len(row) == 2 or not row[1]
        rows.append(row)
    print(f"\n{'program':<13}{'ember':>11}{'jax/ember':>11}{'hand/vmap':>11}{'compile e':>11}"
          f"{'compile j':>11}{'IREE tmp':>11}{'XLA tmp':>11}")
    ratios = []
    for row in rows:
        if len(row) == 2:
            print(f"{row[0]:<13}{row[1]}")
            continue
        name, ok, t, ec, jc, iree, xla = row
        r = t["jax"] / t["ember"]
        ratios.append(r)
        hand = fmt_ratio(t["hand"] / t["ember"]) if "hand" in t else ""
        print(f"{name:<13}{fmt_time(t['ember']) if ok else 'WRONG':>11}{fmt_ratio(r):>11}"
              f"{hand:>11}{fmt_time(ec):>11}{fmt_time(jc):>11}"
              f"{_mib(iree):>11}{_mib(xla):>11}")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\njax/ember: >1 means ember is faster; geomean {geo:.2f} over {len(ratios)} "
              f"programs, {sum(r >= 1.0 for r in ratios)} at or above 1.0")
    return 1 if failures else 0


def _ready(jax, out):
    return jax.block_until_ready(
        [a.block_until_ready() if hasattr(a, "block_until_ready") else a
         for a in jax.tree_util.tree_leaves(out)])


def _measure(name, fun, args, apis, jax, quick):
    """(name, ok, times, ember compile, JAX compile, IREE transient, XLA temp), or (name,
    error) where ember cannot run the program."""
    import ember
    e = ember.jit(lambda *a: fun(apis["ember"], *a))
    j = jax.jit(lambda *a: fun(apis["jax"], *a))
    e_args = ember.tree_util.tree_map(ember.device_put, args)
    j_args = jax.tree_util.tree_map(jax.device_put, args)
    try:
        e_compile, e_out = once_ns(lambda: _ready(jax, e(*e_args)))
    except Exception as err:    # a program ember cannot differentiate yet: say which
        return name, f"ERROR: {type(err).__name__}: {str(err).splitlines()[0]}"
    j_compile, j_out = once_ns(lambda: _ready(jax, j(*j_args)))
    ok = _close(e_out, j_out)
    fns = {"ember": lambda: _ready(jax, e(*e_args)), "jax": lambda: _ready(jax, j(*j_args))}
    if name == "per_example":
        h = ember.jit(lambda *a: per_example_hand(apis["ember"], *a))
        fns["hand"] = lambda: _ready(jax, h(*e_args))
        ok = ok and _close(h(*e_args), j_out)
    times = per_call_ns(fns, inner=3 if quick else 10, batches=3 if quick else 6, warmup=3)
    iree = _iree_transient(lambda *a: fun(apis["ember"], *a), args)
    xla = j.lower(*args).compile().memory_analysis().temp_size_in_bytes
    return name, ok, times, e_compile, j_compile, iree, xla


def _mib(n) -> str:
    return "n/a" if n is None else f"{n / 2**20:.1f} MiB"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    return run(parser.parse_args(argv).quick)


if __name__ == "__main__":
    sys.exit(main())
