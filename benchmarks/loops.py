"""Loops that update a large carried buffer, ember against JAX: ``python -m benchmarks.loops``.

Run from the repository root:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.loops       # ~2 min

The programs (512x512 float32 buffer): a ``fori_loop`` that fills the buffer row by row at
the loop index (``buf.at[i].set(2 * x[i])``, 512 steps), the same as a ``while_loop`` on a
counter, a ``scan`` that adds a row into
row 0 and reads it back (64 steps), and a ``scan`` of 1000 steps that decays the buffer.
Each by ember with its host loop in chunks of ``ember.config.loop_run_ahead`` steps (the
default, 32), by ember without chunks (``ember-run-ahead-0``), by ember without
``ember-pin-loop-carries`` (``ember-unpinned``) and by JAX. Medians of single
calls after warm-up, timed interleaved, inputs on the device; each result is checked against
NumPy once. "resident MiB": the memory a fresh process gains over the first three calls
(``timing.resident_gain``, results dropped between calls; the median of three processes).

IREE runs such a loop on the host, one command buffer per step; XLA runs it in its compiled
code. IREE copies a carried buffer before each op that reads it unless
``ember-pin-loop-carries`` placed the carry on the device ("ember-unpinned" is ember without
that pass). The host records steps ahead of the device, and every step in flight holds blocks
of IREE's block pool, which it keeps (ember/dialects/control_flow.py).
Figures (2-core development machine, 2026-12-03, idle, two runs): the row fill 2.8-3.2 ms,
the same without chunks 0.97-0.99x, unpinned 8.7-11.5x (28-33 ms), JAX 0.14-0.17x (0.41-0.56
ms); as a while_loop 2.9-3.3 ms, unpinned 10.2-11.3x, JAX 0.16-0.17x; the 64-step scan
0.70-0.82 ms, 0.88-0.95x without chunks, unpinned 5.8-6.8x, JAX 6.4-7.8x ember's time; the
1000-step scan 29-30 ms and 2.0 MiB in chunks, 1.15-1.17x the time and 11.8-12.1 MiB
without, unpinned 1.77-1.82x, JAX 1.90-1.95x the time and 4.8-4.9 MiB. On 2026-12-02 (two
runs): the row fill 3.7 ms, the 64-step scan 0.63-0.79 ms, the 1000-step scan 30-40 ms (JAX
1.50-1.76x), and the while_loop 4.1 ms while its carry was pinned in the condition region
too. Before ember-pin-loop-carries: the
row fill 19-22 ms, the 64-step scan 2.9 ms, the 1000-step scan 60-72 ms.
With ``unroll=8`` (2026-12-07, one run, the machine shared): the row fill 0.47x ember's rolled
time (2.65 -> 1.25 ms; JAX 0.62 ms), the 1000-step scan 0.38x (42 -> 16 ms; JAX 69 ms), the
64-step scan 0.92x (493 -> 454 us; 6.8x and 8 MiB resident while the ys were stacked after
the last step of a group: each step's sum was then placed after the next update of the
carry, which IREE made on a copy); the while_loop has no unroll.
"""

from __future__ import annotations

import argparse
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
    resident_gain,
    resident_in_child,
)


def fill_rows(m, lax, x):
    """Row i of the result is 2 * x[i], written one row per loop step."""
    return lax.fori_loop(0, x.shape[0], lambda i, buf: buf.at[i].set(x[i] * 2.0),
                         m.zeros_like(x))


def fill_rows_while(m, lax, x):
    """fill_rows as a ``while_loop`` on a counter."""
    def body(c):
        i, buf = c
        return i + 1, buf.at[i].set(x[i] * 2.0)
    return lax.while_loop(lambda c: c[0] < x.shape[0], body, (0, m.zeros_like(x)))[1]


def add_into_row(m, lax, x):
    """64 steps, each adding a row of ``x`` into row 0 and reading row 0's sum."""
    def body(buf, row):
        buf = buf.at[0].add(row)
        return buf, buf[0].sum()
    return lax.scan(body, x, x[:64])


def long_scan(m, lax, x):
    """1000 steps over a 1 MiB carry: decay it and add one element of a row of ``x``."""
    def body(buf, row):
        buf = buf * 0.999 + row[0]
        return buf, buf[0].sum()
    return lax.scan(body, x, m.tile(x, (2, 1))[:1000])


