"""Backends side by side: per-call overhead, readback time, and the core benchmark programs
on every backend this machine has, as ratios to the CPU (and to JAX on a GPU when JAX sees
one).

Run: ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.backends [--quick]``.
Vulkan on Mesa's lavapipe is a CPU emulation of a GPU: its figures show that the path works
and what its overhead is, not GPU speed. Its per-call times are bimodal here (about 0.2-0.3 ms,
or about 8 ms when a call waits on lavapipe's queue), hence the p10 beside the median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from benchmarks import programs
from benchmarks.timing import (
    Table,
    fmt_ratio,
    fmt_time,
    log,
    per_call_samples,
    report_failures,
    steady_ns,
)


def _present_backends() -> list[str]:
    import ember
    return [b for b in ("cpu", "vulkan", "cuda") if ember.devices(b)]


def _readback_ns(fresh, repeats: int) -> tuple[float, float]:
    """(first readback, median of later readbacks) of new Arrays on the same buffer."""
    first_ns = None
    times = []
    for _ in range(repeats):
        a = fresh()
        t0 = time.perf_counter_ns()
        np.asarray(a)
        dt = time.perf_counter_ns() - t0
        if first_ns is None:
            first_ns = dt
        else:
            times.append(dt)
    return first_ns, statistics.median(times)


def _overhead_row(name: str, quick: bool, failures: list) -> list[str]:
    import ember

    inner, batches = (300, 3) if quick else (2000, 5)
    xn = np.arange(4, dtype=np.float32)
    big = np.ones(1 << 20, np.float32)
    log(f"{name}: per-call overhead")
    f = ember.jit(lambda x: x + 1, backend=name)
    dev = ember.devices(name)[0]
    xe = ember.device_put(xn, dev)
    out = f(xe)
    if not np.array_equal(np.asarray(out), xn + 1):
        failures.append(f"{name}: x+1 gave {np.asarray(out)}")
    samples = per_call_samples({"array": lambda: f(xe), "numpy": lambda: f(xn)}, inner,
                               batches)
    t = {k: statistics.median(v) for k, v in samples.items()}
    p10 = {k: float(np.percentile(v, 10)) for k, v in samples.items()}
    log(f"{name}: readback")
    # A fresh Array on the result's buffer each time: its host copy is not cached yet. Each
    # size class's staging buffer (Vulkan) is made on its first readback.
    first, later = _readback_ns(lambda: ember.Array(out._bv, out.device, out.aval),
                                50 if quick else 500)
    ob = f(ember.device_put(big, dev))
    _, later_big = _readback_ns(lambda: ember.Array(ob._bv, ob.device, ob.aval),
                                5 if quick else 20)
    if not np.array_equal(np.asarray(ob), big + 1):
        failures.append(f"{name}: readback of 4 MB wrong")
    return [name, f"{fmt_time(t['array'])} ({fmt_time(p10['array'])})",
            f"{fmt_time(t['numpy'])} ({fmt_time(p10['numpy'])})", fmt_time(first),
            fmt_time(later), fmt_time(later_big)]


def overhead_and_readback(backends, quick: bool, failures: list) -> Table:
    table = Table(["backend", "call x+1 (4 f32, Array in) (p10)", "call (NumPy in) (p10)",
                   "readback 16 B first", "readback 16 B", "readback 4 MB"], "<>>>>>")
    for name in backends:
        table.add(*_overhead_row(name, quick, failures))
    return table


def _jax_gpu():
    try:
        import jax
        gpus = jax.devices("gpu")
    except Exception:
        return None, None
    return (jax, gpus[0]) if gpus else (None, None)


def _jax_ns(jax, device, prog, args, repeats: int) -> float:
    import jax.numpy as jnp

    jf = jax.jit(lambda *a: prog(jnp, *a))
    jargs = [jax.device_put(a, device) for a in args]
    jf(*jargs).block_until_ready()
    return steady_ns(lambda: jf(*jargs).block_until_ready(), repeats)


def program_ratios(backends, quick: bool, failures: list) -> Table:
    import ember
    import ember.numpy as enp

    jax, jax_gpu = _jax_gpu() if "cuda" in backends else (None, None)
    cols = ["program"] + [f"{b}" for b in backends] + [f"{b}/cpu" for b in backends[1:]]
    if jax_gpu is not None:
        cols += ["jax gpu", "cuda/jax"]
    table = Table(cols, "<" + ">" * (len(cols) - 1))
    repeats = 5 if quick else 20
    for name, prog, args, rtol, atol in programs.cases():
        if quick and name.startswith("mlp"):
            args = [a[:64] if i == 0 else a for i, a in enumerate(args)]
        want = prog(np, *args)
        times = {}
        for b in backends:
            f = ember.jit(lambda *a, _p=prog: _p(enp, *a), backend=b)
            dev = ember.devices(b)[0]
            dargs = [ember.device_put(a, dev) for a in args]
            log(f"{name} on {b}: compile + check")
            got = np.asarray(f(*dargs))
            if not np.allclose(got, want, rtol=rtol * 10, atol=atol * 10):
                err = float(np.max(np.abs(got - want)))
                failures.append(f"{name} on {b}: max abs error {err:.3g}")
            log(f"{name} on {b}: timing")
            times[b] = steady_ns(lambda f=f, d=dargs: f(*d), repeats)
        row = [name] + [fmt_time(times[b]) for b in backends]
        row += [fmt_ratio(times[b] / times["cpu"]) for b in backends[1:]]
        if jax_gpu is not None:
            tj = _jax_ns(jax, jax_gpu, prog, args, repeats)
            row += [fmt_time(tj), fmt_ratio(times["cuda"] / tj)]
        table.add(*row)
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    parser.add_argument("--backends", default=None,
                        help="comma-separated backends (default: every one present)")
    args = parser.parse_args(argv)
    import ember

    backends = args.backends.split(",") if args.backends else _present_backends()
    if "cpu" not in backends:
        backends = ["cpu"] + backends
    print(f"devices: {ember.devices()}")
    failures: list[str] = []
    print("\nper-call overhead and readback (medians)")
    print(overhead_and_readback(backends, args.quick, failures).render())
    print("\nbenchmark programs (inputs on the device; steady-state medians, ratio to the CPU)")
    print(program_ratios(backends, args.quick, failures).render())
    return report_failures(failures)


if __name__ == "__main__":
    sys.exit(main())
