"""``ember.nn``: activation functions and normalizers, built on ``ember.numpy``."""

from __future__ import annotations

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
