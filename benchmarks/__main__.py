"""ember benchmarks: per-call overhead, steady-state runtime and compile time, in one table.

Run from the repository root:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks           # ~1-2 minutes
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks --quick   # fewer repeats

Unset ``OPENBLAS_CORETYPE`` / ``OPENBLAS_L2_SIZE`` in the command when comparing with NumPy:
some environments pin OpenBLAS to a generic kernel through them, which makes NumPy's matmul
look slower than it is. (They are read when OpenBLAS loads, so they must be unset before
Python starts.) The header names the BLAS kernel NumPy actually uses.

JAX is optional (``pip install -e .[bench]``); without it the JAX rows show "n/a".

What is measured, all in one process and one run:

1. Per-call overhead of a jitted ``x + 1`` on a 4-element float32 array on the cache-hit path,
   with the argument an ``ember.Array`` already on the executable's device and as a NumPy
   array, against a bare ``iree.runtime`` invocation of the same compiled module
   (``VmVariantList.push_ref`` of a pre-uploaded ``HalBufferView`` + ``vm_context.invoke``)
   on the driver ember chose and on the other local driver, NumPy's ``x + 1`` and
   ``jax.jit`` (with ``block_until_ready``). Medians of individually timed calls, run in
   interleaved batches (robust to a loaded machine; see ``benchmarks/timing.py``).
   Targets: ember adds at most 5 µs to the bare invocation; ember <= 2x jax.jit.
2. Steady-state runtime (median of repeats after warm-up; inputs already on the device for
   ember and JAX) of a 20-op elementwise chain, a 12-step sin/cos chain, one cos of 1M
   floats, a 3-layer MLP, softmax and layernorm.
3. Compile time: ember cold (on-disk compile cache off, in-memory caches cleared; first call
   minus steady state, plus an AOT breakdown into trace / ember passes / IREE compile+load)
   and ``jax.jit`` (first call minus steady state).

Every ember result (and JAX's) is checked against NumPy with ``assert_allclose`` once; a
wrong result is reported as WRONG instead of a time, and the exit status is then 1.
``python -m benchmarks.overhead`` breaks ember's per-call time down by stage.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

from benchmarks import programs
from benchmarks.timing import (
    Table,
    fmt_diff,
    fmt_ratio,
    fmt_time,
    jax_modules,
    log,
    once_ns,
    per_call_ns,
    report_failures,
    steady_ns,
)


def blas_info() -> str:
    """The BLAS NumPy uses at run time: threadpoolctl if installed, else OpenBLAS via ctypes."""
    try:
        from threadpoolctl import threadpool_info
        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            i = infos[0]
            return (f"{i.get('internal_api')} {i.get('version')}, kernel "
                    f"{i.get('architecture')}, {i.get('num_threads')} threads")
    except ImportError:
        pass
    try:
        import ctypes
        with open("/proc/self/maps") as f:
            libs = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower()})
        for path in libs:
            lib = ctypes.CDLL(path)
            for prefix, suffix in (("scipy_", "64_"), ("", "64_"), ("", "")):
                core = getattr(lib, f"{prefix}openblas_get_corename{suffix}", None)
                threads = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
                if core is not None:
                    core.restype = ctypes.c_char_p
                    n = threads() if threads is not None else "?"
                    return f"OpenBLAS, kernel {core().decode()}, {n} threads"
    except Exception:  # diagnostic only
        pass
    return "unknown (install threadpoolctl to see it)"


def header(jax, jax_note: str) -> None:
    from importlib.metadata import version

    import ember
    print("ember benchmarks")
    print(f"  python {platform.python_version()}, numpy {np.__version__}, ember "
          f"{ember.__version__}, iree-base-runtime {version('iree-base-runtime')}, "
          f"jax {jax.__version__ if jax else jax_note}")
    print(f"  cpu: {os.cpu_count()} cores ({platform.machine()}), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"  numpy BLAS: {blas_info()}")
    pinned = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ]
    if pinned:
        print(f"  WARNING: {', '.join(pinned)} set: NumPy's BLAS may be pinned to a slow kernel; "
              "rerun with env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE")
    print()


class Report:
    """The table, correctness failures and the figures the targets are judged on."""

    def __init__(self):
        self.table = Table(["section", "case", "implementation", "median", "ember/this",
                            "ember-this"], "<<<>>>")
        self.failures: list[str] = []
        self.figures: dict[str, float | None] = {}
        self.compile_rows: list = []
        self._section = self._case = None

    def row(self, section, case, impl, ns, ember_ns=None, *, wrong=False):
        if section != self._section:
            self.table.section()
        show_section = section if section != self._section else ""
        show_case = case if (section, case) != (self._section, self._case) else ""
        self._section, self._case = section, case
        if wrong:
            self.table.add(show_section, show_case, impl, "WRONG", "", "")
            return
        is_ref = ember_ns is None or ns is None
        ratio = None if is_ref else ember_ns / ns
        diff = None if is_ref else ember_ns - ns
        self.table.add(show_section, show_case, impl, fmt_time(ns),
                       "" if ember_ns is None else fmt_ratio(ratio),
                       "" if ember_ns is None else fmt_diff(diff))

    def check(self, what: str, got, want, rtol: float, atol: float) -> bool:
        try:
            np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)
            return True
        except AssertionError as e:
            self.failures.append(f"{what}: result differs from NumPy:{e}")
            return False


def _ember_cold(jf, np_args, dev_args):
    """Cold compile of ``prog``: (first-call ns, first result, AOT breakdown, Compiled)."""
    import ember
    ember.clear_caches()
    first_ns, first_out = once_ns(lambda: jf(*dev_args))
    # The same program again, ahead of time, stage by stage (still cold).
    ember.clear_caches()
    trace_ns, lowered = once_ns(lambda: jf.lower(*np_args))
    passes_ns, _ = once_ns(lambda: lowered.as_text("linalg"))
    iree_ns, compiled = once_ns(lowered.compile)
    return first_ns, first_out, (trace_ns, passes_ns, iree_ns), compiled


def small_call(rep: Report, jax, jnp, quick: bool) -> None:
    import iree.runtime as rt

    import ember
    import ember.numpy as enp

    section = "1 per-call"
    inner, batches = (2000, 5) if quick else (20000, 7)
    xn = np.arange(4, dtype=np.float32)
    want = xn + 1
    jf = ember.jit(lambda x: programs.add_one(enp, x))
    log("compiling x+1 (cold)")
    first_ns, first_out, aot, compiled = _ember_cold(jf, [xn], [ember.device_put(xn)])
    rep.check("ember x+1 (first call)", first_out, want, 0, 0)
    ex = compiled.executable
    driver = ex.device.driver
    xe = ember.device_put(xn, ex.device)

    # Bare IREE on the same compiled module, context and driver.
    vm_context, function = ex.vm_context, ex.function
    VariantList, BufferView = rt.VmVariantList, rt.HalBufferView

    def upload(hal, host):
        return hal.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=hal, buffer=host, element_type=rt.HalElementType.FLOAT_32)

    def make_bare(ctx, fn, hal):
        bv = upload(hal, xn)

        def bare():
            args = VariantList(1)
            args.push_ref(bv)
            res = VariantList(1)
            ctx.invoke(fn, args, res)
            return res.get_as_object(0, BufferView)

        def bare_upload():
            args = VariantList(1)
            args.push_ref(upload(hal, xn))
            res = VariantList(1)
            ctx.invoke(fn, args, res)
            return res.get_as_object(0, BufferView)
        return bare, bare_upload

    hal = rt.get_device(driver)
    bare, bare_upload = make_bare(vm_context, function, hal)
    other = "local-task" if driver == "local-sync" else "local-sync"
    hal2 = rt.get_device(other)
    config2 = rt.Config(device=hal2)
    module2 = rt.VmModule.copy_buffer(config2.vm_instance, ex.vmfb)
    context2 = rt.SystemContext(vm_modules=[module2], config=config2)
    bare_other, _ = make_bare(context2.vm_context, module2.lookup_function("main"), hal2)

    def host(bv):
        return np.array(bv.map().asarray((4,), np.dtype(np.float32)))

    fns = {
        "ember Array": lambda: jf(xe),
        "ember NumPy": lambda: jf(xn),
        "bare": bare,
        "bare upload": bare_upload,
        "bare other": bare_other,
        "numpy": lambda: xn + 1,
    }
    ok = {
        "ember Array": rep.check("ember x+1 (Array arg)", jf(xe), want, 0, 0),
        "ember NumPy": rep.check("ember x+1 (NumPy arg)", jf(xn), want, 0, 0),
        "bare": rep.check(f"bare iree x+1 ({driver})", host(bare()), want, 0, 0),
        "bare upload": rep.check(f"bare iree x+1 ({driver})", host(bare_upload()), want, 0, 0),
        "bare other": rep.check(f"bare iree x+1 ({other})", host(bare_other()), want, 0, 0),
        "numpy": True,
    }
    jax_first = None
    if jax is not None:
        jjf = jax.jit(lambda x: programs.add_one(jnp, x))
        xj = jax.device_put(xn)
        jax_first, jout = once_ns(lambda: jjf(xj).block_until_ready())
        fns["jax"] = lambda: jjf(xj).block_until_ready()
        fns["jax NumPy"] = lambda: jjf(xn).block_until_ready()
        ok["jax"] = rep.check("jax x+1", jout, want, 0, 0)
        ok["jax NumPy"] = rep.check("jax x+1 (NumPy arg)", jjf(xn), want, 0, 0)
    log(f"timing {len(fns)} per-call variants ({batches} batches of {inner} calls)")
    t = per_call_ns(fns, inner, batches)
    t.setdefault("jax", None)
    t.setdefault("jax NumPy", None)

    case = "x+1 4xf32, Array arg"
    e = t["ember Array"]
    rep.row(section, case, f"ember jit, Array on {driver}", e, wrong=not ok["ember Array"])
    rep.row(section, case, f"bare iree invoke ({driver}, ember's driver)", t["bare"], e,
            wrong=not ok["bare"])
    rep.row(section, case, f"bare iree invoke ({other})", t["bare other"], e,
            wrong=not ok["bare other"])
    rep.row(section, case, "numpy x + 1", t["numpy"], e)
    rep.row(section, case, "jax.jit + block_until_ready", t["jax"], e,
            wrong=not ok.get("jax", True))
    case = "x+1 4xf32, NumPy arg"
    e2 = t["ember NumPy"]
    rep.row(section, case, "ember jit, NumPy array", e2, wrong=not ok["ember NumPy"])
    rep.row(section, case, f"bare iree upload + invoke ({driver})", t["bare upload"], e2,
            wrong=not ok["bare upload"])
    rep.row(section, case, "numpy x + 1", t["numpy"], e2)
    rep.row(section, case, "jax.jit + block_until_ready", t["jax NumPy"], e2,
            wrong=not ok.get("jax NumPy", True))

    rep.figures.update({
        "ember": e, "bare": t["bare"], "jax": t["jax"], "driver": driver,
        "ember_np": e2, "bare_upload": t["bare upload"],
    })
    rep.compile_rows.append(("x+1 4xf32", first_ns - e, aot,
                         None if jax_first is None else jax_first - t["jax"]))


def steady_state(rep: Report, jax, jnp, quick: bool) -> None:
    repeats, warmup = (3, 1) if quick else (15, 2)
    for name, prog, args, rtol, atol in programs.cases():
        _steady_case(rep, jax, jnp, name, prog, args, rtol, atol, repeats, warmup)


def _steady_case(rep: Report, jax, jnp, name, prog, args, rtol, atol, repeats, warmup):
    import ember
    import ember.numpy as enp

    section = "2 steady-state"
    log(f"{name}: NumPy reference")
    want = prog(np, *args)
    jf = ember.jit(lambda *a: prog(enp, *a))
    log(f"{name}: ember cold compile")
    first_ns, first_out, aot, compiled = _ember_cold(
        jf, args, [ember.device_put(a) for a in args])
    ok_first = rep.check(f"ember {name} (first call)", first_out, want, rtol, atol)
    dev = compiled.executable.device
    eargs = [ember.device_put(a, dev) for a in args]
    ok_e = rep.check(f"ember {name}", jf(*eargs), want, rtol, atol) and ok_first
    log(f"{name}: timing ember on {dev.driver}")
    e = steady_ns(lambda: jf(*eargs), repeats, warmup)
    log(f"{name}: timing numpy")
    n = steady_ns(lambda: prog(np, *args), repeats, warmup)
    j = jax_first = None
    ok_j = True
    if jax is not None:
        jjf = jax.jit(lambda *a: prog(jnp, *a))
        jargs = [jax.device_put(a) for a in args]
        for a in jargs:
            a.block_until_ready()
        log(f"{name}: jax compile + timing")
        jax_first, jout = once_ns(lambda: jjf(*jargs).block_until_ready())
        ok_j = rep.check(f"jax {name}", jout, want, rtol, atol)
        j = steady_ns(lambda: jjf(*jargs).block_until_ready(), repeats, warmup)
    rep.row(section, name, f"ember jit ({dev.driver})", e, wrong=not ok_e)
    rep.row(section, name, "numpy", n, e)
    rep.row(section, name, "jax.jit", j, e, wrong=not ok_j)
    rep.compile_rows.append((name, first_ns - e, aot,
                             None if jax_first is None else jax_first - j))


def compile_times(rep: Report) -> None:
    section = "3 compile"
    for name, ember_ns, (trace_ns, passes_ns, iree_ns), jax_ns in rep.compile_rows:
        rep.row(section, name, "ember cold: 1st call - steady", ember_ns)
        rep.row(section, name, "  AOT: trace (jit.lower)", trace_ns)
        rep.row(section, name, "  AOT: ember passes (as_text linalg)", passes_ns)
        rep.row(section, name, "  AOT: IREE compile + load", iree_ns)
        rep.row(section, name, "jax.jit: 1st call - steady", jax_ns, ember_ns)


def targets(rep: Report) -> list[str]:
    f = rep.figures
    lines = []
    added = f["ember"] - f["bare"]
    lines.append(f"ember adds {added / 1e3:.2f} µs to the bare invocation on {f['driver']} "
                 f"({f['ember'] / f['bare']:.2f}x; target <= 5 µs): "
                 f"{'MET' if added <= 5e3 else 'MISSED'}")
    if f["jax"] is not None:
        r = f["ember"] / f["jax"]
        lines.append(f"ember per call is {r:.2f}x jax.jit (target <= 2x): "
                     f"{'MET' if r <= 2 else 'MISSED'}")
    else:
        lines.append("ember vs jax.jit per call: n/a (no JAX)")
    lines.append(f"NumPy argument: ember adds {(f['ember_np'] - f['bare_upload']) / 1e3:.2f} µs "
                 "to a bare upload + invoke")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        lines.append(f"NOTE: load average {load:.1f} on {os.cpu_count()} cores: other work "
                     "shared the CPUs; times (not ratios) are inflated, rerun on an idle machine")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations and repeats")
    parser.add_argument("--no-jax", action="store_true", help="skip JAX even if installed")
    args = parser.parse_args(argv)

    import ember
    jax, jnp = (None, None) if args.no_jax else jax_modules()
    header(jax, "skipped (--no-jax)" if args.no_jax else "not installed (JAX rows n/a)")
    t0 = time.perf_counter()
    saved = ember.config.compile_cache
    ember.config.update("compile_cache", False)
    rep = Report()
    try:
        # Load and initialise IREE's compiler once, outside the compile-time figures.
        log("warming up the IREE compiler")
        ember.jit(lambda x: x * 2)(np.float32(1))
        small_call(rep, jax, jnp, args.quick)
        steady_state(rep, jax, jnp, args.quick)
        compile_times(rep)
    finally:
        ember.config.update("compile_cache", saved)
    print(rep.table.render())
    print()
    print("ember/this > 1: ember is slower; ember-this: how much longer ember takes.")
    for line in targets(rep):
        print(line)
    print(f"total {time.perf_counter() - t0:.1f} s; load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return report_failures(rep.failures)


if __name__ == "__main__":
    sys.exit(main())
