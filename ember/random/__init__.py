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

import functools
import math
import operator
from collections.abc import Sequence

import numpy as np

from ember import dtypes, lax
from ember.errors import RandomArgumentError
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
        raise RandomArgumentError(f"ember.random.{name}: shape must be a tuple of ints, got "
                                  f"{shape!r}") from None
    if any(d < 0 for d in shape):
        raise RandomArgumentError(f"ember.random.{name}: shape {shape} has a negative dimension")
    return shape


def _float_dtype(dtype, name) -> np.dtype:
    dt = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_float(dt):
        raise RandomArgumentError(f"ember.random.{name}: dtype must be a floating-point dtype, "
                                  f"got {dt}")
    return np.dtype(dt)


def _key_parts(key, name) -> tuple[Tracer, Tracer]:
    k = _lift(key)
    if k.shape != (2,) or k.dtype != _U32:
        raise _not_a_key(name, k.aval.str_short())
    k1 = lax.reshape(lax.slice(k, (0,), (1,)), ())
    k2 = lax.reshape(lax.slice(k, (1,), (2,)), ())
    return k1, k2


def _takes_key(fun):
    """Checks the key before anything else, so that a bad key is reported under the name of
    the function called (``normal``), not the sampler it is built on (``uniform``)."""
    @functools.wraps(fun)
    def checked(key, *args, **kwargs):
        shape, dtype = np.shape(key), getattr(key, "dtype", None)
        if shape != (2,) or dtype != _U32:
            raise _not_a_key(fun.__name__, f"shape {shape} dtype {dtype}")
        return fun(key, *args, **kwargs)
    return checked


