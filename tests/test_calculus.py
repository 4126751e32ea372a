"""ember.numpy's differences and phases (ember/numpy/_calculus.py: gradient, unwrap) and
spacing against JAX, eagerly and under ``ember.jit``, with edge cases and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, eager_and_jit

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, TracingError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(41)
X = _RNG.normal(size=(4, 6)).astype(np.float32)
V = _RNG.normal(size=(6,)).astype(np.float32)
N = _RNG.integers(-5, 6, size=(4, 6)).astype(np.int32)


def test_gradient():
    coords = np.cumsum(np.abs(V) + 0.1).astype(np.float32)
    for args, kw in [((V,), {}), ((X,), {}), ((X, 2.0), {}), ((X, 2.0, 0.5), {}),
                     ((X, coords), {"axis": 1}), ((X,), {"axis": -2}), ((N,), {}),
                     ((X[:2],), {"axis": 0}), ((X,), {"axis": ()})]:
        close(enp.gradient(*args, **kw), jnp.gradient(*args, **kw), tol=1e-4)
    close(ember.jit(lambda x, c: enp.gradient(x, c, axis=1))(X, coords),
          jnp.gradient(X, coords, axis=1), tol=1e-4)


def test_unwrap_and_spacing():
    rng = np.random.default_rng(42)
    phase = (np.cumsum(rng.uniform(-3, 3, size=(3, 12)), axis=1) % (2 * np.pi)).astype(
        np.float32)
    for kw in [{}, {"axis": 0}, {"discont": 4.0}, {"period": 5.0}]:
        close(enp.unwrap(phase, **kw), jnp.unwrap(phase, **kw), tol=1e-4)
    close(enp.unwrap(np.array([0, 5, 10, 2, 13]), period=6),
          jnp.unwrap(np.array([0, 5, 10, 2, 13]), period=6))
    close(enp.unwrap(np.zeros((2, 0), np.float32)), jnp.unwrap(np.zeros((2, 0), np.float32)))
    special = np.array([1.0, -2.5, 0.0, -0.0, 1e-42, 3e38, np.inf, -np.inf, np.nan], np.float32)
    eager_and_jit(enp.spacing, jnp.spacing, special)
    close(enp.spacing(np.array([1, 1000])), jnp.spacing(np.array([1, 1000])))
    close(enp.spacing(special.astype(np.float16)), jnp.spacing(special.astype(np.float16)))


ERRORS = [
    (lambda: enp.gradient(np.ones((1, 3))), TracingError, "at least 2"),
    (lambda: enp.gradient(X, V[:2], axis=1), TracingError, "same length"),
    (lambda: enp.gradient(X, 1.0, 2.0, 3.0), TracingError, "spacing arguments"),
    (lambda: enp.gradient(X, edge_order=2), ArgumentError, "edge_order"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
