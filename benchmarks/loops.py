"""Loops that update a large carried buffer, ember against JAX: ``python -m benchmarks.loops``.

Run from the repository root:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.loops       # ~20 s

The programs (512x512 float32 buffer): a ``fori_loop`` that fills the buffer row by row at
the loop index (``buf.at[i].set(2 * x[i])``, 512 steps), and a ``scan`` that adds a row into
row 0 and reads it back (64 steps). Medians of single calls after warm-up, timed
interleaved, inputs on the device; each result is checked against NumPy once.

IREE runs such a loop on the host, one command buffer per step, and copies the carried
buffer at every step when a scatter updates it in place (DESIGN.md); XLA runs the loop in
its compiled code. Figures (2-core development machine, 2026-12-02): the row fill 32 ms
while a dynamic-index scatter copied its operand into a padded buffer and back, 18 ms since
it updates in place (``ember/passes/lower_indexing.py``), JAX 0.13-0.46 ms; the scan 2.0-2.3
ms, JAX 2.1-2.5 ms (1.04x ember's time).
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

from benchmarks.timing import (
    Table,
    fmt_ratio,
    fmt_time,
    jax_modules,
    per_call_samples,
    report_failures,
)


def fill_rows(m, lax, x):
    """Row i of the result is 2 * x[i], written one row per loop step."""
    return lax.fori_loop(0, x.shape[0], lambda i, buf: buf.at[i].set(x[i] * 2.0),
                         m.zeros_like(x))


def add_into_row(m, lax, x):
    """64 steps, each adding a row of ``x`` into row 0 and reading row 0's sum."""
    def body(buf, row):
        buf = buf.at[0].add(row)
        return buf, buf[0].sum()
    return lax.scan(body, x, x[:64])


def _numpy(name, x):
    if name == "fill_rows":
        return x * 2.0
    buf = x.copy()
    sums = []
    for row in x[:64]:
        buf[0] += row
        sums.append(buf[0].sum())
    return buf, np.array(sums, np.float32)


def main(argv=None) -> int:
    import ember
    import ember.lax as elax
    import ember.numpy as enp

    jax, jnp = jax_modules()
    x = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    table = Table(["program", "implementation", "median", "this/ember"], "<<>>")
    failures = []
    for prog in (fill_rows, add_into_row):
        fns = {}
        ef = ember.jit(lambda x, prog=prog: prog(enp, elax, x))
        xe = ember.device_put(x)
        got = ef(xe)
        want = _numpy(prog.__name__, x)
        for g, w in zip(ember.tree_util.tree_leaves(got), ember.tree_util.tree_leaves(want)):
            if not np.allclose(np.asarray(g), w, rtol=1e-4, atol=1e-3):
                failures.append(f"ember {prog.__name__}")
        fns["ember"] = lambda ef=ef, xe=xe: ember.tree_util.tree_map(
            lambda a: a.block_until_ready(), ef(xe))
        if jax is not None:
            jf = jax.jit(lambda x, prog=prog: prog(jnp, jax.lax, x))
            xj = jax.device_put(x)
            fns["jax"] = lambda jf=jf, xj=xj: jax.block_until_ready(jf(xj))
        samples = per_call_samples(fns, inner=1, batches=15, warmup=3)
        med = {k: statistics.median(v) for k, v in samples.items()}
        table.section()
        for k, t in med.items():
            table.add(prog.__name__ if k == "ember" else "", k, fmt_time(t),
                      "" if k == "ember" else fmt_ratio(t / med["ember"]))
    print(table.render())
    return report_failures(failures)


if __name__ == "__main__":
    sys.exit(main())