def _not_a_key(name, got) -> RandomArgumentError:
    return RandomArgumentError(f"ember.random.{name}: expected a key, a uint32[2] array (from "
                               f"ember.random.key/PRNGKey/split/fold_in), got {got}")


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
        raise RandomArgumentError(f"ember.random.threefry_2x32: count must be uint32, got "
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
        raise RandomArgumentError(f"ember.random.key: the seed must be a scalar, got shape "
                                  f"{arr.shape}")
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise RandomArgumentError(f"ember.random.key: the seed must be an integer, got {arr.dtype}")
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
        raise RandomArgumentError(f"ember.random.key: the seed must be an integer scalar, got "
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


@_takes_key
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


@_takes_key
def fold_in(key, data):
    """A new key from ``key`` and the 32-bit integer ``data``, as ``jax.random.fold_in``."""
    if _is_concrete(data):
        if np.ndim(data):
            raise RandomArgumentError(f"ember.random.fold_in: data must be a scalar, got shape "
                                      f"{np.shape(data)}")
        data = np.asarray(int(data) & 0xFFFFFFFF, dtype=_U32)
    return _fold_in(key, data)


@eager
def _fold_in(key, data):
    k1, k2 = _key_parts(key, "fold_in")
    data = _lift(data)
    if data.shape or not (dtypes.is_int(data.dtype) or dtypes.is_bool(data.dtype)):
        raise RandomArgumentError(f"ember.random.fold_in: data must be an integer scalar, got "
                                  f"{data.aval.str_short()}")
    data = lax.convert_element_type(data, _U32)
    b1, b2 = _threefry(k1, k2, _full(0, _U32, (1,)), lax.reshape(data, (1,)))
    return lax.concatenate([b1, b2], 0)


# --- samplers --------------------------------------------------------------------------------

@_takes_key
def bits(key, shape=(), dtype=None):
    """Uniform random bits: an unsigned integer array (uint32 by default), as
    ``jax.random.bits``."""
    dt = np.dtype(dtype) if dtype is not None else _U32
    if not dtypes.is_unsigned(dt):
        raise RandomArgumentError(f"ember.random.bits: dtype must be an unsigned integer dtype, "
                                  f"got {dt}")
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


@_takes_key
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


@_takes_key
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


# --- more distributions, as jax.random's (session 17) ----------------------------------------
#
# Each sampler replays JAX's algorithm on the same bits: the same key splits, the same uniform
# or normal draws and the same arithmetic in the same order, so for a given key the values
# agree with ``jax.random`` to a few ulps (the rejection loops of gamma, poisson and binomial
# included: gamma is JAX's per-element Marsaglia-Tsang loop under ``ember.vmap``).

__all__ += ["exponential", "laplace", "logistic", "cauchy", "lognormal", "pareto", "rayleigh",
            "maxwell", "double_sided_maxwell", "weibull_min", "wald", "triangular",
            "rademacher", "generalized_normal", "chisquare", "f", "t", "gamma", "loggamma",
            "beta", "dirichlet", "poisson", "binomial", "geometric", "multinomial",
            "multivariate_normal", "orthogonal", "ball", "clone", "wrap_key_data"]


def _arg_error(name, what):
    from ember.errors import ArgumentError
    return ArgumentError(f"ember.random.{name}: {what}")


def _sample_dtype(dtype, name, integer=False) -> np.dtype:
    """The checked result dtype: a float (default float32) or, with ``integer``, an int."""
    if integer:
        dt = np.dtype(dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype))
        if not dtypes.is_int(dt):
            raise _arg_error(name, f"dtype must be an integer dtype, got {dt}")
        return dt
    try:
        return _float_dtype(dtype, name)
    except ValueError as e:
        raise _arg_error(name, f"{str(e).split(': ', 1)[1]}; pass a float dtype such as "
                               "float32") from None


def _sample_shape(name, shape, *params) -> tuple[int, ...]:
    """JAX's ``_check_broadcast_shapes``: ``shape`` (checked against the parameters' shapes) or,
    for None, the parameters' broadcast shape."""
    pshapes = [tuple(np.shape(p)) for p in params]
    try:
        if shape is None:
            return tuple(np.broadcast_shapes(*pshapes)) if pshapes else ()
        shape = _shape(shape, name)
        if tuple(np.broadcast_shapes(shape, *pshapes)) == shape:
            return shape
    except ValueError:
        pass
    raise _arg_error(name, f"parameter shapes {pshapes} must broadcast to the sample shape "
                           f"{shape}; pass a shape they broadcast to, or shape=None")


def _safe_params(name, dtype, *params):
    """JAX's ``_check_all_safe_to_cast``: a non-weak float parameter must not narrow to
    ``dtype``. Host values become NumPy data of ``dtype``; tracers are returned as they are."""
    for p in params:
        dt, weak = dtypes.dtype_and_weak(p)
        if not weak and dtypes.is_float(dt) and dtypes.promote_types(dt, dtype) != dtype:
            raise _arg_error(name, f"cannot safely cast a parameter of dtype {dt} to {dtype}; "
                                   f"pass dtype={dt} or cast the parameter")
    return [_param(p, dtype) for p in params]


def _cvt(x, dtype, shape=None):
    x = lax.convert_element_type(_lift(x), dtype)
    return x if shape is None else _enp().broadcast_to(x, shape)


def _key_at(keys, i):
    return lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,))


def _split_n(key, n):
    """JAX's ``_split(key, n)`` as a list of ``n`` keys."""
    keys = _split(key, (n,))
    return [_key_at(keys, i) for i in range(n)]


def _unit(key, shape, dtype, minval=0.0):
    """JAX's ``uniform(key, shape, dtype, minval, 1.)``."""
    return _uniform(key, np.asarray(minval, dtype), np.asarray(1.0, dtype), shape, dtype)


@_takes_key
def exponential(key, shape=(), dtype=None):
    """Standard exponential floats, ``-log1p(-u)``, as ``jax.random.exponential``.

    Example:
        >>> ember.random.exponential(ember.random.PRNGKey(0), (3,))
    """
    return _exponential(key, _shape(shape, "exponential"), _sample_dtype(dtype, "exponential"))


@eager
def _exponential(key, shape, dtype):
    return lax.neg(lax.log1p(lax.neg(_unit(key, shape, dtype))))


