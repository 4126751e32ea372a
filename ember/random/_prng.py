"""Keys and the threefry-2x32 bits they give, as ``jax.random``'s: the key functions, the
raw bits, and the argument helpers every sampler shares."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence

import numpy as np

from ember import dtypes, lax
from ember.errors import ArgumentError, RandomArgumentError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, current_trace

__all__ = ["key", "PRNGKey", "key_data", "split", "fold_in", "bits", "threefry_2x32", "clone",
           "wrap_key_data"]

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


def _arg_error(name, what):
    return ArgumentError(f"ember.random.{name}: {what}")


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


def _key_at(keys, i):
    return lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,))


def _split_n(key, n):
    """JAX's ``_split(key, n)`` as a list of ``n`` keys."""
    keys = _split(key, (n,))
    return [_key_at(keys, i) for i in range(n)]


# --- bits ------------------------------------------------------------------------------------

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
