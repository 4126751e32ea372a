"""Where ember's per-call time goes: ``python -m benchmarks.overhead [--quick] [--profile]``.

Times each stage of the cache-hit path of ``JitFunction.__call__`` (``ember/frontend/api.py``)
and ``Compiled.run_flat`` on a jitted ``x + 1`` of 4 float32 elements, separately and
interleaved, next to the bare IREE invocation. It reaches into ember's internals
(``_signature``, ``_cache``, ``run_flat``, ``executable.invoke``): a diagnostic for
developers, not an API; stages that no longer exist are reported as n/a.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics

import numpy as np

from benchmarks.timing import Table, fmt_time, per_call_samples

TOTAL = "f(Array)  [JitFunction.__call__, total]"
BARE = "      bare: lists + invoke + get_as_object"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.overhead")
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile")
    args = parser.parse_args(argv)
    inner, batches = (2000, 5) if args.quick else (10000, 5)

    import iree.runtime as rt

    import ember
    from ember import tree_util
    from ember.backends.runtime import host_array

    f = ember.jit(lambda x: x + 1)
    xn = np.arange(4, dtype=np.float32)
    compiled = f.lower(xn).compile()
    ex = compiled.executable
    dev = ex.device
    xe = ember.device_put(xn, dev)
    xe_default = ember.device_put(xn)  # ember's default device (may differ from dev)
    f(xe)
    f(xn)
    key = next(iter(f._cache))  # the one signature compiled so far
    cached = f._cache[key]
    leaves = [xe]
    outs = cached.run_flat(leaves)
    bv = xe._bv
    aval = cached.in_avals[0]
    ctx, fn = ex.vm_context, ex.function
    VariantList, BufferView = rt.VmVariantList, rt.HalBufferView

    def bare():
        a = VariantList(1)
        a.push_ref(bv)
        r = VariantList(1)
        ctx.invoke(fn, a, r)
        return r.get_as_object(0, BufferView)

    filled = VariantList(1)
    filled.push_ref(bv)

    def variant_lists():
        a = VariantList(1)
        a.push_ref(bv)
        return VariantList(1)

    stages = {
        TOTAL: lambda: f(xe),
        f"f(Array on {xe_default.device.driver}) [ember.device_put default]":
            lambda: f(xe_default),
        "  tree_flatten(args)": lambda: tree_util.tree_flatten((xe,)),
        "  tree_flatten((args, kwargs))": lambda: tree_util.tree_flatten(((xe,), {})),
        "  _signature(args, kwargs) [slow path key]": lambda: f._signature((xe,), {}),
        "  hash(key)": lambda: hash(key),
        "  _cache.get(key)": lambda: f._cache.get(key),
        "  Compiled.run_flat([Array])": lambda: cached.run_flat(leaves),
        "    Compiled.runner(leaves) [Executable.runner]": lambda: cached.runner(leaves),
        BARE: bare,
        "      VmVariantList x2 + push_ref only": variant_lists,
        "      get_as_object(0, HalBufferView) only": lambda: filled.get_as_object(0, BufferView),
        "    Array(bv, device, aval)": lambda: ember.Array(bv, dev, aval),
        "  tree_unflatten(out_tree, outs)":
            lambda: tree_util.tree_unflatten(cached.out_tree, outs),
        "f(ndarray) [total]": lambda: f(xn),
        "  Compiled.run_flat([ndarray])": lambda: cached.run_flat([xn]),
        "    host_array(x, aval)": lambda: host_array(xn, aval),
        "    Device.upload(x)": lambda: dev.upload(xn),
        "Compiled.__call__(Array) [AOT path]": lambda: compiled(xe),
    }
    missing = []
    for name, stage in list(stages.items()):
        try:
            stage()
        except Exception as e:  # internals change: skip what no longer exists
            missing.append(f"{name.strip()}: {type(e).__name__}: {e}")
            del stages[name]
    samples = per_call_samples(stages, inner, batches)
    t = {k: statistics.median(v) for k, v in samples.items()}
    p10 = {k: float(np.percentile(v, 10)) for k, v in samples.items()}
    table = Table(["stage (ember/frontend/api.py, ember/backends/runtime.py)", "median",
                   "p10"], "<>>")
    for name, ns in t.items():
        table.add(name, fmt_time(ns), fmt_time(p10[name]))
    for m in missing:
        table.add(f"n/a ({m})"[:100], "n/a", "n/a")
    print(f"driver {dev.driver}; {batches} interleaved batches of {inner} single-timed calls")
    print(table.render())
    print(f"ember over bare: {fmt_time(t[TOTAL] - t[BARE])} (medians), "
          f"{fmt_time(p10[TOTAL] - p10[BARE])} (p10)")

    if args.profile:
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(inner):
            f(xe)
        pr.disable()
        out = io.StringIO()
        pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
