"""NumPy's shifts, ``bitwise_count``, ``bitwise_invert`` and bit packing (``packbits``,
``unpackbits``) on the ember bit ops.

Shift amounts of at least the bit width (or negative ones) are defined as in NumPy and JAX:
``left_shift`` gives 0 and ``right_shift`` gives 0 or -1 (the sign fill).
"""

from __future__ import annotations

import builtins

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager
from ember.numpy._core import (
    _arg_error,
    _axes,
    _error,
    _lift,
    _numeric,
    _promote,
    _promote_broadcast,
    _static_int,
    _to,
)
from ember.numpy._shape import _enp, _slice_axis

__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
           "bitwise_count", "bitwise_invert", "packbits", "unpackbits"]


def _int_args(x1, x2, name):
    xs = _promote_broadcast(x1, x2, name=name)
    dt = xs[0].dtype
    if dtypes.is_bool(dt):
        xs = _numeric(*xs)      # int32, as in JAX (under x64 too)
    elif not dtypes.is_int(dt):
        _error(f"{name}: needs integer or bool operands, got {np.dtype(dt)}")
    return xs


@eager
def left_shift(x1, x2):
    """NumPy's ``left_shift``: ``x1 << x2`` with broadcasting and type promotion."""
    return lax.shift_left(*_int_args(x1, x2, "left_shift"))


@eager
def right_shift(x1, x2):
    """NumPy's ``right_shift``: arithmetic for signed ``x1``, logical for unsigned."""
    x1, x2 = _int_args(x1, x2, "right_shift")
    if dtypes.is_unsigned(x1.dtype):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


@eager
def bitwise_count(x):
    """NumPy's ``bitwise_count``: the number of 1 bits of ``abs(x)``, as uint8."""
    (x,) = _promote(x)
    dt = x.dtype
    if dtypes.is_bool(dt):
        return lax.convert_element_type(x, np.uint8)
    if not dtypes.is_int(dt):
        _error(f"bitwise_count: needs an integer or bool operand, got {np.dtype(dt)}")
    if not dtypes.is_unsigned(dt):
        x = lax.abs(x)      # abs(INT_MIN) wraps to INT_MIN, whose bits count 1, as in NumPy
    return lax.convert_element_type(lax.population_count(x), np.uint8)


@eager
def bitwise_invert(x, /):
    """``invert(x)``: bitwise NOT of integers, logical NOT of bools.

    Example:
        >>> enp.bitwise_invert(enp.array([0, 1], dtype=enp.uint8))
        Array([255, 254], dtype=uint8)
    """
    enp = _enp()
    return enp.invert(x)


def _bitorder(name, bitorder):
    if bitorder not in ("little", "big"):
        _arg_error(f"{name}: bitorder must be either 'little' or 'big', got {bitorder!r}")


@eager
def packbits(a, axis=None, bitorder="big"):
    """The elements of ``a`` (non-zero is 1) packed 8 to a ``uint8`` along ``axis`` (the
    flattened ``a`` if None), zero-padded to a multiple of 8.

    Example:
        >>> enp.packbits(enp.array([1, 0, 1]))
        Array([160], dtype=uint8)
    """
    enp = _enp()
    _bitorder("packbits", bitorder)
    x = _lift(a)
    if not (dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype)):
        _error(f"packbits: expected an integer or boolean array, got {x.dtype}")
    x = enp.astype(enp.not_equal(x, 0), np.uint8)
    if axis is None:
        x, axis = enp.ravel(x), 0
    (ax,) = _axes(axis, x.ndim)
    x = enp.swapaxes(x, ax, -1)
    rem = x.shape[-1] % 8
    if rem:
        x = lax.pad(x, _to(0, np.uint8), [(0, 0, 0)] * (x.ndim - 1) + [(0, 8 - rem, 0)])
    x = lax.reshape(x, tuple(x.shape[:-1]) + (x.shape[-1] // 8, 8))
    bits = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    packed = enp.sum(enp.left_shift(x, bits), axis=-1, dtype=np.uint8)
    return enp.swapaxes(packed, ax, -1)


@eager
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the ``uint8`` array ``a`` as a ``uint8`` array of 0s and 1s, along
    ``axis`` (flattened if None); ``count`` keeps that many bits (padding with zeros).

    Example:
        >>> enp.unpackbits(enp.array([160], dtype=enp.uint8))
        Array([1, 0, 1, 0, 0, 0, 0, 0], dtype=uint8)
    """
    enp = _enp()
    _bitorder("unpackbits", bitorder)
    x = _lift(a)
    if x.dtype != np.uint8:
        _error(f"unpackbits: expected an array of uint8, got {x.dtype}")
    bits = (np.uint8(1) << np.arange(8, dtype=np.uint8)).astype(np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        x, axis = enp.ravel(x), 0
    (ax,) = _axes(axis, x.ndim)
    x = enp.swapaxes(x, ax, -1)
    un = enp.astype(enp.bitwise_and(enp.expand_dims(x, -1), bits) > 0, np.uint8)
    un = lax.reshape(un, tuple(un.shape[:-2]) + (un.shape[-2] * 8,))
    if count is not None:
        count = _static_int(count, "count", "unpackbits")
        if count > un.shape[-1]:
            un = lax.pad(un, _to(0, np.uint8),
                         [(0, 0, 0)] * (un.ndim - 1) + [(0, count - un.shape[-1], 0)])
        else:
            un = _slice_axis(un, un.ndim - 1, 0, builtins.max(count, 0) if count >= 0
                             else builtins.max(un.shape[-1] + count, 0))
    return enp.swapaxes(un, ax, -1)
