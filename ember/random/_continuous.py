"""Distributions that are transforms of uniform and normal floats (exponential, Laplace,
Pareto, Wald, ...), and random vectors and matrices; as ``jax.random``'s, the same key splits
and draws in the same order, so the values agree with JAX's to a few ulps."""

from __future__ import annotations

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.random._factory import (
    _host_float,
    _int_default,
    _safe_params,
    _sample_dtype,
    _sample_shape,
    _static_int,
    distribution,
)
from ember.random._prng import (
    _arg_error,
    _enp,
    _full,
    _is_concrete,
    _lift,
    _shape,
    _split_n,
    _takes_key,
)
from ember.random._samplers import _bernoulli, _cvt, _normal, _unit

__all__ = ["double_sided_maxwell", "multivariate_normal", "orthogonal"]


@distribution(shape=())
@eager
def _exponential(key, shape, dtype):
    """Standard exponential floats, ``-log1p(-u)``, as ``jax.random.exponential``.

    Example:
        >>> ember.random.exponential(ember.random.PRNGKey(0), (3,))
    """
    return lax.neg(lax.log1p(lax.neg(_unit(key, shape, dtype))))


@distribution(shape=())
@eager
def _laplace(key, shape, dtype):
    """Standard Laplace floats, as ``jax.random.laplace``.

    Example:
        >>> ember.random.laplace(ember.random.PRNGKey(0), (3,))
    """
    u = _unit(key, shape, dtype, -1.0 + dtypes.finfo(dtype).epsneg)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@distribution(shape=())
@eager
def _logistic(key, shape, dtype):
    """Standard logistic floats, ``log(u) - log1p(-u)``, as ``jax.random.logistic``.

    Example:
        >>> ember.random.logistic(ember.random.PRNGKey(0), (3,))
    """
    u = _unit(key, shape, dtype, dtypes.finfo(dtype).tiny)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


@distribution(shape=())
@eager
def _cauchy(key, shape, dtype):
    """Standard Cauchy floats, ``tan(pi (u - 1/2))``, as ``jax.random.cauchy``.

    Example:
        >>> ember.random.cauchy(ember.random.PRNGKey(0), (3,))
    """
    u = _unit(key, shape, dtype, dtypes.finfo(dtype).eps)
    return lax.tan(lax.mul(_full(np.pi, dtype, shape), lax.sub(u, _full(0.5, dtype, shape))))


@distribution(("sigma", np.float32(1)), cast=_safe_params)
@eager
def _lognormal(key, sigma, shape, dtype):
    """Log-normal floats ``exp(sigma * normal)``, as ``jax.random.lognormal``.

    Example:
        >>> ember.random.lognormal(ember.random.PRNGKey(0), 0.5, (3,))
    """
    return _enp().exp(_normal(key, shape, dtype) * _cvt(sigma, dtype))


@distribution("b", cast=_safe_params)
@eager
def _pareto(key, b, shape, dtype):
    """Pareto floats ``exp(exponential / b)`` on ``[1, inf)``, as ``jax.random.pareto``.

    Example:
        >>> ember.random.pareto(ember.random.PRNGKey(0), 3.0, (3,))
    """
    return _enp().exp(_exponential(key, shape, dtype) / _cvt(b, dtype))


@distribution("scale", cast=_safe_params)
@eager
def _rayleigh(key, scale, shape, dtype):
    """Rayleigh floats ``scale * sqrt(-2 log u)``, as ``jax.random.rayleigh``.

    Example:
        >>> ember.random.rayleigh(ember.random.PRNGKey(0), 2.0, (3,))
    """
    log_u = lax.log(_unit(key, shape, dtype))
    return lax.mul(_cvt(scale, dtype, shape), lax.sqrt(lax.mul(log_u, _full(-2, dtype, shape))))


@distribution(shape=())
@eager
def _maxwell(key, shape, dtype):
    """One-sided Maxwell floats, the norm of 3 standard normals, as ``jax.random.maxwell``.

    Example:
        >>> ember.random.maxwell(ember.random.PRNGKey(0), (3,))
    """
    x = _normal(key, shape + (3,), dtype)
    return _enp().sqrt(_enp().sum(x * x, axis=-1))


