"""NumPy's shifts and ``bitwise_count`` on the ember bit ops.

Shift amounts of at least the bit width (or negative ones) are defined as in NumPy and JAX:
``left_shift`` gives 0 and ``right_shift`` gives 0 or -1 (the sign fill).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes, lax
from ember.frontend.eager import eager

__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
           "bitwise_count"]


def _int_args(x1, x2, name):
    from ember import numpy as enp

    xs = enp._promote_broadcast(x1, x2, name=name)
    dt = xs[0].dtype
    if dtypes.is_bool(dt):
        xs = enp._numeric(*xs)      # int32, as in JAX (under x64 too)
    elif not dtypes.is_int(dt):
        enp._error(f"{name}: needs integer or bool operands, got {np.dtype(dt)}")
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
    from ember import numpy as enp

    (x,) = enp._promote(x)
    dt = x.dtype
    if dtypes.is_bool(dt):
        return lax.convert_element_type(x, np.uint8)
    if not dtypes.is_int(dt):
        enp._error(f"bitwise_count: needs an integer or bool operand, got {np.dtype(dt)}")
    if not dtypes.is_unsigned(dt):
        x = lax.abs(x)      # abs(INT_MIN) wraps to INT_MIN, whose bits count 1, as in NumPy
    return lax.convert_element_type(lax.population_count(x), np.uint8)
