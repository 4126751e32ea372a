"""ember.numpy's polynomials (ember/numpy/_polynomial.py: polyadd ... polydiv, polyder,
polyint, poly, polyfit) against JAX (NumPy where noted), eagerly and under ``ember.jit``,
and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, eager_and_jit

import ember
import ember.numpy as enp
from ember.errors import ConcretizationError, TracingError

jnp = pytest.importorskip("jax.numpy", reason="jax.numpy is this module's oracle")
pytestmark = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

P1 = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
P2 = np.array([2.0, 1.0], np.float32)
PI = np.array([1, 2, 3], np.int32)
X = np.random.default_rng(71).normal(size=(4, 6)).astype(np.float32)   # not a polynomial


def test_polynomial_arithmetic():
    for a, b in [(P1, P2), (P2, P1), (PI, P2), (PI, PI), (P1[:1], P1)]:
        for name in ["polyadd", "polysub", "polymul"]:
            close(getattr(enp, name)(a, b), getattr(jnp, name)(a, b), tol=1e-4)
        close(enp.polydiv(a, b), jnp.polydiv(a, b), tol=1e-4)
    z = np.array([0.0, 0.0, 1.0, 2.0], np.float32)
    close(enp.polymul(z, P2, trim_leading_zeros=True),
          jnp.polymul(z, P2, trim_leading_zeros=True))
    close(enp.polydiv(P1, np.array([1.0, -2.0, 0.5], np.float32), trim_leading_zeros=True),
          jnp.polydiv(P1, np.array([1.0, -2.0, 0.5], np.float32), trim_leading_zeros=True),
          tol=1e-4)
    eager_and_jit(lambda a, b: (enp.polyadd(a, b), enp.polymul(a, b), enp.polydiv(a, b)),
                  lambda a, b: (jnp.polyadd(a, b), jnp.polymul(a, b), jnp.polydiv(a, b)), P1, P2,
                  tol=1e-4)


def test_polynomial_calculus_and_roots():
    for p in [P1, PI, P2[:1]]:
        for m in [0, 1, 2, 5]:
            close(enp.polyder(p, m), jnp.polyder(p, m), tol=1e-4)
            close(enp.polyint(p, m), jnp.polyint(p, m), tol=1e-4)
    close(enp.polyint(P1, 2, k=np.array([1.0, -3.0])), jnp.polyint(P1, 2, k=np.array([1.0, -3.0])))
    close(enp.polyint(P1, 3, k=2.0), jnp.polyint(P1, 3, k=2.0))
    roots = np.array([1.0, -2.0, 0.5], np.float32)
    eager_and_jit(enp.poly, jnp.poly, roots, tol=1e-4)
    close(enp.poly(np.zeros(0, np.float32)), jnp.poly(np.zeros(0, np.float32)))
    close(enp.poly(PI), jnp.poly(PI))
    sym = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], np.float32)
    close(enp.poly(sym), np.poly(sym).real.astype(np.float32), tol=1e-4)   # real, see docs


def test_polyfit():
    x = np.linspace(-1, 2, 12).astype(np.float32)
    y = (0.5 * x ** 3 - x + 2 + 0.05 * np.sin(9 * x)).astype(np.float32)
    yy = np.stack([y, 2 * y - 1], axis=1)
    for args, kw in [((x, y, 3), {}), ((x, y, 1), {"w": np.abs(x) + 1}), ((x, yy, 2), {}),
                     ((x, y, 2), {"cov": True}), ((x, y, 2), {"cov": "unscaled"}),
                     ((x, yy, 2), {"cov": True})]:
        close(enp.polyfit(*args, **kw), jnp.polyfit(*args, **kw), tol=2e-3)
    c, res, rank, sv, rcond = enp.polyfit(x, y, 2, full=True)
    cj, resj, rankj, svj, rcondj = jnp.polyfit(x, y, 2, full=True)
    close((c, res, sv, rcond), (cj, resj, svj, rcondj), tol=2e-3)
    assert int(rank) == int(rankj)
    close(ember.jit(lambda x, y: enp.polyfit(x, y, 2))(x, y), jnp.polyfit(x, y, 2), tol=2e-3)


ERRORS = [
    (lambda: enp.polyder(P1, -1), TracingError, "non-negative"),
    (lambda: enp.polyint(P1, 2, k=np.ones(3)), TracingError, "k must be"),
    (lambda: enp.polyadd(X, P1), TracingError, "1-D"),
    (lambda: enp.polyfit(X, X, 1), TracingError, "1-D vector"),
    (lambda: enp.polyfit(P1, P1, -1), TracingError, "deg"),
    (lambda: enp.polyfit(P1, P1, 3, cov=True), TracingError, "exceed"),
    (lambda: ember.jit(lambda p: enp.polymul(p, p, trim_leading_zeros=True))(P1),
     ConcretizationError, "concrete"),
    (lambda: enp.poly(X), TracingError, "square"),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