@_takes_key
def laplace(key, shape=(), dtype=None):
    """Standard Laplace floats, as ``jax.random.laplace``.

    Example:
        >>> ember.random.laplace(ember.random.PRNGKey(0), (3,))
    """
    return _laplace(key, _shape(shape, "laplace"), _sample_dtype(dtype, "laplace"))


@eager
def _laplace(key, shape, dtype):
    u = _unit(key, shape, dtype, -1.0 + dtypes.finfo(dtype).epsneg)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_takes_key
def logistic(key, shape=(), dtype=None):
    """Standard logistic floats, ``log(u) - log1p(-u)``, as ``jax.random.logistic``.

    Example:
        >>> ember.random.logistic(ember.random.PRNGKey(0), (3,))
    """
    return _logistic(key, _shape(shape, "logistic"), _sample_dtype(dtype, "logistic"))


@eager
def _logistic(key, shape, dtype):
    u = _unit(key, shape, dtype, dtypes.finfo(dtype).tiny)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


@_takes_key
def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy floats, ``tan(pi (u - 1/2))``, as ``jax.random.cauchy``.

    Example:
        >>> ember.random.cauchy(ember.random.PRNGKey(0), (3,))
    """
    return _cauchy(key, _shape(shape, "cauchy"), _sample_dtype(dtype, "cauchy"))


@eager
def _cauchy(key, shape, dtype):
    u = _unit(key, shape, dtype, dtypes.finfo(dtype).eps)
    return lax.tan(lax.mul(_full(np.pi, dtype, shape), lax.sub(u, _full(0.5, dtype, shape))))


@_takes_key
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """Log-normal floats ``exp(sigma * normal)``, as ``jax.random.lognormal``.

    Example:
        >>> ember.random.lognormal(ember.random.PRNGKey(0), 0.5, (3,))
    """
    dt = _sample_dtype(dtype, "lognormal")
    shape = _sample_shape("lognormal", shape, sigma)
    (sigma,) = _safe_params("lognormal", dt, sigma)
    return _lognormal(key, sigma, shape, dt)


@eager
def _lognormal(key, sigma, shape, dtype):
    return _enp().exp(_normal(key, shape, dtype) * _cvt(sigma, dtype))


@_takes_key
def pareto(key, b, shape=None, dtype=None):
    """Pareto floats ``exp(exponential / b)`` on ``[1, inf)``, as ``jax.random.pareto``.

    Example:
        >>> ember.random.pareto(ember.random.PRNGKey(0), 3.0, (3,))
    """
    dt = _sample_dtype(dtype, "pareto")
    shape = _sample_shape("pareto", shape, b)
    (b,) = _safe_params("pareto", dt, b)
    return _pareto(key, b, shape, dt)


@eager
def _pareto(key, b, shape, dtype):
    return _enp().exp(_exponential(key, shape, dtype) / _cvt(b, dtype))


@_takes_key
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats ``scale * sqrt(-2 log u)``, as ``jax.random.rayleigh``.

    Example:
        >>> ember.random.rayleigh(ember.random.PRNGKey(0), 2.0, (3,))
    """
    dt = _sample_dtype(dtype, "rayleigh")
    shape = _sample_shape("rayleigh", shape, scale)
    (scale,) = _safe_params("rayleigh", dt, scale)
    return _rayleigh(key, scale, shape, dt)


@eager
def _rayleigh(key, scale, shape, dtype):
    log_u = lax.log(_unit(key, shape, dtype))
    return lax.mul(_cvt(scale, dtype, shape), lax.sqrt(lax.mul(log_u, _full(-2, dtype, shape))))


@_takes_key
def maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell floats, the norm of 3 standard normals, as ``jax.random.maxwell``.

    Example:
        >>> ember.random.maxwell(ember.random.PRNGKey(0), (3,))
    """
    return _maxwell(key, _shape(shape, "maxwell"), _sample_dtype(dtype, "maxwell"))


@eager
def _maxwell(key, shape, dtype):
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


@_takes_key
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats ``(-log1p(-u)) ** (1 / concentration) * scale``, as
    ``jax.random.weibull_min`` (parameters broadcast with ``shape``).

    Example:
        >>> ember.random.weibull_min(ember.random.PRNGKey(0), 1.0, 2.0, (3,))
    """
    dt = _sample_dtype(dtype, "weibull_min")
    return _weibull_min(key, scale, concentration, _shape(shape, "weibull_min"), dt)


