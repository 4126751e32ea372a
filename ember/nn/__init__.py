"""``ember.nn``: activation functions and normalizers, built on ``ember.numpy``."""

from __future__ import annotations

import functools

import numpy as np

from ember import dtypes, lax
from ember import numpy as enp
from ember.errors import ArgumentError as _ArgumentError
from ember.errors import TracingError as _TracingError
from ember.frontend.custom_derivatives import custom_jvp as _custom_jvp
from ember.frontend.eager import eager


@eager
def relu(x):
    """max(x, 0), with JAX's derivative: 0 at 0 (a custom JVP, as ``jax.nn.relu``)."""
    return _relu(x)


@_custom_jvp
def _relu(x):
    return enp.maximum(x, 0)


_relu.defjvps(lambda g, ans, x: enp.where(x > 0, g, enp.zeros_like(g)))


@eager
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    (x,) = enp._float_args(x)
    return lax.logistic(x)


@eager
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over ``axis``, computed stably (the max is subtracted first).

    ``b`` weights the terms (a zero weight drops its term, inf included); ``return_sign``
    returns ``(log|sum|, sign(sum))`` instead of NaN for a negative sum; ``where`` selects the
    elements to include. ``ember.scipy.special.logsumexp`` is this function.

    Example:
        >>> ember.nn.logsumexp(np.array([0.0, 0.0], np.float32))
        Array(0.6931472, dtype=float32)
    """
    if where is not None:
        a = enp.where(where, a, 0)
    if b is not None:
        a, b = enp._float_args(a, b, name="logsumexp")
        a = enp.where(b != 0, a, -enp.inf)
    else:
        (a,) = enp._float_args(a)
    axes = enp._axes(axis, a.ndim)
    amax = enp.max(a, axis=axes, keepdims=True, where=where, initial=-enp.inf)
    # A constant of the derivative (JAX's): the terms' gradients through it cancel exactly
    amax = lax.stop_gradient(enp.where(enp.isfinite(amax), amax, 0.0))
    terms = enp.exp(a - amax)
    if b is not None:
        terms = terms * b
    total = enp.sum(terms, axis=axes, keepdims=True, where=where)
    sign = enp.sign(total)
    out = enp.log(enp.abs(total)) + amax
    if not keepdims:
        out, sign = enp.squeeze(out, axis=axes), enp.squeeze(sign, axis=axes)
    if return_sign:
        return out, sign
    if b is not None:
        out = enp.where(sign < 0, enp.nan, out)
    return out


@eager
def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along ``axis``, with the max subtracted for stability.

    Elements outside ``where`` take no part and come out 0. Its derivative is JAX's custom
    JVP, ``y * (t - sum(y * t))``: reverse mode keeps the result ``y`` alone for the
    backward pass (differentiating the ops would keep the exponentials, the max's tie masks
    and the normalizer too: five arrays of ``x``'s size, not one).

    Example:
        >>> ember.nn.softmax(np.array([0.0, 0.0], np.float32))
        Array([0.5, 0.5], dtype=float32)
    """
    (x,) = enp._float_args(x)
    axis = tuple(enp._axes(axis, x.ndim))
    if where is None:
        return _softmax(x, axis)
    return _softmax_where(x, enp.broadcast_to(enp.asarray(where, bool), x.shape), axis)


def _softmax_of(x, axis, where=None):
    x_max = enp.max(x, axis=axis, keepdims=True, where=where, initial=-enp.inf)
    x_safe = x if where is None else enp.where(where, x, -enp.inf)
    unnormalized = enp.exp(x_safe - lax.stop_gradient(x_max))
    out = unnormalized / enp.sum(unnormalized, axis=axis, keepdims=True, where=where)
    return out if where is None else enp.where(where, out, 0.0)


@functools.partial(_custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis):
    return _softmax_of(x, axis)


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x,), (t,) = primals, tangents
    y = _softmax(x, axis)
    return y, y * (t - enp.sum(y * t, axis=axis, keepdims=True))


@functools.partial(_custom_jvp, nondiff_argnums=(2,))
def _softmax_where(x, where, axis):
    return _softmax_of(x, axis, where)


