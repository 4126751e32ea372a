"""The gamma family, as ``jax.random``'s: JAX's per-element Marsaglia-Tsang rejection loop,
under ``ember.vmap``, with JAX's key splits; and the distributions drawn from it (chi-square,
F, Student's t, beta, Dirichlet, the generalized normal and the Lp ball)."""

from __future__ import annotations

import math

import numpy as np

from ember import lax
from ember.frontend.eager import eager
from ember.random._continuous import _exponential, _rademacher
from ember.random._factory import (
    _of_dtype,
    _param,
    _safe_params,
    _sample_dtype,
    _sample_shape,
    _static_int,
    distribution,
)
from ember.random._prng import _arg_error, _enp, _shape, _split, _split_n, _takes_key
from ember.random._samplers import _cvt, _normal, _unit

__all__ = ["dirichlet", "ball"]


@distribution("p", shape=())
@eager
def _generalized_normal(key, p, shape, dtype):
    """Generalized normal floats, density ``exp(-|x|**p)``, as
    ``jax.random.generalized_normal``.

    Example:
        >>> ember.random.generalized_normal(ember.random.PRNGKey(0), 1.5, (3,))
    """
    k_gamma, k_sign = _split_n(key, 2)
    g = _gamma(k_gamma, 1 / p, shape, dtype, False)
    return _rademacher(k_sign, shape, dtype) * _enp().power(g, 1 / p)


@_takes_key
def ball(key, d, p=2, shape=(), dtype=None):
    """Uniform points of the unit Lp ball in ``d`` dimensions (shape ``(*shape, d)``), as
    ``jax.random.ball``.

    Example:
        >>> ember.random.ball(ember.random.PRNGKey(0), 3, shape=(2,))
    """
    d = _static_int(d, "ball", "d")
    return _ball(key, p, d, _shape(shape, "ball"), _sample_dtype(dtype, "ball"))


@eager
def _ball(key, p, d, shape, dtype):
    enp = _enp()
    k1, k2 = _split_n(key, 2)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    return g / enp.expand_dims(enp.power(enp.sum(enp.power(enp.abs(g), p), -1) + e, 1 / p),
                               -1)


# --- gamma family: JAX's Marsaglia-Tsang loop per element, under vmap -------------------------

def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) sample (its log with ``log_space``): JAX's ``_gamma_one``."""
    enp = _enp()
    dt = alpha.dtype
    zero, one = np.asarray(0, dt), np.asarray(1, dt)
    boost = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost, alpha, alpha + one)
    d = alpha - np.asarray(1 / 3, dt)
    c = np.asarray(1 / 3, dt) / enp.sqrt(d)

    def rejected(state):
        _, x, v, u = state
        squeeze = lax.ge(u, one - np.asarray(0.0331, dt) * (x * x))
        return enp.logical_and(squeeze, lax.ge(enp.log(u), x * np.asarray(0.5, dt)
                                               + d * (one - v + enp.log(v))))

    def next_x(state):
        k, sub = _split_n(state[0], 2)
        x = _normal(sub, (), dt)
        return k, x, one + x * c

    def propose(state):
        k, k_x, k_u = _split_n(state[0], 3)
        _, x, v = lax.while_loop(lambda s: lax.le(s[2], zero), next_x, (k_x, zero, -one))
        return k, x * x, v * v * v, _unit(k_u, (), dt)

    k, sub = _split_n(key, 2)
    _, _, v, _ = lax.while_loop(rejected, propose, (k, zero, one, np.asarray(2, dt)))
    if log_space:
        log_samples = lax.neg(_exponential(sub, (), dt))
        keep = enp.logical_or(boost, lax.eq(log_samples, zero))
        log_boost = lax.select(keep, zero, log_samples * (one / alpha_orig))
        return enp.log(d) + enp.log(v) + log_boost
    samples = one - _unit(sub, (), dt)
    return d * v * lax.select(boost, one, enp.power(samples, one / alpha_orig))


def _gamma_batch(keys, alphas, log_space):
    """Samples for the flat ``alphas`` with one key each (``keys``: (n, 2))."""
    if alphas.shape[0] == 0:
        return alphas
    from ember.frontend.vmap import vmap
    return vmap(lambda k, a: _gamma_one(k, a, log_space))(keys, alphas)


@distribution("a", cast=_of_dtype)
@eager
def _gamma(key, a, shape, dtype, log_space=False):
    """Standard Gamma(a) floats, as ``jax.random.gamma`` (Marsaglia-Tsang, the same
    per-element rejection loop and key splits as JAX).

    Example:
        >>> ember.random.gamma(ember.random.PRNGKey(0), np.float32([0.5, 2.0]))
    """
    n = math.prod(shape)
    a = lax.reshape(_cvt(a, dtype, shape), (n,))
    return lax.reshape(_gamma_batch(_split(key, (n,)), a, log_space), shape)


