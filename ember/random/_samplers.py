"""JAX's basic samplers, bit for bit where JAX's arithmetic allows: uniform floats and
integers, normal and Gumbel floats, Bernoulli booleans, categorical indices, permutations and
choices. The other distributions are built on them."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from ember import dtypes, lax
from ember.errors import RandomArgumentError
from ember.frontend.eager import eager
from ember.random._factory import _float_dtype, _host_float, _param, distribution
from ember.random._prng import (
    _UINT,
    _as_output,
    _enp,
    _full,
    _is_concrete,
    _lift,
    _random_bits,
    _shape,
    _split,
    _takes_key,
)

__all__ = ["uniform", "bernoulli", "randint", "choice", "permutation", "categorical",
           "truncated_normal"]


@_takes_key
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)``, as ``jax.random.uniform`` (bit for bit)."""
    dt = _float_dtype(dtype, "uniform")
    return _uniform(key, _param(minval, dt), _param(maxval, dt), _shape(shape, "uniform"), dt)


@eager
def _uniform(key, minval, maxval, shape, dtype):
    enp = _enp()
    finfo = dtypes.finfo(dtype)
    nbits, nmant = np.dtype(dtype).itemsize * 8, int(finfo.nmant)
    rng_bits = 8 if nmant < 8 else nbits
    uint = _UINT[nbits]
    raw = _random_bits(key, rng_bits, shape, "uniform")
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint)
    one_bits = np.array(1.0, dtype).view(uint)
    float_bits = lax.bitwise_or(lax.shift_right_logical(raw, _full(rng_bits - nmant, uint,
                                                                   shape)),
                                _full(one_bits, uint, shape))
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), _full(1.0, dtype, shape))
    minval = _broadcast_param(lax.convert_element_type(_lift(minval), dtype), shape, "uniform")
    maxval = _broadcast_param(lax.convert_element_type(_lift(maxval), dtype), shape, "uniform")
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return enp.maximum(minval, scaled)