@_softmax_where.defjvp
def _softmax_where_jvp(axis, primals, tangents):
    (x, where), (t, _) = primals, tangents
    y = _softmax_where(x, where, axis)
    return y, y * (t - enp.sum(y * t, axis=axis, keepdims=True, where=where))


@eager
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along ``axis``; elements outside ``where`` come out -inf.

    Example:
        >>> ember.nn.log_softmax(np.array([0.0, 0.0], np.float32))
        Array([-0.6931472, -0.6931472], dtype=float32)
    """
    (x,) = enp._float_args(x)
    x_max = enp.max(x, axis=axis, keepdims=True, where=where, initial=-enp.inf)
    x_safe = x if where is None else enp.where(where, x, -enp.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    out = shifted - enp.log(enp.sum(enp.exp(shifted), axis=axis, keepdims=True, where=where))
    return out if where is None else enp.where(where, out, -enp.inf)


# --- more activations (issue 3) ------------------------------------------------------------

@eager
def relu6(x):
    """min(max(x, 0), 6.0): integers become floats, as in JAX (6.0 is a float).

    Example:
        >>> ember.nn.relu6(np.array([-1, 3, 9], np.int32))
        Array([0., 3., 6.], dtype=float32)
    """
    (x,) = enp._float_args(x)      # an integer input gives floats (6.0 is a float)
    return _relu6(x)


@_custom_jvp
def _relu6(x):
    return enp.minimum(enp.maximum(x, 0), 6.0)


# JAX's derivative: 0 at 0 and at 6.
_relu6.defjvps(lambda g, ans, x: enp.where((x > 0) & (x < 6), g, enp.zeros_like(g)))


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
    """Gaussian error linear unit: the tanh approximation (JAX's default) or exact (erf).

    Its derivative is written out (a custom JVP): reverse mode keeps one array, gelu'(x),
    for the backward pass where differentiating its ops kept six (``x * x``, ``tanh``'s
    derivative, the halves, ...).

    Example:
        >>> ember.nn.gelu(np.array([0.0, 1.0], np.float32))
        Array([0.      , 0.841192], dtype=float32)
    """
    (x,) = enp._float_args(x)
    return _gelu_tanh(x) if approximate else _gelu_erf(x)


_GELU_C = float(np.sqrt(2.0 / np.pi))


def _gelu_tanh_parts(x):
    th = enp.tanh(_GELU_C * (x + 0.044715 * (x * x * x)))
    return 0.5 * x * (1.0 + th), th


@_custom_jvp
def _gelu_tanh(x):
    return _gelu_tanh_parts(x)[0]


@_gelu_tanh.defjvp
def _gelu_tanh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out, th = _gelu_tanh_parts(x)
    d = 0.5 * (1.0 + th) + (0.5 * _GELU_C) * x * (1.0 - th * th) * (
        1.0 + (3 * 0.044715) * (x * x))
    return out, t * d


def _gelu_erf_parts(x):
    # x * (erfc(-x / sqrt 2) / 2): halving first keeps x * 2 from overflowing (gelu(3e38)).
    cdf = lax.erfc(x * float(-1.0 / np.sqrt(2.0))) * 0.5
    return x * cdf, cdf


@_custom_jvp
def _gelu_erf(x):
    return _gelu_erf_parts(x)[0]


@_gelu_erf.defjvp
def _gelu_erf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out, cdf = _gelu_erf_parts(x)
    return out, t * (cdf + x * enp.exp(-0.5 * (x * x)) * float(1.0 / np.sqrt(2.0 * np.pi)))


@eager
def silu(x):
    """x * sigmoid(x); its derivative, sigmoid(x) * (1 + x * (1 - sigmoid(x))), is written out
    (a custom JVP: one array kept for reverse mode).

    Example:
        >>> ember.nn.silu(np.array([0.0], np.float32))
        Array([0.], dtype=float32)
    """
    (x,) = enp._float_args(x)
    return _silu(x)


@_custom_jvp
def _silu(x):
    return x * lax.logistic(x)


@_silu.defjvp
def _silu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s = lax.logistic(x)
    return x * s, t * (s * (1.0 + x * (1.0 - s)))


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
    dtype = dtypes.default_float() if dtype is None else dtype
    x = enp.asarray(x)
    nd = x.ndim + 1
    ax = enp._axes(axis, nd)[0]
    idx = lax.broadcasted_iota(x.dtype, tuple(x.shape[:ax]) + (num_classes,)
                               + tuple(x.shape[ax:]), ax)
    return enp.astype(enp.equal(enp.expand_dims(x, ax), idx), dtype)


@eager
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon), statistics over ``axis`` (and ``where``).

    ``algorithm="fast"`` takes the variance as mean(x**2) - mean(x)**2 clipped at 0 (JAX's
    default); ``"stable"`` as mean((x - mean)**2).

    Example:
        >>> ember.nn.standardize(np.array([1.0, 3.0], np.float32))
        Array([-0.999995,  0.999995], dtype=float32)
    """
    if algorithm not in ("fast", "stable"):
        raise _ArgumentError(f"standardize: unknown algorithm {algorithm!r}; "
                             "pass 'fast' or 'stable'")
    (x,) = enp._float_args(x)
    if mean is None:
        mean = enp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = enp.mean(enp.square(x - mean), axis=axis, keepdims=True, where=where)
        else:
            variance = enp.mean(x * x, axis=axis, keepdims=True, where=where) - mean * mean
            variance = enp.maximum(variance, 0.0)
    return (x - mean) * lax.rsqrt(variance + epsilon)


# --- more activations and attention (session 17) -------------------------------------------

@eager
def identity(x):
    """x unchanged (as an array).

    Example:
        >>> ember.nn.identity(np.array([1.0, -2.0], np.float32))
        Array([ 1., -2.], dtype=float32)
    """
    return enp.asarray(x)


@eager
def tanh(x):
    """The hyperbolic tangent (``ember.numpy.tanh``).

    Example:
        >>> ember.nn.tanh(np.array([0.0], np.float32))
        Array([0.], dtype=float32)
    """
    return enp.tanh(x)


@eager
def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha).

    Example:
        >>> ember.nn.celu(np.array([-1.0, 2.0], np.float32), alpha=2.0)
        Array([-0.7869387,  2.       ], dtype=float32)
    """
    return enp.maximum(x, 0.0) + alpha * enp.expm1(enp.minimum(x, 0.0) / alpha)


@eager
def glu(x, axis=-1):
    """Gated linear unit: the first half of ``x`` along ``axis`` times sigmoid of the second.

    Example:
        >>> ember.nn.glu(np.array([1.0, 0.0], np.float32))
        Array([0.5], dtype=float32)
    """
    x = enp.asarray(x)
    (ax,) = enp._axes(axis, x.ndim)
    if x.shape[ax] % 2:
        raise _TracingError(f"glu: the size of axis {axis} of x (shape {tuple(x.shape)}) "
                            "must be even; pass an axis of even size")
    x1, x2 = enp.split(x, 2, axis=ax)
    return x1 * sigmoid(x2)


@eager
def hard_sigmoid(x):
    """relu6(x + 3) / 6.

    Example:
        >>> ember.nn.hard_sigmoid(np.array([0.0], np.float32))
        Array([0.5], dtype=float32)
    """
    return relu6(enp.add(x, 3.0)) / 6.0


@eager
def hard_silu(x):
    """x * hard_sigmoid(x) (also ``hard_swish``).

    Example:
        >>> ember.nn.hard_silu(np.array([1.0], np.float32))
        Array([0.6666667], dtype=float32)
    """
    x = enp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@eager
def hard_tanh(x):
    """x clipped to [-1, 1] (integers stay integers).

    Example:
        >>> ember.nn.hard_tanh(np.array([-3.0, 0.5], np.float32))
        Array([-1. ,  0.5], dtype=float32)
    """
    x = enp.asarray(x)
    return enp.where(x > 1, 1, enp.where(x < -1, -1, x))


@eager
def leaky_relu(x, negative_slope=1e-2):
    """x where x >= 0, else negative_slope * x.

    Example:
        >>> ember.nn.leaky_relu(np.array([-2.0, 2.0], np.float32))
        Array([-0.02,  2.  ], dtype=float32)
    """
    x = enp.asarray(x)
    return enp.where(x >= 0, x, enp.multiply(negative_slope, x))


@eager
def log1mexp(x):
    """log(1 - exp(-x)), stably (expm1 below log 2, log1p above).

    Example:
        >>> ember.nn.log1mexp(np.array([1.0], np.float32))
        Array([-0.45867515], dtype=float32)
    """
    (x,) = enp._float_args(x)
    return enp.where(x < float(np.log(2.0)), enp.log(-enp.expm1(-x)),
                     enp.log1p(-enp.exp(-x)))


@eager
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) = logsumexp(x) - log(n), n counting the elements (in ``where``).

    Example:
        >>> ember.nn.logmeanexp(np.array([1.0, 1.0], np.float32))
        Array(1., dtype=float32)
    """
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = enp.asarray(x)
    if where is None:
        count = float(np.prod([x.shape[a] for a in enp._axes(axis, x.ndim)]))
    else:
        count = enp.sum(enp.broadcast_to(where, x.shape), axis=axis, dtype=lse.dtype,
                        keepdims=keepdims)
    return lse - enp.log(count)