@distribution("a", cast=_of_dtype)
def _loggamma(key, a, shape, dtype):
    """The logs of standard Gamma(a) floats, computed in log space (accurate for small
    ``a``), as ``jax.random.loggamma``.

    Example:
        >>> ember.random.loggamma(ember.random.PRNGKey(0), np.float32([0.01, 2.0]))
    """
    return _gamma(key, a, shape, dtype, True)


def _chi2_many(keys_dfs, shape, dtype):
    """Chi-square samples for several (key, df) pairs in one vmapped gamma loop."""
    n = math.prod(shape)
    keys = lax.concatenate([_split(k, (n,)) for k, _ in keys_dfs], 0)
    halves = [lax.reshape(_cvt(df, dtype, shape) / 2, (n,)) for _, df in keys_dfs]
    log_g = _gamma_batch(keys, lax.concatenate(halves, 0), True)
    out = lax.reshape(_enp().exp(log_g) * np.asarray(2, dtype), (len(keys_dfs),) + shape)
    return [out[i] for i in range(len(keys_dfs))]


@distribution("df", cast=_safe_params)
@eager
def _chisquare(key, df, shape, dtype):
    """Chi-square floats with ``df`` degrees of freedom (``2 exp(loggamma(df / 2))``), as
    ``jax.random.chisquare``.

    Example:
        >>> ember.random.chisquare(ember.random.PRNGKey(0), 3.0, (3,))
    """
    return _chi2_many([(key, df)], shape, dtype)[0]


@distribution("dfnum", "dfden", cast=_safe_params)
@eager
def _f(key, dfnum, dfden, shape, dtype):
    """F-distribution floats ``(chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)``, as
    ``jax.random.f``.

    Example:
        >>> ember.random.f(ember.random.PRNGKey(0), 3.0, 5.0, (3,))
    """
    k_den, k_num = _split_n(key, 2)
    chi_num, chi_den = _chi2_many([(k_num, dfnum), (k_den, dfden)], shape, dtype)
    return (chi_num / _cvt(dfnum, dtype)) / (chi_den / _cvt(dfden, dtype))


@distribution("df", cast=_safe_params)
@eager
def _t(key, df, shape, dtype):
    """Student's t floats ``normal * sqrt(df / 2 / gamma(df / 2))``, as ``jax.random.t``.

    Example:
        >>> ember.random.t(ember.random.PRNGKey(0), 4.0, (3,))
    """
    k_n, k_g = _split_n(key, 2)
    n = _normal(k_n, shape, dtype)
    half_df = _cvt(df, dtype) / np.asarray(2, dtype)
    g = _gamma(k_g, half_df, shape, dtype, False)
    return n * _enp().sqrt(half_df / g)


@distribution("a", "b", cast=_safe_params)
@eager
def _beta(key, a, b, shape, dtype):
    """Beta(a, b) floats from two log-gamma samples, as ``jax.random.beta``.

    Example:
        >>> ember.random.beta(ember.random.PRNGKey(0), 2.0, 3.0, (3,))
    """
    enp = _enp()
    n = math.prod(shape)
    k_a, k_b = _split_n(key, 2)
    keys = lax.concatenate([_split(k_a, (n,)), _split(k_b, (n,))], 0)
    alphas = lax.concatenate([lax.reshape(_cvt(x, dtype, shape), (n,)) for x in (a, b)], 0)
    log_g = lax.reshape(_gamma_batch(keys, alphas, True), (2,) + shape)
    log_a, log_b = log_g[0], log_g[1]
    log_max = enp.maximum(log_a, log_b)
    ga, gb = enp.exp(log_a - log_max), enp.exp(log_b - log_max)
    return ga / (ga + gb)


@_takes_key
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) floats (the last axis sums to 1): the softmax of log-gamma samples,
    as ``jax.random.dirichlet``; shape ``shape + alpha.shape[-1:]``.

    Example:
        >>> ember.random.dirichlet(ember.random.PRNGKey(0), np.float32([1.0, 2.0, 3.0]))
    """
    dt = _sample_dtype(dtype, "dirichlet")
    if len(np.shape(alpha)) < 1:
        raise _arg_error("dirichlet", f"alpha must have at least one dimension (the "
                                      f"categories), got shape {tuple(np.shape(alpha))}")
    batch = tuple(np.shape(alpha))[:-1]
    shape = _sample_shape("dirichlet", None if shape is None else shape, np.zeros(batch))
    return _dirichlet(key, _param(alpha, dt), shape, dt)


@eager
def _dirichlet(key, alpha, shape, dtype):
    from ember import nn
    log_g = _gamma(key, alpha, shape + tuple(alpha.shape[-1:]), dtype, True)
    return nn.softmax(log_g, axis=-1)
