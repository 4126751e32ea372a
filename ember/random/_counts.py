"""Counts, as ``jax.random``'s: Poisson (Knuth's product of uniforms, Hormann's transformed
rejection), binomial (geometric inversion, BTRS), geometric and multinomial, with JAX's key
splits."""

from __future__ import annotations

import math

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.random._factory import (
    _host_float,
    _host_floats,
    _param,
    _sample_dtype,
    _sample_int,
    _sample_shape,
    distribution,
)
from ember.random._prng import (
    _arg_error,
    _enp,
    _full,
    _is_concrete,
    _lift,
    _shape,
    _split,
    _split_n,
    _takes_key,
)
from ember.random._samplers import _cvt, _unit

__all__ = ["multinomial"]


def _any(x):
    return lax.reduce_or(x, tuple(range(x.ndim))) if x.ndim else x


def _rate(name, dtype, lam):
    """The rate as float32 data, whatever the result's integer dtype (as JAX's)."""
    return [_param(lam, np.float32)]


@distribution("lam", dtype=_sample_int, cast=_rate)
@eager
def _poisson(key, lam, shape, dtype):
    """Poisson(lam) integers (int32 by default), as ``jax.random.poisson``: Knuth's product of
    uniforms for ``lam < 10``, Hormann's transformed rejection above, with JAX's key splits.

    Example:
        >>> ember.random.poisson(ember.random.PRNGKey(0), 3.0, (3,))
    """
    enp = _enp()
    if not math.prod(shape):
        return _full(0, dtype, shape)
    lam = _cvt(lam, np.float32, shape)
    use_knuth = enp.logical_or(lax.ne(lam, lam), lam < 10)
    knuth = _poisson_knuth(key, lax.select(use_knuth, lam, enp.zeros_like(lam)), dtype)
    rejection = _poisson_rejection(key, lax.select(use_knuth, enp.full_like(lam, 1e5), lam),
                                   dtype)
    out = lax.select(use_knuth, knuth, rejection)
    return lax.select(lax.eq(lam, enp.zeros_like(lam)), enp.zeros_like(out), out)


def _poisson_knuth(key, lam, dtype):
    shape = tuple(lam.shape)
    max_iters = min(np.iinfo(dtype).max, np.iinfo(np.int32).max)

    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = _split_n(rng, 2)
        k = lax.select(log_prod > -lam, k + _full(1, dtype, shape), k)
        return i + 1, k, rng, log_prod + _enp().log(_unit(sub, shape, np.dtype(np.float32)))

    def cond(carry):
        return _enp().logical_and(_any(carry[3] > -lam), carry[0] < max_iters)

    init = (np.int32(0), _full(0, dtype, shape), key, _full(0, np.float32, shape))
    k = lax.while_loop(cond, body, init)[1]
    return k - _full(1, dtype, shape)


def _poisson_rejection(key, lam, dtype):
    enp = _enp()
    shape, fdt = tuple(lam.shape), lam.dtype
    log_lam = enp.log(lam)
    b = 0.931 + 2.53 * enp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    max_iters = min(np.iinfo(dtype).max, np.iinfo(np.int32).max)

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _split_n(rng, 3)
        u = _unit(k0, shape, fdt) - 0.5
        v = _unit(k1, shape, fdt)
        u_shifted = 0.5 - enp.abs(u)
        k = enp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = enp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        log_pmf = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = enp.logical_and(u_shifted >= 0.07, v <= v_r)
        reject = enp.logical_or(k < 0, enp.logical_and(u_shifted < 0.013, v > u_shifted))
        accept = enp.logical_or(accept1, enp.logical_and(enp.logical_not(reject), s <= log_pmf))
        return i + 1, lax.select(accept, k, k_out), enp.logical_or(accepted, accept), rng

    def cond(carry):
        return enp.logical_and(_any(enp.logical_not(carry[2])), carry[0] < max_iters)

    init = (np.int32(0), _full(-1, fdt, shape), _full(False, np.bool_, shape), key)
    return lax.convert_element_type(lax.while_loop(cond, body, init)[1], dtype)


@distribution("p", dtype=_sample_int, cast=_host_floats)
@eager
def _geometric(key, p, shape, dtype):
    """Geometric(p) integers >= 1 (trials to the first success; int32 by default), as
    ``jax.random.geometric``.

    Example:
        >>> ember.random.geometric(ember.random.PRNGKey(0), 0.3, (3,))
    """
    enp = _enp()
    (p,) = enp._promote_inexact(_lift(p))
    u = _unit(key, shape, p.dtype)
    u = enp.where(u == 0, np.asarray(1, p.dtype), u)
    log_q = enp.broadcast_to(enp.log1p(-p), shape)
    return lax.convert_element_type(enp.floor(enp.log(u) / log_q) + 1, dtype)


def _count_and_probability(name, dtype, n, p):
    """``n`` as host data of its own dtype; ``p`` of a float dtype."""
    return [np.asarray(n) if _is_concrete(n) else n, *_host_floats(name, dtype, p)]