def _broadcast_param(x, shape, name):
    if x.shape == shape:
        return x
    try:
        if np.broadcast_shapes(x.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise RandomArgumentError(f"ember.random.{name}: a parameter of shape {x.shape} does not "
                                  f"broadcast to the sample shape {shape}") from None
    return _enp().broadcast_to(x, shape)


@distribution(shape=(), dtype=_float_dtype)
@eager
def _normal(key, shape, dtype):
    """Standard normal floats, as ``jax.random.normal``: ``sqrt(2) * erf_inv(u)`` of a uniform
    ``u`` in ``(-1, 1)`` (the uniform is JAX's bit for bit; ``erf_inv`` agrees to ulps)."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, np.asarray(lo, dtype), np.asarray(1.0, dtype), shape, dtype)
    return lax.mul(_full(np.sqrt(2), dtype, shape), lax.erf_inv(u))


@_takes_key
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to the open interval ``(lower, upper)``, as
    ``jax.random.truncated_normal``."""
    dt = _float_dtype(dtype, "truncated_normal")
    lower, upper = _param(lower, dt), _param(upper, dt)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    return _truncated_normal(key, lower, upper, _shape(shape, "truncated_normal"), dt)


@eager
def _truncated_normal(key, lower, upper, shape, dtype):
    enp = _enp()
    sqrt2 = np.asarray(np.sqrt(2), dtype)
    lower = lax.convert_element_type(_lift(lower), dtype)
    upper = lax.convert_element_type(_lift(upper), dtype)
    a = lax.erf(lax.div(lower, _full(sqrt2, dtype, lower.shape)))
    b = lax.erf(lax.div(upper, _full(sqrt2, dtype, upper.shape)))
    u = _uniform(key, a, b, shape, dtype)
    out = lax.mul(_full(sqrt2, dtype, shape), lax.erf_inv(u))
    lo = _broadcast_param(_next_float(lower, up=True), shape, "truncated_normal")
    hi = _broadcast_param(_next_float(upper, up=False), shape, "truncated_normal")
    return enp.minimum(enp.maximum(out, lo), hi)


def _next_float(x, up: bool):
    """nextafter(x, +inf) (up) or nextafter(x, -inf), on the bit pattern."""
    enp = _enp()
    dt = x.dtype
    idt = np.dtype(f"int{dt.itemsize * 8}")
    i = lax.bitcast_convert_type(x, idt)
    one = _full(1, idt, x.shape)
    zero = _full(0.0, dt, x.shape)
    toward_mag = lax.gt(x, zero) if not up else lax.lt(x, zero)   # magnitude shrinks
    stepped = enp.where(toward_mag, lax.sub(i, one), lax.add(i, one))
    tiny = np.array(1, idt).view(dt) * (1 if up else -1)     # the smallest subnormal
    inf = np.asarray(np.inf if up else -np.inf, dt)
    out = lax.bitcast_convert_type(stepped, dt)
    out = enp.where(lax.eq(x, zero), _full(tiny, dt, x.shape), out)
    stuck = enp.logical_or(lax.eq(x, _full(inf, dt, x.shape)), lax.ne(x, x))
    return enp.where(stuck, x, out)


@_takes_key
def bernoulli(key, p=0.5, shape=None, mode: str = "low"):
    """Booleans that are True with probability ``p``, as ``jax.random.bernoulli``."""
    if mode not in ("low", "high"):
        raise RandomArgumentError(f"ember.random.bernoulli: mode must be 'low' or 'high', got "
                                  f"{mode!r}")
    if _is_concrete(p):
        p = _host_float(p)
    if not dtypes.is_float(p.dtype):
        raise RandomArgumentError(f"ember.random.bernoulli: p must have a floating dtype, got "
                                  f"{p.dtype}")
    shape = np.shape(p) if shape is None else _shape(shape, "bernoulli")
    return _bernoulli(key, p, tuple(shape), mode)


@eager
def _bernoulli(key, p, shape, mode):
    p = _lift(p)
    dt = p.dtype
    p = _broadcast_param(p, shape, "bernoulli")
    if mode == "high":
        both = _uniform(key, np.asarray(0.0, dt), np.asarray(1.0, dt), (2,) + shape, dt)
        u1 = lax.reshape(lax.slice(both, (0,) + (0,) * len(shape), (1,) + shape), shape)
        u2 = lax.reshape(lax.slice(both, (1,) + (0,) * len(shape), (2,) + shape), shape)
        u2 = lax.mul(u2, _full(2.0 ** -int(dtypes.finfo(dt).nmant), dt, shape))
        return lax.lt(u2, lax.sub(p, u1))
    u = _uniform(key, np.asarray(0.0, dt), np.asarray(1.0, dt), shape, dt)
    return lax.lt(u, p)


@_takes_key
def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)``, as ``jax.random.randint`` (bit for bit)."""
    dt = dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype)
    dt = np.dtype(dt)
    if not dtypes.is_int(dt):
        raise RandomArgumentError(f"ember.random.randint: dtype must be an integer dtype, got {dt}")
    shape = _shape(shape, "randint")
    info = np.iinfo(dt)
    sample_dt = dt if info.bits >= 32 else np.dtype(np.int32)
    hi_bound = info.max + 1 if info.bits < 32 else info.max
    lo, oor_lo = _int_bound(minval, sample_dt, info.min, info.max)
    hi, oor = _int_bound(maxval, sample_dt, info.min, hi_bound)
    out = _randint(key, lo, hi, oor, shape, sample_dt)
    return out if sample_dt == dt else out.astype(dt)


def _int_bound(v, sample_dt, lo, hi):
    """(v clipped to [lo, hi] as sample_dt, whether v was above the sample dtype's max)."""
    smax = np.iinfo(sample_dt).max
    if _is_concrete(v):
        arr = np.asarray(v)
        if arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iub":
            raise RandomArgumentError(f"ember.random.randint: bounds must be integers, got "
                                      f"{arr.dtype}")
        big = arr.astype(object) if arr.shape else int(arr)
        oor = np.asarray(np.greater(big, smax), dtype=bool)
        clipped = np.clip(arr.astype(object) if arr.shape else np.array(int(arr), object),
                          lo, hi)
        return np.asarray(clipped, dtype=sample_dt).reshape(arr.shape), oor
    return _int_bound_traced(v, sample_dt, lo, hi)


@eager
def _int_bound_traced(v, sample_dt, lo, hi):
    enp = _enp()
    v = _lift(v)
    if dtypes.is_float(v.dtype):
        v = lax.convert_element_type(v, dtypes.default_int())
    info = np.iinfo(v.dtype)
    smax = np.iinfo(sample_dt).max
    oor = lax.gt(v, _full(min(smax, info.max), v.dtype, v.shape))
    clipped = enp.clip(v, max(lo, info.min), min(hi, info.max))
    return lax.convert_element_type(clipped, sample_dt), oor


@eager
def _randint(key, minval, maxval, oor, shape, dtype):
    enp = _enp()
    minval = _broadcast_param(_lift(minval), shape, "randint")
    maxval = _broadcast_param(_lift(maxval), shape, "randint")
    oor = _broadcast_param(_lift(oor), shape, "randint")
    nbits = dtype.itemsize * 8
    uint = _UINT[nbits]
    keys = _split(key, (2,))
    k1 = lax.reshape(lax.slice(keys, (0, 0), (1, 2)), (2,))
    k2 = lax.reshape(lax.slice(keys, (1, 0), (2, 2)), (2,))
    higher = _random_bits(k1, nbits, shape, "randint")
    lower = _random_bits(k2, nbits, shape, "randint")
    span = lax.convert_element_type(lax.sub(maxval, minval), uint)
    one = _full(1, uint, shape)
    span = lax.select(lax.le(maxval, minval), one, span)
    span = lax.select(enp.logical_and(oor, lax.gt(maxval, minval)), lax.add(span, one), span)
    multiplier = lax.rem(_full(2 ** (nbits // 2), uint, shape), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


@distribution(shape=(), dtype=_float_dtype)
@eager
def _gumbel(key, shape, dtype):
    """Standard Gumbel floats, as ``jax.random.gumbel`` (mode 'low'):
    ``-log(-log(u))`` of a uniform ``u`` in ``[tiny, 1)``."""
    tiny = dtypes.finfo(dtype).tiny
    u = _uniform(key, np.asarray(tiny, dtype), np.asarray(1.0, dtype), shape, dtype)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


@_takes_key
def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True):
    """Samples of the categorical distributions ``softmax(logits, axis)`` (Gumbel-max trick,
    or Gumbel-top-k without replacement), as ``jax.random.categorical``; int32 indices."""
    if _is_concrete(logits):
        logits = _host_float(logits)
    ndim = len(logits.shape)
    if not -ndim <= axis < ndim:
        raise RandomArgumentError(f"ember.random.categorical: axis {axis} is out of range for "
                                  f"logits of shape {tuple(logits.shape)}")
    axis %= ndim
    batch = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch if shape is None else _shape(shape, "categorical")
    if shape[len(shape) - len(batch):] != batch:
        raise RandomArgumentError(f"ember.random.categorical: shape {shape} must end with the "
                                  f"batch shape {batch} of the logits")
    if not replace:
        k = math.prod(shape[:len(shape) - len(batch)])
        if k > logits.shape[axis]:
            raise RandomArgumentError(f"ember.random.categorical: {k} samples without replacement "
                                      f"from {logits.shape[axis]} categories")
    return _categorical(key, logits, axis, shape, replace)


@eager
def _categorical(key, logits, axis, shape, replace):
    enp = _enp()
    logits = _lift(logits)
    if not dtypes.is_float(logits.dtype):
        logits = lax.convert_element_type(logits, dtypes.default_float())
    batch = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    prefix = shape[:len(shape) - len(batch)]
    if replace:
        g = _gumbel(key, prefix + tuple(logits.shape), logits.dtype)
        x = enp.add(g, enp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape)))
        return enp.argmax(x, axis=len(prefix) + axis)
    g = _gumbel(key, tuple(logits.shape), logits.dtype)
    x = enp.moveaxis(enp.add(logits, g), axis, -1) if hasattr(enp, "moveaxis") else \
        lax.transpose(enp.add(logits, g), [d for d in range(logits.ndim) if d != axis] + [axis])
    k = math.prod(prefix)
    idx = _top_k_indices(x, k)                       # batch + (k,)
    nb = len(batch)
    idx = lax.transpose(idx, (nb,) + tuple(range(nb)))
    return lax.reshape(idx, shape)


def _top_k_indices(x, k):
    """Indices of the k largest along the last axis, largest first, ties by lower index."""
    last = x.ndim - 1
    iota = lax.broadcasted_iota(np.int32, x.shape, last)
    _, idx = lax.sort((lax.neg(x), iota), dimension=last, num_keys=1)
    starts = (0,) * x.ndim
    return lax.slice(idx, starts, tuple(x.shape[:-1]) + (k,))


@_takes_key
def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of ``arange(x)`` (an int), or of ``x`` along ``axis``, as
    ``jax.random.permutation`` (sort-based shuffle; bit for bit with JAX)."""
    if _is_concrete(x) and np.ndim(x) == 0:
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise RandomArgumentError("ember.random.permutation: x must be an integer or an array")
        n = operator.index(x)
        return _permutation_range(key, n)
    if _is_concrete(x):
        x = np.asarray(x)
        x = x.astype(dtypes.canonicalize(x.dtype))
    ndim = len(x.shape)
    if not -ndim <= axis < ndim:
        raise RandomArgumentError(f"ember.random.permutation: axis {axis} is out of range for "
                                  f"shape {tuple(x.shape)}")
    return _permutation(key, x, axis % ndim, bool(independent))


@eager
def _permutation_range(key, n):
    return _shuffle(key, lax.iota(dtypes.default_int(), n), 0)


@eager
def _permutation(key, x, axis, independent):
    x = _lift(x)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, lax.iota(dtypes.default_int(), x.shape[axis]), 0)
    return _take(x, ind, axis)


def _shuffle(key, x, axis):
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        keys = _split(key, (2,))
        key = lax.reshape(lax.slice(keys, (0, 0), (1, 2)), (2,))
        subkey = lax.reshape(lax.slice(keys, (1, 0), (2, 2)), (2,))
        sort_keys = _random_bits(subkey, 32, tuple(x.shape), "permutation")
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _take(x, ind, axis):
    """x taken at the int indices ``ind`` (any shape) along ``axis``; ind in range."""
    enp = _enp()
    if hasattr(enp, "take"):
        return enp.take(x, ind, axis=axis)
    # Fallback without a gather op: select the matching row and sum (exact).
    x = _lift(x)
    n = x.shape[axis]
    xm = enp.moveaxis(x, axis, 0) if hasattr(enp, "moveaxis") else lax.transpose(
        x, (axis,) + tuple(d for d in range(x.ndim) if d != axis))
    rest = tuple(xm.shape[1:])
    ishape = tuple(ind.shape)
    eq = lax.eq(lax.broadcast_in_dim(ind, ishape + (n,) + (1,) * len(rest),
                                     tuple(range(len(ishape)))),
                lax.broadcasted_iota(ind.dtype, ishape + (n,) + (1,) * len(rest),
                                     len(ishape)))
    eq = lax.broadcast_in_dim(eq, ishape + (n,) + rest, tuple(range(len(ishape) + 1 +
                                                                    len(rest))))
    is_bool = dtypes.is_bool(xm.dtype)
    vals = lax.convert_element_type(xm, np.uint8) if is_bool else xm
    vals = lax.broadcast_in_dim(vals, ishape + (n,) + rest,
                                tuple(range(len(ishape), len(ishape) + 1 + len(rest))))
    picked = lax.select(eq, vals, _full(0, vals.dtype, vals.shape))
    out = lax.reduce_sum(picked, (len(ishape),))       # ishape + rest
    if is_bool:
        out = lax.convert_element_type(out, np.bool_)
    # move the index dimensions to where axis was
    nd_i = len(ishape)
    perm = tuple(range(nd_i, nd_i + axis)) + tuple(range(nd_i)) + \
        tuple(range(nd_i + axis, nd_i + len(rest)))
    return lax.transpose(out, perm)


@_takes_key
def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0):
    """A random sample from ``a`` (an array, or ``arange(a)`` for an int), as
    ``jax.random.choice``: uniform or with probabilities ``p``, with or without
    replacement."""
    if not isinstance(shape, Sequence):
        raise RandomArgumentError(f"ember.random.choice: shape must be a sequence, got {shape!r}")
    shape = _shape(shape, "choice")
    scalar_a = np.ndim(a) == 0
    if scalar_a:      # arange(a): a 0-d Array is read on the host, a traced one refused
        n = operator.index(a)
        arr = None
    else:
        if _is_concrete(a):
            a = np.asarray(a)
            a = a.astype(dtypes.canonicalize(a.dtype))
        if not -len(a.shape) <= axis < len(a.shape):
            raise RandomArgumentError(f"ember.random.choice: axis {axis} is out of range for shape "
                                      f"{tuple(a.shape)}")
        axis %= len(a.shape)
        n, arr = a.shape[axis], a
    n_draws = math.prod(shape)
    if n_draws == 0:
        out_shape = shape if scalar_a else \
            tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
        dt = dtypes.default_int() if scalar_a else arr.dtype
        return _as_output(np.zeros(out_shape, dt))
    if n <= 0:
        raise RandomArgumentError("ember.random.choice: a must be greater than 0 unless no "
                                  "samples are taken")
    if not replace and n_draws > n:
        raise RandomArgumentError(f"ember.random.choice: cannot take a larger sample (size "
                                  f"{n_draws}) than population (size {n}) when 'replace=False'")
    if p is not None:
        if _is_concrete(p):
            p = _host_float(p)
        if tuple(p.shape) != (n,):
            raise RandomArgumentError(f"ember.random.choice: p must be None or a 1D vector of size "
                                      f"{n} (a.shape[axis]), got shape {tuple(p.shape)}")
    return _choice(key, n if scalar_a else arr, shape, bool(replace), p, axis)


@eager
def _choice(key, a, shape, replace, p, axis):
    enp = _enp()
    scalar_a = isinstance(a, int)
    n = a if scalar_a else a.shape[axis]
    n_draws = math.prod(shape)
    if p is None:
        if replace:
            lo = np.zeros((), dtypes.default_int())
            hi = np.asarray(n, dtypes.default_int())
            ind = _randint(key, lo, hi, np.zeros((), bool), shape, np.dtype(dtypes.default_int()))
            return ind if scalar_a else _take(a, ind, axis)
        if scalar_a:
            perm = _shuffle(key, lax.iota(dtypes.default_int(), n), 0)
            return lax.reshape(lax.slice(perm, (0,), (n_draws,)), shape)
        a = _lift(a)
        perm = _permutation(key, a, axis, False)
        limit = list(perm.shape)
        limit[axis] = n_draws
        taken = lax.slice(perm, (0,) * perm.ndim, tuple(limit))
        return lax.reshape(taken, tuple(a.shape[:axis]) + shape + tuple(a.shape[axis + 1:]))
    p = _lift(p)
    if not dtypes.is_float(p.dtype):
        p = lax.convert_element_type(p, dtypes.default_float())
    if replace:
        p_cuml = lax.cumsum(p, 0)
        total = lax.reshape(lax.slice(p_cuml, (n - 1,), (n,)), ())
        u = _uniform(key, np.asarray(0.0, p.dtype), np.asarray(1.0, p.dtype), shape, p.dtype)
        r = enp.multiply(total, enp.subtract(np.asarray(1.0, p.dtype), u))
        # searchsorted(p_cuml, r, side='left'): how many cumulative sums are below r
        below = lax.lt(lax.broadcast_in_dim(p_cuml, shape + (n,), (len(shape),)),
                       lax.broadcast_in_dim(r, shape + (n,), tuple(range(len(shape)))))
        ind = lax.reduce_sum(lax.convert_element_type(below, dtypes.default_int()),
                             (len(shape),))
    else:
        g = enp.add(_gumbel(key, (n,), p.dtype), enp.log(p))
        ind = lax.reshape(_top_k_indices(g, n_draws), shape)
    if scalar_a:
        return ind
    return _take(a, ind, axis)


# --- for the distributions built on these ---------------------------------------------------

def _cvt(x, dtype, shape=None):
    x = lax.convert_element_type(_lift(x), dtype)
    return x if shape is None else _enp().broadcast_to(x, shape)


def _unit(key, shape, dtype, minval=0.0):
    """JAX's ``uniform(key, shape, dtype, minval, 1.)``."""
    return _uniform(key, np.asarray(minval, dtype), np.asarray(1.0, dtype), shape, dtype)