@eager
def _weibull_min(key, scale, concentration, shape, dtype):
    enp = _enp()
    e = enp.negative(enp.log1p(enp.negative(_unit(key, shape, dtype))))
    return enp.power(e, 1.0 / concentration) * scale


@_takes_key
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats, as ``jax.random.wald``.

    Example:
        >>> ember.random.wald(ember.random.PRNGKey(0), 1.0, (3,))
    """
    dt = _sample_dtype(dtype, "wald")
    shape = _sample_shape("wald", shape, mean)
    (mean,) = _safe_params("wald", dt, mean)
    return _wald(key, mean, shape, dt)


@eager
def _wald(key, mean, shape, dtype):
    k1, k2 = _split_n(key, 2)
    mean = _cvt(mean, dtype, shape)
    v = _normal(k1, shape, dtype)
    z = _unit(k2, shape, dtype)
    y = v * v
    mean_sq = mean * mean
    sqrt_term = _enp().sqrt(4 * mean * y + mean_sq * (y * y))
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


@_takes_key
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on ``[left, right]`` peaking at ``mode``, as
    ``jax.random.triangular``.

    Example:
        >>> ember.random.triangular(ember.random.PRNGKey(0), 0.0, 0.3, 1.0, (3,))
    """
    dt = _sample_dtype(dtype, "triangular")
    shape = _sample_shape("triangular", shape, left, mode, right)
    left, mode, right = _safe_params("triangular", dt, left, mode, right)
    return _triangular(key, left, mode, right, shape, dt)


