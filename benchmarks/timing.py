"""Timing helpers (``time.perf_counter_ns``, GC off while timing) and the plain-text table."""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable


def _noop():
    pass


def per_call_ns(fns: dict[str, Callable[[], object]], inner: int, batches: int,
                warmup: int = 200, pause_s: float = 0.02) -> dict[str, float]:
    """Median time of one call of each function, in ns (see :func:`per_call_samples`)."""
    samples = per_call_samples(fns, inner, batches, warmup, pause_s)
    return {k: statistics.median(v) for k, v in samples.items()}


def per_call_samples(fns: dict[str, Callable[[], object]], inner: int, batches: int,
                     warmup: int = 200, pause_s: float = 0.02) -> dict[str, list[float]]:
    """The time in ns of each of ``inner * batches`` calls of each function.

    Every call is timed on its own with ``perf_counter_ns``, and the cost of timing a call of
    a no-op function (the median, ~0.1 µs) is subtracted: the median of single calls shrugs
    off the calls that the scheduler interrupted, so figures stay stable on a loaded machine
    (a batch mean does not). The contenders run in interleaved batches of ``inner`` calls (a
    batch of each in turn, ``batches`` times, the order rotated each round), so a burst of
    load hits all of them alike. A pause of ``pause_s`` before each batch lets the worker
    threads of the previous contender (XLA's, OpenBLAS's, IREE's local-task) stop spinning, so
    one contender does not pay for the one timed before it.
    """
    fns = {**fns, "\0noop": _noop}
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    items = list(fns.items())
    clock = time.perf_counter_ns
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for b in range(batches):
            k = b % len(items)
            for name, fn in items[k:] + items[:k]:
                if pause_s:
                    time.sleep(pause_s)
                append = samples[name].append
                for _ in range(inner):
                    t0 = clock()
                    fn()
                    append(clock() - t0)
    finally:
        if gc_was_enabled:
            gc.enable()
    timer = statistics.median(samples.pop("\0noop"))
    return {k: [t - timer for t in v] for k, v in samples.items()}


def steady_ns(fn: Callable[[], object], repeats: int, warmup: int = 2,
              pause_s: float = 0.02) -> float:
    """Median time of single calls of ``fn`` after ``warmup`` calls, in ns.

    Starts after a pause of ``pause_s`` (see :func:`per_call_samples`).
    """
    time.sleep(pause_s)
    for _ in range(warmup):
        fn()
    times = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            fn()
            times.append(time.perf_counter_ns() - t0)
    finally:
        if gc_was_enabled:
            gc.enable()
    return statistics.median(times)


def once_ns(fn: Callable[[], object]) -> tuple[float, object]:
    """(time of one call in ns, its result)."""
    t0 = time.perf_counter_ns()
    out = fn()
    return time.perf_counter_ns() - t0, out


def fmt_time(ns: float | None) -> str:
    """A duration with a unit that keeps 3 significant digits: 4.52 µs, 12.3 ms, 0.552 s."""
    if ns is None:
        return "n/a"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale or unit == "µs":
            v = ns / scale
            digits = 2 if abs(v) < 10 else 1 if abs(v) < 100 else 0
            return f"{v:.{digits}f} {unit}"
    raise AssertionError("unreachable")


def fmt_diff(ns: float | None) -> str:
    if ns is None:
        return "n/a"
    return ("+" if ns >= 0 else "-") + fmt_time(abs(ns))


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "n/a"
    return f"{r:.2f}x" if r < 100 else f"{r:.0f}x"


class Table:
    """Rows of strings grouped in sections, printed with aligned columns."""

    def __init__(self, headers: list[str], align: str):
        self.headers = headers
        self.align = align  # one of "<" or ">" per column
        self.rows: list[list[str] | None] = []  # None marks a section rule

    def section(self):
        if self.rows:
            self.rows.append(None)

    def add(self, *cells: str):
        assert len(cells) == len(self.headers)
        self.rows.append(list(cells))

    def render(self) -> str:
        real = [r for r in self.rows if r is not None]
        widths = [max(len(str(c)) for c in col) for col in zip(self.headers, *real)]

        def line(cells):
            return "  ".join(f"{c:{a}{w}}" for c, a, w in zip(cells, self.align, widths)).rstrip()

        rule = "-" * len(line(["-" * w for w in widths]))
        out = [line(self.headers), rule]
        for r in self.rows:
            out.append(rule if r is None else line(r))
        return "\n".join(out)


def report_failures(failures) -> int:
    """Print the programs whose results were wrong; the exit status for the benchmark."""
    if not failures:
        return 0
    print("\nWRONG RESULTS:")
    for msg in failures:
        print("  " + msg.replace("\n", "\n  "))
    return 1


def log(msg: str) -> None:
    """Progress on stderr, so the table on stdout stays clean."""
    print(f"  ... {msg}", file=sys.stderr, flush=True)


def jax_modules():
    """(jax, jax.numpy), with JAX's backend initialised outside any timed region, or
    (None, None) where JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    jax.jit(lambda x: x * 2)(1.0).block_until_ready()
    return jax, jnp


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as f:
        line = next(ln for ln in f if ln.startswith(key + ":"))
    return int(line.split()[1]) * 1024       # the kernel reports kB


def resident_gain(run: Callable[[], object], calls: int = 3) -> int:
    """The resident bytes this process gains over ``calls`` calls of ``run``, from just
    before the first (Linux's peak-RSS counter, reset through ``/proc/self/clear_refs``)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                             # the peak (VmHWM) restarts from now
    start = _status_bytes("VmRSS")
    for _ in range(calls):
        run()
    return _status_bytes("VmHWM") - start


def resident_in_child(module: str, *args: str, runs: int = 3) -> int | None:
    """The median over ``runs`` fresh processes of what ``python -m module --resident *args``
    prints (what :func:`resident_gain` measured there; XLA's figure moved by up to 4 MiB from
    one process to the next). glibc's mmap threshold is pinned at 64 KiB there, so a freed buffer
    leaves the process at once. None off Linux, or when a child fails."""
    if not os.path.exists("/proc/self/clear_refs"):
        return None
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    gains = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-m", module, "--resident", *args], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            log(f"resident {' '.join(args)} failed: {proc.stderr.strip()[-300:]}")
            return None
        gains.append(int(proc.stdout.split()[-1]))
    return int(statistics.median(gains))