@_takes_key
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats ``sign * maxwell * scale + loc`` of shape
    ``shape + broadcast(loc, scale).shape``, as ``jax.random.double_sided_maxwell``.

    Example:
        >>> ember.random.double_sided_maxwell(ember.random.PRNGKey(0), 0.0, 1.0, (3,))
    """
    dt = _sample_dtype(dtype, "double_sided_maxwell")
    shape = _shape(shape, "double_sided_maxwell")
    params = _sample_shape("double_sided_maxwell", None, loc, scale)
    return _double_sided_maxwell(key, loc, scale, (shape or params) + params, dt)


@eager
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    k_maxwell, k_sign = _split_n(key, 2)
    sign = _rademacher(k_sign, shape, dtype)
    return sign * _maxwell(k_maxwell, shape, dtype) * scale + loc


@distribution("scale", "concentration", shape=())
@eager
def _weibull_min(key, scale, concentration, shape, dtype):
    """Weibull floats ``(-log1p(-u)) ** (1 / concentration) * scale``, as
    ``jax.random.weibull_min`` (parameters broadcast with ``shape``).

    Example:
        >>> ember.random.weibull_min(ember.random.PRNGKey(0), 1.0, 2.0, (3,))
    """
    enp = _enp()
    e = enp.negative(enp.log1p(enp.negative(_unit(key, shape, dtype))))
    return enp.power(e, 1.0 / concentration) * scale


@distribution("mean", cast=_safe_params)
@eager
def _wald(key, mean, shape, dtype):
    """Wald (inverse Gaussian) floats, as ``jax.random.wald``.

    Example:
        >>> ember.random.wald(ember.random.PRNGKey(0), 1.0, (3,))
    """
    k1, k2 = _split_n(key, 2)
    mean = _cvt(mean, dtype, shape)
    v = _normal(k1, shape, dtype)
    z = _unit(k2, shape, dtype)
    y = v * v
    mean_sq = mean * mean
    sqrt_term = _enp().sqrt(4 * mean * y + mean_sq * (y * y))
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


@distribution("left", "mode", "right", cast=_safe_params)
@eager
def _triangular(key, left, mode, right, shape, dtype):
    """Triangular floats on ``[left, right]`` peaking at ``mode``, as
    ``jax.random.triangular``.

    Example:
        >>> ember.random.triangular(ember.random.PRNGKey(0), 0.0, 0.3, 1.0, (3,))
    """
    left, mode, right = (_cvt(x, dtype, shape) for x in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _unit(key, shape, dtype)
    out1 = left + _enp().sqrt(u * (right - left) * (mode - left))
    out2 = right - _enp().sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(lax.lt(u, fc), out1, out2)


@distribution(shape=(), dtype=_int_default)
@eager
def _rademacher(key, shape, dtype):
    """-1 or +1 with equal probability (int32 by default), as ``jax.random.rademacher``.

    Example:
        >>> ember.random.rademacher(ember.random.PRNGKey(0), (3,))
    """
    b = lax.convert_element_type(_bernoulli(key, np.float32(0.5), shape, "low"), dtype)
    return lax.sub(lax.mul(b, _full(2, dtype, shape)), _full(1, dtype, shape))

# --- vectors and matrices --------------------------------------------------------------------

@_takes_key
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal vectors ``mean + factor @ normal`` with ``factor`` from ``cov``'s
    Cholesky, eigh or SVD factorization, as ``jax.random.multivariate_normal``.

    Example:
        >>> ember.random.multivariate_normal(ember.random.PRNGKey(0), np.zeros(2, np.float32),
        ...                                  np.eye(2, dtype=np.float32), (3,))
    """
    if method not in ("svd", "eigh", "cholesky"):
        raise _arg_error("multivariate_normal", f"method must be one of 'svd', 'eigh' and "
                                                f"'cholesky', got {method!r}")
    mean = _host_float(mean) if _is_concrete(mean) else mean
    cov = _host_float(cov) if _is_concrete(cov) else cov
    mshape, cshape = tuple(np.shape(mean)), tuple(np.shape(cov))
    if len(mshape) < 1 or len(cshape) < 2 or cshape[-2:] != mshape[-1:] * 2:
        raise _arg_error("multivariate_normal", f"needs mean of shape (..., n) and cov of "
                                                f"shape (..., n, n), got {mshape} and {cshape}")
    dt = None if dtype is None else _sample_dtype(dtype, "multivariate_normal")
    batch = _sample_shape("multivariate_normal", shape, np.zeros(mshape[:-1]),
                          np.zeros(cshape[:-2]))
    return _multivariate_normal(key, mean, cov, batch, dt, method)


@eager
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    enp = _enp()
    mean, cov = enp._promote_inexact(_lift(mean), _lift(cov))
    if method == "svd":
        u, s, _ = enp.linalg.svd(cov)
        factor = u * enp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = enp.linalg.eigh(cov)
        factor = v * enp.sqrt(w[..., None, :])
    else:
        factor = enp.linalg.cholesky(cov)
    z = _normal(key, shape + tuple(mean.shape[-1:]), mean.dtype if dtype is None else dtype)
    return mean + enp.einsum("...ij,...j->...i", factor, z)


@_takes_key
def orthogonal(key, n, shape=(), dtype=None, m=None):
    """A random (semi-)orthogonal ``n x m`` matrix (Haar measure; shape ``(*shape, n, m)``),
    from the QR factorization of a normal matrix, as ``jax.random.orthogonal``.

    Example:
        >>> ember.random.orthogonal(ember.random.PRNGKey(0), 3)
    """
    n = _static_int(n, "orthogonal", "n")
    m = n if m is None else _static_int(m, "orthogonal", "m")
    return _orthogonal(key, n, m, _shape(shape, "orthogonal"), _sample_dtype(dtype,
                                                                               "orthogonal"))


@eager
def _orthogonal(key, n, m, shape, dtype):
    enp = _enp()
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = enp.linalg.qr(z)
    d = enp.diagonal(r, axis1=-2, axis2=-1)
    x = q * enp.expand_dims(enp.sign(d), -2)
    return enp.swapaxes(x, -1, -2) if n < m else x
