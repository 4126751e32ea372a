"""The first compile of a process, with the compile worker started when ``ember.jit`` makes the
function (ember's default) and started by the compile (as before): ``python -m
benchmarks.first_compile``.

Each sample is a fresh process: it makes ``ember.jit(lambda x: tanh(x * 2 + k).sum(-1))``
(``k`` new each time, so nothing comes from the disk cache), waits ``--gap`` seconds (the
program's own work: loading data), then times the first call on a (300, 1024) array. The
median of ``--repeats`` processes per side, the two sides alternated.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = """
import sys, time
import numpy as np, ember, ember.numpy as enp
from ember.backends import compiler
if sys.argv[1] == "at-compile":
    compiler.start_worker = lambda: None
import ember.frontend.api as api
api.start_worker = compiler.start_worker
k = time.time() % 1000
f = ember.jit(lambda x: enp.tanh(x * 2 + k).sum(-1))
time.sleep(float(sys.argv[2]))
x = np.ones((300, 1024), np.float32)
t = time.perf_counter()
f(x).block_until_ready()
print(time.perf_counter() - t)
"""


def sample(mode: str, gap: float) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(gap)], capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gap", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    times = {"at-jit": [], "at-compile": []}
    for _ in range(args.repeats):
        for mode in times:
            times[mode].append(sample(mode, args.gap))
    a, b = (statistics.median(times[m]) for m in ("at-jit", "at-compile"))
    print(f"first call {args.gap:.1f} s after ember.jit (median of {args.repeats} processes): "
          f"worker started by ember.jit {a:.3f} s, by the compile {b:.3f} s ({a / b:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
