"""ember.random: JAX's functional threefry-2x32 PRNG, in ember ops.

Keys are raw ``uint32[2]`` arrays, as ``jax.random.PRNGKey`` makes them. Every function is
written in ember ops (threefry's 32-bit adds, xors and rotations are ``ember.add``,
``ember.xor`` and shifts), so it runs eagerly and under ``jit`` on any backend, and gives the
same numbers everywhere. The counter layout is JAX's default one
(``jax_threefry_partitionable=True``): element ``i`` (in row-major order) of a sample of
random bits is ``threefry2x32(key, (i >> 32, i & 0xFFFFFFFF))`` with its two output words
xor-ed; ``split`` keeps both words as the new key. So ``key``, ``split``, ``fold_in``,
``bits``, ``uniform``, ``randint``, ``bernoulli``, ``permutation`` and integer ``choice``
without ``p`` give JAX's values bit for bit; ``normal``, ``truncated_normal``, ``gumbel``
and ``categorical`` go through ``erf_inv``/``log`` and agree with JAX to a few ulps.

Example:
    >>> k = ember.random.PRNGKey(0)
    >>> k1, k2 = ember.random.split(k)
    >>> ember.random.uniform(k1, (3,))
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, current_trace

__all__ = ["key", "PRNGKey", "key_data", "split", "fold_in", "bits", "uniform", "normal",
           "bernoulli", "randint", "choice", "permutation", "categorical", "gumbel",
           "truncated_normal", "threefry_2x32"]

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


# --- small helpers (all inside a trace) ------------------------------------------------------

def _enp():
    from ember import numpy as enp
    return enp


def _lift(x) -> Tracer:
    return current_trace().lift(x)


def _full(value, dtype, shape) -> Tracer:
    c = _lift(np.asarray(value, dtype=dtype))
    return lax.broadcast_in_dim(c, tuple(shape), ()) if shape else c


def _is_concrete(x) -> bool:
    """A host value (Python number or NumPy data): not a tracer or an ember Array."""
    from ember.backends.array import Array
    return not isinstance(x, Tracer | Array)


def _shape(shape, name) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"ember.random.{name}: shape must be a tuple of ints, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"ember.random.{name}: shape {shape} has a negative dimension")
    return shape


def _float_dtype(dtype, name) -> np.dtype:
    dt = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"ember.random.{name}: dtype must be a floating-point dtype, got {dt}")
    return np.dtype(dt)


def _key_parts(key, name) -> tuple[Tracer, Tracer]:
    k = _lift(key)
    if k.shape != (2,) or k.dtype != _U32:
        raise TypeError(f"ember.random.{name}: expected a key, a uint32[2] array (from "
                        f"ember.random.key/PRNGKey/split/fold_in), got {k.aval.str_short()}")
    k1 = lax.reshape(lax.slice(k, (0,), (1,)), ())
    k2 = lax.reshape(lax.slice(k, (1,), (2,)), ())
    return k1, k2


def _check_key_host(key, name):
    shape, dtype = np.shape(key), getattr(key, "dtype", None)
    if shape != (2,) or dtype != _U32:
        raise TypeError(f"ember.random.{name}: expected a key, a uint32[2] array (from "
                        f"ember.random.key/PRNGKey/split/fold_in), got shape {shape} "
                        f"dtype {dtype}")


def _as_output(value: np.ndarray):
    """A host result as a tracer when tracing, else an ember Array."""
    if current_trace() is not None:
        return _lift(value)
    from ember.backends.array import device_put
    return device_put(value)


# --- threefry-2x32 ---------------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotl(x, d):
    shape = x.shape
    return lax.bitwise_or(lax.shift_left(x, _full(d, _U32, shape)),
                          lax.shift_right_logical(x, _full(32 - d, _U32, shape)))


def _threefry(k1, k2, x1, x2):
    """Threefry-2x32 (20 rounds) of the counter pairs (x1, x2) under the key (k1, k2)."""
    shape = x1.shape
    k1 = lax.broadcast_in_dim(k1, shape, ()) if shape else k1
    k2 = lax.broadcast_in_dim(k2, shape, ()) if shape else k2
    k3 = lax.bitwise_xor(lax.bitwise_xor(k1, k2), _full(0x1BD11BDA, _U32, shape))
    ks = (k1, k2, k3)
    x = [lax.add(x1, ks[0]), lax.add(x2, ks[1])]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = lax.add(x[0], x[1])
            x = [x0, lax.bitwise_xor(x0, _rotl(x[1], r))]
        x = [lax.add(x[0], ks[(i + 1) % 3]),
             lax.add(lax.add(x[1], ks[(i + 2) % 3]), _full(i + 1, _U32, shape))]
    return x[0], x[1]


def _counters(shape):
    """(i >> 32, i & 0xFFFFFFFF) for the row-major index i of each element of ``shape``."""
    n = math.prod(shape)
    if n >= 2 ** 32:
        raise NotImplementedError("ember.random: more than 2**32 numbers in one call")
    lo = lax.reshape(lax.iota(_U32, n), shape)
    return _full(0, _U32, shape), lo


def _random_bits(key, bit_width, shape, name="bits"):
    """JAX's partitionable threefry random bits: uint<bit_width>[shape]."""
    k1, k2 = _key_parts(key, name)
    hi, lo = _counters(shape)
    b1, b2 = _threefry(k1, k2, hi, lo)
    dt = _UINT[bit_width]
    if bit_width == 64:
        hi64, lo64 = lax.convert_element_type(b1, dt), lax.convert_element_type(b2, dt)
        return lax.bitwise_or(lax.shift_left(hi64, _full(32, dt, shape)), lo64)
    out = lax.bitwise_xor(b1, b2)
    return out if bit_width == 32 else lax.convert_element_type(out, dt)


