"""The main job: trace a small model, show its IR stages, compile and run it, check vs NumPy.

Run with ``python -m ember.demo``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import ember
import ember.nn as nn
import ember.numpy as enp


@ember.jit
def predict(params, x):
    """A two-layer MLP with a softmax head."""
    (w1, b1), (w2, b2) = params
    h = nn.relu(x @ w1 + b1)
    return nn.softmax(enp.tanh(h @ w2 + b2), axis=-1)


def reference(params, x):
    (w1, b1), (w2, b2) = params
    h = np.maximum(x @ w1 + b1, 0)
    z = np.tanh(h @ w2 + b2)
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def main() -> int:
    rng = np.random.default_rng(0)
    params = ((rng.normal(size=(16, 32)).astype(np.float32), np.zeros(32, np.float32)),
              (rng.normal(size=(32, 10)).astype(np.float32), np.zeros(10, np.float32)))
    x = rng.normal(size=(8, 16)).astype(np.float32)

    lowered = predict.lower(params, x)
    for stage in ("ember", "optimized", "linalg"):
        print(f"===== stage: {stage} =====")
        print(lowered.as_text(stage))

    start = time.perf_counter()
    y = predict(params, x)
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(100):
        predict(params, x)
    steady = (time.perf_counter() - start) / 100

    expected = reference(params, x)
    ok = np.allclose(np.asarray(y), expected, rtol=1e-5, atol=1e-6)
    print("===== result =====")
    print(np.asarray(y)[:2])
    print(f"first call (trace + compile + run): {first * 1e3:.1f} ms; "
          f"cached call: {steady * 1e6:.1f} us")
    print(f"matches NumPy: {ok} (max abs error {np.abs(np.asarray(y) - expected).max():.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
