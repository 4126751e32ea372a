"""sin/cos keep their accuracy far from zero and near it (ember reduces the argument itself:
IREE's expansion gave sin(1e10) = -6e21 and lost digits at sin(-1e-3))."""

import numpy as np
import pytest

import ember

SIN = ember.jit(lambda x: (ember.lax.sin(x), ember.lax.cos(x)))


@pytest.mark.parametrize("bound, tol", [(1.0, 2e-7), (6e4, 2e-7), (1e9, 1e-5)])
def test_float32_sin_cos_against_float64_numpy(bound, tol):
    x = np.random.default_rng(0).uniform(-bound, bound, 4096).astype(np.float32)
    s, c = SIN(x)
    np.testing.assert_allclose(np.asarray(s), np.sin(x.astype(np.float64)), rtol=0, atol=tol)
    np.testing.assert_allclose(np.asarray(c), np.cos(x.astype(np.float64)), rtol=0, atol=tol)


def test_float32_special_values():
    x = np.array([-1e-3, 1e-30, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e30, -3e38], np.float32)
    s, c = (np.asarray(v) for v in SIN(x))
    ref = np.sin(x[:4].astype(np.float64))
    np.testing.assert_allclose(s[:4], ref, rtol=2e-7)
    assert np.signbit(s[2]) and not np.signbit(s[3])
    assert np.isnan(s[4:7]).all() and np.isnan(c[4:7]).all()
    # no Payne-Hanek reduction: huge arguments give bounded (approximate) values, never inf
    assert (np.abs(s[7:]) <= 1).all() and (np.abs(c[7:]) <= 1).all()


def test_float64_sin_cos():
    ember.config.update("enable_x64", True)
    try:
        x = np.concatenate([np.random.default_rng(1).uniform(-1e8, 1e8, 2048), [0.0, -1e-9]])
        s, c = ember.jit(lambda x: (ember.lax.sin(x), ember.lax.cos(x)))(x)
        assert s.dtype == np.float64
        np.testing.assert_allclose(np.asarray(s), np.sin(x), rtol=0, atol=1e-15)
        np.testing.assert_allclose(np.asarray(c), np.cos(x), rtol=0, atol=1e-15)
    finally:
        ember.config.update("enable_x64", False)


def test_float64_tanh():
    """IREE links no libm tanh for float64: ember builds it from expm1 and a series."""
    ember.config.update("enable_x64", True)
    try:
        x = np.concatenate([np.linspace(-30, 30, 601), np.logspace(-300, 1.5, 500),
                            -np.logspace(-20, 0, 100), [0.0, -0.0, np.inf, -np.inf, 710.0]])
        y = ember.jit(ember.lax.tanh)(x)
        assert y.dtype == np.float64
        np.testing.assert_allclose(np.asarray(y), np.tanh(x), rtol=4e-15, atol=0)
        assert np.signbit(np.asarray(y)[-4]) and np.isnan(np.asarray(ember.lax.tanh(np.nan)))
    finally:
        ember.config.update("enable_x64", False)