@eager
def mish(x):
    """x * tanh(softplus(x)).

    Example:
        >>> ember.nn.mish(np.array([1.0], np.float32))
        Array([0.86509836], dtype=float32)
    """
    x = enp.asarray(x)
    return x * enp.tanh(softplus(x))


@eager
def soft_sign(x):
    """x / (|x| + 1).

    Example:
        >>> ember.nn.soft_sign(np.array([1.0], np.float32))
        Array([0.5], dtype=float32)
    """
    x = enp.asarray(x)
    return x / (enp.abs(x) + 1)


@eager
def sparse_plus(x):
    """0 for x <= -1, (x + 1)**2 / 4 on (-1, 1), x for x >= 1.

    Example:
        >>> ember.nn.sparse_plus(np.array([0.0], np.float32))
        Array([0.25], dtype=float32)
    """
    x = enp.asarray(x)
    return enp.where(x <= -1.0, 0.0, enp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@eager
def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1), the derivative of ``sparse_plus``.

    Example:
        >>> ember.nn.sparse_sigmoid(np.array([0.0], np.float32))
        Array([0.5], dtype=float32)
    """
    return 0.5 * enp.clip(enp.add(x, 1.0), 0.0, 2.0)


@eager
def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2.

    Example:
        >>> ember.nn.squareplus(np.array([0.0], np.float32))
        Array([1.], dtype=float32)
    """
    x, b = enp.asarray(x), enp.asarray(b)
    return (x + enp.sqrt(enp.square(x) + b)) / 2