@eager
def threefry_2x32(keypair, count):
    """The threefry-2x32 hash of a uint32 ``count`` array under a uint32[2] key, as JAX's
    ``jax.random.threefry_2x32`` (the flat count is split in two halves as the word pairs)."""
    k1, k2 = _key_parts(keypair, "threefry_2x32")
    count = _lift(count)
    if count.dtype != _U32:
        raise TypeError(f"ember.random.threefry_2x32: count must be uint32, got "
                        f"{count.aval.str_short()}")
    n = count.size
    flat = lax.reshape(count, (n,))
    if n % 2:
        flat = lax.concatenate([flat, _full(0, _U32, (1,))], 0)
    half = (n + 1) // 2
    x1, x2 = lax.slice(flat, (0,), (half,)), lax.slice(flat, (half,), (2 * half,))
    b1, b2 = _threefry(k1, k2, x1, x2)
    out = lax.concatenate([b1, b2], 0)
    return lax.reshape(lax.slice(out, (0,), (n,)), count.shape)


# --- keys ------------------------------------------------------------------------------------

def key(seed):
    """A PRNG key from an integer seed: ``uint32[2]``, as ``jax.random.PRNGKey(seed)``.

    A 32-bit seed gives ``[0, seed mod 2**32]``; a 64-bit one (with x64) its two halves. Python
    ints are taken as the default integer dtype, wrapping, as JAX does.
    """
    if isinstance(seed, Tracer) or not _is_concrete(seed):
        return _key_traced(seed)
    arr = np.asarray(seed)
    if arr.shape:
        raise TypeError(f"ember.random.key: the seed must be a scalar, got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError(f"ember.random.key: the seed must be an integer, got {arr.dtype}")
    if isinstance(seed, bool | int):
        value, bits_64 = int(seed), dtypes.default_int().itemsize == 8
    else:
        value, bits_64 = int(arr), dtypes.canonicalize(arr.dtype).itemsize == 8
    if bits_64:
        value %= 2 ** 64
        hi, lo = value >> 32, value & 0xFFFFFFFF
    else:
        hi, lo = 0, value & 0xFFFFFFFF
    return _as_output(np.array([hi, lo], dtype=_U32))


PRNGKey = key


@eager
def _key_traced(seed):
    seed = _lift(seed)
    if seed.shape or not (dtypes.is_int(seed.dtype) or dtypes.is_bool(seed.dtype)):
        raise TypeError(f"ember.random.key: the seed must be an integer scalar, got "
                        f"{seed.aval.str_short()}")
    lo = lax.convert_element_type(seed, _U32)
    if seed.dtype.itemsize == 8:
        shifted = lax.shift_right_logical(seed, _full(32, seed.dtype, ()))
        hi = lax.convert_element_type(shifted, _U32)
    else:
        hi = _full(0, _U32, ())
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def key_data(keys):
    """The raw uint32 data of keys: the keys themselves (ember's keys are raw)."""
    return keys


def split(key, num: int | Sequence[int] = 2):
    """``num`` new keys (shape ``(*num, 2)``) from ``key``, as ``jax.random.split``."""
    shape = _shape(num, "split")
    return _split(key, shape)


@eager
def _split(key, shape):
    k1, k2 = _key_parts(key, "split")
    hi, lo = _counters(shape)
    b1, b2 = _threefry(k1, k2, hi, lo)
    return lax.concatenate([lax.reshape(b1, shape + (1,)), lax.reshape(b2, shape + (1,))],
                           len(shape))


def fold_in(key, data):
    """A new key from ``key`` and the 32-bit integer ``data``, as ``jax.random.fold_in``."""
    if _is_concrete(data):
        if np.ndim(data):
            raise TypeError(f"ember.random.fold_in: data must be a scalar, got shape "
                            f"{np.shape(data)}")
        data = np.asarray(int(data) & 0xFFFFFFFF, dtype=_U32)
    return _fold_in(key, data)


@eager
def _fold_in(key, data):
    k1, k2 = _key_parts(key, "fold_in")
    data = _lift(data)
    if data.shape or not (dtypes.is_int(data.dtype) or dtypes.is_bool(data.dtype)):
        raise TypeError(f"ember.random.fold_in: data must be an integer scalar, got "
                        f"{data.aval.str_short()}")
    data = lax.convert_element_type(data, _U32)
    b1, b2 = _threefry(k1, k2, _full(0, _U32, (1,)), lax.reshape(data, (1,)))
    return lax.concatenate([b1, b2], 0)


# --- samplers --------------------------------------------------------------------------------

def bits(key, shape=(), dtype=None):
    """Uniform random bits: an unsigned integer array (uint32 by default), as
    ``jax.random.bits``."""
    dt = np.dtype(dtype) if dtype is not None else _U32
    if not dtypes.is_unsigned(dt):
        raise TypeError(f"ember.random.bits: dtype must be an unsigned integer dtype, got {dt}")
    dt = dtypes.canonicalize(dt)
    return _bits(key, _shape(shape, "bits"), dt.itemsize * 8)


@eager
def _bits(key, shape, bit_width):
    return _random_bits(key, bit_width, shape)


def _host_float(x):
    """Host data as an array of a float dtype: Python scalars and ints take the default float
    dtype (without the 64-bit narrowing warning NumPy float64 data gets)."""
    arr = np.asarray(x)
    if isinstance(x, bool | int | float) or not dtypes.is_float(arr.dtype):
        return arr.astype(dtypes.default_float())
    return arr.astype(dtypes.canonicalize(arr.dtype))


def _param(value, dtype):
    """A distribution parameter: host values become NumPy data of ``dtype``."""
    if _is_concrete(value):
        return np.asarray(value, dtype=dtype)
    return value


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
        raise ValueError(f"ember.random.{name}: a parameter of shape {x.shape} does not "
                         f"broadcast to the sample shape {shape}") from None
    return _enp().broadcast_to(x, shape)


def normal(key, shape=(), dtype=None):
    """Standard normal floats, as ``jax.random.normal``: ``sqrt(2) * erf_inv(u)`` of a uniform
    ``u`` in ``(-1, 1)`` (the uniform is JAX's bit for bit; ``erf_inv`` agrees to ulps)."""
    dt = _float_dtype(dtype, "normal")
    return _normal(key, _shape(shape, "normal"), dt)


@eager
def _normal(key, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, np.asarray(lo, dtype), np.asarray(1.0, dtype), shape, dtype)
    return lax.mul(_full(np.sqrt(2), dtype, shape), lax.erf_inv(u))


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


def bernoulli(key, p=0.5, shape=None, mode: str = "low"):
    """Booleans that are True with probability ``p``, as ``jax.random.bernoulli``."""
    if mode not in ("low", "high"):
        raise ValueError(f"ember.random.bernoulli: mode must be 'low' or 'high', got {mode!r}")
    if _is_concrete(p):
        p = _host_float(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"ember.random.bernoulli: p must have a floating dtype, got {p.dtype}")
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


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)``, as ``jax.random.randint`` (bit for bit)."""
    dt = dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype)
    dt = np.dtype(dt)
    if not dtypes.is_int(dt):
        raise TypeError(f"ember.random.randint: dtype must be an integer dtype, got {dt}")
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
            raise TypeError(f"ember.random.randint: bounds must be integers, got {arr.dtype}")
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


def gumbel(key, shape=(), dtype=None):
    """Standard Gumbel floats, as ``jax.random.gumbel`` (mode 'low'):
    ``-log(-log(u))`` of a uniform ``u`` in ``[tiny, 1)``."""
    dt = _float_dtype(dtype, "gumbel")
    return _gumbel(key, _shape(shape, "gumbel"), dt)


@eager
def _gumbel(key, shape, dtype):
    tiny = dtypes.finfo(dtype).tiny
    u = _uniform(key, np.asarray(tiny, dtype), np.asarray(1.0, dtype), shape, dtype)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True):
    """Samples of the categorical distributions ``softmax(logits, axis)`` (Gumbel-max trick,
    or Gumbel-top-k without replacement), as ``jax.random.categorical``; int32 indices."""
    if _is_concrete(logits):
        logits = _host_float(logits)
    ndim = len(logits.shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"ember.random.categorical: axis {axis} is out of range for logits "
                         f"of shape {tuple(logits.shape)}")
    axis %= ndim
    batch = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch if shape is None else _shape(shape, "categorical")
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"ember.random.categorical: shape {shape} must end with the batch "
                         f"shape {batch} of the logits")
    if not replace:
        k = math.prod(shape[:len(shape) - len(batch)])
        if k > logits.shape[axis]:
            raise ValueError(f"ember.random.categorical: {k} samples without replacement "
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


def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of ``arange(x)`` (an int), or of ``x`` along ``axis``, as
    ``jax.random.permutation`` (sort-based shuffle; bit for bit with JAX)."""
    if _is_concrete(x) and np.ndim(x) == 0:
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise TypeError("ember.random.permutation: x must be an integer or an array")
        n = operator.index(x)
        return _permutation_range(key, n)
    if _is_concrete(x):
        x = np.asarray(x)
        x = x.astype(dtypes.canonicalize(x.dtype))
    ndim = len(x.shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"ember.random.permutation: axis {axis} is out of range for shape "
                         f"{tuple(x.shape)}")
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


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0):
    """A random sample from ``a`` (an array, or ``arange(a)`` for an int), as
    ``jax.random.choice``: uniform or with probabilities ``p``, with or without
    replacement."""
    if not isinstance(shape, Sequence):
        raise TypeError(f"ember.random.choice: shape must be a sequence, got {shape!r}")
    shape = _shape(shape, "choice")
    scalar_a = _is_concrete(a) and np.ndim(a) == 0
    if scalar_a:
        n = operator.index(a)
        arr = None
    else:
        if _is_concrete(a):
            a = np.asarray(a)
            a = a.astype(dtypes.canonicalize(a.dtype))
        if not -len(a.shape) <= axis < len(a.shape):
            raise ValueError(f"ember.random.choice: axis {axis} is out of range for shape "
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
        raise ValueError("ember.random.choice: a must be greater than 0 unless no samples are "
                         "taken")
    if not replace and n_draws > n:
        raise ValueError(f"ember.random.choice: cannot take a larger sample (size {n_draws}) "
                         f"than population (size {n}) when 'replace=False'")
    if p is not None:
        if _is_concrete(p):
            p = _host_float(p)
        if tuple(p.shape) != (n,):
            raise ValueError(f"ember.random.choice: p must be None or a 1D vector of size "
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
