"""Warming a server's shapes in the background: ``python -m benchmarks.warm``.

A fresh process per sample makes ``ember.jit`` of an MLP (784 -> 512 -> 512 -> 10, softmax;
``dynamic_shapes=False``, so that every batch size is a compile of its own, the disk cache
off), asks ``f.warm`` for eight batch sizes and waits for all of them: the wall time with
``compile_workers`` 1 (IREE compiles one program at a time, as before) and 2 (a second worker
compiles beside the first), and ``jax.jit(...).lower(...).compile()`` of the same eight sizes
one after another. Median of ``--repeats`` processes per side, the sides alternated.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = """
import sys, time
import numpy as np
side = sys.argv[1]
sizes = (1, 8, 17, 32, 64, 100, 128, 256)
rng = np.random.default_rng(0)
shapes = ((784, 512), (512, 512), (512, 10))
ws = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in shapes]
from benchmarks.dynamic import _mlp      # (the child runs in the repository root)
if side == "jax":
    import jax, jax.numpy as jnp
    f = jax.jit(lambda ws, x: _mlp(ws, x, jnp, jax.nn.softmax))
    t = time.perf_counter()
    for n in sizes:
        f.lower(ws, jax.ShapeDtypeStruct((n, 784), jnp.float32)).compile()
else:
    import ember
    ember.config.update("compile_cache", False)
    ember.config.update("compile_workers", int(side))
    f = ember.jit(_mlp, dynamic_shapes=False)
    time.sleep(1.5)         # the worker started by jit is up, as in a server that loaded data
    t = time.perf_counter()
    futures = [f.warm(ws, ember.ShapeDtypeStruct((n, 784), "float32")) for n in sizes]
    for fut in futures:
        fut.result()
    x = rng.standard_normal((17, 784)).astype(np.float32)
    took = time.perf_counter() - t
    e = np.exp(np.tanh(np.tanh(x @ ws[0]) @ ws[1]) @ ws[2])
    np.testing.assert_allclose(np.asarray(f(ws, x)), e / e.sum(-1, keepdims=True), rtol=1e-4,
                               atol=1e-6)
    print(took)
    sys.exit()
print(time.perf_counter() - t)
"""


def sample(side: str) -> float | None:
    out = subprocess.run([sys.executable, "-c", CHILD, side], capture_output=True, text=True)
    if out.returncode != 0:
        if side == "jax" and "No module named 'jax'" in out.stderr:
            return None
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    sides = ("1", "2", "jax")
    times: dict[str, list] = {s: [] for s in sides}
    for _ in range(args.repeats):
        for side in sides:
            times[side].append(sample(side))
    med = {s: None if None in t else statistics.median(t) for s, t in times.items()}
    print("eight batch sizes of an MLP warmed (median of "
          f"{args.repeats} processes each, seconds):")
    print(f"  ember, compile_workers=1: {med['1']:.2f}")
    print(f"  ember, compile_workers=2: {med['2']:.2f}  ({med['2'] / med['1']:.2f}x of one "
          "worker's)")
    if med["jax"] is None:
        print("  jax.jit: not installed")
    else:
        print(f"  jax.jit, one after another: {med['jax']:.2f}  (ember/JAX "
              f"{med['1'] / med['jax']:.1f}x and {med['2'] / med['jax']:.1f}x)")


if __name__ == "__main__":
    main()