def _attention_check(name, t, ndim, dtype=None, shape=None):
    if t is None:
        return
    if t.ndim != ndim or (dtype is not None and t.dtype != dtype) or (shape is not None and any(
            s != -1 and s != d for s, d in zip(shape, t.shape))):
        want = f"shape {tuple(shape)} (-1: any size)" if shape is not None else f"{ndim} dims"
        if dtype is not None:
            want += f" and dtype {np.dtype(dtype).name}"
        raise _TracingError(f"dot_product_attention: {name} should have {want}, but has "
                            f"shape {tuple(t.shape)} and dtype {t.dtype}")


def _attention_grouped(name, t, k, g):
    """A (B, N, T, S) bias or mask as (B, K or 1, G, T, S) for the K x G grouped heads."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return enp.expand_dims(t, 2)
    if tn != k * g:
        raise _TracingError(f"dot_product_attention: {name} has {tn} heads (shape "
                            f"{tuple(t.shape)}); it needs 1 or the {k * g} query heads")
    return enp.reshape(t, (tb, k, g, tt, ts))


def _attention_mask(t, s, mask, is_causal, q_seqlen, kv_seqlen, window):
    """The combined boolean mask, broadcastable to (B, K, G, T, S), or None."""
    masks = [] if mask is None else [mask]
    qi = lax.broadcasted_iota(np.int32, (t, s), 0)
    ki = lax.broadcasted_iota(np.int32, (t, s), 1)
    if is_causal:
        masks.append(qi >= ki)
    if window is not None:
        left, right = window
        masks.append((qi <= ki + left) & (qi >= ki - right))
    if q_seqlen is not None:
        masks.append(enp.reshape(enp.arange(t), (1, t, 1))
                     < enp.reshape(q_seqlen, (-1, 1, 1)))
    if kv_seqlen is not None:
        masks.append(enp.reshape(enp.arange(s), (1, 1, s))
                     < enp.reshape(kv_seqlen, (-1, 1, 1)))
    out = None
    for m in masks:
        m = enp.asarray(m)
        m = enp.reshape(m, (m.shape[0], 1, 1) + m.shape[1:]) if m.ndim == 3 else m
        m = enp.reshape(m, (1, 1, 1) + m.shape) if m.ndim == 2 else m
        out = m if out is None else enp.logical_and(out, m)
    return out


@eager
def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None,
                          return_residual=False):
    """softmax(query @ key^T * scale + bias, masked) @ value per head (JAX's "xla" path).

    ``query`` is (B, T, N, H) or (T, N, H); ``key`` and ``value`` (B, S, K, H) with N a
    multiple of K (grouped-query attention when K < N). ``bias`` and the boolean ``mask``
    (True: attend) are 4-D, broadcastable to (B, N, T, S). ``scale`` defaults to
    1 / sqrt(H); ``is_causal``, ``local_window_size`` ((left, right) or one int) and the
    int32 ``query_seq_lengths`` / ``key_value_seq_lengths`` (shape (B,)) mask more logits.
    Logits are float32 for 16-bit inputs. ``return_residual`` also returns the logsumexp of
    the logits, shape (B, T, N).

    Example:
        >>> q = np.ones((1, 3, 2, 4), np.float32)
        >>> ember.nn.dot_product_attention(q, q, q, is_causal=True).shape
        (1, 3, 2, 4)
    """
    if implementation not in (None, "xla"):
        raise _ArgumentError(f"dot_product_attention: implementation {implementation!r} is "
                             "not available in ember; pass None or 'xla'")
    query = enp.asarray(query)
    out_shape = tuple(query.shape)

    def to4(t):
        t = enp.asarray(t)
        return enp.reshape(t, (1,) * (4 - t.ndim) + tuple(t.shape)) if t.ndim < 4 else t
    q, k, v = to4(query), to4(key), to4(value)
    bias = None if bias is None else to4(bias)
    mask = None if mask is None else to4(mask)
    q_len = None if query_seq_lengths is None else enp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else enp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    _attention_check("key", k, 4)
    b, s, kh, h = k.shape
    _attention_check("value", v, 4, k.dtype, (b, s, kh, h))
    _attention_check("query", q, 4, k.dtype, (b, -1, -1, h))
    _attention_check("mask", mask, 4, np.bool_)
    _attention_check("bias", bias, 4)
    _attention_check("query_seq_lengths", q_len, 1, np.int32, (b,))
    _attention_check("key_value_seq_lengths", kv_len, 1, np.int32, (b,))
    t, n = q.shape[1], q.shape[2]
    if n % kh:
        raise _TracingError(f"dot_product_attention: the number of query heads ({n}) must be "
                            f"a multiple of the number of key/value heads ({kh})")
    g = n // kh
    scale = 1.0 / float(np.sqrt(h)) if scale is None else scale
    logits_dtype = enp.promote_types(q.dtype, np.float32)
    qg = enp.reshape(q, (b, t, kh, g, h)).astype(logits_dtype)
    logits = enp.einsum("btkgh,bskh->bkgts", qg, k.astype(logits_dtype))
    logits = logits * enp.asarray(scale, dtype=logits_dtype)
    if bias is not None:
        logits = (logits + _attention_grouped("bias", bias, kh, g)).astype(logits_dtype)
    combined = _attention_mask(t, s, _attention_grouped("mask", mask, kh, g), is_causal,
                               q_len, kv_len, local_window_size)
    if combined is not None:
        big = min(float(enp.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = enp.where(combined, logits, enp.asarray(-0.7 * big, dtype=logits_dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = enp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        keep = enp.reshape(enp.arange(t), (1, t, 1, 1, 1)) < enp.reshape(q_len, (b, 1, 1, 1, 1))
        encoded = encoded * keep.astype(encoded.dtype)
    encoded = enp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = logsumexp(logits, axis=-1).astype(k.dtype)              # (B, K, G, T)
    return encoded, enp.reshape(enp.transpose(lse, (0, 3, 1, 2)), out_shape[:-1])
