"""ember vs NumPy sort time for 1e4, 1e5, 1e6 float32 elements: ``python -m benchmarks.sort``.

Times the best of a few runs of a compiled ``ember.numpy.sort`` (the first call, which
compiles, is reported separately) against ``numpy.sort``.
"""

from __future__ import annotations

import time

import numpy as np

import ember
import ember.numpy as enp


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(sizes=(10_000, 100_000, 1_000_000), repeat=5):
    rng = np.random.default_rng(0)
    print(f"{'n':>9} {'compile+run s':>14} {'ember s':>10} {'numpy s':>10} {'ember/numpy':>12}")
    for n in sizes:
        x = rng.normal(size=n).astype(np.float32)
        f = ember.jit(enp.sort)
        t = time.perf_counter()
        got = np.asarray(f(x))
        first = time.perf_counter() - t
        np.testing.assert_array_equal(got, np.sort(x))
        xe = ember.device_put(x)
        t_ember = _best(lambda f=f, xe=xe: np.asarray(f(xe)), repeat)
        t_np = _best(lambda x=x: np.sort(x), repeat)
        print(f"{n:>9} {first:>14.3f} {t_ember:>10.4f} {t_np:>10.5f} {t_ember / t_np:>12.1f}")


if __name__ == "__main__":
    main()