@eager
def _triangular(key, left, mode, right, shape, dtype):
    left, mode, right = (_cvt(x, dtype, shape) for x in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _unit(key, shape, dtype)
    out1 = left + _enp().sqrt(u * (right - left) * (mode - left))
    out2 = right - _enp().sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(lax.lt(u, fc), out1, out2)


@_takes_key
def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability (int32 by default), as ``jax.random.rademacher``.

    Example:
        >>> ember.random.rademacher(ember.random.PRNGKey(0), (3,))
    """
    dt = dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype)
    return _rademacher(key, _shape(shape, "rademacher"), np.dtype(dt))


@eager
def _rademacher(key, shape, dtype):
    b = lax.convert_element_type(_bernoulli(key, np.float32(0.5), shape, "low"), dtype)
    return lax.sub(lax.mul(b, _full(2, dtype, shape)), _full(1, dtype, shape))


def _static_int(x, name, what):
    """A size argument: a concrete int (it sets the result's shape)."""
    if not _is_concrete(x):
        from ember.errors import ConcretizationError
        raise ConcretizationError(f"ember.random.{name}: {what} sets the result's shape, so "
                                  "it must be a concrete int, got a traced value; pass it as "
                                  "a static argument")
    try:
        return operator.index(x)
    except TypeError:
        raise _arg_error(name, f"{what} must be an int, got {x!r}") from None


@_takes_key
def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats, density ``exp(-|x|**p)``, as
    ``jax.random.generalized_normal``.

    Example:
        >>> ember.random.generalized_normal(ember.random.PRNGKey(0), 1.5, (3,))
    """
    shape = _shape(shape, "generalized_normal")
    return _generalized_normal(key, p, shape, _sample_dtype(dtype, "generalized_normal"))


@eager
def _generalized_normal(key, p, shape, dtype):
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


def _gamma_args(name, a, shape, dtype):
    dt = _sample_dtype(dtype, name)
    shape = _sample_shape(name, shape, a)
    return _param(a, dt), shape, dt


@_takes_key
def gamma(key, a, shape=None, dtype=None):
    """Standard Gamma(a) floats, as ``jax.random.gamma`` (Marsaglia-Tsang, the same
    per-element rejection loop and key splits as JAX).

    Example:
        >>> ember.random.gamma(ember.random.PRNGKey(0), np.float32([0.5, 2.0]))
    """
    return _gamma(key, *_gamma_args("gamma", a, shape, dtype), False)


@_takes_key
def loggamma(key, a, shape=None, dtype=None):
    """The logs of standard Gamma(a) floats, computed in log space (accurate for small
    ``a``), as ``jax.random.loggamma``.

    Example:
        >>> ember.random.loggamma(ember.random.PRNGKey(0), np.float32([0.01, 2.0]))
    """
    return _gamma(key, *_gamma_args("loggamma", a, shape, dtype), True)


@eager
def _gamma(key, a, shape, dtype, log_space):
    n = math.prod(shape)
    a = lax.reshape(_cvt(a, dtype, shape), (n,))
    return lax.reshape(_gamma_batch(_split(key, (n,)), a, log_space), shape)


@_takes_key
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats with ``df`` degrees of freedom (``2 exp(loggamma(df / 2))``), as
    ``jax.random.chisquare``.

    Example:
        >>> ember.random.chisquare(ember.random.PRNGKey(0), 3.0, (3,))
    """
    dt = _sample_dtype(dtype, "chisquare")
    shape = _sample_shape("chisquare", shape, df)
    (df,) = _safe_params("chisquare", dt, df)
    return _chisquare(key, df, shape, dt)


def _chi2_many(keys_dfs, shape, dtype):
    """Chi-square samples for several (key, df) pairs in one vmapped gamma loop."""
    n = math.prod(shape)
    keys = lax.concatenate([_split(k, (n,)) for k, _ in keys_dfs], 0)
    halves = [lax.reshape(_cvt(df, dtype, shape) / 2, (n,)) for _, df in keys_dfs]
    log_g = _gamma_batch(keys, lax.concatenate(halves, 0), True)
    out = lax.reshape(_enp().exp(log_g) * np.asarray(2, dtype), (len(keys_dfs),) + shape)
    return [out[i] for i in range(len(keys_dfs))]


@eager
def _chisquare(key, df, shape, dtype):
    return _chi2_many([(key, df)], shape, dtype)[0]


@_takes_key
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution floats ``(chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)``, as
    ``jax.random.f``.

    Example:
        >>> ember.random.f(ember.random.PRNGKey(0), 3.0, 5.0, (3,))
    """
    dt = _sample_dtype(dtype, "f")
    shape = _sample_shape("f", shape, dfnum, dfden)
    dfnum, dfden = _safe_params("f", dt, dfnum, dfden)
    return _f(key, dfnum, dfden, shape, dt)


@eager
def _f(key, dfnum, dfden, shape, dtype):
    k_den, k_num = _split_n(key, 2)
    chi_num, chi_den = _chi2_many([(k_num, dfnum), (k_den, dfden)], shape, dtype)
    return (chi_num / _cvt(dfnum, dtype)) / (chi_den / _cvt(dfden, dtype))


@_takes_key
def t(key, df, shape=None, dtype=None):
    """Student's t floats ``normal * sqrt(df / 2 / gamma(df / 2))``, as ``jax.random.t``.

    Example:
        >>> ember.random.t(ember.random.PRNGKey(0), 4.0, (3,))
    """
    dt = _sample_dtype(dtype, "t")
    shape = _sample_shape("t", shape, df)
    (df,) = _safe_params("t", dt, df)
    return _t(key, df, shape, dt)


@eager
def _t(key, df, shape, dtype):
    k_n, k_g = _split_n(key, 2)
    n = _normal(k_n, shape, dtype)
    half_df = _cvt(df, dtype) / np.asarray(2, dtype)
    g = _gamma(k_g, half_df, shape, dtype, False)
    return n * _enp().sqrt(half_df / g)


@_takes_key
def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats from two log-gamma samples, as ``jax.random.beta``.

    Example:
        >>> ember.random.beta(ember.random.PRNGKey(0), 2.0, 3.0, (3,))
    """
    dt = _sample_dtype(dtype, "beta")
    shape = _sample_shape("beta", shape, a, b)
    a, b = _safe_params("beta", dt, a, b)
    return _beta(key, a, b, shape, dt)


@eager
def _beta(key, a, b, shape, dtype):
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


# --- counts: poisson, binomial, geometric, multinomial ---------------------------------------

def _any(x):
    return lax.reduce_or(x, tuple(range(x.ndim))) if x.ndim else x


@_takes_key
def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers (int32 by default), as ``jax.random.poisson``: Knuth's product of
    uniforms for ``lam < 10``, Hormann's transformed rejection above, with JAX's key splits.

    Example:
        >>> ember.random.poisson(ember.random.PRNGKey(0), 3.0, (3,))
    """
    dt = _sample_dtype(dtype, "poisson", integer=True)
    shape = _sample_shape("poisson", shape, lam)
    return _poisson(key, _param(lam, np.float32), shape, dt)


@eager
def _poisson(key, lam, shape, dtype):
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


@_takes_key
def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) integers >= 1 (trials to the first success; int32 by default), as
    ``jax.random.geometric``.

    Example:
        >>> ember.random.geometric(ember.random.PRNGKey(0), 0.3, (3,))
    """
    dt = _sample_dtype(dtype, "geometric", integer=True)
    shape = _sample_shape("geometric", shape, p)
    return _geometric(key, _host_float(p) if _is_concrete(p) else p, shape, dt)


@eager
def _geometric(key, p, shape, dtype):
    enp = _enp()
    (p,) = enp._promote_inexact(_lift(p))
    u = _unit(key, shape, p.dtype)
    u = enp.where(u == 0, np.asarray(1, p.dtype), u)
    log_q = enp.broadcast_to(enp.log1p(-p), shape)
    return lax.convert_element_type(enp.floor(enp.log(u) / log_q) + 1, dtype)


@_takes_key
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats, as ``jax.random.binomial``: geometric inversion for
    ``n * min(p, 1 - p) <= 10``, the BTRS rejection sampler above, with JAX's key splits.

    Example:
        >>> ember.random.binomial(ember.random.PRNGKey(0), 20.0, 0.3, (3,))
    """
    dt = _sample_dtype(dtype, "binomial")
    shape = _sample_shape("binomial", shape, n, p)
    if _is_concrete(n):
        n = np.asarray(n)
    return _binomial(key, n, _host_float(p) if _is_concrete(p) else p, shape, dt)


@eager
def _binomial(key, count, prob, shape, dtype):
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


# --- keys ------------------------------------------------------------------------------------

@_takes_key
@eager
def clone(key):
    """A copy of ``key`` for reuse (the identity, as ``jax.random.clone`` outside key-reuse
    checking).

    Example:
        >>> ember.random.clone(ember.random.PRNGKey(0))
    """
    return _lift(key)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Keys from their raw ``uint32[..., 2]`` data, as ``jax.random.wrap_key_data`` (ember's
    keys are raw threefry-2x32 data, so this checks and returns them).

    Example:
        >>> ember.random.wrap_key_data(np.array([0, 42], np.uint32))
    """
    if impl is not None and dtype is not None:
        raise _arg_error("wrap_key_data", "pass impl or dtype, not both")
    spec = impl if impl is not None else dtype
    if spec not in (None, "threefry2x32", "threefry"):
        raise _arg_error("wrap_key_data", f"ember's keys are threefry2x32 keys, got impl "
                                          f"{spec!r}")
    return _wrap_key_data(key_bits_array)


@eager
def _wrap_key_data(key_bits_array):
    k = _lift(key_bits_array)
    if k.dtype != _U32 or not k.shape or k.shape[-1] != 2:
        raise _arg_error("wrap_key_data", f"expected uint32 key data of shape (..., 2), got "
                                          f"{k.aval.str_short()}")
    return k
