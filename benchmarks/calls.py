"""IREE's synchronous calls against ember's fenced calls: ``python -m benchmarks.calls``.

Run from the repository root:

    python -m benchmarks.calls            # ~30 s
    python -m benchmarks.calls --quick

The same linalg program is compiled twice: with IREE's default, synchronous calling
convention (the call returns when the results are ready, after IREE's own host wait) and
with ``--iree-execution-model=async-external``, which ember uses for programs on local-task
and Vulkan (``ember/backends/runtime.py``): the call returns once queued, and ember waits for
its signal fence asleep on a file descriptor. Both are called the way ember calls them
(``vm_context.invoke`` of pre-uploaded buffers; ``Executable.invoke`` for the fenced one),
interleaved in batches (``benchmarks/timing.py``). For each: p10, median and p90 of single
calls, and the calling thread's CPU time per call (``time.thread_time``): IREE 3.13's wait
spins on it, taking a core from the pool's workers on a 2-core machine.

Programs: ``x + 1`` on 4 floats, the 3-layer MLP of ``benchmarks/vmap.py`` batched (256 x 512,
relu), and a 20-op elementwise chain on 1M floats; on local-task, and on Vulkan where a
device exists. Results are checked against NumPy (WRONG and exit status 1 otherwise).

Figures (2-core development machine, 2026-12-01, idle; ember uses fenced calls for the
programs the CPU runs on local-task, so not for x + 1, which it runs on local-sync):

    program          device      sync p50 (p10-p90)   fenced p50 (p10-p90)  caller CPU/call
    x + 1, 4 floats  local-task  79 us (6.3-101)      8.1 us (6.8-79)       144 / 7.7 us
    mlp3 256x512     local-task  2.26 ms (1.91-5.73)  1.97 ms (1.88-2.08)   1.68 ms / 86 us
    20-op chain, 1M  local-task  3.68 ms (3.54-8.00)  3.72 ms (3.61-3.86)   622 / 98 us
    x + 1, 4 floats  vulkan      77 us (65-109)       96 us (63-121)        41 / 48 us
    mlp3 256x512     vulkan      56.0 ms (47.7-60.0)  48.4 ms (45.6-52.1)   3.28 ms / 234 us
    20-op chain, 1M  vulkan      8.28 ms (8.12-16.0)  8.38 ms (8.20-11.6)   97 / 128 us

IREE's synchronous wait costs the caller a core (1.68 ms of CPU in a 2.26 ms MLP call) and
gives the long tails (p90 2.8x the median); on Vulkan a small program pays ~20 us for the
fence, so ember fences there only the programs the CPU would run on its pool.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import ember
import ember.numpy as enp
from benchmarks.timing import Table, fmt_ratio, fmt_time, log, per_call_samples
from ember.backends import get_backend
from ember.backends.compiler import compile_mlir
from ember.backends.runtime import FENCED_CALLS_FLAG, Executable
from ember.core import ShapedArray


def _mlp(x, w0, w1, w2):
    for w in (w0, w1, w2):
        x = enp.maximum(x @ w + 1, 0)
    return x


def _mlp_numpy(x, w0, w1, w2):
    for w in (w0, w1, w2):
        x = np.maximum(x @ w + 1, 0)
    return x


def _chain(x, np_=enp):
    for i in range(10):
        x = np_.tanh(x * 1.01 + 0.1 * i) * (x + 0.5)
    return x


def programs(rng):
    """(name, function, NumPy reference, arguments, calls per timed batch)."""
    ws = [(rng.standard_normal((512, 512)) / 24).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((256, 512)).astype(np.float32)
    big = rng.standard_normal(1 << 20).astype(np.float32)
    return [("x + 1, 4 floats", lambda a: a + 1, lambda a: a + 1,
             [np.arange(4, dtype=np.float32)], 2000),
            ("mlp3 256x512", _mlp, _mlp_numpy, [x, *ws], 100),
            ("20-op chain, 1M", _chain, lambda a: _chain(a, np), [big], 50)]


def _executables(fun, args, backend: str, device):
    """The program's linalg compiled synchronous and fenced, both loaded on ``device``."""
    lowered = ember.jit(fun, backend=backend).lower(*args)
    text = lowered.as_text("linalg")
    flags = get_backend(backend).compiler_flags()
    return {"sync": Executable(compile_mlir(text, flags), device),
            "fenced": Executable(compile_mlir(text, flags + (FENCED_CALLS_FLAG,)), device)}


def _caller(executable, views):
    import iree.runtime as rt

    invoke, function = executable.invoke, executable.function

    def call():
        args = rt.VmVariantList(len(views) + 2)
        for v in views:
            args.push_ref(v)
        results = rt.VmVariantList(1)
        invoke(function, args, results)
        return results.get_as_object(0, rt.HalBufferView)
    return call


def run(quick: bool) -> int:
    rng = np.random.default_rng(0)
    targets = [("cpu", get_backend("cpu").device_for_driver("local-task"))]
    vulkan = get_backend("vulkan").devices()
    if vulkan:
        targets.append(("vulkan", vulkan[0]))
    table = Table(["program", "device", "sync p50 (p10-p90)", "fenced p50 (p10-p90)",
                   "fenced/sync", "caller CPU/call: sync", "fenced"], "<<>>>>>")
    failures = []
    # The CPU first: once IREE's Vulkan device exists, lavapipe keeps two threads spinning
    # (ember/backends/runtime.py), which would take the CPU's cores.
    for backend, device in targets:
        for name, fun, reference, args, inner in programs(rng):
            want = reference(*args)
            inner = max(5, inner // 5) if quick else inner
            log(f"{name} on {device.driver}: compiling")
            exes = _executables(fun, args, backend, device)
            views = [device.upload(a) for a in args]
            calls = {k: _caller(e, views) for k, e in exes.items()}
            for k, call in calls.items():
                got = device.to_host(call(), ShapedArray(want.shape, want.dtype, False))
                if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                    failures.append(f"{name} on {device.driver}, {k}: WRONG")
            log(f"{name} on {device.driver}: timing ({inner} calls a batch)")
            samples = per_call_samples(calls, inner, 6, warmup=inner // 4 + 2)
            cpu = {}
            for k, call in calls.items():
                t = time.thread_time()
                for _ in range(inner):
                    call()
                cpu[k] = (time.thread_time() - t) / inner * 1e9
            q = {k: np.percentile(v, [10, 50, 90]) for k, v in samples.items()}

            def spread(k, q=q):
                return f"{fmt_time(q[k][1])} ({fmt_time(q[k][0])}-{fmt_time(q[k][2])})"
            table.add(name, device.driver, spread("sync"), spread("fenced"),
                      fmt_ratio(q["fenced"][1] / q["sync"][1]), fmt_time(cpu["sync"]),
                      fmt_time(cpu["fenced"]))
    print(table.render())
    for f in failures:
        print(f)
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls")
    return run(parser.parse_args(argv).quick)


if __name__ == "__main__":
    sys.exit(main())
