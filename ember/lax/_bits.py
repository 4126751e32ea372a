"""lax functions of the ops in ember/dialects/bits.py: shifts, bit casts, bit counts."""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.frontend.eager import eager
from ember.frontend.tracing import bind, current_trace
from ember.lax._core import _binary_operands

__all__ = ["shift_left", "shift_right_logical", "shift_right_arithmetic",
           "bitcast_convert_type", "population_count", "clz"]


def _shift(op):
    def f(x, y):
        weak = all(dtypes.dtype_and_weak(v)[1] for v in (x, y))
        x, y = _binary_operands(x, y)
        return bind(f"ember.{op}", x, y, _weak=weak)[0]
    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"Elementwise ``{op}`` of equal shapes and integer dtypes (the ``ember.{op}`` "
                 "op); shift amounts >= the bit width (read as unsigned) are defined, as in "
                 "``lax``: 0, or the sign fill for ``shift_right_arithmetic``.")
    return eager(f)


shift_left = _shift("shift_left")
shift_right_logical = _shift("shift_right_logical")
shift_right_arithmetic = _shift("shift_right_arithmetic")


@eager
def population_count(x):
    """Elementwise number of set bits, in ``x``'s integer dtype."""
    x = current_trace().lift(x)
    return bind("ember.population_count", x, _weak=x.weak_type)[0]


@eager
def clz(x):
    """Elementwise count of leading zero bits, in ``x``'s integer dtype."""
    x = current_trace().lift(x)
    return bind("ember.clz", x, _weak=x.weak_type)[0]


@eager
def bitcast_convert_type(x, new_dtype):
    """Reinterpret the bits of ``x`` as ``new_dtype`` of the same bit width."""
    x = current_trace().lift(x)
    new_dtype = np.dtype(new_dtype)
    if x.dtype == new_dtype:
        return x
    return bind("ember.bitcast_convert_type", x, new_dtype=new_dtype)[0]
