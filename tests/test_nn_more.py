"""ember.nn activations of issue 3 against jax.nn (float32) and NumPy formulas (float64)."""

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.nn as enn

BF16 = np.dtype(ml_dtypes.bfloat16)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _all(x):
    return {
        "relu6": enn.relu6(x), "elu": enn.elu(x), "elu2": enn.elu(x, alpha=2.0),
        "selu": enn.selu(x), "gelu": enn.gelu(x), "gelu_exact": enn.gelu(x, approximate=False),
        "silu": enn.silu(x), "swish": enn.swish(x), "softplus": enn.softplus(x),
        "log_sigmoid": enn.log_sigmoid(x), "standardize": enn.standardize(x),
        "standardize0": enn.standardize(x, axis=0, epsilon=1e-3),
    }


def _np_wants(x):
    x = x.astype(np.float64)
    from math import erf
    verf = np.vectorize(erf)
    with np.errstate(all="ignore"):
        elu = lambda a: np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))  # noqa: E731
        std = lambda ax, eps: (x - x.mean(ax, keepdims=True)) / np.sqrt(  # noqa: E731
            x.var(ax, keepdims=True) + eps)
        return {
            "relu6": np.clip(x, 0, 6), "elu": elu(1.0), "elu2": elu(2.0),
            "selu": SELU_SCALE * elu(SELU_ALPHA),
            "gelu": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
            "gelu_exact": 0.5 * x * (1 + verf(x / np.sqrt(2))),
            "silu": x / (1 + np.exp(-x)), "swish": x / (1 + np.exp(-x)),
            "softplus": np.logaddexp(x, 0), "log_sigmoid": -np.logaddexp(-x, 0),
            "standardize": std(-1, 1e-5), "standardize0": std(0, 1e-3),
        }


_jit_all = ember.jit(_all)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
def test_activations_against_numpy(dtype):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(size=(6, 8)) * 3,
                        [[0.0, -0.0, 1.0, -1.0, 6.0, 7.0, -30.0, 30.0],
                         [-100.0, 100.0, 0.5, -0.5, 5.9, -6.0, 2.0, -2.0]]]).astype(dtype)
    outs = _jit_all(x)
    wants = _np_wants(x)
    tol = {np.dtype(np.float32): 2e-5, np.dtype(np.float16): 4e-3}.get(np.dtype(dtype), 3e-2)
    for name, want in wants.items():
        got = outs[name]
        assert got.dtype == dtype and got.shape == x.shape, name
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=tol,
                                   atol=tol, err_msg=name)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jnn = jax.nn
    x = np.random.default_rng(6).normal(size=(4, 5)).astype(np.float32) * 4
    outs = _jit_all(x)
    wants = {"relu6": jnn.relu6(x), "elu": jnn.elu(x), "selu": jnn.selu(x),
             "gelu": jnn.gelu(x), "gelu_exact": jnn.gelu(x, approximate=False),
             "silu": jnn.silu(x), "softplus": jnn.softplus(x),
             "log_sigmoid": jnn.log_sigmoid(x), "standardize": jnn.standardize(x)}
    for name, want in wants.items():
        np.testing.assert_allclose(np.asarray(outs[name]), np.asarray(want), rtol=2e-5,
                                   atol=2e-5, err_msg=name)


def test_one_hot_and_int_inputs():
    labels = np.array([[0, 2], [3, -1]], np.int32)
    f = ember.jit(lambda a: (enn.one_hot(a, 4), enn.one_hot(a, 3, dtype=np.int32, axis=0),
                             enn.relu6(a * 3), enn.elu(a)))
    oh, oh0, r6, el = f(labels)
    want = (labels[..., None] == np.arange(4)).astype(np.float32)
    assert oh.dtype == np.float32 and oh.shape == (2, 2, 4)
    np.testing.assert_array_equal(np.asarray(oh), want)
    want0 = np.moveaxis((labels[..., None] == np.arange(3)), -1, 0).astype(np.int32)
    assert oh0.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(oh0), want0)
    assert r6.dtype == np.float32          # JAX's relu6 of ints is float
    np.testing.assert_array_equal(np.asarray(r6), np.clip(labels * 3, 0, 6))
    assert el.dtype == np.float32
    np.testing.assert_allclose(np.asarray(el), np.where(labels > 0, labels,
                                                        np.expm1(np.minimum(labels, 0))),
                               rtol=1e-6)
