"""``ember.nn``: activation functions and normalizers, built on ``ember.numpy``."""

from __future__ import annotations

import numpy as np

from ember import lax
from ember import numpy as enp
from ember.frontend.eager import eager


@eager
def relu(x):
    """max(x, 0)."""
    return enp.maximum(x, 0)


@eager
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    (x,) = enp._float_args(x)
    return lax.logistic(x)


@eager
def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) computed stably (the max is subtracted first)."""
    (x,) = enp._float_args(x)
    m = enp.max(x, axis=axis, keepdims=True)
    m = enp.where(enp.isfinite(m), m, 0.0)
    out = enp.log(enp.sum(enp.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else enp.squeeze(out, axis=enp._axes(axis, x.ndim))


@eager
def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``, with the max subtracted for stability."""
    (x,) = enp._float_args(x)
    unnormalized = enp.exp(x - enp.max(x, axis=axis, keepdims=True))
    return unnormalized / enp.sum(unnormalized, axis=axis, keepdims=True)


@eager
def log_softmax(x, axis=-1):
    """x - logsumexp(x) along ``axis``."""
    (x,) = enp._float_args(x)
    shifted = x - enp.max(x, axis=axis, keepdims=True)
    return shifted - enp.log(enp.sum(enp.exp(shifted), axis=axis, keepdims=True))


# --- more activations (issue 3) ------------------------------------------------------------

@eager
def relu6(x):
    """min(max(x, 0), 6)."""
    return enp.minimum(enp.maximum(x, 0), 6)


@eager
def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    (x,) = enp._float_args(x)
    neg = enp.expm1(enp.minimum(x, 0.0)) * alpha
    return enp.where(x > 0, x, neg)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@eager
def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


@eager
def gelu(x, approximate=True):
    """Gaussian error linear unit: the tanh approximation (JAX's default) or exact (erf)."""
    (x,) = enp._float_args(x)
    if approximate:
        c = float(np.sqrt(2.0 / np.pi))
        return 0.5 * x * (1.0 + enp.tanh(c * (x + 0.044715 * (x * x * x))))
    return x * lax.erfc(x * float(-1.0 / np.sqrt(2.0))) * 0.5


@eager
def silu(x):
    """x * sigmoid(x)."""
    (x,) = enp._float_args(x)
    return x * lax.logistic(x)


swish = silu


@eager
def softplus(x):
    """log(1 + exp(x)), without overflow."""
    (x,) = enp._float_args(x)
    return enp.logaddexp(x, 0.0)


@eager
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x)."""
    (x,) = enp._float_args(x)
    return -softplus(-x)


@eager
def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """x[..., None] == arange(num_classes) as ``dtype`` (default float), on a new ``axis``."""
    dtype = enp.float32 if dtype is None else dtype
    x = enp.asarray(x)
    nd = x.ndim + 1
    ax = enp._axes(axis, nd)[0]
    idx = lax.broadcasted_iota(x.dtype, tuple(x.shape[:ax]) + (num_classes,)
                               + tuple(x.shape[ax:]), ax)
    return enp.astype(enp.equal(enp.expand_dims(x, ax), idx), dtype)


@eager
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """(x - mean) / sqrt(variance + epsilon), statistics over ``axis`` by default."""
    (x,) = enp._float_args(x)
    if mean is None:
        mean = enp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = enp.mean(x * x, axis=axis, keepdims=True) - mean * mean
    return (x - mean) * lax.rsqrt(variance + epsilon)
