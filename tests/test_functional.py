"""ember.numpy's functional helpers (ember/numpy/_functional.py: apply_along_axis,
apply_over_axes, vectorize, fromfunction) against JAX, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, TracingError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(61)
X = _RNG.normal(size=(4, 6)).astype(np.float32)
V = _RNG.normal(size=(6,)).astype(np.float32)


def test_apply_along_and_over_axes():
    rng = np.random.default_rng(62)
    cube = rng.normal(size=(2, 3, 4)).astype(np.float32)
    for f, jf in [(lambda v: v * v.sum(), lambda v: v * v.sum()),
                  (lambda v: enp.sum(v), lambda v: jnp.sum(v)),
                  (lambda v: enp.outer(v, v[:2]), lambda v: jnp.outer(v, v[:2]))]:
        for axis in [0, 1, -1]:
            close(enp.apply_along_axis(f, axis, cube), jnp.apply_along_axis(jf, axis, cube),
                  tol=1e-4)
    close(enp.apply_along_axis(lambda v, s: v * s, 1, X, 2.0),
          jnp.apply_along_axis(lambda v, s: v * s, 1, X, 2.0))
    for axes in [[0], [0, 2], [-1, 1]]:
        close(enp.apply_over_axes(enp.sum, cube, axes), jnp.apply_over_axes(jnp.sum, cube, axes))
    close(ember.jit(lambda c: enp.apply_over_axes(enp.max, c, [1]))(cube),
          jnp.apply_over_axes(jnp.max, cube, [1]))


def test_vectorize():
    rng = np.random.default_rng(63)
    f = enp.vectorize(lambda a, b: a * b + 1)
    close(f(X, V), jnp.vectorize(lambda a, b: a * b + 1)(X, V))
    close(f(2.0, 3.0), jnp.vectorize(lambda a, b: a * b + 1)(2.0, 3.0))
    dot = enp.vectorize(enp.dot, signature="(n),(n)->()")
    close(dot(X, V), jnp.vectorize(jnp.dot, signature="(n),(n)->()")(X, V))
    mv = enp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    stack = rng.normal(size=(5, 3, 6)).astype(np.float32)
    close(mv(stack, V), jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")(stack, V),
          tol=1e-4)
    pw = enp.vectorize(lambda x, p: x ** p, excluded={1})
    close(pw(X, 2), X ** 2)
    close(ember.jit(lambda x, v: dot(x, v))(X, V), jnp.dot(X, V))


def test_fromfunction():
    for f, shape, dtype in [(lambda i, j: i * 10 + j, (3, 4), float),
                            (lambda i, j: i - j, (2, 5), int),
                            (lambda i: i ** 2, 4, np.float32),
                            (lambda i, j, k: i + j * k, (2, 2, 3), int)]:
        close(enp.fromfunction(f, shape, dtype=dtype), jnp.fromfunction(f, shape, dtype=dtype))
    # Keyword arguments are passed through (JAX's vmap rejects a scalar one): NumPy's result.
    close(enp.fromfunction(lambda i, j, scale: (i + j) * scale, (2, 2), scale=2.0),
          np.fromfunction(lambda i, j, scale: (i + j) * scale, (2, 2), scale=2.0).astype(
              np.float32))


ERRORS = [
    (lambda: enp.apply_over_axes(lambda a, ax: a[None], X, [0]), TracingError, "shape"),
    (lambda: enp.vectorize(enp.dot, signature="(n),(n)->()")(X, V[:3]), TracingError,
     "inconsistent size"),
    (lambda: enp.vectorize(enp.dot, signature="(n)(n)->()"), ArgumentError, "signature"),
    (lambda: enp.vectorize(3), ArgumentError, "callable"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
