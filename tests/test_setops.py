"""ember.numpy's set operations (ember/numpy/_setops.py: union1d, intersect1d, setdiff1d,
setxor1d, unique_all/counts/inverse/values) against JAX, eagerly and under ``ember.jit``
with size=, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, TracingError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(51)
V = _RNG.normal(size=(6,)).astype(np.float32)
N = _RNG.integers(-5, 6, size=(4, 6)).astype(np.int32)

A1 = np.array([5, 1, 3, 3, 7, 1, -2], np.int32)
A2 = np.array([[3, 9], [1, 1], [4, -2]], np.int32)
F1 = np.array([1.0, np.nan, 2.5, np.nan, 1.0], np.float32)
F2 = np.array([2.5, 0.0, np.nan], np.float32)
E = np.zeros(0, np.int32)


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_operations(name):
    e_op, j_op = getattr(enp, name), getattr(jnp, name)
    for a, b in [(A1, A2), (A2, A1), (F1, F2), (E, A1), (A1, E), (A1, A1), (N[0], V)]:
        close(e_op(a, b), j_op(a, b))
    for size, fill in [(9, None), (2, None), (6, -1)]:
        close(ember.jit(lambda a, b, s=size, f=fill: e_op(a, b, size=s, fill_value=f))(A1, A2),
              j_op(A1, A2, size=size, fill_value=fill))
    if name != "union1d":
        u1, u2 = np.array([4, 1, 9, 3], np.int32), np.array([3, 8, 4], np.int32)
        close(e_op(u1, u2, assume_unique=True), j_op(u1, u2, assume_unique=True))


def test_intersect1d_indices():
    close(enp.intersect1d(A1, A2, return_indices=True),
          jnp.intersect1d(A1, A2, return_indices=True))
    close(ember.jit(lambda a, b: enp.intersect1d(a, b, return_indices=True, size=5))(A1, A2),
          jnp.intersect1d(A1, A2, return_indices=True, size=5))


def test_unique_variants():
    for x in [A2, F1, N]:
        for name in ["unique_all", "unique_counts", "unique_inverse"]:
            got, want = getattr(enp, name)(x), getattr(jnp, name)(x)
            assert got._fields == want._fields
            close(tuple(got), tuple(want))
        close(enp.unique_values(x), jnp.unique_values(x))
    got = ember.jit(lambda x: enp.unique_all(x, size=8, fill_value=0))(A2)
    close(tuple(got), tuple(jnp.unique_all(A2, size=8, fill_value=0)))


ERRORS = [
    (lambda: ember.jit(lambda a, b: enp.union1d(a, b))(A1, A1), TracingError, "size="),
    (lambda: enp.setdiff1d(A1, A1, size=-1), ArgumentError, "non-negative"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
