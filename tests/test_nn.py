"""ember.nn against NumPy formulas (computed in float64), including inputs where a naive
formula overflows and -inf entries."""

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.numpy as enp
from ember.errors import TracingError


def np_logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def np_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        return x - np_logsumexp(x, axis=axis, keepdims=True)


def np_sigmoid(x):
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def check(got, want, dtype, rtol=1e-5, atol=1e-6):
    assert isinstance(got, ember.Array)
    assert got.dtype == dtype, (got.dtype, dtype)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)
INPUTS = {
    "small": RNG.normal(size=(3, 5)).astype(np.float32),
    "large": (RNG.normal(size=(3, 5)) * 1000).astype(np.float32),    # exp() overflows
    "neginf": np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]], np.float32),
    "vector": np.array([1e4, 1e4 - 1, -1e4], np.float32),
}


def _all(x):
    return {
        "relu": enn.relu(x), "sigmoid": enn.sigmoid(x), "softmax": enn.softmax(x),
        "softmax0": enn.softmax(x, axis=0), "log_softmax": enn.log_softmax(x),
        "log_softmax0": enn.log_softmax(x, axis=0), "lse": enn.logsumexp(x),
        "lse_last": enn.logsumexp(x, axis=-1), "lse_keep": enn.logsumexp(x, axis=0,
                                                                         keepdims=True),
    }


def _wants(x):
    return {
        "relu": np.maximum(x, 0), "sigmoid": np_sigmoid(x), "softmax": np_softmax(x),
        "softmax0": np_softmax(x, axis=0), "log_softmax": np_log_softmax(x),
        "log_softmax0": np_log_softmax(x, axis=0), "lse": np_logsumexp(x),
        "lse_last": np_logsumexp(x, axis=-1), "lse_keep": np_logsumexp(x, axis=0,
                                                                       keepdims=True),
    }


_jit_all = ember.jit(_all)


@pytest.mark.parametrize("name", list(INPUTS))
def test_nn_against_numpy(name):
    x = INPUTS[name]
    wants = _wants(x)
    runs = [("jit", _jit_all(x))]
    if name == "large":     # eagerly each function is its own program: one input is enough
        runs += [("eager", _all(x)), ("eager-array", _all(enp.asarray(x)))]
    for how, outs in runs:
        for k, want in wants.items():
            got = outs[k]
            assert np.all(np.isfinite(np.asarray(got)) == np.isfinite(want)), (how, k)
            try:
                check(got, want, np.float32, rtol=1e-5, atol=1e-5)
            except AssertionError as e:
                raise AssertionError(f"{how} {k}: {e}") from None


def test_all_neg_inf_row():
    x = np.array([[-np.inf, -np.inf], [0.0, 1.0]], np.float32)
    lse = np.asarray(ember.jit(lambda a: enn.logsumexp(a, axis=1))(x))
    assert lse[0] == -np.inf
    np.testing.assert_allclose(lse[1], np.log(1 + np.e), rtol=1e-6)


def test_int_inputs_and_float16():
    xi = np.array([-2, 0, 3], np.int32)
    check(enn.relu(xi), np.maximum(xi, 0), np.int32)
    check(enn.sigmoid(xi), np_sigmoid(xi), np.float32)
    check(enn.softmax(xi), np_softmax(xi), np.float32)
    x16 = np.array([[-1.0, 0.5, 300.0], [2.0, 1.0, -3.0]], np.float16)
    outs = ember.jit(lambda a: (enn.softmax(a), enn.logsumexp(a, axis=1), enn.sigmoid(a),
                                enn.relu(a), enn.log_softmax(a)))(x16)
    wants = (np_softmax(x16), np_logsumexp(x16, axis=1), np_sigmoid(x16),
             np.maximum(x16, 0), np_log_softmax(x16))
    for got, want in zip(outs, wants, strict=True):
        check(got, want, np.float16, rtol=2e-3, atol=2e-3)


def test_scalar_and_empty():
    check(enn.logsumexp(np.float32(3.0)), np.float64(3.0), np.float32)
    check(enn.relu(np.float32(-3.0)), np.float64(0.0), np.float32)
    e = np.zeros((0, 4), np.float32)
    check(enn.softmax(e), np.zeros((0, 4)), np.float32)


def test_bad_axis():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TracingError, match="axis 2"):
        ember.jit(lambda a: enn.softmax(a, axis=2))(x)
    with pytest.raises(TracingError, match="axis -3"):
        enn.logsumexp(x, axis=-3)
