"""ember.numpy's selection and placement (ember/numpy/_selection.py: compress, extract,
choose, put, place, piecewise) against JAX, eagerly and under ``ember.jit``, with edge cases
and errors; fill_diagonal is in test_shape.py with diagflat and resize."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, eager_and_jit

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, ConcretizationError, TracingError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(17)
X = _RNG.normal(size=(4, 6)).astype(np.float32)
V = _RNG.normal(size=(6,)).astype(np.float32)
N = _RNG.integers(-5, 6, size=(4, 6)).astype(np.int32)


def test_compress_and_extract():
    c = np.array([True, False, True, True])
    for axis in [None, 0, 1, -1]:
        cc = c if axis != 1 and axis != -1 else np.r_[c, False, True]
        close(enp.compress(cc, X, axis=axis), jnp.compress(cc, X, axis=axis))
    close(enp.compress(c[:2], X, axis=0), jnp.compress(c[:2], X, axis=0))     # shorter
    close(enp.compress(np.zeros(4, bool), X, axis=0), jnp.compress(np.zeros(4, bool), X, 0))
    close(enp.compress([1, 0, 2], X[0]), jnp.compress(np.array([1, 0, 2]), X[0]))
    for size in [0, 2, 4]:
        close(ember.jit(lambda c, x, s=size: enp.compress(c, x, axis=0, size=s,
                                                          fill_value=-7))(c, X),
              jnp.compress(c, X, axis=0, size=size, fill_value=-7))
    close(enp.extract(N > 0, N), jnp.extract(N > 0, N))
    close(ember.jit(lambda c, x: enp.extract(c, x, size=20, fill_value=9))(N > 0, X),
          jnp.extract(N > 0, X, size=20, fill_value=9))


def test_choose():
    idx = np.abs(N) % 3
    ch = [X, -X, X * 2]
    close(enp.choose(idx, ch), jnp.choose(idx, ch))
    close(enp.choose(idx[0], [X, 0.5, V]), jnp.choose(idx[0], [X, 0.5, V]))
    for mode in ["wrap", "clip"]:
        close(ember.jit(lambda i, mode=mode: enp.choose(i, ch, mode=mode))(N),
              jnp.choose(N, ch, mode=mode))


def test_put_and_place():
    ind = np.array([0, 5, 23, 30, -2])
    vals = np.array([1.0, 2.0], np.float32)
    for mode in [None, "clip", "wrap"]:
        eager_and_jit(lambda a, i, v, mode=mode: enp.put(a, i, v, mode=mode, inplace=False),
                      lambda a, i, v, mode=mode: jnp.put(a, i, v, mode=mode, inplace=False),
                      X, ind, vals)
    close(enp.put(N, [1, 2], 9.5, inplace=False), jnp.put(N, np.array([1, 2]), 9.5, inplace=False))
    eager_and_jit(lambda a, m, v: enp.place(a, m, v, inplace=False),
                  lambda a, m, v: jnp.place(a, m, v, inplace=False), X, X > 0, vals)
    close(enp.place(N, N < 0, np.array([7, 8, 9]), inplace=False),
          jnp.place(N, N < 0, np.array([7, 8, 9]), inplace=False))


def test_piecewise():
    for x in [X, N]:
        conds = [x < -0.5, x > 0.5]
        for funcs in [[lambda v: v * 2, lambda v: -v], [lambda v: v * 2, 3, lambda v: v + 1],
                      [-1, 1]]:
            close(enp.piecewise(x, conds, funcs), jnp.piecewise(x, conds, funcs))
    close(ember.jit(lambda x: enp.piecewise(x, [x < 0], [lambda v, s: v * s, 1.0], 3.0))(X),
          jnp.piecewise(X, [X < 0], [lambda v, s: v * s, 1.0], 3.0))


ERRORS = [
    (lambda: enp.compress(np.ones((2, 2), bool), X), TracingError, "1-D"),
    (lambda: enp.compress(np.r_[np.ones(4, bool), True], X, axis=0), TracingError,
     "out of bounds"),
    (lambda: enp.compress(np.ones(4, bool), X, axis=0, size=5), TracingError, "size"),
    (lambda: ember.jit(lambda c, x: enp.compress(c, x))(np.ones(4, bool), X), TracingError,
     "size="),
    (lambda: enp.compress(np.ones(4, bool), X, out=X), ArgumentError, "out="),
    (lambda: enp.choose(np.array([0, 3]), [V[:2], V[:2]]), TracingError, "invalid entry"),
    (lambda: enp.choose(np.array([0, 1]), [V[:2]], mode="bad"), ArgumentError, "mode"),
    (lambda: ember.jit(lambda i: enp.choose(i, [V, V]))(np.zeros(6, np.int32)),
     ConcretizationError, "mode='wrap'"),
    (lambda: enp.put(X, [0], 1.0), ArgumentError, "inplace=False"),
    (lambda: enp.put(X, [0], 1.0, mode="raise", inplace=False), ArgumentError, "raise"),
    (lambda: enp.place(X, X > 0, np.zeros(0), inplace=False), TracingError, "empty"),
    (lambda: enp.place(X, V > 0, V, inplace=False), TracingError, "same size"),
    (lambda: enp.piecewise(X, [X > 0], [1, 2, 3]), TracingError, "functions"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
