"""ember.numpy's window functions (ember/numpy/_window.py: bartlett, blackman, hamming,
hanning, kaiser) against JAX, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, ConcretizationError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
    for M in [0, 1, 2, 7, 10]:
        close(getattr(enp, name)(M), getattr(jnp, name)(M), tol=1e-6)


def test_kaiser():
    # One program for all the windows (each eager call would compile i0 once more).
    cases = [(0, 1.0), (1, 2.0), (6, 0.0), (9, 5.0), (8, 14.0)]
    got = ember.jit(lambda b: [enp.kaiser(M, beta) for M, beta in cases]
                    + [enp.kaiser(7, b)])(np.float32(3.0))
    for (M, beta), g in zip(cases, got):
        close(g, jnp.kaiser(M, beta), tol=1e-5)
    close(got[-1], jnp.kaiser(7, 3.0))


ERRORS = [
    (lambda: ember.jit(lambda m: enp.hanning(m))(np.int32(4)), ConcretizationError, "M"),
    (lambda: enp.kaiser(2.5, 1.0), ArgumentError, "integer"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