@distribution("n", "p", cast=_count_and_probability)
@eager
def _binomial(key, count, prob, shape, dtype):
    """Binomial(n, p) counts as floats, as ``jax.random.binomial``: geometric inversion for
    ``n * min(p, 1 - p) <= 10``, the BTRS rejection sampler above, with JAX's key splits.

    Example:
        >>> ember.random.binomial(ember.random.PRNGKey(0), 20.0, 0.3, (3,))
    """
    enp = _enp()
    if not math.prod(shape):
        return _full(0, dtype, shape)
    (prob,) = enp._promote_inexact(_lift(prob))
    fdt = prob.dtype
    count = _cvt(count, fdt, shape)
    prob = enp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_bad = enp.logical_or(enp.isnan(count), count < 0.0)
    count_inf = enp.isinf(count)
    q_nan, q_neg = enp.isnan(q), q < 0.0
    q = lax.select(enp.logical_or(q_nan, q_neg), enp.full_like(q, 0.01), q)
    use_inversion = enp.logical_or(count_bad, count * q <= 10.0)
    count = enp.floor(count)
    count_inv = lax.select(use_inversion, count, enp.zeros_like(count))
    count_btrs = lax.select(use_inversion, enp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, enp.full_like(q, 0.5), q)
    samples = lax.select(use_inversion, _binomial_inversion(key, count_inv, q, dtype),
                         _btrs(key, count_btrs, q_btrs, dtype))
    invalid = enp.logical_or(enp.logical_or(q_neg, q_nan), count_bad)
    samples = lax.select(invalid, enp.full_like(samples, np.nan), samples)
    samples = lax.select(enp.logical_and(count_inf, enp.logical_not(invalid)),
                         enp.full_like(samples, np.inf), samples)
    keep = enp.logical_or(enp.logical_or(p_lt_half, count_bad), enp.logical_or(q_nan, count_inf))
    return lax.select(keep, samples, lax.convert_element_type(count, dtype) - samples)


def _binomial_inversion(key, count, prob, dtype):
    enp = _enp()
    shape = tuple(prob.shape)
    log1minusprob = enp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = _split_n(rng, 2)
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        geom = enp.ceil(enp.log(_unit(sub, shape, prob.dtype)) / log1minusprob)
        return i + 1, num_geom, geom_sum + geom, rng

    def cond(carry):
        return _any(carry[2] <= count)

    zeros = enp.zeros_like(prob)
    k = lax.while_loop(cond, body, (np.int32(0), zeros, zeros, key))[1]
    return lax.convert_element_type(k - 1, dtype)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k):
    enp = _enp()
    use_table = k <= 9
    k = enp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    table = enp.take(np.asarray(_STIRLING_TAIL, k.dtype), enp.floor(k).astype(np.int32))
    return lax.select(use_table, table, approx)


def _btrs(key, count, prob, dtype):
    """The transformed-rejection binomial sampler (Hormann's BTRS), as JAX's ``_btrs``."""
    enp = _enp()
    shape = tuple(prob.shape)
    stddev = enp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = enp.floor((count + 1) * prob)
    tail_m = _stirling_approx_tail(m) + _stirling_approx_tail(count - m)

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _split_n(rng, 3)
        u = _unit(k0, shape, prob.dtype) - 0.5
        v = _unit(k1, shape, prob.dtype)
        us = 0.5 - enp.abs(u)
        accept1 = enp.logical_and(us >= 0.07, v <= v_r)
        k = enp.floor((2 * a / us + b) * u + c)
        reject = enp.logical_or(k < 0, k > count)
        v = enp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * enp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * enp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * enp.log(r * (count - k + 1) / (k + 1))
              + tail_m - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = enp.logical_or(accept1, enp.logical_and(enp.logical_not(reject), v <= ub))
        return i + 1, lax.select(accept, k, k_out), enp.logical_or(accepted, accept), rng

    def cond(carry):
        return _any(enp.logical_not(carry[2]))

    init = (np.int32(0), enp.full_like(prob, -1), _full(False, np.bool_, shape), key)
    return lax.convert_element_type(lax.while_loop(cond, body, init)[1], dtype)


@_takes_key
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts over the last axis of ``p``, as ``jax.random.multinomial``
    (a scan of conditional binomials). ``shape``, as JAX's code takes it, is the full result
    shape, last axis included.

    Example:
        >>> ember.random.multinomial(ember.random.PRNGKey(0), 10.0, np.float32([0.2, 0.8]))
    """
    del unroll
    dt = None if dtype is None else _sample_dtype(dtype, "multinomial")
    if len(np.shape(p)) < 1:
        raise _arg_error("multinomial", "p must have at least one dimension (the outcomes)")
    shape = tuple(np.shape(p)) if shape is None else _shape(shape, "multinomial")
    if not shape:
        raise _arg_error("multinomial", "shape must include the outcome axis")
    _sample_shape("multinomial", shape, p)
    _sample_shape("multinomial", shape[:-1], n)
    n = _host_float(n) if _is_concrete(n) else n
    p = _host_float(p) if _is_concrete(p) else p
    return _multinomial(key, n, p, shape, dt)


@eager
def _multinomial(key, n, p, shape, dtype):
    enp = _enp()
    n, p = enp._promote_inexact(_lift(n), _lift(p))
    n = enp.broadcast_to(n, shape[:-1])
    p = enp.moveaxis(enp.broadcast_to(p, shape), -1, 0)
    remaining = lax.rev(lax.cumsum(lax.rev(p, (0,)), 0), (0,))
    ratios = p / enp.where(remaining == 0, np.asarray(1, p.dtype), remaining)

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial(k, remainder, enp.clip(ratio, 0, 1), tuple(remainder.shape),
                          remainder.dtype)
        return remainder - count, count

    _, counts = lax.scan(step, n, (ratios, _split(key, (shape[-1],))))
    out_dt = dtypes.default_float() if dtype is None else dtype
    return lax.convert_element_type(enp.moveaxis(counts, 0, -1), out_dt)
