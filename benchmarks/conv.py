"""Convolutions: ember's ``lax.conv_general_dilated`` (an ``ember.conv`` op on the padded
input) beside IREE's bare ``linalg.conv_2d_nhwc_hwcf`` on the pre-padded input and
``jax.lax.conv_general_dilated`` under ``jax.jit``, in one run. ``python -m benchmarks.conv``
(from the repository root; ~1 min).

NHWC/HWIO layouts, stride 1, 'SAME' padding (the linalg version gets the padded input, so it
does no padding of its own); median per call with the inputs on the device, the contenders
timed interleaved (benchmarks/timing.py). Results are checked against JAX (or NumPy's
direct definition without JAX) once.
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

import ember
from benchmarks.timing import per_call_samples
from ember.backends import cpu
from ember.backends.compiler import compile_mlir
from ember.backends.runtime import FENCED_CALLS_FLAG, Executable
from ember.core import ShapedArray

SHAPES = [(8, 32, 32, 16, 32, 3), (32, 16, 16, 64, 64, 3), (8, 64, 64, 3, 16, 5)]
DN = ("NHWC", "HWIO", "NHWC")


def _linalg_conv(n, h, w, c, o, k):
    """IREE's named conv op on the pre-padded input: ember's lowering less its pad."""
    hp, wp = h + k - 1, w + k - 1
    x, f, y = (f"tensor<{n}x{hp}x{wp}x{c}xf32>", f"tensor<{k}x{k}x{c}x{o}xf32>",
               f"tensor<{n}x{h}x{w}x{o}xf32>")
    text = f"""
func.func @main(%x: {x}, %w: {f}) -> {y} {{
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : {y}
  %f = linalg.fill ins(%z : f32) outs(%e : {y}) -> {y}
  %r = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>,
                                  strides = dense<1> : tensor<2xi64>}}
       ins(%x, %w : {x}, {f}) outs(%f : {y}) -> {y}
  return %r : {y}
}}"""
    # On local-task, called as ember calls its programs there (fenced).
    exe = Executable(compile_mlir(text, cpu.compiler_flags() + (FENCED_CALLS_FLAG,)),
                     cpu.runtime_device(None, 1 << 30))
    f32 = np.dtype(np.float32)
    avals = [ShapedArray(s, f32) for s in ((n, hp, wp, c), (k, k, c, o), (n, h, w, o))]
    return exe.runner(avals[:2], avals[2:], ember.Array)


def _row(shape, jax, rng) -> bool:
    """Time one shape and print its row; False if ember's result is wrong."""
    n, h, w, c, o, k = shape
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    f = (rng.standard_normal((k, k, c, o)) / np.sqrt(k * k * c)).astype(np.float32)
    conv = ember.jit(lambda x, f: ember.lax.conv_general_dilated(
        x, f, (1, 1), "SAME", dimension_numbers=DN))
    ex, ef = ember.device_put(x), ember.device_put(f)
    got = np.asarray(conv(ex, ef))
    lo = (k - 1) // 2
    padded = ember.device_put(np.pad(x, ((0, 0), (lo, k - 1 - lo), (lo, k - 1 - lo), (0, 0))))
    linalg = _linalg_conv(n, h, w, c, o, k)
    runs = {"ember": lambda: conv(ex, ef).block_until_ready(),
            "iree": lambda: linalg([padded, ef])[0].block_until_ready()}
    if jax is not None:
        jf = jax.jit(lambda x, f: jax.lax.conv_general_dilated(
            x, f, (1, 1), "SAME", dimension_numbers=DN))
        jx, jw = jax.device_put(x), jax.device_put(f)
        want = np.asarray(jf(jx, jw))
        runs["jax"] = lambda: jax.block_until_ready(jf(jx, jw))
    else:
        want = np.asarray(linalg([padded, ef])[0])
    samples = per_call_samples(runs, inner=1, batches=20, warmup=3)
    ms = {key: statistics.median(v) / 1e6 for key, v in samples.items()}
    jax_ms = f"{ms['jax']:9.2f}" if "jax" in ms else f"{'n/a':>9}"
    vs_jax = f"{ms['ember'] / ms['jax']:11.2f}" if "jax" in ms else f"{'n/a':>11}"
    print(f"{str(shape):<22}{ms['ember']:10.2f}{ms['iree']:11.2f}{jax_ms}"
          f"{ms['ember'] / ms['iree']:12.2f}{vs_jax}")
    return bool(np.allclose(got, want, rtol=1e-3, atol=1e-3))


def main() -> int:
    try:
        import jax
        jax.config.update("jax_platforms", "cpu")
    except ImportError:
        jax = None
    rng = np.random.default_rng(0)
    print(f"{'N,H,W,C,O,K':<22}{'ember ms':>10}{'IREE conv':>11}{'JAX ms':>9}"
          f"{'ember/IREE':>12}{'ember/JAX':>11}")
    wrong = [shape for shape in SHAPES if not _row(shape, jax, rng)]
    if wrong:
        print("WRONG results for", wrong)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