def _numpy(name, x):
    if name in ("fill_rows", "fill_rows_while"):
        return x * 2.0
    if name == "long_scan":
        buf, sums = x.copy(), []
        for row in np.tile(x, (2, 1))[:1000]:
            buf = buf * np.float32(0.999) + row[0]
            sums.append(buf[0].sum())
        return buf, np.array(sums, np.float32)
    buf = x.copy()
    sums = []
    for row in x[:64]:
        buf[0] += row
        sums.append(buf[0].sum())
    return buf, np.array(sums, np.float32)


class _Unrolled:
    """A lax module whose ``scan`` and ``fori_loop`` unroll ``k`` steps (JAX's ``unroll``)."""

    def __init__(self, lax, k: int):
        self._lax, self._k = lax, k

    def __getattr__(self, name):
        return getattr(self._lax, name)

    def scan(self, *args, **kwargs):
        return self._lax.scan(*args, unroll=self._k, **kwargs)

    def fori_loop(self, *args, **kwargs):
        return self._lax.fori_loop(*args, unroll=self._k, **kwargs)


def _contender(which: str, prog, x):
    """A function running ``prog`` once, compiled by ``which``: "ember", "ember-run-ahead-0"
    (ember.config.loop_run_ahead 0: IREE records a host loop's steps as far ahead as it
    likes), "ember-unpinned" (without ember-pin-loop-carries: IREE copies a carry before
    each use), "ember-unroll-8" (``scan`` and ``fori_loop`` with ``unroll=8``; a
    ``while_loop`` has none) or "jax"; and its first result."""
    if which == "jax":
        jax, jnp = jax_modules()
        jf = jax.jit(lambda x: prog(jnp, jax.lax, x))
        xj = jax.device_put(x)
        return lambda: jax.block_until_ready(jf(xj)), jf(xj)
    import ember
    import ember.lax as elax
    import ember.numpy as enp
    from ember.passes import pipelines
    saved, lower = ember.config.loop_run_ahead, pipelines.LOWER
    ember.config.update("loop_run_ahead", 0 if which == "ember-run-ahead-0" else saved)
    if which == "ember-unpinned":
        pipelines.LOWER = [n for n in lower if n != "ember-pin-loop-carries"]
    if which == "ember-unroll-8":
        elax = _Unrolled(elax, 8)
    try:
        compiled = ember.jit(lambda x: prog(enp, elax, x)).lower(x).compile()
    finally:
        ember.config.update("loop_run_ahead", saved)
        pipelines.LOWER = lower
    xe = ember.device_put(x)
    return (lambda: ember.tree_util.tree_map(lambda a: a.block_until_ready(), compiled(xe)),
            compiled(xe))


def _inputs():
    return np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)


PROGRAMS = {"fill_rows": fill_rows, "fill_rows_while": fill_rows_while,
            "add_into_row": add_into_row, "long_scan": long_scan}


def main(argv=None) -> int:
    import ember

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resident", nargs=2, metavar=("WHICH", "PROGRAM"),
                        help=argparse.SUPPRESS)       # the child of resident_in_child
    args = parser.parse_args(argv)
    if args.resident:
        run, _ = _contender(args.resident[0], PROGRAMS[args.resident[1]], _inputs())
        print(resident_gain(run))
        return 0
    jax, _ = jax_modules()
    x = _inputs()
    table = Table(["program", "implementation", "median", "this/ember", "resident MiB"],
                  "<<>>>")
    failures = []
    for name, prog in PROGRAMS.items():
        which = ["ember", "ember-run-ahead-0", "ember-unpinned", "ember-unroll-8"] + (
            ["jax"] if jax else [])
        fns = {}
        want = _numpy(name, x)
        for k in which:
            fns[k], got = _contender(k, prog, x)
            for g, w in zip(ember.tree_util.tree_leaves(got),
                            ember.tree_util.tree_leaves(want)):
                if not np.allclose(np.asarray(g), w, rtol=1e-4, atol=1e-3):
                    failures.append(f"{k} {name}")
        samples = per_call_samples(fns, inner=1, batches=15, warmup=3)
        med = {k: statistics.median(v) for k, v in samples.items()}
        table.section()
        for k, t in med.items():
            gain = resident_in_child("benchmarks.loops", k, name)
            table.add(name if k == "ember" else "", k, fmt_time(t),
                      "" if k == "ember" else fmt_ratio(t / med["ember"]),
                      "n/a" if gain is None else f"{gain / 2**20:.2f}")
    print(table.render())
    return report_failures(failures)


if __name__ == "__main__":
    sys.exit(main())
