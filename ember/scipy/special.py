"""ember.scipy.special: special functions of ``scipy.special`` (real arguments).

Integers and bools become the default float dtype, as in JAX.
"""

from __future__ import annotations

from ember import lax
from ember import numpy as enp
from ember.frontend.eager import eager

__all__: list[str] = ["erf", "erfc", "erfinv", "logit", "expit", "gammaln", "logsumexp",
                      "xlogy", "digamma", "psi"]


def _unary(name, fn, doc):
    def f(x):
        (x,) = enp._float_args(x)
        return fn(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``scipy.special.{name}``: {doc}."
    return eager(f)


erf = _unary("erf", lax.erf, "the error function")
erfc = _unary("erfc", lax.erfc, "1 - erf(x), accurate where erf(x) is near 1")
erfinv = _unary("erfinv", lax.erf_inv, "the inverse of erf on [-1, 1]")
expit = _unary("expit", lax.logistic, "the logistic sigmoid 1 / (1 + exp(-x))")
gammaln = _unary("gammaln", lax.lgamma, "log |gamma(x)|")
digamma = psi = _unary("digamma", lax.digamma, "the logarithmic derivative of gamma")


@eager
def logit(x):
    """``scipy.special.logit``: log(p / (1 - p))."""
    (x,) = enp._float_args(x)
    return lax.log(lax.div(x, lax.sub(enp._const(1.0, x), x)))


@eager
def xlogy(x, y):
    """``scipy.special.xlogy``: x * log(y), and 0 where x == 0 (unless y is NaN)."""
    x, y = enp._float_args(x, y, name="xlogy")
    zero = enp._const(0.0, x)
    r = lax.mul(x, lax.log(y))
    return lax.select(lax.bitwise_and(lax.eq(x, zero), lax.eq(y, y)), zero, r)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp``: log(sum(b * exp(a))) computed stably."""
    from ember import nn
    if b is None and not return_sign:
        return nn.logsumexp(a, axis=axis, keepdims=keepdims)
    return _logsumexp_b(a, axis, b, keepdims, return_sign)


@eager
def _logsumexp_b(a, axis, b, keepdims, return_sign):
    a, b = enp._float_args(a, 1.0 if b is None else b, name="logsumexp")
    axes = enp._axes(axis, a.ndim)
    a = enp.where(b != 0, a, -enp.inf)     # a zero weight drops its term, inf included (JAX)
    m = enp.max(a, axis=axes, keepdims=True)
    m = enp.where(enp.isfinite(m), m, 0.0)
    s = enp.sum(b * enp.exp(a - m), axis=axes, keepdims=True)
    sign = enp.sign(s)
    out = enp.log(enp.abs(s)) + m
    if not keepdims:
        out, sign = enp.squeeze(out, axis=axes), enp.squeeze(sign, axis=axes)
    if return_sign:
        return out, sign
    return enp.where(sign < 0, enp.nan, out)
