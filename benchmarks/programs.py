"""The benchmarked programs, each written once against a NumPy-like module ``m``.

``m`` is ``numpy``, ``ember.numpy`` or ``jax.numpy``; the same function body runs on all
three, so the comparison is of the same math.
"""

from __future__ import annotations

import numpy as np


def add_one(m, x):
    """The per-call overhead program: ``x + 1`` on a tiny array."""
    return x + 1


def chain20(m, x, y):
    """A 20-op elementwise chain (add/sub/mul/div/tanh/exp/max/min/abs/sqrt/neg)."""
    a = x * 1.5 + y                      # 2 ops
    a = m.tanh(a) * 0.75                 # 4
    a = m.exp(a) - x                     # 6
    a = m.maximum(a, y) * a              # 8
    a = m.minimum(a, 4.0) + 0.5          # 10
    a = m.sqrt(m.abs(a)) / 3.0           # 13
    a = m.tanh(a - y) * x                # 16
    return m.maximum(a, 0.0) - m.exp(-a)  # 20


def sincos12(m, x):
    """Twelve sin/cos steps, each of an affine map of the last (a transcendental chain)."""
    for _ in range(6):
        x = m.cos(m.sin(x * 1.1 + 0.3) * 0.9 - 0.2)
    return x


def cos1(m, x):
    """One cos of arguments ember cannot bound ahead (a run-time check picks the reduction)."""
    return m.cos(x)


def sinh1(m, x):
    """One sinh (a hyperbolic function NumPy takes from libm)."""
    return m.sinh(x)


def mlp3(m, x, w1, b1, w2, b2, w3, b3):
    """A 3-layer perceptron with relu between layers."""
    h = m.maximum(x @ w1 + b1, 0.0)
    h = m.maximum(h @ w2 + b2, 0.0)
    return h @ w3 + b3


def softmax(m, x):
    """Softmax over the last axis, max-subtracted."""
    e = m.exp(x - m.max(x, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


def layernorm(m, x, scale, shift, eps=1e-5):
    """Layer normalization over the last axis: (x - mean) / sqrt(var + eps) * scale + shift."""
    mean = m.mean(x, axis=-1, keepdims=True)
    d = x - mean
    var = m.mean(d * d, axis=-1, keepdims=True)
    return d / m.sqrt(var + eps) * scale + shift


def cumsum_rows(m, x):
    """Running sums along each row (a scan per row)."""
    return m.cumsum(x, axis=1)


def matmul(m, a, b):
    """One matrix product (IREE's data-tiled matmul, XLA's Eigen, NumPy's OpenBLAS)."""
    return m.matmul(a, b)


def _f32(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cases(seed: int = 0):
    """(name, program, NumPy inputs, rtol, atol) for the steady-state benchmarks."""
    rng = np.random.default_rng(seed)
    n = 4 << 20
    w = 1.0 / np.sqrt(1024.0)
    mlp_args = [_f32(rng, (256, 1024))]
    for _ in range(3):
        mlp_args += [_f32(rng, (1024, 1024), w), _f32(rng, (1024,), 0.1)]
    return [
        ("chain20 4M f32", chain20, [_f32(rng, (n,)), _f32(rng, (n,))], 1e-4, 1e-4),
        ("sincos12 1M f32", sincos12, [_f32(rng, (1 << 20,), 3.0)], 1e-5, 1e-5),
        ("cos 1M f32", cos1, [_f32(rng, (1 << 20,), 3.0)], 1e-6, 1e-6),
        ("sinh 1M f32", sinh1, [_f32(rng, (1 << 20,), 3.0)], 1e-6, 1e-6),
        ("mlp3 256x1024 relu", mlp3, mlp_args, 1e-3, 1e-3),
        ("softmax 2048x2048", softmax, [_f32(rng, (2048, 2048))], 1e-4, 1e-7),
        ("layernorm 4096x1024", layernorm,
         [_f32(rng, (4096, 1024)), _f32(rng, (1024,)), _f32(rng, (1024,))], 1e-4, 1e-4),
        # (float32 sums of 1024 terms of size 1 in another order: a few 1e-4 apart)
        ("cumsum rows 1024x1024", cumsum_rows, [_f32(rng, (1024, 1024))], 1e-4, 2e-3),
        ("matmul 1024x1024x1024", matmul, [_f32(rng, (1024, 1024)), _f32(rng, (1024, 1024))],
         1e-4, 1e-3),
    ]
